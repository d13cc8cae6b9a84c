"""bench.load's own judgement of a run: its goals against the fan-out ceiling and the notes that
say when its figures are the load generator's rather than the server's (the quick run in
test_quick.py covers the rest)."""

from __future__ import annotations

from math import inf
from typing import Any

from bench.goals import base_name, cores_at_goal, notes, targets
from bench.load import cpu_per_move_us, histogram_window, parse_histograms, worst_by_second


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
    run["fanout"] = {**run["echo"], "moves_per_s": 10_000.0}
    assert cores_at_goal(run) == (8_000.0, 8_000.0 * 880 / 1e6)
    (note,) = notes({"saturated": run})
    assert note.startswith("at the saturated goal (8,000 moves/s, saturated)")
    assert "would need 7.0 cores" in note


def side(moves: int, offered: float, cpu_us: float, p99: float) -> dict[str, Any]:
    return {
        "moves": moves,
        "offered_moves": offered,
        "errors": {},
        "cpu_per_move_us": {"server": cpu_us},
        "ack": {"p50_ms": 1.0, "p99_ms": p99},
        "load_process": {"cpu_percent_each": [30.0, 30.0], "loop_lag": {"p99_ms": 5.0}},
    }


def paced(echo_p50: float, echo_p99: float) -> dict[str, Any]:
    run = result(1.0, [36.0, 36.0], 6.0)
    run["scenario"].update(racers=1000, spectators=2000, spectator_rooms=100)
    run["server"].update(side(59_500, 60_000.0, 700.0, 30.0))
    run["fanout"] = side(60_000, 60_000.0, 600.0, 20.0)
    run["echo"]["ack"] = {"p50_ms": echo_p50, "p99_ms": echo_p99}
    return run


def test_paced_goals_are_ratios_to_the_fan_out_ceiling() -> None:
    checks = targets({"paced": paced(0.27, 1.07)})
    assert [check["met"] for check in checks] == [True, True, True]
    assert checks[0]["figure"] == "700 us = 1.17 x 600 us"
    assert checks[2]["figure"] == "59,500 of 60,000 (99.2 %), 0 errors"
    slow = paced(0.27, 1.07)
    slow["server"].update(side(50_000, 60_000.0, 800.0, 41.0))
    assert [check["met"] for check in targets({"paced": slow})] == [False, False, False]
    unmeasured = paced(0.27, 1.07)
    unmeasured["fanout"]["cpu_per_move_us"] = {"server": 0.0}  # no CPU tick in a short window
    (cpu, *_) = targets({"paced": unmeasured})
    assert cpu["met"] is None
    assert cpu["figure"] == "700 us against an unmeasured ceiling"


def test_the_ack_tail_against_a_disturbed_machine_is_not_judged() -> None:
    """Measured: an echo whose p99 was 6.63 ms against its p50 of 0.33 made a 27 ms ack p99
    look 'met' at 4.1 x; a quiet echo's p99 is 3.4-5.9 x its p50."""
    disturbed = {"paced": paced(0.33, 6.63)}
    assert [check["met"] for check in targets(disturbed)] == [True, None, True]
    (note,) = notes(disturbed)
    assert note.startswith("the echo's own tail was disturbed (paced: p99 6.63 ms, 20 x its p50)")


def test_saturated_and_workers_goals() -> None:
    saturated = result(0.0, [40.0, 40.0], 30.0)
    saturated["server"].update(moves_per_s=4_100.0, cpu_per_move_us={"server": 300.0})
    saturated["fanout"] = {"moves_per_s": 5_000.0}
    saturated["moves_vs_fanout"] = 0.82
    two = result(0.0, [40.0, 40.0], 30.0)
    two["server"].update(cpu_per_move_us={"server": 360.0})
    checks = targets({"saturated": saturated, "saturated-w2": two})
    assert [check["met"] for check in checks] == [True, False]
    assert checks[1]["figure"] == "360 vs 300 us = 1.20 x"
    assert base_name("paced-1000-w2") == ("paced-1000", 2)
    assert base_name("paced-1000") == ("paced-1000", 1)


def test_the_slowest_ack_of_each_second_is_by_when_its_move_was_sent() -> None:
    """A periodic stall shows as a few seconds far above the rest; a second with no ack is 0."""
    second = 1_000_000_000
    at = [0, second // 2, 2 * second + 1, 2 * second + 5]
    acks = [3_000_000, 9_000_000, 40_000_000, 1_000_000]
    assert worst_by_second(at, acks) == [9.0, 0.0, 40.0]
    assert worst_by_second([], []) == []
