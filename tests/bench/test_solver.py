"""bench.solver: the Wilson interval, and a run that resumes from its per-seed journal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.solver import census_of, journal, run_variant, wilson


def test_wilson_interval_matches_known_values() -> None:
    """Wilson score interval, z = 1.96: 50 of 100 gives 0.4038..0.5962."""
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4)
    assert high == pytest.approx(0.5962, abs=1e-4)
    assert wilson(0, 10)[0] == 0.0
    assert wilson(10, 10)[1] == pytest.approx(1.0)


def test_a_run_resumes_where_the_journal_stops(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BENCH_RESULTS_DIR", str(tmp_path))
    first = run_variant("quadrennial", 3, 500, 1)
    assert first["solved_this_run"] == 3
    lines = journal("quadrennial", 500).read_text().splitlines()
    assert [json.loads(line)["seed"] for line in lines] == [1, 2, 3]
    more = run_variant("quadrennial", 5, 500, 1)
    assert more["solved_this_run"] == 2
    assert [d["seed"] for d in more["deals"]] == [1, 2, 3, 4, 5]
    assert more["deals"][:3] == first["deals"]
    assert run_variant("quadrennial", 5, 500, 1, fresh=True)["solved_this_run"] == 5


def test_census_of_counts_each_seed_within_its_budget() -> None:
    """bench.solver --census: one entry per Swiss seed, cut at the position budget."""
    report = census_of(2, 300)
    assert report["max_positions"] == 300
    assert [d["seed"] for d in report["deals"]] == [1, 2]
    for deal in report["deals"]:
        assert deal["positions"] <= 300
        assert 1 <= deal["components"] <= deal["positions"]
        assert deal["largest"] <= deal["positions"]
