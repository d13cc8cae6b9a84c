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
- **the result against the deal**: won deals (the analysis proved a line from the deal) that
  the player won; a person loses some of them, a solver none.
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

FLAT_TIMING = 0.10
"""A mean correlation of think time with difficulty at or below this: the times do not follow
the positions (a person's are clearly positive: a position with more moves takes longer)."""

WEAK_TIMING = 0.20
"""At or below this (above ``FLAT_TIMING``): timing that follows the position only faintly."""

MIN_WON_DEALS = 5
"""Won deals an account needs before its conversion of them counts."""

PERFECT_CONVERSION = 0.95
"""Won deals won at least this share: what a solver does (the strongest bot converts about
four in five; docs/bots.md)."""

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
"""Evidence points to each level. Flat timing (4) alone is "likely": nothing a person does
makes every think time ignore the position over four games; with perfect conversion of the won
deals (2) it is "assisted". Conversion alone (at most 2) is only "unclear": strong people win
their won deals too."""

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
    timing: float | None  # mean time-against-difficulty correlation
    won_deals: int
    won_deals_won: int
    focus_lost: int
    last_at: int = 0  # when the latest of those games was assessed

    def wire(self) -> dict[str, Any]:
        return {
            "level": self.level.value,
            "points": self.points,
            "reasons": list(self.reasons),
            "games": self.games,
            "timing": self.timing,
            "won_deals": self.won_deals,
            "won_deals_won": self.won_deals_won,
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
    rhos = [g.time_difficulty for g in chosen if g.time_difficulty is not None]
    timing = sum(rhos) / len(rhos) if rhos else None
    if timing is not None and len(rhos) >= MIN_TIMED_GAMES:
        if timing <= FLAT_TIMING:
            scored.append((TIMING_POINTS["flat"], _timing_reason("flat", timing, len(rhos))))
        elif timing <= WEAK_TIMING:
            scored.append((TIMING_POINTS["weak"], _timing_reason("weak", timing, len(rhos))))
    decided = [g for g in chosen if g.deal == "won"]
    won = sum(1 for g in decided if g.won)
    if len(decided) >= MIN_WON_DEALS:
        share = won / len(decided)
        what = f"won {won} of {len(decided)} won deals"
        if share >= PERFECT_CONVERSION:
            scored.append((CONVERSION_POINTS["perfect"], what))
        elif share >= HIGH_CONVERSION:
            scored.append((CONVERSION_POINTS["high"], what))
    streaks = [g for g in chosen if g.even_streak >= EVEN_STREAK]
    if streaks:
        longest = max(g.even_streak for g in streaks)
        scored.append((STREAK_POINTS, f"{longest} near-equal think times in a row"))
    spreads = [g.think_spread for g in chosen if g.moves >= MIN_TIMED_MOVES]
    if len(spreads) >= MIN_TIMED_GAMES and sum(spreads) / len(spreads) < STEADY_SPREAD:
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
        won_deals=len(decided),
        won_deals_won=won,
        focus_lost=focus,
        last_at=max((g.at for g in chosen), default=0),
    )


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _timing_reason(how: str, timing: float, games: int) -> str:
    return f"think time ignores the position ({how}: {timing:+.2f} over {games} games)"


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
        "won": game.won,
        "kept": game.kept,
        "judged": game.judged,
        "focus_lost": game.focus_lost,
    }
