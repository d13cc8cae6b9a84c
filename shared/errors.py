"""One exception hierarchy for the whole product, so every error on the wire has a code.

    ArenaError                 base; ``code`` is the stable wire code, ``reason`` the human text
    ├── ClientError            the client's fault: bad input, illegal move, not allowed
    │   ├── ProtocolError      a frame or message that does not follow docs/protocol.md
    │   └── IllegalMove        a move the rules (RULES.md) do not allow, or one that is malformed
    ├── ServerError            the server's fault: store down, corrupt data, a bug
    │   └── CorruptEvent       a stored event that cannot be decoded
    └── ConflictError          a concurrency conflict: retrying with fresh state may succeed
        └── WrongExpectedVersion  an append whose expected stream version is stale

Modules add leaf classes with their own ``code``; nobody raises bare ``Exception`` at the wire.
"""

from __future__ import annotations


class ArenaError(Exception):
    """Base of every error the product reports; carries a stable ``code``."""

    code: str = "error"

    def __init__(self, reason: str, *, code: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        if code is not None:
            self.code = code

    def __str__(self) -> str:
        return self.reason


class ClientError(ArenaError):
    """The client's fault; the server answers with the code and goes on serving."""

    code = "bad_request"


class ProtocolError(ClientError):
    """A frame or message that breaks the protocol."""

    code = "protocol_error"


class IllegalMove(ClientError):
    """A move the rules do not allow in this position, or a malformed move."""

    code = "illegal_move"


class ServerError(ArenaError):
    """The server's fault; the client may retry later."""

    code = "server_error"


class CorruptEvent(ServerError):
    """A stored event that is not valid msgpack or has an unknown schema version."""

    code = "corrupt_event"


class ConflictError(ArenaError):
    """A concurrency conflict: someone else changed the state first."""

    code = "conflict"


class WrongExpectedVersion(ConflictError):
    """An append stated a stream version that is no longer the current one."""

    code = "version_conflict"

    def __init__(self, stream: str, expected: int, actual: int | None = None) -> None:
        detail = f", it is at {actual}" if actual is not None else ""
        super().__init__(f"stream {stream!r} is not at version {expected}{detail}")
        self.stream = stream
        self.expected = expected
        self.actual = actual


class ArchiveUnavailable(ServerError):
    """The archive of finished rooms cannot be reached or written (database down, disk full):
    a finished room that left the live store cannot be read now; try again later."""

    code = "archive_unavailable"


class CorruptRecord(ServerError):
    """A finished room's archived record cannot be decoded: that room cannot be served."""

    code = "corrupt_record"

    def __init__(self, room: str, why: str) -> None:
        super().__init__(f"the archived record of room {room!r} is corrupt: {why}")
        self.room = room
        self.why = why
