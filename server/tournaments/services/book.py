"""Tournaments as this process knows them: each folded from its stream, kept up to date by
reading what was appended since, and changed only through ``run`` (decide on the fold, append
at the version it read, decide again on a conflict), as rooms change through the room loop.
A finished tournament is read from the archive once its stream has left the store (store
first, then archive: the archive is written before the stream is deleted).

The ``tournaments`` index lists every tournament (its start as the score, a short summary as
the value) so that a list, the creation limit and the pairing loop need no fold of each one.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack

from server.kernel.errors import NoSuchTournament
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from server.tournaments.domain.events import (
    TournamentCreated,
    TournamentEvent,
    encode,
    tournament_stream,
)
from server.tournaments.domain.fold import Tournament
from server.tournaments.services.archive import TournamentArchive
from shared.errors import CorruptEvent, ServerError, WrongExpectedVersion

log = get_logger("server.tournaments.services.book")

TOURNAMENTS_INDEX = "tournaments"


def played_index(account: str) -> str:
    """The finished tournaments an account raced in (member: the tournament; score: its end)."""
    return f"tplayed.{account}"


_ID_ALPHABET = "abcdefghijkmnpqrstuvwxyz23456789"
ID_LENGTH = 10  # never a room id's 8: a tournament and a room never share a hash tag

Decide = Callable[[Tournament, int], list[TournamentEvent]]


def fresh_id() -> str:
    return "".join(secrets.choice(_ID_ALPHABET) for _ in range(ID_LENGTH))


@dataclass(frozen=True, slots=True)
class Listed:
    """A tournament as the index lists it."""

    id: str
    starts_at: int
    ends_at: int
    creator: str | None
    finished: bool
    archived: bool  # its stream has left the store for the archive


class TournamentBook:
    """The tournaments this process has folded; one lock each, so a fold is never fed twice."""

    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        archive: TournamentArchive | None = None,
        *,
        hidden: Callable[[], frozenset[str]] = frozenset,
        renamed: Callable[[], Mapping[str, str]] = dict,
    ) -> None:
        self.store = store
        self.hidden = hidden  # the accounts a fair-play mark holds on: out of the standings
        self.renamed = renamed  # the accounts a moderator renamed: shown under the new name
        self.clock = clock
        self.archive = archive  # where finished tournaments go (none: they stay in the store)
        self.folds: dict[str, Tournament] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        # Told of each decision this process appended: the tournament and its events (the
        # standings pushed at once).
        self.listeners: list[Callable[[str, Sequence[TournamentEvent]], None]] = []

    def _lock(self, tournament_id: str) -> asyncio.Lock:
        return self._locks.setdefault(tournament_id, asyncio.Lock())

    async def get(self, tournament_id: str) -> Tournament:
        """The tournament, folded up to the store's last event; NoSuchTournament if none."""
        async with self._lock(tournament_id):
            return await self._current(tournament_id)

    async def _current(self, tournament_id: str) -> Tournament:
        """``get`` under the tournament's lock, held by the caller."""
        tournament = self.folds.get(tournament_id)
        if tournament is None:
            tournament = Tournament(tournament_id)
        await self._catch_up(tournament)
        if not tournament.exists and self.archive is not None:
            tournament = Tournament(tournament_id)
            self._fold(tournament, await self.archive.events(tournament_id))
        if not tournament.exists:
            raise NoSuchTournament(f"no tournament {tournament_id[:64]!r}")
        tournament.hide(self.hidden())
        tournament.renamed = self.renamed()
        self.folds[tournament_id] = tournament
        return tournament

    async def _catch_up(self, tournament: Tournament) -> bool:
        """Fold what the stream holds past the fold; whether anything was."""
        stored = await self.store.read(tournament_stream(tournament.id), after=tournament.version)
        self._fold(tournament, [event.data for event in stored])
        return bool(stored)

    @staticmethod
    def _fold(tournament: Tournament, events: list[dict[str, Any]]) -> None:
        for data in events:
            try:
                tournament.apply_stored(data)
            except CorruptEvent as exc:  # one bad event must not make the tournament unloadable
                log.error("tournament_event_unreadable", tournament=tournament.id, error=str(exc))
                tournament.version += 1

    async def sync(self, tournament: Tournament) -> bool:
        """Bring a folded tournament up to date; whether it changed."""
        async with self._lock(tournament.id):
            tournament.hide(self.hidden())
            tournament.renamed = self.renamed()
            return await self._catch_up(tournament)

    async def run(
        self, tournament_id: str, decide: Decide, attempts: int = 8
    ) -> list[TournamentEvent]:
        """Append what ``decide`` makes of the tournament at the version it was folded to; on
        a conflict read on and decide again. The events appended (maybe none).

        The fold held here is tried as it is, without a read first: the append at its version
        fails if anything was appended since, so a decision is never recorded on a stale fold,
        and the lock is held for one round trip, not two. Only "nothing to do" is checked
        against the store, since a stale fold may not know what there is to do."""
        for _ in range(attempts):
            async with self._lock(tournament_id):
                tournament = self.folds.get(tournament_id)
                read = tournament is None
                if tournament is None:
                    tournament = await self._current(tournament_id)
                events = decide(tournament, self.clock.now_ms())
                if not events and not read and await self._catch_up(tournament):
                    events = decide(tournament, self.clock.now_ms())
                if not events:
                    return []
                try:
                    await self.store.append(
                        tournament_stream(tournament_id),
                        [encode(e) for e in events],
                        expected_version=tournament.version,
                    )
                except WrongExpectedVersion:
                    await self._catch_up(tournament)
                    continue
                for event in events:
                    tournament.apply(event)
                for listener in self.listeners:
                    listener(tournament_id, events)
                return events
        raise ServerError("the tournament is changing too fast; try again")

    async def create(self, created: TournamentCreated) -> Tournament:
        """A new tournament's stream (version 1), then its index entry."""
        try:
            await self.store.append(
                tournament_stream(created.id), [encode(created)], expected_version=0
            )
        except WrongExpectedVersion:
            raise ServerError("that tournament id is taken") from None
        await self.publish(created, finished=False)
        return await self.get(created.id)

    async def publish(
        self, created: TournamentCreated, *, finished: bool, archived: bool = False
    ) -> None:
        value = {
            "e": created.starts_at + created.length_ms,
            "c": created.creator,
            "f": finished,
            "a": archived,
        }
        await self.store.index_put(
            TOURNAMENTS_INDEX, created.id, created.starts_at, msgpack.packb(value)
        )

    async def listed(self) -> list[Listed]:
        """Every tournament of the index, soonest start first."""
        out = []
        for entry in await self.store.index_range(TOURNAMENTS_INDEX):
            value = msgpack.unpackb(entry.value)
            archived = bool(value.get("a"))
            out.append(
                Listed(entry.member, entry.score, value["e"], value["c"], value["f"], archived)
            )
        return out

    async def owned(self, account: str, now: int) -> int:
        """Upcoming or running tournaments ``account`` created."""
        return sum(
            1
            for t in await self.listed()
            if t.creator == account and not t.finished and t.ends_at > now
        )

    async def note_played(self, tournament: Tournament, account: str, place: int) -> None:
        """A finished tournament on the account's record (its profile: played, podiums); a
        projection of the tournament streams, written again the same by a rebuild."""
        s = tournament.settings
        value = {"t": tournament.id, "n": s.name, "v": s.variant, "p": place}
        at = tournament.finished_at or self.clock.now_ms()
        await self.store.index_put(played_index(account), tournament.id, at, msgpack.packb(value))

    async def played(self, account: str) -> list[dict[str, Any]]:
        """The account's finished tournaments, newest first: ``tournament``, ``name``,
        ``variant``, ``place``, ``at``."""
        entries = await self.store.index_range(played_index(account))
        rows = []
        for entry in reversed(entries):
            value = msgpack.unpackb(entry.value)
            rows.append(
                {
                    "tournament": value["t"],
                    "name": value["n"],
                    "variant": value["v"],
                    "place": value["p"],
                    "at": entry.score,
                }
            )
        return rows

    def forget(self, tournament_id: str) -> None:
        self.folds.pop(tournament_id, None)
