"""The board as the client draws it, in a given number of rows.

`shared.render_board` draws a whole board for logs and tests; a terminal has a height, so here a
pile too tall for the rows given is drawn as a marker ("…26") above the cards that matter (its
top card and the run that plays), and many boards at once can be drawn compact, three lines each.
"""

from __future__ import annotations

from typing import Any

from client.text import card_text, plural
from shared.cards import IS_RED, SUIT_SYMBOLS, SUITS

RED = "\x1b[31m"
RESET = "\x1b[0m"
CELL = 5  # columns per pile: two spaces and a card of at most three ("10♥")
HEAD_ROWS = 4  # stock line, foundations line, a blank line, the pile labels
MIN_PILE_ROWS = 4  # a marker and the top three cards of a compressed pile


def _card(card: str | None, color: bool, cells: int = 0) -> str:
    if card is None:
        return "--".ljust(cells)
    text = card_text(card)
    padding = " " * max(0, cells - len(text))
    if color and IS_RED[card]:
        return f"{RED}{text}{RESET}{padding}"
    return text + padding


def _head(view: Any, color: bool) -> list[str]:
    waste = view.waste
    waste_text = f"{_card(waste[-1], color)} ({plural(len(waste), 'card')})" if waste else "empty"
    lines = [f"Stock: {plural(view.stock_count, 'card')}   Waste: {waste_text}"]
    found = "  ".join(
        f"{SUIT_SYMBOLS[s]} {_card(f[-1] if f else None, color, 3)}"
        for s, f in zip(SUITS, view.foundations, strict=True)
    )
    lines.append(f"Foundations: {found} {view.foundation_count}/52")
    if view.variant == "quadrennial":
        lines.append(f"Redeals left: {view.redeals_left}")
    else:
        lines.append("")
    return lines


def full_rows(view: Any) -> int:
    """Rows the whole board takes, nothing compressed."""
    if view.variant == "quadrennial":
        return HEAD_ROWS + 1
    return HEAD_ROWS + max(1, *(len(p) for p in view.tableau))


def min_rows(view: Any) -> int:
    """The fewest rows the board can be drawn in and still show every playable card."""
    if view.variant == "quadrennial":
        return HEAD_ROWS + 1
    return min(full_rows(view), HEAD_ROWS + MIN_PILE_ROWS + 1)  # + the marker's legend


def board_width(view: Any) -> int:
    """Columns the board takes: its piles, or its longest text line."""
    piles = len(view.tableau) if view.variant == "swiss" else len(view.reserve)
    return max(piles * CELL, 45)


def render_board(view: Any, *, color: bool = False, rows: int | None = None) -> list[str]:
    """The board in at most ``rows`` rows (at least `min_rows`): tall piles compressed."""
    lines = _head(view, color)
    if view.variant == "quadrennial":
        reserve = view.reserve
        lines.append("".join(f"  r{i + 1}".ljust(CELL) for i in range(len(reserve))).rstrip())
        lines.append("".join("  " + _card(c, color, CELL - 2) for c in reserve).rstrip())
        return lines
    piles = view.tableau
    lines.append("".join(f"  t{i + 1}".ljust(CELL) for i in range(len(piles))).rstrip())
    depth = max(1, *(len(p) for p in piles))
    budget = depth if rows is None else max(MIN_PILE_ROWS, rows - HEAD_ROWS)
    legend = ""
    if depth > budget:
        budget -= 1  # the legend's line
        legend = "…N: N more cards lie under the ones shown (the last card plays)"
    table: list[list[str]] = []
    for pile in piles:
        if len(pile) > budget:
            hidden = len(pile) - (budget - 1)
            cells = [f"  …{hidden}".ljust(CELL)]
            cells += ["  " + _card(c, color, CELL - 2) for c in pile[-(budget - 1) :]]
        elif pile:
            cells = ["  " + _card(c, color, CELL - 2) for c in pile]
        else:
            cells = ["  " + _card(None, color, CELL - 2)]
        table.append(cells)
    for row in range(min(depth, budget)):
        lines.append(
            "".join(cells[row] if row < len(cells) else " " * CELL for cells in table).rstrip()
        )
    if legend:
        lines.append(legend)
    return lines


def game_state_word(view: Any) -> str:
    """How a game stands, in a word or two."""
    if view.won:
        return "won"
    if view.resigned:
        return "resigned"
    if view.over:
        return "stuck"
    return "playing"


def render_compact(label: str, view: Any, *, color: bool = False) -> list[str]:
    """One racer's board in three lines: who and how far, stock and foundations, the tops."""
    waste = _card(view.waste[-1], color) if view.waste else "--"
    found = " ".join(
        f"{SUIT_SYMBOLS[s]}{_card(f[-1] if f else None, color)}"
        for s, f in zip(SUITS, view.foundations, strict=True)
    )
    head = (
        f"{label}: {view.foundation_count}/52, {plural(view.moves_made, 'move')}, "
        f"{game_state_word(view)}"
    )
    middle = f"  stock {view.stock_count}  waste {waste}  {found}"
    if view.variant == "swiss":
        tops = " ".join(_card(p[-1], color, 3) if p else "-- " for p in view.tableau)
        last = f"  tops {tops}".rstrip()
    else:
        last = "  reserve " + " ".join(_card(c, color, 3) for c in view.reserve).rstrip()
        last += f"  redeals {view.redeals_left}"
    return [head, middle, last]
