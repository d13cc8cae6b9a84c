"""The account decisions and fold, with plain values."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.accounts.domain.accounts import (
    AccountClosed,
    AccountCreated,
    AccountRenamed,
    AccountReopened,
    KeyIssued,
    KeyRevoked,
    NameClaimed,
    NoticeTold,
    PasswordChanged,
    account_stream,
    check_name,
    check_password,
    decide_change_password,
    decide_close,
    decide_login,
    decide_logout,
    decide_register,
    decide_rename,
    decide_reopen,
    decide_told,
    decode,
    encode,
    fold_account,
    owner_of_name,
)
from server.kernel.errors import AccountClosed as AccountClosedError
from server.kernel.errors import BadCredentials, NameTaken, NoSuchAccount, NotLoggedIn
from server.kernel.names import fold_name
from shared.errors import CorruptEvent
from shared.protocol import BadField


def test_register_claims_the_name_with_a_first_key() -> None:
    events = decide_register(None, "Ann", password_hash="$argon2id$x", key_hash="k1", now=5)
    assert events == [AccountCreated(5, "Ann", "$argon2id$x"), KeyIssued(5, "k1")]
    account = fold_account(encode(e) for e in events)
    assert account is not None
    assert (account.id, account.name, account.keys, account.version) == (
        "ann",
        "Ann",
        frozenset({"k1"}),
        2,
    )


def test_register_of_a_taken_name_is_name_taken() -> None:
    taken = fold_account([encode(AccountCreated(1, "ann", "h"))])
    with pytest.raises(NameTaken):
        decide_register(taken, "ANN", password_hash="h2", key_hash="k", now=2)


def test_login_gives_one_answer_for_unknown_name_and_wrong_password() -> None:
    account = fold_account([encode(AccountCreated(1, "ann", "h"))])
    with pytest.raises(BadCredentials) as unknown:
        decide_login(None, verified=True, key_hash="k", rehashed=None, now=2)
    with pytest.raises(BadCredentials) as wrong:
        decide_login(account, verified=False, key_hash="k", rehashed=None, now=2)
    assert (unknown.value.code, unknown.value.reason) == (wrong.value.code, wrong.value.reason)


def test_login_rehashes_first_when_the_parameters_changed() -> None:
    account = fold_account([encode(AccountCreated(1, "ann", "old"))])
    events = decide_login(account, verified=True, key_hash="k", rehashed="new", now=3)
    assert events == [PasswordChanged(3, "new"), KeyIssued(3, "k")]
    after = fold_account([encode(AccountCreated(1, "ann", "old")), *(encode(e) for e in events)])
    assert after is not None
    assert after.password_hash == "new"
    assert after.keys == {"k"}


def test_logout_revokes_only_a_live_key() -> None:
    created, issued = AccountCreated(1, "ann", "h"), KeyIssued(1, "k")
    account = fold_account([encode(created), encode(issued)])
    assert decide_logout(account, key_hash="other", now=2) == []
    revoked = decide_logout(account, key_hash="k", now=2)
    assert revoked == [KeyRevoked(2, "k")]
    after = fold_account([encode(created), encode(issued), encode(revoked[0])])
    assert after is not None
    assert after.keys == frozenset()
    assert decide_logout(after, key_hash="k", now=3) == []


def test_a_new_password_revokes_every_key_but_the_asking_one() -> None:
    events = [AccountCreated(1, "ann", "old"), *(KeyIssued(1, k) for k in ("b", "a", "c"))]
    account = fold_account(encode(e) for e in events)
    changed = decide_change_password(
        account, verified=True, key_hash="a", password_hash="new", now=5
    )
    assert changed == [PasswordChanged(5, "new"), KeyRevoked(5, "b"), KeyRevoked(5, "c")]
    after = fold_account(encode(e) for e in [*events, *changed])
    assert after is not None
    assert (after.password_hash, after.keys) == ("new", frozenset({"a"}))


def test_a_new_password_needs_the_current_one_and_a_live_key() -> None:
    account = fold_account([encode(AccountCreated(1, "ann", "h")), encode(KeyIssued(1, "k"))])
    with pytest.raises(BadCredentials):
        decide_change_password(account, verified=False, key_hash="k", password_hash="n", now=2)
    for stale, key in ((account, "revoked"), (None, "k")):
        with pytest.raises(NotLoggedIn):
            decide_change_password(stale, verified=True, key_hash=key, password_hash="n", now=2)


def test_names_are_cleaned_and_folded() -> None:
    assert check_name("  Ann\x1b[31m  Lee ") == ("Ann Lee", "ann lee")
    assert fold_name("STRASSE") == fold_name("straße")
    with pytest.raises(BadField):
        check_name("\x1b[2J\u200b")
    assert check_name("x" * 40)[0] == "x" * 20


@pytest.mark.parametrize("password", ["", "short", "x" * 129])
def test_password_lengths_outside_the_limits_are_bad_field(password: str) -> None:
    with pytest.raises(BadField):
        check_password(password)
    with pytest.raises(BadField, match="new_password"):
        check_password(password, "new_password")


def test_the_account_stream_is_named_after_the_folded_name() -> None:
    assert account_stream("ann") == "{acct:ann}:account"


@given(st.sampled_from(["account_created", "key_issued", "key_revoked", "password_changed"]))
def test_events_round_trip_and_unknown_versions_are_corrupt(kind: str) -> None:
    event = {
        "account_created": AccountCreated(1, "a", "h"),
        "key_issued": KeyIssued(1, "k"),
        "key_revoked": KeyRevoked(1, "k"),
        "password_changed": PasswordChanged(1, "h"),
    }[kind]
    assert decode(encode(event)) == event
    with pytest.raises(CorruptEvent):
        decode({**encode(event), "v": 99})


def test_closing_revokes_every_key_and_refuses_logins_until_reopened() -> None:
    log = [AccountCreated(1, "ann", "h"), KeyIssued(1, "k1"), KeyIssued(2, "k2")]
    account = fold_account([encode(e) for e in log])
    closing = decide_close(account, now=3)
    assert closing == [AccountClosed(3), KeyRevoked(3, "k1"), KeyRevoked(3, "k2")]
    log += closing
    closed = fold_account([encode(e) for e in log])
    assert closed is not None
    assert closed.closed
    assert closed.keys == frozenset()
    assert decide_close(closed, now=4) == []
    with pytest.raises(AccountClosedError):
        decide_login(closed, verified=True, key_hash="k3", rehashed=None, now=4)
    with pytest.raises(BadCredentials):  # a wrong password says nothing of the closing
        decide_login(closed, verified=False, key_hash="k3", rehashed=None, now=4)
    log += decide_reopen(closed, now=5)
    reopened = fold_account([encode(e) for e in log])
    assert reopened is not None
    assert not reopened.closed
    assert decide_reopen(reopened, now=6) == []
    assert decide_login(reopened, verified=True, key_hash="k3", rehashed=None, now=6)[-1] == (
        KeyIssued(6, "k3")
    )
    assert log[-1] == AccountReopened(5)


def test_closing_or_reopening_no_account_is_no_such_account() -> None:
    with pytest.raises(NoSuchAccount):
        decide_close(None, now=1)
    with pytest.raises(NoSuchAccount):
        decide_reopen(None, now=1)


def test_a_rename_changes_the_shown_name_never_the_key_and_is_told_once() -> None:
    created = decide_register(None, "Ann", password_hash="$argon2id$x", key_hash="k1", now=1)
    account = fold_account(encode(e) for e in created)
    assert account is not None
    renamed = decide_rename(account, owner=None, name="Zed", why="an insult", now=2)
    assert renamed == [AccountRenamed(2, "Zed", "Ann", "an insult")]
    log = [*created, *renamed]
    account = fold_account(encode(e) for e in log)
    assert account is not None
    assert (account.id, account.name, account.keys) == ("ann", "Zed", frozenset({"k1"}))
    assert account.notice == "a moderator renamed your account from Ann to Zed: an insult"
    assert account.password_hash == "$argon2id$x"  # salted at random, not with the name
    assert decide_login(account, verified=True, key_hash="k2", rehashed=None, now=3)
    told = decide_told(account, now=4)
    assert told == [NoticeTold(4)]
    account = fold_account(encode(e) for e in [*log, *told])
    assert account is not None
    assert account.notice is None
    assert decide_told(account, now=5) == []
    assert decide_rename(account, owner=None, name="Zed", why="again", now=6) == []  # a retry


def test_a_rename_may_take_a_free_name_or_one_of_its_own_never_anothers() -> None:
    account = fold_account(
        encode(e) for e in decide_register(None, "Ann", password_hash="h", key_hash="k", now=1)
    )
    with pytest.raises(NameTaken):
        decide_rename(account, owner="bob", name="Bob", why="x", now=2)
    assert decide_rename(account, owner="ann", name="ANN", why="x", now=2)  # its own first name
    with pytest.raises(NoSuchAccount):
        decide_rename(None, owner=None, name="Zed", why="x", now=2)


def test_a_names_owner_is_its_first_account_or_the_one_that_claimed_it() -> None:
    assert owner_of_name("ann", []) is None
    assert owner_of_name("ann", [encode(AccountCreated(1, "Ann", "h"))]) == "ann"
    claimed = [encode(NameClaimed(1, "bob"))]
    assert owner_of_name("zed", claimed) == "bob"
    assert fold_account(claimed) is None  # a claim is no account of its own


@given(st.sampled_from(["account_renamed", "name_claimed", "notice_told"]))
def test_the_rename_events_round_trip(kind: str) -> None:
    event = {
        "account_renamed": AccountRenamed(1, "Zed", "Ann", "why"),
        "name_claimed": NameClaimed(1, "ann"),
        "notice_told": NoticeTold(1),
    }[kind]
    assert decode(encode(event)) == event
    with pytest.raises(CorruptEvent):
        decode({**encode(event), "v": 99})
