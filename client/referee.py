"""`solitaire report` (any logged-in player) and `solitaire mod` (moderators): one request
each, answered in lines at 80 columns, or as JSON with --json."""

from __future__ import annotations

import datetime as dt
import json
import sys
import textwrap
from collections.abc import Mapping
from typing import Any, TextIO

from client.accounts import open_logged_in
from client.cli import Output
from client.text import plural

WIDTH = 80


def _when(at: int) -> str:
    return dt.datetime.fromtimestamp(at / 1000, tz=dt.UTC).strftime("%Y-%m-%d %H:%M")


def _wrapped(text: str, indent: str = "    ") -> list[str]:
    return textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent) or []


def queue_lines(rows: list[Mapping[str, Any]]) -> list[str]:
    """The moderators' queue: one line of evidence an account, its latest note below it."""
    if not rows:
        return ["Nothing waits for a moderator."]
    lines = ["Waiting for a moderator (show one: solitaire mod show NAME):"]
    for row in rows:
        reasons = ", ".join(f"{n} {r}" for r, n in sorted(row["reasons"].items()))
        held = [w for w, on in (("marked", row["marked"]), ("closed", row["closed"])) if on]
        said = f"{plural(row['reports'], 'report')}: {reasons}" if row["reports"] else "flagged"
        lines.append(f"  {row['name']:<16} {said}" + (f" ({', '.join(held)})" if held else ""))
        if row.get("flag"):
            lines.extend(_wrapped(f"fair play: {row['flag']['evidence']}"))
        latest = row.get("latest")
        if latest:
            race = f" in race {latest['race']}" if latest.get("race") else ""
            note = f": {latest['note']}" if latest.get("note") else ""
            lines.extend(_wrapped(f"latest {_when(latest['at'])}{race}{note}"))
    return lines


def _game_line(game: Mapping[str, Any]) -> str:
    """One assessed game in a line: when, the room, the result against the deal, the think
    times (mean, spread, streak), their correlation with the position, focus lost."""
    rho = game["time_difficulty"]
    timing = "n/a" if rho is None else f"{rho:+.2f}"
    result = "won" if game["won"] else "lost"
    return (
        f"  {_when(game['at'])[5:]} {game['room']:<8} {game['kind'][:5]:<5} {result:<4}"
        f" {game['deal']:<7} {game['moves']:>3} mv {game['think_mean_ms'] / 1000:4.1f}s"
        f" ±{game['think_spread']:.2f} {timing:>5}"
        + (f" focus {game['focus_lost']}" if game["focus_lost"] else "")
    )


def assessment_lines(shown: Mapping[str, Any]) -> list[str]:
    """The fair-play level with its reasons, then the assessed games, newest first."""
    assessment = shown.get("assessment")
    if not assessment or not assessment["games"]:
        return ["Fair play: no rated game assessed yet."]
    lines = _wrapped(f"Fair play: {assessment['evidence']}", "")
    lines.extend(f"  - {reason}" for reason in assessment["reasons"][3:])
    lines.append(f"Assessed games ({len(shown['games'])}, newest first):")
    lines.append("  when        room     kind  game deal     moves   think  ±   timing")
    lines.extend(_game_line(game) for game in shown["games"])
    return lines


def action_line(row: Mapping[str, Any]) -> list[str]:
    to = f" to {row['new_name']}" if row.get("new_name") else ""
    return _wrapped(
        f"{_when(row['at'])}  {row['moderator']} {row['action']} {row['name']}{to}: {row['why']}",
        "  ",
    )


def log_lines(rows: list[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return ["No moderator has acted yet."]
    return ["Moderators' actions, newest first:", *(x for r in rows for x in action_line(r))]


def account_lines(shown: Mapping[str, Any]) -> list[str]:
    held = [w for w, on in (("marked", shown["marked"]), ("closed", shown["closed"])) if on]
    lines = [f"{shown['name']}: {', '.join(held) if held else 'no mark, open'}"]
    lines.append(f"Reports ({len(shown['reports'])}):" if shown["reports"] else "No reports.")
    for report in shown["reports"]:
        race = f" race {report['race']}" if report.get("race") else ""
        note = f": {report['note']}" if report.get("note") else ""
        said = f"{_when(report['at'])}  {report['reason']} by {report['reporter']}"
        lines.extend(_wrapped(f"{said}{race}{note}", "  "))
    if shown["actions"]:
        lines.append("Actions:")
    for row in shown["actions"]:
        lines.extend(action_line(row))
    return [*lines, *assessment_lines(shown)]


_REQUESTS = {
    "queue": ({"type": "mod_queue"}, "mod_queue_rows"),
    "log": ({"type": "mod_log"}, "mod_log_rows"),
}


async def referee_command(args: Any, output: Output, out: TextIO | None = None) -> int:
    """Run `report` or one `mod` command; the exit status."""
    out = sys.stdout if out is None else out
    conn = await open_logged_in(args)
    try:
        if args.command == "report":
            msg: dict[str, Any] = {"type": "report", "name": args.player, "reason": args.reason}
            if args.race:
                msg["race"] = args.race
            if args.note:
                msg["note"] = args.note
            answer = await conn.request(msg, expect="report_filed", retry_rate_limited=False)
            lines = [f"Reported {answer['name']} ({answer['reason']}): a moderator will look."]
        elif args.mod_command in _REQUESTS:
            request, expect = _REQUESTS[args.mod_command]
            answer = await conn.request(request, expect=expect)
            rows = answer["rows"]
            lines = queue_lines(rows) if args.mod_command == "queue" else log_lines(rows)
        elif args.mod_command == "show":
            answer = await conn.request(
                {"type": "mod_show", "name": args.player}, expect="mod_account"
            )
            lines = account_lines(answer)
        else:
            action = {
                "type": "mod_action",
                "action": args.mod_command,
                "name": args.player,
                "reason": args.reason or "",
            }
            if args.mod_command == "rename":
                action["new_name"] = args.new_name
            answer = await conn.request(
                action,
                expect="mod_done",
                retry_rate_limited=False,
            )
            lines = ["Done:", *action_line(answer)]
    finally:
        await conn.close()
    if output.json:
        answer.pop("ref", None)
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
    else:
        out.write("".join(line + "\n" for line in lines))
    out.flush()
    return 0
