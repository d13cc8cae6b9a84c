"""The wire codec of docs/protocol.md: one msgpack map per binary frame, checked field by field.

Server and client share it, so both sides agree on what a valid message is. ``decode`` raises a
``ProtocolError`` subclass whose ``code`` goes straight on the wire (bad_frame, unknown_type,
bad_field); it never raises anything else for bad input. The other wire details live here once
too: the close codes, the ``batch`` frame (built from already-encoded messages, and taken apart),
frames spliced from packed parts, and the fairness commitment.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit, urlunsplit

import msgpack

from shared.errors import ProtocolError

PROTOCOL_VERSION = 1

# Client → server message types.
HELLO = "hello"
PING = "ping"
LIST_ROOMS = "list_rooms"
CREATE_ROOM = "create_room"
JOIN = "join"
LEAVE = "leave"
START = "start"
MOVE = "move"
RESIGN = "resign"
WATCH = "watch"
HINT = "hint"
REMATCH = "rematch"
REGISTER = "register"
LOGIN = "login"
LOGOUT = "logout"
CHANGE_PASSWORD = "change_password"
LEADERBOARD = "leaderboard"
PROFILE = "profile"
RACE_RATINGS = "race_ratings"
QUICK = "quick"
LEAVE_QUEUE = "leave_queue"
DAILY = "daily"
DAILY_RESULTS = "daily_results"
# Tournaments (docs/protocol.md, "Tournaments").
LIST_TOURNAMENTS = "list_tournaments"
CREATE_TOURNAMENT = "create_tournament"
JOIN_TOURNAMENT = "join_tournament"
WITHDRAW_TOURNAMENT = "withdraw_tournament"
FOLLOW_TOURNAMENT = "follow_tournament"
UNFOLLOW_TOURNAMENT = "unfollow_tournament"
BERSERK = "berserk"
ADD_BOT = "add_bot"
CHALLENGE_CREATE = "challenge_create"
CHALLENGE_PLAY = "challenge_play"
CHALLENGE_SHOW = "challenge_show"
CHALLENGES = "challenges"
# The referee (docs/protocol.md, "Reports and moderation").
REPORT = "report"
MOD_QUEUE = "mod_queue"
MOD_LOG = "mod_log"
MOD_SHOW = "mod_show"
MOD_ACTION = "mod_action"
FOCUS_LOST = "focus_lost"  # the web page lost focus during a rated race (never answered)
REPORT_REASONS = ("cheat", "name", "abuse", "other")
MOD_ACTIONS = ("mark", "unmark", "close", "reopen", "rename")
ANALYSIS = "analysis"

# Server → client message types.
WELCOME = "welcome"
PONG = "pong"
ROOMS = "rooms"
ROOM = "room"
JOINED = "joined"
LEFT = "left"
COUNTDOWN = "countdown"
STARTED = "started"
PROGRESS = "progress"
FINISHED = "finished"
GAME = "game"
GAME_EVENT = "game_event"
ACK = "ack"
REJECT = "reject"
ERROR = "error"
BATCH = "batch"
# The answer to `hint`: a distinct type, as MESSAGES maps each type to one set of fields.
SUGGESTION = "suggestion"
# Answers of the account requests (docs/protocol.md, "Accounts and ratings").
ACCOUNT = "account"
LOGGED_OUT = "logged_out"
PASSWORD_CHANGED = "password_changed"
STANDINGS = "standings"
PLAYER_CARD = "player_card"
RATING_CHANGES = "rating_changes"
# Matchmaking (docs/protocol.md, "Quick races").
QUEUED = "queued"
MATCHED = "matched"
LEFT_QUEUE = "left_queue"
# The daily challenge (docs/protocol.md, "Daily challenge").
DAILY_STARTED = "daily_started"
DAILY_STANDINGS = "daily_standings"
# Tournaments (docs/protocol.md, "Tournaments").
TOURNAMENTS = "tournaments"
TOURNAMENT = "tournament"
TOURNAMENT_STANDINGS = "tournament_standings"
TOURNAMENT_JOINED = "tournament_joined"
TOURNAMENT_WITHDRAWN = "tournament_withdrawn"
TOURNAMENT_UNFOLLOWED = "tournament_unfollowed"
TOURNAMENT_PAIRED = "tournament_paired"
BERSERKED = "berserked"
# Challenges (docs/protocol.md, "Challenges").
CHALLENGE = "challenge"
CHALLENGE_STARTED = "challenge_started"
CHALLENGE_LIST = "challenge_list"
# The referee (docs/protocol.md, "Reports and moderation").
REPORT_FILED = "report_filed"
MOD_QUEUE_ROWS = "mod_queue_rows"
MOD_LOG_ROWS = "mod_log_rows"
MOD_ACCOUNT = "mod_account"
MOD_DONE = "mod_done"
GAME_ANALYSIS = "game_analysis"

# Why a `closed` room closed (its `closed_reason`): a lobby nobody stayed in, or a room formed
# for a quick race that fewer than two of its players sat down, or stayed, in.
CLOSED_IDLE = "idle"
CLOSED_UNFILLED = "unfilled"

VARIANTS = ("swiss", "quadrennial")
ROLES = ("player", "spectator")
ROOM_STATUSES = ("lobby", "countdown", "racing", "finished", "closed")
PLAYER_STATUSES = ("waiting", "playing", "won", "over", "resigned", "timed_out", "left")

MAX_REF_LEN = 64
MAX_MOVE_ID_LEN = 64
MAX_NAME_LEN = 32
MAX_SEED_LEN = 64
MAX_MOVE_LEN = 16
MAX_ID_LEN = 64
MAX_PASSWORD_LEN = 128
MAX_KEY_LEN = 128
MAX_TOP = 100
MAX_TOURNAMENT_NAME_LEN = 64
TOURNAMENT_STATUSES = ("upcoming", "running", "finishing", "finished")

# Close codes (docs/protocol.md, "Limits and close codes").
CLOSE_NORMAL = 1000
CLOSE_GOING_AWAY = 1001
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL = 1011
CLOSE_UNSUPPORTED = 4000
CLOSE_SUPERSEDED = 4001
CLOSE_FLOOD = 4008
CLOSE_SLOW = 4009
CLOSE_CODES: dict[int, str] = {
    CLOSE_NORMAL: "normal close",
    CLOSE_GOING_AWAY: "the server is shutting down",
    CLOSE_TOO_BIG: "frame too large",
    CLOSE_INTERNAL: "internal server error",
    CLOSE_UNSUPPORTED: "unsupported protocol version",
    CLOSE_SUPERSEDED: "seat taken by another connection",
    CLOSE_FLOOD: "sustained flood past the rate limit",
    CLOSE_SLOW: "slow consumer",
}
"""Each close code a server sends, with what it means in a few words."""

BOT_MIN_LEVEL = 1
BOT_MAX_LEVEL = 5
"""A bot's levels (docs/bots.md); a room takes at most capacity - 1 bots."""
BOT_MAX_COUNT = 999

