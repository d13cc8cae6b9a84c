"""The analyses kept (server/analysis/services/book.py), on every store backend: written once
in a stream in the room's hash tag, read back, added to by a rebuild, and moved into the
archived record when the room has left the store."""

from __future__ import annotations

from pathlib import Path

from server.analysis.domain.events import GameAnalysed, analysis_stream
from server.analysis.services.book import AnalysisBook
from server.archive import ArchivedRoom, SqliteArchive
from server.race.domain.model import room_stream
from server.runtime.clock import FakeClock
from server.store.base import stream_group
from shared import new_game
from shared.solver.analysis import analyse
from tests.server.store.conftest import Backend, backend  # noqa: F401  (the fixture)


def analysed(room: str, player: str = "p1", budget: int = 2_000) -> GameAnalysed:
    start = new_game("quadrennial", seed=7)
    analysis = analyse(start, ["d", "d", "d"], max_nodes=budget)
    return GameAnalysed.of(analysis, at=5, room=room, player=player, variant="quadrennial")


async def test_an_analysis_is_written_once_and_read_back(backend: Backend) -> None:  # noqa: F811
    store = backend.store
    book = AnalysisBook(store, None, FakeClock())
    await store.append(room_stream("r1"), [{"type": "room_created", "v": 1}], expected_version=0)
    assert await book.read("r1", "p1") is None
    first = analysed("r1")
    assert await book.write(first)
    assert not await book.write(analysed("r1", budget=3_000))  # written once
    assert await book.read("r1", "p1") == first
    rebuilt = analysed("r1", budget=4_000)
    assert await book.write(rebuilt, again=True)  # a rebuild adds, the latest is read
    assert await book.read("r1", "p1") == rebuilt
    assert await store.last_version(analysis_stream("r1", "p1")) == 2
    # In the room's hash tag: a Redis Cluster keeps it in the room's slot.
    assert stream_group(analysis_stream("r1", "p1")) == stream_group(room_stream("r1"))


async def test_an_archived_room_keeps_its_analysis_in_its_record(
    backend: Backend,  # noqa: F811
    tmp_path: Path,
) -> None:
    archive = SqliteArchive(tmp_path / "archive.sqlite3")
    try:
        book = AnalysisBook(backend.store, archive, FakeClock())
        assert not await book.write(analysed("r2"))  # no room anywhere: nothing to keep
        record = ArchivedRoom("r2", 10, {"id": "r2"}, [{"type": "room_created", "v": 1}])
        await archive.put(record, now_ms=11)
        first = analysed("r2")
        assert await book.write(first)
        assert await backend.store.last_version(analysis_stream("r2", "p1")) == 0
        kept = await archive.get("r2")
        assert kept is not None
        assert list(kept.analyses) == [analysis_stream("r2", "p1")]
        assert await book.read("r2", "p1") == first
        assert not await book.write(analysed("r2", budget=3_000))
        assert await book.read("r2", "p1") == first
    finally:
        await archive.aclose()
