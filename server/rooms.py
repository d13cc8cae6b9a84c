"""Rooms and races on top of the event store: commands append events, a follower folds and fans out.

Every room has one stream ``{<room>}:room`` and one game stream ``{<room>}:game:<player>`` per
racer (docs/architecture.md). Room events (schema ``v`` 1, all with ``at``): ``room_created``
(variant, seed or deck, salt, commitment, deal_version, capacity, countdown_ms, time_limit_ms,
spectator_delay_ms), ``player_joined`` (player, name, token_hash: SHA-256 of the resume token),
``player_left``, ``countdown_started`` (go_at), ``countdown_cancelled``, ``race_started``
(ends_at), ``race_finished`` (reason, ranking). Game streams hold the shared game events, each
``moved`` with the client move id as ``cid`` so a resent id is answered, never applied, even
after a restart. Commands (join, start, move, ...) check the folded state and append
with the expected version; they never send game events themselves. One follower per room reads
every stream of the room back from the store, folds it and fans the public form out to the
connections in the room, so a second server process on the same Redis serves the same room, and
a restarted process rebuilds rooms, games and timers by replaying the streams.

This module is the ``RoomManager`` that drives rooms (commands, following, fan-out); the room
model it folds into is ``server.room``, the forked fold of a bulk rebuild ``server.rebuild``.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import os
import re
import secrets
import threading
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from server.clock import Clock
from server.config import Config
from server.errors import (
    AlreadyInRoom,
    CustomDeckDisabled,
    GameOver,
    NoSuchPlayer,
    NoSuchRoom,
    NotAllowed,
    NotAPlayer,
    NotInRoom,
    NotRacing,
    NotYourGame,
    RoomFull,
    TooManyRooms,
    TooManySpectators,
    WrongStatus,
)
from server.logging import get_logger
from server.race import (
    PlayerStatus,
    Progress,
    RoomStatus,
    Trigger,
    commitment,
    deck_secret,
    next_status,
    ranking,
)
from server.rebuild import PARALLEL_FOLD_MIN_EVENTS, child_results, fold_in_child
from server.room import (
    OWNER,
    PLAYERS,
    SPECTATORS,
    WATCHERS,
    Game,
    Member,
    Peer,
    Role,
    Room,
    Seat,
    game_stream,
    pack,
    packed_with,
    room_stream,
    token_hash,
)
from server.store import CorruptEntry, EventStore, StoredEvent
from shared import (
    DEAL_VERSION,
    canonical_seed,
    deal_deck,
    fold_event,
    is_over,
    move_event,
    public_event,
    resign_event,
    start_event,
    validate_deck,
)
from shared import protocol as p
from shared.errors import ArenaError, ClientError, ServerError, WrongExpectedVersion
from shared.protocol import BadField
from shared.state import GameState

ROOM_EVENT_VERSION = 1
ROOM_ID = re.compile(r"^[a-z0-9]{1,32}$")
_ROOM_STREAM = re.compile(r"^\{([a-z0-9]{1,32})\}:room$")
_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
_REJECT_MEMORY = 256
_LOAD_CONCURRENCY = 32  # rooms read and folded at once by a rebuild

log = get_logger("server.rooms")


def _with_ref(msg: dict[str, Any], ref: Any) -> dict[str, Any]:
    if ref is not None:
        msg["ref"] = ref
    return msg


def _status(state: GameState) -> PlayerStatus:
    """A racer's status after an event that is not the start (Progress.after's order)."""
    if state.won:
        return PlayerStatus.WON
    if state.resigned:
        return PlayerStatus.RESIGNED
    if is_over(state):
        return PlayerStatus.OVER
    return PlayerStatus.PLAYING


SendMany = Callable[[Iterable[Peer], dict[str, Any] | bytes], None]
"""Send one message (or an encoded frame) to many peers."""


class RoomManager:
    """Every room this process knows, the commands on them, and the fan-out to connections."""

    def __init__(self, store: EventStore, clock: Clock, config: Config, send_many: SendMany):
        self.store = store
        self.clock = clock
        self.config = config
        self.send_many = send_many
        self.rooms: dict[str, Room] = {}
        self.where: dict[Peer, Room] = {}
        # token hash -> (room, player, joined at): a session's latest seat, whatever the load order
        self.tokens: dict[str, tuple[str, str, int]] = {}
        self.seated: dict[tuple[str, str], Peer] = {}  # (room, player) -> its connection here
        self._loading: dict[str, asyncio.Future[Room | None]] = {}
        self._closed = False
        self.parallel_fold_min_events = PARALLEL_FOLD_MIN_EVENTS
        self.folded_elsewhere = 0  # games a rebuild had a forked child fold (tests, logs)

    # ---- loading and following -------------------------------------------------------------

    async def rebuild(self) -> None:
        """Rebuild every room in the store (and re-arm its timers) before serving.

        Every stream is read in bulk (``read_many``) and the games are folded in two processes
        when there are many (bench/recovery.py: the fold was half of a rebuild); a room the
        bulk path cannot read (a corrupt entry) is loaded on its own, which names the entry.
        """
        ids = [i for i in await self._room_ids() if i not in self._loading]
        if ids:
            with contextlib.suppress(CorruptEntry):
                await self._load_bulk(ids)
        await self.discover()

    async def _room_ids(self) -> list[str]:
        """The ids of the rooms in the store that this process has not loaded."""
        ids = []
        for name in await self.store.streams("{"):
            match = _ROOM_STREAM.match(name)
            if match and match.group(1) not in self.rooms:
                ids.append(match.group(1))
        return ids

    async def _load_bulk(self, ids: list[str]) -> None:
        """Load many rooms at once: two bulk reads, one fold pass per game, then follow each."""
        room_events = await self.store.read_many([room_stream(i) for i in ids])
        rooms = []
        for room_id in ids:
            events = room_events.get(room_stream(room_id))
            if not events:
                continue
            room = Room(room_id)
            for event in events:
                self._apply(room, event)
            rooms.append(room)
        games = [(room, game) for room in rooms for game in room.games.values()]
        game_events = await self.store.read_many_raw([game.stream for _, game in games])
        self._fold_games([(room, game, game_events[game.stream]) for room, game in games])
        for room in rooms:
            if room.id in self.rooms or room.id in self._loading:
                continue  # loaded meanwhile (nothing else runs during a rebuild, but be safe)
            self._start_following(room)
            self.rooms[room.id] = room

    def _fold_games(self, work: list[tuple[Room, Game, Any]]) -> None:
        """Decode and fold each game's events (``read_many_raw`` values); about half of them in
        a forked child when there are many, since both are CPU-bound.

        Only rooms without a spectator delay go to the child: their fan-out with nobody
        connected is bookkeeping alone (released, shown), which is redone here from its result.
        """
        movable = [w for w in work if w[0].delay_ms <= 0]
        total = sum(len(raw) for _, _, raw in movable)
        child: tuple[int, int] | None = None
        elsewhere: list[tuple[Room, Game, Any]] = []
        if (
            total >= self.parallel_fold_min_events
            and hasattr(os, "fork")
            and (os.cpu_count() or 1) > 1
            and threading.active_count() == 1
        ):
            share = 0
            for item in movable:
                if elsewhere and (share + len(item[2])) * 2 > total:
                    continue  # at most about half of the events go to the child
                elsewhere.append(item)
                share += len(item[2])

            def fold(room: Room, game: Game, raw: Any) -> None:
                self._fold_run(room, game, self.store.decode_raw(game.stream, raw))

            child = fold_in_child(fold, elsewhere)
        moved = {id(game) for _, game, _ in elsewhere}
        decode = self.store.decode_raw
        try:
            for room, game, raw in work:
                if id(game) not in moved:
                    self._apply_game_events(room, game, decode(game.stream, raw))
        finally:
            results = None if child is None else child_results(*child)
        if child is None:
            return
        if results is None or len(results) != len(elsewhere):
            log.warning("parallel_fold_failed", games=len(elsewhere))
            for room, game, raw in elsewhere:
                self._apply_game_events(room, game, decode(game.stream, raw))
            return
        self.folded_elsewhere += len(results)
        for (room, game, _), (state, version, public, progress, cids) in zip(
            elsewhere, results, strict=True
        ):
            game.state, game.version, game.public = state, version, public
            game.progress, game.cids = progress, cids
            game.released, game.shown = version, progress
            if room.status is RoomStatus.RACING and room.all_done():
                self._spawn(room, self._finish(room, "all_done"), name=f"finish-{room.id}")

    async def discover(self) -> None:
        """Load rooms that other processes (or an earlier run of this one) created.

        Rooms load concurrently, a bounded number at a time: each is a few store round trips
        and a fold, so a restart with many rooms is not a chain of round trips.
        """
        ids = await self._room_ids()
        if not ids:
            return
        gate = asyncio.Semaphore(_LOAD_CONCURRENCY)

        async def load(room_id: str) -> None:
            async with gate:
                await self.load(room_id)

        await asyncio.gather(*(load(room_id) for room_id in ids))

    async def load(self, room_id: str) -> Room | None:
        """The room, loaded from the store and followed from now on; None if it does not exist."""
        if room_id in self.rooms:
            return self.rooms[room_id]
        if not ROOM_ID.match(room_id):
            return None
        if room_id in self._loading:
            return await asyncio.shield(self._loading[room_id])
        future: asyncio.Future[Room | None] = asyncio.get_running_loop().create_future()
        self._loading[room_id] = future
        try:
            room = await self._load(room_id)
            future.set_result(room)
            return room
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: waiters get it, nobody else must
            raise
        finally:
            del self._loading[room_id]

    async def _load(self, room_id: str) -> Room | None:
        """Read the room's streams in bulk and fold them, then follow from the versions reached.

        A rebuild folds each game in one pass (bench/recovery.py: one event at a time through
        the follower was ~35 us an event); nothing is sent, as nobody is in the room yet.
        """
        try:
            events = await self.store.read(room_stream(room_id))
        except CorruptEntry:
            events = None  # the follower reads it event by event and reports the bad entry
        if events == []:
            return None
        room = Room(room_id)
        try:
            for event in events or ():
                self._apply(room, event)
            await asyncio.gather(*(self._catch_up(room, game) for game in room.games.values()))
            self._start_following(room)
            if events is None:
                last = await self.store.last_version(room.stream)
                await room.wait_until(lambda: room.version >= last)
        except BaseException:
            for task in list(room.tasks):
                task.cancel()
            if room.follower is not None:
                with contextlib.suppress(Exception):
                    await room.follower.aclose()
            raise
        # Only a caught-up room is visible, so nobody sees it half built.
        self.rooms[room_id] = room
        return room

    def _start_following(self, room: Room) -> None:
        """Follow a folded room from the versions reached, and resume its pending work."""
        positions = {room.stream: room.version}
        positions.update({g.stream: g.version for g in room.games.values()})
        room.follower = self.store.follow(positions)
        self._spawn(room, self._follow(room), name=f"follow-{room.id}")
        if room.status is RoomStatus.RACING and any(g.version == 0 for g in room.games.values()):
            self._spawn(room, self._ensure_games_started(room), name=f"games-{room.id}")
        if room.finished is not None:
            self._spawn(room, self._retire(room), name=f"retire-{room.id}")

    async def _catch_up(self, room: Room, game: Game) -> None:
        """Fold what a game's stream holds beyond the local fold, in one read."""
        try:
            events = await self.store.read(game.stream, after=game.version)
        except CorruptEntry:
            return  # the follower reads it event by event and reports the bad entry
        self._apply_game_events(room, game, events)

    def _spawn(self, room: Room, coro: Coroutine[Any, Any, Any], *, name: str) -> asyncio.Task[Any]:
        # A fresh context: room tasks must not log with the session that happened to start them.
        task = asyncio.get_running_loop().create_task(
            coro, name=name, context=contextvars.Context()
        )
        room.tasks.add(task)
        task.add_done_callback(room.tasks.discard)
        return task

    async def _follow(self, room: Room) -> None:
        while not self._closed:
            try:
                async for event in room.follower:
                    try:
                        self._apply(room, event)
                    except Exception:
                        log.exception("fold_failed", room=room.id, stream=event.stream)
                    async with room.changed:
                        room.changed.notify_all()
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("follow_failed", room=room.id)
                await asyncio.sleep(0.5)
                positions = {room.stream: room.version}
                positions.update({g.stream: g.version for g in room.games.values()})
                with contextlib.suppress(Exception):
                    await room.follower.aclose()
                room.follower = self.store.follow(positions)

    def _apply(self, room: Room, event: StoredEvent) -> None:
        if event.stream == room.stream:
            if event.version != room.version + 1:
                return
            room.version = event.version
            self._apply_room(room, event.data)
            return
        player = event.stream.rsplit(":", 1)[1]
        game = room.games.get(player)
        if game is None or event.version != game.version + 1:
            return
        self._apply_game(room, game, event.version, event.data)

    # ---- the room stream ---------------------------------------------------------------------

    def _apply_room(self, room: Room, data: dict[str, Any]) -> None:
        kind = data.get("type")
        at = int(data.get("at", 0))
        if kind == "room_created":
            room.meta = dict(data)
            room.status = RoomStatus.LOBBY
        elif kind == "player_joined":
            player = data["player"]
            room.seats[player] = Seat(player, data["name"], data["token_hash"], room.joined_count)
            room.joined_count += 1
            known = self.tokens.get(data["token_hash"])
            if known is None or known[2] <= at:
                self.tokens[data["token_hash"]] = (room.id, player, at)
            if player not in room.games:
                room.games[player] = Game(player, game_stream(room.id, player))
                if room.follower is not None:  # else the bulk load reads it first
                    room.follower.add(game_stream(room.id, player), 0)
            self._to_members(room, {"type": p.ROOM, "room": room.state()})
        elif kind == "player_left":
            seat = room.seats.pop(data["player"], None)
            if seat is not None and self.tokens.get(seat.token_hash, ("",))[0] == room.id:
                del self.tokens[seat.token_hash]
            self._to_members(room, {"type": p.ROOM, "room": room.state()})
        elif kind == "countdown_started":
            room.status = next_status(room.status, Trigger.START)
            room.countdown_at, room.go_at = at, int(data["go_at"])
            self._to_members(
                room, {"type": p.COUNTDOWN, "room": room.id, "at": at, "go_at": room.go_at}
            )
        elif kind == "countdown_cancelled":
            room.status = next_status(room.status, Trigger.EMPTIED)
            room.go_at = room.countdown_at = None
            self._to_members(room, {"type": p.ROOM, "room": room.state()})
        elif kind == "race_started":
            room.status = next_status(room.status, Trigger.GO)
            room.started_at, room.ends_at = at, data.get("ends_at")
            started = {
                "type": p.STARTED,
                "room": room.id,
                "at": at,
                "ends_at": room.ends_at,
                "commitment": room.meta["commitment"],
            }
            self._to_members(room, started)
            if room.follower is not None:  # else the bulk load does it for games not started
                self._spawn(room, self._ensure_games_started(room), name=f"games-{room.id}")
        elif kind == "race_finished":
            trigger = Trigger.TIME_UP if data.get("reason") == "time_limit" else Trigger.ALL_DONE
            room.status = next_status(room.status, trigger)
            room.finished = dict(data)
            message = room.finished_message()
            self._send(room.players_here(), message)

            def release_end() -> None:
                room.finished_shown = True
                self._send(room.spectators(), message)

            self._to_spectators(room, release_end)
            if room.follower is not None:  # else the bulk load does, once it follows
                self._spawn(room, self._retire(room), name=f"retire-{room.id}")
        else:
            log.warning("unknown_room_event", room=room.id, kind=kind)
        self._rearm(room)

    def _send(self, members: Iterable[Member], msg: dict[str, Any] | bytes) -> None:
        peers = [m.peer for m in members]
        if peers:  # encoding a frame for nobody cost 8% of a rebuild (bench/recovery.py profile)
            self.send_many(peers, msg)

    def _to_members(self, room: Room, msg: dict[str, Any]) -> None:
        if room.members:
            self.send_many(room.members, msg)

    def _rearm(self, room: Room) -> None:
        """One timer per room, from the folded state: so a rebuilt room re-arms its own."""
        if room.timer is not None:
            room.timer.cancel()
            room.timer = None
        if room.status is RoomStatus.COUNTDOWN and room.go_at is not None:
            room.timer = self._spawn(room, self._at(room, room.go_at, self._go), name="go")
        elif room.status is RoomStatus.RACING and room.ends_at is not None:
            room.timer = self._spawn(room, self._at(room, room.ends_at, self._time_up), name="end")

    async def _at(
        self, room: Room, when: int, action: Callable[[Room], Coroutine[Any, Any, None]]
    ) -> None:
        await self.clock.sleep_until(when)
        try:
            await action(room)
        except ArenaError as exc:
            log.warning("timer_failed", room=room.id, code=exc.code, reason=exc.reason)

    async def _go(self, room: Room) -> None:
        def build() -> list[dict[str, Any]]:
            if room.status is not RoomStatus.COUNTDOWN:
                return []
            now = self.clock.now_ms()
            limit = int(room.meta["time_limit_ms"])
            return [
                self._room_event("race_started", at=now, ends_at=now + limit if limit else None)
            ]

        await self._append_room(room, build)

    async def _time_up(self, room: Room) -> None:
        await self._finish(room, "time_limit")

    async def _finish(self, room: Room, reason: str) -> None:
        def build() -> list[dict[str, Any]]:
            if room.status is not RoomStatus.RACING:
                return []
            if reason == "all_done" and not room.all_done():
                return []
            return [
                self._room_event(
                    "race_finished",
                    at=self.clock.now_ms(),
                    reason=reason,
                    ranking=ranking(room.entrants()),
                )
            ]

        await self._append_room(room, build)

    async def _ensure_games_started(self, room: Room) -> None:
        """Every racer's game stream begins with game_started; whichever process comes first."""
        for player in list(room.seats):
            await self._ensure_game_started(room, player)

    async def _ensure_game_started(self, room: Room, player: str) -> None:
        stream = game_stream(room.id, player)
        if await self.store.last_version(stream) > 0:
            return
        meta = room.meta
        deck = meta.get("deck") or deal_deck(meta["variant"], meta["seed"])
        event = start_event(meta["variant"], deck, at=room.started_at or self.clock.now_ms())
        with contextlib.suppress(WrongExpectedVersion):
            await self.store.append(stream, [event], expected_version=0)

    async def _retire(self, room: Room) -> None:
        """A finished room: let its streams expire after the retention, stop following it."""
        try:
            streams = [room.stream, *(g.stream for g in room.games.values())]
            for stream in streams:
                await self.store.retire(stream)
            lasts = {s: await self.store.last_version(s) for s in streams}
            await room.wait_until(
                lambda: (
                    room.version >= lasts[room.stream]
                    and all(g.version >= lasts[g.stream] for g in room.games.values())
                )
            )
            if room.follower is not None:
                await room.follower.aclose()
        except ArenaError as exc:
            log.warning("retire_failed", room=room.id, reason=exc.reason)

    # ---- the game streams --------------------------------------------------------------------

    def _apply_game(self, room: Room, game: Game, version: int, data: dict[str, Any]) -> None:
        self._apply_game_events(room, game, [StoredEvent(game.stream, version, data)])

    def _apply_game_events(self, room: Room, game: Game, events: list[StoredEvent]) -> None:
        """Fold a run of a game's events in one pass, then fan out what they changed."""
        first = game.version + 1
        if not self._fold_run(room, game, events):
            return
        self._fan_out_game(room, game, first, game.version, game.progress)
        if room.status is RoomStatus.RACING and room.all_done():
            self._spawn(room, self._finish(room, "all_done"), name=f"finish-{room.id}")

    def _fold_run(self, room: Room, game: Game, events: list[StoredEvent]) -> bool:
        """Fold a run of a game's events into it in one pass; whether it moved on.

        Progress is computed once for the run: the foundation count is tracked per event (it
        dates ``reached_at``), but whether the game is over only at the end, since a finished
        game stays finished (won, over and resigned all leave no move but resigning).
        """
        first = game.version + 1
        state = game.state
        version = game.version
        progress = game.progress
        foundation, reached, moves = progress.foundation, progress.reached_at, progress.moves
        started = False
        history: list[tuple[GameState, int]] = []  # (state, at) after each event but a start
        public = game.public
        cids = game.cids
        for event in events:
            if event.version != version + 1:
                break
            data = event.data
            try:
                cid = data.get("cid")
                if (
                    event.version == game.accepted_version
                    and cid is not None
                    and cids.get(cid) == event.version
                ):
                    state = game.accepted  # this process appended it: folded on accept already
                else:
                    state = fold_event(state, data)
            except Exception:
                log.exception("fold_failed", room=room.id, stream=game.stream)
                break
            version = event.version
            cid = data.get("cid")
            if cid is not None:
                cids[cid] = version
            at = int(data["at"])
            kind = data["type"]
            if kind == "game_started":
                public.append(pack(public_event(data)))
                started = True
                history.clear()
                foundation, reached, moves = 0, at, 0
                continue
            item = dict(data)
            item.pop("cid", None)
            public.append(pack(item))
            if kind == "moved":
                moves += 1
            count = state.foundation_count
            if count != foundation or reached is None:
                reached = at
            foundation = count
            history.append((state, at))
        if version < first:
            return False
        game.state = state
        game.version = version
        if game.accepted_version <= version:
            game.accepted = None
        if started and not history:
            progress = Progress(status=PlayerStatus.PLAYING, reached_at=reached)
        else:
            status = _status(history[-1][0])
            finished_at = None if started else progress.finished_at
            if status.done and finished_at is None:
                finished_at = history[-1][1]
                for earlier, at in reversed(history[:-1]):
                    if not _status(earlier).done:
                        break
                    finished_at = at
            progress = Progress(status, foundation, moves, finished_at, reached)
        game.progress = progress
        return True

    def _fan_out_game(
        self, room: Room, game: Game, first: int, last: int, progress: Progress
    ) -> None:
        """Send events ``first``..``last`` and the progress reached: players now, spectators
        after the room's delay; with nobody in the room (a rebuild) only the bookkeeping."""
        if not room.members and room.delay_ms <= 0 and not room.pending:
            game.released = max(game.released, last)
            game.shown = progress
            return
        player = game.player
        frames = [
            packed_with(
                {"type": p.GAME_EVENT, "room": room.id, "player": player, "version": version},
                "event",
                game.public[version - 1],
            )
            for version in range(first, last + 1)
        ]
        update = {"type": p.PROGRESS, "room": room.id, "player": player}
        update.update(progress.wire())
        update_frame = p.encode_unchecked(update)  # once, for players and spectators
        owner = room.audience(OWNER, player)
        if owner:
            for frame in frames:
                self.send_many(owner, frame)
        players = room.audience(PLAYERS)
        if players:
            self.send_many(players, update_frame)

        def release() -> None:
            game.released = max(game.released, last)
            game.shown = progress
            watchers = room.audience(WATCHERS, player)
            if watchers:
                for frame in frames:
                    self.send_many(watchers, frame)
            spectators = room.audience(SPECTATORS)
            if spectators:
                self.send_many(spectators, update_frame)

        self._to_spectators(room, release)

    # ---- the spectator delay -----------------------------------------------------------------

    def _to_spectators(self, room: Room, deliver: Callable[[], None]) -> None:
        """Run ``deliver`` after the room's spectator delay, in order with everything else."""
        if room.delay_ms <= 0 and not room.pending:
            deliver()
            return
        room.pending.append((self.clock.now_ms() + room.delay_ms, deliver))
        if room.pump is None or room.pump.done():
            room.pump = self._spawn(room, self._pump(room), name=f"pump-{room.id}")

    async def _pump(self, room: Room) -> None:
        while room.pending:
            due, deliver = room.pending[0]
            await self.clock.sleep_until(due)
            room.pending.popleft()
            try:
                deliver()
            except Exception:
                log.exception("spectator_delivery_failed", room=room.id)

    # ---- commands ----------------------------------------------------------------------------

    def _room_event(self, kind: str, **fields: Any) -> dict[str, Any]:
        return {"type": kind, "v": ROOM_EVENT_VERSION, **fields}

    async def _sync(self, room: Room) -> None:
        last = await self.store.last_version(room.stream)
        await room.wait_until(lambda: room.version >= last)

    async def _append_room(
        self, room: Room, build: Callable[[], list[dict[str, Any]]], attempts: int = 5
    ) -> int:
        """Append what ``build`` makes of the up-to-date room; rebuild on a concurrent change."""
        for _ in range(attempts):
            await self._sync(room)
            events = build()
            if not events:
                return room.version
            try:
                version = await self.store.append(
                    room.stream, events, expected_version=room.version
                )
            except WrongExpectedVersion:
                continue
            await room.wait_until(lambda v=version: room.version >= v)
            return version
        raise ServerError("the room is changing too fast; try again")

    def live_rooms(self) -> int:
        return sum(1 for r in self.rooms.values() if r.status is not RoomStatus.FINISHED)

    async def list_rooms(self) -> list[dict[str, Any]]:
        await self.discover()
        return [r.summary() for r in self.rooms.values() if r.meta]

    async def create_room(self, msg: dict[str, Any]) -> Room:
        cfg = self.config
        capacity = msg.get("capacity", min(4, cfg.max_players_per_room))
        if capacity > cfg.max_players_per_room:
            raise BadField(
                f"field 'capacity' must be <= {cfg.max_players_per_room}", field="capacity"
            )
        variant = msg["variant"]
        deck = msg.get("deck")
        salt = secrets.token_hex(16)
        seed: str | None
        if deck is not None:
            if not cfg.allow_custom_deck:
                raise CustomDeckDisabled("this server does not accept explicit decks")
            deck = list(validate_deck(deck))
            seed = None
            secret = deck_secret(deck)
        else:
            seed = canonical_seed(msg["seed"]) if "seed" in msg else secrets.token_hex(8)
            secret = seed
        await self.discover()
        if self.live_rooms() >= cfg.max_rooms:
            raise TooManyRooms(f"this server already has {cfg.max_rooms} open rooms")
        event = self._room_event(
            "room_created",
            variant=variant,
            seed=seed,
            deck=deck,
            salt=salt,
            commitment=commitment(secret, salt),
            deal_version=DEAL_VERSION,
            capacity=capacity,
            countdown_ms=msg.get("countdown_ms", 3000),
            time_limit_ms=msg.get("time_limit_ms", 0),
            spectator_delay_ms=msg.get("spectator_delay_ms", 0),
            at=self.clock.now_ms(),
        )
        for _ in range(5):
            room_id = "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))
            try:
                await self.store.append(room_stream(room_id), [event], expected_version=0)
            except WrongExpectedVersion:
                continue
            room = await self.load(room_id)
            assert room is not None
            log.info("room_created", room=room_id, variant=variant, capacity=capacity)
            return room
        raise ServerError("could not find a free room id")

    async def room(self, room_id: str) -> Room:
        room = self.rooms.get(room_id) or await self.load(room_id)
        if room is None or not room.meta:
            raise NoSuchRoom(f"no room {room_id!r}")
        return room

    def member(self, peer: Peer) -> tuple[Room, Member] | None:
        room = self.where.get(peer)
        if room is None:
            return None
        return room, room.members[peer]

    def _attach(self, room: Room, member: Member) -> None:
        room.members[member.peer] = member
        room.audience_changed()
        self.where[member.peer] = room
        if member.role == Role.PLAYER and member.player is not None:
            old = self.seated.get((room.id, member.player))
            if old is not None and old is not member.peer:
                self.detach(old)
                old.close_soon(4001, "seat resumed on another connection")
            self.seated[(room.id, member.player)] = member.peer

    def detach(self, peer: Peer) -> None:
        """Forget a connection (it left or closed); its seat stays in the stream."""
        room = self.where.pop(peer, None)
        if room is None:
            return
        member = room.members.pop(peer, None)
        room.audience_changed()
        if member is not None and member.player is not None:
            key = (room.id, member.player)
            if self.seated.get(key) is peer:
                del self.seated[key]

    async def join(
        self, peer: Peer, room_id: str, role: str, *, name: str, token: str, ref: Any = None
    ) -> None:
        if peer in self.where:
            raise AlreadyInRoom("leave your room first")
        room = await self.room(room_id)
        if role == Role.SPECTATOR:
            if len(room.spectators()) >= self.config.max_spectators_per_room:
                raise TooManySpectators(f"room {room_id} has enough spectators")
            member = Member(peer, Role.SPECTATOR, watch_all=True)
            self._attach(room, member)
            peer.send(
                _with_ref({"type": p.JOINED, "room": room.id, "role": role, "player": None}, ref)
            )
            self._send_room_snapshot(room, member)
            return
        player = peer.session

        def build() -> list[dict[str, Any]]:
            if player in room.seats:
                return []
            if room.status is not RoomStatus.LOBBY:
                raise WrongStatus(f"room {room_id} is {room.status.value}: join as a spectator")
            if len(room.seats) >= int(room.meta["capacity"]):
                raise RoomFull(f"room {room_id} is full")
            return [
                self._room_event(
                    "player_joined",
                    player=player,
                    name=name,
                    token_hash=token_hash(token),
                    at=self.clock.now_ms(),
                )
            ]

        await self._append_room(room, build)
        if peer in self.where:  # joined twice concurrently on one connection
            raise AlreadyInRoom("leave your room first")
        member = Member(peer, Role.PLAYER, player=player)
        self._attach(room, member)
        peer.send(
            _with_ref({"type": p.JOINED, "room": room.id, "role": role, "player": player}, ref)
        )
        self._send_room_snapshot(room, member)
        log.info("player_joined", room=room.id, player=player)

    def _send_room_snapshot(self, room: Room, member: Member) -> None:
        peer = member.peer
        spectator = member.role == Role.SPECTATOR
        peer.send({"type": p.ROOM, "room": room.state(delayed=spectator)})
        own = room.games.get(member.player) if member.player is not None else None
        if member.role == Role.PLAYER and own is not None and own.public:
            peer.send(room.game_message(member.player, released_only=False))
        if member.role == Role.SPECTATOR:
            for player in room.seats:
                if room.games.get(player) is not None and room.games[player].public:
                    peer.send(room.game_message(player, released_only=True))
        if room.finished is not None and (room.finished_shown or not spectator):
            peer.send(room.finished_message())

    async def resume(self, token: str) -> tuple[Room, str] | None:
        """The room and player of a resume token's seat; None if it has none."""
        hashed = token_hash(token)
        if hashed not in self.tokens:
            await self.discover()
        for _ in range(3):
            found = self.tokens.get(hashed)
            if found is None:
                return None
            room = self.rooms.get(found[0]) or await self.load(found[0])
            if room is None:
                return None
            await self._sync(room)
            if self.tokens.get(hashed) == found:
                return room, found[1]
        return None

    def attach_resumed(self, peer: Peer, room: Room, player: str) -> None:
        member = Member(peer, Role.PLAYER, player=player)
        self._attach(room, member)
        self._send_room_snapshot(room, member)

    async def leave(self, peer: Peer) -> str:
        found = self.member(peer)
        if found is None:
            raise NotInRoom("you are in no room")
        room, member = found
        if member.role == Role.PLAYER and member.player is not None:
            player = member.player
            if room.status is RoomStatus.RACING:
                with contextlib.suppress(ClientError):
                    await self.resign(peer)
            elif room.status in (RoomStatus.LOBBY, RoomStatus.COUNTDOWN):

                def build() -> list[dict[str, Any]]:
                    if player not in room.seats or room.status not in (
                        RoomStatus.LOBBY,
                        RoomStatus.COUNTDOWN,
                    ):
                        return []
                    now = self.clock.now_ms()
                    events = [self._room_event("player_left", player=player, at=now)]
                    if room.status is RoomStatus.COUNTDOWN and len(room.seats) == 1:
                        events.append(self._room_event("countdown_cancelled", at=now))
                    return events

                await self._append_room(room, build)
        self.detach(peer)
        return room.id

    async def start_race(self, peer: Peer) -> None:
        room, member = self._seated(peer)

        def build() -> list[dict[str, Any]]:
            next_status(room.status, Trigger.START)  # WrongStatus unless in the lobby
            if member.player not in room.seats:
                raise NotAPlayer("you have no seat in this room")
            now = self.clock.now_ms()
            go_at = now + int(room.meta["countdown_ms"])
            return [self._room_event("countdown_started", at=now, go_at=go_at)]

        await self._append_room(room, build)

    def _seated(self, peer: Peer) -> tuple[Room, Member]:
        found = self.member(peer)
        if found is None:
            raise NotAPlayer("you have no seat: join a room as a player")
        room, member = found
        if member.role != Role.PLAYER or member.player is None:
            raise NotAPlayer("spectators cannot play")
        return room, member

    async def _sync_game(self, room: Room, game: Game) -> None:
        """Fold the game up to what the store holds; a racer's game is started first if need be."""
        if game.version == 0 and room.status is RoomStatus.RACING and game.player in room.seats:
            # `started` may reach a fast client before the game streams are written.
            await self._ensure_game_started(room, game.player)
        last = await self.store.last_version(game.stream)
        await room.wait_until(lambda: game.version >= last)

    async def move(self, peer: Peer, cid: Any, move: str, target: str | None) -> int:
        """Apply one move of the peer's own game; the new version (also for a resent id)."""
        room, member = self._seated(peer)
        player = member.player
        assert player is not None
        if target is not None and target != player:
            raise NotYourGame("you can only move in your own game")
        game = room.games.get(player)
        if game is None:
            raise NotRacing("the race has not started")
        async with game.lock:
            # The local fold is usually current (this process wrote the game's last event), so
            # the first try skips the store round trip; a stale fold shows up as a conflict on
            # append, and a reject is only given after syncing (bench/load.py profile).
            synced = False
            for _ in range(4):
                if cid in game.cids:
                    return game.cids[cid]
                if cid in game.rejects:
                    raise game.rejects[cid]
                state, current = game.state, game.version
                if game.accepted_version > current:
                    state, current = game.accepted, game.accepted_version
                try:
                    event = self._move_event(room, game, state, current, move)
                except ClientError as exc:
                    if not synced:
                        await self._sync_game(room, game)
                        synced = True
                        continue
                    game.rejects[cid] = exc
                    while len(game.rejects) > _REJECT_MEMORY:
                        game.rejects.popitem(last=False)
                    raise
                event["cid"] = cid
                try:
                    version = await self.store.append(
                        game.stream, [event], expected_version=current
                    )
                except WrongExpectedVersion:
                    await self._sync_game(room, game)
                    synced = True
                    continue
                game.cids[cid] = version
                if version > game.version:  # else the follower has folded it already
                    game.accepted = fold_event(state, event)
                    game.accepted_version = version
                return version
        raise ServerError("your game is changing too fast; try again")

    def _move_event(
        self, room: Room, game: Game, state: GameState | None, version: int, move: str
    ) -> dict[str, Any]:
        """The event of ``move`` on ``state`` (the game at ``version``), or why not."""
        now = self.clock.now_ms()
        if room.status is not RoomStatus.RACING or (
            room.ends_at is not None and now >= room.ends_at
        ):
            raise NotRacing(f"the race is {room.status.value}, not racing")
        if state is None:
            raise NotRacing("your game has not started yet")
        status = game.progress.status if version == game.version else _status(state)
        if status.done:
            raise GameOver(f"your game is {status.value}")
        return move_event(state, move, at=now)

    async def resign(self, peer: Peer) -> None:
        room, member = self._seated(peer)
        assert member.player is not None
        game = room.games.get(member.player)
        if game is None:
            raise NotRacing("the race has not started")
        async with game.lock:
            for _ in range(3):
                await self._sync_game(room, game)
                now = self.clock.now_ms()
                if room.status is not RoomStatus.RACING or game.state is None:
                    raise NotRacing(f"the race is {room.status.value}, not racing")
                if game.progress.status.done:
                    raise GameOver(f"your game is {game.progress.status.value}")
                try:
                    version = await self.store.append(
                        game.stream, [resign_event(at=now)], expected_version=game.version
                    )
                except WrongExpectedVersion:
                    continue
                await room.wait_until(lambda v=version: game.version >= v)
                return
        raise ServerError("your game is changing too fast; try again")

    async def watch(self, peer: Peer, room_id: str | None, player: str | None, token: str) -> None:
        found = self.member(peer)
        if found is None:
            if room_id is None:
                raise NotInRoom("you are in no room: name one")
            await self.join(peer, room_id, Role.SPECTATOR, name="", token=token)
            found = self.member(peer)
            assert found is not None
        room, member = found
        if room_id is not None and room_id != room.id:
            raise AlreadyInRoom(f"you are in room {room.id}: leave it first")
        if player is not None and player not in room.seats:
            raise NoSuchPlayer(f"no player {player!r} in room {room.id}")
        targets = [player] if player is not None else list(room.seats)
        if member.role == Role.PLAYER and member.player is not None:
            own = room.games.get(member.player)
            own_done = own is not None and own.progress.status.done
            if targets != [member.player] and not own_done and room.finished is None:
                raise NotAllowed("racers can watch other racers once their own game is finished")
            if player is None:
                member.watch_all = True
            elif player != member.player:
                member.watching.add(player)
            room.audience_changed()
        for target in targets:
            own_game = member.role == Role.PLAYER and member.player == target
            peer.send(room.game_message(target, released_only=not own_game))

    async def aclose(self) -> None:
        self._closed = True
        for room in self.rooms.values():
            for task in list(room.tasks):
                task.cancel()
            if room.follower is not None:
                with contextlib.suppress(Exception):
                    await room.follower.aclose()
        tasks = [t for room in self.rooms.values() for t in room.tasks]
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
