"""Playing in the page: a real server process, Debian's Chromium, moves typed at the Move field
and made by clicks; what the page shows is read back from its DOM."""

from __future__ import annotations

import re

from selenium import webdriver
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from shared import apply_move, legal_moves, new_game
from tests.support.server_process import ServerProcess
from tests.web.conftest import severe_console_messages

SEED = 19  # a Quadrennial deal the greedy line wins (tests/client/test_newcomer_pty.py)

# Resolves once the page's board shows at least arguments[0] events of the player's game.
BOARD_AT = """
const [want, done] = arguments;
const at = () => Number(document.querySelector('.playboard')?.dataset.version || 0);
if (at() >= want) return done(at());
const seen = new MutationObserver(() => {
  if (at() >= want) { seen.disconnect(); done(at()); }
});
seen.observe(document.getElementById('main'), {subtree: true, childList: true, attributes: true});
"""


def greedy_quadrennial(seed: int) -> list[str]:
    """A winning line: a card to a foundation when one goes (foundation cards never move
    again in Quadrennial, so this never blocks), else deal, else redeal."""
    state = new_game("quadrennial", seed=seed)
    moves = []
    while legal := legal_moves(state):
        up = sorted(m for m in legal if m.endswith("f"))
        move = up[0] if up else ("d" if "d" in legal else "redeal")
        moves.append(move)
        state = apply_move(state, move)
    assert state.won
    return moves


def friendly(move: str, k: int) -> str:
    """The line as a person might type it: the friendlier forms, now and then the canonical."""
    if move[0] == "r" and move[1].isdigit():
        return (move[1], f"r{move[1]}", f"{move[1]} f", move)[k % 4]
    if move == "wf":
        return ("w f", "wf", "W F")[k % 3]
    if move == "d":
        return ("d", "deal", "draw")[k % 3]
    return move


def open_play(page: webdriver.Chrome, arena: ServerProcess, path: str) -> None:
    page.get(f"http://127.0.0.1:{arena.port}{path}")
    board_at(page, 1)


def board_at(page: webdriver.Chrome, version: int) -> int:
    return int(page.execute_async_script(BOARD_AT, version))


def text_of(page: webdriver.Chrome, selector: str) -> str:
    return str(
        page.execute_script(
            "return document.querySelector(arguments[0])?.textContent || ''", selector
        )
    )


def wait_text(page: webdriver.Chrome, selector: str, words: str, wait_s: float = 20) -> str:
    WebDriverWait(page, wait_s, poll_frequency=0.05).until(lambda d: words in text_of(d, selector))
    return text_of(page, selector)


