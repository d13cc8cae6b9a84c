"""Game events and the fold: a game is its `game_started` event and the moves after it.

Events are plain dicts (msgpack-ready) with "type" and the schema version "v". The fold trusts
only the deck and the moves: each move is validated against the rules on its own (no full
legal-move generation), and "revealed" is recomputed from the deck, never read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from shared.cards import BadCard, validate_deck
from shared.deal import DEAL_VERSION
from shared.errors import CorruptEvent, IllegalMove
from shared.game import apply_move, apply_move_revealing, lay_out, resign
from shared.state import GameState
from shared.variants import VARIANTS, check_variant

EVENT_VERSION = 1
GAME_STARTED = "game_started"
MOVED = "moved"
RESIGNED = "resigned"
EVENT_TYPES = (GAME_STARTED, MOVED, RESIGNED)

Event = dict[str, Any]


def start_event(
    variant: str, deck: Iterable[str], *, at: int, seed: int | str | None = None
) -> Event:
    """The first event of a game: the variant, the deal version and the (private) deck."""
    check_variant(variant)
    cards = list(validate_deck(deck))
    return {
        "type": GAME_STARTED,
        "v": EVENT_VERSION,
        "variant": variant,
        "deal_version": DEAL_VERSION,
        "deck": cards,
        "seed": seed,
        "at": at,
    }


def move_event(state_before: GameState, move: str, *, at: int) -> Event:
    """The event of one move, validated (IllegalMove if refused), with the cards it revealed."""
    _, revealed = apply_move_revealing(state_before, move)
    return {"type": MOVED, "v": EVENT_VERSION, "move": move, "revealed": revealed, "at": at}


def resign_event(*, at: int) -> Event:
    """The event of a player giving up."""
    return {"type": RESIGNED, "v": EVENT_VERSION, "at": at}


def check_event(event: object) -> str:
    """The event's type after checking its envelope; CorruptEvent if it cannot be read."""
    if type(event) is not dict and not isinstance(event, Mapping):
        raise CorruptEvent(f"an event is a map, not {type(event).__name__}")
    kind: object = event.get("type")
    if not isinstance(kind, str) or kind not in EVENT_TYPES:
        raise CorruptEvent(f"unknown event type {kind!r}: expected one of {', '.join(EVENT_TYPES)}")
    v = event.get("v")
    if v != EVENT_VERSION or type(v) is not int:
        raise CorruptEvent(f"{kind} event has schema version {v!r}; this code reads v=1")
    return kind


def fold_event(state: GameState | None, event: Mapping[str, Any]) -> GameState:
    """The state after one more event (None before the first); CorruptEvent if it cannot be."""
    kind = check_event(event)
    if state is None:
        if kind != GAME_STARTED:
            raise CorruptEvent(f"a game starts with a game_started event, not {kind}")
        variant = event.get("variant")
        if variant not in VARIANTS:
            raise CorruptEvent(f"game_started names an unknown variant {variant!r}")
        if not isinstance(event.get("deal_version"), int):
            raise CorruptEvent("game_started has no integer deal_version")
        try:
            return lay_out(variant, event.get("deck") or ())
        except BadCard as exc:
            raise CorruptEvent(f"game_started holds a bad deck: {exc.reason}") from None
    if kind == MOVED:
        try:
            return apply_move(state, event["move"])
        except KeyError:
            raise CorruptEvent("moved event without a move") from None
        except IllegalMove as exc:
            raise CorruptEvent(
                f"stored move {event['move']!r} after {state.moves_made} moves is illegal: "
                f"{exc.reason}"
            ) from None
    if kind == RESIGNED:
        try:
            return resign(state)
        except IllegalMove as exc:
            raise CorruptEvent(f"stored resignation is not possible: {exc.reason}") from None
    raise CorruptEvent("a game has only one game_started event")


def fold(events: Iterable[Mapping[str, Any]]) -> GameState:
    """The state a game's events lead to; a prefix of them gives the state at that point."""
    state: GameState | None = None
    for event in events:
        state = fold_event(state, event)
    if state is None:
        raise CorruptEvent("no events: a game starts with a game_started event")
    return state
