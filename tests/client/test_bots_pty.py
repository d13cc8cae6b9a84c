"""Bots as the terminal shows them, through real pseudo-terminals at 80x24 against a real
server whose bots think fast: `race create --bots` seats them, `bot` adds one in the lobby,
the panel and the results name them as bots, the race is unrated; and a quick race that finds
nobody says it gives bots, then races them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pexpect
import pytest

from tests.client.pty_driver import Term, spawn, type_line, words
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e

SIZE = {"columns": 80, "rows": 24}
FAST_BOTS = ["--bot-floor-ms", "30", "--bot-think-scale", "0.02", "--quick-bot-after-s", "2"]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[ServerProcess]:
    process = ServerProcess(log_path=tmp_path / "server.log", extra_args=FAST_BOTS)
    process.start()
    yield process
    process.stop()


def run(server: ServerProcess, name: str, *args: str) -> pexpect.spawn:
    return spawn(
        *args, "--server", server.url, "--no-color", env_extra={"SOLITAIRE_NAME": name}, **SIZE
    )


def resign(child: pexpect.spawn) -> None:
    type_line(child, "resign")
    child.expect("Resign this game")
    type_line(child, "y")


def test_a_race_created_with_bots_and_one_added_in_the_lobby(server: ServerProcess) -> None:
    # The race's clock bounds it: after ann resigns, her bots play on until they are done, and
    # on a loaded machine two of them took over 90 s.
    ann = run(server, "ann", "race", "create", "--bots", "1", "--bot-level", "2",
              "--players", "3", "--countdown", "0", "--time-limit", "45")  # fmt: skip
    try:
        ann.expect("Ada bot2")  # the panel marks the bot as one
        ann.expect(words("bot(s) racing: unrated"))
        type_line(ann, "bot 9")
        ann.expect(words("bot: field 'level' must be <= 5"))
        type_line(ann, "bot 4")
        ann.expect(words("A bot took a seat: this race is unrated."))
        ann.expect("Go! The race has started", timeout=30)  # the third seat taken: it starts
        # On screen the lines are in the order things happened: the seat, then the start.
        term = Term(ann, **SIZE)
        term.type("moves")  # a redraw, read from here on
        screen = " ".join(term.wait(r"Go! The race has started").split())
        assert screen.index("A bot took a seat") < screen.index("Go! The race has started")
        type_line(ann, "bot")
        ann.expect(words("bot: room"))  # too late: bots join in the lobby
        resign(ann)
        ann.expect("Race over", timeout=90)
        # The bots' names in the results are the panel's (`Ada bot2`), not another form.
        ann.expect(r"Results: [^\r\n]*\b\w+ bot4 \(\d+[^)]*\)")  # out of time, perhaps
        assert "(bot " not in str(ann.before) + str(ann.after)
    finally:
        ann.close(force=True)


@pytest.mark.long
def test_a_quick_race_with_nobody_else_races_a_bot(server: ServerProcess) -> None:
    ann = run(server, "ann", "race", "quick", "--variant", "quadrennial")
    try:
        ann.expect(r"a bot in \ds")
        ann.expect(words("Nobody found in time: you race 1 bot, unrated"), timeout=30)
        ann.expect("Go! The race has started", timeout=30)
        resign(ann)
        ann.expect("Race over", timeout=90)
        ann.expect(r"Results: [^\r\n]*\b\w+ bot3 \(\d+\)")
    finally:
        ann.close(force=True)
