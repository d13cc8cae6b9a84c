"""`solitaire register|login|logout|password|whoami|leaderboard|profile`, and the account key
on disk.

The key a login gives is kept per server in the XDG state directory (the directory 0700, the
file 0600, written whole and renamed, as the seat files are: client/seats.py) and sent in the
`hello` of every later command, so races are rated; without one the client is a guest.
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from client.cli import Output
from client.connection import Connection, RequestFailed
from client.seats import state_dir
from client.text import plural
from shared.errors import ClientError

HIGHLIGHT = "\x1b[7m"
RESET = "\x1b[0m"


class KeyStore:
    """The account keys of one state directory, one file per server."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, server: str) -> Path:
        return self.directory / f"account-{hashlib.sha256(server.encode()).hexdigest()[:16]}.json"

    def save(self, server: str, name: str, key: str) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self._path(server)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"server": server, "name": name, "key": key}, handle)
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)

    def load(self, server: str) -> dict[str, str] | None:
        try:
            data = json.loads(self._path(server).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return data if isinstance(data, dict) and isinstance(data.get("key"), str) else None

    def forget(self, server: str) -> None:
        with contextlib.suppress(OSError):
            self._path(server).unlink()


def key_store(env: Mapping[str, str] | None = None) -> KeyStore:
    return KeyStore(state_dir(os.environ if env is None else env))


def saved_key(server: str) -> str | None:
    """The account key this user keeps for ``server``, if logged in."""
    saved = key_store().load(server)
    return saved["key"] if saved is not None else None


def read_password(args: Any, *, confirm: bool) -> str:
    """From standard input with --password-stdin (one line), else the terminal without echo."""
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    password = getpass.getpass("Password: ")
    if confirm and getpass.getpass("Password again: ") != password:
        raise ClientError("the two passwords differ", code="bad_password")
    return password


def read_new_password(args: Any) -> tuple[str, str]:
    """The current password and the new one: two lines of standard input with
    --password-stdin, else the terminal without echo, the new one twice."""
    if args.password_stdin:
        return sys.stdin.readline().rstrip("\r\n"), sys.stdin.readline().rstrip("\r\n")
    current = getpass.getpass("Current password: ")
    new = getpass.getpass("New password: ")
    if getpass.getpass("New password again: ") != new:
        raise ClientError("the two new passwords differ", code="bad_password")
    return current, new


async def _open(args: Any, key: str | None) -> Connection:
    conn = Connection(args.server, args.name, on_message=lambda msg: None, key=key)
    await conn.start()
    return conn


async def open_logged_in(args: Any) -> Connection:
    """A connection with the saved key (none saved: a guest's, and the server answers
    not_logged_in where an account is needed)."""
    saved = key_store().load(args.server)
    conn = await _open(args, saved["key"] if saved is not None else None)
    tell_notice(conn)
    return conn


def _duration(ms: int | None) -> str:
    if ms is None:
        return "-"
    seconds = ms // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


def _rating(row: Mapping[str, Any]) -> str:
    return f"{row['rating']}{'?' if row.get('provisional') else ''}"


def leaderboard_lines(answer: Mapping[str, Any], *, color: bool) -> list[str]:
    """Rank, name, rating, games, wins; your own line marked (and shown even outside the top)."""
    me = answer.get("me")
    mine = me["account"] if me else None
    lines = [
        f"Leaderboard: {answer['variant']} ({answer['players']} rated players; ? = provisional)",
        f"  {'#':>4}  {'name':<20}  {'rating':>7}  {'games':>5}  {'wins':>5}",
    ]

    def line(row: Mapping[str, Any]) -> str:
        ours = row["account"] == mine
        text = (
            f"{'>' if ours else ' '} {row['rank']:>4}  {row['name']:<20}  {_rating(row):>7}  "
            f"{row['games']:>5}  {row['wins']:>5}"
        )
        return f"{HIGHLIGHT}{text}{RESET}" if ours and color else text

    rows = answer["rows"]
    lines.extend(line(row) for row in rows)
    if me is not None and all(row["account"] != mine for row in rows):
        lines.append("  " + "." * 4)
        lines.append(line(me))
    if not rows:
        lines.append("  nobody is rated yet: race logged in against another player")
    return lines


def profile_lines(card: Mapping[str, Any]) -> list[str]:
    lines = [f"Profile: {card['name']}"]
    if card.get("marked"):
        lines.append("  fair-play mark: out of the leaderboards, its races count for nobody")
    if not card["ratings"]:
        lines.append("  no rated races yet")
    for r in card["ratings"]:
        lines.append(
            f"  {r['variant']:<12} {_rating(r):>6}  rank {r['rank']}/{r['players']}  "
            f"{plural(r['games'], 'game')}, {plural(r['wins'], 'win')}, "
            f"best win {_duration(r['best_ms'])}"
        )
    tournaments = card.get("tournaments")
    if tournaments:
        podiums = tournaments["podiums"]
        lines.append(
            f"  tournaments: {plural(tournaments['played'], 'played', 'played')}, "
            f"{plural(len(podiums), 'podium')}"
        )
        medals = {1: "1st", 2: "2nd", 3: "3rd"}
        for podium in podiums[:5]:
            lines.append(
                f"    {medals.get(podium['place'], podium['place'])} in {podium['name']} "
                f"({podium['variant']}; solitaire tournament show {podium['tournament']})"
            )
    for row in card.get("accuracy") or []:
        lost = plural(row["lost_won"], "deal")
        lines.append(
            f"  accuracy {row['variant']:<12} {row['share'] * 100:.1f} % of "
            f"{plural(row['moves'], 'move')} from a won position kept it won "
            f"({plural(row['games'], 'game')}; {lost} lost from a won position)"
        )
    streaks = card.get("streaks")
    if streaks:
        lines.append(
            f"  daily challenge: played {plural(streaks['played'], 'day')} in a row, "
            f"won {plural(streaks['won'], 'day')} in a row"
        )
    challenges = card.get("challenges") or []
    if challenges:
        lines.append("Finished challenges (see one: solitaire challenge show CODE):")
    for ch in challenges[:10]:
        place = f"place {ch['place']}/{ch['of']}" if ch["place"] is not None else "did not play"
        lines.append(f"  {ch['code']}  {ch['variant']:<12} by {ch['creator']:<12} {place}")
    if card["recent"]:
        lines.append("Recent races (replay: solitaire replay CODE --player NAME):")
    codes = {ch["code"] for ch in challenges}  # a rated challenge: no room to replay
    for race in card["recent"][:10]:
        sign = "+" if race["delta"] >= 0 else ""
        kind = " (challenge)" if race["room"] in codes else ""
        late = ", out of time" if race.get("timed_out") else ""
        lines.append(
            f"  {race['room']}  {race['variant']:<12} place {race['place']}/{race['of']}{late}  "
            f"{race['rating']} ({sign}{race['delta']}){kind}"
        )
    return lines


def ratings_line(changes: list[dict[str, Any]], *, ascii: bool = False) -> str:
    """A rated race's changes as the results show them: `ann 1523 → 1541 (+18), ...`."""
    arrow = "->" if ascii else "\u2192"
    parts = [f"{c['name']} {c['before']} {arrow} {c['after']} ({c['delta']:+d})" for c in changes]
    return "Ratings: " + ", ".join(parts)


def notice_line(answer: Mapping[str, Any]) -> list[str]:
    """A moderator's rename the server tells once (a login's answer, a key's welcome): shown
    before anything else, for the player learns their new name from it."""
    notice = answer.get("notice")
    return [f"Notice: {notice}"] if isinstance(notice, str) else []


def tell_notice(conn: Connection) -> None:
    """The welcome's notice on standard error: told once by the server, so never lost to a
    --json answer on standard output."""
    for line in notice_line(conn.welcome):
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def _print(out: TextIO, lines: list[str]) -> None:
    for line in lines:
        out.write(line + "\n")
    out.flush()


async def account_command(args: Any, output: Output, out: TextIO | None = None) -> int:
    """Run one account command; the exit status."""
    out = sys.stdout if out is None else out
    store = key_store()
    saved = store.load(args.server)
    key = saved["key"] if saved is not None else None
    command = args.command
    if command in ("register", "login"):
        password = read_password(args, confirm=command == "register" and not args.password_stdin)
        conn = await _open(args, None)
        try:
            answer = await conn.request(
                {"type": command, "name": args.account, "password": password},
                expect="account",
                retry_rate_limited=False,
            )
        finally:
            await conn.close()
        store.save(args.server, answer["name"], answer["key"])
        verb = "Registered and logged in" if command == "register" else "Logged in"
        _print(out, [*notice_line(answer), f"{verb} as {answer['name']}."])
        return 0
    conn = await _open(args, key)
    try:
        tell_notice(conn)
        account = conn.welcome.get("account")
        if command == "logout":
            if key is not None and account is not None:
                with contextlib.suppress(RequestFailed):
                    await conn.request({"type": "logout"}, expect="logged_out")
            store.forget(args.server)
            _print(out, ["Logged out." if account else "You were not logged in."])
            return 0
        if command == "password":
            if account is None:
                raise ClientError(
                    "not logged in: 'solitaire login NAME' first", code="not_logged_in"
                )
            current, new = read_new_password(args)
            answer = await conn.request(
                {"type": "change_password", "password": current, "new_password": new},
                expect="password_changed",
                retry_rate_limited=False,
            )
            lines = [f"Password changed for {account}."]
            if answer["revoked"]:
                lines.append(
                    f"{plural(answer['revoked'], 'other login')} ended: log in again there "
                    "with the new password."
                )
            _print(out, lines)
            return 0
        if command == "whoami":
            if account is None and key is not None:
                _print(out, ["Not logged in (the server no longer knows your key): log in."])
            else:
                _print(out, [f"Logged in as {account}." if account else "Not logged in (guest)."])
            return 0
        if command == "leaderboard":
            answer = await conn.request(
                {"type": "leaderboard", "variant": args.variant, "top": args.top},
                expect="standings",
            )
            _print(out, leaderboard_lines(answer, color=output.color))
            return 0
        if command == "profile":
            msg: dict[str, Any] = {"type": "profile"}
            if args.player is not None:
                msg["name"] = args.player
            card = await conn.request(msg, expect="player_card")
            _print(out, profile_lines(card))
            return 0
    finally:
        await conn.close()
    raise ClientError(f"unknown command {command!r}")
