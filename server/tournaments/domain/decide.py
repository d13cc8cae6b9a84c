"""A tournament's decisions, pure: each a function of the folded tournament, the request and
the time, returning the events to append at the version it read (or a ClientError).

Two processes deciding at once both read version V; only one append at V succeeds, the other
reads again and decides again (a pairing then sees the players already paired).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from typing import Any

from server.kernel.errors import NotInTournament, TooManyTournaments, TournamentOver
from server.tournaments.domain.events import (
    EntrantJoined,
    EntrantWithdrew,
    RacePaired,
    RaceScored,
    TournamentCreated,
    TournamentEvent,
    TournamentFinished,
)
from server.tournaments.domain.fold import Phase, Tournament, TournamentStatus
from server.tournaments.domain.pairing import Candidate, pair, round_due, wait_ms
from shared.protocol import VARIANTS, BadField

MINUTE_MS = 60_000
WITHDREW = "withdrew"
ABANDONED = "abandoned"


@dataclass(frozen=True, slots=True)
class CreationLimits:
    """What ``create_tournament`` accepts (server options, docs/protocol.md)."""

    min_length_ms: int = 5 * MINUTE_MS
    max_length_ms: int = 12 * 60 * MINUTE_MS
    min_time_limit_ms: int = 10_000
    max_time_limit_ms: int = 30 * MINUTE_MS
    default_time_limit_ms: int = 3 * MINUTE_MS
    max_ahead_ms: int = 7 * 24 * 60 * MINUTE_MS
    max_owned: int = 3  # upcoming or running tournaments one account created


def _bounded(msg: Mapping[str, Any], name: str, default: int, low: int, high: int) -> int:
    value = msg.get(name, default)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise BadField(f"field {name!r} must be within {low}..{high}", field=name)
    return value


def decide_create(
    msg: Mapping[str, Any],
    *,
    tournament_id: str,
    name: str,
    creator: str | None,
    creator_name: str | None,
    owned: int,
    limits: CreationLimits,
    now: int,
) -> TournamentCreated:
    """A new tournament from a ``create_tournament`` request (``name`` already cleaned);
    ``owned`` is how many upcoming or running ones the creator has."""
    if creator is not None and owned >= limits.max_owned:
        raise TooManyTournaments(
            f"you have {owned} tournaments upcoming or running: at most {limits.max_owned}"
        )
    variant = msg.get("variant", "swiss")
    if variant not in VARIANTS:
        raise BadField("field 'variant' is not a variant", field="variant")
    length = _bounded(msg, "length_ms", 0, limits.min_length_ms, limits.max_length_ms)
    high = min(limits.max_time_limit_ms, length)
    default_limit = min(limits.default_time_limit_ms, high)
    low = min(limits.min_time_limit_ms, length)  # a trial's tournament shorter than 10 s
    limit = _bounded(msg, "time_limit_ms", default_limit, low, high)
    starts_at = _bounded(msg, "starts_at", now, now - MINUTE_MS, now + limits.max_ahead_ms)
    return TournamentCreated(
        at=now,
        id=tournament_id,
        name=name,
        variant=variant,
        starts_at=max(starts_at, now),
        length_ms=length,
        time_limit_ms=limit,
        race_size=_bounded(msg, "race_size", 2, 2, 4),
        rated=bool(msg.get("rated", True)),
        berserk=bool(msg.get("berserk", True)),
        streaks=bool(msg.get("streaks", True)),
        creator=creator,
        creator_name=creator_name,
    )


def decide_join(
    tournament: Tournament, account: str, name: str, rating: int, now: int
) -> list[TournamentEvent]:
    """Join, or join again; nothing when already in. TournamentOver once time is up."""
    if tournament.phase(now) in (Phase.FINISHING, Phase.FINISHED):
        raise TournamentOver("this tournament is over")
    entrant = tournament.entrants.get(account)
    if entrant is not None and entrant.active:
        return []
    return [EntrantJoined(at=now, account=account, name=name, rating=rating)]


def decide_withdraw(
    tournament: Tournament, account: str, now: int, reason: str = WITHDREW
) -> list[TournamentEvent]:
    """Stop being paired (points kept). NotInTournament when not joined, or withdrawn."""
    entrant = tournament.entrants.get(account)
    if entrant is None or not entrant.active or tournament.status is TournamentStatus.FINISHED:
        raise NotInTournament("you are not playing in this tournament")
    return [EntrantWithdrew(at=now, account=account, reason=reason)]


def waiting(tournament: Tournament, present: Mapping[str, int], busy: Set[str]) -> list[Candidate]:
    """Who may be paired: joined and active, present (``present``: account → since when it
    has been, on a live connection following the tournament), not in a race of it, and not
    ``busy`` (seated in another unfinished room)."""
    ranks = {e.account: rank for rank, e in enumerate(tournament.ranked(), 1)}
    out = []
    for account, since in present.items():
        entrant = tournament.entrants.get(account)
        if entrant is None or not entrant.active or entrant.racing or account in busy:
            continue
        out.append(
            Candidate(
                account, ranks[account], max(since, entrant.free_since), entrant.last_opponents
            )
        )
    return out


def decide_pairing(
    tournament: Tournament, present: Mapping[str, int], busy: Set[str], now: int
) -> list[tuple[str, ...]]:
    """The races to make now: none outside the running phase, in the last stretch, or before
    the round is due (docs/tournaments.md, "Pairing")."""
    if tournament.phase(now) is not Phase.RUNNING or now >= tournament.pairing_until:
        return []
    size = tournament.settings.race_size
    wait = wait_ms(tournament.settings.time_limit_ms)
    candidates = waiting(tournament, present, busy)
    if not round_due(candidates, size, now, wait):
        return []
    return pair(candidates, size, now, wait)


def decide_paired(
    tournament: Tournament, room: str, players: Sequence[str], now: int
) -> list[TournamentEvent]:
    """The record of a race made for ``players``; nothing if any of them is no longer free
    (the fold moved on since the pairing was decided)."""
    for account in players:
        entrant = tournament.entrants.get(account)
        if entrant is None or not entrant.active or entrant.racing is not None:
            return []
    if tournament.phase(now) is not Phase.RUNNING:
        return []
    return [RacePaired(at=now, room=room, players=tuple(players))]


def decide_score(
    tournament: Tournament, room: str, results: Sequence[Mapping[str, Any]], now: int
) -> list[TournamentEvent]:
    """Score a race once: nothing for a room not in play (scored already, or never paired).
    ``results`` in finishing order, each ``account``, ``place``, ``moves``, ``berserk``,
    ``abandoned``, ``timed_out`` and ``rating`` (after the race, when it rated them); a racer
    who abandoned is withdrawn as well."""
    race = tournament.races.get(room)
    if race is None:
        return []
    kept = tuple(
        {
            "account": r["account"],
            "place": int(r["place"]),
            "moves": int(r["moves"]),
            "berserk": bool(r.get("berserk")),
            "abandoned": bool(r.get("abandoned")),
            "timed_out": bool(r.get("timed_out")),
            **({"rating": int(r["rating"])} if isinstance(r.get("rating"), int) else {}),
        }
        for r in results
        if r["account"] in race.players
    )
    events: list[TournamentEvent] = [RaceScored(at=now, room=room, results=kept)]
    for r in kept:
        entrant = tournament.entrants[r["account"]]
        if r["abandoned"] and entrant.active:
            events.append(EntrantWithdrew(at=now, account=r["account"], reason=ABANDONED))
    return events


def decide_finish(tournament: Tournament, now: int) -> list[TournamentEvent]:
    """The end: once time is up and every race in play is scored."""
    if tournament.phase(now) is Phase.FINISHING and not tournament.races:
        return [TournamentFinished(at=now)]
    return []
