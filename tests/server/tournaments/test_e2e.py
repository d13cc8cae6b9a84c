"""Tournaments end to end: scripted racers on real servers over a real Redis (and a Redis
Cluster), paired again and again until the end; one of two processes killed mid-way. The
stream is the truth: every race paired is scored, nobody is in two races at once, and the
standings the racers were sent are the fold of the stream; once archived, the tournament leaves
no key in the store (its stream, its lease, its presence)."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from server.archive.sqlite import SqliteArchive
from server.runtime.clock import SystemClock
from server.store import RedisEventStore
from server.tournaments.domain.events import RacePaired, RaceScored, decode, tournament_stream
from server.tournaments.domain.fold import fold
from server.tournaments.domain.standings import me_row
from server.tournaments.services.archive import archive_key
from server.tournaments.services.book import TournamentBook
from tests.server.tournaments.racers import Racer, ask, connect, register
from tests.support.redis_cluster import LocalRedisCluster
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess, start_all

TOURNAMENT_ARGS = [
    "--rate",
    "1000",
    "--burst",
    "1000",
    "--auth-attempts-per-address",
    "10000",
    "--tournament-min-length-s",
    "10",
    "--tournament-requests-per-minute",
    "1000",
    "--heartbeat-s",
    "0.5",
    "--tournament-lease-s",
    "2",
]


async def create(url: str, key: str, length_s: int, **extra: Any) -> str:
    client, _ = await connect(url, "host", key)
    try:
        msg = {
            "type": "create_tournament",
            "name": "Blitz",
            "variant": "quadrennial",
            "length_ms": length_s * 1000,
            "time_limit_ms": 10_000,
            **extra,
        }
        answer = await ask(client, msg, "tournament")
        assert answer["type"] == "tournament", answer
        return str(answer["tournament"]["id"])
    finally:
        await client.close()


async def stored_events(store: RedisEventStore, tournament: str) -> list[dict[str, Any]]:
    return [e.data for e in await store.read(tournament_stream(tournament))]


async def final_events(
    store: RedisEventStore, archive_dir: Path, tournament: str
) -> list[dict[str, Any]]:
    """A finished tournament's events: from the store, else (moved there once its standings
    were final) from the archive the servers share."""
    events = await stored_events(store, tournament)
    if events:
        return events
    archive = SqliteArchive(archive_dir / "archive.sqlite3")
    try:
        record = await archive.get(archive_key(tournament))
    finally:
        await archive.aclose()
    assert record is not None, "the tournament is neither in the store nor in the archive"
    return list(record.room_events)


def check_stream(events: list[dict[str, Any]]) -> None:
    """Every paired race scored once; nobody paired while in a race."""
    racing: dict[str, str] = {}
    paired: set[str] = set()
    scored: list[str] = []
    for data in events:
        event = decode(data)
        if isinstance(event, RacePaired):
            for account in event.players:
                assert account not in racing, (
                    f"{account} paired in {event.room} while in {racing.get(account)}"
                )
                racing[account] = event.room
            paired.add(event.room)
        elif isinstance(event, RaceScored):
            scored.append(event.room)
            for account in [a for a, r in racing.items() if r == event.room]:
                del racing[account]
    assert sorted(scored) == sorted(paired), "a race paired was not scored, or scored twice"
    assert not racing


async def run_tournament(
    urls: list[str],
    store: RedisEventStore,
    players: int,
    length_s: int,
    archive_dir: Path,
    kill: Callable[[list[Racer]], Awaitable[None]] | None = None,
) -> str:
    """The tournament's id, once its racers saw the final standings and it was checked."""
    names = [f"r{uuid.uuid4().hex[:6]}{i}" for i in range(players)]
    keys = await asyncio.gather(*(register(urls[i % len(urls)], n) for i, n in enumerate(names)))
    host = await register(urls[0], f"h{uuid.uuid4().hex[:8]}")
    # It starts once everyone could join: every racer is in the first round.
    tournament = await create(urls[0], host, length_s, starts_at=int(time.time() * 1000) + 4_000)
    racers = [
        Racer(
            name,
            [urls[i % len(urls)], *[u for u in urls if u != urls[i % len(urls)]]],
            tournament,
            key,
        )
        for i, (name, key) in enumerate(zip(names, keys, strict=True))
    ]
    tasks = [asyncio.create_task(r.run()) for r in racers]
    if kill is not None:
        await kill(racers)
    async with asyncio.timeout(length_s + 60):
        await asyncio.gather(*tasks)

    events = await final_events(store, archive_dir, tournament)
    check_stream(events)
    folded = fold(tournament, events)
    assert folded.status.value == "finished"
    assert all(folded.entrants[r.name].sheet for r in racers)  # everyone raced
    for racer in racers:
        assert racer.final_state is not None
        standings = racer.last_standings
        assert standings is not None, racer.name
        assert standings["final"], racer.name
        me = standings["me"]
        assert me == me_row(folded, me["account"]), racer.name
    podium = racers[0].final_state["podium"]  # type: ignore[index]
    assert [row["account"] for row in podium] == [e.account for e in folded.standings()[:3]]
    return tournament


