"""What the store raises, in the product's one hierarchy (shared/errors.py): a caller catches
``StoreError`` for anything the store's backend did, never a client library's own families."""

from __future__ import annotations

from shared.errors import CorruptEvent, ServerError


class StoreError(ServerError):
    """The store's backend failed a command (a Redis error reply, a cluster without a primary
    for the slot after the patience ran out, ...); the caller may retry later."""

    code = "store_error"


class StoreUnavailable(StoreError):
    """The store's backend cannot be reached (refused, reset, timed out); retry later."""

    code = "store_unavailable"


class CorruptEntry(CorruptEvent, StoreError):
    """A stored entry that cannot be decoded; names the stream and the entry so it can be found."""

    code = "corrupt_event"

    def __init__(self, stream: str, entry: str, why: str) -> None:
        super().__init__(f"stream {stream!r} entry {entry}: {why}")
        self.stream = stream
        self.entry = entry
        self.why = why


class NotReplicated(StoreError):
    """An append reached the primary but fewer replicas than asked confirmed it in time
    (``--ack-after-replicas``): it may still count, but it could be lost with the primary."""

    code = "not_replicated"

    def __init__(self, stream: str, version: int, replicas: int, wanted: int) -> None:
        super().__init__(
            f"stream {stream!r} version {version}: {replicas} of {wanted} replicas confirmed it"
        )
        self.stream = stream
        self.version = version
        self.replicas = replicas
        self.wanted = wanted


class DataDirError(StoreError):
    """The embedded store's data directory cannot be used (not made, not writable, a database
    this release cannot read); the server stops at start with this one line."""

    code = "data_dir_error"


class DataDirInUse(DataDirError):
    """Another running server holds the data directory: one process owns it, so two servers
    never write one database at once."""

    code = "data_dir_in_use"
