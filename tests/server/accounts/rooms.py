"""Finished rooms built from real room events, for the ratings tests."""

from __future__ import annotations

from collections.abc import Sequence

from server.race.domain.events import (
    CountdownStarted,
    PlayerJoined,
    RaceFinished,
    RaceStarted,
    RoomCreated,
    RoomEvent,
    encode,
)
from server.race.domain.fold import fold_room_event
from server.race.domain.model import Room


def room_events(
    room_id: str,
    racers: Sequence[tuple[str, str | None]],
    *,
    variant: str = "swiss",
    rated: bool = True,
    at: int = 1_000,
    won: int = 0,
) -> list[RoomEvent]:
    """A race of ``racers`` (name, account or None for a guest) finished in the order given;
    the first ``won`` of them won (one second apart)."""
    events: list[RoomEvent] = [
        RoomCreated(
            at, variant, "s", None, "salt", "c", 1, len(racers), 0, 0, 0, False, False, None, rated
        )
    ]
    for i, (name, account) in enumerate(racers):
        events.append(PlayerJoined(at, f"p{i}", name, f"t{i}", None, account))
    events.append(CountdownStarted(at, at + 1))
    events.append(RaceStarted(at + 1, None))
    ranking = []
    for place, (i, (name, _)) in enumerate(enumerate(racers), 1):
        done = place <= won
        ranking.append(
            {
                "place": place,
                "player": f"p{i}",
                "name": name,
                "status": "won" if done else "resigned",
                "foundation": 52 if done else 0,
                "moves": 10,
                "finished_at": at + 1 + 1000 * place,
                "reached_at": at + 1,
            }
        )
    events.append(RaceFinished(at + 10_000, "all_done", tuple(ranking)))
    return events


def finished_room(room_id: str, racers: Sequence[tuple[str, str | None]], **kwargs: object) -> Room:
    room = Room(room_id)
    for version, event in enumerate(room_events(room_id, racers, **kwargs), 1):  # type: ignore[arg-type]
        fold_room_event(room, version, encode(event))
    return room
