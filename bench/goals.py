"""bench.load's reading of a run: its tables, its goals (ratios to the fan-out ceiling measured
in the same run, since absolute times drift on a shared machine) and the notes that say when a
figure is not the server's.

A result per scenario holds ``server`` and, when measured, ``fanout`` (bench/fanout.py: ack at
once, forward one encoded message to each other member, XADD before the ack) and ``echo``
(bench/echo.py: one frame back, a reference line and a witness of a quiet machine).
"""

from __future__ import annotations

import os
from typing import Any

SIDES = ("server", "fanout", "echo")

PACED_CPU = 1.25
"""Paced: the server's CPU per move at most this times the fan-out ceiling's."""
PACED_P99 = 2.0
"""Paced: the server's ack p99 at most this times the fan-out ceiling's."""
SERVED = 0.98
"""Paced: "every offered move served", less the window's edges (a move sent in its last
milliseconds is answered after it): answered moves over what the bots were due to send."""
SATURATED = 0.8
"""Saturated: the server's moves/s at least this times the fan-out ceiling's."""
WORKERS_CPU = 1.15
"""``--workers 2`` against ``--workers 1``, same load: total server CPU per move at most this."""

ECHO_TAIL = 10.0
"""A paced echo's ack p99 is usually 3.4-5.9 x its p50 (17 runs of 20 in one series, 8-10 x in
two); in the last (6.63 ms against 0.33) its own run was held up. Past this the machine was not
quiet, and the ack-tail goal of that run is not judged; a note says so."""

PACED_LOAD_LAG_MS = 20.0
"""A paced load process uses about a third of a core and its loop lags 5-10 ms; a p99 above
this means it was held up itself (the machine busy with something else), and the tail then
measured is partly its own."""


def sides(result: dict[str, Any]) -> list[str]:
    return [side for side in SIDES if side in result]


def served(figures: dict[str, Any]) -> float | None:
    """Answered moves over offered ones (paced runs only)."""
    offered = figures.get("offered_moves") or 0.0
    return figures["moves"] / offered if offered else None


def base_name(key: str) -> tuple[str, int]:
    """A results key (``paced``, ``paced-1000``, ``saturated-w2``...) as (key without the
    workers suffix, workers)."""
    name, _, workers = key.rpartition("-w")
    if name and workers.isdigit():
        return name, int(workers)
    return key, 1


