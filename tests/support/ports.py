"""Free TCP ports on the loopback interface, for private servers started by tests."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the kernel just handed out; another process could take it, but rarely does."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
