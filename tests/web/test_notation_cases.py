"""The page's move reader (server/net/web/rules.js) runs the notation cases the core's
parse_move runs (tests/data/notation_cases.json), in Chromium: one grammar, two
implementations, one file of cases; and it lists the core's legal moves along random games."""

from __future__ import annotations

import json

from selenium import webdriver

from shared import public_fold
from shared.views import public_legal_moves
from tests.shared.test_notation_cases import CASES, CASES_PATH, read
from tests.support.server_process import ServerProcess
from tests.web.test_board_fold import random_game

# Each case read by window.Rules.parseMove on the board its position describes.
RUN_CASES = """
const data = arguments[0];
const boards = {};
for (const [name, p] of Object.entries(data.positions)) {
  boards[name] = {variant: p.variant, tableau: p.tableau, reserve: p.reserve, stock: p.stock_count,
    waste: p.waste, foundations: p.foundations, redeals: p.redeals_left, moves: p.moves_made,
    resigned: p.resigned};
}
return data.cases.map((c) => {
  try {
    return {move: window.Rules.parseMove(c.input, boards[c.position])};
  } catch (e) {
    if (!(e instanceof window.Rules.IllegalMove)) return {crash: String(e)};
    return {error: e.message};
  }
});
"""


def test_the_page_reads_every_notation_case_as_the_core_does(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    page.get(f"http://127.0.0.1:{play_arena.port}/leaderboard")
    data = json.loads(CASES_PATH.read_text(encoding="utf-8"))
    got = page.execute_script(RUN_CASES, data)
    assert len(got) == len(CASES["cases"]) > 500
    wrong = [
        (case["position"], case["input"], {k: case[k] for k in ("move", "error") if k in case}, out)
        for case, out in zip(CASES["cases"], got, strict=True)
        if out != {k: case[k] for k in ("move", "error") if k in case}
    ]
    assert wrong == []
    # and the core agrees with the file (the shared test's own check, once more here)
    first = CASES["cases"][0]
    assert read(first["input"], CASES["positions"][first["position"]]) == got[0]


LEGAL_ALONG = """
return arguments[0].map((events) => {
  const out = [];
  let view = null;
  for (const event of events) {
    view = window.Board.step(view, event);
    out.push([...window.Rules.legalMoves(view)].sort());
  }
  return out;
});
"""


def test_the_page_lists_the_legal_moves_the_core_lists_along_random_games(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    games = [random_game(v, s) for v in ("swiss", "quadrennial") for s in range(30)]
    page.get(f"http://127.0.0.1:{play_arena.port}/leaderboard")
    listed = page.execute_script(LEGAL_ALONG, games)
    steps = 0
    for events, lists in zip(games, listed, strict=True):
        for k, moves in enumerate(lists, start=1):
            assert moves == sorted(public_legal_moves(public_fold(events[:k]))), (events[0], k)
            steps += 1
    assert steps > 2000
