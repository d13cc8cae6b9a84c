"""Which process runs a tournament for now: its lease stream ``{<id>}:lease`` of claims
(server/tournaments/domain/lease.py decides them), claimed, renewed and, once the tournament is
archived, deleted by its holder (or, should the holder die first, by any process once it ran out),
so that an archived tournament leaves no key in the store.

Correctness never rests on the lease (every decision is appended at the tournament's version):
it only keeps two processes from doing the same work.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from server.tournaments.domain.lease import decide_claim, holds, ran_out
from server.tournaments.services.metrics import TournamentMetrics
from shared.errors import WrongExpectedVersion

log = get_logger("server.tournaments.services.lease")


def lease_stream(tournament: str) -> str:
    return f"{{{tournament}}}:lease"


@dataclass(frozen=True, slots=True)
class TournamentLease:
    """This process's claims on the tournaments' leases."""

    store: EventStore
    clock: Clock
    process: str
    lease_ms: int
    metrics: TournamentMetrics

    async def claim(self, tournament: str, *, begin: bool = True) -> bool:
        """Whether this process holds the tournament's lease (claimed or renewed now). Without
        ``begin``, a lease no process ever claimed is not claimed: a finished tournament's
        lease is only renewed or taken over, since its stream is deleted once the tournament is
        archived, and a process that listed it before that must not run it again."""
        stream = lease_stream(tournament)
        last_version = await self.store.last_version(stream)
        if not last_version and not begin:
            return False
        last = await self._last(stream, last_version)
        now = self.clock.now_ms()
        claim = decide_claim(last, self.process, now, self.lease_ms)
        if claim is None:
            return holds(last, self.process, now)
        try:
            await self.store.append(stream, [claim], expected_version=last_version)
        except WrongExpectedVersion:
            return False
        if last is None or last["holder"] != self.process:
            self.metrics.leases_taken.inc()
            log.info("tournament_lease_taken", tournament=tournament)
        return True

    async def release(self, tournament: str) -> None:
        """An archived tournament's lease stream deleted, the last of its keys, at the version
        of this process's own claim: a claim appended since (this one ran out meanwhile) is
        kept for its holder, which archives the tournament again and releases it then."""
        await self._delete(
            tournament,
            lambda last: last is not None and last["holder"] == self.process,
            "tournament_lease_released",
        )

    async def sweep(self, tournament: str) -> bool:
        """An archived tournament's lease that its holder did not delete (it died between
        archiving and releasing), deleted once it ran out; whether none is left."""
        return await self._delete(
            tournament, lambda last: ran_out(last, self.clock.now_ms()), "tournament_lease_swept"
        )

    async def _delete(
        self, tournament: str, may: Callable[[dict[str, object] | None], bool], said: str
    ) -> bool:
        """The lease stream deleted at the version read, if its last claim ``may`` be (a claim
        appended meanwhile keeps it); whether none is left."""
        stream = lease_stream(tournament)
        version = await self.store.last_version(stream)
        if not version:
            return True
        if not may(await self._last(stream, version)):
            return False
        if not await self.store.delete_at({stream: version}):
            return False
        log.info(said, tournament=tournament)
        return True

    async def _last(self, stream: str, version: int) -> dict[str, object] | None:
        """The stream's last claim (None for an empty stream)."""
        tail = await self.store.read(stream, after=version - 1) if version else []
        return tail[-1].data if tail else None
