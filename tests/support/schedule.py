"""The order the suite's tests are handed to pytest-xdist's workers in, so that none is left
running a long test alone at the end while the others wait.

``--dist worksteal`` first gives each of N workers one contiguous share of the collection (the
first ``len // N`` items, then a share of the rest, and so on), and an idle worker later steals
from the end of a busy one's queue. So the long tests (marked ``long``) go to the head of the
shares, spread by weight, and a module that holds any stays in one piece on one worker: its
module-scoped fixtures (a benchmark run, a server) are set up once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

Item = TypeVar("Item")


def shares(count: int, workers: int) -> list[int]:
    """The sizes of the contiguous shares pytest-xdist's worksteal scheduler deals first."""
    sizes = []
    for done in range(workers):
        size = count // (workers - done)
        sizes.append(size)
        count -= size
    return sizes


def long_first(
    items: Sequence[Item],
    workers: int,
    *,
    is_long: Callable[[Item], bool],
    unit_of: Callable[[Item], str],
) -> list[Item]:
    """``items`` reordered so that every share starts with its long units (the greatest weight
    first, each to the lightest share), the rest after them in their order. ``items`` as they
    came when the units do not fit the shares, or with one worker."""
    if workers < 2:
        return list(items)
    units: dict[str, list[Item]] = {}
    weight: dict[str, int] = {}
    for item in items:
        if is_long(item):
            weight[unit_of(item)] = weight.get(unit_of(item), 0) + 1
    for item in items:
        if unit_of(item) in weight:
            units.setdefault(unit_of(item), []).append(item)
    sizes = shares(len(items), workers)
    heads: list[list[Item]] = [[] for _ in sizes]
    loads = [0] * workers
    for unit in sorted(weight, key=lambda u: (-weight[u], u)):
        fits = [i for i in range(workers) if len(heads[i]) + len(units[unit]) <= sizes[i]]
        if not fits:
            return list(items)
        share = min(fits, key=lambda i: (loads[i], len(heads[i]), i))
        heads[share].extend(units[unit])
        loads[share] += weight[unit]
    rest = iter(item for item in items if unit_of(item) not in weight)
    ordered: list[Item] = []
    for head, size in zip(heads, sizes, strict=True):
        ordered.extend(head)
        ordered.extend(next(rest) for _ in range(size - len(head)))
    return ordered
