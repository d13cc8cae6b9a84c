"""The store's RESP packing is byte for byte redis-py's: if a redis-py release packs or encodes
otherwise, this fails before a server sends Redis anything else."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.asyncio.connection import Connection
from redis.exceptions import DataError

from server.store import resp
from server.store.resp import Packer

names = st.sampled_from(["EVALSHA", "XRANGE", "SCRIPT LOAD", b"WAIT", b"CLIENT SETNAME", "PING"])
args = st.one_of(
    st.binary(max_size=80),
    st.text(max_size=40),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=False),
)
commands = st.lists(st.tuples(names, st.lists(args, max_size=8)), min_size=1, max_size=6)


def redis_py(connection: Connection, batch: list[tuple[Any, ...]]) -> bytes:
    return b"".join(bytes(chunk) for chunk in connection.pack_commands(batch))


@given(commands)
def test_a_batch_packs_as_redis_py_packs_it(raw: list[tuple[Any, list[Any]]]) -> None:
    batch = [(name, *rest) for name, rest in raw]
    connection = Connection()
    packer = Packer(connection.encoder.encode)
    assert packer.pack(batch) == redis_py(connection, batch)
    assert packer.pack(batch) == redis_py(connection, batch)  # again, from what it kept


def test_a_large_value_packs_whole() -> None:
    connection = Connection()
    batch = [("EVALSHA", "ab" * 20, 2, "k", "c", 7, "o", 0, b"x" * 100_000)]
    assert Packer(connection.encoder.encode).pack(batch) == redis_py(connection, batch)


@pytest.mark.parametrize("bad", [True, None, object()])
def test_what_redis_py_refuses_is_refused(bad: object) -> None:
    packer = Packer(Connection().encoder.encode)
    with pytest.raises(DataError):
        packer.pack([("SET", "k", bad)])


def test_the_strings_kept_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resp, "STRINGS_KEPT", 8)
    connection = Connection()
    packer = Packer(connection.encoder.encode)
    for n in range(50):
        batch = [("GET", f"key{n}")]
        assert packer.pack(batch) == redis_py(connection, batch)
        assert len(packer._strings) <= 8
