"""Freed memory given back to the system (server/runtime/heap.py)."""

from __future__ import annotations

import platform

from server.runtime.heap import give_back


def test_free_pages_go_back_where_the_c_library_can_give_them() -> None:
    garbage = [bytes(4096) for _ in range(2048)]  # 8 MiB in the heap's middle, then freed
    del garbage
    assert give_back() is (platform.libc_ver()[0] == "glibc")
