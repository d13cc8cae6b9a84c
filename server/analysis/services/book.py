"""The analyses kept: each game's in its stream beside the game while the room is in the store,
in the room's archived record once it has moved there (docs/storage.md, "Tiers").

A write goes where the room is: appended to the stream at version 0 (once, whoever races to
it) while the room stream is there; otherwise added to the archived record, which replaces the
record without it (it holds more events). An analysis appended just as the archiver deleted the
room's streams is found orphaned by the check after the append and moved to the record.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from server.analysis.domain.events import GameAnalysed, analysis_stream, decode, encode
from server.archive import Archive
from server.race.domain.model import room_stream
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from shared.errors import CorruptEvent, WrongExpectedVersion

log = get_logger("server.analysis.services.book")


def analysis_streams(room_id: str, players: Sequence[str]) -> list[str]:
    """The analysis streams of a room's games (the archiver moves them with the room)."""
    return [analysis_stream(room_id, player) for player in players]


class AnalysisBook:
    """Reads and writes games' analyses, in the store or the archive."""

    def __init__(self, store: EventStore, archive: Archive | None, clock: Clock) -> None:
        self.store = store
        self.archive = archive
        self.clock = clock

    async def read(self, room_id: str, player: str) -> GameAnalysed | None:
        """The latest analysis of the game (a rebuild's over the first); None if none yet."""
        stream = analysis_stream(room_id, player)
        events = [e.data for e in await self.store.read(stream)]
        gone = not events and not await self.store.last_version(room_stream(room_id))
        if gone and self.archive is not None:
            record = await self.archive.get(room_id)
            events = record.analyses.get(stream, []) if record is not None else []
        for data in reversed(events):
            try:
                return decode(data)
            except CorruptEvent as error:  # an analysis is rebuildable: skip it, say so
                log.error("corrupt_analysis", room=room_id, player=player, reason=error.reason)
        return None

    async def write(self, event: GameAnalysed, *, again: bool = False) -> bool:
        """Keep the analysis; True if this call wrote it. Without ``again`` a game already
        analysed keeps its analysis (written once); with it (a rebuild) one is added."""
        stream = analysis_stream(event.room, event.player)
        if await self.store.last_version(room_stream(event.room)) > 0:
            written = await self._append(stream, event, again=again)
            if await self.store.last_version(room_stream(event.room)) > 0:
                return written
            # The archiver moved the room between the check and the append: to the record.
            await self.store.expire(stream, 0)
        return await self._archived(stream, event, again=again)

    async def _append(self, stream: str, event: GameAnalysed, *, again: bool) -> bool:
        while True:
            version = await self.store.last_version(stream) if again else 0
            try:
                await self.store.append(stream, [encode(event)], expected_version=version)
                return True
            except WrongExpectedVersion:
                if not again:
                    return False  # another process wrote it first: it stands

    async def _archived(self, stream: str, event: GameAnalysed, *, again: bool) -> bool:
        if self.archive is None:
            return False  # no room: it expired with the store's retention
        record = await self.archive.get(event.room)
        if record is None:
            return False
        kept = record.analyses.get(stream, [])
        if kept and not again:
            return False
        analyses = {**record.analyses, stream: [*kept, encode(event)]}
        return await self.archive.put(
            replace(record, analyses=analyses), now_ms=self.clock.now_ms()
        )
