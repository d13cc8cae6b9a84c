"""The client's account pieces without a server: the key file, the parser, the tables."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from client.accounts import HIGHLIGHT, KeyStore, leaderboard_lines, profile_lines
from client.cli import parse_args


def test_the_key_is_kept_per_server_readable_by_the_user_only(tmp_path: Path) -> None:
    store = KeyStore(tmp_path / "solitaire")
    store.save("ws://a", "Ann", "k" * 43)
    (path,) = (tmp_path / "solitaire").glob("account-*.json")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(tmp_path / "solitaire").st_mode) == 0o700
    assert store.load("ws://a") == {"server": "ws://a", "name": "Ann", "key": "k" * 43}
    assert store.load("ws://b") is None
    store.forget("ws://a")
    assert store.load("ws://a") is None


def test_the_account_commands_parse() -> None:
    args = parse_args(["login", "Ann", "--password-stdin"], env={})
    assert (args.command, args.account, args.password_stdin) == ("login", "Ann", True)
    args = parse_args(["leaderboard", "--variant", "quadrennial", "--top", "3"], env={})
    assert (args.variant, args.top) == ("quadrennial", 3)
    assert parse_args(["profile"], env={}).player is None
    assert parse_args(["profile", "bob"], env={}).player == "bob"
    args = parse_args(["password", "--password-stdin"], env={})
    assert (args.command, args.password_stdin) == ("password", True)


def _row(rank: int, name: str, rating: int) -> dict[str, object]:
    return {
        "rank": rank,
        "account": name.lower(),
        "name": name,
        "rating": rating,
        "provisional": rank > 1,
        "games": rank + 10,
        "wins": 3,
    }


def test_your_own_line_is_marked_even_outside_the_top() -> None:
    answer = {
        "variant": "swiss",
        "players": 40,
        "rows": [_row(1, "Ann", 1700), _row(2, "Bob", 1600)],
        "me": _row(37, "Zed", 1300),
    }
    lines = leaderboard_lines(answer, color=False)
    assert lines[2].split() == ["1", "Ann", "1700", "11", "3"]
    assert lines[3].split() == ["2", "Bob", "1600?", "12", "3"]
    assert lines[-1].split() == [">", "37", "Zed", "1300?", "47", "3"]
    assert all(len(line) <= 80 for line in lines)
    coloured = leaderboard_lines({**answer, "me": _row(2, "Bob", 1600)}, color=True)
    assert coloured[3].startswith(HIGHLIGHT)
    assert len(coloured) == 4  # in the top: not repeated


def test_a_profile_shows_ratings_and_replayable_races() -> None:
    card = {
        "name": "Ann",
        "ratings": [
            {
                "variant": "swiss",
                "rating": 1612,
                "provisional": False,
                "rank": 3,
                "players": 40,
                "games": 25,
                "wins": 9,
                "best_ms": 245_000,
            }
        ],
        "recent": [
            {
                "variant": "swiss",
                "room": "k2x7m4qa",
                "at": 1,
                "place": 2,
                "of": 4,
                "won": False,
                "rating": 1612,
                "delta": -7,
            }
        ],
    }
    lines = profile_lines(card)
    assert "rank 3/40" in lines[1]
    assert "best win 4:05" in lines[1]
    assert "solitaire replay CODE --player NAME" in lines[2]
    assert lines[3].split() == ["k2x7m4qa", "swiss", "place", "2/4", "1612", "(-7)"]
    card["recent"][0]["timed_out"] = True
    assert "place 2/4, out of time  1612 (-7)" in profile_lines(card)[3]


def test_a_profile_lists_tournaments_played_and_podiums() -> None:
    card = {
        "name": "ann",
        "ratings": [],
        "recent": [],
        "tournaments": {
            "played": 3,
            "podiums": [
                {"tournament": "t9", "name": "Friday", "variant": "swiss", "place": 1, "at": 5},
                {"tournament": "t4", "name": "Hourly", "variant": "swiss", "place": 3, "at": 2},
            ],
        },
    }
    assert profile_lines(card)[2:] == [
        "  tournaments: 3 played, 2 podiums",
        "    1st in Friday (swiss; solitaire tournament show t9)",
        "    3rd in Hourly (swiss; solitaire tournament show t4)",
    ]


def test_a_profile_shows_the_accuracy_its_games_analysis_gives() -> None:
    card = {
        "name": "ann",
        "ratings": [],
        "recent": [],
        "accuracy": [
            {"variant": "quadrennial", "games": 3, "moves": 120, "kept": 118, "share": 0.9833,
             "lost_won": 2},
        ],
    }  # fmt: skip
    assert profile_lines(card)[2:] == [
        "  accuracy quadrennial  98.3 % of 120 moves from a won position kept it won "
        "(3 games; 2 deals lost from a won position)",
    ]
