"""Challenges' rules as tables: the lifecycle, who may attempt when, when a challenge settles,
who sees what, and the rated race a settled one makes."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.challenges.domain import challenge as c
from server.daily.domain.attempts import Attempt, Outcome
from server.kernel.errors import (
    ChallengeClosed,
    ChallengeFull,
    ChallengePlayed,
    NotInvited,
)
from shared.errors import ClientError, CorruptEvent
from shared.protocol import BadField, commitment_ok

T0 = 1_700_000_000_000
HOUR = 3_600_000
CODE = "abcdefghjk"


def created(*, invited: tuple[str, ...] = (), capacity: int = 4, days: int = 7) -> Any:
    request = c.CreateRequest("swiss", tuple(invited), capacity, days * c.DAY_MS)
    return c.decide_create(
        request,
        code=CODE,
        creator="ann",
        creator_name="Ann",
        invited=[(i, i.title()) for i in invited],
        seed="s33d",
        salt="5a1t",
        now=T0,
    )


def challenge(*events: c.ChallengeEvent, **opts: Any) -> c.Challenge:
    ch = c.apply(c.Challenge(CODE), created(**opts))
    for event in events:
        ch = c.apply(ch, event)
    return ch


def started(account: str, at: int = T0 + HOUR) -> c.AttemptStarted:
    return c.AttemptStarted(at, account, account.title(), f"room-{account}")


def attempt(account: str, outcome: Outcome, elapsed: int = 60_000, cards: int = 10) -> Attempt:
    return Attempt(account, account.title(), outcome, elapsed, cards, elapsed, f"room-{account}")


# ---- the lifecycle -------------------------------------------------------------------------

LIFECYCLE = [
    # (status before, event, status after or None: refused)
    (c.ChallengeStatus.NEW, created(), c.ChallengeStatus.OPEN),
    (c.ChallengeStatus.NEW, started("bob"), None),
    (c.ChallengeStatus.OPEN, started("bob"), c.ChallengeStatus.OPEN),
    (c.ChallengeStatus.OPEN, created(), None),
    (
        c.ChallengeStatus.OPEN,
        c.ChallengeSettled(T0, "window_closed", ()),
        c.ChallengeStatus.SETTLED,
    ),
    (c.ChallengeStatus.SETTLED, started("bob"), None),
    (c.ChallengeStatus.SETTLED, c.ChallengeSettled(T0, "window_closed", ()), None),
]


@pytest.mark.parametrize(("before", "event", "after"), LIFECYCLE)
def test_the_lifecycle_table(
    before: c.ChallengeStatus, event: c.ChallengeEvent, after: c.ChallengeStatus | None
) -> None:
    ch = c.Challenge(CODE)
    if before is not c.ChallengeStatus.NEW:
        ch = challenge()
    if before is c.ChallengeStatus.SETTLED:
        ch = c.apply(ch, c.ChallengeSettled(T0, "window_closed", ()))
    assert ch.status is before
    if after is None:
        with pytest.raises(CorruptEvent):
            c.apply(ch, event)
    else:
        assert c.apply(ch, event).status is after
        assert c.apply(ch, event).version == ch.version + 1


def test_the_fold_reads_back_what_was_encoded() -> None:
    events = [created(invited=("bob",)), started("ann"), started("bob")]
    ch = c.fold(CODE, [c.encode(e) for e in events])
    assert ch.version == 3
    assert set(ch.entries) == {"ann", "bob"}
    assert ch.meta.invited_names == ("Bob",)
    assert commitment_ok("s33d", "5a1t", ch.meta.commitment)


@given(st.lists(st.sampled_from(["ann", "bob", "cy"]), max_size=6))
def test_a_later_attempt_of_an_account_replaces_its_entry(accounts: list[str]) -> None:
    ch = challenge(*(started(a, T0 + i) for i, a in enumerate(accounts)))
    assert set(ch.entries) == set(accounts)
    for account in set(accounts):
        last = max(i for i, a in enumerate(accounts) if a == account)
        assert ch.entries[account].at == T0 + last


# ---- creating --------------------------------------------------------------------------------

CREATE = [
    ({}, ("swiss", (), c.DEFAULT_OPEN_CAPACITY, 7 * c.DAY_MS)),
    ({"to": ["bob"]}, ("swiss", ("bob",), 2, 7 * c.DAY_MS)),
    (
        {"to": ["bob", "BOB", "cy"], "variant": "quadrennial"},
        ("quadrennial", ("bob", "cy"), 3, 7 * c.DAY_MS),
    ),
    ({"to": ["bob"], "capacity": 5, "window_days": 1}, ("swiss", ("bob",), 5, c.DAY_MS)),
]


@pytest.mark.parametrize(("msg", "read"), CREATE)
def test_what_a_create_asks_for(msg: dict[str, Any], read: tuple[Any, ...]) -> None:
    request = c.read_create(msg)
    assert (request.variant, request.invited, request.capacity, request.window_ms) == read


BAD_CREATE = [
    ({"to": ["bob", "cy"], "capacity": 2}, "capacity"),
    ({"capacity": c.MAX_CAPACITY + 1}, "capacity"),
    ({"window_days": 0}, "window_days"),
    ({"window_days": c.MAX_WINDOW_DAYS + 1}, "window_days"),
    ({"to": [f"p{i}" for i in range(c.MAX_INVITED + 1)]}, "to"),
]


@pytest.mark.parametrize(("msg", "field"), BAD_CREATE)
def test_a_create_out_of_bounds_is_refused_by_field(msg: dict[str, Any], field: str) -> None:
    with pytest.raises(BadField) as refused:
        c.read_create(msg)
    assert refused.value.field == field


def test_the_creator_invited_is_not_counted_twice() -> None:
    request = c.CreateRequest("swiss", ("ann", "bob"), 3, c.DAY_MS)
    event = c.decide_create(
        request,
        code=CODE,
        creator="ann",
        creator_name="Ann",
        invited=[("ann", "Ann"), ("bob", "Bob")],
        seed="s",
        salt="t",
        now=T0,
    )
    assert event.invited == ("bob",)
    assert event.closes_at == T0 + c.DAY_MS
    alone = c.CreateRequest("swiss", ("ANN",), 2, c.DAY_MS)
    with pytest.raises(BadField):  # not a challenge open to anyone by surprise
        c.decide_create(
            alone,
            code=CODE,
            creator="ann",
            creator_name="Ann",
            invited=[("ann", "Ann")],
            seed="s",
            salt="t",
            now=T0,
        )


# ---- attempts --------------------------------------------------------------------------------

ATTEMPTS: list[tuple[str, dict[str, Any], tuple[c.ChallengeEvent, ...], str, int, Any]] = [
    ("the creator, at once", {}, (), "ann", T0, None),
    ("anyone with the code", {}, (), "zed", T0 + 6 * 24 * HOUR, None),
    ("a minute before the close", {"days": 1}, (), "bob", T0 + 24 * HOUR - 60_000, None),
    ("at the close", {"days": 1}, (), "bob", T0 + 24 * HOUR, ChallengeClosed),
    ("a week later", {}, (), "bob", T0 + 8 * 24 * HOUR, ChallengeClosed),
    ("invited", {"invited": ("bob",)}, (), "bob", T0, None),
    ("not invited", {"invited": ("bob",)}, (), "cy", T0, NotInvited),
    ("a second attempt", {}, (started("bob"),), "bob", T0 + 2 * HOUR, ChallengePlayed),
    ("the last place", {"capacity": 2}, (started("ann"),), "bob", T0 + 2 * HOUR, None),
    ("full", {"capacity": 2}, (started("ann"), started("bob")), "cy", T0 + 2 * HOUR, ChallengeFull),
    (
        "settled",
        {},
        (c.ChallengeSettled(T0 + HOUR, "all_played", ()),),
        "bob",
        T0 + 2 * HOUR,
        ChallengeClosed,
    ),
]


@pytest.mark.parametrize(
    ("case", "opts", "events", "account", "now", "refusal"),
    ATTEMPTS,
    ids=[case[0] for case in ATTEMPTS],
)
def test_who_may_attempt_when(
    case: str,
    opts: dict[str, Any],
    events: tuple[c.ChallengeEvent, ...],
    account: str,
    now: int,
    refusal: type[ClientError] | None,
) -> None:
    ch = challenge(*events, **opts)
    if refusal is None:
        event = c.decide_attempt(ch, account=account, name="X", room="r1", now=now)
        assert (event.account, event.room, event.at) == (account, "r1", now)
    else:
        with pytest.raises(refusal):
            c.decide_attempt(ch, account=account, name="X", room="r1", now=now)


def test_an_unplayed_attempt_may_be_replaced_but_not_past_the_capacity() -> None:
    ch = challenge(started("ann"), started("bob"), capacity=2)
    again = c.decide_attempt(
        ch, account="bob", name="Bob", room="r2", now=T0 + 2 * HOUR, replaces_unplayed=True
    )
    assert c.apply(ch, again).entries["bob"].room == "r2"


# ---- settling and seeing -------------------------------------------------------------------

WON, OVER, PLAYING = Outcome.WON, Outcome.OVER, Outcome.PLAYING
SETTLE: list[tuple[str, dict[str, Any], list[Attempt], int, str | None]] = [
    ("one of two played", {"invited": ("bob",)}, [attempt("ann", WON)], T0 + HOUR, None),
    (
        "both invited played",
        {"invited": ("bob",)},
        [attempt("ann", WON), attempt("bob", OVER)],
        T0 + HOUR,
        c.SETTLED_ALL_PLAYED,
    ),
    (
        "one still playing",
        {"invited": ("bob",)},
        [attempt("ann", WON), attempt("bob", PLAYING)],
        T0 + HOUR,
        None,
    ),
    (
        "still playing at the close",
        {"invited": ("bob",)},
        [attempt("ann", WON), attempt("bob", PLAYING)],
        T0 + 8 * 24 * HOUR,
        None,
    ),
    (
        "the window closed",
        {"invited": ("bob",)},
        [attempt("ann", WON)],
        T0 + 7 * 24 * HOUR,
        c.SETTLED_WINDOW_CLOSED,
    ),
    ("nobody played, closed", {}, [], T0 + 7 * 24 * HOUR, c.SETTLED_WINDOW_CLOSED),
    (
        "open to anyone, not full",
        {"capacity": 3},
        [attempt("ann", WON), attempt("bob", OVER)],
        T0,
        None,
    ),
    (
        "open to anyone, full",
        {"capacity": 2},
        [attempt("ann", WON), attempt("bob", OVER)],
        T0,
        c.SETTLED_ALL_PLAYED,
    ),
]


@pytest.mark.parametrize(
    ("case", "opts", "attempts", "now", "reason"), SETTLE, ids=[case[0] for case in SETTLE]
)
def test_when_a_challenge_settles(
    case: str, opts: dict[str, Any], attempts: list[Attempt], now: int, reason: str | None
) -> None:
    ch = challenge(**opts)
    settled = c.decide_settle(ch, attempts, now=now)
    assert (settled.reason if settled is not None else None) == reason
    if settled is not None:
        assert [r["account"] for r in settled.standings] == [a.account for a in attempts]
        assert all("room" in r for r in settled.standings)


def test_a_settled_challenge_settles_no_more() -> None:
    ch = challenge(c.ChallengeSettled(T0, "window_closed", ()))
    assert c.decide_settle(ch, [], now=T0 + 30 * 24 * HOUR) is None


SEEING = [
    # (reader, attempts, settled, may see)
    (None, [attempt("ann", WON)], False, False),
    ("bob", [attempt("ann", WON)], False, False),
    ("bob", [attempt("ann", WON), attempt("bob", PLAYING)], False, False),
    ("bob", [attempt("ann", WON), attempt("bob", OVER)], False, True),
    ("cy", [attempt("ann", WON), attempt("bob", OVER)], False, False),
    (None, [attempt("ann", WON)], True, True),
]


@pytest.mark.parametrize(("reader", "attempts", "settled", "sees"), SEEING)
def test_who_sees_the_standings_and_the_games(
    reader: str | None, attempts: list[Attempt], settled: bool, sees: bool
) -> None:
    events = (c.ChallengeSettled(T0, "window_closed", ()),) if settled else ()
    ch = challenge(*events)
    assert c.may_see(ch, attempts, reader) is sees
    view = c.view(ch, attempts, reader, now=T0 + HOUR)
    assert view["visible"] is sees
    if not sees:
        assert view["rows"] == []
        assert view["seed"] is None


def test_the_view_shows_the_seed_and_rooms_once_settled() -> None:
    attempts = [attempt("ann", WON), attempt("bob", OVER)]
    ch = challenge(started("ann"), started("bob"), invited=("bob",))
    settled = c.decide_settle(ch, attempts, now=T0 + 2 * HOUR)
    assert settled is not None
    ch = c.apply(ch, settled)
    view = c.view(ch, attempts, "cy", now=T0 + 2 * HOUR)
    assert (view["seed"], view["salt"], view["status"]) == ("s33d", "5a1t", "settled")
    assert [r["room"] for r in view["rows"]] == ["room-ann", "room-bob"]
    assert view["may_play"] is False
    assert view["link"] == f"/play?challenge={CODE}"


def test_a_settled_challenge_is_one_rated_race_in_the_standings_order() -> None:
    attempts = [attempt("bob", OVER, cards=30), attempt("ann", WON, elapsed=90_000)]
    ch = challenge(invited=("bob",))
    settled = c.decide_settle(ch, attempts, now=T0 + HOUR)
    assert settled is not None
    rated = c.decide_rating(c.apply(ch, settled))
    assert rated is not None
    assert rated.room == CODE
    assert [(r["account"], r["place"], r["won"], r["time_ms"]) for r in rated.racers] == [
        ("ann", 1, True, 90_000),
        ("bob", 2, False, None),
    ]
    alone = c.decide_settle(challenge(), [attempt("ann", WON)], now=T0 + 7 * 24 * HOUR)
    assert alone is not None
    assert c.decide_rating(c.apply(challenge(), alone)) is None  # nobody to be rated against
    assert c.decide_rating(challenge()) is None  # not before it is settled
