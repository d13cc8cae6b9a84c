"""`solitaire tournament join ID`: follow a tournament and play every race it pairs you into.

Between races the screen shows the standings, your sheet and the wait (client/tournament/panel.py);
a pairing opens the race by itself, played as `race join` plays one (room_play.py), and when it
is over the standings come back. Ctrl-C pauses: the player is withdrawn (points kept, no more
pairings) and the seat of a race still on is kept for the server's grace, on disk, so `join`
again takes it back and carries on. `quit` between races pauses and leaves too.

Scripted (``--moves``), as a bot plays: each race plays the script from its first line, a game
still on when it runs out is resigned in its seat, nothing is read between races, and the run
ends with the tournament's final standings. ``--json`` prints the messages as `race join` does.
"""

from __future__ import annotations

import contextlib
from typing import Any

from client.app import App, now_ms
from client.cli import Output
from client.commands import Command, Kind
from client.connection import RequestFailed
from client.offline import exit_status
from client.online import seat_store
from client.play import Outcome
from client.room_client import RoomClient
from client.room_entry import connected, resumed
from client.room_play import UNFILLED_TEXT, log_ranking, play_room
from client.seats import Seat, SeatStore
from client.terminal import write_lines
from client.tournament.follow import SEAT_KIND, Follow, refused, wait_text
from client.tournament.lobby import Lobby, Step
from client.tournament.panel import Phase, berserk_hint, berserk_line, lobby_lines
from shared import protocol as p
from shared.errors import ArenaError, ClientError


class TournamentRun:
    """One run of `tournament join`: the connection's room client, the followed tournament,
    the seat kept on disk, and the screen between races."""

    def __init__(self, args: Any, app: App, client: RoomClient, follow: Follow) -> None:
        self.args = args
        self.app = app
        self.client = client
        self.follow = follow
        self.store: SeatStore = seat_store()
        self.waiting_since: int | None = None
        self.races = 0
        client.view.on_tournament = self.on_message
        client.after_welcome = self.follow_again

    @property
    def conn(self) -> Any:
        assert self.client.conn is not None
        return self.client.conn

    # -- messages ------------------------------------------------------------------------------

    def on_message(self, msg: dict[str, Any]) -> None:
        self.follow.fold(msg)
        if msg["type"] == p.TOURNAMENT_PAIRED and self.follow.id == str(msg["tournament"]).lower():
            # The server seats us at once (`joined`, `room` follow): the next room's messages
            # must be folded as this room's from now on, the last race's no more.
            self.client.forget_room()
            self.client.state.room_id = str(msg["room"])
            # Said now, before the room's countdown can be: the lines come in their order.
            self.app.session.clear_messages()  # the last race's: the standings told how it went
            self.app.session.say(f"Paired: race {msg['race']} in room {msg['room']}.")
        elif msg["type"] == p.BERSERKED:
            self._berserked(msg)
        self.draw()

    def _berserked(self, msg: dict[str, Any]) -> None:
        state = self.client.state
        if msg["player"] == state.me:
            # The clock shown from the start is then half the race's (RoomState.time_limit).
            state.progress.setdefault(msg["player"], {})["berserk"] = True
            self.app.session.countdown_hint = ""
            self.app.session.say(berserk_line(self.follow.tournament))
        else:
            name = state.names.get(msg["player"], msg["player"])
            self.app.session.say(f"{name} went berserk: their clock is halved.")

    async def follow_again(self) -> None:
        """After a reconnect: following is the connection's, so ask again (joined players are
        only paired while they follow)."""
        with contextlib.suppress(ArenaError, TimeoutError):
            await self.conn.request(
                {"type": p.FOLLOW_TOURNAMENT, "tournament": self.follow.id}, expect=p.TOURNAMENT
            )

    # -- the screen between races --------------------------------------------------------------

    def draw(self) -> None:
        """Between races, the standings where the board goes and the wait on the status line."""
        session = self.app.session
        if self.client.state.room_id is not None or not self.follow.tournament:
            session.body = ()
            return
        session.body = tuple(
            lobby_lines(
                self.follow.tournament,
                self.follow.standings,
                me=self.follow.account,
                color=self.app.output.color,
            )
        )
        session.title = self.follow.title  # the name may have come since the wait began
        session.status = wait_text(self.follow, self.conn.server_now(), self.waiting_since)
        self.app.refresh()

    # -- requests ------------------------------------------------------------------------------

    async def join(self) -> None:
        try:
            await self.conn.request(
                {"type": p.JOIN_TOURNAMENT, "tournament": self.follow.id},
                expect=p.TOURNAMENT_JOINED,
                retry_rate_limited=False,
            )
        except RequestFailed as error:
            raise refused(self.follow.id, error) from None
        self.waiting_since = self.conn.server_now()

    async def withdraw(self) -> bool:
        """Pause: no more pairings, the points kept. False if the server could not be told."""
        try:
            await self.conn.request(
                {"type": p.WITHDRAW_TOURNAMENT, "tournament": self.follow.id},
                expect=p.TOURNAMENT_WITHDRAWN,
                wait=5.0,
                retry_rate_limited=False,
            )
        except RequestFailed as error:
            return error.code == "not_in_tournament"  # withdrawn already (or never joined)
        except (ArenaError, TimeoutError):
            return False
        return True

    # -- a race --------------------------------------------------------------------------------

    def keep_seat(self) -> None:
        """From now on this race's seat token is on disk (refreshed after every `welcome`)."""

        def save() -> None:
            conn, state = self.client.conn, self.client.state
            if conn is None or conn.resume_token is None or state.room_id is None:
                return
            self.store.save(
                Seat(
                    server=self.args.server,
                    room=state.room_id,
                    player=state.me,
                    name=self.args.name,
                    token=conn.resume_token,
                    kind=SEAT_KIND + self.follow.id,
                    saved_at=now_ms(),
                )
            )

        self.client.save_seat = save
        save()

    async def race(self, paired: dict[str, Any] | None) -> Outcome:
        """Play one race to its end (Outcome.END: the standings come back), or until Ctrl-C or
        `quit` (QUIT) or the end of a typed input (NEW). A script (``--moves``) is played from
        its first line in every race; a game still live when it runs out is resigned, and the
        race's results awaited."""
        client, session = self.client, self.app.session
        self.app.rewind()
        session.body = ()
        session.show_board = True
        room = client.state.room_id or ""
        if paired is not None:
            self.races = int(paired["race"])
            me = (self.follow.account or "").casefold()
            others = [n for n in paired["players"] if str(n).casefold() != me]
            hint = berserk_hint(self.follow.tournament)
            session.countdown_hint = hint
            client.view.lobby_hint = (
                f"Race {self.races} of {self.follow.name}, against "
                f"{', '.join(others) or 'nobody'}: it starts when everyone is seated..."
                + (f" {hint}" if hint else "")
            )
            session.status = client.view.lobby_hint
            self.app.log(f"race {self.races} in room {room} against {', '.join(others)}")
            if not await client.wait_for(lambda: client.state.me is not None, 15.0):
                # Seated too late (the race went on without us, or closed): the tournament
                # frees us once that race is scored, and pairs us again.
                session.say(f"Not seated in race room {room}: waiting to be paired again.")
                self.app.log(f"not seated in race room {room}")
                return self.wait_again()
        number = f" {self.races}" if self.races else ""  # unknown for a seat taken back
        session.title = f"Solitaire Arena - {self.follow.name} - race{number} - room {room}"
        self.keep_seat()
        try:
            outcome = await play_room(
                client,
                self.app,
                race=True,
                wait_for_results=self.app.scripted,
                until=client.view.finished,
                more=self.race_command,
                stay=self.app.scripted,
            )
        except ClientError as error:
            if error.code != "room_closed" or client.view.closed != p.CLOSED_UNFILLED:
                raise
            # A rival who never sat down: nobody scores, and the tournament pairs again.
            self.store.forget(self.args.server, room, self.args.name)
            session.say(f"Race room {room} closed: {UNFILLED_TEXT}. Waiting to be paired again.")
            self.app.log(f"race room {room} closed before its start")
            return self.wait_again()
        if client.view.finished.is_set() or (client.my_view is not None and client.my_view.over):
            self.store.forget(self.args.server, room, self.args.name)
        if client.view.finished.is_set():
            log_ranking(self.app, client)
            return self.wait_again()
        # Not over: Ctrl-C or `quit` (QUIT), or a script's input ran out mid-race (NEW).
        return Outcome.QUIT if outcome is Outcome.QUIT else Outcome.NEW

    def wait_again(self) -> Outcome:
        """Out of the race's room, back to the standings and the wait for the next pairing."""
        self.client.forget_room()
        self.waiting_since = self.conn.server_now()
        return Outcome.END

    async def race_command(self, command: Command) -> bool | Outcome:
        if command.kind is not Kind.MOVE or command.text.lower() != "berserk":
            return False
        try:
            await self.conn.request({"type": p.BERSERK}, expect=p.BERSERKED)
        except RequestFailed as error:
            self.app.session.error = f"berserk: {error.reason}"
        return True


