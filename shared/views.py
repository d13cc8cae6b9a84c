"""Public views and public events: what a player or spectator may see, never the stock order.

A public `game_started` carries the initial visible layout instead of the deck; every `moved`
event already names the cards it turned up ("revealed"), which is all the public fold needs.
Invariant: public_fold(map(public_event, events)) == public_view(fold(events)).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from shared.cards import CARDS
from shared.errors import CorruptEvent, IllegalMove
from shared.events import GAME_STARTED, RESIGNED, check_event
from shared.game import apply_move_revealing, is_over, lay_out, legal_moves, resign
from shared.state import EMPTY_FOUNDATIONS, GameState, slot_setter
from shared.variants import QUADRENNIAL, SWISS, VARIANTS


@dataclass(frozen=True, slots=True, init=False)
class PublicView:
    """The visible board: piles bottom to top, foundations in suit order C D H S."""

    variant: str
    tableau: tuple[tuple[str, ...], ...]  # Swiss t1..t9; () for Quadrennial
    reserve: tuple[str | None, ...]  # Quadrennial r1..r8; () for Swiss
    stock_count: int
    waste: tuple[str, ...]  # every card ever dealt and still there, bottom to top
    foundations: tuple[tuple[str, ...], ...]
    redeals_left: int
    moves_made: int
    won: bool
    over: bool
    resigned: bool

    def __init__(
        self,
        variant: str,
        tableau: tuple[tuple[str, ...], ...],
        reserve: tuple[str | None, ...],
        stock_count: int,
        waste: tuple[str, ...],
        foundations: tuple[tuple[str, ...], ...],
        redeals_left: int,
        moves_made: int,
        won: bool,
        over: bool,
        resigned: bool,
    ) -> None:
        # As GameState's: the slots' own setters, half the generated frozen __init__'s cost.
        _SET_VARIANT(self, variant)
        _SET_TABLEAU(self, tableau)
        _SET_RESERVE(self, reserve)
        _SET_STOCK_COUNT(self, stock_count)
        _SET_WASTE(self, waste)
        _SET_FOUNDATIONS(self, foundations)
        _SET_REDEALS_LEFT(self, redeals_left)
        _SET_MOVES_MADE(self, moves_made)
        _SET_WON(self, won)
        _SET_OVER(self, over)
        _SET_RESIGNED(self, resigned)

    @property
    def foundation_count(self) -> int:
        """Cards on the foundations."""
        return sum(len(f) for f in self.foundations)


_SET_VARIANT = slot_setter(PublicView, "variant")
_SET_TABLEAU = slot_setter(PublicView, "tableau")
_SET_RESERVE = slot_setter(PublicView, "reserve")
_SET_STOCK_COUNT = slot_setter(PublicView, "stock_count")
_SET_WASTE = slot_setter(PublicView, "waste")
_SET_FOUNDATIONS = slot_setter(PublicView, "foundations")
_SET_REDEALS_LEFT = slot_setter(PublicView, "redeals_left")
_SET_MOVES_MADE = slot_setter(PublicView, "moves_made")
_SET_WON = slot_setter(PublicView, "won")
_SET_OVER = slot_setter(PublicView, "over")
_SET_RESIGNED = slot_setter(PublicView, "resigned")


def public_view(state: GameState) -> PublicView:
    """What anyone may see of a position: everything but the stock's order."""
    return PublicView(
        state.variant,
        state.tableau,
        state.reserve,
        len(state.stock),
        state.waste,
        state.foundations,
        state.redeals_left,
        state.moves_made,
        state.won,
        is_over(state),
        state.resigned,
    )


def hidden_state(view: PublicView) -> GameState:
    """The view as a position whose stock cards are unknown (None): the rules need no more to
    list legal moves, and a public fold takes dealt cards from the events."""
    return GameState(
        view.variant,
        view.tableau,
        view.reserve,
        (None,) * view.stock_count,
        view.waste,
        view.foundations,
        view.redeals_left,
        view.moves_made,
        view.resigned,
    )


def public_legal_moves(view: PublicView) -> set[str]:
    """The legal moves of the position the view shows; equal to legal_moves of the state."""
    return legal_moves(hidden_state(view))


