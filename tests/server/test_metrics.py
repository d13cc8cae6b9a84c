"""GET /metrics on a real server: what happened shows in the Prometheus text, per worker too."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from server.runtime.metrics import LATENCY_BUCKETS, Metrics
from shared import deal_deck, new_game
from tests.server.wsclient import Client, greedy_moves
from tests.support.ports import free_port_run
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

FAST = ["--rate", "1000", "--burst", "1000"]


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
        assert answer.headers["Content-Type"].startswith("text/plain")
        text = answer.read().decode()
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


@pytest.mark.e2e
async def test_moves_rejects_latency_and_live_state_are_reported(tmp_path: Path) -> None:
    server = ServerProcess(log_path=tmp_path / "server.log", extra_args=FAST)
    server.start()
    seed = "metrics"
    moves = greedy_moves(new_game("quadrennial", deck=deal_deck("quadrennial", seed)))[:5]
    ann = await Client(server.url, "ann").open()
    eye = await Client(server.url, "eye").open()
    try:
        await ann.hello()
        await eye.hello()
        await ann.send(
            {"type": "create_room", "variant": "quadrennial", "seed": seed, "countdown_ms": 0}
        )
        room = (await ann.expect("room"))["room"]["id"]
        await ann.send({"type": "join", "room": room})
        await ann.expect("joined")
        await eye.send({"type": "join", "room": room, "role": "spectator"})
        await eye.expect("joined")
        await ann.send({"type": "start"})
        await ann.expect("started")
        for move in moves:
            assert (await ann.move(move))["type"] == "ack"
        assert (await ann.move("r1r2"))["code"] == "illegal_move"
        await ann.send({"type": "join", "room": "nosuchroom"})
        await ann.expect("error")
        await asyncio.sleep(0.2)
        found = await asyncio.to_thread(scrape, server.port)
        assert found[("arena_moves_total", (("outcome", "accepted"),))] == len(moves)
        assert found[("arena_moves_total", (("outcome", "illegal_move"),))] == 1
        assert found[("arena_ack_seconds_count", ())] == len(moves) + 1
        assert found[("arena_store_append_seconds_count", ())] >= len(moves)
        assert found[("arena_errors_total", (("code", "already_in_room"),))] == 1
        assert found[("arena_rooms_live", ())] == 1
        assert found[("arena_games_live", ())] == 1
        assert found[("arena_connections", ())] == 2
        assert found[("arena_frames_fanned_out_total", ())] > 0
        assert ("arena_hub_wakeups_total", ()) in found
        assert found[("arena_slow_consumers_dropped_total", ())] == 0
        # --gc-interval-ms (10 by default): young collections, each one timed.
        assert found[("arena_gc_pause_seconds_count", (("generation", "0"),))] > 0
    finally:
        await asyncio.gather(ann.close(), eye.close())
        server.stop()


async def test_each_worker_is_scraped_on_its_own_metrics_port(
    fresh_redis: RedisServer, tmp_path: Path
) -> None:
    base = free_port_run(2)
    server = ServerProcess(
        redis_url=fresh_redis.url,
        log_path=tmp_path / "server.log",
        extra_args=[*FAST, "--workers", "2", "--metrics-port", str(base)],
    )
    server.start()
    try:
        for port in (base, base + 1):
            found = {}
            for _ in range(100):
                try:
                    found = await asyncio.to_thread(scrape, port)
                    break
                except OSError:
                    await asyncio.sleep(0.1)
            assert ("arena_connections", ()) in found, f"worker on :{port} never answered"
    finally:
        assert server.stop() == 0


async def test_an_ended_room_is_unloaded_and_a_late_spectator_still_sees_it(
    fresh_redis: RedisServer, tmp_path: Path
) -> None:
    """On a real server and Redis, with --unload-after-s 1: the finished room leaves memory
    (rooms_loaded 0, rooms_unloaded 1), and a spectator who comes later gets its end."""
    server = ServerProcess(
        redis_url=fresh_redis.url,
        log_path=tmp_path / "server.log",
        extra_args=[*FAST, "--unload-after-s", "1"],
    )
    server.start()
    ann = await Client(server.url, "ann").open()
    late: Client | None = None
    try:
        await ann.hello()
        await ann.send(
            {"type": "create_room", "variant": "quadrennial", "seed": "gone", "countdown_ms": 0}
        )
        room = (await ann.expect("room"))["room"]["id"]
        await ann.send({"type": "join", "room": room})
        await ann.expect("joined")
        await ann.send({"type": "start"})
        await ann.expect("started")
        await ann.send({"type": "resign"})
        ended = await ann.expect("finished")
        await ann.close()
        found: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
        for _ in range(100):
            found = await asyncio.to_thread(scrape, server.port)
            if found[("arena_rooms_unloaded_total", ())] == 1:
                break
            await asyncio.sleep(0.1)
        assert found[("arena_rooms_unloaded_total", ())] == 1
        assert found[("arena_rooms_loaded", ())] == 0
        late = await Client(server.url, "late").open()
        await late.hello()
        await late.send({"type": "watch", "room": room})
        again = await late.expect("finished")
        assert again["ranking"] == ended["ranking"]
        assert (await asyncio.to_thread(scrape, server.port))[("arena_rooms_loaded", ())] == 1
    finally:
        await ann.close()
        if late is not None:
            await late.close()
        server.stop()


@given(st.lists(st.floats(min_value=0, max_value=20, allow_nan=False), max_size=30))
def test_plain_timings_report_what_a_prometheus_histogram_would(values: list[float]) -> None:
    """The per-move histograms are plain counts read at scrape time: the text is the same as
    prometheus-client's own Histogram fed the same values (but its ``_created`` line)."""
    registry = CollectorRegistry()
    reference = Histogram("arena_ack_seconds", "x", buckets=LATENCY_BUCKETS, registry=registry)
    metrics = Metrics()
    for value in values:
        reference.observe(value)
        metrics.ack_seconds.observe(value)
    expected = [
        line
        for line in generate_latest(registry).decode().splitlines()
        if line.startswith("arena_ack_seconds") and "_created" not in line
    ]
    found = [
        line
        for line in metrics.render().decode().splitlines()
        if line.startswith("arena_ack_seconds")
    ]
    assert found == expected
