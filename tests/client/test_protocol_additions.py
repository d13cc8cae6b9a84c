"""Open seeds, winnable rooms, away and abandoned racers, default time limits, `id_reused` and
rich room summaries, fed to the client as frames built by hand, so the client's reading of them
is checked apart from any server; and the messages a player reads, as golden strings."""

from __future__ import annotations

import hashlib

from client.commands import BARE_F_HINTS, Kind, confirm_texts
from client.play import reason_text
from client.race_panel import fairness_lines
from client.room_play import LOST
from client.rooms import room_lines
from client.screen import RacerState, too_small
from client.session import game_status
from client.text import cards_as_shown, plural, to_ascii, width
from tests.client.test_room_client import (
    ROOM,
    game_events,
    make_client,
    player,
    progress,
    racing_pair,
    room,
    screen_text,
)


def away(pid: str, name: str, since: int | None, **extra: object) -> dict:
    return {
        **player(pid, name, "playing"),
        "connected": since is None,
        "away_since": since,
        **extra,
    }


def finished(reason: str, ranking: list[dict], seed: str = "7") -> dict:
    salt = "ab" * 16
    return {
        "type": "finished",
        "room": ROOM,
        "at": 90_000,
        "reason": reason,
        "ranking": ranking,
        "variant": "swiss",
        "deal_version": 1,
        "seed": seed,
        "salt": salt,
        "commitment": hashlib.sha256(f"{seed}:{salt}".encode()).hexdigest(),
    }


def test_an_away_racer_shows_in_the_panel_with_the_time_away() -> None:
    client, app, _ = make_client(spectator=True)
    players = [away("pa", "ann", 5_000), away("pb", "bob", None)]
    client.on_message(room("racing", players, started_at=1_000))
    assert "ann — disconnected 0:12" in screen_text(app, now=17_000)
    assert "ann — disconnected 0:13" in screen_text(app, now=18_000)  # it counts up
    client.on_message(room("racing", [away("pa", "ann", None), away("pb", "bob", None)]))
    assert "disconnected" not in screen_text(app, now=19_000)  # back


def test_an_away_racer_without_a_time_is_counted_from_when_the_client_learnt_it() -> None:
    client, app, _ = make_client(spectator=True)
    app.clock = lambda: 50_000
    client.on_message(
        room("racing", [{**player("pa", "ann", "playing"), "connected": False}], started_at=1_000)
    )
    assert "ann — disconnected 0:05" in screen_text(app, now=55_000)


def test_a_racer_resigned_for_being_away_is_said_so() -> None:
    client, app, _conn, _, bob = racing_pair()
    client.on_message(
        {"type": "game", "room": ROOM, "player": "pb", "version": 3, "events": bob[:3]}
    )
    abandoned = {"type": "resigned", "v": 1, "reason": "abandoned", "at": 9_000}
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pb", "version": 4, "event": abandoned}
    )
    assert "bob was away too long: resigned by the server." in screen_text(app)


def test_a_key_revoked_elsewhere_is_said_and_the_race_goes_on() -> None:
    client, app, _conn, _, _ = racing_pair()
    client.on_message({"type": "logged_out"})
    text = " ".join(screen_text(app).split())
    assert "Logged out: this account's password was changed, or this login ended" in text


def test_a_rematch_is_said_once_to_racers_and_spectators_with_what_to_type() -> None:
    ranking = [{"place": 1, **player("pa", "ann", "resigned")}]
    for spectator, said in (
        (False, "A rematch is on in room r2: type 'rematch' to race again."),
        (True, "A rematch is on in room r2: type 'rematch' to watch it."),
    ):
        client, app, _ = make_client(spectator=spectator)
        client.on_message({"type": "joined", "room": ROOM, "role": "player", "player": "pa"})
        client.on_message(room("finished", [player("pa", "ann", "resigned")], finished_at=9))
        client.on_message(finished("all_done", ranking))
        for _ in range(2):
            client.on_message(
                room("finished", [player("pa", "ann", "resigned")], finished_at=9, rematch="r2")
            )
        text = " ".join(screen_text(app).split())
        assert text.count(said) == 1