def public_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """The public form of a stored event: game_started loses deck and seed, gains the layout."""
    kind = check_event(event)
    if kind != GAME_STARTED:
        return dict(event)
    start = lay_out(event["variant"], event["deck"])
    return {
        "type": GAME_STARTED,
        "v": event["v"],
        "variant": start.variant,
        "deal_version": event["deal_version"],
        "layout": {
            "tableau": [list(p) for p in start.tableau],
            "reserve": list(start.reserve),
        },
        "stock_count": len(start.stock),
        "at": event["at"],
    }


def _start_state(event: Mapping[str, Any]) -> GameState:
    """The hidden state a game_started event lays out (a private one is made public first)."""
    if "deck" in event:
        event = public_event(event)
    variant = event.get("variant")
    layout = event.get("layout")
    count = event.get("stock_count")
    if variant not in VARIANTS or not isinstance(layout, Mapping) or not isinstance(count, int):
        raise CorruptEvent("public game_started needs variant, layout and stock_count")
    try:
        tableau = tuple(tuple(p) for p in layout.get("tableau", ()))
        reserve = tuple(layout.get("reserve", ()))
    except TypeError:
        raise CorruptEvent("public game_started has a malformed layout") from None
    expected = (9, 0) if variant == SWISS else (0, 8)
    if (len(tableau), len(reserve)) != expected:
        raise CorruptEvent(f"public game_started has the wrong piles for {variant}")
    return GameState(
        variant,
        tableau,
        reserve,
        (None,) * count,
        (),
        EMPTY_FOUNDATIONS,
        2 if variant == QUADRENNIAL else 0,
        0,
    )


def _reveal_nothing() -> None:
    return None


def _public_step(state: GameState, kind: str, event: Mapping[str, Any]) -> GameState:
    """The hidden state after one more moved or resigned event (kind from check_event)."""
    if kind == RESIGNED:
        try:
            return resign(state)
        except IllegalMove as exc:
            raise CorruptEvent(f"resignation is not possible: {exc.reason}") from None
    if kind == GAME_STARTED:
        raise CorruptEvent("a game has only one game_started event")
    move = event.get("move")
    revealed = event.get("revealed")
    if type(revealed) is not list:
        raise CorruptEvent("moved event without a valid revealed list")
    for card in revealed:
        if type(card) is not str or card not in CARDS:
            raise CorruptEvent("moved event without a valid revealed list")
    if type(move) is not str:
        raise CorruptEvent(f"public move {move!r} is illegal: a move is a string")
    if not revealed:
        reveal: Callable[[], str | None] = _reveal_nothing
    else:
        # The cards, then None: a move wanting one more is refused at that None (IllegalMove).
        cards: Iterator[str | None] = iter([*revealed, None])
        reveal = cards.__next__
    try:
        after, _ = apply_move_revealing(state, move, reveal)
    except IllegalMove as exc:
        raise CorruptEvent(f"public move {move!r} is illegal: {exc.reason}") from None
    if revealed and next(cards, None) is not None:
        raise CorruptEvent(f"move {move!r} revealed more cards than it turned up")
    return after


def public_fold_event(view: PublicView | None, event: Mapping[str, Any]) -> PublicView:
    """The view after one more public event (a private game_started is made public first)."""
    kind = check_event(event)
    if view is None:
        if kind != GAME_STARTED:
            raise CorruptEvent(f"a game starts with a game_started event, not {kind}")
        return public_view(_start_state(event))
    return public_view(_public_step(hidden_state(view), kind, event))


def public_fold(events: Iterable[Mapping[str, Any]]) -> PublicView:
    """The view public events lead to; a prefix gives the view at that point.

    Folds hidden states (stock unknown) and makes the view of the last one only: the views in
    between would be the same as public_fold_event's, so they need not be built."""
    state: GameState | None = None
    for event in events:
        kind = check_event(event)
        if state is None:
            if kind != GAME_STARTED:
                raise CorruptEvent(f"a game starts with a game_started event, not {kind}")
            state = _start_state(event)
        else:
            state = _public_step(state, kind, event)
    if state is None:
        raise CorruptEvent("no events: a game starts with a game_started event")
    return public_view(state)
