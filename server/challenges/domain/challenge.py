"""Challenges, pure: a daily with a chosen audience (docs/ratings.md, "Challenges").

A challenge is one committed secret deal that its creator, and those invited (or anyone with its
code, up to a capacity), each play once, alone, within a window (7 days by default). Its
stream holds its typed events; ``fold`` turns them into a ``Challenge`` through a dispatch
table, and ``TRANSITIONS`` says which event may come in which status. Decisions are functions of
the folded challenge, the request and the time. Nobody sees the standings or another's game
before finishing their own attempt, or before the challenge is settled (the window closed, or
everyone it waits for has played): then the seed is revealed and the accounts that played are
rated as one race in the standings' order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any, ClassVar

from server.accounts.domain.ratings import RaceRated
from server.daily.domain.attempts import Attempt, Outcome, ranked, standing_row
from server.kernel.errors import (
    ChallengeClosed,
    ChallengeFull,
    ChallengePlayed,
    NotAllowed,
    NotInvited,
)
from server.kernel.names import fold_name
from server.kernel.schema import Schema
from shared.errors import CorruptEvent
from shared.protocol import VARIANTS, BadField, commitment

CHALLENGE_EVENT_VERSION = 1
DAY_MS = 86_400_000
DEFAULT_WINDOW_DAYS = 7
MAX_WINDOW_DAYS = 30
DEFAULT_OPEN_CAPACITY = 8  # a challenge to anyone with its code, when no capacity is asked
MAX_CAPACITY = 50
MAX_INVITED = MAX_CAPACITY - 1
SETTLED_ALL_PLAYED = "all_played"
SETTLED_WINDOW_CLOSED = "window_closed"


@dataclass(frozen=True, slots=True)
class ChallengeEvent:
    TYPE: ClassVar[str]
    at: int


@dataclass(frozen=True, slots=True)
class ChallengeCreated(ChallengeEvent):
    """The challenge and its deal: the secret seed and salt stay on the server until it is
    settled; the commitment is shown from the start. ``invited`` are account ids (folded
    names), ``invited_names`` as registered; none invited: anyone with the code, up to
    ``capacity`` accounts (the creator counted)."""

    TYPE: ClassVar[str] = "challenge_created"
    code: str
    variant: str
    seed: str
    salt: str
    commitment: str
    creator: str
    creator_name: str
    invited: tuple[str, ...]
    invited_names: tuple[str, ...]
    capacity: int
    closes_at: int


@dataclass(frozen=True, slots=True)
class AttemptStarted(ChallengeEvent):
    """An account's one attempt, with the solo room it is played in; appended at the version
    its decision read, so two attempts at once (any process) cannot both take the last place
    or one account's attempt twice. A later one of the same account only replaces an attempt
    whose room nobody ever sat in (its process died first)."""

    TYPE: ClassVar[str] = "attempt_started"
    account: str
    name: str
    room: str


@dataclass(frozen=True, slots=True)
class ChallengeSettled(ChallengeEvent):
    """The window closed, or everyone it waited for played: the final standings (rows as the
    wire shows them, with their rooms), after which the seed and every game may be shown."""

    TYPE: ClassVar[str] = "challenge_settled"
    reason: str
    standings: tuple[dict[str, Any], ...]


SCHEMA: Schema[ChallengeEvent] = Schema(
    "challenge",
    CHALLENGE_EVENT_VERSION,
    (ChallengeCreated, AttemptStarted, ChallengeSettled),
    sequences=("invited", "invited_names", "standings"),
)
encode = SCHEMA.encode
decode = SCHEMA.decode


class ChallengeStatus(Enum):
    NEW = "new"  # nothing folded: there is no such challenge
    OPEN = "open"  # attempts may be made until ``closes_at``
    SETTLED = "settled"  # the standings are final, the deal revealed


_S = ChallengeStatus
TRANSITIONS: Mapping[tuple[ChallengeStatus, type[ChallengeEvent]], ChallengeStatus] = {
    (_S.NEW, ChallengeCreated): _S.OPEN,
    (_S.OPEN, AttemptStarted): _S.OPEN,
    (_S.OPEN, ChallengeSettled): _S.SETTLED,
}


def allows(status: ChallengeStatus, kind: type[ChallengeEvent]) -> bool:
    return (status, kind) in TRANSITIONS


def challenge_stream(code: str) -> str:
    """One stream per challenge, its code the Cluster hash tag."""
    return f"{{challenge:{code}}}:challenge"


def challenges_index(account: str) -> str:
    """An account's challenges (made, invited to, played): code -> created at."""
    return f"challenges.{account}"