def test_open_seed_rooms_say_so_in_the_lobby_title_and_results() -> None:
    client, app, _ = make_client()
    client.on_message({"type": "joined", "room": ROOM, "role": "player", "player": "pa"})
    client.on_message(room("lobby", [player("pa", "ann"), player("pb", "bob")], open_seed=True))
    assert client.state.open_seed
    ranking = [
        {"place": 1, **player("pa", "ann", "won", 52, 120)},
        {"place": 2, **player("pb", "bob", "playing", 20, 80)},
    ]
    client.on_message(finished("all_done", ranking))
    text = " ".join(screen_text(app).split())
    assert "This room had an open seed: the creator knows the deck." in text


def test_time_up_marks_the_racers_still_playing_and_orders_them_by_the_ranking() -> None:
    client, app, _ = make_client(spectator=True)
    players = [player("pa", "ann", "playing", 3, 10), player("pb", "bob", "resigned", 0, 1)]
    players.append(player("pc", "cat", "playing", 0, 4))
    client.on_message(room("racing", players, started_at=1_000, ends_at=61_000))
    # Numbered from the start; a resigned racer with 0 cards below one still playing with 0.
    assert [r.name for r in app.session.racers.values()] == ["ann", "cat", "bob"]
    assert [r.place for r in app.session.racers.values()] == [1, 2, 3]
    ranking = [
        {"place": 1, **player("pa", "ann", "playing", 3, 10)},
        {"place": 2, **player("pc", "cat", "playing", 0, 4)},
        {"place": 3, **player("pb", "bob", "resigned", 0, 1)},
    ]
    client.on_message(finished("time_limit", ranking))
    states = [r.state for r in app.session.racers.values()]
    assert states == [RacerState.TIME_UP, RacerState.TIME_UP, RacerState.RESIGNED]
    text = screen_text(app)
    assert "Race over: time is up." in text
    assert "time up" in text


def test_every_race_has_a_time_limit_the_clock_counts_down() -> None:
    client, app, _ = make_client()
    client.on_message({"type": "joined", "room": ROOM, "role": "player", "player": "pa"})
    client.on_message(room("lobby", [player("pa", "ann"), player("pb", "bob")]))
    client.on_message(
        {"type": "started", "room": ROOM, "at": 1_000, "ends_at": 601_000, "commitment": "c"}
    )
    assert "Go! The race has started: 10 minutes to play." in screen_text(app, now=2_000)
    assert app.session.clock_text(61_000) == "09:00 left"


def test_a_solo_game_says_nothing_of_races() -> None:
    client, app, _ = make_client()
    client.view.solo = True
    client.on_message({"type": "joined", "room": ROOM, "role": "player", "player": "pa"})
    client.on_message(room("lobby", [player("pa", "ann")]))
    client.on_message({"type": "countdown", "room": ROOM, "at": 1_000, "go_at": 1_000})
    client.on_message(
        {"type": "started", "room": ROOM, "at": 1_000, "ends_at": None, "commitment": "c"}
    )
    text = screen_text(app)
    assert "race" not in text.lower()
    assert "Countdown" not in text


def test_the_room_list_orders_rooms_names_racers_and_marks_open_seeds() -> None:
    rooms = [
        {"id": "old1", "variant": "swiss", "status": "finished", "players": 1, "capacity": 1,
         "spectators": 0, "names": ["ann"], "finished_at": 1_000, "open_seed": True},
        {"id": "new2", "variant": "quadrennial", "status": "finished", "players": 1,
         "capacity": 1, "spectators": 0, "names": ["山田"], "finished_at": 9_000},
        {"id": "race3", "variant": "swiss", "status": "racing", "players": 2, "capacity": 4,
         "spectators": 3, "names": ["bob", "cat"], "finished_at": None, "winnable": True},
        {"id": "lobby4", "variant": "swiss", "status": "lobby", "players": 1, "capacity": 4,
         "spectators": 0, "names": ["dan"], "finished_at": None, "open_seed": False},
    ]  # fmt: skip
    assert room_lines(rooms) == [
        "room       game        status    seats watch  players",
        "lobby4     swiss       lobby       1/4     0  dan",
        "race3      swiss       racing      2/4     3  bob, cat  (winnable deal)",
        "new2       quadrennial finished   solo     0  山田",
        # At 80 columns the notes that do not fit go on below the players, cut at words.
        "old1       swiss       finished   solo     0  ann",
        "                                              (open seed: the creator knows the",
        "                                              deck)",
    ]
    assert room_lines(rooms, columns=120)[-1] == (
        "old1       swiss       finished   solo     0  ann  (open seed: the creator knows the deck)"
    )
    assert all(width(line) <= 80 for line in room_lines(rooms))
    assert room_lines([]) == [
        "room       game        status    seats watch  players",
        "(no rooms: 'solitaire race create' opens one)",
    ]


