"""The server's configuration: one frozen value built from the command line and environment.

Every limit of docs/protocol.md ("Limits and close codes") lives here, so tests can build a
server with tight limits and the CLI can list every knob in ``--help``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields


@dataclass(frozen=True)
class Config:
    """Everything the server reads at start-up; passed in, never a module global."""

    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = None
    redis_prefix: str = "sa:"
    log_format: str = "console"
    log_level: str = "info"
    max_frame_bytes: int = 65536
    rate: float = 20.0
    burst: int = 40
    flood_limit: int = 50
    max_outbound_bytes: int = 1 << 20
    max_rooms: int = 1000
    max_players_per_room: int = 8
    max_spectators_per_room: int = 100
    retention_s: float | None = 86400.0
    allow_custom_deck: bool = False
    shutdown_timeout_s: float = 5.0
    catch_up_s: float = 2.0

    def limits(self) -> dict[str, int]:
        """The limits a client learns in ``welcome`` (docs/protocol.md)."""
        return {
            "max_frame_bytes": self.max_frame_bytes,
            "messages_per_second": int(self.rate),
            "burst": self.burst,
            "max_outbound_bytes": self.max_outbound_bytes,
            "max_rooms": self.max_rooms,
            "max_players_per_room": self.max_players_per_room,
            "max_spectators_per_room": self.max_spectators_per_room,
        }


# (option, Config field, type, environment variable, help)
_OPTIONS: list[tuple[str, str, type, str | None, str]] = [
    ("--host", "host", str, "ARENA_HOST", "interface to listen on"),
    ("--port", "port", int, "ARENA_PORT", "TCP port for WebSocket and GET /healthz"),
    (
        "--redis-url",
        "redis_url",
        str,
        "REDIS_URL",
        "Redis URL of the event store; none = the embedded in-memory store",
    ),
    (
        "--redis-prefix",
        "redis_prefix",
        str,
        "ARENA_REDIS_PREFIX",
        "prefix of every Redis key, so several arenas can share one Redis",
    ),
    ("--log-format", "log_format", str, "ARENA_LOG_FORMAT", "json or console"),
    ("--log-level", "log_level", str, "ARENA_LOG_LEVEL", "debug, info, warning or error"),
    (
        "--max-frame-bytes",
        "max_frame_bytes",
        int,
        "ARENA_MAX_FRAME_BYTES",
        "largest incoming frame; bigger ones close the connection with 1009",
    ),
    ("--rate", "rate", float, "ARENA_RATE", "messages per second per connection"),
    ("--burst", "burst", int, "ARENA_BURST", "messages a connection may send in a burst"),
    (
        "--flood-limit",
        "flood_limit",
        int,
        "ARENA_FLOOD_LIMIT",
        "rate-limited messages in a row before the connection is closed with 4008",
    ),
    (
        "--max-outbound-bytes",
        "max_outbound_bytes",
        int,
        "ARENA_MAX_OUTBOUND_BYTES",
        "unsent bytes a connection may pile up before it is dropped with 4009",
    ),
    ("--max-rooms", "max_rooms", int, "ARENA_MAX_ROOMS", "unfinished rooms at most"),
    (
        "--max-players-per-room",
        "max_players_per_room",
        int,
        "ARENA_MAX_PLAYERS",
        "largest room capacity",
    ),
    (
        "--max-spectators-per-room",
        "max_spectators_per_room",
        int,
        "ARENA_MAX_SPECTATORS",
        "spectators per room on this process",
    ),
    (
        "--retention-s",
        "retention_s",
        float,
        "ARENA_RETENTION_S",
        "seconds finished rooms stay in the store (0 = forever)",
    ),
    (
        "--catch-up-s",
        "catch_up_s",
        float,
        "ARENA_CATCH_UP_S",
        "seconds between checks of every followed room against the store (bounds the cost of "
        "a lost wake-up)",
    ),
    (
        "--shutdown-timeout-s",
        "shutdown_timeout_s",
        float,
        "ARENA_SHUTDOWN_TIMEOUT_S",
        "seconds to wait for connections to close on SIGTERM",
    ),
]


def build_parser(env: Mapping[str, str] | None = None) -> argparse.ArgumentParser:
    """The CLI; defaults come from the environment, then from Config."""
    env = os.environ if env is None else env
    defaults = Config()
    parser = argparse.ArgumentParser(
        prog="solitaire-server",
        description="The authoritative Solitaire Arena server (docs/protocol.md).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    for option, name, kind, var, text in _OPTIONS:
        default = getattr(defaults, name)
        if var is not None and env.get(var):
            default = kind(env[var])
        choices = None
        if name == "log_format":
            choices = ["json", "console"]
        elif name == "log_level":
            choices = ["debug", "info", "warning", "error"]
        label = f"{text} [env {var}]" if var else text
        parser.add_argument(
            option, dest=name, type=kind, default=default, help=label, choices=choices
        )
    parser.add_argument(
        "--allow-custom-deck",
        action="store_true",
        default=env.get("ARENA_ALLOW_CUSTOM_DECK", "") in {"1", "true", "yes"},
        help="accept create_room with an explicit deck (tests only) [env ARENA_ALLOW_CUSTOM_DECK]",
    )
    return parser


def parse_config(argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None) -> Config:
    """Config from command-line arguments and environment variables."""
    args = build_parser(env).parse_args(argv)
    values = {f.name: getattr(args, f.name) for f in fields(Config) if hasattr(args, f.name)}
    if not values.get("redis_url"):
        values["redis_url"] = None
    if values.get("retention_s") is not None and values["retention_s"] <= 0:
        values["retention_s"] = None
    return Config(**values)
