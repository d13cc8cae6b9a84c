"""Public views and public events: what a player or spectator may see, never the stock order.

A public `game_started` carries the initial visible layout instead of the deck; every `moved`
event already names the cards it turned up ("revealed"), which is all the public fold needs.
Invariant: public_fold(map(public_event, events)) == public_view(fold(events)).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from shared.cards import CARDS
from shared.errors import CorruptEvent, IllegalMove
from shared.events import GAME_STARTED, MOVED, RESIGNED, check_event
from shared.game import apply_move_revealing, is_over, lay_out, legal_moves, resign
from shared.state import EMPTY_FOUNDATIONS, GameState
from shared.variants import QUADRENNIAL, SWISS, VARIANTS


@dataclass(frozen=True, slots=True)
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

    @property
    def foundation_count(self) -> int:
        """Cards on the foundations."""
        return sum(len(f) for f in self.foundations)


def public_view(state: GameState) -> PublicView:
    """What anyone may see of a position: everything but the stock's order."""
    won = state.won
    return PublicView(
        variant=state.variant,
        tableau=state.tableau,
        reserve=state.reserve,
        stock_count=len(state.stock),
        waste=state.waste,
        foundations=state.foundations,
        redeals_left=state.redeals_left,
        moves_made=state.moves_made,
        won=won,
        over=is_over(state),
        resigned=state.resigned,
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


def _start_view(event: Mapping[str, Any]) -> PublicView:
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
    state = GameState(
        variant,
        tableau,
        reserve,
        (None,) * count,
        (),
        EMPTY_FOUNDATIONS,
        2 if variant == QUADRENNIAL else 0,
        0,
    )
    return public_view(state)


def public_fold_event(view: PublicView | None, event: Mapping[str, Any]) -> PublicView:
    """The view after one more public event (a private game_started is made public first)."""
    kind = check_event(event)
    if view is None:
        if kind != GAME_STARTED:
            raise CorruptEvent(f"a game starts with a game_started event, not {kind}")
        return _start_view(event)
    if kind == GAME_STARTED:
        raise CorruptEvent("a game has only one game_started event")
    state = hidden_state(view)
    if kind == RESIGNED:
        try:
            return public_view(resign(state))
        except IllegalMove as exc:
            raise CorruptEvent(f"resignation is not possible: {exc.reason}") from None
    assert kind == MOVED
    revealed = event.get("revealed")
    if not isinstance(revealed, list) or not all(
        isinstance(c, str) and c in CARDS for c in revealed
    ):
        raise CorruptEvent("moved event without a valid revealed list")
    cards: Iterator[str] = iter(revealed)
    try:
        after, _ = apply_move_revealing(state, event.get("move"), lambda: next(cards, None))
    except IllegalMove as exc:
        raise CorruptEvent(f"public move {event.get('move')!r} is illegal: {exc.reason}") from None
    if next(cards, None) is not None:
        raise CorruptEvent(f"move {event.get('move')!r} revealed more cards than it turned up")
    return public_view(after)


def public_fold(events: Iterable[Mapping[str, Any]]) -> PublicView:
    """The view public events lead to; a prefix gives the view at that point."""
    view: PublicView | None = None
    for event in events:
        view = public_fold_event(view, event)
    if view is None:
        raise CorruptEvent("no events: a game starts with a game_started event")
    return view
