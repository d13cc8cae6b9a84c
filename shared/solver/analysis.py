"""A finished game analysed: the verdict of every position it went through, and the move, if
any, that threw a won position away.

Two facts of the rules make one search settle many positions: a position from which a legal
move leads to a won position is won itself (play that move, then the line), so **won
propagates backwards** along a game; and whatever follows a lost position is lost, so **lost
propagates forwards**. The verdicts of a game's positions are therefore "won" up to some
position, "lost" from some later one, and "unknown" between; at most one move goes from a won
position straight to a lost one, the move that lost the game.

`analyse` finds those two boundaries by searching few positions: the last position first (a
game stopped by the clock or a resignation may still be won from there: then every position
is), the first (a deal lost from the start), then bisection between the last position known won
and the first known lost, the latest gap first (late positions are settled sooner). What one
search settles is shared with the others:

- a winning line found from position k is walked, and the latest position of the game that
  lies on it (the player's next move the line's first, or the same position reached another
  way) is won by the rest of the line, with no search of its own;
- positions the game went through more than once (Swiss play returns to a position) are
  settled together: a position and its repetition have one verdict.

Each search gets at most `search_nodes` of the game's `max_nodes`; a position the budget does
not settle stays "unknown", never a guess. Pure: the budget counts positions, not time, so an
analysis is the same on every machine.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from shared.game import apply_move
from shared.solver.search import solve
from shared.solver.verdict import Status
from shared.state import GameState

# Raised whenever a change to the solver or to this module may change a verdict or a line, so
# an analysis stored with an older version can be told apart and rebuilt.
SOLVER_VERSION = 1
# The game's budget the server analyses with unless told otherwise (--analysis-max-nodes), in
# positions expanded: about 11 µs each in Quadrennial and 35 µs in Swiss. Quadrennial's keeps a
# game within a CPU-second (bench.analysis, docs/benchmarks.md).
DEFAULT_MAX_NODES = {"quadrennial": 80_000, "swiss": 40_000}
# A search's share of the game's budget, when no per-search budget is given: the game's
# boundaries need several searches, and one hard position must not take them all.
SEARCH_SHARE = 4


class Verdict(StrEnum):
    """What the analysis knows of one position."""

    WON = "won"  # a winning line from it is known
    LOST = "lost"  # proved: no line from it wins
    UNKNOWN = "unknown"  # the budget did not settle it


@dataclass(frozen=True, slots=True)
class MoveReview:
    """One move of the game: its number (1 for the first), the verdicts of the positions
    before and after it."""

    number: int
    move: str
    before: Verdict
    after: Verdict

    @property
    def threw_away(self) -> bool:
        """True for the move that turned a won position into a lost one."""
        return self.before is Verdict.WON and self.after is Verdict.LOST


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    """The analysis of one game: positions 0 (the deal) to len(moves) (after the last move);
    those up to `won_until` are won, those from `lost_from` on lost, those between unknown.
    `line` wins from position `won_until` (empty when it is the last one and the game won)."""

    moves: tuple[str, ...]
    won_until: int  # -1: no position known won
    lost_from: int  # len(moves) + 1: no position known lost
    line: tuple[str, ...]
    nodes: int  # positions the searches expanded, in all
    searches: int  # the searches run (the rest was settled by sharing)
    max_nodes: int  # the game's budget
    version: int = SOLVER_VERSION

    def __post_init__(self) -> None:
        if not -1 <= self.won_until < self.lost_from <= len(self.moves) + 1:
            raise ValueError("an analysis's won positions come before its lost ones")
        if self.line and self.won_until < 0:
            raise ValueError("a winning line needs a won position")

    @property
    def positions(self) -> int:
        return len(self.moves) + 1

    def verdict(self, position: int) -> Verdict:
        """The verdict of position `position` (0: the deal)."""
        if not 0 <= position < self.positions:
            raise IndexError(position)
        if position <= self.won_until:
            return Verdict.WON
        if position >= self.lost_from:
            return Verdict.LOST
        return Verdict.UNKNOWN

    @property
    def deal(self) -> Verdict:
        """Could the deal be won: the verdict of its first position."""
        return self.verdict(0)

    @property
    def losing_move(self) -> int | None:
        """The number (1 for the first) of the move that threw a won game away, if one did."""
        if self.won_until >= 0 and self.lost_from == self.won_until + 1 < self.positions:
            return self.lost_from
        return None

    def reviews(self) -> list[MoveReview]:
        """Every move with the verdicts before and after it."""
        return [
            MoveReview(i + 1, move, self.verdict(i), self.verdict(i + 1))
            for i, move in enumerate(self.moves)
        ]

    @property
    def settled(self) -> int:
        """Positions settled (won or lost)."""
        return self.won_until + 1 + self.positions - self.lost_from


def position_key(state: GameState) -> Hashable:
    """Equal for the same position, however many moves it took (the exact position: a line
    names piles, so no symmetry is folded in)."""
    return (
        state.tableau,
        state.reserve,
        state.stock,
        state.waste,
        state.foundations,
        state.redeals_left,
    )


def positions_of(start: GameState, moves: Sequence[str]) -> list[GameState]:
    """The positions a game goes through: `start`, then after each move (IllegalMove if one
    is not legal)."""
    out = [start]
    for move in moves:
        out.append(apply_move(out[-1], move))
    return out


def winning_line(
    analysis: GameAnalysis, positions: Sequence[GameState], position: int
) -> tuple[str, ...] | None:
    """A line that wins from `position` (None unless it is won): the game's own moves to the
    last won position, with every detour that came back to a position cut out, then the line
    found there. `positions` are the game's (`positions_of`)."""
    if analysis.verdict(position) is not Verdict.WON:
        return None
    last = analysis.won_until
    path: list[int] = []  # positions on the way, detours cut: the latest visit of each kept
    keys: list[Hashable] = []
    at: dict[Hashable, int] = {}  # key -> its index in path
    for k in range(position, last + 1):
        key = position_key(positions[k])
        earlier = at.get(key)
        if earlier is not None:
            for gone in keys[earlier:]:
                del at[gone]
            del path[earlier:], keys[earlier:]
        at[key] = len(path)
        path.append(k)
        keys.append(key)
    moves = tuple(analysis.moves[k] for k in path[:-1])
    return moves + analysis.line


