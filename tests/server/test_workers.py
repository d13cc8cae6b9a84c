"""``--workers N``: several processes on one port, each a full server on the shared store.

Which worker served a connection is read from the log: with --workers every line carries the
worker's ``pid``, and each connection's ``hello`` line its player's ``name``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from pathlib import Path

import psutil
import pytest

from server.kernel.placement import home_worker
from shared import deal_deck, public_fold
from tests.server.wsclient import Client, assert_no_secrets, winning_seed
from tests.support.ports import free_port_run
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here starts a process

FAST = ["--rate", "1000", "--burst", "1000"]


def log_lines(path: Path) -> list[dict[str, object]]:
    lines = []
    # The last piece may be a line still being written (the server runs): complete ones only.
    for line in path.read_text(errors="replace").split("\n")[:-1]:
        if line.startswith("{"):
            lines.append(json.loads(line))
    return lines


def hello_pids(path: Path) -> dict[str, int]:
    """The pid of the worker that greeted each player name."""
    return {
        str(line["name"]): int(line["pid"])  # type: ignore[call-overload]
        for line in log_lines(path)
        if line.get("event") == "hello"
    }


def listening_workers(parent: int, port: int) -> set[int]:
    """Pids of the parent's children with a listening socket on ``port``."""
    found = set()
    for child in psutil.Process(parent).children():
        try:
            sockets = child.net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        if any(s.status == psutil.CONN_LISTEN and s.laddr.port == port for s in sockets):
            found.add(child.pid)
    return found


async def until(check: object, within: float = 20.0) -> None:
    """Poll ``check``: what it watches is another process's, with nothing to wait on."""
    async with asyncio.timeout(within):
        while not check():  # type: ignore[operator]  # noqa: ASYNC110
            await asyncio.sleep(0.05)


def workers_server(redis: RedisServer, log: Path, n: int = 2) -> ServerProcess:
    prefix = f"w{uuid.uuid4().hex[:8]}:"
    return ServerProcess(
        redis_url=redis.url,
        log_path=log,
        extra_args=[*FAST, "--redis-prefix", prefix, "--workers", str(n)],
    )


async def two_workers(redis: RedisServer, log: Path) -> tuple[ServerProcess, int]:
    """A server of two workers, both listening; the server and its parent's pid."""
    server = workers_server(redis, log)
    server.start()
    assert server.process is not None
    parent = server.process.pid
    try:
        await until(lambda: len(listening_workers(parent, server.port)) == 2)
    except BaseException:
        server.kill()
        raise
    return server, parent


