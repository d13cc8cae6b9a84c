"""bench.soak's reading of its samples: growth per 1,000 races after the warm-up, a least-squares
slope, so one noisy sample does not make or hide a leak."""

from __future__ import annotations

import pytest

from bench.soak import Sample, growth, slope, slope_beside


def sample(at_s: float, races: int, rss_mib: float) -> Sample:
    return Sample(at_s, races, rss_mib, 40, 60.0, 300_000.0, 10.0, 5.0, 100, 2.0)


def test_the_slope_is_the_least_squares_one() -> None:
    assert slope([0, 1, 2, 3], [1, 3, 5, 7]) == pytest.approx(2.0)
    assert slope([0, 1, 2, 3], [0, 2, 0, 2]) == pytest.approx(0.4)
    assert slope([5, 5], [1, 2]) is None
    assert slope([1], [1]) is None


def test_growth_leaves_out_the_warm_up_and_reads_per_thousand_races() -> None:
    warm = [sample(t, t * 10, 50.0 + t) for t in range(0, 60, 5)]  # climbing while warming up
    flat = [sample(t, t * 10, 110.0 + (t % 10) * 0.01) for t in range(60, 600, 5)]
    grown = growth([*warm, *flat], warmup_s=60)
    assert grown["samples"] == len(flat)
    assert grown["races"] == flat[-1].races - flat[0].races
    assert abs(grown["rss_mib_per_1000_races"]) < 0.1
    leaking = [sample(t, t * 10, 100.0 + t * 10 * 0.002) for t in range(60, 600, 5)]  # 2 KiB a race
    assert growth(leaking, warmup_s=60)["rss_mib_per_1000_races"] == pytest.approx(2.0)


def test_growth_says_nothing_without_two_samples_after_the_warm_up() -> None:
    grown = growth([sample(0, 0, 50.0), sample(70, 500, 60.0)], warmup_s=60)
    assert grown["samples"] == 1
    assert grown["rss_mib_per_1000_races"] is None


def test_the_slope_beside_the_loaded_rooms_leaves_out_what_they_explain() -> None:
    races = [float(r) for r in range(0, 1000, 50)]
    rooms = [100.0 + (i % 4) * 50 for i in range(len(races))]  # the rate wanders
    rss = [60.0 + 0.04 * n + 0.001 * r for r, n in zip(races, rooms, strict=True)]
    assert slope_beside(races, rooms, rss) == pytest.approx(0.001)
    assert slope_beside(races, races, rss) is None  # the two cannot be told apart


def test_the_second_half_tells_a_climb_that_levels_off_from_a_leak() -> None:
    climb = [sample(t, t * 10, 60.0 + min(t, 300) * 0.01) for t in range(60, 600, 5)]
    grown = growth(climb, warmup_s=60)
    assert grown["rss_mib_per_1000_races"] > 0.3  # the whole window still reads the climb
    assert abs(grown["rss_mib_per_1000_races_second_half"]) < 0.01
    leaking = [sample(t, t * 10, 100.0 + t * 10 * 0.002) for t in range(60, 600, 5)]
    assert growth(leaking, warmup_s=60)["rss_mib_per_1000_races_second_half"] == pytest.approx(2.0)