def analyse(
    start: GameState,
    moves: Sequence[str],
    *,
    max_nodes: int,
    search_nodes: int | None = None,
) -> GameAnalysis:
    """The analysis of the game `moves` played from `start` (its deal, stock known), within
    `max_nodes` positions expanded in all and `search_nodes` (default a quarter of the budget)
    per search."""
    if max_nodes < 0:
        raise ValueError(f"max_nodes must be >= 0, not {max_nodes}")
    per_search = max(1, max_nodes // SEARCH_SHARE) if search_nodes is None else search_nodes
    return _Analyser(positions_of(start, moves), tuple(moves), max_nodes, per_search).run()


class _Analyser:
    """One game's boundaries, searched for within its budget."""

    def __init__(
        self, positions: list[GameState], moves: tuple[str, ...], max_nodes: int, per_search: int
    ) -> None:
        self.positions = positions
        self.moves = moves
        self.max_nodes = max_nodes
        self.per_search = per_search
        self.last = len(moves)
        self.won_until = -1
        self.lost_from = self.last + 1
        self.line: tuple[str, ...] = ()
        self.nodes = 0
        self.searches = 0
        self.tried: set[int] = set()
        self.same: dict[Hashable, list[int]] = {}
        for k, state in enumerate(positions):
            self.same.setdefault(position_key(state), []).append(k)

    def run(self) -> GameAnalysis:
        if self.positions[-1].won:
            self.won_until = self.last
        else:
            for k in _Bisection(self):
                if self.nodes >= self.max_nodes:
                    break
                self._search(k)
        return GameAnalysis(
            self.moves,
            self.won_until,
            self.lost_from,
            self.line,
            self.nodes,
            self.searches,
            self.max_nodes,
        )

    def _search(self, k: int) -> None:
        budget = min(self.per_search, self.max_nodes - self.nodes)
        solution = solve(self.positions[k], max_nodes=budget)
        self.nodes += solution.nodes
        self.searches += 1
        twins = self.same[position_key(self.positions[k])]
        self.tried.update(twins)
        if solution.status is Status.WON:
            self._won(k, solution.moves)
        elif solution.status is Status.UNWINNABLE:
            self.lost_from = min(self.lost_from, twins[0])

    def _won(self, k: int, line: tuple[str, ...]) -> None:
        """Position k is won by `line`: so is the latest position of the game on the line."""
        along: dict[Hashable, int] = {}
        state = self.positions[k]
        for i, move in enumerate(line):
            along.setdefault(position_key(state), i)
            state = apply_move(state, move)
        for j in range(self.lost_from - 1, self.won_until, -1):
            at = along.get(position_key(self.positions[j]))
            if at is not None:
                self.won_until = j
                self.line = line[at:]
                return


class _Bisection:
    """The positions to search, in order: the last, the first, then the middle of the latest
    gap between positions already searched (or settled): late positions are the smaller ones,
    settled sooner, and a won one settles every position before it; a search the budget did
    not settle splits its gap rather than send the next search to its equally hard
    neighbour."""

    def __init__(self, analyser: _Analyser) -> None:
        self.a = analyser
        self.opening = [analyser.last, 0]

    def __iter__(self) -> _Bisection:
        return self

    def __next__(self) -> int:
        a = self.a
        while self.opening:
            k = self.opening.pop(0)
            if a.won_until < k < a.lost_from and k not in a.tried:
                return k
        inside = sorted(k for k in a.tried if a.won_until < k < a.lost_from)
        points = [a.won_until, *inside, a.lost_from]
        for low, high in reversed(list(itertools.pairwise(points))):
            if high - low > 1:
                return (low + high) // 2
        raise StopIteration
