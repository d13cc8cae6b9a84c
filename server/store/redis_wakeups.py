"""Wake-ups on Redis: shard channels (``SSUBSCRIBE``), one pub/sub connection per node that
owns a followed group's slot (one in all on a single Redis), each read by a task, and a watcher
that keeps every channel on its slot's current node. The topology says where the nodes are."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import msgpack
import structlog
from redis.backoff import ExponentialBackoff

from server.store import codec
from server.store.redis_topology import Listener, RedisTopology, edge
from server.store.wakeups import LocalSubscriptions, Subscription, Wakeup, WakeupHandler

_log = structlog.get_logger("server.store")

_CONFIRMATIONS = frozenset({"ssubscribe", "sunsubscribe"})

BACKOFF = ExponentialBackoff(cap=1.0, base=0.05)
"""Between attempts to place a channel whose node cannot be reached: 50 ms doubling to 1 s."""


def parse_wakeup(data: Any, origin: str) -> Wakeup | None:
    """A wake-up message (the append script's) with the events it carries; None for this
    store's own appends (already delivered, with their events) and for a message that is not
    one (logged). Events that do not decode are left out: the subscriber then reads the stream."""
    try:
        version, head, payloads = msgpack.unpackb(data, raw=True)
        sender, stream = head.decode().split(" ", 1)
        wakeup = Wakeup(stream, int(version))
    except Exception:  # msgpack raises several unrelated types on garbage
        _log.warning("bad_wakeup", data=repr(data)[:80])
        return None
    if sender == origin:
        return None
    try:
        events = [codec.decode(payload) for payload in payloads]
    except (codec.DecodeError, TypeError):
        return wakeup
    return wakeup._replace(events=events) if events else wakeup


class _Reader:
    """One node's shard-channel subscriptions, on one pub/sub connection, read by a task."""

    def __init__(self, name: str, listener: Listener) -> None:
        self.name = name
        self.listener = listener
        self.pubsub = listener.pubsub
        self.channels: set[str] = set()
        # What Redis has confirmed, in the order it answers on this connection: the channels
        # it holds for us, and our unsubscribes it has not answered yet.
        self.heard: set[str] = set()
        self.leaving: dict[str, int] = {}
        self.broken = False
        self.task: asyncio.Task[None] | None = None

    def hears(self, channel: str) -> bool:
        """Whether Redis holds the channel for this connection: confirmed, not being left."""
        return not self.broken and channel in self.heard and not self.leaving.get(channel)

    def leave(self, channel: str) -> None:
        """The channel goes from this connection (its unsubscribe is about to be sent): from
        now on it is not counted as held here."""
        self.channels.discard(channel)
        self.leaving[channel] = self.leaving.get(channel, 0) + 1

    def confirmed(self, kind: str, channel: str) -> None:
        """Redis answered a subscribe or an unsubscribe (its own, or after a slot moved)."""
        if kind == "ssubscribe":
            self.heard.add(channel)
            return
        self.heard.discard(channel)
        left = self.leaving.get(channel, 0)
        if left > 1:
            self.leaving[channel] = left - 1
        elif left:
            del self.leaving[channel]

    async def aclose(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task
        with contextlib.suppress(Exception):
            await self.listener.close()


class RedisSubscription(Subscription):
    """Wake-ups of every followed group, from every node that owns one's slot. A watcher
    checks each second (and at once after a broken connection or a server-side unsubscribe)
    that every channel is on its slot's node, moves those that are not, and reports a gap
    for what was published meanwhile; a node it cannot reach is tried again with a backoff.
    Appends through the store object that made it are delivered by ``append`` itself."""

    RECHECK_S = 1.0

    def __init__(
        self,
        topology: RedisTopology,
        channel: Callable[[str], str],
        origin: str,
        local: LocalSubscriptions,
        on_wakeup: WakeupHandler,
        on_gap: Callable[[], None] | None,
    ) -> None:
        super().__init__(on_wakeup, on_gap)
        self._topology = topology
        self._channel = channel
        self._origin = origin
        self._local = local
        self._readers: dict[str, _Reader] = {}
        self._home: dict[str, str] = {}  # channel -> the node name it is subscribed on
        # One placement at a time: redis-py's PubSub takes its connection on first use without
        # a lock, and rooms loading side by side each took one (the pool ran dry).
        self._lock = asyncio.Lock()
        self._recheck = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None
        self._failures = 0

    def hears(self, channel: str) -> bool:
        """Whether Redis has confirmed this subscription holds ``channel`` (on the node it is
        placed on): an append of this process then need not wake it through Redis."""
        reader = self._readers.get(self._home.get(channel, ""))
        return reader is not None and reader.hears(channel)

    async def _subscribe(self, groups: list[str]) -> None:
        with edge():
            async with self._lock:
                for group in groups:
                    await self._place(self._channel(group))
        if self._watcher is None:
            self._watcher = asyncio.get_running_loop().create_task(
                self._watch(), name="store-wakeups-watch"
            )

    async def _unsubscribe(self, groups: list[str]) -> None:
        async with self._lock:
            for group in groups:
                channel = self._channel(group)
                reader = self._readers.get(self._home.pop(channel, ""))
                if reader is not None:
                    reader.leave(channel)
                    if not reader.broken:
                        with contextlib.suppress(*self._topology.unplaceable):
                            await reader.pubsub.sunsubscribe(channel)

    async def _place(self, channel: str) -> bool:
        """Subscribe ``channel`` on its slot's node now; False (left for the watcher) when
        the node cannot be reached."""
        try:
            await self._topology.ready()
            node = self._topology.node_for(channel)
            reader = self._readers.get(node.name)
            if reader is None or reader.broken:
                if reader is not None:
                    await self._drop(reader)
                reader = self._readers[node.name] = _Reader(node.name, self._topology.listen(node))
            await reader.pubsub.ssubscribe(channel)
        except self._topology.unplaceable as exc:
            _log.warning("wakeups_subscribe_failed", channel=channel, error=str(exc)[:200])
            self._home.pop(channel, None)
            return False
        if reader.task is None:  # read once subscribed: redis-py has no connection before
            reader.task = asyncio.get_running_loop().create_task(
                self._read(reader), name=f"store-wakeups-{reader.name}"
            )
        reader.channels.add(channel)
        self._home[channel] = node.name
        return True

    async def _drop(self, reader: _Reader) -> None:
        if self._readers.get(reader.name) is reader:
            del self._readers[reader.name]
        for channel in reader.channels:
            if self._home.get(channel) == reader.name:
                del self._home[channel]
        if asyncio.current_task() is not reader.task:
            await reader.aclose()

    async def _read(self, reader: _Reader) -> None:
        while not self.closed:
            try:
                # Blocking, without a timer per read: aclose cancels the task.
                message = await reader.pubsub.get_message(timeout=None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # redis-py's many shapes of "the connection broke"
                _log.warning("wakeups_read_failed", node=reader.name, error=str(exc)[:200])
                reader.broken = True
                self._recheck.set()
                return
            if message is None:
                continue
            kind = message.get("type")
            if kind in _CONFIRMATIONS:
                reader.confirmed(kind, _text(message.get("channel")))
            if kind == "smessage":
                wakeup = parse_wakeup(message["data"], self._origin)
                if wakeup is not None:
                    self.deliver(wakeup)
            elif kind == "sunsubscribe":
                channel = _text(message.get("channel"))
                if channel in reader.channels and self._home.get(channel) == reader.name:
                    reader.channels.discard(channel)  # the slot moved away from this node
                    del self._home[channel]
                    self._recheck.set()

    async def _watch(self) -> None:
        """Keep every followed channel on its slot's current node; a move is a gap."""
        while not self.closed:
            unplaced = len(self._home) < len(self.groups)
            pause = BACKOFF.compute(self._failures) if unplaced else self.RECHECK_S
            self._failures = self._failures + 1 if unplaced else 0
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(pause):
                    await self._recheck.wait()
            self._recheck.clear()
            try:
                if await self._reconcile():
                    self.on_gap()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # keep watching: the next pass may find Redis back
                _log.warning("wakeups_watch_failed", error=str(exc)[:200])
                await asyncio.sleep(self.RECHECK_S)

    async def _reconcile(self) -> bool:
        """Move channels whose node broke or no longer owns their slot; True if any moved."""
        async with self._lock:
            broken = [r for r in self._readers.values() if r.broken]
            if broken or len(self._home) < len(self.groups):
                with contextlib.suppress(*self._topology.unplaceable):
                    await self._topology.refresh()
            for reader in broken:
                await self._drop(reader)
            moved = False
            for channel in sorted(self._channel(group) for group in self.groups):
                home = self._home.get(channel)
                try:
                    owner: str | None = self._topology.node_for(channel).name
                except self._topology.unplaceable:
                    owner = None
                if home is not None and home == owner:
                    continue
                if home is not None:  # the slot moved on: leave the old node
                    old = self._readers.get(home)
                    if old is not None:
                        old.leave(channel)
                        with contextlib.suppress(*self._topology.unplaceable):
                            await old.pubsub.sunsubscribe(channel)
                    del self._home[channel]
                if await self._place(channel):
                    moved = True
            for reader in [r for r in self._readers.values() if not r.channels]:
                await self._drop(reader)
            return moved or bool(broken)

    async def _shutdown(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(BaseException):
                await self._watcher
        for reader in list(self._readers.values()):
            await reader.aclose()
        self._readers.clear()
        self._local.discard(self)


def _text(value: object) -> str:
    return value.decode(errors="replace") if isinstance(value, bytes) else str(value)