def targets(results: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The goals against the fan-out ceiling (CPU per move, ack tail, moves served, saturated
    rate, a second worker's cost) for every scenario measured beside it; a goal whose figures
    are missing is not listed."""
    checks: list[dict[str, Any]] = []
    for key, r in results.items():
        sc = r["scenario"]
        ceiling = r.get("fanout")
        if ceiling is None or base_name(key)[1] != 1:
            continue
        a = r["server"]
        if sc["rate"]:
            where = f"{key}: {sc['racers']} racers at {sc['rate']:g}/s"
            mine = a["cpu_per_move_us"].get("server", 0.0)
            theirs = ceiling["cpu_per_move_us"].get("server", 0.0)
            # No CPU time seen (a quick run's window is shorter than the clock's tick): n/a.
            figure = (
                f"{mine:,.0f} us = {mine / theirs:.2f} x {theirs:,.0f} us"
                if theirs
                else f"{mine:,.0f} us against an unmeasured ceiling"
            )
            checks.append({"target": f"paced CPU per move <= {PACED_CPU:g} x fan-out's ({where})",
                           "figure": figure,
                           "met": mine <= PACED_CPU * theirs if theirs else None})  # fmt: skip
            p99, their_p99 = a["ack"]["p99_ms"], ceiling["ack"]["p99_ms"]
            quiet = "echo" not in r or not echo_disturbed(r["echo"]["ack"])
            checks.append({"target": f"paced ack p99 <= {PACED_P99:g} x fan-out's ({where})",
                           "figure": f"{p99:.2f} ms = {p99 / max(their_p99, 0.001):.1f} x "
                                     f"{their_p99:.2f} ms",
                           "met": p99 <= PACED_P99 * their_p99 if quiet else None})  # fmt: skip
            share = served(a)
            if share is not None:
                errors = sum(a["errors"].values())
                checks.append({"target": f"paced: every offered move served ({where})",
                               "figure": f"{a['moves']:,} of {a['offered_moves']:,.0f} "
                                         f"({100 * share:.1f} %), {errors} errors",
                               "met": share >= SERVED and not errors})  # fmt: skip
        else:
            ratio = r["moves_vs_fanout"]
            checks.append({"target": f"saturated moves/s >= {SATURATED:g} x fan-out's ({key})",
                           "figure": f"{a['moves_per_s']:,.0f} vs {ceiling['moves_per_s']:,.0f}"
                                     f" = {ratio:.2f} x",
                           "met": ratio >= SATURATED})  # fmt: skip
    for key, r in results.items():
        name, workers = base_name(key)
        one = results.get(name)
        if workers == 1 or one is None:
            continue
        mine = r["server"]["cpu_per_move_us"].get("server", 0.0)
        theirs = one["server"]["cpu_per_move_us"].get("server", 0.0)
        if theirs:
            checks.append({"target": f"{name}: --workers {workers} CPU per move <= "
                                     f"{WORKERS_CPU:g} x --workers 1",
                           "figure": f"{mine:,.0f} vs {theirs:,.0f} us = {mine / theirs:.2f} x",
                           "met": mine <= WORKERS_CPU * theirs})  # fmt: skip
    return checks


def echo_disturbed(ack: dict[str, float]) -> bool:
    """Whether the echo's own tail says its run was held up (``ECHO_TAIL``)."""
    return ack["p99_ms"] > ECHO_TAIL * ack["p50_ms"]


def cores_at_goal(result: dict[str, Any], goal: float = SATURATED) -> tuple[float, float]:
    """The moves/s the saturated goal asks of this run, and the cores its per-move CPU
    (server, load processes and Redis) would need at that rate."""
    wanted = goal * result["fanout"]["moves_per_s"]
    per_move = sum(result["server"]["cpu_per_move_us"].values())
    return wanted, wanted * per_move / 1e6


def notes(results: dict[str, dict[str, Any]]) -> list[str]:
    """What makes a run's figures the load generator's or the machine's, not the server's."""
    found = []
    for name, r in results.items():
        paced = bool(r["scenario"]["rate"])
        if not paced and "fanout" in r and r["server"].get("cpu_per_move_us"):
            wanted, cores = cores_at_goal(r)
            have = os.cpu_count() or 1
            if cores > have:
                found.append(
                    f"at the saturated goal ({wanted:,.0f} moves/s, {name}) this run's CPU per "
                    f"move (server, load processes and Redis) would need {cores:.1f} cores; "
                    f"this machine has {have}"
                )
        ack = r.get("echo", {}).get("ack")
        if paced and ack and echo_disturbed(ack):
            times = ack["p99_ms"] / max(ack["p50_ms"], 0.001)
            found.append(
                f"the echo's own tail was disturbed ({name}: p99 {ack['p99_ms']:.2f} ms, "
                f"{times:.0f} x its p50): the machine was not quiet, the ack-tail goal is not "
                "judged (n/a); run again"
            )
        for side in sides(r):
            load = r[side]["load_process"]
            if max(load["cpu_percent_each"]) >= 90:
                found.append(
                    f"a load process was saturated ({side}, {name}): its figures "
                    f"are the load generator's limit, not the {side}'s"
                )
            lag = load["loop_lag"]["p99_ms"]
            if paced and lag > PACED_LOAD_LAG_MS:
                found.append(
                    f"the load processes' own loops lagged ({side}, {name}: p99 {lag:.1f} ms, "
                    f"over {PACED_LOAD_LAG_MS:g}): the machine was not quiet, and this run's "
                    "tail is partly theirs; run it again"
                )
    return found


def print_scenario(result: dict[str, Any]) -> None:
    sc, a = result["scenario"], result["server"]
    columns = sides(result)
    rate = f"{sc['rate']:g}/s each" if sc["rate"] else "as fast as answered"
    print(
        f"{sc['name']}: {sc['racers']} racers in rooms of {sc['room_size']} ({rate}), "
        f"{sc['spectators']} spectators on {sc['spectator_rooms']} rooms, {sc['seconds']:g} s"
    )
    if "fanout" in columns and result.get("ceiling_append", "pool") != "pool":
        print("(the fan-out ceiling appends as the server does: --ceiling-append line)")
    header = f"{'':<32}" + "".join(f"{side:>12}" for side in columns)
    print(header)
    print("-" * len(header))

    def row(label: str, cells: list[str]) -> None:
        print(f"{label:<32}" + "".join(f"{cell:>12}" for cell in cells))

    def each(figure: Any) -> list[str]:
        return [figure(result[side]) for side in columns]

    row("moves/s (acks, echoes)", each(lambda f: f"{f['moves_per_s']:,.0f}"))
    if sc["rate"]:
        row("  served of offered %", each(lambda f: f"{100 * (served(f) or 0):.1f}"))
    row("  server / this", each(lambda f: f"{a['moves_per_s'] / max(f['moves_per_s'], 1):.2f}"))
    row("frames received/s", each(lambda f: f"{f['frames_received_per_s']:,.0f}"))
    row("  of them by racers", each(lambda f: f"{f.get('racer_frames_per_s', 0):,.0f}"))
    for q in ("p50", "p95", "p99"):
        row(f"ack (round trip) {q} ms", each(lambda f, q=q: f"{f['ack'][f'{q}_ms']:.2f}"))
    for q in ("p50", "p99"):
        row(f"spectator lag from send {q} ms", each(lambda f, q=q: _lag(f, q)))
    row("server CPU %", each(lambda f: f"{f['server_process']['cpu_percent']:.0f}"))
    row("redis-server CPU %", each(lambda f: f"{f['redis_cpu_percent']:.0f}"))
    row("server peak RSS MiB", each(lambda f: f"{f['server_process']['peak_rss_mib']:.0f}"))
    processes = a["load_process"]["processes"]
    row(f"load CPU % ({processes} processes)", each(_load_cpu))
    row("load loop lag p99 ms", each(lambda f: f"{f['load_process']['loop_lag']['p99_ms']:.1f}"))
    for who in ("server", "load", "redis"):
        row(f"CPU us per move: {who}", each(lambda f, who=who: _per_move(f, who)))
    hist = a.get("server_histograms", {})
    for label, key in (("server's own ack", "ack"), ("  of it store append", "store_append")):
        if key in hist:
            h = hist[key]
            row(f"{label} p50/p99 ms", [f"<={_ms(h['p50_le_ms'])} / <={_ms(h['p99_le_ms'])}"])
    for gen, name in (("0", "young"), ("1", "middle"), ("2", "full")):
        h = hist.get(f"gc_pause{gen}")
        if h and h["n"]:
            per_s = h["n"] / a["window_seconds"]
            row(f"server gc {name}/s, max ms", [f"{per_s:,.1f}, <={_ms(h['max_le_ms'])}"])
    row("errors", each(lambda f: str(sum(f["errors"].values()) + sum(f["rejects"].values()))))
    for side in columns:
        if result[side]["errors"] or result[side]["rejects"]:
            print(f"  {side}: {result[side]['errors']} {result[side]['rejects']}")
    print(f"  setup {a['setup_seconds']} s for {a['connections']} connections")
    for side in columns:
        worst = result[side].get("ack_worst_by_second")
        if worst:
            print(f"  {side} slowest ack per second, ms: {' '.join(f'{w:.0f}' for w in worst)}")
    print()


def print_curve(results: dict[str, dict[str, Any]]) -> None:
    """The sweep: per paced load, the server's CPU per move, moves served and ack p99 beside
    the fan-out ceiling's, so a reader sees where the knee is and how the cost grows."""
    points = [r for key, r in results.items() if r["scenario"]["rate"] and "fanout" in r]
    if not points:
        return
    print("cost curve (paced; server | fan-out ceiling)")
    header = (f"{'racers':>7}{'specs':>7}  {'CPU us/move':>15}{'x':>6}  {'served %':>13}"
              f"  {'ack p99 ms':>17}  {'redis us/move':>13}  {'load':>5}")  # fmt: skip
    print(header)
    print("-" * len(header))
    for r in sorted(points, key=lambda r: r["scenario"]["racers"]):
        sc, a, c = r["scenario"], r["server"], r["fanout"]
        cpu_a = a["cpu_per_move_us"].get("server", 0.0)
        cpu_c = c["cpu_per_move_us"].get("server", 0.0)
        redis_a = a["cpu_per_move_us"].get("redis", 0.0)
        redis_c = c["cpu_per_move_us"].get("redis", 0.0)
        print(
            f"{sc['racers']:>7}{sc['spectators']:>7}  {cpu_a:>7,.0f} |{cpu_c:>6,.0f}"
            f"{cpu_a / max(cpu_c, 1):>6.2f}  {100 * (served(a) or 0):>5.1f} |"
            f"{100 * (served(c) or 0):>6.1f}  {a['ack']['p99_ms']:>8.1f} |"
            f"{c['ack']['p99_ms']:>7.1f}  {redis_a:>5,.0f} |{redis_c:>5,.0f}"
            f"  {r.get('load_average', 0.0):>5.2f}"
        )
    print()


def _lag(figures: dict[str, Any], q: str) -> str:
    lag = figures["spectator_lag_from_send"]
    return f"{lag[f'{q}_ms']:.2f}" if lag["n"] else "-"


def _load_cpu(figures: dict[str, Any]) -> str:
    return "+".join(f"{c:.0f}" for c in figures["load_process"]["cpu_percent_each"])


def _per_move(figures: dict[str, Any], who: str) -> str:
    return f"{figures.get('cpu_per_move_us', {}).get(who, 0):,.0f}"


def _ms(bound: float | None) -> str:
    return "-" if bound is None else f"{bound:g}"