OPEN_INDEX = "challenges-open"
"""Challenges not settled yet: code -> when their window closes (what the sweep settles)."""


def link(code: str) -> str:
    """The path of the page that plays a challenge (the web's ``/play?challenge=CODE``)."""
    return f"/play?challenge={code}"


@dataclass(frozen=True, slots=True)
class Entry:
    """An attempt as the challenge's stream records it: who, in which room, since when."""

    account: str
    name: str
    room: str
    at: int


@dataclass(frozen=True, slots=True)
class Challenge:
    """A challenge as folded from its stream up to ``version``."""

    code: str
    version: int = 0
    status: ChallengeStatus = ChallengeStatus.NEW
    created: ChallengeCreated | None = None
    entries: Mapping[str, Entry] = field(default_factory=dict)  # by account id
    settled: ChallengeSettled | None = None

    @property
    def meta(self) -> ChallengeCreated:
        assert self.created is not None, f"challenge {self.code} is not created"
        return self.created

    def expected(self) -> frozenset[str]:
        """Who it waits for before it may settle early: the creator and everyone invited (a
        challenge to anyone waits for its capacity)."""
        meta = self.meta
        return frozenset((meta.creator, *meta.invited))

    def admits(self, account: str) -> bool:
        """Whether ``account`` is one of those it is for (anyone, if nobody was invited)."""
        meta = self.meta
        return not meta.invited or account in self.expected()


def _created(ch: Challenge, e: ChallengeCreated) -> Challenge:
    return replace(ch, created=e)


def _attempt(ch: Challenge, e: AttemptStarted) -> Challenge:
    entries = {**ch.entries, e.account: Entry(e.account, e.name, e.room, e.at)}
    return replace(ch, entries=entries)


def _settled(ch: Challenge, e: ChallengeSettled) -> Challenge:
    return replace(ch, settled=e)


_FOLDS: Mapping[type[ChallengeEvent], Callable[[Any, Any], Challenge]] = {
    ChallengeCreated: _created,
    AttemptStarted: _attempt,
    ChallengeSettled: _settled,
}


def apply(ch: Challenge, event: ChallengeEvent) -> Challenge:
    """The challenge after one more event; CorruptEvent if its lifecycle refuses it."""
    after = TRANSITIONS.get((ch.status, type(event)))
    if after is None:
        raise CorruptEvent(f"challenge {ch.code}: {event.TYPE} when {ch.status.value}")
    folded = _FOLDS[type(event)](ch, event)
    return replace(folded, status=after, version=ch.version + 1)


def fold(code: str, events: Iterable[Mapping[str, Any]]) -> Challenge:
    """The challenge its stored events make (an empty stream: status NEW)."""
    ch = Challenge(code)
    for data in events:
        ch = apply(ch, decode(data))
    return ch


# ---- creating ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CreateRequest:
    """What a ``challenge_create`` asks for, checked."""

    variant: str
    invited: tuple[str, ...]  # names as sent, each checked to be an account by the caller
    capacity: int
    window_ms: int


