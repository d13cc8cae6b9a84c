"""Bots as the terminal client shows them, pure: the `bot [LEVEL]` command, the panel's bot
mark whatever the name's length, the room list's note, the searching line's countdown."""

from __future__ import annotations

from client.commands import Kind, parse_command
from client.quick import searching_line
from client.race_panel import results_line
from client.room_state import RoomState
from client.rooms import room_lines
from client.screen import NAME_COLUMNS, Racer, render_panel
from client.text import racer_name, width


def test_bot_with_or_without_a_level_is_a_command_and_anything_else_a_move() -> None:
    assert parse_command("bot").kind is Kind.BOT
    assert parse_command("BOT 4").arg == "4"
    assert parse_command("bot 9").kind is Kind.BOT  # the server's range says no, not the parser
    assert parse_command("bot five").kind is Kind.MOVE


def test_the_panel_marks_a_bot_even_when_its_name_is_long() -> None:
    racers = [Racer("Hazel (bot 4)", bot=4), Racer("Ada (bot 1)", bot=1), Racer("ann", me=True)]
    panel = render_panel(racers, title="Racers", color=False)
    assert "Hazel bot4" in panel[2]
    assert "Ada bot1" in panel[3]
    assert "bot" not in panel[4]
    assert all(width(line) <= 32 for line in panel)
    assert len("Hazel bot4") <= NAME_COLUMNS


def test_the_room_list_says_a_room_has_bots_and_is_unrated() -> None:
    room = {
        "id": "k2x7m4qa",
        "variant": "swiss",
        "status": "lobby",
        "players": 2,
        "capacity": 4,
        "names": ["ann", "Ada (bot 3)"],
        "bots": [None, 3],
    }
    (_, line) = room_lines([room])
    assert "1 bot: unrated" in line
    assert "bot" not in room_lines([{**room, "bots": [None, None], "names": ["a", "b"]}])[1]


def test_the_searching_line_counts_down_to_a_bot() -> None:
    msg = {"variant": "swiss", "players": 2, "rated": False, "waiting": 1, "waited_ms": 5000,
           "range": "any", "bot_in_ms": 14_200}  # fmt: skip
    assert searching_line(msg).endswith("a bot in 15s")
    assert "bot" not in searching_line({**msg, "bot_in_ms": None})


def test_a_bot_has_one_name_in_the_panel_the_results_and_the_messages() -> None:
    state = RoomState()
    state.fold_room({"id": "r1", "players": [{"player": "b1", "name": "Ada (bot 2)", "bot": 2}]})
    assert state.names["b1"] == "Ada bot2"
    ranking = [{"place": 1, "player": "b1", "name": "Ada (bot 2)", "bot": 2, "foundation": 4}]
    assert results_line(ranking) == "Results: 1. Ada bot2 (4)"
    panel = render_panel([Racer(state.names["b1"], bot=2)], title="Racers", color=False)
    assert "Ada bot2" in panel[2]
    assert state.player_id("Ada bot2", []) == state.player_id("Ada (bot 2)", []) == "b1"
    assert racer_name("ann") == "ann"
