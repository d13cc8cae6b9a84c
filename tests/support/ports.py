"""Free TCP ports on the loopback interface, for private servers started by tests."""

from __future__ import annotations

import random
import socket
from pathlib import Path

EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
LOWEST_RUN_PORT = 10000
"""Below this, ports belong to well-known services more often than not."""


def free_port() -> int:
    """A port the kernel just handed out; another process could take it, but rarely does."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ephemeral_low() -> int:
    """The first port the kernel hands to outgoing connections (32768 when unreadable)."""
    try:
        return int(EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_run(count: int) -> int:
    """The first of ``count`` consecutive free ports (``--metrics-port`` gives worker i the
    port base + i), all below the kernel's ephemeral range: a port beside one the kernel handed
    out is the very kind it gives the next outgoing connection (to Redis, say), and a server
    that then cannot bind it dies at start-up."""
    top = _ephemeral_low() - count
    for _ in range(200):
        base = random.randrange(LOWEST_RUN_PORT, top)
        held = []
        try:
            for port in range(base, base + count):
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
