"""What the Redis store needs from a Redis deployment, one node or a Cluster: the parts that
differ by topology, behind one interface the store is given (as httpx is given a transport).

The store itself (server/store/redis_store.py) holds everything else once: the keys, the
scripts and their NOSCRIPT reload, the decoding, the wake-up reader; and the edge where
redis-py's errors become the product's (``edge``).
"""

from __future__ import annotations

import abc
import contextlib
from collections.abc import Awaitable, Callable, Iterator, Sequence
from typing import Any, NamedTuple

import redis.exceptions as redis_errors
from redis.asyncio.client import PubSub
from redis.driver_info import DriverInfo

from server.store.errors import StoreError, StoreUnavailable

Command = tuple[Any, ...]
"""One Redis command and its arguments, as sent."""

Answer = tuple[Any, int | None]
"""One command's reply (its exception for an error reply) and how many replicas confirmed the
writes before it (None: not asked)."""

Wait = tuple[int, int]
"""``WAIT`` arguments after appends: how many replicas, and for how many milliseconds."""

UNREACHABLE: tuple[type[BaseException], ...] = (
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    redis_errors.ClusterDownError,
    redis_errors.SlotNotCoveredError,
    redis_errors.TryAgainError,
    OSError,
)
"""What a Redis that is down, restarting or failing over looks like to a client."""


@contextlib.contextmanager
def edge() -> Iterator[None]:
    """The store's edge: redis-py's errors become the product's, so nothing above the store
    needs to know redis-py's families (``StoreUnavailable`` when Redis cannot be reached,
    ``StoreError`` for any other failure of a command)."""
    try:
        yield
    except UNREACHABLE as exc:
        raise StoreUnavailable(f"Redis is unreachable: {exc}") from exc
    except redis_errors.RedisError as exc:
        raise StoreError(f"Redis failed: {exc}") from exc


def connection_options(options: dict[str, Any]) -> dict[str, Any]:
    """redis-py options with the store's defaults, checked (both topologies)."""
    if options.get("decode_responses"):
        raise ValueError("the event store reads bytes: decode_responses must be off")
    options = dict(options)
    options.setdefault("protocol", 2)
    # Named, so an operator (and a test) can count a server's connections in CLIENT LIST.
    options.setdefault("client_name", "solitaire-arena")
    # Resolved once: redis-py otherwise reads package metadata for every new connection.
    options.setdefault("driver_info", DriverInfo())
    return options


class Node(NamedTuple):
    """A Redis node a pub/sub connection can be opened to."""

    name: str
    host: str
    port: int


class Listener(NamedTuple):
    """One pub/sub connection and how to let it go."""

    pubsub: PubSub
    close: Callable[[], Awaitable[None]]


class RedisTopology(abc.ABC):
    """The topology-specific part of the Redis store: which client, how a batch of commands
    reaches the nodes, and how pub/sub connections are laid out per shard."""

    client: Any
    """The redis-py client single commands go through (``Redis`` or ``RedisCluster``: the
    commands the store uses are spelled the same on both)."""

    tags_every_key: bool = False
    """A stream without a hash tag gets its name as one (``{name}``), so that its key and its
    wake-up channel share a slot (a Cluster)."""

    unplaceable: tuple[type[BaseException], ...] = UNREACHABLE
    """Why a channel cannot be subscribed on its node now (the subscription tries again)."""

    @abc.abstractmethod
    async def send(self, commands: Sequence[Command], *, wait: Wait | None = None) -> list[Answer]:
        """The commands in as few round trips as the topology allows, one answer each, an
        error reply as its exception; with ``wait``, each answer says how many replicas hold
        its write. Raises when the connection fails."""

    def send_now(
        self, commands: Sequence[Command], answer: Callable[[list[Any] | BaseException], None]
    ) -> bool:
        """Write the commands now, where the topology has a connection for it that answers
        from its own callback (``answer`` is told their replies, an error reply as its
        exception, or why the connection failed them; nothing is retried); False, nothing
        written, where it has none: ``send`` then. None here."""
        return False

    @abc.abstractmethod
    async def pipelined(self, fill: Callable[[Any], object], *, raw: bool = False) -> list[Any]:
        """Commands queued by ``fill`` on a pipeline in one round trip (per node), replies in
        order; ``raw``: without redis-py's response callbacks where it can."""

    @abc.abstractmethod
    def key_batches(self, streams: Sequence[str], most: int) -> list[list[str]]:
        """Streams in batches one script call may read together."""

    @abc.abstractmethod
    async def ping(self) -> bool:
        """Whether every node the store needs answers (may raise: the store says no)."""

    @abc.abstractmethod
    async def ready(self) -> None:
        """Know the nodes before placing channels (the Cluster's slot map)."""

    @abc.abstractmethod
    def node_for(self, channel: str) -> Node:
        """The node a shard channel is subscribed on now; raises one of ``unplaceable``."""

    @abc.abstractmethod
    def listen(self, node: Node) -> Listener:
        """A pub/sub connection to ``node``, not connected yet."""

    @abc.abstractmethod
    async def refresh(self) -> None:
        """Learn where the slots are now, after a node broke (nothing on one node)."""

    @abc.abstractmethod
    async def aclose(self) -> None:
        """Release every connection."""