async def archived_leaving_no_key(store: RedisEventStore, tournament: str) -> None:
    """Wait for the tournament to be archived and its racers' presence gone; then no key of
    the store names it (the `tournaments` and `tplayed.<account>` indexes hold it as a member)."""
    book = TournamentBook(store, SystemClock())
    pattern = f"{store.prefix}*{tournament}*"
    archived, keys = False, [b"not looked at yet"]
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 60
    while loop.time() < deadline and not (archived and not keys):
        await asyncio.sleep(0.2)
        archived = any(t.archived for t in await book.listed() if t.id == tournament)
        keys = [key async for key in store.topology.client.scan_iter(match=pattern)]
    assert archived, "the finished tournament was not archived"
    assert keys == [], "keys of the archived tournament are left in the store"


def lease_holder(servers: list[ServerProcess], logs: list[Path]) -> ServerProcess:
    """The server that took the tournament's lease last (its log says so)."""
    taken = [
        (line, server)
        for server, log in zip(servers, logs, strict=True)
        for line in log.read_text().splitlines()
        if "tournament_lease_taken" in line
    ]
    assert taken, "no server took the lease"
    return max(taken, key=lambda pair: json.loads(pair[0])["timestamp"])[1]


def killing_the_lease_holder(
    servers: list[ServerProcess], logs: list[Path], store: RedisEventStore
) -> Callable[[list[Racer]], Awaitable[None]]:
    """Once races have been scored, SIGKILL whichever server pairs the tournament."""

    async def kill(racers: list[Racer]) -> None:
        tournament = racers[0].tournament
        async with asyncio.timeout(60):
            while True:
                events = await stored_events(store, tournament)
                if sum(1 for e in events if e["type"] == RaceScored.TYPE) >= 4:
                    break
                await asyncio.sleep(0.2)
        lease_holder(servers, logs).kill()

    return kill


async def forty_racers_on_two_processes_one_killed(
    url: str, store: RedisEventStore, logs: list[Path], *extra: str
) -> None:
    """Two servers on one store and one archive; forty racers spread over them; the pairing
    one killed."""
    archive_dir = logs[0].parent / "data"
    archive_dir.mkdir()
    args = [*TOURNAMENT_ARGS, "--data-dir", str(archive_dir), *extra]
    servers = [ServerProcess(redis_url=url, log_path=log, extra_args=args) for log in logs]
    start_all(servers)
    try:
        kill = killing_the_lease_holder(servers, logs, store)
        urls = [s.url for s in servers]
        tournament = await run_tournament(
            urls, store, players=40, length_s=20, archive_dir=archive_dir, kill=kill
        )
        await archived_leaving_no_key(store, tournament)
    finally:
        await store.aclose()
        for server in servers:
            server.stop()


@pytest.mark.long
async def test_forty_racers_on_two_processes_one_killed_on_redis(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    store = RedisEventStore(redis_server.url, prefix=prefix)
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    await forty_racers_on_two_processes_one_killed(
        redis_server.url, store, logs, "--redis-prefix", prefix
    )


@pytest.mark.long
async def test_forty_racers_on_two_processes_one_killed_on_a_cluster(
    redis_cluster: LocalRedisCluster, tmp_path: Path
) -> None:
    prefix = f"t{uuid.uuid4().hex[:8]}:"
    store = RedisEventStore(redis_cluster.url, cluster=True, prefix=prefix)
    logs = [tmp_path / "one.log", tmp_path / "two.log"]
    await forty_racers_on_two_processes_one_killed(
        redis_cluster.all_url, store, logs, "--redis-cluster", "--redis-prefix", prefix
    )
