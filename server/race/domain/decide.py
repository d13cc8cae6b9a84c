"""Decisions: each request against the folded room at time ``now``, as events or a refusal.

Pure functions (no store, no clock, no randomness: ids, salts and seeds are arguments), so
every rule a command applies is unit-tested with plain values. A decision returns the events to
append (an empty list: nothing to do) or raises the ClientError a client is answered with. The
room loop (``server.race.services.commands``) appends what they return at the version they read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from server.kernel.errors import (
    AlreadyInRoom,
    CustomDeckDisabled,
    GameOver,
    NotAllowed,
    NotAPlayer,
    NotRacing,
    RoomFull,
    WrongStatus,
)
from server.kernel.names import fold_name, unique_name
from server.race.domain.events import (
    CountdownCancelled,
    CountdownStarted,
    PlayerAway,
    PlayerBack,
    PlayerBerserked,
    PlayerJoined,
    PlayerLeft,
    RaceFinished,
    RaceStarted,
    RematchOffered,
    RoomClosed,
    RoomCreated,
    RoomEvent,
)
from server.race.domain.lifecycle import ENDED, RoomStatus, allows
from server.race.domain.model import Game, Room
from server.race.domain.progress import TIME_LIMIT, ranking, timed_out_ranking
from shared import (
    DEAL_VERSION,
    canonical_seed,
    deal_deck,
    move_event,
    resign_event,
    start_event,
    validate_deck,
)
from shared.protocol import CLOSED_IDLE, CLOSED_UNFILLED, BadField, commitment, deck_secret

Events = list[RoomEvent]


@dataclass(frozen=True, slots=True)
class RoomLimits:
    """What a server allows a new room (from its config)."""

    max_players: int
    allow_custom_deck: bool
    time_limit_ms: int  # the limit this room gets (already checked against the maximum)


def decide_create(
    msg: Mapping[str, Any],
    *,
    capacity: int,
    deck: Sequence[str] | None,
    seed: str | None,
    salt: str,
    time_limit_ms: int,
    creator: str,
    now: int,
    members: Sequence[str] = (),
    tournament: str = "",
) -> RoomCreated:
    """The room a ``create_room`` asks for, committed to its secret (seed or deck)."""
    secret = deck_secret(deck) if deck is not None else seed
    if secret is None:
        raise ValueError("a room needs a seed or a deck")
    return RoomCreated(
        at=now,
        variant=msg["variant"],
        seed=seed,
        deck=tuple(deck) if deck is not None else None,
        salt=salt,
        commitment=commitment(secret, salt),
        deal_version=DEAL_VERSION,
        capacity=capacity,
        countdown_ms=msg.get("countdown_ms", 3000),
        time_limit_ms=time_limit_ms,
        spectator_delay_ms=msg.get("spectator_delay_ms", 0),
        open_seed=deck is not None or "seed" in msg,
        winnable=bool(msg.get("winnable", False)),
        creator=creator,
        rated=rateable(msg, capacity=capacity, deck=deck),
        daily=str(msg.get("daily", "")),
        members=tuple(members),
        tournament=tournament,
        challenge=str(msg.get("challenge", "")),
    )


def rateable(msg: Mapping[str, Any], *, capacity: int, deck: Sequence[str] | None) -> bool:
    """A room whose race may count for ratings: a secret seed (never a chosen seed or deck),
    more than one seat, and the creator did not ask for an unrated room."""
    return bool(msg.get("rated", True)) and deck is None and "seed" not in msg and capacity > 1


@dataclass(frozen=True, slots=True)
class Deal:
    """The deal a ``create_room`` asks for: a chosen deck or seed, or None (the server draws a
    secret seed, or a winnable one)."""

    capacity: int
    deck: tuple[str, ...] | None
    seed: str | None
    winnable: bool


def read_create_request(
    msg: Mapping[str, Any], *, max_players: int, allow_custom_deck: bool
) -> Deal:
    """What a ``create_room`` asks for, checked against what this server allows."""
    capacity = msg.get("capacity", min(4, max_players))
    if capacity > max_players:
        raise BadField(f"field 'capacity' must be <= {max_players}", field="capacity")
    deck, winnable = msg.get("deck"), bool(msg.get("winnable", False))
    if winnable and (deck is not None or "seed" in msg):
        chosen = "deck" if deck is not None else "seed"
        raise BadField(
            f"field 'winnable' asks for a secret seed: it cannot go with a {chosen}",
            field="winnable",
        )
    if deck is not None:
        if not allow_custom_deck:
            raise CustomDeckDisabled("this server does not accept explicit decks")
        return Deal(capacity, tuple(validate_deck(deck)), None, winnable)
    seed = canonical_seed(msg["seed"]) if "seed" in msg else None
    return Deal(capacity, None, seed, winnable)


# ---- seats ----------------------------------------------------------------------------------


def decide_join(
    room: Room,
    player: str,
    *,
    name: str,
    token_hash: str,
    connection: str,
    now: int,
    account: str | None = None,
) -> Events:
    """Seat ``player``; a seat it has already is taken over by this connection. An account
    has one seat per room (it would otherwise be rated against itself)."""
    if player in room.seats:
        return decide_back(room, player, connection=connection, now=now)
    if not allows(room.status, PlayerJoined):
        raise WrongStatus(f"room {room.id} is {room.status.value}: join as a spectator")
    if len(room.seats) >= room.settings.capacity:
        raise RoomFull(f"room {room.id} is full")
    if room.settings.members and player not in room.settings.members:
        if room.settings.daily:
            raise NotAllowed(f"room {room.id} is someone's daily challenge attempt")
        if room.settings.challenge:
            raise NotAllowed(f"room {room.id} is someone's challenge attempt")
        raise NotAllowed(f"room {room.id} is a quick race: its seats are for the matched players")
    if account is not None and any(
        s.account is not None and fold_name(s.account) == fold_name(account)
        for s in room.seats.values()
    ):
        raise AlreadyInRoom(f"your account already has a seat in room {room.id}")
    unique = unique_name(name, room.names())
    return [PlayerJoined(now, player, unique, token_hash, connection, account)]


def decide_back(room: Room, player: str, *, connection: str, now: int) -> Events:
    """The seat's connection is this one now (a resume)."""
    seat = room.seats.get(player)
    if seat is None or seat.connection == connection or not allows(room.status, PlayerBack):
        return []
    return [PlayerBack(now, player, connection)]


