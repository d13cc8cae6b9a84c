"""The fan-out frames each message once: the bytes must be what websockets would have sent."""

from __future__ import annotations

import pytest
from websockets.protocol import State
from websockets.server import ServerProtocol

from server.connection import _plain, framed


@pytest.mark.parametrize("size", [0, 1, 125, 126, 65535, 65536, 200_000])
def test_framed_is_what_a_server_protocol_sends(size: int) -> None:
    payload = bytes(range(256)) * (size // 256) + bytes(size % 256)
    protocol = ServerProtocol()
    protocol.state = State.OPEN
    assert _plain(protocol)
    protocol.send_binary(payload)
    assert protocol.data_to_send() == [framed(payload)]


def test_a_fragmented_send_under_way_is_not_plain() -> None:
    protocol = ServerProtocol()
    protocol.state = State.OPEN
    protocol.send_binary(b"first part", fin=False)
    assert not _plain(protocol)
