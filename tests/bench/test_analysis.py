"""bench.analysis: its quick run analyses a game of each kind of player in both variants and
writes its report. No figure is asserted: the figures are read by people."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.analysis import KINDS
from shared.variants import VARIANTS

pytestmark = pytest.mark.e2e  # it starts a process

ROOT = Path(__file__).resolve().parents[2]


def test_the_quick_run_writes_its_report(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["BENCH_RESULTS_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "bench.analysis", "--quick", "--workers", "2"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "analysis.json").read_text())
    assert report["quick"] is True
    assert "written to" in done.stdout
    for variant in VARIANTS:
        rows = report["variants"][variant]
        assert sorted(rows) == sorted(["all", *KINDS])
        for row in rows.values():
            assert row["games"] >= 1
            assert set(row["cpu_s_per_game"]) == {"p50", "p99", "max"}
            assert set(row["cpu_ms_per_move"]) == {"p50", "p99"}
            assert 0 <= row["settled_share"] <= 1
            assert row["wrong_lines"] == 0
