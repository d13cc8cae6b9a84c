"""Delivery: what changed in a room, sent to the connections in it on this process.

Players get their own game's events at once. Viewers (spectators, and racers watching others)
get a game's events once fair spectating allows them (server.race.domain.fairness: no stock card
before every racer still playing has turned it), then after the room's spectator delay
(``delay.py``); progress reaches them after the delay alone. Everything but a racer's own events
and the room's lifecycle is sent at most once a tick per connection (``ticks.py``). Frames are
rendered once for all their recipients (``render.py``); who is in the room is ``Members``
(``members.py``), and who receives what is cached per room (``audience.py``). Delivery never
appends and never decides a rule: it renders the fold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server.race.domain.events import (
    CountdownCancelled,
    CountdownStarted,
    PlayerAway,
    PlayerBack,
    PlayerBerserked,
    PlayerJoined,
    PlayerLeft,
    RaceFinished,
    RaceStarted,
    RematchOffered,
    RoomClosed,
)
from server.race.domain.fairness import common_cards, viewable
from server.race.domain.fold import Change, GameAdvanced, Loaded, RoomChanged
from server.race.domain.model import Room
from server.race.domain.progress import Progress
from server.race.wire import render
from server.race.wire.audience import (
    OWNER,
    PLAYERS,
    RIVALS,
    SPECTATORS,
    VIEWING_PLAYERS,
    WATCHERS,
    Audience,
    Peer,
)
from server.race.wire.delay import Delay
from server.race.wire.members import Members
from server.race.wire.ticks import SendMany, Soon, Ticker
from server.runtime.clock import Clock
from server.runtime.config import Config
from shared import protocol as p

# Room events after which everyone in the room gets the room's state again.
_SEATING = (
    PlayerJoined,
    PlayerLeft,
    PlayerAway,
    PlayerBack,
    CountdownCancelled,
    RoomClosed,
    PlayerBerserked,
)


class Delivery(Members):
    """Fan-out of every loaded room's changes to its members on this process (``Members``:
    who they are)."""

    def __init__(
        self, clock: Clock, config: Config, send_many: SendMany, soon: Soon | None = None
    ) -> None:
        super().__init__(config, Ticker(send_many, config.tick_ms, soon))
        self.delay = Delay(clock)

    @property
    def frames(self) -> int:
        """Frames handed to connections (metrics)."""
        return self.ticker.frames

    # ---- changes -----------------------------------------------------------------------------

    def on_change(self, room: Room, changes: Sequence[Change]) -> None:
        """The hub's listener: fan out each change, in order."""
        audience = self.audience(room)
        released = False  # a game's advance ends with a release: no second scan for a move
        for change in changes:
            if isinstance(change, GameAdvanced):
                self._game_advanced(room, audience, change)
                released = True
            elif isinstance(change, RoomChanged):
                self._room_changed(room, audience, change)
                released = False
            elif isinstance(change, Loaded):
                self._loaded(room, audience)
                released = False
        if not released:
            self._release(room, audience)

    def _later(self, room: Room, audience: Audience, deliver: Any) -> None:
        self.delay.later(room.id, room.delay_ms, audience, deliver)

    def _loaded(self, room: Room, audience: Audience) -> None:
        """A room folded with nobody here: what viewers have been shown reaches the fold (after
        the delay, if the room has one), so the first viewer sees what the delay allows. A room
        folded again (its stream went back) keeps no count beyond the new fold."""
        audience.clamp({player: game.version for player, game in room.games.items()})
        for game in room.games.values():
            progress = game.progress

            def show(player: str = game.player, shown: Progress = progress) -> None:
                audience.shown[player] = shown

            self._later(room, audience, show)
        self._release(room, audience)  # the games' events reach viewers before the end does
        if room.finished is not None and not audience.finished_shown:
            self._later(room, audience, lambda: setattr(audience, "finished_shown", True))

    def _room_changed(self, room: Room, audience: Audience, change: RoomChanged) -> None:
        event = change.event
        if change.refused:
            return
        send = self.ticker.send
        everyone = list(audience.members)
        if isinstance(event, PlayerBack):
            self.supersede(room, event.player, event.connection)
        if isinstance(event, PlayerBerserked):
            berserked = {"type": p.BERSERKED, "room": room.id, "player": event.player}
            send(audience, everyone, {**berserked, "ends_at": room.clock_ends_at(event.player)})
        if isinstance(event, _SEATING):
            send(audience, everyone, {"type": p.ROOM, "room": self.room_state(room)})
            if isinstance(event, RoomClosed):
                # Told, then out of it: a closed room holds nobody (they may join or queue again).
                for peer in everyone:
                    self.detach(peer)
        elif isinstance(event, CountdownStarted):
            send(audience, everyone, render.countdown_message(room, event.at))
        elif isinstance(event, RaceStarted):
            send(audience, everyone, render.started_message(room, event.at))
        elif isinstance(event, RaceFinished):
            self._release(room, audience)  # every game's last events before the end
            message = room.finished_message()
            at_once, viewing = self._racers(room, audience)
            send(audience, at_once, message)

            def release_end() -> None:
                audience.finished_shown = True
                told = [peer for peer in viewing if peer in audience.members]
                send(audience, [*audience.of(SPECTATORS), *told], message)

            self._later(room, audience, release_end)
        elif isinstance(event, RematchOffered):
            # Racers are told at once; spectators (and racers viewing others under the delay)
            # once the delay has shown them the end.
            at_once, viewing = self._racers(room, audience)
            send(audience, at_once, {"type": p.ROOM, "room": self.room_state(room)})

            def release_rematch() -> None:
                state = self.room_state(room, delayed=True)
                told = [peer for peer in viewing if peer in audience.members]
                send(audience, [*audience.of(SPECTATORS), *told], {"type": p.ROOM, "room": state})

            self._later(room, audience, release_rematch)

    @staticmethod
    def _racers(room: Room, audience: Audience) -> tuple[list[Peer], list[Peer]]:
        """The racers told of the room's end at once, and those told with the spectators: a
        racer watching others is their viewer, and under a spectator delay the watched games'
        last events reach it late; the end must not come before them (causal order)."""
        players = audience.of(PLAYERS)
        if room.delay_ms <= 0:
            return players, []
        viewing = audience.of(VIEWING_PLAYERS)
        return [peer for peer in players if peer not in viewing], viewing

    def _game_advanced(self, room: Room, audience: Audience, change: GameAdvanced) -> None:
        player, first, last, progress = change.player, change.first, change.last, change.progress
        if audience.quiet(room.delay_ms):
            # Nobody here to tell, but what viewers may see moves on all the same: a viewer
            # who joins later is shown it (the game may be played on another process).
            audience.shown[player] = progress
            self._release(room, audience)
            return
        game = room.games[player]
        update_frame = render.progress_frame(room, player, progress)  # once, for all
        owner = audience.of(OWNER, player)
        if owner:
            # The racer's own progress goes with its own events and its ack, in their one
            # write: sent with the tick it would take a write of its own, each move.
            for frame in render.event_frames(room, game, first, last):
                self.ticker.send(audience, owner, frame)
            self.ticker.send(audience, owner, update_frame)
        self.ticker.queue(audience, audience.of(RIVALS, player), update_frame)

        def show() -> None:
            audience.shown[player] = progress
            self.ticker.queue(audience, audience.of(SPECTATORS), update_frame)

        # Progress first: viewers learn how far this racer is before the events of others
        # that its move let through (a viewer can check the fairness rule from what it gets).
        self._later(room, audience, show)
        self._release(room, audience)

    def _release(self, room: Room, audience: Audience) -> None:
        """Let through, to viewers, every event fair spectating allows now (then the delay)."""
        common = common_cards(room)
        quiet = audience.quiet(room.delay_ms)
        for player, game in room.games.items():
            cleared = audience.cleared.get(player, 0)
            limit = viewable(game, cleared, common)
            if limit <= cleared:
                continue
            audience.cleared[player] = limit
            if quiet:
                audience.released[player] = limit
                continue
            frames = render.event_frames(room, game, cleared + 1, limit)

            def deliver(
                player: str = player, limit: int = limit, frames: list[bytes] = frames
            ) -> None:
                audience.released[player] = max(audience.released.get(player, 0), limit)
                watchers = audience.of(WATCHERS, player)
                for frame in frames:
                    self.ticker.queue(audience, watchers, frame)

            self._later(room, audience, deliver)

    def flush(self) -> None:
        """Send every connection here what waits for its room's tick, now."""
        for audience in self.audiences.values():
            self.ticker.flush(audience)

    async def aclose(self) -> None:
        self.flush()
        for audience in self.audiences.values():
            self.ticker.stop(audience)
        await self.delay.stop(list(self.audiences.values()))
