"""A minimal protocol client for end-to-end tests: it keeps every frame it receives, so tests can
check that no stock order ever reaches a client, and waits for messages by type."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from typing import Any

import msgpack
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from shared import deal_deck, legal_moves, new_game
from shared.protocol import decode, encode, validate
from shared.state import GameState

TIMEOUT = 10.0


class Client:
    """One connection; ``frames`` holds every raw frame received, ``messages`` the decoded ones."""

    def __init__(self, url: str, name: str = "t") -> None:
        self.url = url
        self.name = name
        self.ws: ClientConnection | None = None
        self.frames: list[bytes] = []
        self.messages: list[dict[str, Any]] = []
        self.timed: list[tuple[float, dict[str, Any]]] = []  # each message with when it came
        self.unread: list[dict[str, Any]] = []
        self.arrived = asyncio.Event()
        self.reader: asyncio.Task[None] | None = None
        self.closed_code: int | None = None
        self.session = ""
        self.token = ""
        self.next_id = 0

    async def open(self) -> Client:
        self.ws = await connect(self.url, max_size=None, compression=None)
        self.reader = asyncio.create_task(self._read())
        return self

    async def hello(self, *, resume: str | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"type": "hello", "protocol": 1, "name": self.name}
        if resume is not None:
            msg["resume"] = resume
        await self.send(msg)
        welcome = await self.expect("welcome")
        self.session, self.token = welcome["session"], welcome["token"]
        return welcome

    async def _read(self) -> None:
        assert self.ws is not None
        try:
            async for frame in self.ws:
                assert isinstance(frame, bytes), "the server sends binary frames only"
                msg = decode(frame)
                # A batch is several messages of one server tick: each is kept on its own.
                inner = [validate(m) for m in msg["messages"]] if msg["type"] == "batch" else [msg]
                for one in inner:
                    self.frames.append(frame)
                    self.messages.append(one)
                    self.timed.append((time.monotonic(), one))
                    self.unread.append(one)
                self.arrived.set()
        except ConnectionClosed:
            pass
        finally:
            self.closed_code = self.ws.close_code
            self.arrived.set()

    async def send(self, msg: dict[str, Any]) -> None:
        assert self.ws is not None
        await self.ws.send(encode(msg))

    async def send_raw(self, data: bytes | str) -> None:
        assert self.ws is not None
        await self.ws.send(data)

    async def expect(
        self,
        kind: str,
        where: Callable[[dict[str, Any]], bool] = lambda m: True,
        wait_s: float = TIMEOUT,
    ) -> dict[str, Any]:
        """The first unread message of this type (and condition); earlier others stay unread."""
        async with asyncio.timeout(wait_s):
            while True:
                for i, msg in enumerate(self.unread):
                    if msg["type"] == kind and where(msg):
                        del self.unread[i]
                        return msg
                if self.reader is not None and self.reader.done():
                    raise AssertionError(f"closed ({self.closed_code}) while waiting for {kind}")
                self.arrived.clear()
                await self.arrived.wait()

    async def answer(self, move_id: Any) -> dict[str, Any]:
        """The ack or reject of one move id."""
        async with asyncio.timeout(TIMEOUT):
            while True:
                for i, msg in enumerate(self.unread):
                    if msg["type"] in ("ack", "reject") and msg.get("id") == move_id:
                        del self.unread[i]
                        return msg
                if self.reader is not None and self.reader.done():
                    raise AssertionError(f"closed ({self.closed_code}) before answer {move_id}")
                self.arrived.clear()
                await self.arrived.wait()

    async def move(self, move: str, move_id: Any = None) -> dict[str, Any]:
        if move_id is None:
            self.next_id += 1
            move_id = self.next_id
        await self.send({"type": "move", "id": move_id, "move": move})
        return await self.answer(move_id)

    async def wait_closed(self) -> int | None:
        assert self.reader is not None
        async with asyncio.timeout(TIMEOUT):
            await asyncio.shield(self.reader)
        return self.closed_code

    async def close(self) -> None:
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        if self.reader is not None:
            with contextlib.suppress(BaseException):
                await self.reader

    def game_events(self, player: str) -> list[dict[str, Any]]:
        """The public events of one game as this client saw them: a snapshot, then events."""
        events: list[dict[str, Any]] = []
        for msg in self.messages:
            if msg.get("player") != player:
                continue
            if msg["type"] == "game":
                events = list(msg["events"])
                assert msg["version"] == len(events)
            elif msg["type"] == "game_event":
                if msg["version"] <= len(events):
                    assert events[msg["version"] - 1] == msg["event"]
                else:
                    assert msg["version"] == len(events) + 1, "a gap in the game's events"
                    events.append(msg["event"])
        return events


def greedy_moves(state: GameState) -> list[str]:
    """A fixed Quadrennial policy: any card to a foundation, else deal, else redeal."""
    from shared import apply_move

    moves: list[str] = []
    while legal := legal_moves(state):
        to_foundation = sorted(m for m in legal if m.endswith("f"))
        if to_foundation:
            move = to_foundation[0]
        elif "d" in legal:
            move = "d"
        elif "redeal" in legal:
            move = "redeal"
        else:
            move = sorted(legal)[0]
        state = apply_move(state, move)
        moves.append(move)
    return moves


def winning_seed(prefix: str = "race-") -> tuple[str, list[str]]:
    """The first seed whose Quadrennial deal the greedy policy wins, with its moves."""
    from shared import apply_move

    for i in range(1000):
        seed = f"{prefix}{i}"
        state = new_game("quadrennial", deck=deal_deck("quadrennial", seed))
        moves = greedy_moves(state)
        for move in moves:
            state = apply_move(state, move)
        if state.won:
            return seed, moves
    raise AssertionError("no seed found that the greedy policy wins")


def stock_of(variant: str, deck: list[str]) -> list[str]:
    return deck[25:] if variant == "swiss" else deck[8:]


def _lists(value: Any) -> Iterable[list[Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            assert key not in ("deck", "stock"), f"a client received a {key!r} field"
            yield from _lists(item)
    elif isinstance(value, list):
        yield value
        for item in value:
            yield from _lists(item)


def assert_no_secrets(
    clients: Iterable[Client], variant: str, deck: list[str], seed: str | None
) -> None:
    """Nothing any client received holds the deck, the stock order, or the seed before the end."""
    stock = stock_of(variant, deck)
    packed_stock = msgpack.packb(stock)
    cards = set(deck)
    for client in clients:
        revealed_seed = False
        for frame, msg in zip(client.frames, client.messages, strict=True):
            assert packed_stock not in frame
            for items in _lists(msg):
                run = sum(1 for item in items if isinstance(item, str) and item in cards)
                assert run < 10, f"{client.name} got a list of {run} cards in {msg['type']}"
            if msg["type"] == "finished":
                revealed_seed = True
            if seed is not None and not revealed_seed:
                # The message itself: a batch frame may also hold the finished message after it.
                own = msgpack.packb(msg)
                assert seed.encode() not in own, f"{client.name} saw the seed in {msg}"
