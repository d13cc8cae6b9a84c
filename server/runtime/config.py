"""The server's configuration: one frozen value built from the command line and environment.

Every limit of docs/protocol.md ("Limits and close codes") lives here, so tests can build a
server with tight limits and the CLI can list every knob in ``--help``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields

from shared.solver.analysis import DEFAULT_MAX_NODES


@dataclass(frozen=True)
class Config:
    """Everything the server reads at start-up; passed in, never a module global."""

    host: str = "127.0.0.1"
    port: int = 8765
    redis_url: str | None = None
    # Without --redis-url: "sqlite" keeps every event in data_dir, "memory" keeps nothing.
    store: str = "sqlite"
    data_dir: str | None = None  # the server's files; None: default_data_dir() (parse_config)
    redis_prefix: str = "sa:"
    redis_cluster: bool = False
    ack_after_replicas: int = 0
    workers: int = 1
    metrics_port: int = 0
    worker_index: int = 0  # set by the supervisor for each of --workers; not an option
    # The workers' hand-off sockets (server.net.handoff), set by the supervisor; not an option:
    # worker i receives on handoff_fds[2 * i + 1], the others send to it on handoff_fds[2 * i].
    handoff_fds: tuple[int, ...] = ()
    log_format: str = "console"
    log_level: str = "info"
    max_frame_bytes: int = 65536
    rate: float = 20.0
    burst: int = 40
    flood_limit: int = 50
    max_outbound_bytes: int = 1 << 20
    max_rooms: int = 1000
    max_players_per_room: int = 8
    max_spectators_per_room: int = 5000
    # A storm of connections (every client back after a deploy): the kernel's queue of
    # connections not yet accepted, how long a handshake may take under the herd, and the
    # connections this process holds before it answers new ones 503 busy with Retry-After.
    listen_backlog: int = 4096
    open_timeout_s: float = 30.0
    max_connections: int = 20000
    retention_s: float | None = 86400.0
    archive_after_s: float = 300.0
    archive_sweep_s: float = 5.0
    archive_url: str | None = None
    allow_custom_deck: bool = False
    shutdown_timeout_s: float = 5.0
    catch_up_s: float = 2.0
    loop: str = "auto"
    tick_ms: int = 50
    gc_interval_ms: float = 10.0
    abandon_grace_s: float = 60.0
    default_time_limit_s: Mapping[str, float] = field(
        default_factory=lambda: {"swiss": 1200.0, "quadrennial": 900.0}
    )
    max_time_limit_s: float = 7200.0
    lobby_ttl_s: float = 600.0
    unload_after_s: float = 300.0
    max_lobbies_per_session: int = 5
    heartbeat_s: float = 5.0
    solver_max_nodes: int = 10_000
    # Drawing a winnable deal: many cheap draws prepare a room sooner than a few deep ones
    # (docs/winnability.md: at 1,000 nodes a Swiss draw is won one time in eight, in ~0.05 s).
    winnable_max_nodes: int = 1_000
    solver_attempts: int = 80
    # A finished game's analysis (server/analysis): positions its searches may expand in all,
    # per variant (0: not analysed), and how many rooms may wait for the analysis process.
    analysis_max_nodes: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_MAX_NODES))
    analysis_queue: int = 64
    # Seconds between two sweeps of the rated games due for a fair-play assessment (a room this
    # process analyses is assessed at once, without waiting for one).
    fairplay_sweep_s: float = 30.0
    auth_attempts_per_name: int = 10
    auth_attempts_per_address: int = 30
    auth_window_s: float = 600.0
    hash_concurrency: int = 2
    # Argon2id's cost per password hash: argon2-cffi's defaults (RFC 9106's low-memory profile).
    password_time_cost: int = 3
    password_memory_kib: int = 65536
    password_parallelism: int = 4
    # Browsers' WebSocket upgrades must come from one of these origins ("scheme://host[:port]");
    # none given = the page's own origin only (the Host the request names). No Origin: allowed.
    allowed_origins: tuple[str, ...] = ()
    tls_cert: str | None = None  # with tls_key: serve https and wss on --port directly
    tls_key: str | None = None
    # Tournaments (docs/tournaments.md): scheduled ones (none by default), creation limits.
    tournament_schedule: str = ""
    max_tournaments_per_account: int = 3
    tournament_requests_per_minute: int = 10
    tournament_min_length_s: float = 300.0
    tournament_lease_s: float = 5.0
    # Bots (docs/bots.md): the least time between two of a bot's moves, a factor on every
    # level's think time, and how long a quick race waits for a person before a bot.
    bot_floor_ms: int = 400
    bot_think_scale: float = 1.0
    quick_bot_after_s: float = 20.0
    seat_wait_s: float = 10.0
    # Challenges: how many one account may create per window (all processes together), and
    # how often each process looks for challenges whose window has closed, to settle them.
    challenges_per_account: int = 20
    challenge_window_s: float = 3600.0
    challenge_sweep_s: float = 30.0
    # The referee (docs/operations.md, "Moderation"): the accounts holding the moderator role,
    # and how many reports one account may file an hour (all processes together).
    moderators: str = ""
    reports_per_hour: int = 10

    def time_limit_ms(self, variant: str, asked_ms: int | None) -> int:
        """The time limit a new room gets: the variant's default when it asks for none; 0 (no
        limit) only where the operator allows it (``max_time_limit_s`` 0)."""
        top = int(self.max_time_limit_s * 1000)
        if asked_ms is None:
            default = int(self.default_time_limit_s.get(variant, 0) * 1000)
            return min(default, top) if top and default else default or top
        if top and not 0 < asked_ms <= top:
            raise ValueError(f"between 1 and {top} ms (this server's maximum)")
        return asked_ms

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
        "Redis URL of the event store; none = the embedded store (--store)",
    ),
    (
        "--store",
        "store",
        str,
        "ARENA_STORE",
        "the embedded store when there is no --redis-url: sqlite keeps everything in "
        "--data-dir; memory keeps nothing (all is forgotten when the server stops)",
    ),
    (
        "--data-dir",
        "data_dir",
        str,
        "ARENA_DATA_DIR",
        "directory of the embedded sqlite store, held by one server at a time "
        "(default $XDG_DATA_HOME/solitaire-arena, i.e. ~/.local/share/solitaire-arena)",
    ),
    (
        "--redis-prefix",
        "redis_prefix",
        str,
        "ARENA_REDIS_PREFIX",
        "prefix of every Redis key, so several arenas can share one Redis",
    ),
    (
        "--ack-after-replicas",
        "ack_after_replicas",
        int,
        "ARENA_ACK_AFTER_REPLICAS",
        "ack a move only once this many replicas hold it (Redis WAIT); 0 = on the primary",
    ),
    (
        "--workers",
        "workers",
        int,
        "ARENA_WORKERS",
        "server processes sharing the port (SO_REUSEPORT); more than 1 needs --redis-url",
    ),
    (
        "--metrics-port",
        "metrics_port",
        int,
        "ARENA_METRICS_PORT",
        "also serve GET /metrics and /healthz on this port, worker i of --workers on PORT+i, "
        "so each worker can be scraped (0 = only on the main port, whichever worker answers)",
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
        "--listen-backlog",
        "listen_backlog",
        int,
        "ARENA_LISTEN_BACKLOG",
        "connections the kernel queues before this process accepts them (the kernel caps it "
        "at net.core.somaxconn): a storm of clients reconnecting at once waits there",
    ),
    (
        "--open-timeout-s",
        "open_timeout_s",
        float,
        "ARENA_OPEN_TIMEOUT_S",
        "seconds a connection may take to finish its opening handshake under a storm",
    ),
    (
        "--max-connections",
        "max_connections",
        int,
        "ARENA_MAX_CONNECTIONS",
        "WebSocket connections this process holds; past it a new one is answered HTTP 503 with "
        "Retry-After (busy), and comes back",
    ),
    (
        "--max-spectators-per-room",
        "max_spectators_per_room",
        int,
        "ARENA_MAX_SPECTATORS",
        "spectators per room on this process (5000: one race watched by 5,000 on one process "
        "was measured to get every event; a shared link to /tv is opened by a crowd at once)",
    ),
    (
        "--retention-s",
        "retention_s",
        float,
        "ARENA_RETENTION_S",
        "seconds finished rooms stay in the store (0 = forever); default 86400 on Redis and "
        "in memory, forever in the embedded sqlite store",
    ),
    (
        "--archive-after-s",
        "archive_after_s",
        float,
        "ARENA_ARCHIVE_AFTER_S",
        "with --redis-url: seconds after its end a finished room moves from Redis to the "
        "archive (--archive-url, else SQLite in --data-dir)",
    ),
    (
        "--archive-sweep-s",
        "archive_sweep_s",
        float,
        "ARENA_ARCHIVE_SWEEP_S",
        "seconds between the archiver's sweeps for rooms due (a failed sweep waits twice as "
        "long as the last, up to a minute)",
    ),
    (
        "--archive-url",
        "archive_url",
        str,
        "ARENA_ARCHIVE_URL",
        "postgresql:// URL of the archive of finished rooms; none = SQLite in --data-dir",
    ),
    (
        "--loop",
        "loop",
        str,
        "ARENA_LOOP",
        "event loop: uvloop, asyncio, or auto (uvloop where it is installed)",
    ),
    (
        "--tick-ms",
        "tick_ms",
        int,
        "ARENA_TICK_MS",
        "viewers' and other racers' updates are sent once per tick of this many ms, "
        "coalesced in one frame (0 = each at once); a racer's own ack and events never wait",
    ),
    (
        "--gc-interval-ms",
        "gc_interval_ms",
        float,
        "ARENA_GC_INTERVAL_MS",
        "a young garbage collection every this many ms, so the collector's pauses stay short "
        "(0 = only when CPython's own allocation count starts one)",
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
        "--abandon-grace-s",
        "abandon_grace_s",
        float,
        "ARENA_ABANDON_GRACE_S",
        "seconds a racer may be disconnected (on every server process) before the server "
        "resigns them as abandoned; 0 = never",
    ),
    (
        "--default-time-limit-s",
        "default_time_limit_s",
        str,
        "ARENA_DEFAULT_TIME_LIMIT_S",
        "a race's time limit when its room asks for none: SECONDS for both variants, or "
        "swiss=S,quadrennial=S (0 = none)",
    ),
    (
        "--max-time-limit-s",
        "max_time_limit_s",
        float,
        "ARENA_MAX_TIME_LIMIT_S",
        "longest time limit a room may ask for; 0 = no maximum, and rooms may ask for none",
    ),
    (
        "--lobby-ttl-s",
        "lobby_ttl_s",
        float,
        "ARENA_LOBBY_TTL_S",
        "seconds a lobby may have no connected player before it closes; 0 = never",
    ),
    (
        "--unload-after-s",
        "unload_after_s",
        float,
        "ARENA_UNLOAD_AFTER_S",
        "seconds after a room ends (finished or closed) before a process with nobody in it "
        "forgets it; the store keeps it and its next use loads it again; 0 = never",
    ),
    (
        "--max-lobbies-per-session",
        "max_lobbies_per_session",
        int,
        "ARENA_MAX_LOBBIES_PER_SESSION",
        "open lobby rooms one session may have created",
    ),
    (
        "--heartbeat-s",
        "heartbeat_s",
        float,
        "ARENA_HEARTBEAT_S",
        "seconds between this process's liveness beats; a process silent for three is "
        "taken as gone and its racers as disconnected",
    ),
    (
        "--bot-floor-ms",
        "bot_floor_ms",
        int,
        "ARENA_BOT_FLOOR_MS",
        "the least time between two moves of a bot, in ms (its think times are drawn above it)",
    ),
    (
        "--bot-think-scale",
        "bot_think_scale",
        float,
        "ARENA_BOT_THINK_SCALE",
        "a factor on every bot level's think time (1 = the documented pace; less is faster)",
    ),
    (
        "--quick-bot-after-s",
        "quick_bot_after_s",
        float,
        "ARENA_QUICK_BOT_AFTER_S",
        "seconds a quick race waits for a person before it gives the player a bot; 0 = never",
    ),
    (
        "--seat-wait-s",
        "seat_wait_s",
        float,
        "ARENA_SEAT_WAIT_S",
        "seconds the players a quick match or a tournament pairing put in a room have to sit "
        "down (10); then it starts with those who did, if two or more, else it closes",
    ),
    (
        "--solver-max-nodes",
        "solver_max_nodes",
        int,
        "ARENA_SOLVER_MAX_NODES",
        "positions the solver may search for a hint",
    ),
    (
        "--winnable-max-nodes",
        "winnable_max_nodes",
        int,
        "ARENA_WINNABLE_MAX_NODES",
        "positions the solver may search per deal drawn for a winnable-only room",
    ),
    (
        "--solver-attempts",
        "solver_attempts",
        int,
        "ARENA_SOLVER_ATTEMPTS",
        "secret seeds a winnable-only room may try before no_winnable_deal",
    ),
    (
        "--analysis-max-nodes",
        "analysis_max_nodes",
        str,
        "ARENA_ANALYSIS_MAX_NODES",
        "positions the solver may expand analysing one finished game: NODES for both variants, "
        "or swiss=N,quadrennial=N (0 = no analysis of that variant)",
    ),
    (
        "--analysis-queue",
        "analysis_queue",
        int,
        "ARENA_ANALYSIS_QUEUE",
        "finished rooms waiting for the analysis process on this server process; past it they "
        "wait in the store for a later sweep",
    ),
    (
        "--auth-attempts-per-name",
        "auth_attempts_per_name",
        int,
        "ARENA_AUTH_ATTEMPTS_PER_NAME",
        "register and login attempts one account name may have per --auth-window-s, on all "
        "server processes together, before rate_limited",
    ),
    (
        "--auth-attempts-per-address",
        "auth_attempts_per_address",
        int,
        "ARENA_AUTH_ATTEMPTS_PER_ADDRESS",
        "register and login attempts one client address may make per --auth-window-s",
    ),
    (
        "--auth-window-s",
        "auth_window_s",
        float,
        "ARENA_AUTH_WINDOW_S",
        "the window the attempt limits count in (fixed windows of this many seconds)",
    ),
    (
        "--hash-concurrency",
        "hash_concurrency",
        int,
        "ARENA_HASH_CONCURRENCY",
        "password hashes (Argon2id, 64 MiB each) one process computes at once, off the loop",
    ),
    (
        "--password-time-cost",
        "password_time_cost",
        int,
        "ARENA_PASSWORD_TIME_COST",
        "Argon2id passes over memory per password hash (3, RFC 9106's low-memory profile); "
        "a login whose stored hash was made with other parameters is hashed again",
    ),
    (
        "--password-memory-kib",
        "password_memory_kib",
        int,
        "ARENA_PASSWORD_MEMORY_KIB",
        "Argon2id memory per password hash in KiB (65536 = 64 MiB); at least 8 per lane",
    ),
    (
        "--password-parallelism",
        "password_parallelism",
        int,
        "ARENA_PASSWORD_PARALLELISM",
        "Argon2id lanes (threads) per password hash (4)",
    ),
    (
        "--allowed-origins",
        "allowed_origins",
        str,
        "ARENA_ALLOWED_ORIGINS",
        "origins (scheme://host[:port], comma-separated) whose pages may open a WebSocket "
        "here; empty = the server's own origin only; clients sending no Origin are not "
        "browsers and are always let in",
    ),
    (
        "--tls-cert",
        "tls_cert",
        str,
        "ARENA_TLS_CERT",
        "PEM certificate chain: with --tls-key, serve https and wss on --port "
        "(or leave TLS to a reverse proxy, docs/operations.md)",
    ),
    ("--tls-key", "tls_key", str, "ARENA_TLS_KEY", "PEM private key of --tls-cert"),
    (
        "--moderators",
        "moderators",
        str,
        "ARENA_MODERATORS",
        "accounts holding the moderator role, NAME[,NAME...] (docs/operations.md, "
        '"Moderation"); empty = none',
    ),
    (
        "--fairplay-sweep-s",
        "fairplay_sweep_s",
        float,
        "ARENA_FAIRPLAY_SWEEP_S",
        "seconds between two sweeps for finished rated games to assess for fair play (a room "
        "this process analyses is assessed at once)",
    ),
    (
        "--reports-per-hour",
        "reports_per_hour",
        int,
        "ARENA_REPORTS_PER_HOUR",
        "reports one account may file an hour, on all server processes together, before "
        "rate_limited",
    ),
    (
        "--tournament-schedule",
        "tournament_schedule",
        str,
        "ARENA_TOURNAMENT_SCHEDULE",
        "tournaments the server creates by itself, e.g. 'hourly:30:swiss,quadrennial' "
        '(docs/tournaments.md, "Schedule"); empty = none',
    ),
    (
        "--max-tournaments-per-account",
        "max_tournaments_per_account",
        int,
        "ARENA_MAX_TOURNAMENTS_PER_ACCOUNT",
        "tournaments one account may have created that are upcoming or running",
    ),
    (
        "--tournament-requests-per-minute",
        "tournament_requests_per_minute",
        int,
        "ARENA_TOURNAMENT_REQUESTS_PER_MINUTE",
        "create, join and withdraw requests of one account per minute, on all processes",
    ),
    (
        "--tournament-min-length-s",
        "tournament_min_length_s",
        float,
        "ARENA_TOURNAMENT_MIN_LENGTH_S",
        "shortest tournament create_tournament accepts (300; tests and trials use less)",
    ),
    (
        "--tournament-lease-s",
        "tournament_lease_s",
        float,
        "ARENA_TOURNAMENT_LEASE_S",
        "seconds a process's claim to pair a tournament lasts unless renewed: another "
        "process takes over within that long after it dies",
    ),
    (
        "--challenges-per-account",
        "challenges_per_account",
        int,
        "ARENA_CHALLENGES_PER_ACCOUNT",
        "challenges one account may create per --challenge-window-s, on all server processes "
        "together, before rate_limited",
    ),
    (
        "--challenge-window-s",
        "challenge_window_s",
        float,
        "ARENA_CHALLENGE_WINDOW_S",
        "the window --challenges-per-account counts in (seconds)",
    ),
    (
        "--challenge-sweep-s",
        "challenge_sweep_s",
        float,
        "ARENA_CHALLENGE_SWEEP_S",
        "how often each process settles the challenges whose window has closed (seconds)",
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
        if name in ("default_time_limit_s", "analysis_max_nodes"):
            default = ",".join(f"{k}={v:g}" for k, v in default.items())
        elif name == "allowed_origins":
            default = ",".join(default)
        elif name == "retention_s":
            default = None  # not given: the store's own default (parse_config)
        if var is not None and env.get(var):
            default = kind(env[var])
        choices = None
        if name == "log_format":
            choices = ["json", "console"]
        elif name == "log_level":
            choices = ["debug", "info", "warning", "error"]
        elif name == "loop":
            choices = ["auto", "uvloop", "asyncio"]
        elif name == "store":
            choices = ["sqlite", "memory"]
        label = f"{text} [env {var}]" if var else text
        parser.add_argument(
            option, dest=name, type=kind, default=default, help=label, choices=choices
        )
    parser.add_argument(
        "--redis-cluster",
        action="store_true",
        default=env.get("REDIS_CLUSTER", "") in {"1", "true", "yes"},
        help="the Redis URL names a node of a Redis Cluster [env REDIS_CLUSTER]",
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
    env = os.environ if env is None else env
    args = build_parser(env).parse_args(argv)
    values = {f.name: getattr(args, f.name) for f in fields(Config) if hasattr(args, f.name)}
    if not values.get("redis_url"):
        values["redis_url"] = None
    if values.get("retention_s") is None:  # not given: the embedded SQLite store keeps all
        keeps = values["redis_url"] is None and values["store"] == "sqlite"
        values["retention_s"] = None if keeps else Config.retention_s
    elif values["retention_s"] <= 0:
        values["retention_s"] = None
    values["archive_url"] = values.get("archive_url") or None
    if values["archive_after_s"] < 0:
        raise SystemExit("solitaire-server: --archive-after-s is >= 0")
    if values["archive_sweep_s"] <= 0:
        raise SystemExit("solitaire-server: --archive-sweep-s is > 0")
    values["default_time_limit_s"] = parse_time_limits(str(values["default_time_limit_s"]))
    values["analysis_max_nodes"] = parse_node_budgets(str(values["analysis_max_nodes"]))
    if values["analysis_queue"] < 1:
        raise SystemExit("solitaire-server: --analysis-queue is >= 1")
    origins = str(values["allowed_origins"]).split(",")
    values["allowed_origins"] = tuple(o.strip().rstrip("/").lower() for o in origins if o.strip())
    values["tls_cert"] = values.get("tls_cert") or None
    values["tls_key"] = values.get("tls_key") or None
    if (values["tls_cert"] is None) != (values["tls_key"] is None):
        raise SystemExit("solitaire-server: --tls-cert and --tls-key go together")
    if min(values["solver_max_nodes"], values["winnable_max_nodes"], values["solver_attempts"]) < 1:
        raise SystemExit(
            "solitaire-server: --solver-max-nodes, --winnable-max-nodes and --solver-attempts"
            " are >= 1"
        )
    if values["bot_floor_ms"] < 1 or values["bot_think_scale"] <= 0:
        raise SystemExit("solitaire-server: --bot-floor-ms is >= 1, --bot-think-scale > 0")
    if values["seat_wait_s"] <= 0:
        raise SystemExit("solitaire-server: --seat-wait-s is > 0")
    if values["quick_bot_after_s"] < 0:
        raise SystemExit("solitaire-server: --quick-bot-after-s is >= 0 (0: never a bot)")
    if (
        min(values["password_time_cost"], values["password_parallelism"]) < 1
        or values["password_memory_kib"] < 8 * values["password_parallelism"]
    ):
        raise SystemExit(
            "solitaire-server: --password-time-cost and --password-parallelism are >= 1,"
            " --password-memory-kib at least 8 per lane"
        )
    if values["gc_interval_ms"] < 0:
        raise SystemExit("solitaire-server: --gc-interval-ms is >= 0 (0: CPython's own trigger)")
    if values["workers"] < 1 or values["ack_after_replicas"] < 0:
        raise SystemExit("solitaire-server: --workers is at least 1, --ack-after-replicas >= 0")
    if values["redis_url"] is None:
        for name, given in (
            ("--workers", values["workers"] > 1),
            ("--redis-cluster", values["redis_cluster"]),
            ("--ack-after-replicas", values["ack_after_replicas"] > 0),
        ):
            if given:  # one line, not the whole usage: the option is known, its use is not
                raise SystemExit(
                    f"solitaire-server: {name} needs --redis-url (the embedded store lives in"
                    " one process)"
                )
    elif values["store"] == "memory":
        raise SystemExit("solitaire-server: --store memory and --redis-url exclude each other")
    if values["archive_url"] is not None and values["redis_url"] is None:
        raise SystemExit(
            "solitaire-server: --archive-url needs --redis-url (finished races move from Redis"
            " to the archive)"
        )
    # Resolved whatever the store: the server's files beside the events live there too.
    given = args.data_dir or default_data_dir(env)
    values["data_dir"] = os.path.abspath(os.path.expanduser(given))
    return Config(**values)


def default_data_dir(env: Mapping[str, str]) -> str:
    """Where the embedded store keeps its data by default: ``$XDG_DATA_HOME/solitaire-arena``,
    ``~/.local/share/solitaire-arena`` when that is unset or not absolute (the XDG rule)."""
    base = env.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):
        home = env.get("HOME") or os.path.expanduser("~")
        base = os.path.join(home, ".local", "share")
    return os.path.join(base, "solitaire-arena")


def parse_node_budgets(text: str) -> dict[str, int]:
    """``--analysis-max-nodes``: one number for both variants, or variant=nodes pairs."""
    try:
        budgets = dict(Config().analysis_max_nodes)
        if "=" not in text:
            budgets = dict.fromkeys(budgets, int(text))
        for part in text.split(",") if "=" in text else ():
            variant, _, value = part.partition("=")
            if variant.strip() not in budgets:
                raise ValueError(variant)
            budgets[variant.strip()] = int(value)
        if min(budgets.values()) < 0:
            raise ValueError(text)
        return budgets
    except ValueError:
        raise SystemExit(
            f"--analysis-max-nodes: {text!r} is neither NODES nor swiss=N,quadrennial=N (>= 0)"
        ) from None


def parse_time_limits(text: str) -> dict[str, float]:
    """``--default-time-limit-s``: one number for both variants, or variant=seconds pairs."""
    try:
        if "=" not in text:
            seconds = float(text)
            return {"swiss": seconds, "quadrennial": seconds}
        limits = dict(Config().default_time_limit_s)
        for part in text.split(","):
            variant, _, value = part.partition("=")
            if variant.strip() not in limits:
                raise ValueError(variant)
            limits[variant.strip()] = float(value)
        return limits
    except ValueError:
        raise SystemExit(
            f"--default-time-limit-s: {text!r} is neither SECONDS nor swiss=S,quadrennial=S"
        ) from None
