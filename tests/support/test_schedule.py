"""The suite's order for its workers: the same tests, the long ones at the head of the shares
pytest-xdist deals, a module holding any of them kept whole."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from tests.support.schedule import long_first, shares

# An item: (module, its number in the collection, long or not).
Item = tuple[str, int, bool]
collections = st.lists(
    st.tuples(st.sampled_from("abcdefgh"), st.booleans()), min_size=0, max_size=120
).map(lambda pairs: [(module, n, slow) for n, (module, slow) in enumerate(sorted(pairs))])


def reorder(items: list[Item], workers: int) -> list[Item]:
    return long_first(items, workers, is_long=lambda i: i[2], unit_of=lambda i: i[0])


def dealt(items: list[Item], workers: int) -> list[list[Item]]:
    out, start = [], 0
    for size in shares(len(items), workers):
        out.append(items[start : start + size])
        start += size
    return out


def test_shares_are_dealt_as_worksteal_deals_them() -> None:
    assert shares(10, 3) == [3, 3, 4]
    assert shares(2, 4) == [0, 0, 1, 1]
    assert sum(shares(1963, 6)) == 1963


@given(collections, st.integers(1, 8))
def test_every_test_is_kept_once(items: list[Item], workers: int) -> None:
    assert sorted(reorder(items, workers)) == sorted(items)


@given(collections, st.integers(2, 8))
def test_a_share_starts_with_its_long_modules_each_whole(items: list[Item], workers: int) -> None:
    ordered = reorder(items, workers)
    if ordered == items:
        return  # they did not fit the shares: the collection's own order
    long_modules = {module for module, _, slow in items if slow}
    for share in dealt(ordered, workers):
        kinds = [module in long_modules for module, _, _ in share]
        assert kinds == sorted(kinds, reverse=True)  # the long modules first
    for module in long_modules:
        holders = [s for s in dealt(ordered, workers) if any(i[0] == module for i in s)]
        assert len(holders) == 1


def test_long_modules_spread_over_the_shares() -> None:
    items = [(m, n, n % 2 == 0) for n, m in enumerate(["a"] * 4 + ["b"] * 4 + ["c"] * 2)]
    items += [("z", 100 + n, False) for n in range(30)]
    first = [share[0][0] for share in dealt(reorder(items, 3), 3)]
    assert first == ["a", "b", "c"]


def test_one_worker_keeps_the_order() -> None:
    items = [("a", 0, True), ("b", 1, False)]
    assert reorder(items, 1) == items
