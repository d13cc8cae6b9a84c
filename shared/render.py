"""The board as text: a pure function of a PublicView, at most 80 columns, for the terminal
client and for readable test failures."""

from __future__ import annotations

from shared.cards import IS_RED, SUIT_SYMBOLS, SUITS
from shared.views import PublicView

RED = "\x1b[31m"
RESET = "\x1b[0m"
WIDTH = 80
_CELL = 5  # columns per pile: a card is at most three wide ("10♥")


def card_text(card: str) -> str:
    """A card as people read it: "10♥", "A♠"."""
    return ("10" if card[0] == "T" else card[0]) + SUIT_SYMBOLS[card[1]]


def _card(card: str | None, color: bool, width: int = 0) -> str:
    """A card (or "--" for none), left-aligned in `width` columns, red when asked."""
    if card is None:
        return "--".ljust(width)
    text = card_text(card)
    pad = " " * max(0, width - len(text))
    if color and IS_RED[card]:
        return f"{RED}{text}{RESET}{pad}"
    return text + pad


def _status(view: PublicView) -> str:
    if view.won:
        return "Won: all 52 cards are on the foundations."
    if view.resigned:
        return "Resigned."
    if view.over:
        return "Game over: no legal move left."
    return ""


def render_board(view: PublicView, *, color: bool = False) -> str:
    """The board: stock, waste, foundations, then the tableau columns or the reserve."""
    title = "Swiss" if view.variant == "swiss" else "Quadrennial"
    head = f"{title} solitaire"
    moves = f"moves {view.moves_made}"
    lines = [head + moves.rjust(WIDTH - len(head) - 1)]
    waste = view.waste
    waste_text = (
        f"{_card(waste[-1], color)} ({len(waste)} card{'s' if len(waste) != 1 else ''})"
        if waste
        else "empty"
    )
    stock_line = f"Stock: {view.stock_count} card{'s' if view.stock_count != 1 else ''}"
    stock_line += f"   Waste: {waste_text}"
    if view.variant == "quadrennial":
        stock_line += f"   Redeals left: {view.redeals_left}"
    lines.append(stock_line)
    found = "   ".join(
        f"{SUIT_SYMBOLS[s]} {_card(f[-1] if f else None, color, 3)}"
        for s, f in zip(SUITS, view.foundations, strict=True)
    )
    lines.append(f"Foundations: {found}   ({view.foundation_count}/52)")
    lines.append("")
    if view.variant == "swiss":
        piles = view.tableau
        lines.append("".join(f"  t{i + 1}".ljust(_CELL) for i in range(len(piles))).rstrip())
        # Drawn like a real layout: each column from its bottom card down to its top card,
        # the one that plays; an empty pile shows "--".
        depth = max(1, *(len(p) for p in piles))
        for row in range(depth):
            cells = [
                "  " + _card(p[row] if row < len(p) else None, color, _CELL - 2)
                if row < len(p) or (row == 0 and not p)
                else " " * _CELL
                for p in piles
            ]
            lines.append("".join(cells).rstrip())
    else:
        reserve = view.reserve
        lines.append("".join(f"  r{i + 1}".ljust(_CELL) for i in range(len(reserve))).rstrip())
        lines.append("".join("  " + _card(c, color, _CELL - 2) for c in reserve).rstrip())
    status = _status(view)
    if status:
        lines.append("")
        lines.append(status)
    return "\n".join(lines) + "\n"
