"""Whether a race was fair, checked by anyone from what the server published (docs/protocol.md,
"Fairness"): the commitment made before the race against the seed and salt revealed after it,
then every racer's game as served against the deal that seed gives.

A racer's game is checked to the last card: its layout and stock size must be the seed's deal,
and each move, replayed on the seed's deck, must be legal and turn up exactly the cards the
server said it turned. So a server that dealt one racer another deck, or showed a card that was
not there, is caught; a record whose seed, salt, deal or moves were altered is too.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from shared.deal import DEAL_VERSION, deal_deck
from shared.errors import ArenaError, IllegalMove
from shared.events import GAME_STARTED, MOVED, RESIGNED, check_event, start_event
from shared.export import ExportedGame
from shared.game import apply_move_revealing, lay_out, resign
from shared.protocol import commitment
from shared.state import GameState
from shared.views import public_event

__all__ = ["Outcome", "RaceRecord", "Verdict", "verify_export", "verify_race"]


class Outcome(enum.Enum):
    FAIR = "fair"
    NOT_FAIR = "not fair"
    UNCHECKABLE = "cannot be checked"


@dataclass(frozen=True)
class Verdict:
    """The outcome, the one check that failed (or why nothing could be checked) and, in plain
    words, every check that passed before it."""

    outcome: Outcome
    reason: str | None = None
    passed: tuple[str, ...] = ()

    @property
    def fair(self) -> bool:
        return self.outcome is Outcome.FAIR

    def __str__(self) -> str:
        """``fair``, ``not fair: <which check failed>`` or ``cannot be checked: <why>``."""
        return self.outcome.value + (f": {self.reason}" if self.reason else "")


@dataclass(frozen=True)
class RaceRecord:
    """What a race published: its commitment from the start, the seed and salt its end revealed
    (``None`` when nothing was revealed), and each racer's public game events by name."""

    variant: str
    commitment: str | None
    seed: str | None
    salt: str | None
    games: Mapping[str, Sequence[Mapping[str, Any]]]


class _Unfair(Exception):
    """One check failed: the verdict's reason."""


class _Unknown(Exception):
    """Something the check needs is not there."""


def verify_race(race: RaceRecord) -> Verdict:
    """The verdict on a race: the first check that fails decides it."""
    passed: list[str] = []
    try:
        deck = _committed_deck(race, passed)
        moves = sum(_check_game(race.variant, deck, name, events) for name, events in _games(race))
    except _Unfair as failed:
        return Verdict(Outcome.NOT_FAIR, str(failed), tuple(passed))
    except _Unknown as missing:
        return Verdict(Outcome.UNCHECKABLE, str(missing), tuple(passed))
    racers = len(race.games)
    passed.append(
        f"{_plural(racers, 'racer')} dealt the seed's deal (deal version {DEAL_VERSION})"
        if racers > 1
        else f"the game dealt the seed's deal (deal version {DEAL_VERSION})"
    )
    passed.append(f"{_plural(moves, 'move')} replayed on the seed's deck, every card as shown")
    return Verdict(Outcome.FAIR, None, tuple(passed))


def verify_export(game: ExportedGame) -> Verdict:
    """The verdict on one exported game (docs/records.md, "Text export"): its record names the
    commitment, seed and salt once the race revealed them."""
    head = game.header
    variant = str(game.events[0]["variant"]) if game.events else ""
    race = RaceRecord(variant, head.commitment, head.seed, head.salt, {head.player: game.events})
    return verify_race(race)


def _games(race: RaceRecord) -> list[tuple[str, Sequence[Mapping[str, Any]]]]:
    if not race.games:
        raise _Unknown("no racer's game was served")
    return sorted(race.games.items())


