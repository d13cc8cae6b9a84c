"""docs/protocol.md is a contract for third-party clients: its tables are read here and checked
against the server and the codec, so the two cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

import server.app
import server.net.connection
import server.race.wire.delivery
from server.net.connection import _VISIBLE_SERVER_CODES
from server.runtime.clock import FakeClock
from server.runtime.config import build_parser
from server.store import MemoryEventStore
from shared import protocol as p
from shared.errors import ArenaError, ClientError
from tests.server.parts import Peer, join, open_app

DOC = (Path(__file__).resolve().parents[1] / "docs" / "protocol.md").read_text()


def table(heading: str) -> list[list[str]]:
    """The rows (cells stripped) of the first table after the line that starts ``heading``."""
    lines = DOC[DOC.index(heading) :].splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
    return rows


def codes(cell: str) -> list[str]:
    return re.findall(r"`([a-z_0-9]+)`", cell)


def wire_codes() -> set[str]:
    """Every code an error or reject can carry: each client-error leaf, the server errors the
    connection passes through (no_winnable_deal), and server_error."""

    def leaves(cls: type[ArenaError]) -> set[type[ArenaError]]:
        found = set()
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] in ("shared", "server"):  # not tests' own
                found |= leaves(sub) or {sub}
        return found

    return {c.code for c in leaves(ClientError)} | _VISIBLE_SERVER_CODES | {"server_error"}


def test_the_error_table_lists_every_wire_code_and_no_other() -> None:
    documented = {codes(row[0])[0] for row in table("## Error codes")}
    assert documented == wire_codes()


def test_the_reject_codes_of_moves_are_those_the_error_table_sends_as_reject() -> None:
    rejects = {codes(row[0])[0] for row in table("## Error codes") if "reject" in row[1]}
    moves = DOC[DOC.index("### Moves") : DOC.index("### Misc")]
    listed = set(codes(moves[moves.index("Reject codes:") : moves.index("When several apply")]))
    assert listed & wire_codes() == rejects


def test_the_close_codes_are_the_protocols() -> None:
    """One home (shared.protocol): each constant documented, each documented code a constant,
    and the server's modules use those (no code of their own)."""
    documented = {int(row[0]) for row in table("| close code")}
    constants = {
        value
        for name, value in vars(p).items()
        if name.startswith("CLOSE_") and isinstance(value, int)
    }
    assert documented == constants == set(p.CLOSE_CODES)
    for module in (server.net.connection, server.race.wire.delivery):
        for name, value in vars(module).items():
            if name.startswith("CLOSE_"):
                assert value is getattr(p, name), f"{module.__name__}.{name}"


def test_every_limit_option_and_variable_is_the_servers() -> None:
    help_text = build_parser({}).format_help()
    for row in table("## Limits and close codes"):
        for option in re.findall(r"`(--[a-z-]+)`", row[1]):
            assert option in help_text, option
        for variable in re.findall(r"`(ARENA_[A-Z_]+)`", row[1]):
            assert f"env {variable}" in " ".join(help_text.split()), variable


def test_the_message_tables_are_the_codecs() -> None:
    client = {codes(row[0])[0] for row in table("## Client → server messages")}
    assert client == set(p.CLIENT_MESSAGES)
    documented_server = set(re.findall(r"^\| `([a-z_]+)` \|", DOC, re.M)) - client
    documented_server |= {p.WELCOME}  # in its own field table under Handshake
    assert set(p.SERVER_MESSAGES) <= documented_server | {"error"}


def test_error_frames_always_carry_ref() -> None:
    assert p.error_message("bad_frame", "x") == {
        "type": "error",
        "code": "bad_frame",
        "reason": "x",
        "ref": None,
    }
    p.validate(p.error_message("bad_field", "x", ""))  # an empty ref is a ref


async def test_room_state_and_player_state_have_the_documented_fields() -> None:
    store, clock = MemoryEventStore(), FakeClock()
    app = open_app(store, clock)
    try:
        room = await app.commands.create_room({"variant": "swiss"}, creator="ann")
        await join(app, Peer("ann"), room.id)
        state = app.delivery.room_state(room)
    finally:
        await app.close_parts()
        await store.aclose()
    documented = {f for row in table("`room_state` is a map") for f in codes(row[0])}
    assert set(state) == documented
    paragraph = DOC[DOC.index("`player_state` is a map") :].split("\n\n")[0]
    player_fields = set(re.findall(r"`([a-z_]+)(?::[^`]*)?`", paragraph)) - {
        "player_state",
        "progress",
    }
    (player,) = state["players"]
    assert set(player) == player_fields
