"""A batch of Redis commands packed into one RESP request, as redis-py would pack it.

redis-py's ``pack_command`` re-joins a growing buffer for every argument and passes each one
through its encoder's chain of type checks; packing the group commit's appends was the largest
piece of Python of its own in a paced server's write to Redis (about 20 encoder
calls and 2 re-joins a move). Here an argument costs a type look-up, and the strings that come
back with every append (the script's SHA, a stream's key, its channel, its origin) are encoded
once. tests/server/store/test_resp.py checks the bytes against redis-py's own packing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

STRINGS_KEPT = 4096
"""Most encoded strings kept (then forgotten all at once): a server's hot keys and heads."""


class Packer:
    """Packs commands; ``encode`` (the connection's encoder, ``Encoder.encode``) is asked for
    every string it has not seen and for any argument that is not bytes, str or int, so the
    encoding, its errors and what it refuses (a bool, a None) stay redis-py's."""

    def __init__(self, encode: Callable[[Any], bytes]) -> None:
        self._encode = encode
        self._strings: dict[str, bytes] = {}

    def pack(self, commands: Iterable[Sequence[Any]]) -> bytes:
        """The commands, one after another, as one request (RESP arrays of bulk strings)."""
        parts: list[bytes] = []
        append = parts.append
        strings = self._strings
        for command in commands:
            args = _split_name(command)
            append(b"*%d\r\n" % len(args))
            for arg in args:
                kind = type(arg)
                if kind is bytes:
                    data = arg
                elif kind is str:
                    found = strings.get(arg)
                    if found is None:
                        found = self._remember(arg)
                    data = found
                elif kind is int:
                    data = b"%d" % arg
                else:
                    data = bytes(self._encode(arg))
                append(b"$%d\r\n" % len(data))
                append(data)
                append(b"\r\n")
        return b"".join(parts)

    def _remember(self, text: str) -> bytes:
        if len(self._strings) >= STRINGS_KEPT:
            self._strings.clear()
        data = self._strings[text] = self._encode(text)
        return data


def _split_name(command: Sequence[Any]) -> Sequence[Any]:
    """A command name with its subcommand in one argument ("SCRIPT LOAD") goes as two, as
    redis-py splits it."""
    name = command[0]
    if isinstance(name, str) and " " in name:
        return (*name.encode().split(), *command[1:])
    if isinstance(name, bytes) and b" " in name:
        return (*name.split(), *command[1:])
    return command
