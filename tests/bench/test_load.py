"""bench.load's own judgement of a run: the notes that say when its figures are the load
generator's rather than the server's (the quick run in test_quick.py covers the rest)."""

from __future__ import annotations

from typing import Any

from bench.load import notes


def result(rate: float, cpu: list[float], lag_p99: float) -> dict[str, Any]:
    side = {"load_process": {"cpu_percent_each": cpu, "loop_lag": {"p99_ms": lag_p99}}}
    quiet = {"load_process": {"cpu_percent_each": [10.0, 10.0], "loop_lag": {"p99_ms": 1.1}}}
    return {"scenario": {"rate": rate}, "server": side, "echo": quiet}


def test_a_quiet_paced_run_has_no_note() -> None:
    assert notes({"paced": result(1.0, [36.0, 35.0], 6.3)}) == []


def test_a_paced_run_whose_load_loops_lagged_says_so() -> None:
    (note,) = notes({"paced": result(1.0, [33.0, 34.0], 43.9)})
    assert "lagged (server, paced: p99 43.9 ms" in note


def test_a_saturated_run_lags_by_design_but_a_saturated_load_process_is_named() -> None:
    assert notes({"saturated": result(0.0, [52.0, 53.0], 56.0)}) == []
    (note,) = notes({"saturated": result(0.0, [95.0, 53.0], 56.0)})
    assert note.startswith("a load process was saturated (server, saturated)")
