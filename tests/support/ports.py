"""Free TCP ports on the loopback interface, for private servers started by tests."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port the kernel just handed out; another process could take it, but rarely does."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_port_run(count: int) -> int:
    """The first of ``count`` consecutive free ports (``--metrics-port`` gives worker i the
    port base + i): the kernel hands out single ports, so the ones after are checked."""
    for _ in range(100):
        base = free_port()
        if base + count > 65536:
            continue
        held = []
        try:
            for port in range(base + 1, base + count):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                held.append(sock)
                sock.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
        return base
    raise RuntimeError(f"no {count} consecutive free ports found")
