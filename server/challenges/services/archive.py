"""A settled challenge leaves the store for the archive, as a finished room does: its stream is
written as one record (beside the rooms', under its code, its summary marked ``challenge`` so
the room list leaves it out), read back and folded to the same challenge, and only then deleted
from the store. Readers read whichever tier holds it (docs/storage.md, "Tiers")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from server.archive import Archive
from server.archive.record import ArchivedRoom
from server.challenges.domain import challenge as c
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from shared.errors import ServerError

log = get_logger("server.challenges.services.archive")


class ChallengeMismatch(ServerError):
    """The archived record does not fold to the challenge the store holds: nothing deleted."""

    code = "challenge_archive_mismatch"


class ChallengeArchive:
    """Settled challenges kept for good in the archive."""

    def __init__(self, store: EventStore, archive: Archive, clock: Clock) -> None:
        self.store = store
        self.archive = archive
        self.clock = clock

    async def events(self, code: str) -> list[dict[str, Any]]:
        """The archived challenge's events (none if it was never archived)."""
        record = await self.archive.get(code)
        return [] if record is None else list(record.room_events)

    async def keep(self, challenge: c.Challenge, events: Sequence[dict[str, Any]]) -> None:
        """Archive the settled ``challenge`` (folded from ``events``), check, then delete its
        stream; safe to run again at any point, and from several processes."""
        settled = challenge.settled
        assert settled is not None, "only a settled challenge is archived"
        meta = challenge.meta
        summary = {
            "id": challenge.code,
            "challenge": challenge.code,
            "variant": meta.variant,
            "status": challenge.status.value,
            "created_at": meta.at,
            "finished_at": settled.at,
        }
        record = ArchivedRoom(challenge.code, settled.at, summary, list(events))
        await self.archive.put(record, now_ms=self.clock.now_ms())
        again = c.fold(challenge.code, await self.events(challenge.code))
        if again != challenge:
            raise ChallengeMismatch(f"the archived challenge {challenge.code} does not fold back")
        # Fenced: a stream that moved on since it was read is kept, and archived again later.
        if not await self.store.delete_at({c.challenge_stream(challenge.code): challenge.version}):
            raise ChallengeMismatch(f"the challenge {challenge.code} moved on while archived")
        log.info("challenge_archived", challenge=challenge.code, events=len(events))
