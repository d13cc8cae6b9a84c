"""Accounts: their events (one home), the account as folded from its stream, and the decisions.

An account is a stream of its own, named after its case-folded name, so claiming a name is
appending ``account_created`` at expected version 0: atomic on any store and on a Redis
Cluster (one stream, one slot). Passwords are kept as Argon2id hashes and account keys as
SHA-256 hashes; neither the password nor a key is ever in an event. Decisions are pure: the
shell hashes and verifies (off the event loop) and passes the results in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from server.kernel.errors import AccountClosed as AccountClosedError
from server.kernel.errors import BadCredentials, NameTaken, NoSuchAccount, NotLoggedIn
from server.kernel.names import DEFAULT_NAME, bot_level_of_name, clean_name, fold_name
from server.kernel.schema import Schema
from shared.protocol import BadField

ACCOUNT_EVENT_VERSION = 1
MIN_PASSWORD = 8
MAX_PASSWORD = 128  # characters; Argon2 takes any length, but a megabyte of it costs us
KEY_BYTES = 32  # 256 bits from `secrets`


@dataclass(frozen=True, slots=True)
class AccountEvent:
    TYPE: ClassVar[str]
    at: int


@dataclass(frozen=True, slots=True)
class AccountCreated(AccountEvent):
    """The name claimed: ``name`` as shown, ``password_hash`` an Argon2id PHC string."""

    TYPE: ClassVar[str] = "account_created"
    name: str
    password_hash: str


@dataclass(frozen=True, slots=True)
class KeyIssued(AccountEvent):
    """A login: ``key_hash`` is the SHA-256 (hex) of the account key, never the key."""

    TYPE: ClassVar[str] = "key_issued"
    key_hash: str


@dataclass(frozen=True, slots=True)
class KeyRevoked(AccountEvent):
    TYPE: ClassVar[str] = "key_revoked"
    key_hash: str


@dataclass(frozen=True, slots=True)
class PasswordChanged(AccountEvent):
    """A new hash of the password: a rehash with today's parameters, or a new password."""

    TYPE: ClassVar[str] = "password_changed"
    password_hash: str


@dataclass(frozen=True, slots=True)
class AccountClosed(AccountEvent):
    """Closed by a moderator: no login until it is reopened (its keys are revoked with it)."""

    TYPE: ClassVar[str] = "account_closed"


@dataclass(frozen=True, slots=True)
class AccountReopened(AccountEvent):
    TYPE: ClassVar[str] = "account_reopened"


@dataclass(frozen=True, slots=True)
class AccountRenamed(AccountEvent):
    """A moderator renamed the account from ``old_name`` to ``name``, saying ``why``: the
    account's key (its stream, its ratings, its seats) stays its first name's fold."""

    TYPE: ClassVar[str] = "account_renamed"
    name: str
    old_name: str
    why: str


@dataclass(frozen=True, slots=True)
class NameClaimed(AccountEvent):
    """The first event of a name's stream whose name an account took by a rename: the name is
    ``account``'s (the key of the account that holds it), taken as registration takes one."""

    TYPE: ClassVar[str] = "name_claimed"
    account: str


@dataclass(frozen=True, slots=True)
class NoticeTold(AccountEvent):
    """The player was told of the rename (a login answered with the notice): told once."""

    TYPE: ClassVar[str] = "notice_told"


SCHEMA: Schema[AccountEvent] = Schema(
    "account",
    ACCOUNT_EVENT_VERSION,
    (
        AccountCreated,
        KeyIssued,
        KeyRevoked,
        PasswordChanged,
        AccountClosed,
        AccountReopened,
        AccountRenamed,
        NameClaimed,
        NoticeTold,
    ),
)
encode = SCHEMA.encode
decode = SCHEMA.decode


def account_stream(folded: str) -> str:
    """One stream per account, its hash tag the folded name: the claim is one slot's append.
    A name an account took by a rename has a stream of that form too, its ``NameClaimed``."""
    return f"{{acct:{folded}}}:account"


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


@dataclass(frozen=True)
class Account:
    """An account as folded from its stream."""

    id: str  # the folded name
    name: str
    password_hash: str
    keys: frozenset[str] = field(default_factory=frozenset)
    version: int = 0
    closed: bool = False
    notice: str | None = None  # a rename the player has not been told of yet


def fold_account(events: Iterable[Mapping[str, Any]]) -> Account | None:
    """The account its stream's events make; None for an empty stream."""
    account: Account | None = None
    for version, data in enumerate(events, 1):
        event = decode(data)
        if isinstance(event, AccountCreated):
            account = Account(fold_name(event.name), event.name, event.password_hash)
        elif account is None:
            continue
        elif isinstance(event, KeyIssued):
            account = replace(account, keys=account.keys | {event.key_hash})
        elif isinstance(event, KeyRevoked):
            account = replace(account, keys=account.keys - {event.key_hash})
        elif isinstance(event, PasswordChanged):
            account = replace(account, password_hash=event.password_hash)
        elif isinstance(event, AccountClosed | AccountReopened):
            account = replace(account, closed=isinstance(event, AccountClosed))
        elif isinstance(event, AccountRenamed):
            notice = f"a moderator renamed your account from {event.old_name} to {event.name}"
            account = replace(account, name=event.name, notice=f"{notice}: {event.why}")
        elif isinstance(event, NoticeTold):
            account = replace(account, notice=None)
        account = replace(account, version=version)
    return account