ROOM_PARAMETER = "room"
"""The query parameter of the WebSocket URL that names the room a connection is for: a routing
hint only (docs/protocol.md, "Transport")."""


def room_url(url: str, room: str) -> str:
    """The server's WebSocket ``url`` naming ``room``, so a server with ``--workers`` serves the
    connection where the room is (``ws://h:8765`` → ``ws://h:8765/?room=k2x7m4qa``)."""
    parts = urlsplit(url)
    query = urlencode({ROOM_PARAMETER: room})
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", query, ""))


def room_hint(target: str) -> str | None:
    """The room a WebSocket request's target (``/?room=k2x7m4qa``) names, if any."""
    try:
        values = parse_qs(urlsplit(target).query).get(ROOM_PARAMETER)
    except ValueError:
        return None
    if not values or not values[0] or len(values[0]) > 64:
        return None
    return values[0]


class BadFrame(ProtocolError):
    """A frame that is not one msgpack map with a string ``type``."""

    code = "bad_frame"


class UnknownType(ProtocolError):
    """A message whose ``type`` this protocol version does not define."""

    code = "unknown_type"


class BadField(ProtocolError):
    """A missing field, a field of the wrong type, or a value out of range."""

    code = "bad_field"

    def __init__(self, reason: str, *, field: str | None = None) -> None:
        super().__init__(reason)
        self.field = field


