"""Freed memory given back to the system.

glibc keeps what a process frees in its heap for later allocations and returns a page only
when the heap's very top is free; a server that folds a race, compacts it and lets it go frees
tens of KiB a race in the middle of its heap, and its RSS kept growing with races long after
the objects were gone (bench.soak). ``malloc_trim`` hands those free pages back. Elsewhere
(another C library) there is nothing to call, and nothing is done.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    try:
        trim: Callable[[int], int] = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    return trim


_TRIM = _malloc_trim()


def give_back() -> bool:
    """Return the heap's free pages to the system; False where the C library cannot."""
    if _TRIM is None:
        return False
    _TRIM(0)
    return True
