"""The race panel and the watched boards as the screen shows them, from a room's folded state.

Pure functions of `RoomState` (and the race's start on the server's clock): the racers in
ranking order with their state, the boards of the racers being watched, and what the status
line and the results say.
"""

from __future__ import annotations

from typing import Any

from client.room_state import RoomState
from client.screen import Racer, RacerState
from client.session import game_status, ranked
from client.text import plural, racer_name
from shared.protocol import commitment_ok

OPEN_SEED = "open seed: the creator knows the deck"

_RACER_STATES = {
    "waiting": RacerState.WAITING,
    "playing": RacerState.PLAYING,
    "won": RacerState.WON,
    "over": RacerState.OVER,
    "resigned": RacerState.RESIGNED,
    "timed_out": RacerState.TIME_UP,
    "left": RacerState.LEFT,
}


def racers(state: RoomState, *, started_at: int | None) -> dict[str, Racer]:
    """The panel's racers from progress and ranking, numbered in ranking order from the start
    (``started_at``: the race's start, server clock, for finish times)."""
    places = {r["player"]: r["place"] for r in state.ranking or []}
    time_up = state.ranking is not None and state.finish_reason == "time_limit"
    lines = {}
    bots = {p["player"]: p.get("bot") or 0 for p in state.room.get("players", [])}
    for player, info in state.progress.items():
        finished_at = info.get("finished_at")
        reached_at = info.get("reached_at")
        racer_state = _RACER_STATES.get(info.get("status", "waiting"), RacerState.PLAYING)
        if state.ranking is not None and racer_state is RacerState.PLAYING:
            racer_state = RacerState.TIME_UP if time_up else RacerState.OVER
        lines[player] = Racer(
            name=state.names.get(player, info.get("name", player)),
            cards=info.get("foundation", 0),
            moves=info.get("moves", 0),
            state=racer_state,
            finished_ms=(
                finished_at - started_at
                if finished_at is not None and started_at is not None
                else None
            ),
            rank=places.get(player),
            me=player == state.me,
            reached_ms=reached_at if isinstance(reached_at, int) else None,
            bot=bots.get(player, 0),
        )
    return ranked(lines)


def watched_boards(
    state: RoomState, order: list[str], focus: str | None
) -> tuple[tuple[str, Any], ...]:
    """The watched board(s): the focused player's, or everyone's in panel order (``order``),
    each labelled with its panel number and name, so it is always clear whose board it is."""
    players = sorted(
        state.room.get("players", []),
        key=lambda p: order.index(p["player"]) if p["player"] in order else len(order),
    )
    boards = []
    for player in players:
        pid = player["player"]
        if focus is not None and pid != focus:
            continue
        track = state.games.get(pid)
        if track is not None and track.view is not None:
            number = order.index(pid) + 1 if pid in order else 0
            label = (f"{number}. " if number else "") + player["name"]
            boards.append((label + (" (you)" if pid == state.me else ""), track.view))
    return tuple(boards)


def done_status(state: RoomState, progress: dict[str, Any]) -> str:
    """The status line once this racer's game is done and the race goes on."""
    view = state.my_view
    out_of_time = progress["status"] == "timed_out"
    if view is not None and view.over:
        text = game_status(view, out_of_time=out_of_time)
    else:  # progress and the game's last event travel separately (protocol.md)
        verb = {
            "won": "You won",
            "over": "No legal move left",
            "resigned": "You resigned",
            "timed_out": "You ran out of time",
        }
        cards = plural(progress["foundation"], "card")
        text = f"{verb[progress['status']]}: {cards} on the foundations."
    if len(state.progress) <= 1:
        return text
    return (
        f"{text} Waiting for the others: 'watch' shows their boards, 'watch N' one of "
        "them (N: their number in the panel), 'back' yours."
    )


def someone_done(name: str, msg: dict[str, Any]) -> str:
    """What the others are told when a racer's game is over (a `progress` message)."""
    cards = plural(msg["foundation"], "card")
    return {
        "won": f"{name} won: all 52 cards up in {plural(msg['moves'], 'move')}.",
        "over": f"{name} is stuck (no move left) with {cards} on the foundations.",
        "resigned": f"{name} resigned with {cards} on the foundations.",
        "timed_out": f"{name} ran out of time with {cards} on the foundations.",
    }[msg["status"]]


def results_line(ranking: list[dict[str, Any]]) -> str:
    """Each racer's place, name and cards up; a racer whose clock ended the game says so."""
    places = ", ".join(
        f"{r['place']}. {racer_name(r['name'], r.get('bot'))} ({r['foundation']}"
        f"{', out of time' if r.get('status') == 'timed_out' else ''})"
        for r in ranking
    )
    return f"Results: {places}"


def duration(ms: int) -> str:
    seconds = max(0, ms) // 1000
    if seconds % 60 == 0 and seconds >= 60:
        return plural(seconds // 60, "minute")
    return plural(seconds, "second") if seconds < 60 else f"{seconds // 60}:{seconds % 60:02d}"


def fairness_lines(msg: dict[str, Any], *, open_seed: bool) -> list[str]:
    """What the revealed seed means for the race, in plain words."""
    lines = []
    if msg.get("seed") is not None:
        if commitment_ok(msg["seed"], msg["salt"], msg["commitment"]):
            lines.append(
                f"Fair deal: the seed revealed now ({msg['seed']}) is the one the server locked "
                "in before the start."
            )
        else:
            lines.append(
                f"Warning: the seed revealed now ({msg['seed']}) is NOT the one the server locked "
                "in before the start: this deal cannot be trusted."
            )
    if open_seed:
        lines.append(f"This room had an {OPEN_SEED}.")
    return lines
