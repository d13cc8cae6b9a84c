"""The first view of /tournament/ID (server/tournaments/wire/page.py), from the maps a follower
is sent: the clock line says the last stretch, nobody waits once no race will be paired, a
podium counts first places with plurals right, and the description says who leads."""

from __future__ import annotations

from typing import Any

from server.tournaments.wire.page import first_view, state_word, when

START = 1_000_000


def tournament(**changes: Any) -> dict[str, Any]:
    return {
        "id": "t1",
        "name": "Cup",
        "variant": "swiss",
        "creator": "ann",
        "status": "running",
        "starts_at": START,
        "ends_at": START + 300_000,
        "length_ms": 300_000,
        "pairing_until": START + 120_000,
        "time_limit_ms": 180_000,
        "race_size": 2,
        "rated": True,
        "berserk": False,
        "streaks": True,
        "players": 2,
        "racing": 0,
        "races": 2,
        "podium": None,
        **changes,
    }


def row(rank: int, name: str, **changes: Any) -> dict[str, Any]:
    return {"rank": rank, "account": name, "name": name, "rating": 1500, "score": 0,
            "races": 0, "wins": 0, "active": True, "racing": None, "sheet": [],
            **changes}  # fmt: skip


def test_the_clock_line_says_the_last_stretch() -> None:
    t = tournament()
    assert when(t, START + 60_000) == "4:00 left"
    assert when(t, START + 280_000) == "0:20 left · no more races: the last stretch"
    assert when(tournament(status="upcoming"), START - 61_000) == "starts in 1:01"
    assert when(tournament(status="finishing"), START + 301_000) == (
        "time is up: the last races are being played"
    )


def test_nobody_waits_once_no_race_will_be_paired() -> None:
    t = tournament()
    waiting, paused, racing = row(1, "ann"), row(2, "bob", active=False), row(3, "cy", racing="r1")
    assert [state_word(t, r, START) for r in (waiting, paused, racing)] == [
        "waiting", "paused", "racing"]  # fmt: skip
    for late, now in ((t, START + 200_000), (tournament(status="finished"), START + 400_000)):
        assert [state_word(late, r, now) for r in (waiting, paused, racing)] == [
            "done", "done", "racing"]  # fmt: skip


def test_the_podium_counts_first_places_and_a_sheet_keeps_its_races_apart() -> None:
    sheet = [{"points": 2}, {"points": 0}]
    ann = row(1, "ann", score=2, races=2, wins=1, sheet=sheet)
    bob = row(2, "bob", score=1, races=1, wins=0, sheet=[{"points": 1}])
    t = tournament(status="finished", podium=[ann, bob])
    view = first_view(t, {"rows": [ann, bob]}, START + 400_000)
    assert "1st ann: 2 points, 2 races, 1 first place" in view.body.html
    assert "2nd bob: 1 point, 1 race, 0 first places" in view.body.html
    assert "<td>2 0</td>" in view.body.html
    assert "waiting" not in view.body.html
    assert view.description == (
        "A solitaire tournament: Swiss · 5 min · races of 2 (3:00 each) · rated · streaks"
        " · 2 players · by ann. Finished. ann won with 2 points."
    )
    assert view.title == "Cup · tournament · Solitaire Arena"