_TYPES: dict[str, tuple[type, ...]] = {
    "int": (int,),
    "str": (str,),
    "bool": (bool,),
    "nil": (type(None),),
    "list": (list, tuple),
    "map": (dict,),
}


@dataclass(frozen=True)
class Field:
    """One field of a message: its msgpack types, whether it is required, and its bounds."""

    name: str
    kinds: tuple[str, ...]
    required: bool = True
    min: int | None = None
    max: int | None = None
    max_len: int | None = None
    choices: tuple[str, ...] | None = None
    items: str | None = None
    allow_empty: bool = False

    def check(self, value: Any) -> None:
        kind = _kind_of(value)
        if kind not in self.kinds:
            raise BadField(
                f"field {self.name!r} must be {' or '.join(self.kinds)}, not {kind}",
                field=self.name,
            )
        if kind == "int":
            if self.min is not None and value < self.min:
                raise BadField(f"field {self.name!r} must be >= {self.min}", field=self.name)
            if self.max is not None and value > self.max:
                raise BadField(f"field {self.name!r} must be <= {self.max}", field=self.name)
        if kind == "str":
            if not value and not self.allow_empty:
                raise BadField(f"field {self.name!r} must not be empty", field=self.name)
            if self.max_len is not None and len(value) > self.max_len:
                raise BadField(
                    f"field {self.name!r} is longer than {self.max_len} characters",
                    field=self.name,
                )
            if self.choices is not None and value not in self.choices:
                raise BadField(
                    f"field {self.name!r} must be one of {', '.join(self.choices)}",
                    field=self.name,
                )
        if kind == "list":
            if self.max_len is not None and len(value) > self.max_len:
                raise BadField(f"field {self.name!r} has too many items", field=self.name)
            if self.items is not None:
                for item in value:
                    if _kind_of(item) != self.items:
                        raise BadField(
                            f"items of {self.name!r} must be {self.items}", field=self.name
                        )


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    for kind, types in _TYPES.items():
        if isinstance(value, types):
            return kind
    return type(value).__name__


def _f(name: str, *kinds: str, **bounds: Any) -> Field:
    return Field(name, kinds, **bounds)


def _opt(name: str, *kinds: str, **bounds: Any) -> Field:
    return Field(name, kinds, required=False, **bounds)


_MOVE_ID = _f("id", "int", "str", min=0, max=2**53, max_len=MAX_MOVE_ID_LEN)
_PROGRESS_FIELDS = (
    _f("status", "str", choices=PLAYER_STATUSES),
    _f("foundation", "int", min=0),
    _f("moves", "int", min=0),
    _f("finished_at", "int", "nil"),
    _f("reached_at", "int", "nil"),
)

