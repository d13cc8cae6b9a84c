"""A tournament race's end, scored into its tournament, in batches.

Every process that folds a race's room sees it end (``on_change``, a hub listener) and scores
it; the decision is once per room, so the second try appends nothing. What ends while an append
is under way waits for the next one, which takes everything waiting: a round's hundred races,
ending together, are a few appends rather than a hundred in a row.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from server.accounts.domain.ratings import Change as RatingChange
from server.kernel.names import fold_name
from server.race.domain.events import RaceFinished, RoomClosed
from server.race.domain.fold import Change as RoomChange
from server.race.domain.fold import RoomChanged
from server.race.domain.model import Room
from server.race.domain.progress import PlayerStatus
from server.runtime.logging import get_logger
from server.runtime.tasks import Background
from server.tournaments.domain.decide import decide_score
from server.tournaments.domain.events import RaceScored, TournamentEvent
from server.tournaments.domain.fold import Tournament
from server.tournaments.services.book import TournamentBook
from server.tournaments.services.metrics import TournamentMetrics
from shared.errors import ArenaError

log = get_logger("server.tournaments.services.scorer")

Rate = Callable[[Room], Awaitable[Sequence[RatingChange] | None]]
"""Rates a finished race once (the ratings' ``record``): its changes, None if unrated."""


def results_of(room: Room) -> list[dict[str, Any]]:
    """A race's results for its tournament: the ranking's order, each racer's account; a racer
    resigned with no move made is taken as having abandoned."""
    if room.finished is None:
        return []
    out = []
    for entry in room.finished.ranking:
        seat = room.seats.get(entry["player"])
        if seat is None or seat.account is None:
            continue
        out.append(
            {
                "account": fold_name(seat.account),
                "place": entry["place"],
                "moves": entry["moves"],
                "berserk": seat.berserk,
                "abandoned": abandoned(entry, berserk=seat.berserk),
                "timed_out": entry["status"] == PlayerStatus.TIMED_OUT.value,
            }
        )
    return out


def with_ratings(
    results: list[dict[str, Any]], changes: Sequence[RatingChange] | None
) -> list[dict[str, Any]]:
    """Each racer's ``rating`` after the race, when it rated them: the standings show it."""
    after = {change.account: change.after for change in changes or ()}
    return [{**r, "rating": after[r["account"]]} if r["account"] in after else r for r in results]


def abandoned(entry: dict[str, Any], *, berserk: bool) -> bool:
    """No move made, and the game ended by the server: resigned (the grace ran out), or a
    berserk racer's own clock (the race's time limit alone leaves nobody out)."""
    if entry["moves"] != 0:
        return False
    status = entry["status"]
    return status == PlayerStatus.RESIGNED.value or (
        berserk and status == PlayerStatus.TIMED_OUT.value
    )


def scores(
    batch: dict[str, list[dict[str, Any]]],
) -> Callable[[Tournament, int], list[TournamentEvent]]:
    """The decision scoring every race of ``batch`` (room -> results)."""

    def decide(t: Tournament, now: int) -> list[TournamentEvent]:
        return [e for room, res in batch.items() for e in decide_score(t, room, res, now)]

    return decide


class TournamentScorer:
    """Races ended here, waiting to be scored, per tournament."""

    def __init__(
        self, book: TournamentBook, metrics: TournamentMetrics, rate: Rate | None = None
    ) -> None:
        self.book = book
        self.metrics = metrics
        self.rate = rate
        self.pending: dict[str, dict[str, list[dict[str, Any]]]] = {}
        self._draining: set[str] = set()
        self.background = Background()
        # Told the id of a tournament whose races this process just scored (its racers free).
        self.listeners: list[Callable[[str], None]] = []

    async def aclose(self) -> None:
        await self.background.aclose()

    def on_change(self, room: Room, changes: Sequence[RoomChange]) -> None:
        """A tournament race ended (finished, or closed unfilled): score it."""
        tournament = room.meta.tournament if room.meta is not None else ""
        if not tournament:
            return
        for change in changes:
            if not isinstance(change, RoomChanged) or change.refused:
                continue
            if isinstance(change.event, (RaceFinished, RoomClosed)):
                self.background.spawn(self._score_logged(tournament, room))

    async def results(self, room: Room) -> list[dict[str, Any]]:
        """The race's results, each with the rating it left the racer at (the race rated
        first, once, whoever asks); without it if the ratings cannot be reached now."""
        results = results_of(room)
        if self.rate is None or not results or room.finished is None:
            return results
        try:
            return with_ratings(results, await self.rate(room))
        except ArenaError as exc:
            log.warning("tournament_rating_unknown", room=room.id, code=exc.code)
            return results

    async def _score_logged(self, tournament: str, room: Room) -> None:
        self.pending.setdefault(tournament, {})[room.id] = await self.results(room)
        if tournament not in self._draining:
            await self._drain_logged(tournament)

    async def score(self, tournament: str, room_id: str, room: Room | None) -> None:
        """Score one race now (with whatever else waits); ``room`` None: nobody raced."""
        self.pending.setdefault(tournament, {})[room_id] = await self.results(room) if room else []
        if tournament not in self._draining:
            await self.drain(tournament)

    async def _drain_logged(self, tournament: str) -> None:
        try:
            await self.drain(tournament)
        except ArenaError as exc:  # the lease holder's loop scores them later
            log.warning("tournament_score_deferred", tournament=tournament, code=exc.code)

    async def drain(self, tournament: str) -> None:
        """Append the scores waiting, in as few appends as they come."""
        self._draining.add(tournament)
        try:
            while self.pending.get(tournament):
                events = await self.book.run(tournament, scores(self.pending.pop(tournament)))
                scored = sum(isinstance(e, RaceScored) for e in events)
                self.metrics.races_scored.inc(scored)
                if scored:
                    for listener in self.listeners:
                        listener(tournament)
        finally:
            self._draining.discard(tournament)
