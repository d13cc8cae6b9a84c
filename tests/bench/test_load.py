"""bench.load's own judgement of a run: the notes that say when its figures are the load
generator's rather than the server's (the quick run in test_quick.py covers the rest)."""

from __future__ import annotations

from math import inf
from typing import Any

from bench.load import (
    cores_at_goal,
    cpu_per_move_us,
    histogram_window,
    notes,
    parse_histograms,
    targets,
)


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


SCRAPE = """\
# HELP arena_ack_seconds From a move's frame read to its answer queued.
# TYPE arena_ack_seconds histogram
arena_ack_seconds_bucket{le="0.001"} %d
arena_ack_seconds_bucket{le="0.002"} %d
arena_ack_seconds_bucket{le="0.01"} %d
arena_ack_seconds_bucket{le="+Inf"} %d
arena_ack_seconds_count %d
arena_ack_seconds_sum 1.0
# HELP arena_gc_pause_seconds Pauses.
# TYPE arena_gc_pause_seconds histogram
arena_gc_pause_seconds_bucket{generation="1",le="0.001"} 3.0
arena_gc_pause_seconds_bucket{generation="1",le="+Inf"} 3.0
arena_gc_pause_seconds_count{generation="1"} 3.0
arena_gc_pause_seconds_sum{generation="1"} 0.001
# HELP arena_moves_total Moves.
# TYPE arena_moves_total counter
arena_moves_total{outcome="accepted"} 7.0
"""


def scrape(*cumulative: int) -> str:
    return SCRAPE % (*cumulative, cumulative[-1])


def test_the_servers_histograms_are_read_over_the_window_only() -> None:
    before = parse_histograms(scrape(10, 10, 10, 10))
    after = parse_histograms(scrape(60, 108, 109, 110))  # 100 in the window: 50, 48, 1, 1
    window = histogram_window(before, after)
    assert window["ack"] == {"n": 100, "p50_le_ms": 1.0, "p99_le_ms": 10.0, "max_le_ms": inf}
    assert window["gc_pause1"]["n"] == 0
    assert window["gc_pause1"]["p99_le_ms"] is None  # nothing observed: no quantile
    assert ("arena_moves_total", "") not in after


def test_cpu_per_move_and_the_cores_the_saturated_goal_would_need() -> None:
    server = {
        "moves_per_s": 2_000.0,
        "server_process": {"cpu_percent": 90.0},
        "load_process": {"cpu_percent": 80.0},
        "redis_cpu_percent": 6.0,
    }
    per_move = cpu_per_move_us(server)
    assert per_move == {"server": 450.0, "load": 400.0, "redis": 30.0}
    run = result(0.0, [40.0, 40.0], 50.0)
    run["server"]["cpu_per_move_us"] = per_move
    run["echo"]["moves_per_s"] = 16_000.0
    assert cores_at_goal(run) == (8_000.0, 8_000.0 * 880 / 1e6)
    (note,) = notes({"saturated": run})
    assert note.startswith("at the saturated goal (8,000 moves/s)")
    assert "would need 7.0 cores" in note


def paced(echo_p50: float, echo_p99: float) -> dict[str, Any]:
    run = result(1.0, [36.0, 36.0], 6.0)
    run["scenario"].update(racers=1000, spectators=2000, spectator_rooms=100)
    run["server"]["ack"] = {"p50_ms": 5.3, "p99_ms": 27.3}
    run["server"]["spectator_lag_from_send"] = {"p99_ms": 54.7}
    run["echo"]["ack"] = {"p50_ms": echo_p50, "p99_ms": echo_p99}
    return run


def test_goals_against_a_disturbed_echo_are_not_judged() -> None:
    """Measured: an echo whose p99 was 6.63 ms against its p50 of 0.33 made a 27 ms ack p99
    look 'met' at 4.1 x; a quiet echo's p99 is 3.4-5.9 x its p50."""
    quiet = targets({"paced": paced(0.27, 1.07)}, tick_ms=50)
    assert [check["met"] for check in quiet] == [False, True]
    disturbed = {"paced": paced(0.33, 6.63)}
    assert [check["met"] for check in targets(disturbed, tick_ms=50)] == [None, None]
    (note,) = notes(disturbed)
    assert note.startswith("the echo's own tail was disturbed (paced: p99 6.63 ms, 20 x its p50)")