CLIENT_MESSAGES: dict[str, tuple[Field, ...]] = {
    HELLO: (
        _f("protocol", "int"),
        _opt("name", "str", max_len=MAX_NAME_LEN),
        _opt("resume", "str", max_len=256),
        _opt("key", "str", max_len=MAX_KEY_LEN),
    ),
    PING: (),
    LIST_ROOMS: (),
    CREATE_ROOM: (
        _f("variant", "str", choices=VARIANTS),
        _opt("seed", "int", "str", max_len=MAX_SEED_LEN),
        _opt("capacity", "int", min=1, max=1000),
        _opt("countdown_ms", "int", min=0, max=60_000),
        _opt("time_limit_ms", "int", min=0, max=86_400_000),
        _opt("spectator_delay_ms", "int", min=0, max=600_000),
        _opt("deck", "list", max_len=52, items="str"),
        _opt("winnable", "bool"),
        _opt("rated", "bool"),
        _opt("bots", "int", min=0, max=BOT_MAX_COUNT),
        _opt("bot_level", "int", min=BOT_MIN_LEVEL, max=BOT_MAX_LEVEL),
    ),
    JOIN: (
        _f("room", "str", max_len=MAX_ID_LEN),
        _opt("role", "str", choices=ROLES),
    ),
    LEAVE: (),
    START: (),
    MOVE: (
        _MOVE_ID,
        _f("move", "str", max_len=MAX_MOVE_LEN),
        _opt("player", "str", max_len=MAX_ID_LEN),
    ),
    RESIGN: (),
    WATCH: (
        _opt("room", "str", max_len=MAX_ID_LEN),
        _opt("player", "str", max_len=MAX_ID_LEN),
    ),
    HINT: (),
    REMATCH: (),
    REGISTER: (
        _f("name", "str", max_len=MAX_NAME_LEN),
        _f("password", "str", max_len=MAX_PASSWORD_LEN, allow_empty=True),
    ),
    LOGIN: (
        _f("name", "str", max_len=MAX_NAME_LEN),
        _f("password", "str", max_len=MAX_PASSWORD_LEN, allow_empty=True),
    ),
    LOGOUT: (),
    CHANGE_PASSWORD: (
        _f("password", "str", max_len=MAX_PASSWORD_LEN, allow_empty=True),
        _f("new_password", "str", max_len=MAX_PASSWORD_LEN, allow_empty=True),
    ),
    LEADERBOARD: (
        _opt("variant", "str", choices=VARIANTS),
        _opt("top", "int", min=1, max=MAX_TOP),
    ),
    PROFILE: (_opt("name", "str", max_len=MAX_NAME_LEN),),
    RACE_RATINGS: (_f("room", "str", max_len=MAX_ID_LEN),),
    QUICK: (
        _opt("variant", "str", choices=VARIANTS),
        _opt("players", "int", min=2, max=4),
    ),
    LEAVE_QUEUE: (),
    DAILY: (_opt("variant", "str", choices=VARIANTS),),
    DAILY_RESULTS: (
        _opt("variant", "str", choices=VARIANTS),
        _opt("date", "str", max_len=10),
    ),
    LIST_TOURNAMENTS: (),
    CREATE_TOURNAMENT: (
        _f("name", "str", max_len=MAX_TOURNAMENT_NAME_LEN),
        _opt("variant", "str", choices=VARIANTS),
        _opt("starts_at", "int", min=0),
        _f("length_ms", "int", min=1, max=86_400_000),
        _opt("time_limit_ms", "int", min=1, max=86_400_000),
        _opt("race_size", "int", min=2, max=4),
        _opt("rated", "bool"),
        _opt("berserk", "bool"),
        _opt("streaks", "bool"),
    ),
    JOIN_TOURNAMENT: (_f("tournament", "str", max_len=MAX_ID_LEN),),
    WITHDRAW_TOURNAMENT: (_f("tournament", "str", max_len=MAX_ID_LEN),),
    FOLLOW_TOURNAMENT: (
        _f("tournament", "str", max_len=MAX_ID_LEN),
        _opt("page", "int", min=1, max=100_000),
    ),
    UNFOLLOW_TOURNAMENT: (),
    BERSERK: (),
    ADD_BOT: (_opt("level", "int", min=BOT_MIN_LEVEL, max=BOT_MAX_LEVEL),),
    CHALLENGE_CREATE: (
        _opt("variant", "str", choices=VARIANTS),
        _opt("to", "list", max_len=49, items="str"),
        _opt("capacity", "int", min=2, max=50),
        _opt("window_days", "int", min=1, max=30),
    ),
    CHALLENGE_PLAY: (_f("challenge", "str", max_len=MAX_ID_LEN),),
    CHALLENGE_SHOW: (_f("challenge", "str", max_len=MAX_ID_LEN),),
    CHALLENGES: (),
    REPORT: (
        _f("name", "str", max_len=MAX_NAME_LEN),
        _f("reason", "str", choices=REPORT_REASONS),
        _opt("race", "str", max_len=MAX_ID_LEN),
        _opt("note", "str", max_len=500, allow_empty=True),
    ),
    MOD_QUEUE: (),
    MOD_LOG: (_opt("last", "int", min=1, max=1000),),
    MOD_SHOW: (_f("name", "str", max_len=MAX_NAME_LEN),),
    FOCUS_LOST: (),
    MOD_ACTION: (
        _f("action", "str", choices=MOD_ACTIONS),
        _f("name", "str", max_len=MAX_NAME_LEN),
        _f("reason", "str", max_len=500),
        _opt("new_name", "str", max_len=MAX_NAME_LEN),
    ),
    ANALYSIS: (
        _f("room", "str", max_len=MAX_ID_LEN),
        _f("player", "str", max_len=MAX_ID_LEN),
    ),
}

