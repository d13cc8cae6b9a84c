"""Getting into a room: a mode's connection opened (taking back a seat kept on disk), and a
refused `join` said in words a player can act on."""

from __future__ import annotations

from typing import Any

from client.app import App
from client.cli import Output
from client.connection import RequestFailed
from client.room_client import RoomClient
from client.seats import Seat
from client.session import Session
from shared.errors import ArenaError, ClientError


async def connected(
    args: Any,
    output: Output,
    script: list[str] | None,
    title: str,
    *,
    resume: Seat | None = None,
    room: str | None = None,
    **kw: Any,
) -> tuple[App, RoomClient]:
    """A mode's app and room client, connected to ``args.server`` (resuming ``resume``'s seat;
    if the server does not give it back, the client knows no room), naming the room it is for
    (``room``, else the seat's)."""
    session = Session(title=title, color=output.color)
    app = App(session, output, script=script)
    app.variant = getattr(args, "variant", None)
    client = RoomClient(app, **kw)
    if resume is not None:
        # Known before the `welcome`: the server sends the room and the game right after it.
        client.state.me, client.state.room_id = resume.player, resume.room
    await client.connect(
        args.server,
        args.name,
        resume=resume.token if resume else None,
        room=room or (resume.room if resume is not None else None),
    )
    if resume is not None and not resumed(client, resume):
        client.state.forget_room()
    return app, client


def resumed(client: RoomClient, seat: Seat | None) -> bool:
    """Whether the `welcome` gave back the seat kept on disk, in a race still on."""
    conn = client.conn
    assert conn is not None
    return bool(
        seat is not None
        and conn.resumed
        and str(conn.welcome.get("room") or "").lower() == seat.room.lower()
    )


def room_error(code: str, error: ArenaError) -> ArenaError:
    """A refused `join` said once, in words a player can act on."""
    if error.code == "no_such_room":
        return ClientError(
            f"there is no room {code} on this server (check the code; 'solitaire rooms' lists "
            "the open ones)",
            code=error.code,
        )
    if error.code == "wrong_status":
        return ClientError(
            f"room {code} has already started or finished: 'solitaire watch {code}' watches it",
            code=error.code,
        )
    return error


async def join_as_spectator(client: RoomClient, code: str) -> None:
    """Join room ``code`` to watch, and wait for its state (a refusal in plain words)."""
    assert client.conn is not None
    client.state.room_id = code
    try:
        await client.conn.request(
            {"type": "join", "room": code, "role": "spectator"}, expect="joined"
        )
    except RequestFailed as error:
        raise room_error(code, error) from None
    await client.wait_for(lambda: bool(client.state.room), 15.0)
