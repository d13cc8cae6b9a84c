"""Bot seats, pure: who may seat a bot, how many a room takes, and which process runs each.

A bot's seat is a ``player_joined`` with its level (``bot``) and no account; its connection
names the process whose task plays it (``<process>.bot.<player>``), as a person's names the
connection holding their seat. When that process stops beating, its seats go away as any
(``player_away``, server/race/services/presence.py), and another process claims the bot with a
``player_back`` appended at the room's version: one claim wins, so a bot is never played twice.
"""

from __future__ import annotations

from server.kernel.errors import NotAllowed, RoomFull, TooManyBots, WrongStatus
from server.kernel.names import unique_name
from server.race.domain.events import PlayerBack, PlayerJoined, RoomEvent
from server.race.domain.lifecycle import allows
from server.race.domain.model import Room

BOT_CONNECTION = ".bot."
"""What a bot's connection id holds between its process and its player."""


def bot_connection(process: str, player: str) -> str:
    return f"{process}{BOT_CONNECTION}{player}"


def process_of(connection: str) -> str:
    """The process a connection id (``<process>.<n>`` or a bot's) belongs to."""
    return connection.split(".", 1)[0]


def check_bots(count: int, *, capacity: int, seated_bots: int = 0) -> None:
    """TooManyBots unless a room of ``capacity`` keeps a seat for a person with ``count`` more
    bots beside the ``seated_bots`` it has."""
    if seated_bots + count > capacity - 1:
        raise TooManyBots(
            f"a room of {capacity} takes at most {capacity - 1} bot(s): one seat is a person's"
        )


def decide_add_bot(
    room: Room,
    *,
    by: str | None,
    player: str,
    name: str,
    level: int,
    process: str,
    now: int,
) -> list[RoomEvent]:
    """Seat a bot of ``level`` in the lobby, asked by ``by`` (None: the server itself, for a
    quick race). Only the room's creator adds bots, and not to a quick race's or a daily's
    room; a bot makes a rated room's race unrated (``Room.rated``, docs/ratings.md)."""
    meta = room.settings
    if by is not None:
        if meta.creator != by:
            raise NotAllowed("only the room's creator can add a bot")
        if meta.members:
            raise NotAllowed(f"room {room.id} is for its matched players: no bot can join")
    if not allows(room.status, PlayerJoined):
        raise WrongStatus(f"room {room.id} is {room.status.value}: bots join in the lobby")
    check_bots(1, capacity=meta.capacity, seated_bots=len(room.bots()))
    if len(room.seats) >= meta.capacity:
        raise RoomFull(f"room {room.id} is full")
    unique = unique_name(name, room.names())
    return [
        PlayerJoined(
            now, player, unique, "", bot_connection(process, player), account=None, bot=level
        )
    ]


def decide_claim_bot(
    room: Room, player: str, *, process: str, live: set[str], now: int
) -> list[RoomEvent]:
    """``process`` takes over a bot whose seat no live process holds (its process stopped
    beating, or the seat went away); nothing if a live process holds it, or it is this one."""
    seat = room.seats.get(player)
    if seat is None or not seat.bot or not allows(room.status, PlayerBack):
        return []
    if seat.connection is not None and process_of(seat.connection) in live:
        return []
    return [PlayerBack(now, player, bot_connection(process, player))]
