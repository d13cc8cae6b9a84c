"""What the terminal says of a game's analysis (client/analysis.py), for each kind of verdict."""

from __future__ import annotations

from typing import Any

from client.analysis import end_line, record_comments, report_lines


def analysis(deal: str, afters: list[str], *, losing: int | None = None) -> dict[str, Any]:
    befores = [deal, *afters[:-1]]
    moves = [
        {"move": f"d{i}", "before": b, "after": a, "lost": i + 1 == losing}
        for i, (b, a) in enumerate(zip(befores, afters, strict=True))
    ]
    won_until = max(
        (i + 1 for i, a in enumerate(afters) if a == "won"), default=0 if deal == "won" else -1
    )
    lost_from = next((i + 1 for i, a in enumerate(afters) if a == "lost"), len(afters) + 1)
    if deal == "lost":
        lost_from = 0
    return {
        "room": "r1", "player": "p1", "name": "ann", "variant": "swiss", "solver_version": 1,
        "max_nodes": 40_000, "nodes": 12_345, "deal": deal, "losing_move": losing,
        "won_until": won_until, "lost_from": lost_from, "line": ["wf"] if won_until >= 0 else [],
        "moves": moves,
    }  # fmt: skip


def test_the_end_of_a_game_names_the_move_that_lost_it() -> None:
    lost = analysis("won", ["won", "won", "lost"], losing=3)
    assert end_line(lost) == "Analysis: this deal could be won; move 3: d2 lost a won game."
    lines = report_lines(lost)
    assert lines[1] == "Move 3: d2 lost a won game."
    assert lines[4].split() == ["3.", "d2", "won", "->", "lost", "<-", "lost", "a", "won", "game"]
    assert lines[5] == "A winning line from after move 2: wf"
    notes, comments = record_comments(lost)
    assert notes[0] == end_line(lost)
    assert comments == {3: "lost a won game (won -> lost)"}


def test_what_the_analysis_did_not_settle_is_said_so() -> None:
    unsettled = analysis("won", ["won", "unknown", "unknown"])
    assert end_line(unsettled) == "Analysis: this deal could be won."
    assert record_comments(unsettled)[1] == {2: "won -> unknown"}
    assert report_lines(unsettled)[2].split() == ["2.", "d1", "won", "->", "?"]
    unknown = analysis("unknown", ["unknown"])
    assert end_line(unknown) == (
        "Analysis: whether this deal could be won is not settled (the analysis ran out of budget)."
    )
    half = analysis("won", ["won", "unknown", "lost"])
    assert end_line(half) == "Analysis: this deal could be won; where it was lost is not settled."


def test_a_won_game_and_a_lost_deal() -> None:
    won = analysis("won", ["won", "won"])
    assert end_line(won) == "Analysis: this deal could be won, and it was still won at the end."
    lost = analysis("lost", ["lost", "lost"])
    assert end_line(lost) == "Analysis: this deal could not be won."
    assert "A winning line" not in "\n".join(report_lines(lost))
