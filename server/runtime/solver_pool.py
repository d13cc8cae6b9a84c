"""The solver, off the event loop: winnable deals for winnable-only races, and hints.

`shared.solve` is pure and CPU-bound (a deal can take a second or more); run on the event loop
it would stall every move of every room. `SolverPool` runs it in worker processes (threads
would still hold the GIL) and awaits the result, so the loop goes on serving meanwhile. Hints
have a worker of their own: a player waiting for one never queues behind the deals a
winnable-only room is drawing.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import secrets
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import NamedTuple

from shared import GameState, Solution, new_game, solve
from shared.errors import ServerError
from shared.solver import Hint, hint
from shared.variants import check_variant


class NoWinnableDeal(ServerError):
    """No deal drawn was proved winnable within the attempts and node budget allowed."""

    code = "no_winnable_deal"


class WinnableDeal(NamedTuple):
    """A secret seed the solver proved winnable, and how many seeds were drawn to find it
    (with several workers, seeds still being solved when it was found count too)."""

    seed: str
    attempts: int


def secret_seed() -> str:
    """A fresh secret seed, drawn as the server draws any race's seed."""
    return secrets.token_hex(8)


def solve_deal(variant: str, seed: str, max_nodes: int) -> Solution:
    """The solver's verdict on one deal; runs in a worker process."""
    return solve(new_game(variant, seed=seed), max_nodes=max_nodes)


def hint_position(state: GameState, max_nodes: int) -> Hint:
    """A hint for one position (a move in any live one); runs in a worker process."""
    return hint(state, max_nodes=max_nodes)


def solve_position(state: GameState, max_nodes: int) -> Solution:
    """The solver's verdict on one position (a bot's plan); runs in a worker process."""
    return solve(state, max_nodes=max_nodes)


class SolverPool:
    """Worker processes that run the solver for the server; close it with the server.

    `executor` may be passed in (tests, or a server sharing one pool), and `hint_executor`
    beside it (hints go to `executor` too when it is not); otherwise a process pool of
    `workers` for deals and one of a single worker for hints are created, started by "spawn"
    so no worker inherits the server's threads, sockets or event loop. `draw` makes secret
    seeds (injected by tests).
    """

    def __init__(
        self,
        executor: Executor | None = None,
        *,
        hint_executor: Executor | None = None,
        workers: int = 1,
        draw: Callable[[], str] = secret_seed,
    ) -> None:
        if executor is None:
            if workers < 1:
                raise ValueError(f"workers must be >= 1, not {workers}")
            context = multiprocessing.get_context("spawn")
            executor = ProcessPoolExecutor(workers, mp_context=context)
            hint_executor = ProcessPoolExecutor(1, mp_context=context)
            self._owned = True
        else:
            self._owned = False
        self._executor = executor
        self._hint_executor = hint_executor or executor
        self._workers = workers
        self._draw = draw
        self._closed = False

    async def winnable_seed(self, variant: str, max_nodes: int, *, attempts: int) -> WinnableDeal:
        """The first of up to `attempts` fresh secret seeds whose deal the solver proves
        winnable within `max_nodes`; NoWinnableDeal if none is. Up to `workers` deals are
        solved at once; the seed is never logged or returned anywhere else."""
        check_variant(variant)
        if attempts < 1:
            raise ValueError(f"attempts must be >= 1, not {attempts}")
        loop = asyncio.get_running_loop()
        running: dict[asyncio.Future[Solution], str] = {}
        drawn = 0
        try:
            while drawn < attempts or running:
                while drawn < attempts and len(running) < self._workers:
                    seed = self._draw()
                    drawn += 1
                    job = loop.run_in_executor(
                        self._checked(), solve_deal, variant, seed, max_nodes
                    )
                    running[job] = seed
                done, _ = await asyncio.wait(running, return_when=asyncio.FIRST_COMPLETED)
                for job in done:
                    seed = running.pop(job)
                    if job.result().status == "won":
                        return WinnableDeal(seed, drawn)
        finally:
            for job in running:
                job.cancel()
        raise NoWinnableDeal(
            f"no {variant} deal proved winnable in {attempts} attempt(s) of {max_nodes:,} nodes"
        )

    async def hint(self, state: GameState, max_nodes: int) -> Hint:
        """A move from `state`: the solver's within `max_nodes`, or the heuristic's (labelled)
        when it proves no line; on the hint worker, so deals being drawn never delay it."""
        self._checked()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._hint_executor, hint_position, state, max_nodes)

    async def solve(self, state: GameState, max_nodes: int) -> Solution:
        """The solver's verdict on `state` within `max_nodes` (a bot planning its moves), on
        the hint worker: bots think as people ask for hints, one position at a time."""
        self._checked()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._hint_executor, solve_position, state, max_nodes)

    def _checked(self) -> Executor:
        if self._closed:
            raise RuntimeError("the solver pool is closed")
        return self._executor

    async def aclose(self) -> None:
        """Stop the workers this pool created (a passed-in executor is its owner's to close);
        solves still queued are cancelled, and the loop is not blocked while workers exit."""
        if self._closed:
            return
        self._closed = True
        if self._owned:
            for executor in {self._executor, self._hint_executor}:
                await asyncio.to_thread(executor.shutdown, wait=True, cancel_futures=True)
