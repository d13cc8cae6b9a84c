"""bench.bots: its quick run writes every level's row for both variants and the server's CPU
per bot move beside its ceiling; the docs table is built from such a report. No timing is
asserted: the figures are read by people."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.bots import docs_table
from server.bots.domain.player import LEVELS
from shared.variants import VARIANTS

pytestmark = pytest.mark.e2e  # it starts a process

ROOT = Path(__file__).resolve().parents[2]


def test_the_quick_run_reports_each_level_and_the_servers_cost(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["ARENA_ANALYSIS_MAX_NODES"] = "0"  # a smoke run: no game analysed beside it
    env["BENCH_RESULTS_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "bench.bots", "--quick", "--workers", "1"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "bots.json").read_text())
    assert report["quick"] is True
    for variant in VARIANTS:
        rows = report["levels"][variant]
        assert sorted(rows) == [str(n) for n in sorted(LEVELS)]
        for row in rows.values():
            assert row["deals"] == report["deals"]
            assert 0 <= row["wins"] <= row["deals"]
            assert row["mean_moves"] > 0
            assert row["mean_game_s"] > 0
    server = report["server"]
    assert server["bot_moves"] > 0
    assert server["cpu_us_per_bot_move"] > 0
    assert server["ceiling_cpu_us_per_person_move"] > 0
    table = docs_table(report["levels"])
    assert table.count("\n") == 1 + len(VARIANTS) * len(LEVELS)
