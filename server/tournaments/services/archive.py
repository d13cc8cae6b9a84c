"""A finished tournament leaves the store for the archive, as a settled challenge does: its
stream is written as one record (beside the rooms', under ``tournament.<id>``, its summary
marked ``tournament`` so the room list leaves it out), read back and folded to the same
tournament, and only then deleted from the store at the version it was read. The book reads
the store first, then the archive (docs/storage.md, "Tiers"); its races are rooms, which the
archiver takes as any race."""

from __future__ import annotations

from typing import Any

from server.archive import Archive
from server.archive.record import ArchivedRoom
from server.kernel.errors import NoSuchTournament
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from server.tournaments.domain.events import tournament_stream
from server.tournaments.domain.fold import Tournament, TournamentStatus, fold
from shared.errors import ServerError

log = get_logger("server.tournaments.services.archive")


class TournamentMismatch(ServerError):
    """The archived record does not fold to the tournament the store holds: nothing deleted."""

    code = "tournament_archive_mismatch"


class TournamentNotFinal(ServerError):
    """Only a finished tournament whose every race is scored is archived."""

    code = "tournament_not_final"


def archive_key(tournament_id: str) -> str:
    """The record's key: never a room id (8 characters) nor a challenge code (10, no dot)."""
    return f"tournament.{tournament_id}"


class TournamentArchive:
    """Finished tournaments kept for good in the archive."""

    def __init__(self, store: EventStore, archive: Archive, clock: Clock) -> None:
        self.store = store
        self.archive = archive
        self.clock = clock

    async def events(self, tournament_id: str) -> list[dict[str, Any]]:
        """The archived tournament's events (none if it was never archived)."""
        record = await self.archive.get(archive_key(tournament_id))
        return [] if record is None else list(record.room_events)

    async def keep(self, tournament_id: str) -> Tournament:
        """Archive the finished tournament, check, then delete its stream; the tournament as
        archived. Safe to run again at any point (once deleted, it is read from the archive),
        and from several processes."""
        stream = tournament_stream(tournament_id)
        events = [e.data for e in await self.store.read(stream)]
        if not events:  # archived and deleted before
            archived = await self.events(tournament_id)
            if not archived:
                raise NoSuchTournament(f"no tournament {tournament_id[:64]!r}")
            return fold(tournament_id, archived)
        tournament = fold(tournament_id, events)
        if tournament.status is not TournamentStatus.FINISHED or tournament.races:
            raise TournamentNotFinal(f"the tournament {tournament_id} is not final")
        s = tournament.settings
        finished_at = tournament.finished_at or self.clock.now_ms()
        summary = {
            "id": archive_key(tournament_id),
            "tournament": tournament_id,
            "kind": "tournament",
            "name": s.name,
            "variant": s.variant,
            "status": tournament.status.value,
            "created_at": s.at,
            "finished_at": finished_at,
        }
        record = ArchivedRoom(archive_key(tournament_id), finished_at, summary, events)
        await self.archive.put(record, now_ms=self.clock.now_ms())
        again = fold(tournament_id, await self.events(tournament_id))
        if not again.same_fold(tournament):
            raise TournamentMismatch(f"the archived tournament {tournament_id} does not fold back")
        # Fenced: a stream that moved on since it was read is kept, and archived again later.
        if not await self.store.delete_at({stream: tournament.version}):
            raise TournamentMismatch(f"the tournament {tournament_id} moved on while archived")
        log.info("tournament_archived", tournament=tournament_id, events=len(events))
        return tournament
