"""``--workers N``: N server processes on one port (SO_REUSEPORT), each a full server on the
shared store, under a parent that only starts, watches and stops them.

The kernel spreads new connections over the workers; any worker serves any room (the store is
the only shared state, docs/architecture.md). SIGTERM or SIGINT to the parent is passed to every
worker, which drains (closes its connections with 1001) as a single server does. A worker that
dies is logged (``worker_exited`` with its pid and exit code) and started again; one that keeps
dying at start-up (a port taken, a store refused) stops the whole server with exit code 1.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import dataclasses
import multiprocessing
import os
import signal
import socket
import time
from collections.abc import Callable, Coroutine, MutableMapping
from multiprocessing.connection import wait
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Any

import structlog

from server.runtime.config import Config
from server.runtime.logging import configure_logging, get_logger
from server.runtime.loops import loop_factory

Serve = Callable[[Config], Coroutine[Any, Any, None]]

QUICK_DEATH_S = 5.0
"""A worker that dies sooner than this after its start counts toward a crash loop."""
QUICK_DEATHS = 3
"""Quick deaths in a row of one worker slot that stop the whole server."""


def _worker_fields(index: int) -> Callable[[Any, str, MutableMapping[str, Any]], Any]:
    pid = os.getpid()

    def add(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Any:
        event.setdefault("worker", index)
        event.setdefault("pid", pid)
        return event

    return add


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def die_with_parent(parent: int) -> None:
    """Have the kernel send this worker SIGTERM when the parent dies, even by SIGKILL: orphaned
    workers kept serving (and holding the port) with nobody to stop them. Linux only (prctl);
    elsewhere a no-op. A parent gone before the call is caught by the pid check."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os.kill(os.getpid(), signal.SIGTERM)


def worker_main(config: Config, index: int, serve: Serve, parent: int | None = None) -> None:
    """One worker (in a forked child): a full server whose log lines name the worker and pid."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)  # the parent's handlers came along with the fork
    if parent is not None:
        die_with_parent(parent)
    configure_logging(config.log_format, config.log_level)
    processors = list(structlog.get_config()["processors"])
    structlog.configure(processors=[_worker_fields(index), *processors])
    with asyncio.Runner(loop_factory=loop_factory(config.loop)) as runner:
        runner.run(serve(dataclasses.replace(config, worker_index=index)))


class Supervisor:
    """Starts the workers, restarts one that dies, and passes a stop signal on to all."""

    def __init__(self, config: Config, serve: Serve) -> None:
        self.serve = serve
        self.context = multiprocessing.get_context("fork")  # nothing to pickle; no loop yet
        # One datagram socket pair per worker, made before any fork, so every worker (and a
        # restarted one) can pass a connection to any other (server.net.handoff); what is in
        # flight to a worker that died waits in its pair for the one started in its place.
        self.handoff = [
            socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM) for _ in range(config.workers)
        ]
        self.config = dataclasses.replace(
            config, handoff_fds=tuple(s.fileno() for pair in self.handoff for s in pair)
        )
        self.workers: dict[int, BaseProcess] = {}
        self.started: dict[int, float] = {}
        self.quick_deaths: dict[int, int] = {}
        self.stopping = False
        self.log = get_logger("server.workers")

    def start(self, index: int) -> None:
        process = self.context.Process(
            target=worker_main,
            args=(self.config, index, self.serve, os.getpid()),
            name=f"solitaire-worker-{index}",
        )
        process.start()
        self.workers[index] = process
        self.started[index] = time.monotonic()
        self.log.info("worker_started", worker=index, pid=process.pid)

    def stop(self, signum: int, _frame: FrameType | None = None) -> None:
        """A signal to the parent: every worker drains."""
        if not self.stopping:
            self.log.info("workers_stopping", signal=signal.Signals(signum).name)
        self.stopping = True
        for process in self.workers.values():
            if process.is_alive() and process.pid is not None:
                os.kill(process.pid, signal.SIGTERM)

    def run(self) -> int:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self.stop)
        for index in range(self.config.workers):
            self.start(index)
        code = 0
        while self.workers:
            ready = wait([p.sentinel for p in self.workers.values()], timeout=1.0)
            for index, process in list(self.workers.items()):
                if process.sentinel not in ready:
                    continue
                process.join()
                del self.workers[index]
                if self.stopping:
                    self.log.info("worker_stopped", worker=index, pid=process.pid)
                    continue
                code = self._died(index, process) or code
        return code

    def _died(self, index: int, process: BaseProcess) -> int:
        """Restart a dead worker; stop everything (1) if it keeps dying at start."""
        lived = time.monotonic() - self.started[index]
        self.log.error(
            "worker_exited",
            worker=index,
            pid=process.pid,
            exitcode=process.exitcode,
            lived_s=round(lived, 2),
        )
        deaths = self.quick_deaths.get(index, 0) + 1 if lived < QUICK_DEATH_S else 0
        self.quick_deaths[index] = deaths
        if deaths >= QUICK_DEATHS:
            self.log.error("workers_crash_loop", worker=index, deaths=deaths)
            self.stop(signal.SIGTERM)
            return 1
        self.start(index)
        return 0


def run_workers(config: Config, serve: Serve) -> int:
    """Run ``config.workers`` workers until a signal; the exit code of the whole server."""
    return Supervisor(config, serve).run()
