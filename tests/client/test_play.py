"""client.play: what a typed move leaves on screen."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from client.app import App
from client.cli import Output
from client.play import play_move
from client.session import MESSAGE_LINES, Session
from shared import deal_deck, new_game, public_view
from shared.errors import ClientError


class WaitingDriver:
    """A driver whose move is answered only when the test says so (a reconnect in between)."""

    def __init__(self) -> None:
        self.view: Any = public_view(new_game("swiss", deck=deal_deck("swiss", 1)))
        self.answered = asyncio.Event()
        self.sent: list[str] = []

    async def move(self, move: str) -> None:
        self.sent.append(move)
        await self.answered.wait()

    async def resign(self) -> None:
        self.sent.append("resign")

    def undo(self) -> None:
        raise ClientError("undo is only possible offline (the server keeps every move)")

    def events(self) -> list[dict[str, Any]]:
        return []


def make_app() -> App:
    return App(
        Session(title="t"), Output(color=False, tty=False, json=True), script=[], out=io.StringIO()
    )


async def test_news_said_while_a_move_waited_stays_on_screen() -> None:
    app = make_app()
    app.session.say("an old hint")
    driver = WaitingDriver()
    playing = asyncio.create_task(play_move(app, driver, "d"))
    await asyncio.sleep(0)
    assert driver.sent == ["d"]
    app.session.say("Reconnected: the game goes on.")  # what the room client says meanwhile
    driver.answered.set()
    assert await playing
    assert list(app.session.messages) == ["Reconnected: the game goes on.", "played d"]


@given(
    before=st.lists(st.text(max_size=3), max_size=8),
    during=st.lists(st.text(max_size=3), max_size=8),
)
def test_clearing_keeps_exactly_what_was_said_after_the_mark(
    before: list[str], during: list[str]
) -> None:
    session = Session(title="t")
    for text in before:
        session.say(text)
    mark = session.said
    for text in during:
        session.say(text)
    session.clear_messages(keep_after=mark)
    assert list(session.messages) == during[-MESSAGE_LINES:]