async def test_two_workers_listen_serve_one_race_and_drain_on_sigterm(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    server, parent = await two_workers(redis_server, log)
    clients: list[Client] = []
    try:
        workers = listening_workers(parent, server.port)
        # Connections land on both: the kernel spreads them over the listening sockets.
        for n in range(40):
            client = await Client(server.url, f"p{n}").open()
            await client.hello()
            clients.append(client)
            await until(lambda n=n: f"p{n}" in hello_pids(log))
            if set(hello_pids(log).values()) == workers:
                break
        served = hello_pids(log)
        assert set(served.values()) == workers
        one = next(c for c in clients if served[c.name] == min(workers))
        two = next(c for c in clients if served[c.name] == max(workers))

        # A race whose racers are on different workers finishes on both.
        seed, win = winning_seed()
        await one.send(
            {"type": "create_room", "variant": "quadrennial", "seed": seed, "countdown_ms": 0}
        )
        room = (await one.expect("room"))["room"]["id"]
        for racer in (one, two):
            await racer.send({"type": "join", "room": room})
            await racer.expect("joined")
        await two.send({"type": "start"})
        for racer in (one, two):
            await racer.expect("started")
        for version, move in enumerate(win, start=2):
            assert (await one.move(move))["version"] == version
        await two.send({"type": "resign"})
        for racer in (one, two):
            finished = await racer.expect("finished")
            assert [r["player"] for r in finished["ranking"]] == [one.session, two.session]
        assert public_fold(one.game_events(one.session)).won
        assert_no_secrets([one, two], "quadrennial", deal_deck("quadrennial", seed), seed)

        # SIGTERM to the parent drains every worker: each closes its connections with 1001.
        assert server.stop() == 0
        codes = await asyncio.gather(*(c.wait_closed() for c in clients))
        assert set(codes) == {1001}
        assert not any(psutil.pid_exists(pid) for pid in workers)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.kill()


async def test_a_worker_that_dies_is_reported_and_started_again(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    log = tmp_path / "server.log"
    server, parent = await two_workers(redis_server, log)
    try:
        first = listening_workers(parent, server.port)
        victim = min(first)
        os.kill(victim, signal.SIGKILL)
        await until(
            lambda: (
                len(listening_workers(parent, server.port)) == 2
                and victim not in listening_workers(parent, server.port)
            )
        )
        exited = [line for line in log_lines(log) if line.get("event") == "worker_exited"]
        assert [(line["pid"], line["exitcode"]) for line in exited] == [(victim, -9)]
        client = await Client(server.url, "after").open()  # the server still serves
        await client.hello()
        await client.close()
    finally:
        assert server.stop() == 0


def test_a_worker_that_cannot_start_exits_and_stops_the_server(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Worker 1's metrics port is taken: each of its starts fails and exits (before, the second
    start hung in the loop's final cancel for good, and SIGTERM could not end the server); after
    three quick deaths the whole server exits 1, leaving no process behind."""
    base = free_port_run(2)
    log = tmp_path / "server.log"
    server = workers_server(redis_server, log)
    server.extra_args += ["--metrics-port", str(base)]
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", base + 1))
        taken.listen()
        with log.open("ab") as out:
            env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
            process = subprocess.Popen(
                server.command(), stdout=out, stderr=subprocess.STDOUT, env=env
            )
        children: set[int] = set()
        try:
            deadline = time.monotonic() + 60
            while process.poll() is None and time.monotonic() < deadline:
                with contextlib.suppress(psutil.NoSuchProcess):
                    children |= {c.pid for c in psutil.Process(process.pid).children()}
                time.sleep(0.05)
            code = process.poll()
            left = [pid for pid in children if psutil.pid_exists(pid)]
        finally:
            for pid in [process.pid, *children]:  # a hung worker outlives its killed parent
                with contextlib.suppress(psutil.NoSuchProcess):
                    psutil.Process(pid).kill()
            process.wait()
    assert code == 1
    assert left == []
    deaths = [
        line
        for line in log_lines(log)
        if line.get("event") == "worker_exited" and line.get("worker") == 1
    ]
    assert len(deaths) == 3
    assert all(line["exitcode"] == 1 for line in deaths)
    text = log.read_text(errors="replace")
    assert f"cannot listen on 127.0.0.1:{base + 1}: the address is already in use" in text
    assert "choose another --metrics-port" in text


@pytest.mark.parametrize("store", ["sqlite", "memory"])
def test_workers_without_redis_are_refused_in_one_line(store: str, tmp_path: Path) -> None:
    """Either embedded store lives in one process (the SQLite one locks its directory)."""
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    done = subprocess.run(
        [sys.executable, "-m", "server", "--workers", "2", "--store", store],
        capture_output=True,
        text=True,
        timeout=30,
        env={**env, "XDG_DATA_HOME": str(tmp_path)},
        check=False,
    )
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "solitaire-server: --workers needs --redis-url (the embedded store lives in one process)"
    ]
    assert list(tmp_path.iterdir()) == []  # refused before anything was made


async def test_connections_that_name_their_room_are_served_by_its_home_worker(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """docs/protocol.md, "Connecting": ``/?room=CODE`` sends a connection to the worker the room
    is homed on (its creator's), so a room's players and spectators share one fold and one
    fan-out; a connection naming a room homed elsewhere lands there; the pages and
    /healthz still answer through the routed accept."""
    log = tmp_path / "server.log"
    server, _ = await two_workers(redis_server, log)
    clients: list[Client] = []
    try:
        host = await Client(server.url, "host").open()
        clients.append(host)
        await host.hello()
        seed, win = winning_seed()
        await host.send(
            {"type": "create_room", "variant": "quadrennial", "seed": seed, "countdown_ms": 0}
        )
        room = (await host.expect("room"))["room"]["id"]
        # Twelve connections at random would all land on the host's worker one time in 4,096.
        names = [f"r{n}" for n in range(2)] + [f"s{n}" for n in range(10)]
        for name in names:
            client = await Client(f"{server.url}/?room={room}", name).open()
            clients.append(client)
            await client.hello()
        await until(lambda: set(names) <= set(hello_pids(log)))
        served = hello_pids(log)
        home = served["host"]
        assert {served[name] for name in names} == {home}

        racers, fans = clients[1:3], clients[3:]
        for racer in racers:
            await racer.send({"type": "join", "room": room})
            await racer.expect("joined")
        for fan in fans:
            await fan.send({"type": "join", "room": room, "role": "spectator"})
            await fan.expect("joined")
        await racers[0].send({"type": "start"})
        for racer in racers:
            await racer.expect("started")
        for version, move in enumerate(win, start=2):
            assert (await racers[0].move(move))["version"] == version
        await racers[1].send({"type": "resign"})
        for client in (*racers, *fans):
            await client.expect("finished")
        assert public_fold(fans[0].game_events(racers[0].session)).won

        # A room homed on the other worker: the connection naming it is served there.
        elsewhere = next(
            r for r in (f"zz{i}" for i in range(100)) if home_worker(r, 2) != home_worker(room, 2)
        )
        stray = await Client(f"{server.url}/?room={elsewhere}", "stray").open()
        clients.append(stray)
        await stray.hello()
        await until(lambda: "stray" in hello_pids(log))
        assert hello_pids(log)["stray"] != home
        assert home_worker(room, 2) != home_worker(elsewhere, 2)
        for path in ("/healthz", f"/watch/{room}?room={room}"):
            url = f"http://127.0.0.1:{server.port}{path}"
            status = await asyncio.to_thread(lambda url=url: urllib.request.urlopen(url).status)
            assert status == 200
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        assert server.stop() == 0


async def test_a_connection_passed_to_a_worker_that_died_is_served_by_the_one_started_again(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """The hand-off pairs belong to the parent: a connection passed to a room's home while it
    is dead waits in its pair, and the worker started in its place serves it."""
    log = tmp_path / "server.log"
    server, parent = await two_workers(redis_server, log)
    try:
        host = await Client(server.url, "host").open()
        await host.hello()
        await until(lambda: "host" in hello_pids(log))
        home = hello_pids(log)["host"]
        index = worker_index_of(log, home)
        room = next(r for r in (f"q{i}" for i in range(100)) if home_worker(r, 2) == index)
        other = (listening_workers(parent, server.port) - {home}).pop()
        # The parent is held while home is down, else it may start home's successor before
        # the late client comes (a fork is quick): the moment to test would be missed.
        os.kill(parent, signal.SIGSTOP)
        try:
            os.kill(home, signal.SIGKILL)
            await host.wait_closed()
            # While the home is down, the other worker accepts everything, passes this one on.
            await until(lambda: listening_workers(parent, server.port) == {other}, within=5)
            opening = asyncio.ensure_future(Client(f"{server.url}/?room={room}", "late").open())
            await asyncio.sleep(0.3)  # accepted by the other worker, waiting in home's pair
        finally:
            os.kill(parent, signal.SIGCONT)
        late = await opening
        await late.hello()
        await until(lambda: "late" in hello_pids(log))
        assert hello_pids(log)["late"] not in {home, other}  # the new worker in home's place
        await late.close()
    finally:
        assert server.stop() == 0


def worker_index_of(path: Path, pid: int) -> int:
    """The worker index of the process ``pid`` (every worker's log line names both)."""
    return next(
        int(line["worker"])  # type: ignore[call-overload]
        for line in log_lines(path)
        if line.get("pid") == pid and "worker" in line
    )


async def test_workers_stop_when_their_parent_is_killed(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """SIGKILL to the parent: the kernel sends each worker SIGTERM (PR_SET_PDEATHSIG), and
    they drain and exit instead of serving on, orphaned, with nobody to stop them."""
    log = tmp_path / "server.log"
    server, parent = await two_workers(redis_server, log)
    workers = listening_workers(parent, server.port)
    client = await Client(server.url, "left").open()
    await client.hello()
    server.kill()
    assert await client.wait_closed() == 1001  # drained as on any stop
    await until(lambda: not any(psutil.pid_exists(pid) for pid in workers), within=15)
