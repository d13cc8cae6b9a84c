"""The room's lifecycle: which room event may happen in which status, and the status after it.

Keyed by (status, event type), as h11 keys its transitions: the fold follows the table, and a
decision checks it before it builds an event, so a command and the fold cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from server.kernel.errors import WrongStatus
from server.race.domain.events import (
    CountdownCancelled,
    CountdownStarted,
    PlayerAway,
    PlayerBack,
    PlayerBerserked,
    PlayerJoined,
    PlayerLeft,
    RaceFinished,
    RaceStarted,
    RematchOffered,
    RoomClosed,
    RoomCreated,
    RoomEvent,
)


class RoomStatus(Enum):
    NEW = "new"  # no room_created folded yet: the room does not exist
    LOBBY = "lobby"
    COUNTDOWN = "countdown"
    RACING = "racing"
    FINISHED = "finished"
    CLOSED = "closed"  # a lobby nobody was connected to for the lobby TTL


_S = RoomStatus
_PRESENCE = (PlayerAway, PlayerBack)

TRANSITIONS: Mapping[tuple[RoomStatus, type[RoomEvent]], RoomStatus] = {
    (_S.NEW, RoomCreated): _S.LOBBY,
    (_S.LOBBY, PlayerJoined): _S.LOBBY,
    (_S.LOBBY, PlayerLeft): _S.LOBBY,
    (_S.COUNTDOWN, PlayerLeft): _S.COUNTDOWN,
    **{
        (status, kind): status
        for status in (_S.LOBBY, _S.COUNTDOWN, _S.RACING)
        for kind in _PRESENCE
    },
    (_S.LOBBY, CountdownStarted): _S.COUNTDOWN,
    (_S.COUNTDOWN, CountdownCancelled): _S.LOBBY,
    (_S.COUNTDOWN, RaceStarted): _S.RACING,
    (_S.RACING, RaceFinished): _S.FINISHED,
    (_S.FINISHED, RematchOffered): _S.FINISHED,
    (_S.LOBBY, RoomClosed): _S.CLOSED,
    (_S.LOBBY, PlayerBerserked): _S.LOBBY,
    (_S.COUNTDOWN, PlayerBerserked): _S.COUNTDOWN,
}
ENDED = frozenset({RoomStatus.FINISHED, RoomStatus.CLOSED})


def allows(status: RoomStatus, kind: type[RoomEvent]) -> bool:
    return (status, kind) in TRANSITIONS


def next_status(status: RoomStatus, kind: type[RoomEvent]) -> RoomStatus:
    """The status after an event of ``kind``; WrongStatus when the table has no such pair."""
    try:
        return TRANSITIONS[(status, kind)]
    except KeyError:
        raise WrongStatus(f"a room that is {status.value} cannot have {kind.TYPE}") from None
