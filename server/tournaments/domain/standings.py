"""What a tournament's followers are shown, pure: its state, and standings a page at a time
with the follower's own row (docs/protocol.md, "Tournaments"), never the whole table."""

from __future__ import annotations

from typing import Any

from server.tournaments.domain.fold import Entrant, Phase, Tournament

PAGE_SIZE = 10


def row(tournament: Tournament, entrant: Entrant, rank: int) -> dict[str, Any]:
    """One entrant's row, with its whole sheet."""
    return {
        "rank": rank,
        "account": entrant.account,
        "name": tournament.name_of(entrant),
        "rating": entrant.rating,
        "rating_now": entrant.rating_now,
        "score": entrant.score,
        "fire": entrant.fire(streaks=tournament.settings.streaks),
        "performance": entrant.performance,
        "races": len(entrant.sheet),
        "wins": entrant.wins,
        "active": entrant.active,
        "racing": entrant.racing,
        "sheet": [result.wire() for result in entrant.sheet],
    }


def pages(tournament: Tournament) -> int:
    return max(1, -(-len(tournament.standings()) // PAGE_SIZE))


def page_of(tournament: Tournament, account: str | None) -> int:
    """The page that holds ``account``'s row (1 when it has none)."""
    if account is None or account not in tournament.entrants or account in tournament.hidden:
        return 1
    rank = tournament.rank_of(account) or 1
    return (rank - 1) // PAGE_SIZE + 1


def standings_message(tournament: Tournament, page: int, account: str | None) -> dict[str, Any]:
    """The ``tournament_standings`` of ``page`` (clamped to the last), with ``account``'s row."""
    return {**page_message(tournament, page), "me": me_row(tournament, account)}


def me_row(tournament: Tournament, account: str | None) -> dict[str, Any] | None:
    """``account``'s own row, wherever it ranks; None if it never joined."""
    entrant = tournament.entrants.get(account) if account else None
    if entrant is None or entrant.account in tournament.hidden:
        return None
    return row(tournament, entrant, tournament.rank_of(entrant.account) or 1)


def page_message(tournament: Tournament, page: int) -> dict[str, Any]:
    """A page of ``tournament_standings``, without ``me`` (the same for every follower of it)."""
    table = tournament.standings()
    page = min(max(page, 1), pages(tournament))
    first = (page - 1) * PAGE_SIZE
    rows = [
        row(tournament, e, first + i + 1) for i, e in enumerate(table[first : first + PAGE_SIZE])
    ]
    return {
        "type": "tournament_standings",
        "tournament": tournament.id,
        "version": tournament.version,
        "page": page,
        "pages": pages(tournament),
        "players": len(tournament.entrants),
        "rows": rows,
        "final": tournament.phase(0) is Phase.FINISHED,
    }


def state(tournament: Tournament, now: int) -> dict[str, Any]:
    """The ``tournament_state`` map (the same for every follower)."""
    s = tournament.settings
    podium = [row(tournament, e, rank) for rank, e in enumerate(tournament.podium(), 1)]
    phase = tournament.phase(now)
    return {
        "id": tournament.id,
        "name": s.name,
        "variant": s.variant,
        "creator": s.creator_name,
        "status": phase.value,
        "starts_at": s.starts_at,
        "ends_at": tournament.ends_at,
        "length_ms": s.length_ms,
        "pairing_until": tournament.pairing_until,
        "time_limit_ms": s.time_limit_ms,
        "race_size": s.race_size,
        "rated": s.rated,
        "berserk": s.berserk,
        "streaks": s.streaks,
        "players": len(tournament.entrants),
        "racing": tournament.racing_count(),
        "races": tournament.race_count,
        "podium": podium if phase is Phase.FINISHED else None,
    }