def _committed_deck(race: RaceRecord, passed: list[str]) -> list[str]:
    """The deck the revealed seed deals, once the seed and salt are shown to be the ones
    committed to before the race."""
    if race.commitment is None:
        raise _Unknown("no commitment was published for this race")
    if race.seed is None or race.salt is None:
        raise _Unknown(
            "no seed was revealed (a deal from an explicit deck, a daily challenge before its "
            "day is over, or a race not over yet)"
        )
    if commitment(race.seed, race.salt) != race.commitment:
        raise _Unfair(
            f"the revealed seed {race.seed!r} and salt {race.salt} do not match the commitment "
            f"{race.commitment} published before the race"
        )
    passed.append(f"the commitment {race.commitment} matches seed {race.seed!r} and salt")
    try:
        return deal_deck(race.variant, race.seed)
    except ArenaError as exc:
        raise _Unfair(
            f"the race's variant {race.variant!r} cannot be dealt: {exc.reason}"
        ) from None


def _check_game(
    variant: str, deck: list[str], name: str, events: Sequence[Mapping[str, Any]]
) -> int:
    """The number of moves of one racer's game, each replayed on the seed's deck."""
    state = _check_start(variant, deck, name, events)
    moves = 0
    for number, event in enumerate(events[1:], 2):
        kind = _kind(event, name, number)
        if kind == MOVED:
            moves += 1
            state = _check_move(state, event, name, moves)
        elif kind == RESIGNED:
            try:
                state = resign(state)
            except IllegalMove:
                raise _Unfair(f"{name}'s game goes on after it ended (event {number})") from None
        else:
            raise _Unfair(f"{name}'s game is dealt twice (event {number})")
    return moves


def _kind(event: Mapping[str, Any], name: str, number: int) -> str:
    try:
        return check_event(event)
    except ArenaError as exc:
        raise _Unfair(f"{name}'s event {number} does not read: {exc.reason}") from None


def _check_start(
    variant: str, deck: list[str], name: str, events: Sequence[Mapping[str, Any]]
) -> GameState:
    if not events or _kind(events[0], name, 1) != GAME_STARTED:
        raise _Unfair(f"{name}'s game does not begin with its deal")
    start = events[0]
    if start.get("variant") != variant:
        raise _Unfair(f"{name} played {start.get('variant')!r}, the race is {variant!r}")
    if start.get("deal_version") != DEAL_VERSION:
        raise _Unknown(
            f"{name}'s deal is of deal version {start.get('deal_version')!r}; this code deals "
            f"version {DEAL_VERSION}"
        )
    dealt = public_event(start_event(variant, deck, at=0))
    shown = start.get("layout")
    if not isinstance(shown, Mapping):
        raise _Unfair(f"{name}'s deal shows no layout")
    for kind in ("tableau", "reserve"):
        expected, got = dealt["layout"][kind], list(shown.get(kind, []))
        for index, (want, have) in enumerate(zip(expected, got, strict=False)):
            if _plain(want) != _plain(have):
                pile = f"{'t' if kind == 'tableau' else 'r'}{index + 1}"
                raise _Unfair(
                    f"{name} was dealt {_cards(have)} on {pile}, the seed deals {_cards(want)}"
                )
        if len(expected) != len(got):
            raise _Unfair(f"{name}'s deal has {len(got)} {kind} piles, the seed's {len(expected)}")
    if start.get("stock_count") != dealt["stock_count"]:
        raise _Unfair(
            f"{name}'s stock holds {start.get('stock_count')!r} cards, the seed's deal "
            f"{dealt['stock_count']}"
        )
    return lay_out(variant, deck)


def _check_move(state: GameState, event: Mapping[str, Any], name: str, number: int) -> GameState:
    move = event.get("move")
    try:
        after, revealed = apply_move_revealing(state, move)  # type: ignore[arg-type]
    except (IllegalMove, TypeError):
        raise _Unfair(f"{name}'s move {number} ({move}) is not legal on the seed's deal") from None
    shown = _plain(event.get("revealed"))
    if shown != revealed:
        raise _Unfair(
            f"{name}'s move {number} ({move}) turned up {_cards(shown)}, the seed's deck "
            f"{_cards(revealed)}"
        )
    return after


def _plain(value: object) -> object:
    """A pile or card list as a list (msgpack and JSON may give tuples or lists)."""
    return list(value) if isinstance(value, list | tuple) else value


def _cards(cards: object) -> str:
    if isinstance(cards, list | tuple):
        return " ".join(str(c) if c is not None else "-" for c in cards) or "nothing"
    return "nothing" if cards is None else str(cards)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
