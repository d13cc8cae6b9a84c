"""The directory: the store's indexes that find rooms without folding them.

Hints written after each room event, read by ``list_rooms``, by a resume (which room holds a
token's seat) and by the race clock (which rooms are due soon): the streams stay the truth, so
a failed write is logged and heals on the room's next event.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import msgpack

from server.archive import Archive
from server.race.domain.lifecycle import ENDED, RoomStatus
from server.race.domain.model import Room
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore, IndexEntry
from shared.errors import ArchiveUnavailable, ArenaError, CorruptRecord

ROOMS_INDEX = "rooms"  # room id -> created_at, value: the packed room summary
SEATS_INDEX = "seats"  # resume token hash -> joined at, value: the room id
DUE_INDEX = "due"  # room id -> when its next timer is due (a hint; the fold decides)
LIVE_INDEX = "live"  # room id -> created_at, for every room not finished or closed
ACCOUNT_SEATS_INDEX = "account-seats"  # folded account -> joined at, value: its latest room
RECHECK_MS = 5000  # a due hint written before a lifecycle append, in case we die right after
ARCHIVED_LISTED = 1000  # the archive's latest finished rooms the room list shows at most

log = get_logger("server.race.services.directory")


def lobbies_index(creator: str) -> str:
    """The lobbies a session has open: what ``--max-lobbies-per-session`` counts."""
    return f"lobbies.{creator}"


class Directory:
    """Room summaries, live rooms, lobbies per creator, seats of resume tokens, due times."""

    def __init__(self, store: EventStore, clock: Clock, archive: Archive | None = None) -> None:
        self.store = store
        self.clock = clock
        self.archive = archive  # finished rooms that left the store list from there

    async def publish(self, room: Room) -> None:
        """Put the room's summary in the directory (after each of its room events)."""
        summary = room.summary()
        meta = room.settings
        summary["creator"] = meta.creator
        store, created = self.store, meta.at
        writes = [store.index_put(ROOMS_INDEX, room.id, created, msgpack.packb(summary))]
        if room.status in ENDED:
            writes.append(store.index_remove(LIVE_INDEX, room.id))
        else:
            writes.append(store.index_put(LIVE_INDEX, room.id, created))
        if meta.creator:
            # A room made for its members (a match, a tournament's race) is no one's lobby:
            # only its end is written (an older server listed it), not each of its events.
            lobbies = lobbies_index(meta.creator)
            if room.status is RoomStatus.LOBBY and not meta.members:
                writes.append(store.index_put(lobbies, room.id, created))
            elif not meta.members or room.status in ENDED:
                writes.append(store.index_remove(lobbies, room.id))
        try:
            await asyncio.gather(*writes)  # one loop turn: one round trip (group commit)
        except ArenaError as exc:  # best effort: a stale entry heals on the next event
            log.warning("directory_failed", room=room.id, reason=exc.reason)

    async def list_rooms(self, loaded: Mapping[str, Room]) -> list[dict[str, Any]]:
        """The directory, finished rooms past their retention left out (and dropped); a room
        loaded here answers with its own summary."""
        now = self.clock.now_ms()
        retention = self.store.retention
        summaries = []
        for entry in await self.store.index_range(ROOMS_INDEX):
            room = loaded.get(entry.member)
            summary = room.summary() if room is not None and room.meta else _unpack(entry.value)
            if summary is None or summary["status"] == RoomStatus.CLOSED.value:
                continue
            if summary.get("challenge"):
                continue  # an attempt at a challenge: found through the challenge, by its players
            finished_at = summary.get("finished_at")
            if (
                retention is not None
                and finished_at is not None
                and finished_at + retention * 1000 < now
            ):
                await self.store.index_remove(ROOMS_INDEX, entry.member)
                continue
            summary.pop("creator", None)
            summary.setdefault("rated", False)  # published before rooms could be rated
            summaries.append(summary)
        if self.archive is not None:
            listed = {s["id"] for s in summaries}
            archived = [s for s in await self._recently_archived(now) if s["id"] not in listed]
            summaries = sorted([*summaries, *archived], key=lambda s: (s["created_at"], s["id"]))
        return summaries

    async def _recently_archived(self, now: int) -> list[dict[str, Any]]:
        """The archive's finished rooms within the retention, as the directory showed them
        (one indexed query of the latest). An archive that cannot answer leaves them out,
        logged: the live rooms still list."""
        assert self.archive is not None
        retention = self.store.retention
        try:
            recent = await self.archive.recent(limit=ARCHIVED_LISTED)
        except (ArchiveUnavailable, CorruptRecord) as exc:
            log.warning("archive_list_failed", code=exc.code, reason=exc.reason)
            return []
        summaries = []
        for summary in recent:
            finished_at = summary.get("finished_at") or 0
            if retention is not None and finished_at + retention * 1000 < now:
                continue
            if summary.get("challenge") or summary.get("kind") == "tournament":
                continue  # a challenge's or a tournament's record: not a room
            summary.pop("creator", None)
            summaries.append(summary)
        return summaries

    async def forget(self, room_id: str, token_hashes: Sequence[str]) -> None:
        """A room archived: its directory entry and its seats leave the store (the room list
        reads it from the archive, and a finished room has no seat to resume)."""
        await asyncio.gather(
            self.store.index_remove(ROOMS_INDEX, room_id),
            *(self.store.index_remove(SEATS_INDEX, token) for token in token_hashes),
        )

    async def live_count(self) -> int:
        # Counted, not read: reading the whole directory made each creation O(rooms).
        return await self.store.index_count(LIVE_INDEX)

    async def is_live(self, room_id: str) -> bool:
        """Whether the room is neither finished nor closed, as the directory last heard."""
        return await self.store.index_get(LIVE_INDEX, room_id) is not None

    async def lobbies_of(self, creator: str) -> int:
        return len(await self.store.index_range(lobbies_index(creator)))

    # ---- seats -------------------------------------------------------------------------------

    async def seat(self, token_hash: str, room_id: str) -> None:
        """A resume token's seat is in ``room_id`` (written before the seat is taken)."""
        await self.store.index_put(SEATS_INDEX, token_hash, self.clock.now_ms(), room_id.encode())

    async def room_of_seat(self, token_hash: str) -> str | None:
        entry = await self.store.index_get(SEATS_INDEX, token_hash)
        return None if entry is None else entry.value.decode()

    async def seat_account(self, account: str, room_id: str) -> None:
        """An account's latest seat is in ``room_id``: a quick race asks whether it is racing."""
        await self.store.index_put(
            ACCOUNT_SEATS_INDEX, account, self.clock.now_ms(), room_id.encode()
        )

    async def room_of_account(self, account: str) -> str | None:
        entry = await self.store.index_get(ACCOUNT_SEATS_INDEX, account)
        return None if entry is None else entry.value.decode()

    async def drop_seat(self, token_hash: str) -> None:
        await self.store.index_remove(SEATS_INDEX, token_hash)

    # ---- due times ---------------------------------------------------------------------------

    async def recheck_soon(self, room_id: str) -> None:
        """A hint before a timed phase is appended: its timer must run even if we die."""
        await self.store.index_put(DUE_INDEX, room_id, self.clock.now_ms() + RECHECK_MS)

    async def set_due(self, room_id: str, due: int | None) -> None:
        if due is None:
            await self.store.index_remove(DUE_INDEX, room_id)
        else:
            await self.store.index_put(DUE_INDEX, room_id, due)

    async def due_before(self, at: int) -> list[IndexEntry]:
        return await self.store.index_range(DUE_INDEX, max_score=at)


def _unpack(value: bytes) -> dict[str, Any] | None:
    try:
        summary = msgpack.unpackb(value)
    except (ValueError, msgpack.UnpackException):
        return None
    return summary if isinstance(summary, dict) and "id" in summary else None
