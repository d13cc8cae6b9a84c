"""`solitaire verify CODE` (or `--file FILE`): whether a race was fair, checked here from what
the server published, never taken on its word (shared/verification.py does the checking).

Live, the client watches the finished room as any spectator: the commitment comes from `room`
(published before the race), the seed and salt from `finished`, and every racer's game from
the `game` snapshots (a daily challenge attempt's seed and salt from the day's standings, once
its day is over); a file is a game `solitaire export` wrote, with its Seed, Salt and
Commitment tags.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import sys
from typing import Any

from client.cli import Output
from client.connection import Connection
from client.export import load_text
from client.room_entry import connected, join_as_spectator
from client.room_state import RoomState
from shared.errors import ArenaError, ClientError
from shared.export import parse_export
from shared.verification import RaceRecord, Verdict, verify_export, verify_race

NOT_FAIR = 4
"""The exit status when the race is not shown fair: not fair, or it cannot be checked."""


async def verify_command(args: Any, output: Output) -> int:
    if args.file is not None:
        game = parse_export(load_text(args.file))
        title = f"{game.header.player}'s game in room {game.header.room} ({args.file})"
        return _report(title, verify_export(game), output)
    if args.code is None:
        raise ClientError(
            "verify needs a room CODE, or --file FILE (a game 'solitaire export' wrote)"
        )
    race = await fetch_race(args)
    racers = len(race.games)
    title = f"Room {args.code} ({race.variant}, {racers} racer{'s' if racers != 1 else ''})"
    return _report(title, verify_race(race), output)


def _report(title: str, verdict: Verdict, output: Output) -> int:
    """The verdict and the checks that passed, in words or (``--json``) as one JSON object."""
    if output.json:
        shown = {
            "what": title,
            "verdict": verdict.outcome.value,
            "reason": verdict.reason,
            "checked": list(verdict.passed),
        }
        sys.stdout.write(json.dumps(shown, ensure_ascii=False) + "\n")
    else:
        lines = [f"{title}: {verdict}"]
        lines += [f"  checked: {check}" for check in verdict.passed]
        sys.stdout.write("\n".join(lines) + "\n")
    return 0 if verdict.fair else NOT_FAIR


async def fetch_race(args: Any) -> RaceRecord:
    """What a spectator of the finished room is shown: its commitment, its reveal, its games."""
    quiet = Output(color=False, tty=False, json=False)
    _app, client = await connected(args, quiet, [], "verify", room=args.code, spectator=True)
    conn = client.conn
    assert conn is not None
    state = client.state
    try:
        await join_as_spectator(client, args.code)
        if state.room.get("status") != "finished":
            raise ClientError(
                f"room {args.code} is {state.room.get('status', 'not a race')}: a race is checked "
                "once it is over, when its seed is revealed"
            )
        await conn.send({"type": "watch", "room": args.code})
        if not await client.wait_for(lambda: _complete(state), 15.0):
            raise ClientError(
                f"room {args.code}: the race is over but its spectators do not see its end yet "
                "(a spectator delay): verify it again in a while"
            )
        record = _record(state)
        if record.seed is None:
            record = await _daily_reveal(conn, state, record)
    finally:
        await conn.close()
    return record


async def _daily_reveal(conn: Connection, state: RoomState, record: RaceRecord) -> RaceRecord:
    """A daily challenge attempt's `finished` never reveals the seed: the day's standings do,
    once the day is over; the day is the one whose commitment the room published."""
    started = state.room.get("started_at")
    if not isinstance(started, int):
        return record
    day = dt.datetime.fromtimestamp(started / 1000, dt.UTC).date().isoformat()
    ask = {"type": "daily_results", "variant": record.variant, "date": day}
    try:
        standings = await conn.request(ask, expect="daily_standings")
    except ArenaError:
        return record
    if not standings.get("revealed") or standings.get("commitment") != record.commitment:
        return record
    return dataclasses.replace(record, seed=standings["seed"], salt=standings["salt"])


def _complete(state: RoomState) -> bool:
    finished = state.finished
    return finished is not None and all(r["player"] in state.games for r in finished["ranking"])


def _record(state: RoomState) -> RaceRecord:
    finished = state.finished
    assert finished is not None
    games: dict[str, list[dict[str, Any]]] = {}
    for rank in finished["ranking"]:
        player = rank["player"]
        name = state.names.get(player, player)
        games[name if name not in games else f"{name} ({player})"] = state.games[player].events
    return RaceRecord(
        variant=str(state.room.get("variant", finished.get("variant"))),
        commitment=state.room.get("commitment"),
        seed=finished.get("seed"),
        salt=finished.get("salt"),
        games=games,
    )
