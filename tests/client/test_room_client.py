"""Server messages folded into what the screen shows: lobby, countdown, race, progress, results."""

from __future__ import annotations

import asyncio
import hashlib
import io

import pytest

from client.app import App
from client.cli import Output
from client.commands import WATCH_FIRST, parse_command
from client.connection import RequestFailed
from client.play import play_loop
from client.room_client import RoomClient
from client.room_play import watch_command
from client.screen import RacerState, compose, strip_ansi
from client.session import Session
from client.watching import watch_loop
from shared import apply_move_revealing, deal_deck, new_game, public_event, start_event
from shared.errors import ClientError
from shared.protocol import commitment_ok

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
    client.state.room_id = ROOM
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
    assert client.view.started.is_set()
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
    assert (
        "Fair deal: the seed revealed now (1) is the one the server locked in before the start."
        in " ".join(text.split())
    )
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
    assert app.session.boards[0][0] == "1. ann"  # numbered as in the panel
    assert app.session.boards[0][1].moves_made == 1
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pa", "version": 4, "event": events[2]}
    )
    await asyncio.sleep(0)
    assert sent == ["watch"]
    assert client.state.games["pa"].version == 2


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


class FakeConn:
    """Answers `watch` as the server does: a `game` snapshot per watched game, or an error."""

    def __init__(self, client: RoomClient, games: dict[str, list[dict]]) -> None:
        self.client = client
        self.games = games
        self.sent: list[dict] = []
        self.refuse: str | None = None
        self.clock_offset_ms = 0
        self.failure = None

    async def request(self, msg: dict, *, expect: str | None = None, wait: float = 15.0) -> dict:
        self.sent.append(msg)
        if self.refuse is not None:
            self.client.on_message({"type": "error", "code": "not_allowed", "reason": self.refuse})
            raise RequestFailed(self.refuse, code="not_allowed")
        targets = [msg["player"]] if "player" in msg else list(self.games)
        answers = [
            {
                "type": "game",
                "room": ROOM,
                "player": target,
                "version": len(self.games[target]),
                "events": self.games[target],
            }
            for target in targets
        ]
        for answer in answers:
            self.client.on_message(answer)
        return answers[0]

    async def send(self, msg: dict) -> None:
        self.sent.append(msg)


def racing_pair() -> tuple[RoomClient, App, FakeConn, list[dict], list[dict]]:
    """ann (me, 1 move) and bob (3 moves) racing on seed 1; bob's events not yet seen."""
    client, app, _ = make_client()
    ann = game_events(["d"])
    bob = game_events(["d", "t7t1", "d"])
    conn = FakeConn(client, {"pa": ann, "pb": bob[:3]})
    client.conn = conn  # type: ignore[assignment]
    client.on_message({"type": "joined", "room": ROOM, "role": "player", "player": "pa"})
    players = [player("pa", "ann", "playing"), player("pb", "bob", "playing")]
    client.on_message(room("racing", players, started_at=1000))
    client.on_message({"type": "game", "room": ROOM, "player": "pa", "version": 2, "events": ann})
    return client, app, conn, ann, bob


def progress(pid: str, status: str, foundation: int, moves: int) -> dict:
    return {"type": "progress", "room": ROOM, **player(pid, "", status, foundation, moves)}


async def test_a_racer_may_watch_only_once_their_game_is_done() -> None:
    client, app, conn, _ann, _ = racing_pair()
    with pytest.raises(ClientError) as refused:
        await client.watch_others("bob")
    assert refused.value.reason == WATCH_FIRST
    assert conn.sent == []  # refused locally, nothing asked of the server
    await watch_command(client, app, parse_command("watch"))
    assert "watch: finish or resign your game to watch the others" in screen_text(app)
    assert not client.view.watching_others
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pa", "version": 3, "event": resigned()}
    )
    client.on_message(progress("pa", "resigned", 0, 1))
    assert client.view.can_watch()
    status = app.session.status
    assert status.startswith("You resigned with 0 cards on the foundations.")
    assert "'watch' shows their boards" in status
    assert "'back'" in status


def resigned() -> dict:
    return {"type": "resigned", "v": 1, "at": 1002}


