"""How a bot plays: pure decisions of a racer at levels 1 to 5 that plays like a person.

A bot thinks before each move for a time drawn from a log-normal distribution (people's
reaction and decision times are skewed: mostly quick, now and then slow), never less than a
floor; it slips (plays another legal move than the one it meant) with a chance that grows as
the level drops; levels 3 to 5 follow the solver's winning line when it proves one within
their budget (the solver sees the position as the server holds it, as a solo hint does), and
otherwise, as levels 1 and 2 always, the hint's heuristic (``shared.solver.good_move``). It
never goes back to a position it has been in. Shuffling cards for ``PATIENCE`` moves without
one going up, it gives up when nobody needs it; while a person still races (``company``), it
does what a weak player does instead: deals and redeals, playing only a card that goes up,
until nothing new is left to try; then it waits, and the runner resigns it only once the
people it races are done (a person's first race is not left to them alone).

Everything here is a function of its arguments (the position, the level, a random source), so the
runner (server/bots/services/runner.py) and the benchmark (bench/bots.py) play the same bot, and the
tests check it with plain values. docs/bots.md shows the levels' figures.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from shared import apply_move, foundation_count, is_over, is_won, legal_moves
from shared.solver import Solution, Status, good_move
from shared.state import GameState

MIN_LEVEL = 1
MAX_LEVEL = 5
PATIENCE = 20
"""Moves (deals aside) since a card last went up to a foundation, after which a bot gives up,
or, keeping a person company, only deals, redeals and puts cards up."""
RESOLVE_EVERY = 8
"""A solver level with no winning line asks the solver again after this many moves."""
_ALWAYS_NEW = frozenset({"d", "redeal"})  # moves that always reach a new position


@dataclass(frozen=True, slots=True)
class Level:
    """One level of play: the chance of a slip a move, the think time's median and spread
    (the log-normal's sigma), and the solver's budget when it plans (0: it never does)."""

    number: int
    slip: float
    think_median_ms: int
    think_sigma: float
    solver_nodes: int

    @property
    def solver(self) -> bool:
        return self.solver_nodes > 0


LEVELS: dict[int, Level] = {
    1: Level(1, slip=0.40, think_median_ms=3200, think_sigma=0.55, solver_nodes=0),
    2: Level(2, slip=0.25, think_median_ms=2600, think_sigma=0.50, solver_nodes=0),
    3: Level(3, slip=0.12, think_median_ms=2100, think_sigma=0.45, solver_nodes=300),
    4: Level(4, slip=0.06, think_median_ms=1700, think_sigma=0.40, solver_nodes=2000),
    5: Level(5, slip=0.02, think_median_ms=1300, think_sigma=0.35, solver_nodes=8000),
}


def level_of(number: int) -> Level:
    """The level ``number`` names; ValueError outside 1 to 5 (requests are checked before)."""
    if number not in LEVELS:
        raise ValueError(f"a bot's level is from {MIN_LEVEL} to {MAX_LEVEL}, not {number}")
    return LEVELS[number]


def level_for_rating(rating: int) -> int:
    """The level of a quick race's bot for a player of ``rating`` (a guest's is 0): level 3
    about a new account's rating, one up or down per 150 points (docs/bots.md)."""
    if rating <= 0:
        return 3
    return max(MIN_LEVEL, min(MAX_LEVEL, 3 + math.floor((rating - 1500 + 75) / 150)))


@dataclass(frozen=True, slots=True)
class Pace:
    """How fast bots think on this server: ``floor_ms`` is the least time between two of a
    bot's moves, ``scale`` multiplies every level's median (1: the documented pace)."""

    floor_ms: int = 400
    scale: float = 1.0


def think_ms(level: Level, pace: Pace, rng: random.Random) -> int:
    """How long the bot thinks before its next move: log-normal around the level's median,
    never under the floor."""
    median = level.think_median_ms * pace.scale
    drawn = rng.lognormvariate(math.log(max(median, 1.0)), level.think_sigma)
    return max(pace.floor_ms, round(drawn))


@dataclass(frozen=True, slots=True)
class Memory:
    """What a bot keeps between moves: the positions it has been in (hashes), the rest of the
    solver's winning line it follows, moves since a card went up or was dealt, and moves since
    it last asked the solver. Rebuilt from the game's positions after a restart (``recall``)."""

    visited: frozenset[int]
    plan: tuple[str, ...] = ()
    idle: int = 0
    since_solve: int = RESOLVE_EVERY
    lost: bool = False  # the solver proved the position lost: no use asking it again


def recall(positions: Iterable[GameState]) -> Memory:
    """The memory of a bot whose game went through ``positions`` (from the start, in order)."""
    memory: Memory | None = None
    before: GameState | None = None
    for state in positions:
        if memory is None or before is None:
            memory = Memory(frozenset({hash(state)}))
        else:
            memory = remember(memory, before, "", state)
        before = state
    if memory is None:
        raise ValueError("a bot's memory needs the game's first position")
    return replace(memory, plan=(), since_solve=RESOLVE_EVERY)


