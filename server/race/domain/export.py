"""When a racer's game may leave the server whole (a text export), and what its header says.

An export shows every card the game turned and, for a secret seed, the seed itself: what a live
race's viewers must not have before the racers. So a game is exported only once its race is over
and the spectators, behind their delay, have seen its end; a daily challenge's attempt only once
its day is over, as for watching it. Pure functions of the folded room and the time.
"""

from __future__ import annotations

from server.kernel.days import tag_end_ms
from server.kernel.errors import NoSuchPlayer, NotAllowed, WrongStatus
from server.race.domain.model import Game, Room
from shared.export import ExportHeader


def daily_hidden(room: Room, *, now: int) -> bool:
    """A daily challenge attempt is shown to nobody but its player before its day is over:
    everyone plays the day's deal at a time of their own."""
    daily = room.settings.daily
    return bool(daily) and now < tag_end_ms(daily)


def exportable_game(room: Room, who: str, *, now: int) -> Game:
    """The racer's game (``who``: a player id or a name, case-blind), or why not yet:
    NotAllowed (a daily before its day ends), WrongStatus (the race is not over, or the
    spectator delay has not shown its end), NoSuchPlayer."""
    if daily_hidden(room, now=now):
        raise NotAllowed(
            f"room {room.id} is a daily challenge attempt: it is exported once its day is over"
        )
    finished = room.finished
    if finished is None:
        raise WrongStatus(
            f"room {room.id}: the race is not over; its games are exported once it ends"
        )
    if now < finished.at + room.delay_ms:
        raise WrongStatus(
            f"room {room.id}: the race is over but its spectators see it "
            f"{room.delay_ms // 1000} s late; export it then"
        )
    game = room.games.get(who)
    if game is None:
        named = [g for p, g in room.games.items() if _name(room, p).casefold() == who.casefold()]
        game = named[0] if len(named) == 1 else None
    if game is None or game.version == 0:
        raise NoSuchPlayer(f"room {room.id} has no game of {who!r}")
    return game


def _name(room: Room, player: str) -> str:
    seat = room.seats.get(player)
    if seat is not None:
        return seat.name
    finished = room.finished
    for rank in finished.ranking if finished is not None else ():
        if rank.get("player") == player:
            return str(rank.get("name", player))
    return player


def export_header(room: Room, game: Game) -> ExportHeader:
    """The text record's tags of an exportable game: the seed is public by then (the finished
    message reveals a race's; a daily's is revealed when its day is over)."""
    finished = room.finished
    ranking = finished.ranking if finished is not None else ()
    rank = next((r for r in ranking if r.get("player") == game.player), None)
    status = game.progress.status
    result = status.value if status.done else "unfinished"  # the time limit ended the race
    return ExportHeader(
        room=room.id,
        player=_name(room, game.player),
        result=result,
        place=int(rank["place"]) if rank is not None else None,
        seed=room.settings.seed,
        salt=room.settings.salt,
        commitment=room.settings.commitment,
    )
