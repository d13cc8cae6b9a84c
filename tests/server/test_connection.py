"""The connection's pure parts: the rate limit's token bucket."""

from __future__ import annotations

from server.net.connection import TokenBucket


def test_token_bucket_allows_a_burst_then_the_rate() -> None:
    now = [0.0]
    bucket = TokenBucket(rate=2, burst=3, now=lambda: now[0])
    assert [bucket.take() for _ in range(4)] == [True, True, True, False]
    now[0] += 0.5
    assert [bucket.take(), bucket.take()] == [True, False]