def read_create(msg: Mapping[str, Any]) -> CreateRequest:
    """A ``challenge_create`` read: at most ``MAX_INVITED`` names (distinct), a capacity that
    holds the creator and them, a window of 1 to ``MAX_WINDOW_DAYS`` days."""
    variant = msg.get("variant", VARIANTS[0])
    names: list[str] = []
    for name in msg.get("to", ()):
        if fold_name(name) not in (fold_name(n) for n in names):
            names.append(name)
    if len(names) > MAX_INVITED:
        raise BadField(f"field 'to' names at most {MAX_INVITED} players", field="to")
    default = len(names) + 1 if names else DEFAULT_OPEN_CAPACITY
    capacity = msg.get("capacity", default)
    if not len(names) + 1 <= capacity <= MAX_CAPACITY:
        raise BadField(
            f"field 'capacity' must be from {len(names) + 1} (you and those invited) "
            f"to {MAX_CAPACITY}",
            field="capacity",
        )
    days = msg.get("window_days", DEFAULT_WINDOW_DAYS)
    if not 1 <= days <= MAX_WINDOW_DAYS:
        raise BadField(f"field 'window_days' must be 1 to {MAX_WINDOW_DAYS}", field="window_days")
    return CreateRequest(variant, tuple(names), capacity, days * DAY_MS)


def decide_create(
    request: CreateRequest,
    *,
    code: str,
    creator: str,
    creator_name: str,
    invited: Sequence[tuple[str, str]],
    seed: str,
    salt: str,
    now: int,
) -> ChallengeCreated:
    """The challenge, committed to its fresh secret seed; ``invited`` the accounts (id, name)
    the request's names are, the creator left out (one plays one's own challenge anyway)."""
    others = [(i, n) for i, n in invited if i != creator]
    if invited and not others:  # else it would be open to anyone, which nobody asked for
        raise BadField("field 'to' names only you: invite others, or nobody", field="to")
    return ChallengeCreated(
        at=now,
        code=code,
        variant=request.variant,
        seed=seed,
        salt=salt,
        commitment=commitment(seed, salt),
        creator=creator,
        creator_name=creator_name,
        invited=tuple(i for i, _ in others),
        invited_names=tuple(n for _, n in others),
        capacity=request.capacity,
        closes_at=now + request.window_ms,
    )


# ---- attempts ---------------------------------------------------------------------------------


def decide_attempt(
    ch: Challenge,
    *,
    account: str,
    name: str,
    room: str,
    now: int,
    replaces_unplayed: bool = False,
) -> AttemptStarted:
    """An account's attempt in ``room``, or why not: closed, not invited, played already (a
    replacement only when the caller found the earlier attempt's room never sat in), full."""
    meta = ch.meta
    if ch.status is not ChallengeStatus.OPEN or now >= meta.closes_at:
        raise ChallengeClosed(f"challenge {ch.code} has closed: see 'challenge show {ch.code}'")
    if not ch.admits(account):
        raise NotInvited(f"challenge {ch.code} is for the players {meta.creator_name} invited")
    if account in ch.entries and not replaces_unplayed:
        raise ChallengePlayed(f"you have played challenge {ch.code}: one attempt each")
    if account not in ch.entries and len(ch.entries) >= meta.capacity:
        raise ChallengeFull(f"challenge {ch.code} has had its {meta.capacity} players")
    return AttemptStarted(now, account, name, room)


def check_room_member(ch: Challenge, room: str, account: str | None) -> None:
    """Only the account whose attempt a challenge room is may sit in it."""
    entry = next((e for e in ch.entries.values() if e.room == room), None)
    if entry is None or entry.account != account:
        raise NotAllowed(f"room {room} is someone's challenge attempt")


# ---- settling, seeing, rating -----------------------------------------------------------------


