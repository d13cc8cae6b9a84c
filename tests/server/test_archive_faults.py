"""The link between the server and the PostgreSQL archive partitions while a finished race
waits to be archived: archiving fails and is retried, nothing leaves Redis before the archive
holds it, and once the link is back the race is archived and served from there."""

from __future__ import annotations

import asyncio
import random
import time
import uuid
from pathlib import Path

import pytest
import redis

from tests.server.test_archive_readers import metric
from tests.server.test_store_faults import solo
from tests.support.ports import free_port
from tests.support.postgres_server import PostgresServer
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.e2e  # a real server, Redis and PostgreSQL, a real proxy between


async def wait_metric(port: int, name: str, at_least: float) -> None:
    deadline = time.monotonic() + 60
    while await asyncio.to_thread(metric, port, name) < at_least:
        assert time.monotonic() < deadline, f"{name} never reached {at_least}"
        await asyncio.sleep(0.1)


async def test_a_partitioned_archive_loses_nothing_and_archives_once_back(
    redis_server: RedisServer, postgres_server: PostgresServer, tmp_path: Path
) -> None:
    database = postgres_server.create_database()
    name = database.rsplit("/", 1)[1]
    prefix = f"pa{uuid.uuid4().hex[:6]}:"
    metrics_port = free_port()
    with TcpProxy(postgres_server.port) as proxy:
        archive_url = database.replace(f":{postgres_server.port}/", f":{proxy.port}/")
        server = ServerProcess(
            redis_url=redis_server.url,
            log_path=tmp_path / "server.log",
            extra_args=[
                "--redis-prefix", prefix, "--archive-url", archive_url,
                "--archive-after-s", "0", "--archive-sweep-s", "0.5",
                "--metrics-port", str(metrics_port),
            ],
        )  # fmt: skip
        server.start()
        keys = redis.Redis.from_url(redis_server.url)
        try:
            await asyncio.to_thread(proxy.partition)
            racer = await solo(server.url, seed=3)
            await racer.play(random.Random(3))
            await racer.client.send({"type": "resign"})
            await racer.client.expect("finished")
            await racer.client.close()
            await wait_metric(metrics_port, "arena_archive_failures_total", 1)
            assert keys.keys(f"{prefix}{{{racer.room}}}*"), "deleted before it was archived"
            assert await asyncio.to_thread(metric, metrics_port, "arena_archive_waiting") >= 1

            await asyncio.to_thread(proxy.heal)
            await wait_metric(metrics_port, "arena_rooms_archived_total", 1)
            assert not keys.keys(f"{prefix}{{{racer.room}}}*")
            held = postgres_server.psql(
                f"SELECT count(*) FROM archived_rooms WHERE room_id = '{racer.room}'",
                database=name,
            )
            assert held.strip() == "1"
        finally:
            keys.close()
            server.stop()
