"""Every reach into redis-py's internals, in one place, each with a fallback to its public API.

Five measured shortcuts (docs/storage.md, "Connections") read what redis-py does not promise: an
idle pool connection taken without the pool's Condition, a pipeline without response callbacks, a
write timed without a task of its own, one deadline over a batch's write and replies, and the socket
of a connection redis-py opened taken over by the pipelined line (its ``_reader``/``_writer``); and
the Cluster store asks the cluster client to read its slot map again after a node broke.
``INTERNALS`` lists what each relies on; tests/server/store/test_redis_adapter.py fails loudly when
an installed redis-py no longer has them, and the store then takes the public path.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any, cast

import redis.asyncio as aioredis
from redis import exceptions as redis_errors
from redis._parsers.base import BaseParser
from redis.asyncio.client import Pipeline
from redis.asyncio.connection import AbstractConnection

INTERNALS: dict[str, tuple[str, ...]] = {
    "BlockingConnectionPool": (
        "_condition",
        "_available_connections",
        "_in_use_connections",
        "_in_maintenance",
        "ensure_connection",
    ),
    "Pipeline": ("connection_pool", "response_callbacks", "is_transaction"),
    "Connection": ("socket_timeout",),
    "ConnectionStreams": ("_reader", "_writer"),
    "RedisCluster": ("nodes_manager",),
    "NodesManager": ("initialize",),
}
"""The private attributes each shortcut reads (on an instance), checked at start-up."""


def _has(instance: object, names: tuple[str, ...]) -> bool:
    return all(hasattr(instance, name) for name in names)


class QuickPool(aioredis.BlockingConnectionPool):
    """redis-py's blocking pool, minus its condition and timer when a connection is idle.

    Every command took its connection through an ``asyncio.Condition`` and a timeout (~7 % of
    a loaded server, bench.load paced profile). With an idle connection and nobody waiting for
    one, it is taken at once; otherwise (all busy, waiters, maintenance, or internals that are
    not what this was written against) the pool's own path.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.quick = _has(self, INTERNALS["BlockingConnectionPool"])
        self.connection_class = timed_send(self.connection_class)

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        if not self.quick:
            return await super().get_connection(*args, **kwargs)
        waiting = getattr(self._condition, "_waiters", True)  # unknown: take the slow path
        if not self._available_connections or waiting or self._in_maintenance:
            return await super().get_connection(*args, **kwargs)
        connection = self._available_connections.pop()
        self._in_use_connections.add(connection)
        try:
            await self.ensure_connection(connection)
        except BaseException:
            await self.release(connection)
            raise
        return connection


@contextlib.asynccontextmanager
async def one_deadline(connection: AbstractConnection) -> AsyncIterator[None]:
    """The connection's ``socket_timeout`` as one deadline over a whole exchange, a pipelined
    write and all its replies, instead of a timer for the write and one for each reply (making
    and cancelling them was 5 % of a saturated server, bench.load profile). Without that
    attribute, redis-py times each read and write itself."""
    timeout = getattr(connection, "socket_timeout", None)
    if not timeout:
        yield
        return
    connection.socket_timeout = None
    try:
        async with asyncio.timeout(timeout):
            yield
    except TimeoutError:
        await connection.disconnect(nowait=True)  # a reply may still be on its way: unusable
        raise redis_errors.TimeoutError(f"Timeout: nothing within {timeout} s") from None
    finally:
        connection.socket_timeout = timeout


class _TimedSend(AbstractConnection):
    """A write bounded by ``asyncio.timeout`` rather than redis-py's ``asyncio.wait_for``.

    On Python 3.11 ``wait_for`` runs the write in a task of its own: the bytes leave a loop turn
    later, and the caller resumes a turn after that. Every append batch paid both, and each
    turn of a loaded server is milliseconds (bench.load paced, the ack's hops). redis-py skips
    ``wait_for`` when the connection has no ``socket_timeout``, so the write runs without it,
    under ``one_deadline`` of the same length.
    """

    async def send_packed_command(self, command: Any, check_health: bool = True) -> None:
        async with one_deadline(self):
            await super().send_packed_command(command, check_health)


