"""The fair-play assessment, pure: one rated game's signals from what the server recorded (move
times, the positions, the analysis, the result, the focus the browser lost), and an account's
level folded from its last rated games, with the reasons that moved it (docs/operations.md,
"Fair-play assessment"). It flags; only a moderator acts.

The signals, and why each:

- **time against difficulty**: a person thinks longer where there is more to choose from; a
  player copying a solver's line takes about as long for every move. Measured as Spearman's rank
  correlation between each think time and the number of legal moves before it, over the moves
  played once the deck is known (after the first pass through the stock, when a solver can
  see every card; the whole game in a variant without a pass).
- **the result against the position**: games whose position was won once the deck was known
  (the analysis proved a line from it) that the player won; a person throws some away, a
  solver none (a cheat's greedy first pass may lose a won deal before the deck is known: the
  deal alone says less).
- **agreement with winning play**: moves from a won position that kept it won, on positions
  the analysis settled.
- **steadiness**: the spread of think times (coefficient of variation), and the longest streak
  of near-equal ones (a script with a fixed delay).
- **focus lost**: how often the browser page lost focus while racing (the web client reports
  it; a terminal sends none, so its absence proves nothing).

An unanalysed game (no budget, or not settled) gives "unknown" for the analysis signals and is
assessed from its times alone.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any

from server.referee.domain.events import GameAssessed

REDEAL = "redeal"
"""The move that starts a new pass through a Quadrennial stock: from it on the deck is known."""

RECENT_GAMES = 20
"""An account's level is folded over its last this many assessed games: enough for the
signals to add up (the bench's goal is set at 20), recent enough that a reformed account clears."""

EVEN_TOLERANCE = 0.08
"""Two think times are near-equal within this share of the earlier (and 60 ms): a person's
times jump around by far more than that from move to move."""
EVEN_FLOOR_MS = 60

MIN_TIMED_MOVES = 12
"""Fewer timed moves than this in a game and its time-against-difficulty correlation is
noise: the game gives none."""

MIN_TIMED_GAMES = 4
"""Games with a correlation an account needs before its timing counts at all."""

PERSON_TIMING = 0.12
"""The weakest correlation of think time with the position a person is taken to show: people's
times follow the position clearly (0.33 on average in bench.fairplay's model of people, 0.12 for
its least sensitive); a script's do not (0). An assumption to check against real games."""

FLAT_Z = 2.33
"""Timing is "flat" when even its upper 99 % bound stays under ``PERSON_TIMING``: an account
whose true timing is a person's weakest is called flat at most one time in a hundred, however
few its games (fewer games, a wider bound, a lower estimate needed)."""

MIN_WON_POSITIONS = 5
"""Games won once the deck was known an account needs before its conversion counts."""

PERFECT_CONVERSION = 0.95
"""Positions won once the deck was known, won at least this share: what a solver does (a
person throws some away; the strongest bot, who plans with a budget, about one in five)."""

HIGH_CONVERSION = 0.85
"""Won at least this share (below ``PERFECT_CONVERSION``): strong, worth a second signal."""

EVEN_STREAK = 8
"""A streak of this many near-equal think times in a game: a script's delay."""

STEADY_SPREAD = 0.25
"""Think times whose spread (standard deviation over mean) is under this across the games:
a metronome; a person's is far above (0.5 and more)."""

FOCUS_PER_GAME = 2.0
"""Focus lost this many times a game on average (over the games that report it): looking
elsewhere while racing, mostly a second window."""

MIN_FOCUS_GAMES = 3
"""Games with focus lost an account needs before the focus signal counts."""


class Level(Enum):
    """An account's fair-play level, from its last ``RECENT_GAMES`` assessed games."""

    CLEAN = "clean"
    UNCLEAR = "unclear"
    LIKELY = "likely assisted"
    ASSISTED = "assisted"

    @property
    def rank(self) -> int:
        return _RANKS[self]

    @property
    def flagged(self) -> bool:
        """An account at this level enters the moderators' queue by itself."""
        return self.rank >= Level.LIKELY.rank


_RANKS = {Level.CLEAN: 0, Level.UNCLEAR: 1, Level.LIKELY: 2, Level.ASSISTED: 3}

UNCLEAR_POINTS = 1
LIKELY_POINTS = 4
ASSISTED_POINTS = 6
"""Evidence points to each level. Flat timing (4) alone is "likely": a person's think times
follow the position, measurably so over enough moves; with perfect conversion of the won
positions (2) it is "assisted". Conversion alone (at most 2) is only "unclear": strong people
win their won positions too."""

TIMING_POINTS = {"flat": 4, "weak": 2}
CONVERSION_POINTS = {"perfect": 2, "high": 1}
STEADY_POINTS = 1
STREAK_POINTS = 1
FOCUS_POINTS = 1


# ---- one game ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Played:
    """What the server recorded of one rated game, ready to assess: the think time before
    each move (ms), the legal moves before each, the moves, whether the game was won, and
    the analysis' boundaries (None when the game was not analysed)."""

    think_ms: tuple[int, ...]
    choices: tuple[int, ...]
    moves: tuple[str, ...]
    won: bool
    deal: str  # the analysis' verdict of the deal: won, lost or unknown
    won_until: int | None = None  # positions up to it won (None: not analysed)
    lost_from: int | None = None
    focus_lost: int = 0


def think_times(start_at: int, move_ats: Sequence[int]) -> tuple[int, ...]:
    """The time before each move: from the game's start, then from the previous move."""
    times, last = [], start_at
    for at in move_ats:
        times.append(max(0, at - last))
        last = at
    return tuple(times)


def known_from(moves: Sequence[str]) -> int:
    """The index of the first move played once the whole deck is known: after the first
    redeal (0 when there is none: the whole game counts)."""
    for i, move in enumerate(moves):
        if move == REDEAL:
            return i + 1
    return 0


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rank correlation; None when either side does not vary."""
    rx, ry = ranks(xs), ranks(ys)
    n = len(rx)
    if n < 2:
        return None
    mx, my = sum(rx) / n, sum(ry) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)


def even_streak(times: Sequence[int]) -> int:
    """The longest run of think times each near-equal to the one before it."""
    best = run = 1 if times else 0
    for before, now in itertools.pairwise(times):
        if abs(now - before) <= max(EVEN_FLOOR_MS, EVEN_TOLERANCE * before):
            run += 1
            best = max(best, run)
        else:
            run = 1
    return best


def known_verdict(played: Played, position: int) -> str:
    """The analysis' verdict of the position once the deck was known (won, lost, unknown)."""
    if played.won_until is None or played.lost_from is None:
        return "unknown"
    if position <= played.won_until:
        return "won"
    return "lost" if position >= played.lost_from else "unknown"


def kept_and_judged(played: Played) -> tuple[int, int]:
    """Moves from a won position that kept it won, and moves from a won position into a
    settled one (the analysis' unknown positions count neither way)."""
    if played.won_until is None or played.lost_from is None or played.won_until < 0:
        return 0, 0
    kept = played.won_until
    lost = played.lost_from == played.won_until + 1 <= len(played.moves)
    return kept, kept + int(lost)


def assess(
    played: Played,
    *,
    at: int,
    room: str,
    player: str,
    account: str,
    name: str,
    variant: str,
    kind: str,
) -> GameAssessed:
    """One game's assessment: its signals, as the event the referee keeps."""
    times = played.think_ms
    mean = sum(times) / len(times) if times else 0.0
    spread = math.sqrt(sum((t - mean) ** 2 for t in times) / len(times)) / mean if mean > 0 else 0.0
    start = known_from(played.moves)
    timed_t, timed_c = times[start:], played.choices[start:]
    rho = spearman(timed_t, timed_c) if len(timed_t) >= MIN_TIMED_MOVES else None
    kept, judged = kept_and_judged(played)
    return GameAssessed(
        at=at,
        room=room,
        player=player,
        account=account,
        name=name,
        variant=variant,
        kind=kind,
        moves=len(played.moves),
        think_mean_ms=round(mean),
        think_spread=round(spread, 3),
        even_streak=even_streak(times),
        timed_moves=len(timed_t),
        time_difficulty=None if rho is None else round(rho, 3),
        deal=played.deal,
        known=known_verdict(played, start),
        won=played.won,
        kept=kept,
        judged=judged,
        focus_lost=played.focus_lost,
    )


# ---- an account's level -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Standing:
    """An account's level over its last games, the evidence points, the reasons that moved it
    (strongest first) and the figures behind them."""

    level: Level
    points: int
    reasons: tuple[str, ...]
    games: int
    timing: float | None  # pooled time-against-difficulty correlation
    known_won: int  # games whose position was won once the deck was known
    known_won_won: int  # of them, those the player won
    focus_lost: int
    last_at: int = 0  # when the latest of those games was assessed

    def wire(self) -> dict[str, Any]:
        return {
            "level": self.level.value,
            "points": self.points,
            "reasons": list(self.reasons),
            "games": self.games,
            "timing": self.timing,
            "known_won": self.known_won,
            "known_won_won": self.known_won_won,
            "focus_lost": self.focus_lost,
        }

    def evidence(self) -> str:
        """The evidence in one line: the level and its top reasons."""
        top = "; ".join(self.reasons[:3]) or "nothing stands out"
        return f"{self.level.value} ({self.games} games): {top}"


def recent(games: Iterable[GameAssessed], last: int = RECENT_GAMES) -> list[GameAssessed]:
    """The account's last ``last`` games, by when they were assessed (then room and player,
    and the rest, so the choice is the same whatever order they come in)."""
    ordered = sorted(games, key=lambda g: (g.at, g.room, g.player, repr(g)))
    return ordered[-last:] if last > 0 else []


def level_of(points: int) -> Level:
    if points >= ASSISTED_POINTS:
        return Level.ASSISTED
    if points >= LIKELY_POINTS:
        return Level.LIKELY
    if points >= UNCLEAR_POINTS:
        return Level.UNCLEAR
    return Level.CLEAN


def standing(games: Iterable[GameAssessed], last: int = RECENT_GAMES) -> Standing:
    """The account's level over its last ``last`` games. Apart from which games are the last,
    order-independent: every figure is a sum or a mean over the games."""
    chosen = recent(games, last)
    scored: list[tuple[int, str]] = []
    timed = [
        (g.time_difficulty, g.timed_moves - 3) for g in chosen if g.time_difficulty is not None
    ]
    weight = sum(w for _, w in timed)
    # Each game's correlation weighed by its moves (Fisher's n - 3): the pooled estimate (an
    # exactly rounded sum, the same in any order), and its standard error under none.
    timing = math.fsum(r * w for r, w in timed) / weight if timed and weight > 0 else None
    if timing is not None and len(timed) >= MIN_TIMED_GAMES:
        bound = timing + FLAT_Z / math.sqrt(weight)
        if bound <= PERSON_TIMING:
            scored.append((TIMING_POINTS["flat"], _timing_reason("flat", timing, chosen, timed)))
        elif timing <= PERSON_TIMING:
            scored.append((TIMING_POINTS["weak"], _timing_reason("weak", timing, chosen, timed)))
    decided = [g for g in chosen if g.known == "won"]
    won = sum(1 for g in decided if g.won)
    if len(decided) >= MIN_WON_POSITIONS:
        share = won / len(decided)
        what = f"won {won} of {len(decided)} games won once the deck was known"
        if share >= PERFECT_CONVERSION:
            scored.append((CONVERSION_POINTS["perfect"], what))
        elif share >= HIGH_CONVERSION:
            scored.append((CONVERSION_POINTS["high"], what))
    streaks = [g for g in chosen if g.even_streak >= EVEN_STREAK]
    if streaks:
        longest = max(g.even_streak for g in streaks)
        scored.append((STREAK_POINTS, f"{longest} near-equal think times in a row"))
    spreads = [g.think_spread for g in chosen if g.moves >= MIN_TIMED_MOVES]
    if len(spreads) >= MIN_TIMED_GAMES and _mean(spreads) < STEADY_SPREAD:
        scored.append((STEADY_POINTS, f"steady think times (spread {_mean(spreads):.2f})"))
    focused = [g.focus_lost for g in chosen if g.focus_lost > 0]
    focus = sum(focused)
    if len(focused) >= MIN_FOCUS_GAMES and focus / len(chosen) >= FOCUS_PER_GAME:
        scored.append((FOCUS_POINTS, f"focus lost {focus} times in {len(chosen)} games"))
    scored.sort(key=lambda s: (-s[0], s[1]))
    points = sum(p for p, _ in scored)
    return Standing(
        level=level_of(points),
        points=points,
        reasons=tuple(reason for _, reason in scored),
        games=len(chosen),
        timing=None if timing is None else round(timing, 3),
        known_won=len(decided),
        known_won_won=won,
        focus_lost=focus,
        last_at=max((g.at for g in chosen), default=0),
    )


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)  # exactly rounded: the same in any order


def _timing_reason(
    how: str, timing: float, chosen: Sequence[GameAssessed], timed: Sequence[tuple[float, int]]
) -> str:
    moves = sum(g.timed_moves for g in chosen if g.time_difficulty is not None)
    where = f"{len(timed)} games, {moves} moves"
    return f"think time ignores the position ({how}: {timing:+.2f} over {where})"


def game_row(game: GameAssessed) -> dict[str, Any]:
    """One assessed game as moderators read it (``mod_account``'s ``games``)."""
    return {
        "at": game.at,
        "room": game.room,
        "player": game.player,
        "variant": game.variant,
        "kind": game.kind,
        "moves": game.moves,
        "think_mean_ms": game.think_mean_ms,
        "think_spread": game.think_spread,
        "even_streak": game.even_streak,
        "time_difficulty": game.time_difficulty,
        "deal": game.deal,
        "known": game.known,
        "won": game.won,
        "kept": game.kept,
        "judged": game.judged,
        "focus_lost": game.focus_lost,
    }
