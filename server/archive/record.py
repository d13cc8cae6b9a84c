"""A finished room's record: what the archive keeps of it, and its stored form.

The stored form is one value per room (so writing it is one insert, all or nothing): a
msgpack map ``{"v": 1, "room": <zlib msgpack list of the room stream's events>, "games":
[[<stream>, <game record>], ...]}``; each game record is ``server.archive.games``' encoding
(the compact game record of docs/records.md). A room whose games were analysed has
``"analyses": [[<stream>, <zlib msgpack list of the stream's events>], ...]`` too (the
analysis streams kept with the room, docs/storage.md). The room's summary (what the room list
shows) is kept beside it, as msgpack.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import Any

import msgpack

from server.archive import games
from shared.errors import ArenaError, CorruptRecord

RECORD_VERSION = 1


@dataclass(frozen=True)
class ArchivedRoom:
    """A finished room as archived: events are the stores' (a msgpack round trip's) dicts, the
    room stream's first, then each game stream's, keyed by stream name in seat order."""

    room_id: str
    finished_at: int  # ms, the race's end
    summary: dict[str, Any]  # the room list's summary (docs/protocol.md, room_summary)
    room_events: list[dict[str, Any]]
    game_events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # The streams kept with the room beside its games (its games' analyses), keyed by name.
    analyses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def moves(self) -> int:
        """How many events the games hold (a game's moves and its start and end)."""
        return sum(len(events) for events in self.game_events.values())

    def events(self) -> int:
        """Every event the record holds: a record with more replaces one with fewer."""
        analysed = sum(len(events) for events in self.analyses.values())
        return len(self.room_events) + self.moves() + analysed


@dataclass(frozen=True)
class PackedRoom:
    """A record as the backends store it: the key, two columns for listing, two values."""

    room_id: str
    finished_at: int
    summary: bytes
    record: bytes
    events: int = 0  # how many events the record holds: a longer record of a room replaces it


def pack(room: ArchivedRoom) -> PackedRoom:
    record: dict[str, Any] = {
        "v": RECORD_VERSION,
        "room": zlib.compress(msgpack.packb(room.room_events), 9),
        "games": [[stream, games.encode_game(ev)] for stream, ev in room.game_events.items()],
    }
    if room.analyses:
        record["analyses"] = [
            [stream, zlib.compress(msgpack.packb(events), 9)]
            for stream, events in room.analyses.items()
        ]
    summary, packed = msgpack.packb(room.summary), msgpack.packb(record)
    return PackedRoom(room.room_id, room.finished_at, summary, packed, room.events())


def unpack(packed: PackedRoom) -> ArchivedRoom:
    """The record back; CorruptRecord (naming the room) for anything that does not decode."""
    try:
        summary = msgpack.unpackb(packed.summary)
        record = msgpack.unpackb(packed.record)
        if not isinstance(record, dict) or record.get("v") != RECORD_VERSION:
            version = record.get("v") if isinstance(record, dict) else None
            raise ValueError(f"unknown record version {version!r}")
        room_events = msgpack.unpackb(zlib.decompress(record["room"]))
        if not isinstance(room_events, list) or not isinstance(summary, dict):
            raise ValueError("the room's events or summary have the wrong shape")
        game_events = {str(s): games.decode_game(data) for s, data in record["games"]}
        analyses = {
            str(s): msgpack.unpackb(zlib.decompress(data)) for s, data in record.get("analyses", [])
        }
        if not all(isinstance(events, list) for events in analyses.values()):
            raise ValueError("an analysis stream is not a list of events")
    except CorruptRecord:
        raise
    except (
        ArenaError,  # the compact game record's own CorruptRecord
        ValueError,
        TypeError,
        KeyError,
        zlib.error,
        msgpack.UnpackException,
    ) as exc:
        raise CorruptRecord(packed.room_id, str(exc) or type(exc).__name__) from exc
    return ArchivedRoom(
        packed.room_id, packed.finished_at, summary, room_events, game_events, analyses
    )