def decide_away(room: Room, player: str, *, connection: str, at: int) -> Events:
    """The seat's connection went; nothing if the seat has moved on to another one."""
    seat = room.seats.get(player)
    if seat is None or seat.connection != connection or not allows(room.status, PlayerAway):
        return []
    return [PlayerAway(at, player, connection)]


def decide_leave(room: Room, player: str, *, now: int) -> Events:
    """Free a seat before the race (a racing player resigns instead: ``decide_resign``).

    The last to leave a countdown cancels it. A room formed by matchmaking is a race or
    nothing: one left alone in its countdown is not raced solo (and unrated) by surprise; the
    room closes ``unfilled``, as when a member never sat down, and they may queue again."""
    if player not in room.seats or not allows(room.status, PlayerLeft):
        return []
    events: Events = [PlayerLeft(now, player)]
    if room.status is RoomStatus.COUNTDOWN:
        left = sum(1 for s in room.seats.values() if not s.bot and s.player != player)
        if left == 0 and not room.settings.members:
            events.append(CountdownCancelled(now))  # bots do not race on their own
        elif left < people_needed(room):
            events += [CountdownCancelled(now), RoomClosed(now, CLOSED_UNFILLED)]
    return events


def people_needed(room: Room) -> int:
    """The people a room formed by matchmaking races with: two of its members, or its one
    member when the others are bots (a quick race given a bot); 0 for any other room."""
    return min(2, len(room.settings.members))


def people_seated(room: Room) -> int:
    return sum(1 for s in room.seats.values() if not s.bot)


def check_rematch(room: Room, player: str) -> None:
    """Who may ask for a rematch: a racer of this race, once it is over (a daily challenge's
    deal is played once a day: it has none)."""
    if player not in room.seats:
        raise NotAPlayer("only a racer of this race can ask for a rematch")
    if room.settings.daily:
        raise NotAllowed("the daily challenge is played once a day: no rematch")
    if room.settings.challenge:
        raise NotAllowed("a challenge is played once: no rematch")
    if room.status is not RoomStatus.FINISHED:
        raise WrongStatus("a rematch comes once the race is over")


def rematch_request(room: Room) -> dict[str, Any]:
    """The ``create_room`` of a rematch: the room's settings on a new secret deal (the seed,
    or deck, a creator chose is not dealt again: everyone has seen it played)."""
    meta = room.settings
    return {
        "variant": meta.variant,
        "capacity": meta.capacity,
        "countdown_ms": meta.countdown_ms,
        "time_limit_ms": meta.time_limit_ms,
        "spectator_delay_ms": meta.spectator_delay_ms,
        "rated": meta.rated,
        "winnable": meta.winnable,
    }


def decide_rematch(room: Room, player: str, *, rematch: str, now: int) -> Events:
    """Offer ``rematch`` as this race's rematch; nothing if one is offered already (the
    racers who ask next are seated in that one)."""
    check_rematch(room, player)
    if room.rematch is not None:
        return []
    return [RematchOffered(now, rematch, player)]


def decide_close_unused(room: Room, *, now: int) -> Events:
    """Close a lobby nobody has ever sat in, at once: a rematch's room another racer's offer
    beat (it would otherwise wait out the lobby TTL, listed and counted as its creator's)."""
    if room.status is not RoomStatus.LOBBY or room.joined_count:
        return []
    return [RoomClosed(now, CLOSED_IDLE)]


def decide_close_idle(room: Room, *, ttl_ms: int, now: int) -> Events:
    """Close a lobby nobody has been connected to for the lobby TTL."""
    if not allows(room.status, RoomClosed) or room.idle_since is None or ttl_ms <= 0:
        return []
    if now < room.idle_since + ttl_ms:
        return []
    return [RoomClosed(now, CLOSED_IDLE)]