def owner_of_name(folded: str, events: Iterable[Mapping[str, Any]]) -> str | None:
    """The key of the account a name's stream gives the name to: the account itself (its first
    name), the one a rename gave it to, or None for a free name. A name once held stays its
    account's: nobody else may take it to pass for them."""
    for data in events:
        event = decode(data)
        if isinstance(event, AccountCreated):
            return folded
        if isinstance(event, NameClaimed):
            return event.account
    return None


def check_name(raw: str) -> tuple[str, str]:
    """The name an account gets for ``raw`` (cleaned as display names are) and its folded
    form; bad_field when nothing printable is left."""
    name = clean_name(raw)
    if name == DEFAULT_NAME and fold_name(raw.strip()) != DEFAULT_NAME:
        raise BadField("field 'name' has nothing printable", field="name")
    if bot_level_of_name(name) is not None:
        raise BadField("field 'name' looks like a bot's: '(bot N)' is theirs", field="name")
    return name, fold_name(name)


def check_password(password: str, field: str = "password") -> None:
    if not MIN_PASSWORD <= len(password) <= MAX_PASSWORD:
        raise BadField(
            f"field {field!r} must be {MIN_PASSWORD}..{MAX_PASSWORD} characters", field=field
        )


def decide_register(
    existing: Account | None, name: str, *, password_hash: str, key_hash: str, now: int
) -> list[AccountEvent]:
    """A new account with its first key; name_taken if the stream already holds one."""
    if existing is not None:
        raise NameTaken(f"the name {name!r} is taken")
    return [AccountCreated(now, name, password_hash), KeyIssued(now, key_hash)]


def decide_login(
    account: Account | None,
    *,
    verified: bool,
    key_hash: str,
    rehashed: str | None,
    now: int,
) -> list[AccountEvent]:
    """A new key for a verified password (and the hash with today's parameters, if it was
    made with others); the same bad_credentials for an unknown name and a wrong password."""
    if account is None or not verified:
        raise BadCredentials("unknown name or wrong password")
    if account.closed:
        raise AccountClosedError(f"the account {account.name!r} is closed by a moderator")
    events: list[AccountEvent] = []
    if rehashed is not None:
        events.append(PasswordChanged(now, rehashed))
    events.append(KeyIssued(now, key_hash))
    return events


def decide_logout(account: Account | None, *, key_hash: str, now: int) -> list[AccountEvent]:
    """Revoke the key; nothing if it is not (or no longer) the account's."""
    if account is None or key_hash not in account.keys:
        return []
    return [KeyRevoked(now, key_hash)]


def decide_change_password(
    account: Account | None, *, verified: bool, key_hash: str, password_hash: str, now: int
) -> list[AccountEvent]:
    """The new password's hash, and every key but the one asking revoked: whoever held the old
    password (or a key it gave) is logged out everywhere else. bad_credentials for a wrong
    current password, not_logged_in when the asking key is no longer live."""
    if account is None or key_hash not in account.keys:
        raise NotLoggedIn("this connection is not logged in")
    if not verified:
        raise BadCredentials("the current password is wrong")
    others = sorted(account.keys - {key_hash})
    return [PasswordChanged(now, password_hash), *(KeyRevoked(now, k) for k in others)]


def decide_close(account: Account | None, *, now: int) -> list[AccountEvent]:
    """Closed, every live key revoked (each login ends, on every process); nothing for an
    account already closed."""
    if account is None:
        raise NoSuchAccount("no such account")
    if account.closed:
        return []
    return [AccountClosed(now), *(KeyRevoked(now, k) for k in sorted(account.keys))]


def decide_rename(
    account: Account | None, *, owner: str | None, name: str, why: str, now: int
) -> list[AccountEvent]:
    """The account renamed to ``name`` (checked by ``check_name``), whose stream's ``owner`` is
    the account itself (its first name, or one it held or claimed) or nobody: name_taken for
    another account's; nothing when the account has that name already (a retry)."""
    if account is None:
        raise NoSuchAccount("no such account")
    if owner is not None and owner != account.id:
        raise NameTaken(f"the name {name!r} is taken")
    if account.name == name:
        return []
    return [AccountRenamed(now, name, account.name, why)]


def decide_told(account: Account | None, *, now: int) -> list[AccountEvent]:
    """The rename's notice told; nothing when there is none (told already, by another login)."""
    return [NoticeTold(now)] if account is not None and account.notice is not None else []


def decide_reopen(account: Account | None, *, now: int) -> list[AccountEvent]:
    """Open again (a new login issues a key); nothing for an account that is open."""
    if account is None:
        raise NoSuchAccount("no such account")
    return [AccountReopened(now)] if account.closed else []