async def join_tournament(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire tournament join ID`: the exit status."""
    tournament = args.tournament.lower()
    store = seat_store()
    seat = store.latest(args.server, args.name, SEAT_KIND + tournament, now_ms())
    app, client = await connected(
        args,
        output,
        script,
        f"tournament {tournament}",
        resume=seat,
        room=seat.room if seat else None,
    )
    conn = client.conn
    assert conn is not None
    follow = Follow(tournament, conn.welcome.get("account"))
    run = TournamentRun(args, app, client, follow)
    app.next_steps = "The standings follow."
    step: Step | None = None
    outcome = Outcome.END
    paused = False
    try:
        if follow.account is None:
            raise refused(tournament, RequestFailed("", code="not_logged_in"))
        async with app:
            if seat is not None and resumed(client, seat):
                app.session.say(f"Took your seat back in room {seat.room}: the race goes on.")
                await client.wait_for(lambda: bool(client.state.room), 15.0)
                if client.state.room.get("status") != "finished":
                    await run.join()
                    outcome = await run.race(None)
                    if outcome is Outcome.NEW:
                        outcome = Outcome.QUIT  # a script's input ran out mid-race
            elif seat is not None:
                store.forget(args.server, seat.room, args.name)
            if not client.interrupted and outcome is not Outcome.QUIT:
                await run.join()
            while not client.interrupted and outcome is Outcome.END:
                step = await Lobby(run).wait()
                if step is not Step.PAIRED:
                    break
                outcome = await run.race(follow.pairings.get_nowait())
                if outcome is not Outcome.END:
                    break
            paused = await run.withdraw() if follow.phase is not Phase.FINISHED else False
    finally:
        await conn.close()
    interrupted = client.interrupted or step is Step.INTERRUPTED
    lines = []
    if paused:
        lines.append(
            f"Paused in tournament {tournament}: your points stay; "
            f"'solitaire tournament join {tournament}' carries on."
        )
    if client.state.room_id and not client.view.finished.is_set() and client.interrupted:
        lines.append(
            f"Your seat in race room {client.state.room_id} is kept for the server's grace "
            "(a minute by default): join again to take it back."
        )
    write_lines(app.out, lines)
    if interrupted:
        return 130
    app.final_screen()
    return exit_status(app)
