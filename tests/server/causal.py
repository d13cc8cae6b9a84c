"""The causal-order checker: one connection's messages, in the order it received them, against
docs/protocol.md ("Causal order"). A game's events come in version order without a gap (after
its snapshot), and a room's ``finished`` comes after every game event and every ``progress`` it
was decided from that the connection is sent: when ``finished`` arrives, each game this
connection follows shows exactly the moves and the end its ranking states, and the last
``progress`` it got of each racer is the ranking's. A rematch (caused by the end) comes after
it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

PROGRESS_FIELDS = ("status", "foundation", "moves")


def violations(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every breach of causal order in one connection's messages (none: in causal order)."""
    found: list[str] = []
    games: dict[str, list[Mapping[str, Any]]] = {}  # player -> public events so far
    progress: dict[str, Mapping[str, Any]] = {}  # player -> the last progress
    ended = False  # ``finished`` came
    for i, msg in enumerate(messages):
        kind, player = msg["type"], msg.get("player")
        if kind == "game" and isinstance(player, str):
            events = games.get(player, [])
            if msg["version"] < len(events):
                found.append(
                    f"#{i}: a snapshot of {player} at {msg['version']} after {len(events)}"
                )
            games[player] = list(msg["events"])
        elif kind == "game_event" and isinstance(player, str):
            events = games.setdefault(player, [])
            if msg["version"] == len(events) + 1:
                events.append(msg["event"])
            elif msg["version"] > len(events):
                found.append(f"#{i}: {player}'s event {msg['version']} after {len(events)}")
        elif kind == "progress" and isinstance(player, str):
            progress[player] = msg
        elif kind == "room" and msg["room"].get("rematch") and not ended:
            found.append(f"#{i}: a rematch offered before the end")
        elif kind == "finished":
            ended = True
            timed = msg.get("reason") == "time_limit"
            for rank in msg["ranking"]:
                found.extend(_before_the_end(i, rank, games, progress, timed=timed))
    return found


def _before_the_end(
    i: int,
    rank: Mapping[str, Any],
    games: Mapping[str, list[Mapping[str, Any]]],
    progress: Mapping[str, Mapping[str, Any]],
    *,
    timed: bool = False,
) -> list[str]:
    player = rank["player"]
    found = []
    events = games.get(player)
    if events is not None:  # a game this connection follows
        moves = sum(1 for e in events if e["type"] == "moved")
        if moves != rank["moves"]:
            found.append(f"#{i}: finished says {player} made {rank['moves']} moves, seen {moves}")
        resigned = bool(events) and events[-1]["type"] == "resigned"
        # A racer resigned by the server when their own clock ran out has timed out.
        clock = resigned and events[-1].get("reason") == "clock"
        said = "timed_out" if clock else "resigned" if resigned else None
        if said is not None and rank["status"] != said:
            found.append(f"#{i}: finished says {player} {rank['status']}, seen {events[-1:]}")
        if said is None and rank["status"] == "resigned":
            found.append(f"#{i}: finished says {player} resigned, seen {events[-1:]}")
    last = progress.get(player)
    expected = dict(last) if last is not None else None
    if expected is not None and timed and expected["status"] in ("waiting", "playing"):
        # The time limit ends a game still on: the end itself says it timed out.
        expected["status"] = "timed_out"
    if expected is not None and any(expected[f] != rank[f] for f in PROGRESS_FIELDS):
        seen = {f: expected[f] for f in PROGRESS_FIELDS}
        found.append(f"#{i}: finished ranks {player} as {dict(rank)}, its progress was {seen}")
    return found
