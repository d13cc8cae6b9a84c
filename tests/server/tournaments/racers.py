"""Scripted tournament racers for end-to-end tests: each registers, joins, and plays every race
it is paired into (a few legal moves read from its own public board, then it resigns), until
the tournament is finished; across a server's death it reconnects to another and carries on."""

from __future__ import annotations

import asyncio
import contextlib
import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from websockets.exceptions import ConnectionClosed

from shared.protocol import encode_unchecked
from shared.views import public_fold, public_legal_moves
from tests.server.wsclient import Client


async def first(
    client: Client, match: Callable[[dict[str, Any]], bool], wait_s: float
) -> dict[str, Any]:
    """The first unread message ``match`` takes (it is read); ConnectionError when the
    connection closes first."""
    async with asyncio.timeout(wait_s):
        while True:
            for msg in list(client.unread):
                if match(msg):
                    client.unread.remove(msg)
                    return msg
            if client.reader is not None and client.reader.done():
                raise ConnectionError("closed")
            client.arrived.clear()
            await client.arrived.wait()


async def ask(
    client: Client, msg: dict[str, Any], *answers: str, wait_s: float = 60
) -> dict[str, Any]:
    """Send ``msg`` with a fresh ref; its answer (one of ``answers``) or the error it caused."""
    ref = uuid.uuid4().hex[:8]
    await client.send_raw(encode_unchecked({**msg, "ref": ref}))  # bad input goes out as is
    kinds = (*answers, "error")
    return await first(client, lambda m: m.get("ref") == ref and m["type"] in kinds, wait_s)


def _room_of(msg: dict[str, Any]) -> Any:
    where = msg.get("room")
    return where.get("id") if isinstance(where, dict) else where


async def next_of(
    client: Client, kinds: Sequence[str], room: str | None = None, wait_s: float = 90
) -> dict[str, Any]:
    """The first unread message of one of ``kinds`` (of ``room`` if given)."""
    return await first(
        client, lambda m: m["type"] in kinds and (room is None or _room_of(m) == room), wait_s
    )


async def answer_to(client: Client, move_id: int, wait_s: float = 30) -> dict[str, Any]:
    """The ack or reject of a move."""
    return await first(
        client, lambda m: m["type"] in ("ack", "reject") and m.get("id") == move_id, wait_s
    )


async def connect(
    url: str, name: str, key: str | None = None, resume: str | None = None
) -> tuple[Client, dict[str, Any]]:
    client = await Client(url, name).open()
    msg: dict[str, Any] = {"type": "hello", "protocol": 1, "name": name}
    if key is not None:
        msg["key"] = key
    if resume is not None:
        msg["resume"] = resume
    await client.send(msg)
    welcome = await client.expect("welcome")
    client.session, client.token = welcome["session"], welcome["token"]
    return client, welcome


async def register(url: str, name: str) -> str:
    client, _ = await connect(url, name)
    try:
        answer = await ask(
            client, {"type": "register", "name": name, "password": "long password"}, "account"
        )
        assert answer["type"] == "account", answer
        return str(answer["key"])
    finally:
        await client.close()


def own_board_moves(client: Client, room: str) -> set[str]:
    """The legal moves of this client's own game in ``room``, from its public events."""
    events: list[dict[str, Any]] = []
    for msg in client.messages:
        if msg.get("room") != room or msg.get("player") != client.session:
            continue
        if msg["type"] == "game":
            events = list(msg["events"])
        elif msg["type"] == "game_event" and msg["version"] == len(events) + 1:
            events.append(msg["event"])
    return public_legal_moves(public_fold(events)) if events else set()


@dataclass
class Racer:
    """One scripted entrant."""

    name: str
    urls: list[str]
    tournament: str
    key: str = ""
    rng: random.Random = field(default_factory=random.Random)
    paired: list[str] = field(default_factory=list)  # rooms, in order
    finished: list[str] = field(default_factory=list)
    last_standings: dict[str, Any] | None = None
    final_state: dict[str, Any] | None = None
    reconnects: int = 0
    client: Client | None = None

    async def run(self) -> None:
        resume: str | None = None
        url_index = 0
        while self.final_state is None:
            url = self.urls[url_index % len(self.urls)]
            try:
                client, welcome = await connect(url, self.name, self.key, resume)
            except OSError:
                url_index += 1
                await asyncio.sleep(0.2)
                continue
            self.client = client
            try:
                answer = await ask(
                    client,
                    {"type": "join_tournament", "tournament": self.tournament},
                    "tournament_joined",
                )
                if answer["type"] == "error" and answer["code"] == "tournament_over":
                    await ask(
                        client,
                        {"type": "follow_tournament", "tournament": self.tournament},
                        "tournament",
                    )
                elif answer["type"] == "error":
                    raise AssertionError(answer)
                resume = client.token
                if welcome["resumed"] and welcome["room"]:
                    await self.play(client, welcome["room"])
                await self.loop(client)
            except (ConnectionError, ConnectionClosed, TimeoutError):
                if self.final_state is not None:
                    break
                self.reconnects += 1
                url_index += 1
            finally:
                self.keep(client)
                await client.close()

    def keep(self, client: Client) -> None:
        for msg in client.messages:
            if msg["type"] != "tournament_standings" or msg["tournament"] != self.tournament:
                continue
            if self.last_standings is None or msg["version"] >= self.last_standings["version"]:
                self.last_standings = msg

    async def loop(self, client: Client) -> None:
        while True:
            msg = await next_of(client, ("tournament_paired", "tournament"))
            if msg["type"] == "tournament":
                if msg["tournament"]["status"] == "finished":
                    self.final_state = msg["tournament"]
                    # the final standings come with it (or came before it)
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(5):
                            while True:
                                self.keep(client)
                                if (self.last_standings or {}).get("final"):
                                    break
                                client.arrived.clear()
                                await client.arrived.wait()
                    return
                continue
            self.paired.append(msg["room"])
            await self.play(client, msg["room"])

    async def play(self, client: Client, room: str) -> None:
        """Play one race: wait for its start, make a few moves, resign, wait for its end."""
        first = await next_of(client, ("started", "finished", "room"), room)
        while first["type"] == "room" and first["room"]["status"] in ("lobby", "countdown"):
            first = await next_of(client, ("started", "finished", "room"), room)
        if first["type"] == "started" or (
            first["type"] == "room" and first["room"]["status"] == "racing"
        ):
            for _ in range(self.rng.randint(1, 4)):
                await asyncio.sleep(0.05)
                legal = own_board_moves(client, room)
                if not legal:
                    break
                client.next_id += 1
                move = sorted(legal)[self.rng.randrange(len(legal))]
                await client.send({"type": "move", "id": client.next_id, "move": move})
                answer = await answer_to(client, client.next_id)
                if answer["type"] == "reject":
                    break
            await client.send({"type": "resign"})
            await next_of(client, ("finished",), room)
        self.finished.append(room)