SERVER_MESSAGES: dict[str, tuple[Field, ...]] = {
    WELCOME: (
        _f("protocol", "int"),
        _f("session", "str"),
        _f("token", "str"),
        _f("resumed", "bool"),
        _f("room", "str", "nil"),
        _f("server", "str"),
        _f("limits", "map"),
        _opt("account", "str", "nil"),
        _opt("notice", "str"),
    ),
    PONG: (_f("at", "int"),),
    ROOMS: (_f("rooms", "list", items="map"),),
    ROOM: (_f("room", "map"),),
    JOINED: (
        _f("room", "str"),
        _f("role", "str", choices=ROLES),
        _f("player", "str", "nil"),
    ),
    LEFT: (_f("room", "str"),),
    COUNTDOWN: (_f("room", "str"), _f("at", "int"), _f("go_at", "int")),
    STARTED: (
        _f("room", "str"),
        _f("at", "int"),
        _f("ends_at", "int", "nil"),
        _f("commitment", "str"),
    ),
    PROGRESS: (_f("room", "str"), _f("player", "str"), *_PROGRESS_FIELDS),
    FINISHED: (
        _f("room", "str"),
        _f("at", "int"),
        _f("reason", "str"),
        _f("ranking", "list", items="map"),
        _f("variant", "str"),
        _f("deal_version", "int"),
        _f("seed", "str", "nil"),
        _f("salt", "str"),
        _f("commitment", "str"),
    ),
    GAME: (
        _f("room", "str"),
        _f("player", "str"),
        _f("version", "int", min=0),
        _f("events", "list", items="map"),
    ),
    GAME_EVENT: (
        _f("room", "str"),
        _f("player", "str"),
        _f("version", "int", min=1),
        _f("event", "map"),
    ),
    ACK: (_MOVE_ID, _f("version", "int", min=1)),
    REJECT: (_MOVE_ID, _f("code", "str"), _f("reason", "str")),
    BATCH: (_f("messages", "list", items="map"),),
    SUGGESTION: (
        _f("move", "str", "nil", max_len=MAX_MOVE_LEN),
        _f("status", "str", choices=("won", "unwinnable", "unknown")),
        _f("nodes", "int", min=0),
        _f("max_nodes", "int", min=1),
    ),
    ACCOUNT: (_f("name", "str"), _f("key", "str"), _opt("notice", "str")),
    LOGGED_OUT: (),
    PASSWORD_CHANGED: (_f("revoked", "int", min=0),),
    STANDINGS: (
        _f("variant", "str", choices=VARIANTS),
        _f("rows", "list", items="map"),
        _f("me", "map", "nil"),
        _f("players", "int", min=0),
    ),
    PLAYER_CARD: (
        _f("name", "str"),
        _f("ratings", "list", items="map"),
        _f("recent", "list", items="map"),
        _opt("streaks", "map"),
        _opt("tournaments", "map"),
        _opt("bot", "int", min=BOT_MIN_LEVEL, max=BOT_MAX_LEVEL),
        _opt("challenges", "list", items="map"),
        _opt("marked", "bool"),
    ),
    RATING_CHANGES: (
        _f("room", "str"),
        _f("variant", "str", choices=VARIANTS),
        _f("changes", "list", items="map"),
    ),
    QUEUED: (
        _f("variant", "str", choices=VARIANTS),
        _f("players", "int", min=2, max=4),
        _f("rated", "bool"),
        _f("waiting", "int", min=0),
        _f("waited_ms", "int", min=0),
        _f("range", "str"),
        _opt("bot_in_ms", "int", "nil", min=0),
    ),
    MATCHED: (_f("room", "str"), _opt("bots", "int", min=0)),
    LEFT_QUEUE: (),
    DAILY_STARTED: (
        _f("room", "str"),
        _f("variant", "str", choices=VARIANTS),
        _f("date", "str"),
        _f("commitment", "str"),
        _f("results_at", "int"),
    ),
    DAILY_STANDINGS: (
        _f("variant", "str", choices=VARIANTS),
        _f("date", "str"),
        _f("revealed", "bool"),
        _f("commitment", "str", "nil"),
        _f("seed", "str", "nil"),
        _f("salt", "str", "nil"),
        _f("rows", "list", items="map"),
        _f("me", "map", "nil"),
    ),
    TOURNAMENTS: (
        _f("upcoming", "list", items="map"),
        _f("live", "list", items="map"),
        _f("finished", "list", items="map"),
    ),
    TOURNAMENT: (_f("tournament", "map"),),
    TOURNAMENT_STANDINGS: (
        _f("tournament", "str"),
        _f("version", "int", min=0),
        _f("page", "int", min=1),
        _f("pages", "int", min=1),
        _f("players", "int", min=0),
        _f("rows", "list", items="map"),
        _f("me", "map", "nil"),
        _f("final", "bool"),
    ),
    TOURNAMENT_JOINED: (_f("tournament", "str"),),
    TOURNAMENT_WITHDRAWN: (_f("tournament", "str"),),
    TOURNAMENT_UNFOLLOWED: (_f("tournament", "str"),),
    TOURNAMENT_PAIRED: (
        _f("tournament", "str"),
        _f("room", "str"),
        _f("race", "int", min=1),
        _f("players", "list", items="str"),
    ),
    BERSERKED: (
        _f("room", "str"),
        _f("player", "str"),
        _f("ends_at", "int", "nil"),
    ),
    CHALLENGE: (
        _f("code", "str"),
        _f("variant", "str", choices=VARIANTS),
        _f("creator", "str"),
        _f("invited", "list", items="str"),
        _f("capacity", "int", min=1),
        _f("players", "int", min=0),
        _f("created_at", "int"),
        _f("closes_at", "int"),
        _f("status", "str", choices=("open", "settled")),
        _f("settled_reason", "str", "nil"),
        _f("commitment", "str"),
        _f("seed", "str", "nil"),
        _f("salt", "str", "nil"),
        _f("visible", "bool"),
        _f("rows", "list", items="map"),
        _f("me", "map", "nil"),
        _f("may_play", "bool"),
        _f("link", "str"),
    ),
    CHALLENGE_STARTED: (
        _f("room", "str"),
        _f("challenge", "str"),
        _f("variant", "str", choices=VARIANTS),
        _f("commitment", "str"),
        _f("closes_at", "int"),
    ),
    CHALLENGE_LIST: (_f("challenges", "list", items="map"),),
    REPORT_FILED: (_f("name", "str"), _f("reason", "str", choices=REPORT_REASONS)),
    MOD_QUEUE_ROWS: (_f("rows", "list", items="map"),),
    MOD_LOG_ROWS: (_f("rows", "list", items="map"),),
    MOD_ACCOUNT: (
        _f("account", "str"),
        _f("name", "str"),
        _f("marked", "bool"),
        _f("closed", "bool"),
        _f("reports", "list", items="map"),
        _f("actions", "list", items="map"),
        _f("assessment", "map"),
        _f("games", "list", items="map"),
    ),
    MOD_DONE: (
        _f("at", "int"),
        _f("moderator", "str"),
        _f("action", "str", choices=MOD_ACTIONS),
        _f("account", "str"),
        _f("name", "str"),
        _f("why", "str"),
        _opt("new_name", "str"),
    ),
    GAME_ANALYSIS: (
        _f("room", "str"),
        _f("player", "str"),
        _f("name", "str"),
        _f("variant", "str", choices=VARIANTS),
        _f("solver_version", "int"),
        _f("max_nodes", "int"),
        _f("nodes", "int"),
        _f("deal", "str", choices=("won", "lost", "unknown")),
        _f("losing_move", "int", "nil"),
        _f("won_until", "int"),
        _f("lost_from", "int"),
        _f("line", "list", items="str"),
        _f("moves", "list", items="map"),
    ),
    ERROR: (
        _f("code", "str"),
        _f("reason", "str"),
        _f("ref", "int", "str", "nil", max_len=MAX_REF_LEN, allow_empty=True),
    ),
}

