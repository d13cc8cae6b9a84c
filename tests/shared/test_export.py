"""The text game record: what is written is read back, and its moves replay on the engine."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shared import apply_move, legal_moves, new_game
from shared.deal import deal_deck
from shared.errors import ClientError
from shared.events import move_event, start_event
from shared.export import (
    BAD_EXPORT,
    ExportedGame,
    ExportHeader,
    exported_events,
    parse_export,
    write_export,
)
from shared.views import public_fold, public_view
from tests.shared.test_record import games

headers = st.builds(
    ExportHeader,
    room=st.from_regex(r"[a-z0-9]{4,12}", fullmatch=True),
    player=st.text(min_size=1, max_size=40),
    result=st.sampled_from(["won", "resigned", "over", "playing"]),
    place=st.one_of(st.none(), st.integers(1, 4)),
    seed=st.one_of(st.none(), st.text(max_size=64)),
    salt=st.one_of(st.none(), st.from_regex(r"[0-9a-f]{32}", fullmatch=True)),
    commitment=st.one_of(st.none(), st.from_regex(r"[0-9a-f]{64}", fullmatch=True)),
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headers, games())
def test_what_is_written_is_read_back(header: ExportHeader, events: list[dict[str, Any]]) -> None:
    events = [e for e in events if e.get("reason") in (None, "abandoned")]
    text = write_export(header, events)
    assert parse_export(text) == ExportedGame(header, exported_events(events))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(games())
def test_the_parsed_moves_replay_on_the_engine_to_the_same_final_state(
    events: list[dict[str, Any]],
) -> None:
    start = events[0]
    header = ExportHeader(room="k2x7m4qa", player="ann", result="over")
    parsed = parse_export(write_export(header, events))
    state = new_game(start["variant"], deck=start["deck"])
    for event in parsed.events[1:]:
        if event["type"] == "moved":
            state = apply_move(state, event["move"])
    assert public_view(state).tableau == public_fold(parsed.events).tableau
    assert public_view(state).foundations == public_fold(parsed.events).foundations
    assert public_view(state).waste == public_fold(parsed.events).waste


def test_a_record_reads_as_documented() -> None:
    text = write_export(
        ExportHeader(room="k2x7m4qa", player="Ann", result="won", place=1, seed="42"),
        _short_game(),
    )
    lines = text.splitlines()
    assert lines[:4] == [
        '[Game "Solitaire Arena"]',
        '[Room "k2x7m4qa"]',
        '[Variant "quadrennial"]',
        '[DealVersion "1"]',
    ]
    assert '[Seed "42"]' in lines
    assert '[Start "2026-05-28T20:26:40.000Z"]' in lines
    assert lines[-1].startswith("3. ")
    assert " 0:02.500" in lines[-2]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(headers, games(), st.lists(st.text(max_size=60), max_size=3), st.text(max_size=60))
def test_comments_are_kept_out_of_the_game(
    header: ExportHeader, events: list[dict[str, Any]], notes: list[str], said: str
) -> None:
    """Comments (an analysis's, a person's) read back as the same game as none."""
    events = [e for e in events if e.get("reason") in (None, "abandoned")]
    moves = sum(1 for e in events if e["type"] == "moved")
    comments = dict.fromkeys(range(1, moves + 1, 2), said)
    text = write_export(header, events, notes=notes, comments=comments)
    assert parse_export(text) == parse_export(write_export(header, events))


def test_a_comment_runs_to_the_line_end() -> None:
    header = ExportHeader(room="k2x7m4qa", player="Ann", result="won")
    text = write_export(
        header,
        _short_game(),
        notes=["Analysis: this deal could be won;\nmove 2: d lost a won game."],
        comments={2: "lost a won game (won -> lost)"},
    )
    lines = text.splitlines()
    first = lines.index("") + 1
    assert lines[first] == "; Analysis: this deal could be won; move 2: d lost a won game."
    assert lines[first + 2].startswith("2. ")
    assert lines[first + 2].endswith(" ; lost a won game (won -> lost)")
    assert parse_export(text).events == parse_export(write_export(header, _short_game())).events


def _short_game() -> list[dict[str, Any]]:
    """Three moves of Quadrennial seed 42, 1.25 s apart."""
    deck = deal_deck("quadrennial", 42)
    events = [start_event("quadrennial", deck, at=1_780_000_000_000)]
    state = new_game("quadrennial", deck=deck)
    for i in range(3):
        move = sorted(legal_moves(state))[0]
        events.append(move_event(state, move, at=1_780_000_000_000 + 1250 * (i + 1)))
        state = apply_move(state, move)
    return events


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (lambda t: t.replace('[Game "Solitaire Arena"]', ""), "Game"),
        (lambda t: t.replace('[Moves "3"]', '[Moves "4"]'), "Moves"),
        (lambda t: t.replace("2. ", "7. "), "move 7"),
        (lambda t: t.replace(" 0:02.500", " 0:02.5"), "time"),
        (lambda t: t.replace('"quadrennial"', '"klondike"'), "variant"),
        (lambda t: t + "resign 0:09.000\n1. d 0:10.000\n", "resignation"),
        (lambda t: t.replace("Start", "Begin"), "Start"),
    ],
)
def test_a_bad_record_says_what_is_wrong(change: Any, says: str) -> None:
    text = write_export(ExportHeader(room="r", player="p", result="won"), _short_game())
    with pytest.raises(ClientError, match=says) as refused:
        parse_export(change(text))
    assert refused.value.code == BAD_EXPORT


def test_moves_that_do_not_replay_are_refused() -> None:
    text = write_export(ExportHeader(room="r", player="p", result="won"), _short_game())
    first = next(line for line in text.splitlines() if line.startswith("1. "))
    with pytest.raises(ClientError, match="do not replay"):
        parse_export(text.replace(first, "1. redeal 0:01.250"))
