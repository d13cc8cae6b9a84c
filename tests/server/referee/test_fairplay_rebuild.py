"""`solitaire-server fairplay --rebuild` on the embedded store: the flagged index is a projection
of the accounts' assessed streams, folded again from them when it was lost."""

from __future__ import annotations

from pathlib import Path

from server.__main__ import rebuild_fairplay
from server.referee.domain.events import FLAGGED_INDEX
from server.referee.services.assessor import Assessor
from server.runtime.clock import FakeClock
from server.runtime.config import parse_config
from server.store import SqliteEventStore
from tests.server.referee.services.test_assessor import flat


async def test_the_rebuild_folds_the_flagged_index_again(tmp_path: Path) -> None:
    data = tmp_path / "data"
    store = SqliteEventStore(data)
    try:
        assessor = Assessor(store, None, FakeClock(), {})
        for i in range(6):
            await assessor.write(flat(i))
        await store.index_remove(FLAGGED_INDEX, "cal")
    finally:
        await store.aclose()
    assert await rebuild_fairplay(parse_config(["--data-dir", str(data)]), []) == (0, 1)
    store = SqliteEventStore(data)
    try:
        assert [e.member for e in await store.index_range(FLAGGED_INDEX)] == ["cal"]
    finally:
        await store.aclose()
