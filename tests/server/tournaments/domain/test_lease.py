"""The lease rule: claim a free or expired lease, renew one's own at half-time, never take a
live one."""

from __future__ import annotations

import pytest

from server.tournaments.domain.lease import decide_claim, holds, ran_out

LEASE = 5_000


@pytest.mark.parametrize(
    ("last", "me", "now", "claims"),
    [
        (None, "a", 100, True),  # nobody ever held it
        ({"holder": "b", "until": 5_000}, "a", 4_999, False),  # b holds it
        ({"holder": "b", "until": 5_000}, "a", 5_000, True),  # b's ran out: taken over
        ({"holder": "a", "until": 5_000}, "a", 2_000, False),  # mine, more than half left
        ({"holder": "a", "until": 5_000}, "a", 2_501, True),  # mine, renewed
    ],
)
def test_claims(last: dict[str, object] | None, me: str, now: int, claims: bool) -> None:
    claim = decide_claim(last, me, now, LEASE)
    assert (claim is not None) is claims
    if claim is not None:
        assert claim == {"holder": me, "until": now + LEASE}
        assert holds(claim, me, now)
        assert not holds(claim, "other", now)


def test_an_expired_lease_is_held_by_nobody() -> None:
    assert not holds({"holder": "a", "until": 10}, "a", 10)
    assert not holds(None, "a", 0)
    assert ran_out({"holder": "a", "until": 10}, 10)
    assert ran_out(None, 0)
    assert not ran_out({"holder": "a", "until": 10}, 9)