def timed_send(connection_class: type[AbstractConnection]) -> type[AbstractConnection]:
    """``connection_class`` with ``_TimedSend``'s write where it saves a task (Python 3.11,
    and connections that keep ``socket_timeout``); the class itself otherwise."""
    if sys.version_info >= (3, 12) or issubclass(connection_class, _TimedSend):
        return connection_class  # wait_for runs no task of its own there
    probe = connection_class()
    if not _has(probe, INTERNALS["Connection"]):
        return connection_class
    name = "Timed" + connection_class.__name__
    return type(name, (_TimedSend, connection_class), {})


def take_over(
    connection: AbstractConnection, protocol: asyncio.Protocol
) -> tuple[asyncio.Transport, object]:
    """The socket of a connection redis-py has just opened (TLS, AUTH, SELECT and its name
    done), handed to ``protocol``: the pipelined line (server.store.redis_pipeline). The
    connection forgets it, so it neither warns about it nor closes it when collected; the
    second value (its stream writer, which closes the transport when collected on newer
    Pythons) must be kept as long as the transport."""
    writer = connection._writer
    if writer is None:
        raise redis_errors.ConnectionError("the connection is not open")
    transport = cast(asyncio.Transport, writer.transport)  # uvloop's is not a subclass
    transport.set_protocol(protocol)
    connection._reader = connection._writer = None
    return transport, writer


def can_take_over(connection: AbstractConnection) -> bool:
    """Whether ``take_over`` can have this kind of connection's socket (not yet opened)."""
    return _has(connection, INTERNALS["ConnectionStreams"])


def parse_error(message: str) -> redis_errors.ResponseError:
    """An error reply as the exception redis-py raises for it (``NOSCRIPT`` as
    ``NoScriptError``, which the store reloads its scripts on)."""
    return BaseParser.parse_error(message)


def raw_pipeline(client: aioredis.Redis) -> Pipeline:
    """A non-transactional pipeline whose replies skip redis-py's response callbacks (XRANGE
    replies stay flat lists, whose conversion to dicts was a sixth of a rebuild); the client's
    ordinary pipeline, with callbacks, if Pipeline's constructor is not the one expected."""
    pipe = client.pipeline(transaction=False)
    if _has(pipe, INTERNALS["Pipeline"]):
        pipe.response_callbacks = {}
    return pipe


async def refresh_topology(cluster: Any) -> None:
    """Read the cluster's slot map again now (after a node broke): redis-py only does it on
    the next failing command. Without its NodesManager, a ping of every primary makes that
    command happen."""
    manager = getattr(cluster, "nodes_manager", None)
    if manager is not None and hasattr(manager, "initialize"):
        await manager.initialize()
        return
    with contextlib.suppress(Exception):
        await cluster.ping(target_nodes=cluster.PRIMARIES)


def quick_paths_available() -> dict[str, bool]:
    """Which internals the installed redis-py has (for the adapter test and the log)."""
    from redis.asyncio.cluster import RedisCluster

    pool = QuickPool(max_connections=1)
    pipe = aioredis.Redis(connection_pool=pool).pipeline(transaction=False)
    cluster = RedisCluster(host="127.0.0.1", port=1)  # connects on first use only
    manager = getattr(cluster, "nodes_manager", None)
    return {
        "BlockingConnectionPool": pool.quick,
        "Connection": issubclass(pool.connection_class, _TimedSend) or sys.version_info >= (3, 12),
        "Pipeline": _has(pipe, INTERNALS["Pipeline"]),
        "RedisCluster": _has(cluster, INTERNALS["RedisCluster"]),
        "NodesManager": manager is not None and _has(manager, INTERNALS["NodesManager"]),
        "ConnectionStreams": _has(pool.make_connection(), INTERNALS["ConnectionStreams"]),
    }
