"""bench.fairplay: its quick run races a few simulated people and cheaters through the server,
has every game analysed and assessed, and reports the shares flagged. No figure is asserted:
two games an account say nothing; the figures are read by people."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # it starts a process

ROOT = Path(__file__).resolve().parents[2]


def test_the_quick_run_reports_the_shares_flagged(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    env["BENCH_RESULTS_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "bench.fairplay", "--quick"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads((tmp_path / "fairplay.json").read_text())
    assert report["quick"] is True
    assert 0 <= report["cheaters_flagged"] <= 1
    assert 0 <= report["people_flagged"] <= 1
    for kind in ("person", "cheater", "careful"):
        row = report["flagged"][f"{kind} at 2"]
        assert row["accounts"] >= 1
        assert 0 <= row["share"] <= 1
    assert "cheaters flagged" in done.stdout