def test_a_quadrennial_deal_won_by_typing_the_line(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    open_play(page, play_arena, f"/play?variant=quadrennial&seed={SEED}")
    assert "/play/" in page.current_url  # the address names the room, never a token
    field = page.find_element(By.CSS_SELECTOR, "input[aria-label='Move']")
    line = greedy_quadrennial(SEED)
    for k, move in enumerate(line):
        field.send_keys(friendly(move, k), Keys.ENTER)
    assert board_at(page, len(line) + 1) == len(line) + 1
    wait_text(page, "#lead", "You won: all 52 cards up in 130 moves.")
    assert text_of(page, ".playboard .count") == "52/52"
    assert page.execute_script("return document.getElementById('refused').textContent") == ""
    assert severe_console_messages(page) == []


def test_the_same_deal_won_by_clicking(page: webdriver.Chrome, play_arena: ServerProcess) -> None:
    open_play(page, play_arena, f"/play?variant=quadrennial&seed={SEED}")
    line = greedy_quadrennial(SEED)
    spot = lambda key: page.find_element(By.CSS_SELECTOR, f".playboard [data-key='{key}']")  # noqa: E731
    real = 30  # the opening by WebDriver's own pointer; the rest clicked in the page, faster
    for k, move in enumerate(line[:real]):
        if move in ("d", "redeal"):
            spot("stock").click()
        elif k % 3 == 0:
            source = spot(move[:-1] if move[0] == "r" else "waste")
            ActionChains(page).double_click(source).perform()
        else:
            spot(move[:-1] if move[0] == "r" else "waste").click()
            targets = page.find_elements(By.CSS_SELECTOR, ".playboard .foundation.target")
            assert len(targets) == 4  # any foundation takes it: the card knows its suit
            targets[k % 4].click()
        board_at(page, k + 2)
    page.execute_async_script(CLICK_LINE, line[real:], real + 1)
    wait_text(page, "#lead", "You won")
    assert text_of(page, ".playboard .count") == "52/52"


# Plays arguments[0] by clicks from board version arguments[1]: each move's spots clicked once
# the board shows the one before.
CLICK_LINE = """
const [moves, from, done] = arguments;
const at = () => Number(document.querySelector('.playboard')?.dataset.version || 0);
const spot = (key) => document.querySelector(`.playboard [data-key="${key}"]`);
let k = 0;
const next = () => {
  if (k === moves.length) return done(true);
  if (at() < from + k) return;
  const move = moves[k++];
  if (move === 'd' || move === 'redeal') spot('stock').click();
  else {
    spot(move[0] === 'r' ? move.slice(0, 2) : 'waste').click();
    document.querySelector('.playboard .foundation.target').click();
  }
};
new MutationObserver(next).observe(document.getElementById('main'),
  {subtree: true, childList: true, attributes: true});
next();
"""


def test_a_refused_move_shows_its_reason_as_the_terminal_does(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    open_play(page, play_arena, "/play?variant=swiss&seed=7")
    field = page.find_element(By.CSS_SELECTOR, "input[aria-label='Move']")
    field.send_keys("3 5", Keys.ENTER)
    assert wait_text(page, "#refused", "3 5:") == (
        "3 5: nothing of 8♣ from t3 fits on 10♥ on t5, which takes 9♣ or 9♠"
    )
    field.send_keys("f", Keys.ENTER)
    wait_text(page, "#refused", "f: 'f' alone is not a move: 3f puts t3's top card")
    # by pointer: t3's card, then t5
    page.find_element(By.CSS_SELECTOR, "[data-key='t3:2']").click()
    page.find_element(By.CSS_SELECTOR, "[data-key='t5:4']").click()
    assert wait_text(page, "#refused", "t3t5:") == (
        "t3t5: nothing of 8♣ from t3 fits on 10♥ on t5, which takes 9♣ or 9♠"
    )
    assert board_at(page, 1) == 1  # nothing was played


FOCUSED = """
const el = document.activeElement;
return el ? {key: el.dataset.key || el.getAttribute('aria-label'), target:
  el.classList.contains('target'), outline: getComputedStyle(el).outlineStyle,
  width: getComputedStyle(el).outlineWidth} : null;
"""


def tab_to(page: webdriver.Chrome, ok: object, *, back: bool = False) -> dict[str, object]:
    """Tab (or Shift+Tab) until the focused element satisfies ``ok``."""
    for _ in range(60):
        if back:
            ActionChains(page).key_down(Keys.SHIFT).send_keys(Keys.TAB).key_up(Keys.SHIFT).perform()
        else:
            ActionChains(page).send_keys(Keys.TAB).perform()
        focused = page.execute_script(FOCUSED)
        if focused and ok(focused):  # type: ignore[operator]
            return dict(focused)
    raise AssertionError("the keyboard never reached it")


def test_keyboard_only_play(page: webdriver.Chrome, play_arena: ServerProcess) -> None:
    open_play(page, play_arena, f"/play?variant=quadrennial&seed={SEED}")
    first, second = greedy_quadrennial(SEED)[:2]
    assert (first, second) == ("r6f", "d")
    focused = tab_to(page, lambda f: f["key"] == "r6")
    assert focused["outline"] != "none"  # focus is visible
    assert focused["width"] != "0px"
    label = page.execute_script("return document.activeElement.getAttribute('aria-label')")
    assert label == "ace of diamonds, r6"
    ActionChains(page).send_keys(Keys.ENTER).perform()
    tab_to(page, lambda f: bool(f["target"]), back=True)  # a foundation, highlighted
    ActionChains(page).send_keys(Keys.SPACE).perform()
    assert board_at(page, 2) == 2
    tab_to(page, lambda f: f["key"] == "stock", back=True)
    ActionChains(page).send_keys(Keys.ENTER).perform()
    assert board_at(page, 3) == 3
    tab_to(page, lambda f: f["key"] == "Move")
    ActionChains(page).send_keys("hint", Keys.ENTER).perform()
    hint = wait_text(page, "#said", "Hint: ")  # the server's solver, in a room of one
    assert re.fullmatch(
        r"Hint: (r[1-8]f|wf|d|redeal) \(a winning line, found in [\d,]+ nodes\)", hint
    )
    assert severe_console_messages(page) == []


def test_a_phone_360_px_wide_plays_by_taps(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput

    page.set_window_size(360, 780)
    open_play(page, play_arena, "/play?variant=swiss&seed=7")
    layout = page.execute_script(
        "return {width: innerWidth, overflow: document.documentElement.scrollWidth"
        " - document.documentElement.clientWidth}"
    )
    assert layout["width"] <= 360
    assert layout["overflow"] <= 0

    def tap(selector: str) -> None:
        element = page.find_element(By.CSS_SELECTOR, selector)
        box = element.rect
        actions = ActionBuilder(page, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))
        actions.pointer_action.move_to_location(
            int(box["x"] + box["width"] / 2), int(box["y"] + box["height"] / 2)
        ).pointer_down().pointer_up()
        actions.perform()

    tap("[data-key='t9:0']")  # t9's only card, then a foundation: t9f
    tap(".foundation.target")
    assert board_at(page, 2) == 2
    tap("[data-key='stock']")
    assert board_at(page, 3) == 3
    assert text_of(page, "#said") == "played d"


CARD_NAMES = """
return [...document.querySelectorAll('.playboard [data-card]')].map((c) =>
  [c.dataset.card, c.getAttribute('aria-label'), c.textContent]);
"""
MOTION = "return getComputedStyle(document.querySelector('button.spot')).transitionDuration"


def test_cards_are_named_suits_shown_by_symbol_and_motion_can_be_reduced(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    open_play(page, play_arena, "/play?variant=swiss&seed=7")
    names = {"A": "ace", "7": "seven", "T": "ten", "K": "king", "Q": "queen"}
    suits = {
        "C": ("clubs", "♣"),
        "D": ("diamonds", "♦"),
        "H": ("hearts", "♥"),
        "S": ("spades", "♠"),
    }
    cards = page.execute_script(CARD_NAMES)
    assert len(cards) == 25  # the Swiss layout: 1 2 3 4 5 4 3 2 1
    for code, label, text in cards:
        suit, symbol = suits[code[1]]
        assert label.startswith(f"{names.get(code[0], label.split()[0])} of {suit}, ")
        assert text.endswith(symbol)  # the suit by its symbol, the colour only repeats it
    assert page.execute_script(MOTION) != "0s"
    page.execute_cdp_cmd(
        "Emulation.setEmulatedMedia",
        {"features": [{"name": "prefers-reduced-motion", "value": "reduce"}]},
    )
    try:
        assert page.execute_script(MOTION) == "0s"
    finally:
        page.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


# A drag from one spot to another as the browser's pointer makes one: dragstart, dragover (the
# page lets a legal place take the drop), drop; whether the place took it.
DRAG = """
const [from, to] = arguments;
const data = new DataTransfer();
const fire = (el, type) => {
  const e = new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: data});
  el.dispatchEvent(e);
  return e.defaultPrevented;
};
const source = document.querySelector(from);
fire(source, 'dragstart');
const target = document.querySelector(to);
const takes = fire(target, 'dragover');
if (takes) fire(target, 'drop');
return takes;
"""


def test_drag_and_drop_where_there_is_a_pointer(
    page: webdriver.Chrome, play_arena: ServerProcess
) -> None:
    open_play(page, play_arena, "/play?variant=swiss&seed=7")
    # t3's card cannot go on t5: the drop is not taken, nothing is played
    assert page.execute_script(DRAG, "[data-key='t3:2']", "[data-key='t5:4']") is False
    assert page.execute_script(DRAG, "[data-key='t9:0']", "[data-key='fD']") is True
    assert board_at(page, 2) == 2
    assert text_of(page, "#said") == "played t9f"