def test_a_lost_seat_after_a_restart_says_the_game_is_lost_not_no_seat() -> None:
    client, app, _conn, _, _ = racing_pair()

    class Reconnected:
        reconnects = 1
        resumed = False
        clock_offset_ms = 0
        failure = None

    client.conn = Reconnected()  # type: ignore[assignment]
    import asyncio

    asyncio.run(client.on_welcome({"resumed": False}))
    text = " ".join(screen_text(app).split())
    assert "The server restarted and lost this game" in text
    assert "Reconnected, but the game was lost." in text
    assert "no seat" not in text
    assert LOST == "this game was lost when the server restarted: type 'quit', then start a new one"


def test_golden_messages() -> None:
    """What a player reads, word for word."""
    assert reason_text("wf", "wf", "wf: the waste is empty") == "wf: the waste is empty"
    assert reason_text("5", "r5f", "r5f: KH cannot go to its foundation, which takes an Ace") == (
        "5: K♥ cannot go to its foundation, which takes an Ace"
    )
    assert reason_text("d", "d", "a move id reused for a different move") == (
        "d: a move id reused for a different move"
    )
    assert cards_as_shown("TS on JH, not AS or 2C") == "10♠ on J♥, not A♠ or 2♣"
    assert cards_as_shown("t3t5x4 wf fst2 redeal") == "t3t5x4 wf fst2 redeal"  # moves untouched
    assert plural(1, "card") == "1 card"
    assert plural(2, "card") == "2 cards"
    view = game_events(["d"])  # a view of a resigned game with 1 card, via a tiny stand-in

    class View:
        won = False
        resigned = True
        over = True
        foundation_count = 1
        moves_made = 3

    assert game_status(View()) == "You resigned with 1 card on the foundations."
    assert view  # the events helper still works
    assert BARE_F_HINTS["swiss"].startswith("'f' alone is not a move: 3f puts t3's top card")
    texts = confirm_texts(online=True, race=True)
    assert texts[Kind.QUIT] == (
        "Quit now and you resign this game: the race goes on without you. Type 'y' to quit and "
        "resign, anything else to keep playing. (Ctrl-C leaves without resigning: your seat is "
        "kept for a while.)"
    )
    assert texts[Kind.RESIGN] == (
        "Resign this game? Type 'y' to resign, anything else to keep playing."
    )
    msg = finished("all_done", [], seed="42")
    assert fairness_lines(msg, open_seed=False) == [
        "Fair deal: the seed revealed now (42) is the one the server locked in before the start."
    ]
    msg["commitment"] = "0" * 64
    assert fairness_lines(msg, open_seed=True) == [
        "Warning: the seed revealed now (42) is NOT the one the server locked in before the "
        "start: this deal cannot be trusted.",
        "This room had an open seed: the creator knows the deck.",
    ]
    assert too_small(40, 12, 79, 17) == [
        "Window too small: needs at least 79x17,",
        "this one is 40x12. Make it bigger, or",
        "type 'quit'.",
    ]
    assert to_ascii("Waste: 10♥ … ann — disconnected") == "Waste: 10h ... ann - disconnected"


def test_the_race_panel_ranks_with_progress_reached_at() -> None:
    client, app, _ = make_client(spectator=True)
    client.on_message(room("racing", [], started_at=1_000))
    for pid, name, reached in (("pa", "ann", 9_000), ("pb", "bob", 5_000)):
        client.on_message({**progress(pid, "playing", 4, 10), "reached_at": reached})
        client.state.names[pid] = name
    client.view.refresh_panel()
    # Same count: whoever reached it first is ahead (DESIGN.md, "Rooms and races").
    assert [r.name for r in app.session.racers.values()] == ["bob", "ann"]
