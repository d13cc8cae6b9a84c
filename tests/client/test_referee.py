"""The moderators' lines (client/referee.py): an automatic flag in the queue, and an account's
fair-play level with its games, within 80 columns."""

from __future__ import annotations

from client.referee import account_lines, queue_lines

FLAG = {
    "level": "assisted",
    "points": 6,
    "reasons": ["think time ignores the position (flat: +0.01 over 20 games)", "won 14 of 14"],
    "evidence": "assisted (20 games): think time ignores the position (flat: +0.01 over 20 "
    "games); won 14 of 14 games won once the deck was known",
    "games": 20,
}


def test_a_flag_without_reports_is_queued_with_its_evidence() -> None:
    row = {"account": "cal", "name": "Cal", "reports": 0, "reasons": {}, "latest": None,
           "flag": FLAG, "marked": False, "closed": False}  # fmt: skip
    lines = queue_lines([row])
    assert lines[1].split() == ["Cal", "flagged"]
    assert "fair play: assisted (20 games): think time ignores" in " ".join(lines)
    assert all(len(line) <= 80 for line in lines)


def test_an_account_shows_its_level_and_its_games() -> None:
    game = {"at": 1_764_000_000_000, "room": "k2x7m4qa", "player": "p1", "variant":
            "quadrennial", "kind": "tournament", "moves": 142, "think_mean_ms": 2345,
            "think_spread": 0.61, "even_streak": 2, "time_difficulty": -0.03, "deal": "unknown",
            "known": "unknown",
            "won": True, "kept": 0, "judged": 0, "focus_lost": 12}  # fmt: skip
    shown = {"name": "Cal", "marked": False, "closed": False, "reports": [], "actions": [],
             "assessment": {**FLAG, "timing": 0.01}, "games": [game]}  # fmt: skip
    lines = account_lines(shown)
    assert lines[2].startswith("Fair play: assisted (20 games)")
    assert "k2x7m4qa tourn won  unknown 142 mv  2.3s ±0.61 -0.03 focus 12" in lines[-1]
    assert all(len(line) <= 80 for line in lines)
    unassessed = account_lines({**shown, "assessment": {**FLAG, "games": 0}, "games": []})
    assert unassessed[-1] == "Fair play: no rated game assessed yet."
