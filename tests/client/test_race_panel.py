"""How a game's end is said in the terminal: a clock that ran out is a timeout in every line
(the racer's status, the rival's message, the panel, a replay's step), never a resignation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from client.race_panel import done_status, racers, results_line, someone_done
from client.replay import step_label
from client.room_state import RoomState
from client.screen import RacerState
from client.session import game_status, timed_out


@dataclass(frozen=True)
class View:
    """What game_status reads of a public view."""

    foundation_count: int
    moves_made: int = 12
    won: bool = False
    resigned: bool = True
    over: bool = True


CLOCK_OUT = {"type": "resigned", "v": 1, "at": 5, "reason": "clock"}


@pytest.mark.parametrize("cards", [0, 1, 2])
def test_a_clock_that_ran_out_is_said_as_a_timeout(cards: int) -> None:
    shown = f"{cards} card{'' if cards == 1 else 's'}"
    assert game_status(View(cards), out_of_time=True) == (
        f"You ran out of time with {shown} on the foundations."
    )
    assert game_status(View(cards)) == f"You resigned with {shown} on the foundations."
    msg = {"status": "timed_out", "foundation": cards, "moves": 3}
    assert someone_done("alice", msg) == f"alice ran out of time with {shown} on the foundations."
    assert someone_done("alice", {**msg, "status": "resigned"}).startswith("alice resigned")


def test_the_racers_own_line_says_timeout_whichever_message_came_first() -> None:
    state = RoomState()
    state.me = "p1"
    progress: dict[str, Any] = {"status": "timed_out", "foundation": 2, "moves": 9}
    # The progress before the game's last event: the line is built from the progress alone.
    assert done_status(state, progress) == "You ran out of time: 2 cards on the foundations."


def test_the_panel_and_a_replay_say_time_up() -> None:
    state = RoomState()
    state.me = "p1"
    state.progress = {
        "p1": {"status": "timed_out", "foundation": 2, "moves": 9},
        "p2": {"status": "resigned", "foundation": 1, "moves": 4},
    }
    shown = racers(state, started_at=0)
    assert shown["p1"].state is RacerState.TIME_UP
    assert shown["p2"].state is RacerState.RESIGNED
    assert timed_out(CLOCK_OUT)
    assert not timed_out({**CLOCK_OUT, "reason": "abandoned"})
    assert step_label(CLOCK_OUT) == "ran out of time"
    assert step_label({"type": "resigned", "v": 1, "at": 5}) == "resigned"


def test_the_results_line_says_whose_clock_ran_out() -> None:
    ranking = [
        {"place": 1, "name": "bob", "foundation": 3, "status": "resigned"},
        {"place": 2, "name": "ann", "foundation": 0, "status": "timed_out"},
    ]
    assert results_line(ranking) == "Results: 1. bob (3), 2. ann (0, out of time)"