async def test_watching_one_racer_follows_their_moves_then_back_shows_mine() -> None:
    client, app, conn, _, bob = racing_pair()
    client.on_message(progress("pa", "resigned", 0, 1))  # before the game's own event: still ok
    assert app.session.status.startswith("You resigned: 0 cards on the foundations.")
    await watch_command(client, app, parse_command("watch bob"))
    assert conn.sent == [{"type": "watch", "room": ROOM, "player": "pb"}]
    assert client.view.watching_others
    assert client.view.focus == "pb"
    text = screen_text(app)
    assert "== 1. bob — 2 moves ==" in text
    assert app.session.status.startswith("Watching bob live")
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pb", "version": 4, "event": bob[3]}
    )
    assert "== 1. bob — 3 moves ==" in screen_text(app)  # bob's next move, live
    assert app.session.boards[0][1].moves_made == 3
    await watch_command(client, app, parse_command("back"))
    assert not client.view.watching_others
    assert app.session.boards == ()
    assert app.session.status.startswith("You resigned")
    text = screen_text(app)
    assert "Back to your board." in text
    assert "bob —" not in text
    assert "1 move " in text  # my own count, in the header
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pb", "version": 5, "event": bob[3]}
    )  # bob's events still arrive (the server keeps sending them): they do not take over
    assert "1 move " in screen_text(app)


async def test_watch_everyone_by_number_and_case_insensitive_name() -> None:
    client, app, conn, _, _ = racing_pair()
    client.on_message(progress("pb", "playing", 2, 3))  # bob leads: first line of the panel
    client.on_message(progress("pa", "over", 0, 1))
    assert list(app.session.racers) == ["pb", "pa"]
    await watch_command(client, app, parse_command("watch"))
    assert conn.sent[-1] == {"type": "watch", "room": ROOM}
    assert [label for label, _ in app.session.boards] == ["1. bob", "2. ann (you)"]
    assert client.view.focus is None
    await watch_command(client, app, parse_command("watch 1"))
    assert conn.sent[-1]["player"] == "pb"
    assert [label for label, _ in app.session.boards] == ["1. bob"]
    await watch_command(client, app, parse_command("watch all"))
    assert len(app.session.boards) == 2
    await watch_command(client, app, parse_command("watch BOB"))
    assert client.view.focus == "pb"
    await watch_command(client, app, parse_command("watch 2"))  # that is me: my own board
    assert not client.view.watching_others
    assert app.session.boards == ()
    sent = len(conn.sent)
    await watch_command(client, app, parse_command("watch zed"))
    assert "watch: no player 'zed' in this room (players: ann, bob)" in screen_text(app)
    assert len(conn.sent) == sent


async def test_back_while_playing_keeps_the_playing_hint() -> None:
    client, app, _, _, _ = racing_pair()
    before = app.session.status
    await watch_command(client, app, parse_command("me"))
    assert app.session.status == before
    assert "Back to your board." in screen_text(app)


async def test_a_refused_watch_keeps_my_board() -> None:
    client, app, conn, _, _ = racing_pair()
    client.on_message(progress("pa", "resigned", 0, 1))
    conn.refuse = "racers can watch other racers once their own game is finished"
    await watch_command(client, app, parse_command("watch bob"))
    assert "watch: racers can watch other racers" in screen_text(app)
    assert not client.view.watching_others
    assert app.session.boards == ()


async def test_after_the_race_anyone_may_watch() -> None:
    client, app, _conn, _, _ = racing_pair()
    client.view.finished.set()
    await watch_command(client, app, parse_command("watch bob"))
    assert client.view.focus == "pb"


async def test_a_gap_in_another_racers_game_asks_for_that_game_only() -> None:
    client, _app, conn, _, bob = racing_pair()
    client.on_message(progress("pa", "resigned", 0, 1))
    await client.watch_others("bob")
    client.on_message(
        {"type": "game_event", "room": ROOM, "player": "pb", "version": 5, "event": bob[3]}
    )
    await asyncio.sleep(0)
    assert conn.sent[-1] == {"type": "watch", "room": ROOM, "player": "pb"}


async def test_watch_and_back_outside_a_race_are_refused() -> None:
    app = App(Session(title="t"), Output(color=False, tty=False, json=False), script=["watch"])

    class Driver:
        view = None

    await play_loop(app, Driver())  # type: ignore[arg-type]
    assert app.session.error == "watch: only racers can watch the others, in a race"


async def test_a_spectator_may_type_watch_name_as_racers_do() -> None:
    client, app, _ = make_client(spectator=True)
    app.script = ["watch bob", "watch", "2", "quit"]
    focused = []

    async def fake_send_watch() -> None:
        focused.append(client.view.focus)

    client.send_watch = fake_send_watch  # type: ignore[method-assign]
    players = [player("pa", "ann", "playing"), player("pb", "bob", "playing", 3)]
    client.on_message(room("racing", players, started_at=1000))
    await watch_loop(client, app)
    assert focused == ["pb", None, "pa"]  # 2: the second line of the panel, where bob leads
