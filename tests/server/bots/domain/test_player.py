"""The bot's pure policy: always a legal move (or a resignation when nothing new is left),
think times never under the floor, slips growing as the level drops, a memory rebuilt from
positions equal to the one kept move by move, and whole games that end."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.bots.domain.player import (
    LEVELS,
    PATIENCE,
    Memory,
    Pace,
    choose,
    level_for_rating,
    level_of,
    play_out,
    recall,
    remember,
    think_ms,
    wants_solver,
    with_solution,
)
from server.kernel.names import bot_level_of_name, bot_name
from shared import apply_move, foundation_count, is_over, legal_moves, new_game
from shared.solver import Solution, Status, solve
from shared.state import GameState
from tests.shared.strategies import quadrennial_positions, swiss_positions

levels = st.sampled_from(sorted(LEVELS))


@st.composite
def played_positions(draw: st.DrawFn) -> list[GameState]:
    """The positions of a game from its deal through some random legal moves."""
    state = new_game(draw(st.sampled_from(["swiss", "quadrennial"])), seed=str(draw(st.integers())))
    positions = [state]
    for _ in range(draw(st.integers(0, 60))):
        legal = sorted(legal_moves(state))
        if not legal:
            break
        state = apply_move(state, draw(st.sampled_from(legal)))
        positions.append(state)
    return positions


positions = st.one_of(
    played_positions().map(lambda p: p[-1]),
    swiss_positions(hidden=False),
    quadrennial_positions(hidden=False),
)


@settings(max_examples=150, deadline=None)
@given(positions, levels, st.integers(), st.integers(0, PATIENCE - 1))
def test_a_bot_plays_a_legal_move_in_any_live_position(
    state: GameState, level: int, seed: int, idle: int
) -> None:
    legal = legal_moves(state)
    choice = choose(
        state, LEVELS[level], Memory(frozenset({hash(state)}), idle=idle), random.Random(seed)
    )
    if legal:
        assert choice.move in legal
    else:
        assert choice.move is None


@settings(max_examples=100, deadline=None)
@given(played_positions(), levels, st.integers(), st.booleans())
def test_a_bot_never_goes_back_to_a_position_and_resigns_only_with_nothing_new(
    path: list[GameState], level: int, seed: int, company: bool
) -> None:
    memory = recall(path)
    state = path[-1]
    choice = choose(state, LEVELS[level], memory, random.Random(seed), company=company)
    if choice.move is not None:
        if choice.move not in ("d", "redeal"):
            assert hash(apply_move(state, choice.move)) not in memory.visited
    else:
        fresh = [
            m
            for m in legal_moves(state)
            if m in ("d", "redeal") or hash(apply_move(state, m)) not in memory.visited
        ]
        assert not fresh or memory.idle >= PATIENCE
        if company:  # a person still races: nothing useful left, no deal, no redeal
            assert "d" not in fresh
            assert "redeal" not in fresh


@settings(max_examples=150, deadline=None)
@given(positions, levels, st.integers(), st.integers(PATIENCE, PATIENCE + 50))
def test_a_bot_that_shuffled_too_long_deals_redeals_or_puts_a_card_up(
    state: GameState, level: int, seed: int, idle: int
) -> None:
    """Keeping a person company, as a weak player: no more shuffling, but no giving up while a
    deal, a redeal or a card going up is left (then the runner decides when to resign); alone,
    it gives up."""
    memory = Memory(frozenset({hash(state)}), idle=idle)
    assert choose(state, LEVELS[level], memory, random.Random(seed)).move is None  # alone
    choice = choose(state, LEVELS[level], memory, random.Random(seed), company=True)
    up = foundation_count(state)
    useful = [
        m
        for m in legal_moves(state)
        if m in ("d", "redeal") or foundation_count(apply_move(state, m)) > up
    ]
    if useful:
        assert choice.move in useful
    else:
        assert choice.move is None


@settings(max_examples=300, deadline=None)
@given(levels, st.integers(1, 2000), st.floats(0.001, 10), st.integers())
def test_think_times_are_never_under_the_floor(
    level: int, floor_ms: int, scale: float, seed: int
) -> None:
    rng = random.Random(seed)
    pace = Pace(floor_ms, scale)
    assert all(think_ms(LEVELS[level], pace, rng) >= floor_ms for _ in range(20))


def test_think_times_are_log_normal_around_the_levels_median() -> None:
    rng = random.Random(7)
    for level in LEVELS.values():
        drawn = sorted(think_ms(level, Pace(floor_ms=1), rng) for _ in range(2001))
        assert drawn[1000] == pytest.approx(level.think_median_ms, rel=0.1)
        assert drawn[-1] > 2 * level.think_median_ms  # a long think now and then
    medians = [LEVELS[n].think_median_ms for n in sorted(LEVELS)]
    assert medians == sorted(medians, reverse=True)  # a stronger player is quicker too


def test_slips_grow_as_the_level_drops() -> None:
    slips = [level.slip for _, level in sorted(LEVELS.items())]
    assert slips == sorted(slips, reverse=True)
    assert len(set(slips)) == len(slips)
    # And in play: the same positions, the same random sources, fewer slips a level up.
    games = [new_game(v, seed=str(s)) for v in ("swiss", "quadrennial") for s in range(10)]
    counted = []
    for number in sorted(LEVELS):
        level = LEVELS[number]
        count = 0
        for i, start in enumerate(games):
            state, rng = start, random.Random(i)
            memory = Memory(frozenset({hash(state)}))
            for _ in range(30):
                choice = choose(state, level, memory, rng)
                if choice.move is None:
                    break
                count += choice.slip
                after = apply_move(state, choice.move)
                memory, state = remember(memory, state, choice.move, after), after
        counted.append(count)
    assert counted == sorted(counted, reverse=True)
    assert counted[0] > 3 * counted[-1]


@settings(max_examples=60, deadline=None)
@given(played_positions())
def test_the_memory_recalled_from_positions_is_the_one_kept_move_by_move(
    path: list[GameState],
) -> None:
    memory = Memory(frozenset({hash(path[0])}))
    for before, after in itertools.pairwise(path):
        memory = remember(memory, before, "", after)
    recalled = recall(path)
    assert (recalled.visited, recalled.idle) == (memory.visited, memory.idle)


def test_solver_levels_follow_a_proved_line_and_ask_again_only_without_one() -> None:
    state = new_game("quadrennial", seed="3")
    memory = Memory(frozenset({hash(state)}))
    assert not wants_solver(LEVELS[2], memory, state)
    assert wants_solver(LEVELS[5], memory, state)
    line = Solution(Status.WON, ("d", "wf"), 10, 100)
    planned = with_solution(memory, line)
    assert planned.plan == ("d", "wf")
    assert not wants_solver(LEVELS[5], planned, state)
    lost = with_solution(memory, Solution(Status.UNWINNABLE, (), 10, 100))
    assert lost.lost
    assert not wants_solver(LEVELS[5], lost, state)
    after = apply_move(state, "d")
    assert remember(planned, state, "d", after).plan == ("wf",)
    assert remember(planned, state, "wf", after).plan == ()  # a slip breaks the line


@pytest.mark.parametrize("variant", ["swiss", "quadrennial"])
@pytest.mark.parametrize("level", sorted(LEVELS))
def test_whole_games_end(variant: str, level: int) -> None:
    for seed in range(3):
        played = play_out(
            new_game(variant, seed=f"end-{seed}"),
            LEVELS[level],
            Pace(),
            random.Random(seed),
            lambda state, nodes: solve(state, max_nodes=min(nodes, 2000)),
        )
        assert 0 < played.moves < 2000
        assert played.elapsed_ms >= played.moves * Pace().floor_ms


def test_names_and_levels() -> None:
    for number in LEVELS:
        assert bot_level_of_name(bot_name(number, number)) == number
        assert bot_level_of_name(bot_name(number, number) + " 2") == number
    assert bot_level_of_name("Ada") is None
    assert bot_level_of_name("Ada (bot 9)") is None
    with pytest.raises(ValueError, match="from 1 to 5"):
        level_of(6)
    ratings = range(0, 3000, 25)
    chosen = [level_for_rating(r) for r in ratings if r > 0]
    assert chosen == sorted(chosen)
    assert set(chosen) == set(LEVELS)
    assert level_for_rating(0) == 3  # a guest
    assert level_for_rating(1500) == 3  # a new account
    assert not is_over(new_game("swiss", seed="x"))