def decide_close_unfilled(room: Room, *, now: int) -> Events:
    """Close a room formed by matchmaking that fewer than two of its members sat down in by
    the time it should start: the one who did is not left in a lobby nobody else will join."""
    if (
        not room.settings.members
        or room.status is not RoomStatus.LOBBY
        or people_seated(room) >= people_needed(room)
    ):
        return []
    return [RoomClosed(now, CLOSED_UNFILLED)]


def abandoned(room: Room, player: str, *, grace_ms: int, now: int) -> bool:
    """The racer has been away longer than the grace: the server resigns them."""
    seat = room.seats.get(player)
    if seat is None or seat.away_since is None or grace_ms <= 0:
        return False
    return now >= seat.away_since + grace_ms


# ---- the race -------------------------------------------------------------------------------


def decide_start(room: Room, player: str, *, now: int) -> Events:
    if not allows(room.status, CountdownStarted):
        raise WrongStatus(f"cannot start a room that is {room.status.value}")
    if player not in room.seats:
        raise NotAPlayer("you have no seat in this room")
    return [CountdownStarted(now, now + room.settings.countdown_ms)]


def decide_go(room: Room, *, now: int) -> Events:
    """The countdown is over: the race starts (whichever process comes first)."""
    if not allows(room.status, RaceStarted):
        return []
    limit = room.settings.time_limit_ms
    return [RaceStarted(now, now + limit if limit else None)]


def decide_finish(room: Room, reason: str, *, now: int) -> Events:
    """The race ends: every game done (``all_done``) or the time limit (``time_limit``)."""
    if not allows(room.status, RaceFinished):
        return []
    if reason == "all_done" and not room.all_done():
        return []
    decided_from = {player: game.version for player, game in room.games.items()}
    ranks = tuple(ranking(room.entrants()))
    if reason == TIME_LIMIT:
        ranks = timed_out_ranking(ranks)
    return [RaceFinished(now, reason, ranks, decided_from)]


# ---- games ----------------------------------------------------------------------------------


def game_start_event(room: Room, *, now: int) -> dict[str, Any]:
    """Every racer's game stream begins with this: the room's deck, dealt when it started."""
    meta = room.settings
    if meta.deck is not None:
        deck: Sequence[str] = meta.deck
    else:
        assert meta.seed is not None, "a room has a seed or a deck"
        deck = deal_deck(meta.variant, meta.seed)
    return start_event(meta.variant, deck, at=room.started_at or now)


def check_playing(room: Room, game: Game, *, now: int) -> None:
    """A game move or resignation is possible now; the ClientError saying why not."""
    if room.status is not RoomStatus.RACING or (room.ends_at is not None and now >= room.ends_at):
        raise NotRacing(f"the race is {room.status.value}, not racing")
    own_end = room.clock_ends_at(game.player)
    if own_end is not None and now >= own_end:
        raise NotRacing("your clock has run out (berserk: half the time limit)")
    if game.state is None:
        raise NotRacing("your game has not started yet")
    if game.progress.status.done:
        raise GameOver(f"your game is {game.progress.status.words}")


def decide_move(room: Room, game: Game, move: str, *, cid: Any, now: int) -> dict[str, Any]:
    """The ``moved`` event of ``move`` in the game as folded, or why not (IllegalMove, ...)."""
    check_playing(room, game, now=now)
    assert game.state is not None
    event = move_event(game.state, move, at=now)
    event["cid"] = cid
    return event


def decide_berserk(room: Room, player: str, *, now: int) -> Events:
    """A tournament racer halves their own clock, before the race starts; once."""
    seat = room.seats.get(player)
    if seat is None:
        raise NotAPlayer("only a racer can berserk")
    if room.meta is None or not room.meta.tournament or not room.meta.time_limit_ms:
        raise NotAllowed("berserk is for timed tournament races")
    if not allows(room.status, PlayerBerserked):
        raise WrongStatus(f"the race is {room.status.value}: berserk before it starts")
    if seat.berserk:
        return []
    return [PlayerBerserked(now, player)]


def decide_resign(room: Room, game: Game, *, reason: str | None, now: int) -> dict[str, Any]:
    """The racer gives up (``reason`` ``abandoned``: the server resigned them)."""
    if room.status is not RoomStatus.RACING or game.state is None:
        raise NotRacing(f"the race is {room.status.value}, not racing")
    if game.progress.status.done:
        raise GameOver(f"your game is {game.progress.status.words}")
    event = resign_event(at=now)
    if reason is not None:
        event["reason"] = reason
    return event


def check_hint(room: Room, game: Game) -> None:
    """Hints are help the other racers do not get: solo practice only, in a live game."""
    if room.settings.capacity != 1:
        raise NotAllowed("hints are for solo practice")
    if room.settings.challenge:
        raise NotAllowed("a challenge's attempts are compared and rated: no hints")
    if room.status is not RoomStatus.RACING or game.state is None:
        raise NotRacing(f"the race is {room.status.value}, not racing")
    if game.progress.status.done:
        raise GameOver(f"your game is {game.progress.status.words}")


def ended(room: Room) -> bool:
    return room.status in ENDED
