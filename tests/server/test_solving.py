"""server/runtime/solver_pool.py: the solver in worker processes, never on the event loop."""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest

from server.runtime.solver_pool import NoWinnableDeal, SolverPool, WinnableDeal
from shared import UnknownVariant, legal_moves, new_game, solve
from shared.errors import ServerError

# Quadrennial deals whose verdicts at 2,000 nodes are known (tests/shared/test_solver.py and
# bench.solver): seed 1 is won within it, seed 9 (unwinnable, proved at ~47,000) is not.
WON, NOT_PROVED, BUDGET = "1", "9", 2_000


@pytest.fixture(scope="module")
def executor() -> Iterator[ProcessPoolExecutor]:
    """One spawned pool for the module (starting workers is the slow part)."""
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))
    yield pool
    pool.shutdown(wait=True, cancel_futures=True)


def drawing(seeds: list[str]) -> tuple[Callable[[], str], list[str]]:
    """A draw function handing out `seeds` in order, and the list of those drawn."""
    drawn: list[str] = []

    def draw() -> str:
        drawn.append(seeds[len(drawn)])
        return drawn[-1]

    return draw, drawn


def test_the_premise_of_these_tests() -> None:
    assert solve(new_game("quadrennial", seed=WON), max_nodes=BUDGET).status == "won"
    assert solve(new_game("quadrennial", seed=NOT_PROVED), max_nodes=BUDGET).status != "won"


async def test_winnable_seed_skips_deals_not_proved_winnable(
    executor: ProcessPoolExecutor,
) -> None:
    draw, drawn = drawing([NOT_PROVED, NOT_PROVED, WON, NOT_PROVED])
    pool = SolverPool(executor, draw=draw)
    deal = await pool.winnable_seed("quadrennial", BUDGET, attempts=5)
    assert deal == WinnableDeal(WON, 3)
    assert drawn == [NOT_PROVED, NOT_PROVED, WON]


async def test_a_fresh_secret_seed_is_proved_winnable() -> None:
    pool = SolverPool(workers=1)
    try:
        seed, attempts = await pool.winnable_seed("quadrennial", 20_000, attempts=30)
    finally:
        await pool.aclose()
    assert len(seed) == 16
    int(seed, 16)  # secrets.token_hex, as for any secret race seed
    assert 1 <= attempts <= 30
    assert solve(new_game("quadrennial", seed=seed), max_nodes=20_000).status == "won"


async def test_no_winnable_deal_within_the_attempts_is_a_server_error(
    executor: ProcessPoolExecutor,
) -> None:
    draw, drawn = drawing([NOT_PROVED] * 10)
    pool = SolverPool(executor, workers=2, draw=draw)
    with pytest.raises(NoWinnableDeal, match="3 attempt") as caught:
        await pool.winnable_seed("quadrennial", BUDGET, attempts=3)
    assert isinstance(caught.value, ServerError)
    assert caught.value.code == "no_winnable_deal"
    assert len(drawn) == 3


async def test_several_workers_find_the_winnable_deal_among_others(
    executor: ProcessPoolExecutor,
) -> None:
    draw, drawn = drawing([NOT_PROVED, NOT_PROVED, NOT_PROVED, WON, NOT_PROVED, NOT_PROVED])
    pool = SolverPool(executor, workers=2, draw=draw)
    deal = await pool.winnable_seed("quadrennial", BUDGET, attempts=6)
    assert deal.seed == WON
    assert 4 <= deal.attempts <= len(drawn) <= 5


async def test_hint_is_the_solvers_next_move(executor: ProcessPoolExecutor) -> None:
    state = new_game("quadrennial", seed=WON)
    hint = await SolverPool(executor).hint(state, BUDGET)
    assert hint.solution == solve(state, max_nodes=BUDGET)
    assert hint.move == hint.solution.next_move
    assert hint.move in legal_moves(state)
    assert not hint.heuristic


async def test_without_a_line_the_hint_is_the_heuristics_move(
    executor: ProcessPoolExecutor,
) -> None:
    state = new_game("quadrennial", seed=NOT_PROVED)
    hint = await SolverPool(executor).hint(state, BUDGET)
    assert hint.solution.status != "won"
    assert hint.move in legal_moves(state)
    assert hint.heuristic


async def test_a_hint_does_not_wait_behind_deals_being_drawn() -> None:
    """An owned pool has a worker for hints alone: with its one deal worker busy on Swiss
    seed 3 (unknown at 30,000 nodes, seconds of search), a hint still comes back first."""
    pool = SolverPool(workers=1, draw=lambda: "3")
    try:
        await pool.hint(new_game("quadrennial", seed=WON), 10)  # both workers started
        drawing_deal = asyncio.create_task(pool.winnable_seed("swiss", 30_000, attempts=1))
        await asyncio.sleep(0.2)
        hint = await pool.hint(new_game("quadrennial", seed=WON), BUDGET)
        assert hint.move is not None
        assert not drawing_deal.done()
        with pytest.raises(NoWinnableDeal):
            await drawing_deal
    finally:
        await pool.aclose()


async def test_the_event_loop_runs_while_a_deal_is_being_solved(
    executor: ProcessPoolExecutor,
) -> None:
    """Swiss seed 3, left unknown at 30,000 nodes, takes the worker well over a second; a task
    that ticks on the loop finishes many ticks while that solve is still running."""
    pool = SolverPool(executor, draw=lambda: "3")
    solving = asyncio.create_task(pool.winnable_seed("swiss", 30_000, attempts=1))
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        for _ in range(20):
            await asyncio.sleep(0.001)
            ticks += 1

    ticker = asyncio.create_task(tick())
    done, _ = await asyncio.wait({solving, ticker}, return_when=asyncio.FIRST_COMPLETED)
    assert done == {ticker}
    assert ticks == 20
    assert not solving.done()
    with pytest.raises(NoWinnableDeal):
        await solving


async def test_closing_stops_an_owned_pool_and_leaves_a_passed_in_one(
    executor: ProcessPoolExecutor,
) -> None:
    state = new_game("quadrennial", seed=WON)
    owned = SolverPool(workers=1)
    await owned.aclose()
    await owned.aclose()  # closing twice is harmless
    with pytest.raises(RuntimeError, match="closed"):
        await owned.hint(state, BUDGET)
    shared_pool = SolverPool(executor)
    await shared_pool.aclose()
    assert executor.submit(sum, [1, 2]).result() == 3


async def test_bad_arguments_are_refused(executor: ProcessPoolExecutor) -> None:
    pool = SolverPool(executor)
    with pytest.raises(ValueError, match="attempts"):
        await pool.winnable_seed("quadrennial", BUDGET, attempts=0)
    with pytest.raises(UnknownVariant):
        await pool.winnable_seed("klondike", BUDGET, attempts=1)
    with pytest.raises(ValueError, match="workers"):
        SolverPool(workers=0)
