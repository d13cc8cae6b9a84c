"""The test Redis's own start: a port taken between picking and binding is picked again."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from tests.support.redis_server import PortTaken, RedisServer

pytestmark = pytest.mark.e2e  # every test here starts a process


def test_a_picked_port_taken_meanwhile_is_picked_again(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        server = RedisServer(tmp_path / "picked")
        server.port = taken  # as if another socket had bound it after the pick
        server.start()
        try:
            assert server.port != taken
            assert server.running()
        finally:
            server.kill()


def test_a_port_given_is_kept_and_its_loss_said(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        with pytest.raises(PortTaken):
            RedisServer(tmp_path / "given", port=taken).start()