def remember(memory: Memory, before: GameState, move: str, after: GameState) -> Memory:
    """The memory once ``move`` took the game from ``before`` to ``after``."""
    progressed = foundation_count(after) > foundation_count(before)
    plan = memory.plan[1:] if memory.plan and memory.plan[0] == move else ()
    idle = 0 if progressed else memory.idle if move in _ALWAYS_NEW else memory.idle + 1
    return Memory(
        visited=memory.visited | {hash(after)},
        plan=plan,
        idle=idle,
        since_solve=memory.since_solve + 1,
        lost=memory.lost,
    )


def wants_solver(level: Level, memory: Memory, state: GameState) -> bool:
    """Whether the bot asks the solver before its next move (levels 3 to 5, with no line to
    follow and no proof the game is lost, every ``RESOLVE_EVERY`` moves)."""
    return (
        level.solver
        and not memory.plan
        and not memory.lost
        and memory.since_solve >= RESOLVE_EVERY
        and not is_over(state)
    )


def with_solution(memory: Memory, solution: Solution) -> Memory:
    """The memory once the solver answered: its winning line to follow, if it proved one."""
    plan = solution.moves if solution.status == Status.WON else ()
    return replace(memory, plan=plan, since_solve=0, lost=solution.status == Status.UNWINNABLE)


@dataclass(frozen=True, slots=True)
class Choice:
    """The bot's next action: ``move``, or None when nothing new is left to try (it waits, or
    gives up once nobody needs it to race on); ``slip``: not the move it meant (a mistake)."""

    move: str | None
    slip: bool = False


def choose(
    state: GameState, level: Level, memory: Memory, rng: random.Random, *, company: bool = False
) -> Choice:
    """The bot's next move in ``state``: the plan's or the heuristic's, now and then a slip;
    after ``PATIENCE`` moves of shuffling, None, or with ``company`` (a person still races)
    only a deal, a redeal or a card going up; None when every legal move goes back to a
    position it has been in. Always a legal move (or None)."""
    if memory.idle >= PATIENCE and not company:
        return Choice(None)
    fresh = [move for move in sorted(legal_moves(state)) if _worth(state, move, memory)]
    if not fresh:
        return Choice(None)
    meant = memory.plan[0] if memory.plan and memory.plan[0] in fresh else None
    if meant is None:
        heuristic = good_move(state)
        meant = heuristic if heuristic in fresh else rng.choice(fresh)
    others = [move for move in fresh if move != meant]
    if others and rng.random() < level.slip:
        return Choice(rng.choice(others), slip=True)
    return Choice(meant)


def _worth(state: GameState, move: str, memory: Memory) -> bool:
    """Whether ``move`` is worth playing: it reaches a position not seen yet, and once the bot
    has shuffled for ``PATIENCE`` moves (keeping company), it deals, redeals or puts a card
    up."""
    if move in _ALWAYS_NEW:
        return True
    after = apply_move(state, move)
    if hash(after) in memory.visited:
        return False
    return memory.idle < PATIENCE or foundation_count(after) > foundation_count(state)


Solve = Callable[[GameState, int], Solution]
"""The solver: a position and a budget of nodes (shared.solver.solve, or the server's pool)."""


@dataclass(frozen=True, slots=True)
class Played:
    """A bot's game played off the server: won or not, the time it took (the sum of its think
    times), its moves and slips, and how often it asked the solver."""

    won: bool
    elapsed_ms: int
    moves: int
    slips: int
    solves: int
    foundation: int  # cards on the foundations at the end
    line: tuple[str, ...] = ()  # the moves played, in order (bench.analysis analyses them)


def play_out(
    start: GameState,
    level: Level,
    pace: Pace,
    rng: random.Random,
    solve: Solve,
    *,
    max_moves: int = 2000,
) -> Played:
    """A whole game by the bot, on a simulated clock: what bench/bots.py measures, and what
    the tests play. The runner on the server takes the same steps with real time."""
    state, memory = start, Memory(frozenset({hash(start)}))
    elapsed = moves = slips = solves = 0
    line: list[str] = []
    while not is_over(state) and moves < max_moves:
        if wants_solver(level, memory, state):
            memory = with_solution(memory, solve(state, level.solver_nodes))
            solves += 1
        choice = choose(state, level, memory, rng)
        elapsed += think_ms(level, pace, rng)
        if choice.move is None:
            break
        after = apply_move(state, choice.move)
        memory = remember(memory, state, choice.move, after)
        state = after
        line.append(choice.move)
        moves += 1
        slips += choice.slip
    return Played(
        is_won(state), elapsed, moves, slips, solves, foundation_count(state), tuple(line)
    )
