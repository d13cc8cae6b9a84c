"""The viewer's board (server/net/web/board.js) is shared.public_fold ported to the browser: the
same public events give the same board, in Chromium, for random games of both variants, and the
board on the page holds no card the events did not show."""

from __future__ import annotations

import random
from typing import Any

from selenium import webdriver

from shared import (
    apply_move,
    deal_deck,
    legal_moves,
    move_event,
    new_game,
    public_event,
    public_fold,
    resign_event,
    start_event,
)
from shared.render import card_text
from shared.views import PublicView
from tests.support.server_process import ServerProcess

# The board as the page draws it, read back from the DOM only.
READ_BOARD = """
const read = (root) => {
  const cards = (el) => [...el.querySelectorAll('[data-card]')].map((c) => c.dataset.card);
  const pile = (name) => root.querySelector(`[data-pile="${name}"]`);
  const foundations = ['fc', 'fd', 'fh', 'fs'].map((f) => [
    Number(pile(f).dataset.count), cards(pile(f))[0] || null]);
  const tableau = [...root.querySelectorAll('.tableau [data-pile]')].map(cards);
  const reserve = [...root.querySelectorAll('.reserve [data-pile]')]
    .map((p) => cards(p)[0] || null);
  return {
    stock: Number(pile('stock').dataset.count),
    waste: [Number(pile('waste').dataset.count), cards(pile('waste'))[0] || null],
    foundations, tableau, reserve,
    moves: Number(root.querySelector('[data-moves]').dataset.moves),
  };
};
"""


def drawn(view: PublicView) -> dict[str, Any]:
    """What the page must show of a view, in READ_BOARD's form."""
    return {
        "stock": view.stock_count,
        "waste": [len(view.waste), view.waste[-1] if view.waste else None],
        "foundations": [[len(f), f[-1] if f else None] for f in view.foundations],
        "tableau": [list(p) for p in view.tableau],
        "reserve": list(view.reserve),
        "moves": view.moves_made,
    }


def random_game(variant: str, seed: int) -> list[dict[str, Any]]:
    """The public events of a random game: foundation moves first, else any legal move."""
    rng = random.Random(seed)
    deck = deal_deck(variant, seed)
    state = new_game(variant, deck=deck)
    events = [public_event(start_event(variant, deck, at=0))]
    for _ in range(rng.randrange(5, 150)):
        legal = sorted(legal_moves(state))
        if not legal:
            break
        ups = [m for m in legal if m.endswith("f")]
        move = rng.choice(ups) if ups and rng.random() < 0.7 else rng.choice(legal)
        events.append(move_event(state, move, at=0))
        state = apply_move(state, move)
    if not state.won and rng.random() < 0.3:
        events.append(resign_event(at=0))
    return events


def test_the_browser_folds_public_events_as_shared_public_fold_does(
    arena: ServerProcess, browser: webdriver.Chrome
) -> None:
    games = [random_game(v, s) for v in ("swiss", "quadrennial") for s in range(40)]
    browser.get(f"http://127.0.0.1:{arena.port}/replay/none/none")  # loads board.js
    results = browser.execute_script(
        READ_BOARD
        + """
        const games = arguments[0];
        return games.map((events) => {
          const out = [];
          for (const k of [1, Math.ceil(events.length / 2), events.length]) {
            const el = window.Board.render(window.Board.fold(events.slice(0, k)));
            const box = document.createElement('div');
            box.append(el);
            out.push(read(box));
          }
          return out;
        });
        """,
        games,
    )
    for events, boards in zip(games, results, strict=True):
        cuts = [1, -(-len(events) // 2), len(events)]
        assert boards == [drawn(public_fold(events[:k])) for k in cuts]
    # Readable without colour: every card is its rank and suit symbol in text, as the terminal's.
    labels = browser.execute_script(
        """
        const box = document.createElement('div');
        box.append(...arguments[0].map((events) => window.Board.render(window.Board.fold(events))));
        return [...box.querySelectorAll('[data-card]')].map((c) => [c.dataset.card, c.textContent]);
        """,
        games,
    )
    assert len(labels) > 1000
    assert all(text == card_text(code) for code, text in labels)