MESSAGES: dict[str, tuple[Field, ...]] = {**CLIENT_MESSAGES, **SERVER_MESSAGES}
_REF = _opt("ref", "int", "str", "nil", max_len=MAX_REF_LEN, allow_empty=True)


def validate(msg: Mapping[str, Any]) -> dict[str, Any]:
    """Check a message against its type's fields; returns it as a plain dict."""
    if not isinstance(msg, Mapping):
        raise BadFrame(f"a message is a map, not {_kind_of(msg)}")
    kind = msg.get("type")
    if not isinstance(kind, str):
        raise BadFrame("a message needs a string 'type'")
    fields = MESSAGES.get(kind)
    if fields is None:
        raise UnknownType(f"unknown message type {kind[:40]!r}")
    for field in (*fields, _REF):
        if field.name in msg:
            field.check(msg[field.name])
        elif field.required:
            raise BadField(f"{kind} needs field {field.name!r}", field=field.name)
    return dict(msg)


def encode(msg: Mapping[str, Any]) -> bytes:
    """One message as one frame's bytes, checked first so a bug never reaches the wire."""
    validate(msg)
    return msgpack.packb(dict(msg), use_bin_type=True)


def encode_unchecked(msg: Mapping[str, Any]) -> bytes:
    """One frame's bytes without the field check, for the server's hot fan-out path."""
    return msgpack.packb(dict(msg), use_bin_type=True)


