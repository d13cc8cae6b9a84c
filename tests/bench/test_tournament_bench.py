"""CI smoke test of ``python -m bench.tournament --quick``: it runs against the current server
and writes every figure. No timing is asserted: the figures are read by people."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # it starts a redis-server and a server

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.long
def test_the_tournament_bench_runs_and_reports_every_figure(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["ARENA_ANALYSIS_MAX_NODES"] = "0"  # a smoke run: no game analysed beside it
    env["BENCH_RESULTS_DIR"] = str(tmp_path)
    env["BENCH_LOG_DIR"] = str(tmp_path)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.tournament",
            "--quick",
            "--clients",
            "16",
            "--seconds",
            "15",
            "--quick-race-seconds",
            "6",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, f"bench.tournament failed:\n{done.stdout}\n{done.stderr}"
    report = json.loads((tmp_path / "tournament.json").read_text())
    assert report["machine"]["cores"] == os.cpu_count()
    (result,) = report["runs"].values()
    assert result["clients"] == 16
    tour = result["tournament"]
    assert tour["races"] >= 8  # every client raced
    assert result["quick"]["races"] > 0
    assert tour["standings_lag"]["n"] > 0
    # Every move is chosen from a board its last move's answer was folded into: none refused.
    for part in (tour, result["quick"]):
        assert not [e for e in part["errors"] if e.startswith("reject")], part["errors"]
    assert tour["server_process"]["cpu_seconds"] >= 0
    assert [t["target"].split(" (")[0] for t in result["targets"]] == [
        "pairing wait p99 <= documented wait + 1 s",
        "standings lag p99 <= 2 s",
        "server CPU per race <= 1.1 x quick races'",
    ]
    assert all(isinstance(t["met"], bool) for t in result["targets"])
