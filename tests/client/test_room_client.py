"""Server messages folded into what the screen shows: lobby, countdown, race, progress, results."""

from __future__ import annotations

import asyncio
import hashlib
import io

from client.app import App
from client.cli import Output
from client.online import RoomClient, commitment_ok
from client.screen import RacerState, compose, strip_ansi
from client.session import Session
from shared import apply_move_revealing, deal_deck, new_game, public_event, start_event

ROOM = "k2x7m4qa"


def player(pid: str, name: str, status: str = "waiting", foundation: int = 0, moves: int = 0):
    return {
        "player": pid,
        "name": name,
        "status": status,
        "foundation": foundation,
        "moves": moves,
        "finished_at": None,
        "reached_at": None,
    }


def room(status: str, players: list[dict], **extra) -> dict:
    state = {
        "id": ROOM,
        "variant": "swiss",
        "status": status,
        "capacity": 4,
        "countdown_ms": 3000,
        "time_limit_ms": 0,
        "spectator_delay_ms": 0,
        "commitment": "c",
        "deal_version": 1,
        "players": players,
        "spectators": 0,
        "created_at": 0,
        "go_at": None,
        "started_at": None,
        "ends_at": None,
        "finished_at": None,
    }
    state.update(extra)
    return {"type": "room", "room": state}


def make_client(spectator: bool = False) -> tuple[RoomClient, App, io.StringIO]:
    out = io.StringIO()
    app = App(Session(title="t"), Output(color=False, tty=False, json=True), script=[], out=out)
    client = RoomClient(app, spectator=spectator)
    client.room_id = ROOM
    return client, app, out


def game_events(moves: list[str]) -> list[dict]:
    deck = deal_deck("swiss", 1)
    state = new_game("swiss", deck=deck)
    events = [public_event(start_event("swiss", deck, at=1000))]
    for move in moves:
        state, revealed = apply_move_revealing(state, move)
        events.append({"type": "moved", "v": 1, "move": move, "revealed": revealed, "at": 1001})
    return events


def screen_text(app: App, now: int = 10_000) -> str:
    return "\n".join(strip_ansi(line) for line in compose(app.session.screen(now)))


def test_a_race_from_lobby_to_results_as_a_player() -> None:
    client, app, out = make_client()
    client.on_message({"type": "joined", "room": ROOM, "role": "player", "player": "pa"})
    client.on_message(room("lobby", [player("pa", "ann"), player("pb", "bob")]))
    assert [r.name for r in app.session.racers.values()] == ["ann", "bob"]
    client.on_message({"type": "countdown", "room": ROOM, "at": 1000, "go_at": 4000})
    assert "the race starts in 3" in screen_text(app, now=1000)
    client.on_message(
        {"type": "started", "room": ROOM, "at": 4000, "ends_at": None, "commitment": "c"}
    )
    assert client.started.is_set()
    events = game_events(["d"])
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pa", "version": 1, "event": events[0]}
    )
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pa", "version": 2, "event": events[1]}
    )
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pa", "version": 2, "event": events[1]}
    )  # a duplicate is ignored
    assert client.my_view.moves_made == 1
    assert "Waste: 3♣" in screen_text(app)
    client.on_message(
        {
            "type": "progress",
            "room": ROOM,
            "player": "pb",
            "status": "playing",
            "foundation": 3,
            "moves": 9,
            "finished_at": None,
            "reached_at": 5000,
        }
    )
    assert next(iter(app.session.racers.values())).name == "bob"  # more cards: ranked first
    client.on_message(
        {
            "type": "progress",
            "room": ROOM,
            "player": "pb",
            "status": "resigned",
            "foundation": 3,
            "moves": 9,
            "finished_at": 6000,
            "reached_at": 5000,
        }
    )
    assert "bob resigned with 3 cards" in screen_text(app)
    seed, salt = "1", "00" * 16
    commitment = hashlib.sha256(f"{seed}:{salt}".encode()).hexdigest()
    ranking = [
        {"place": 1, **player("pb", "bob", "resigned", 3, 9)},
        {"place": 2, **player("pa", "ann", "resigned", 0, 1)},
    ]
    client.on_message(
        {
            "type": "finished",
            "room": ROOM,
            "at": 7000,
            "reason": "all_done",
            "ranking": ranking,
            "variant": "swiss",
            "deal_version": 1,
            "seed": seed,
            "salt": salt,
            "commitment": commitment,
        }
    )
    text = screen_text(app)
    assert "Race over: every game is done." in text
    assert "Results: 1. bob (3), 2. ann (0)" in text
    assert "matches the commitment" in text
    assert [r.rank for r in app.session.racers.values()] == [1, 2]
    assert app.session.clock_text(99_999) == "00:03"  # stopped at the finish
    assert out.getvalue().count("\n") == 10  # every message went out as a JSON line


async def test_a_gap_in_a_watched_game_asks_for_a_fresh_snapshot() -> None:
    client, app, _ = make_client(spectator=True)
    sent = []

    async def fake_send_watch() -> None:
        sent.append("watch")

    client.send_watch = fake_send_watch  # type: ignore[method-assign]
    client.on_message(room("racing", [player("pa", "ann", "playing")], started_at=1000))
    events = game_events(["d", "t7t1"])
    client.on_message(
        {"type": "game", "room": ROOM, "player": "pa", "version": 2, "events": events[:2]}
    )
    assert app.session.boards[0][0] == "ann"
    assert app.session.boards[0][1].moves_made == 1
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pa", "version": 4, "event": events[2]}
    )
    await asyncio.sleep(0)
    assert sent == ["watch"]
    assert client.games["pa"].version == 2


def test_racer_states_and_focus() -> None:
    client, app, _ = make_client(spectator=True)
    client.on_message(
        room(
            "racing",
            [player("pa", "ann", "won", 52, 99), player("pb", "bob", "over", 10, 50)],
            started_at=1000,
        )
    )
    states = {r.name: r.state for r in app.session.racers.values()}
    assert states == {"ann": RacerState.WON, "bob": RacerState.OVER}
    assert "ann" in screen_text(app)
    assert "stuck" in screen_text(app)


def test_commitment_check() -> None:
    digest = hashlib.sha256(b"42:ab").hexdigest()
    assert commitment_ok("42", "ab", digest)
    assert not commitment_ok("43", "ab", digest)
    assert not commitment_ok(None, "ab", digest)