def decode(frame: bytes | bytearray | memoryview | str) -> dict[str, Any]:
    """One frame's bytes to a checked message; any flaw raises a ProtocolError with its code."""
    return validate(_unpack(frame))


def _unpack(frame: bytes | bytearray | memoryview | str) -> dict[str, Any]:
    """One frame's map, not checked yet."""
    if isinstance(frame, str):
        raise BadFrame("frames are binary msgpack, not text")
    try:
        msg = msgpack.unpackb(bytes(frame), raw=False, strict_map_key=True, use_list=True)
    except Exception as exc:  # msgpack raises a family of unrelated exceptions for bad bytes
        raise BadFrame(f"frame is not valid msgpack: {type(exc).__name__}") from None
    if not isinstance(msg, dict):
        raise BadFrame(f"a message is a map, not {_kind_of(msg)}")
    return msg


def _fits(field: Field, value: Any) -> bool:
    try:
        field.check(value)
    except BadField:
        return False
    return True


def valid_move_id(value: Any) -> bool:
    """Whether ``value`` may be a move's ``id`` (so a reject can echo it)."""
    return _fits(_MOVE_ID, value)


def valid_ref(value: Any) -> bool:
    """Whether ``value`` may be echoed as a ``ref`` (a nil ref is never echoed)."""
    return value is not None and _fits(_REF, value)


