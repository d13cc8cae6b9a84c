"""`solitaire challenge create|play|show|list`: a fresh deal for friends, each playing it once
when they can; its standings once you have played yours, or once it is over
(docs/protocol.md, "Challenges")."""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Mapping
from typing import Any, TextIO
from urllib.parse import urlsplit

from client.accounts import saved_key
from client.app import App
from client.cli import Output
from client.connection import Connection
from client.daily import Attempt, play_attempt, standings_table
from client.terminal import write_lines
from shared import protocol as p
from shared.errors import ClientError


def when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def page_url(server: str, path: str) -> str:
    """The web page at ``path`` on the server a ws:// (wss://) URL names."""
    parts = urlsplit(server)
    scheme = "https" if parts.scheme == "wss" else "http"
    return f"{scheme}://{parts.netloc}{path}"


def _audience(challenge: Mapping[str, Any]) -> str:
    invited = challenge["invited"]
    if invited:
        return "for " + ", ".join(invited)
    return f"for anyone with the code, up to {challenge['capacity']}"


def created_lines(challenge: Mapping[str, Any], server: str) -> list[str]:
    code = challenge["code"]
    return [
        f"Challenge {code} ({challenge['variant']}) {_audience(challenge)}; "
        f"closes {when(challenge['closes_at'])}.",
        f"  play it:  solitaire challenge play {code}",
        f"  share:    {page_url(server, challenge['link'])}",
        f"  commitment {challenge['commitment']}",
    ]


def shown_lines(challenge: Mapping[str, Any], *, color: bool) -> list[str]:
    """The challenge, its seed's check once settled, and the standings as you may see them."""
    code = challenge["code"]
    played = f"{challenge['players']} of {challenge['capacity']} played"
    if challenge["status"] == "settled":
        state = f"over ({challenge['settled_reason'].replace('_', ' ')}), {played}"
    else:
        state = f"open until {when(challenge['closes_at'])}, {played}"
    lines = [
        f"Challenge {code} ({challenge['variant']}) by {challenge['creator']}, "
        f"{_audience(challenge)}: {state}.",
        f"  commitment {challenge['commitment']}",
    ]
    if challenge["seed"] is not None:
        ok = p.commitment_ok(challenge["seed"], challenge["salt"], challenge["commitment"])
        verdict = "matches the commitment" if ok else "DOES NOT match the commitment"
        lines.append(f"  seed {challenge['seed']} (salt {challenge['salt']}): {verdict}")
    if challenge["visible"]:
        lines.extend(standings_table(challenge["rows"], challenge["me"], color=color))
        if not challenge["rows"]:
            lines.append("  nobody played it")
    elif challenge["me"] is not None:
        lines.append("  your attempt is on: the standings come once it is over")
    else:
        lines.append("  the standings are shown once you have played it (or once it is over)")
    if challenge["may_play"]:
        lines.append(f"  your turn: solitaire challenge play {code}")
    return lines


def list_line(challenge: Mapping[str, Any]) -> str:
    me = challenge["me"]
    if challenge["may_play"]:
        yours = "your turn"
    elif me is None:
        yours = "-"
    elif "place" in me:
        yours = f"you {me['status']}, place {me['place']}"
    else:
        yours = "you are playing"
    ends = "over" if challenge["status"] == "settled" else f"closes {when(challenge['closes_at'])}"
    return (
        f"  {challenge['code']}  {challenge['variant']:<11} by {challenge['creator']:<12} "
        f"{challenge['players']}/{challenge['capacity']}  {ends}  ({yours})"
    )


def list_lines(challenges: list[Mapping[str, Any]]) -> list[str]:
    if not challenges:
        return ["No challenges: 'solitaire challenge create --to NAME' makes one."]
    return ["Your challenges (newest first):", *(list_line(c) for c in challenges)]


async def _ask(args: Any, msg: dict[str, Any], expect: str) -> dict[str, Any]:
    conn = Connection(
        args.server, args.name, on_message=lambda msg: None, key=saved_key(args.server)
    )
    await conn.start()
    try:
        return await conn.request(msg, expect=expect)
    finally:
        await conn.close()


def create_request(args: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"type": p.CHALLENGE_CREATE, "variant": args.variant}
    if args.to:
        msg["to"] = list(args.to)
    if args.capacity is not None:
        msg["capacity"] = args.capacity
    if args.window is not None:
        msg["window_days"] = args.window
    return msg


async def challenge_command(
    args: Any, output: Output, script: list[str] | None, out: TextIO | None = None
) -> int:
    """Run one challenge action; the exit status."""
    stream = sys.stdout if out is None else out
    if args.action in ("play", "show") and not args.code:
        raise ClientError(f"'challenge {args.action}' needs the challenge's CODE")
    if args.action == "play":
        return await play_challenge(args, output, script)
    if args.action == "create":
        made = await _ask(args, create_request(args), p.CHALLENGE)
        lines = created_lines(made, args.server)
    elif args.action == "show":
        shown = await _ask(args, {"type": p.CHALLENGE_SHOW, "challenge": args.code}, p.CHALLENGE)
        lines = shown_lines(shown, color=output.color)
    else:
        listed = await _ask(args, {"type": p.CHALLENGES}, p.CHALLENGE_LIST)
        lines = list_lines(listed["challenges"])
    write_lines(stream, lines)
    return 0


async def play_challenge(args: Any, output: Output, script: list[str] | None) -> int:
    """Play your one attempt at the challenge, as a solo game on its deal."""

    def begin(app: App, started: Mapping[str, Any]) -> None:
        app.variant = started["variant"]
        app.session.title = f"challenge {started['challenge']} ({started['variant']})"
        app.session.say(
            f"Challenge {started['challenge']}: one attempt. Commitment "
            f"{started['commitment'][:16]}..., the seed is shown when the challenge is over."
        )

    return await play_attempt(
        args,
        output,
        script,
        Attempt(
            title=f"challenge {args.code}",
            request={"type": p.CHALLENGE_PLAY, "challenge": args.code},
            answer=p.CHALLENGE_STARTED,
            next_steps=f"Next: 'quit', then 'solitaire challenge show {args.code}'.",
            left="Left your attempt: it stays yours (one each).",
        ),
        begin,
    )
