"""`solitaire daily [--variant V]`: today's daily challenge deal, once per account; and
`solitaire daily results [--variant V] [--date YYYY-MM-DD]`: a day's standings, your own line
marked, the seed and its check once the day is over (docs/protocol.md, "Daily challenge")."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from client.accounts import HIGHLIGHT, RESET, saved_key
from client.app import App
from client.cli import Output
from client.commands import confirm_texts
from client.connection import Connection
from client.offline import exit_status
from client.play import update_status
from client.room_entry import connected
from client.room_play import play_room
from client.terminal import write_lines
from shared import protocol as p
from shared.errors import ClientError


def _clock(ms: int) -> str:
    seconds = max(0, ms) // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


def standings_lines(answer: Mapping[str, Any], *, color: bool) -> list[str]:
    """The day's standings; the seed, its check and the rooms to replay once it is over."""
    day = f"Daily {answer['variant']} {answer['date']}"
    if answer["revealed"]:
        lines = [f"{day} (UTC): the day is over."]
    else:
        lines = [f"{day}: the day is on; seed and replays at midnight UTC."]
    if answer["commitment"]:
        lines.append(f"  commitment {answer['commitment']}")
    if answer["revealed"] and answer["seed"] is not None:
        ok = p.commitment_ok(answer["seed"], answer["salt"], answer["commitment"])
        verdict = "matches the commitment" if ok else "DOES NOT match the commitment"
        lines.append(f"  seed {answer['seed']} (salt {answer['salt']}): {verdict}")
    lines.extend(standings_table(answer["rows"], answer.get("me"), color=color))
    if not answer["rows"]:
        lines.append("  nobody has played this day's deal")
    return lines


def standings_table(
    rows: list[Mapping[str, Any]], me: Mapping[str, Any] | None, *, color: bool
) -> list[str]:
    """Standings of a deal played at different times (a daily, a challenge): place, name,
    status, time, cards, and the room to replay once shown; the reader's own line marked."""
    lines = [f"  {'#':>4}  {'name':<20}  {'status':<9}  {'time':>6}  {'cards':>5}"]
    for row in rows:
        ours = me is not None and row["account"] == me.get("account")
        text = (
            f"{'>' if ours else ' '} {row['place']:>4}  {row['name']:<20}  {row['status']:<9}  "
            f"{_clock(row['elapsed_ms']):>6}  {row['foundations']:>5}"
        )
        if "room" in row:
            text += f"  room {row['room']}"
        lines.append(f"{HIGHLIGHT}{text}{RESET}" if ours and color else text)
    return lines


async def daily_results(args: Any, output: Output, out: TextIO | None = None) -> int:
    conn = Connection(
        args.server, args.name, on_message=lambda msg: None, key=saved_key(args.server)
    )
    await conn.start()
    try:
        msg: dict[str, Any] = {"type": p.DAILY_RESULTS, "variant": args.variant}
        if args.date is not None:
            msg["date"] = args.date
        answer = await conn.request(msg, expect=p.DAILY_STANDINGS)
    finally:
        await conn.close()
    stream = sys.stdout if out is None else out
    for line in standings_lines(answer, color=output.color):
        stream.write(line + "\n")
    stream.flush()
    return 0


async def daily_command(args: Any, output: Output, script: list[str] | None) -> int:
    """`daily` plays today's deal; `daily results` shows the standings."""
    if args.action == "results":
        return await daily_results(args, output)
    if args.action is not None:
        raise ClientError(f"unknown daily action {args.action!r}")

    def begin(app: App, started: Mapping[str, Any]) -> None:
        app.session.title = f"daily {args.variant} {started['date']}"
        app.session.say(
            f"Daily challenge {started['date']} (UTC): one attempt. Commitment "
            f"{started['commitment'][:16]}..., the seed is shown when the day ends."
        )

    return await play_attempt(
        args,
        output,
        script,
        Attempt(
            title=f"daily {args.variant}",
            request={"type": p.DAILY, "variant": args.variant},
            answer=p.DAILY_STARTED,
            next_steps="Next: 'quit', then 'solitaire daily results' for the standings.",
            left="Left your daily attempt: it stays yours (one a day).",
        ),
        begin,
    )


@dataclass(frozen=True)
class Attempt:
    """What differs between playing a daily and a challenge: the request that starts the
    attempt, its answer, and what the screen says around it."""

    title: str
    request: dict[str, Any]
    answer: str
    next_steps: str
    left: str


async def play_attempt(
    args: Any,
    output: Output,
    script: list[str] | None,
    attempt: Attempt,
    begin: Callable[[App, Mapping[str, Any]], None],
) -> int:
    """One attempt at a deal others play at other times: the server makes, seats and starts
    a solo room on the request; ``begin`` titles it from the answer; then it is played."""
    app, client = await connected(args, output, script, attempt.title, solo=True)
    conn = client.conn
    assert conn is not None
    app.confirm_texts = confirm_texts(online=True, race=False)
    app.next_steps = attempt.next_steps
    try:
        async with app:
            started = await conn.request(attempt.request, expect=attempt.answer)
            client.state.room_id = started["room"]
            begin(app, started)
            if not await client.wait_for(lambda: client.my_view is not None, 15.0):
                raise ClientError("the server did not start the game")
            update_status(app, client.my_view)
            await play_room(client, app, race=False, wait_for_results=False)
    finally:
        await conn.close()
    if client.interrupted:
        write_lines(app.out, [attempt.left])
        return 130
    app.final_screen()
    return exit_status(app)