def error_message(code: str, reason: str, ref: Any = None) -> dict[str, Any]:
    """An ``error`` message; ``ref`` echoes the request's ``ref`` (nil when it had none)."""
    return {"type": ERROR, "code": code, "reason": reason, "ref": ref}


# ---- frames built from packed parts ------------------------------------------------------------

# One packer reused: msgpack.packb builds a Packer per call, which was most of packing an event
# (bench/recovery.py profile: every event of a rebuild is packed once).
_packer = msgpack.Packer(use_bin_type=True)
pack = _packer.pack
"""Pack one value (as ``encode_unchecked`` would, without the copy into a dict)."""


def array_header(count: int) -> bytes:
    """The msgpack header of an array of ``count`` items (the items follow it, packed)."""
    if count < 16:
        return bytes((0x90 | count,))
    if count < 0x10000:
        return b"\xdc" + count.to_bytes(2, "big")
    return b"\xdd" + count.to_bytes(4, "big")


def open_map(msg: dict[str, Any]) -> bytes:
    """``msg`` encoded with room for one more field: ``open_map(msg) + pack(key) + packed`` are
    the bytes of packing ``{**msg, key: value}`` (a map sent to many, each with its own field,
    is packed once)."""
    if len(msg) < 15:  # both maps are fixmaps: the count is in byte 0, one packing call
        return bytes((0x80 | (len(msg) + 1),)) + _packer.pack(msg)[1:]
    parts = [_packer.pack_map_header(len(msg) + 1)]
    for name, value in msg.items():
        parts += (_packer.pack(name), _packer.pack(value))
    return b"".join(parts)


def packed_with(msg: dict[str, Any], key: str, packed: bytes) -> bytes:
    """``msg`` encoded as a frame, plus one field ``key`` (not in ``msg``) whose value is
    already packed: the bytes of packing ``{**msg, key: value}``."""
    return b"".join((open_map(msg), _packer.pack(key), packed))


def packed_list(items: Sequence[bytes]) -> bytes:
    """A msgpack array of already-packed items."""
    return array_header(len(items)) + b"".join(items)


_BATCH_HEAD = msgpack.packb({"type": BATCH, "messages": None})[:-1]  # up to the list


def batch_frame(frames: Sequence[bytes]) -> bytes:
    """One ``batch`` frame holding already-encoded messages, without decoding them."""
    return b"".join((_BATCH_HEAD, array_header(len(frames)), *frames))


def decode_frame(frame: bytes | bytearray | memoryview | str) -> list[dict[str, Any]]:
    """The messages of one frame: one, or a ``batch``'s in order, each checked as if alone.

    A message of a batch that does not check (a type a newer server added) is skipped and the
    rest kept; a frame that is not a batch raises what ``decode`` would."""
    msg = _unpack(frame)
    if msg.get("type") != BATCH:
        return [validate(msg)]
    inner = msg.get("messages")
    if not isinstance(inner, list):
        raise BadFrame("a batch needs a list of messages")
    out = []
    for item in inner:
        try:
            out.append(validate(item))
        except ProtocolError:
            continue  # one message a newer server added: skip it, keep the rest
    return out


# ---- fairness (docs/protocol.md, "Fairness") ---------------------------------------------------


def commitment(secret: str, salt: str) -> str:
    """hex SHA-256 of ``secret + ":" + salt``: published at creation, checked at the end."""
    return hashlib.sha256(f"{secret}:{salt}".encode()).hexdigest()


def deck_secret(deck: Iterable[str]) -> str:
    """The committed text of a room created from an explicit deck."""
    return " ".join(deck)


def commitment_ok(seed: str | None, salt: str, published: str) -> bool:
    """Whether the revealed seed and salt match the commitment published at the start (a deck
    room reveals no seed: nothing to check)."""
    return seed is not None and commitment(seed, salt) == published