def decide_settle(
    ch: Challenge, attempts: Sequence[Attempt], *, now: int
) -> ChallengeSettled | None:
    """Settle once no attempt is being played and either the window closed or everyone it
    waits for has played (an open challenge: its capacity). ``attempts`` are the entries'
    attempts as their rooms stand (one never sat in is left out)."""
    if ch.status is not ChallengeStatus.OPEN:
        return None
    if any(not a.outcome.done for a in attempts):
        return None  # a game on: the deal stays secret until it ends (its time limit bounds it)
    played = {a.account for a in attempts}
    meta = ch.meta
    if now >= meta.closes_at:
        reason = SETTLED_WINDOW_CLOSED
    elif (meta.invited and ch.expected() <= played) or (
        not meta.invited and len(played) >= meta.capacity
    ):
        reason = SETTLED_ALL_PLAYED
    else:
        return None
    rows = tuple(
        standing_row(a, place, revealed=True) for place, a in enumerate(ranked(attempts), 1)
    )
    return ChallengeSettled(now, reason, rows)


def finished_own(attempts: Sequence[Attempt], reader: str | None) -> bool:
    """Whether ``reader`` has played their attempt to its end."""
    return reader is not None and any(a.account == reader and a.outcome.done for a in attempts)


def may_see(ch: Challenge, attempts: Sequence[Attempt], reader: str | None) -> bool:
    """The standings and the games: once settled for everyone; before, only to an account
    that has finished its own attempt (no watching, replay or export of a game before)."""
    return ch.status is ChallengeStatus.SETTLED or finished_own(attempts, reader)


def decide_rating(ch: Challenge) -> RaceRated | None:
    """A settled challenge as one rated race among the accounts that played it, in the
    standings' order (two or more, as for a race); None before it is settled."""
    settled = ch.settled
    if settled is None or len(settled.standings) < 2:
        return None
    racers = tuple(
        {
            "account": row["account"],
            "name": row["name"],
            "place": row["place"],
            "won": row["status"] == Outcome.WON.value,
            "time_ms": row["elapsed_ms"] if row["status"] == Outcome.WON.value else None,
        }
        for row in settled.standings
    )
    return RaceRated(settled.at, ch.code, ch.meta.variant, racers)


def profile_row(ch: Challenge, account: str) -> dict[str, Any]:
    """A settled challenge in an account's profile: when, how many played, its place (None:
    it did not play)."""
    settled = ch.settled
    assert settled is not None
    row = next((r for r in settled.standings if r["account"] == account), None)
    return {
        "code": ch.code,
        "variant": ch.meta.variant,
        "creator": ch.meta.creator_name,
        "at": settled.at,
        "of": len(settled.standings),
        "place": row["place"] if row is not None else None,
        "status": row["status"] if row is not None else None,
    }


def view(
    ch: Challenge, attempts: Sequence[Attempt], reader: str | None, *, now: int
) -> dict[str, Any]:
    """The ``challenge`` message's map for ``reader``: the standings (with each game's room)
    only once the reader may see them; the seed only once settled."""
    meta = ch.meta
    shown = may_see(ch, attempts, reader)
    settled = ch.settled
    if settled is not None:
        rows = [dict(r) for r in settled.standings]
    else:
        rows = [standing_row(a, p, revealed=shown) for p, a in enumerate(ranked(attempts), 1)]
    mine = next((r for r in rows if r["account"] == reader), None)
    entry = ch.entries.get(reader) if reader is not None else None
    return {
        "code": ch.code,
        "variant": meta.variant,
        "creator": meta.creator_name,
        "invited": list(meta.invited_names),
        "capacity": meta.capacity,
        "players": len(ch.entries),
        "created_at": meta.at,
        "closes_at": meta.closes_at,
        "status": ch.status.value,
        "settled_reason": settled.reason if settled is not None else None,
        "commitment": meta.commitment,
        "seed": meta.seed if settled is not None else None,
        "salt": meta.salt if settled is not None else None,
        "visible": shown,
        "rows": rows if shown else [],
        "me": mine if shown else ({"status": "playing"} if entry is not None else None),
        "may_play": (
            ch.status is ChallengeStatus.OPEN
            and now < meta.closes_at
            and reader is not None
            and ch.admits(reader)
            and reader not in ch.entries
            and len(ch.entries) < meta.capacity
        ),
        "link": link(ch.code),
    }
