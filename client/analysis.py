"""A finished game's analysis, as the server made it (docs/protocol.md, "Analysis"): the line the
end of a game adds (could the deal be won, and the move that lost it), the report `solitaire
analyse` prints (every move with its verdicts, and the winning line), and the request."""

from __future__ import annotations

import asyncio
from typing import Any

from client.connection import Connection, RequestFailed
from shared import protocol as p

POLL_S = 0.5  # the first wait before asking again; each wait after is twice as long, up to
MAX_POLL_S = 8.0  # this: a server that does not analyse the variant is asked a few times only
# Answers that mean "not yet": not analysed yet, or the spectators' delay still runs.
NOT_YET = {"no_analysis", "wrong_status"}
VERDICTS = {"won": "won", "lost": "lost", "unknown": "?"}


def deal_text(analysis: dict[str, Any]) -> str:
    """Whether the deal could be won, in words."""
    deal = analysis["deal"]
    if deal == "won":
        return "this deal could be won"
    if deal == "lost":
        return "this deal could not be won"
    return "whether this deal could be won is not settled (the analysis ran out of budget)"


def losing_text(analysis: dict[str, Any]) -> str | None:
    """`move 37: t3t5 lost a won game`, for the move that threw a won game away."""
    number = analysis.get("losing_move")
    if number is None:
        return None
    move = analysis["moves"][number - 1]["move"]
    return f"move {number}: {move} lost a won game"


def end_line(analysis: dict[str, Any]) -> str:
    """What the end of a game says of it."""
    text = f"Analysis: {deal_text(analysis)}"
    losing = losing_text(analysis)
    if losing is not None:
        return f"{text}; {losing}."
    moves = analysis["moves"]
    if analysis["deal"] == "won" and moves and moves[-1]["after"] == "won":
        return f"{text}, and it was still won at the end."
    if analysis["deal"] == "won" and analysis["lost_from"] <= len(moves):
        return f"{text}; where it was lost is not settled."
    return f"{text}."


def report_lines(analysis: dict[str, Any]) -> list[str]:
    """`solitaire analyse`: the verdict, every move with the verdicts before and after it
    (the losing move marked), and the line that wins from the last won position."""
    moves = analysis["moves"]
    lines = [
        f"Room {analysis['room']}, {analysis['name']}'s game ({analysis['variant']}, "
        f"{len(moves)} moves): {deal_text(analysis)}.",
    ]
    losing = losing_text(analysis)
    if losing is not None:
        lines.append(losing[0].upper() + losing[1:] + ".")
    for number, move in enumerate(moves, 1):
        before, after = VERDICTS[move["before"]], VERDICTS[move["after"]]
        mark = "  <- lost a won game" if move["lost"] else ""
        lines.append(f"{number:4}. {move['move']:<8} {before:>4} -> {after:<4}{mark}")
    won_until = analysis["won_until"]
    if won_until >= 0 and analysis["line"]:
        where = "the deal" if won_until == 0 else f"after move {won_until}"
        lines.append(f"A winning line from {where}: {' '.join(analysis['line'])}")
    lines.append(
        f"(solver version {analysis['solver_version']}, {analysis['nodes']:,} of "
        f"{analysis['max_nodes']:,} positions searched; won / lost / ? = not settled)"
    )
    return lines


def record_comments(analysis: dict[str, Any]) -> tuple[list[str], dict[int, str]]:
    """The analysis as a game record's comments (docs/records.md): lines before the moves (the
    verdict, a winning line, what made it), and a comment after each move where the verdict
    changed (the move that lost a won game named)."""
    notes = [end_line(analysis)]
    won_until = analysis["won_until"]
    if won_until >= 0 and analysis["line"]:
        where = "the deal" if won_until == 0 else f"after move {won_until}"
        notes.append(f"A winning line from {where}: {' '.join(analysis['line'])}")
    notes.append(
        f"The server's analysis: solver version {analysis['solver_version']}, "
        f"{analysis['nodes']:,} of {analysis['max_nodes']:,} positions searched."
    )
    comments = {}
    for number, move in enumerate(analysis["moves"], 1):
        if move["lost"]:
            comments[number] = "lost a won game (won -> lost)"
        elif move["before"] != move["after"]:
            comments[number] = f"{move['before']} -> {move['after']}"
    return notes, comments


async def fetch_analysis(
    conn: Connection, room: str, player: str, *, wait_s: float
) -> dict[str, Any]:
    """The game's analysis, asked again while the server has not made it (or may not show it
    yet) for up to ``wait_s``; RequestFailed for any other refusal, or the last one."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait_s
    pause = POLL_S
    while True:
        try:
            answer = await conn.request(
                {"type": p.ANALYSIS, "room": room, "player": player}, expect=p.GAME_ANALYSIS
            )
            return {k: v for k, v in answer.items() if k != "ref"}
        except RequestFailed as refused:
            if refused.code not in NOT_YET or loop.time() + pause > deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, MAX_POLL_S)
