"""The pure game code of Solitaire Arena: no I/O, no clock, used by server and client alike.

The names below are the contract of docs/architecture.md ("The game core").
"""

from shared.cards import FULL_DECK, RANKS, SUITS, BadCard, parse_card, validate_deck
from shared.deal import DEAL_VERSION, BadSeed, canonical_seed, deal_deck
from shared.errors import ArenaError, CorruptEvent, IllegalMove
from shared.events import (
    EVENT_VERSION,
    fold,
    fold_event,
    move_event,
    resign_event,
    start_event,
)
from shared.game import (
    apply_move,
    apply_move_revealing,
    foundation_count,
    is_over,
    is_won,
    lay_out,
    legal_moves,
    new_game,
    resign,
)
from shared.moves import parse_move
from shared.notation import Move, format_move, parse_canonical
from shared.render import card_text, render_board
from shared.solver import Solution, solve
from shared.state import GameState
from shared.variants import QUADRENNIAL, SWISS, VARIANTS, UnknownVariant
from shared.views import (
    PublicView,
    public_event,
    public_fold,
    public_fold_event,
    public_legal_moves,
    public_view,
)

__all__ = [
    "DEAL_VERSION",
    "EVENT_VERSION",
    "FULL_DECK",
    "QUADRENNIAL",
    "RANKS",
    "SUITS",
    "SWISS",
    "VARIANTS",
    "ArenaError",
    "BadCard",
    "BadSeed",
    "CorruptEvent",
    "GameState",
    "IllegalMove",
    "Move",
    "PublicView",
    "Solution",
    "UnknownVariant",
    "apply_move",
    "apply_move_revealing",
    "canonical_seed",
    "card_text",
    "deal_deck",
    "fold",
    "fold_event",
    "format_move",
    "foundation_count",
    "is_over",
    "is_won",
    "lay_out",
    "legal_moves",
    "move_event",
    "new_game",
    "parse_canonical",
    "parse_card",
    "parse_move",
    "public_event",
    "public_fold",
    "public_fold_event",
    "public_legal_moves",
    "public_view",
    "render_board",
    "resign",
    "resign_event",
    "solve",
    "start_event",
    "validate_deck",
]
