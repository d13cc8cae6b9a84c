"""Which feature answers a frame. Each feature (the race, accounts, the daily, ...) gives every
connection a ``Part``: its request handlers by message type, and what it does on ``hello`` and
when the connection goes. The app assembles the features into a ``Router``, so a connection
routes a frame without importing any feature."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

Handler = Callable[[dict[str, Any]], Awaitable[None]]
"""A request's handler: it answers through the connection, or raises a ClientError."""


class Identity(Protocol):
    """Who a connection is logged in as: the part of a feature that knows accounts."""

    @property
    def account_id(self) -> str | None:
        """The account's id (its folded name), None for a guest."""

    @property
    def account_name(self) -> str | None:
        """The account's name as shown, None for a guest."""


class Link(Protocol):
    """What a feature's part may use of its connection: who it is and how to answer it."""

    session: str
    token: str
    name: str
    connection_id: str
    identity: Identity | None

    def send(self, msg: dict[str, Any] | bytes) -> None: ...

    def reply(self, request: dict[str, Any], msg: dict[str, Any]) -> None: ...


class Part:
    """A feature's share of one connection. Every hook does nothing unless a feature says
    otherwise; handlers are asked for once, by the first request past ``hello``."""

    def handlers(self) -> Mapping[str, Handler]:
        return {}

    async def greet(self, hello: dict[str, Any]) -> None:
        """Before the welcome: who the connection is (a key's account, a resumed seat)."""

    def welcome(self, welcome: dict[str, Any]) -> None:
        """The fields this feature adds to the welcome."""

    async def greeted(self) -> None:
        """After the welcome went out (a resumed seat is attached to its room)."""

    async def gone(self) -> None:
        """The connection ended: what this feature held for it is let go. Never raises."""


class Feature(Protocol):
    """A feature as the router knows it: it makes each connection's part."""

    def attach(self, link: Any) -> Part: ...


@dataclass(frozen=True, slots=True)
class Router:
    """The features in the order their parts greet a hello and let go of a connection."""

    features: tuple[Feature, ...]

    def attach(self, link: Link) -> tuple[Part, ...]:
        return tuple(feature.attach(link) for feature in self.features)


class Requests(Part):
    """A part that only answers requests, its handlers made by the first request that needs
    them: an idle connection (a hello, then pings) never pays for them."""

    def __init__(self, make: Callable[[], Mapping[str, Handler]]) -> None:
        self.make = make

    def handlers(self) -> Mapping[str, Handler]:
        return self.make()
