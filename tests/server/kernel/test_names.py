"""Display names: cleaned of what could drive a terminal, measured in columns, unique per room."""

from __future__ import annotations

import unicodedata

from hypothesis import given
from hypothesis import strategies as st

from server.kernel.names import DEFAULT_NAME, MAX_NAME_COLUMNS, clean_name, unique_name, width_of
from server.runtime.clock import FakeClock
from server.store import MemoryEventStore
from tests.server.parts import Peer, join, open_app


def test_escape_sequences_and_controls_are_removed() -> None:
    assert clean_name("\x1b[41mann\x1b[0m") == "ann"
    assert clean_name("\x1b]0;owned\x07bob") == "bob"
    assert clean_name("c\x00a\x07r\x84l") == "carl"
    assert clean_name("x\x9b31my") == "xy"  # a C1 CSI sequence, whole
    assert clean_name("tab\there\nnow") == "tab here now"


def test_bidi_overrides_and_other_format_characters_are_removed() -> None:
    assert clean_name("abc\u202edcba\u202c") == "abcdcba"
    assert clean_name("\u2066x\u2069\u200by") == "xy"


def test_width_counts_columns_not_code_points() -> None:
    wide = clean_name("李" * 30)
    assert wide == "李" * 10
    assert width_of(wide) == MAX_NAME_COLUMNS
    assert width_of(clean_name("🙂" * 30)) <= MAX_NAME_COLUMNS
    assert clean_name("e\u0301" * 25) == "é" * 20  # combined to one column each


def test_nothing_printable_is_the_default_name() -> None:
    assert clean_name("\x1b[0m\u202e  ") == DEFAULT_NAME
    assert clean_name("") == DEFAULT_NAME


@given(st.text(max_size=64))
def test_a_clean_name_is_printable_and_fits(raw: str) -> None:
    name = clean_name(raw)
    assert name
    assert 0 < width_of(name) <= MAX_NAME_COLUMNS
    for char in name:
        assert unicodedata.category(char) not in {"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"}
    assert name == name.strip()
    assert "  " not in name
    assert clean_name(name) == name


def test_unique_names_get_a_suffix_that_still_fits() -> None:
    assert unique_name("ann", []) == "ann"
    assert unique_name("ann", ["ann"]) == "ann 2"
    assert unique_name("ann", ["ann", "ann 2"]) == "ann 3"
    long = "李" * 10
    assert width_of(unique_name(long, [long])) <= MAX_NAME_COLUMNS
    assert unique_name(long, [long]).endswith(" 2")


async def test_two_players_of_one_name_in_a_room_are_told_apart() -> None:
    store = MemoryEventStore()
    app = open_app(store, FakeClock())
    try:
        room = await app.commands.create_room({"variant": "swiss"}, creator="t")
        one, two = Peer("p1"), Peer("p2")
        for peer in (one, two):
            await app.commands.join(
                room, peer.session, name="ann", token=f"t{peer.session}", connection="c"
            )
        assert room.names() == ["ann", "ann 2"]
        await join(app, one, room.id)  # a seat it has keeps its name
        assert room.names() == ["ann", "ann 2"]
    finally:
        await app.close_parts()
