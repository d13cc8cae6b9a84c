"""CI smoke test of ``python -m bench.storm``: a small storm of each kind runs against the
current server and the bare one, and every figure is written. No timing is asserted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # it starts a redis-server, a server and a bare server

ROOT = Path(__file__).resolve().parents[2]


def test_the_storm_bench_runs_and_reports_every_figure(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["ARENA_ANALYSIS_MAX_NODES"] = "0"  # a smoke run: no game analysed beside it
    env["BENCH_RESULTS_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "bench.storm", "--connections", "40", "--resume", "12",
         "--seconds", "0.5", "--clients", "1"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    assert done.returncode == 0, f"bench.storm failed:\n{done.stdout}\n{done.stderr}"
    report = json.loads((tmp_path / "storm.json").read_text())
    assert report["machine"]["cores"] == os.cpu_count()
    assert report["bare"]["connections"] == 40
    for storm, count in (("spectators", 40), ("resume", 12)):
        result = report[storm]
        assert result["connections"] == count
        assert result["in"] + result["lost_kinds"].get("refused", 0) <= count
        assert set(result["handshake_ms"]) >= {"p50_ms", "p99_ms"}
        assert isinstance(result["met"], bool)
