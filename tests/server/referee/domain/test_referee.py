"""The referee's pure rules: who may report whom, which reports wait for a moderator, which
actions make sense now, and the queue's order."""

from __future__ import annotations

import pytest

from server.kernel.errors import AlreadyReported, SelfReport, WrongStatus
from server.referee.domain import referee as r
from server.referee.domain.events import ModeratorActed, encode
from shared.protocol import BadField


def filed(referee: r.Referee, reporter: str, reported: str, reason: str, at: int) -> None:
    event = r.decide_report(
        referee,
        reporter=reporter,
        reported=reported,
        name=reported.title(),
        reason=reason,
        race=None,
        note=f"{reporter} says",
        now=at,
    )
    referee.fold_reports([encode(event)])


def acted(referee: r.Referee, action: str, account: str, at: int) -> None:
    event = r.decide_action(
        referee,
        moderator="mia",
        action=action,
        account=account,
        name=account.title(),
        why="seen it",
        now=at,
    )
    referee.fold_log([encode(event)])


def test_nobody_reports_themselves() -> None:
    with pytest.raises(SelfReport):
        filed(r.Referee(), "ann", "ann", "cheat", 1)


def test_one_open_report_per_reporter_account_and_reason() -> None:
    referee = r.Referee()
    filed(referee, "ann", "bob", "cheat", 1)
    with pytest.raises(AlreadyReported):
        filed(referee, "ann", "bob", "cheat", 2)
    filed(referee, "ann", "bob", "name", 3)  # another reason
    filed(referee, "cat", "bob", "cheat", 4)  # another reporter
    assert len(referee.open_reports()) == 3


def test_an_action_on_the_account_closes_its_reports_and_a_new_one_may_come() -> None:
    referee = r.Referee()
    filed(referee, "ann", "bob", "cheat", 1)
    acted(referee, "mark", "bob", 5)
    assert referee.open_reports() == []
    assert r.queue(referee) == []
    filed(referee, "ann", "bob", "cheat", 6)  # the same report again, after the action
    assert [x.at for x in referee.open_reports()] == [6]


def test_actions_undo_only_what_holds() -> None:
    referee = r.Referee()
    with pytest.raises(WrongStatus):
        acted(referee, "unmark", "bob", 1)
    with pytest.raises(WrongStatus):
        acted(referee, "reopen", "bob", 1)
    acted(referee, "mark", "bob", 2)
    acted(referee, "close", "bob", 3)
    assert (referee.marked, referee.closed) == ({"bob"}, {"bob"})
    with pytest.raises(WrongStatus):
        acted(referee, "mark", "bob", 4)
    acted(referee, "unmark", "bob", 5)
    acted(referee, "reopen", "bob", 6)
    assert (referee.marked, referee.closed) == (set(), set())
    assert [a.action for a in referee.actions] == ["mark", "close", "unmark", "reopen"]


def test_every_action_says_why() -> None:
    with pytest.raises(BadField):
        r.decide_action(
            r.Referee(),
            moderator="mia",
            action="mark",
            account="bob",
            name="Bob",
            why="  ",
            now=1,
        )


def test_the_queue_is_most_reported_first_with_the_evidence() -> None:
    referee = r.Referee()
    filed(referee, "ann", "bob", "cheat", 1)
    filed(referee, "cat", "bob", "cheat", 2)
    filed(referee, "ann", "dan", "name", 3)
    rows = r.queue(referee)
    assert [row["account"] for row in rows] == ["bob", "dan"]
    assert rows[0]["reports"] == 2
    assert rows[0]["reasons"] == {"cheat": 2}
    assert rows[0]["latest"] == {"at": 2, "note": "cat says", "race": None}
    assert rows[0]["marked"] is False


def renamed(referee: r.Referee, name: str, new_name: str | None, at: int) -> ModeratorActed:
    return r.decide_action(
        referee,
        moderator="mia",
        action="rename",
        account="bob",
        name=name,
        why=" a slur ",
        now=at,
        new_name=new_name,
    )


def test_a_rename_is_logged_with_the_old_name_and_the_new() -> None:
    referee = r.Referee()
    filed(referee, "ann", "bob", "name", 1)
    with pytest.raises(BadField):
        renamed(referee, "Bob", None, 2)  # no new name
    with pytest.raises(BadField):
        renamed(referee, "Bob", "Bob", 2)  # the name it has
    event = renamed(referee, "Bob", "Zed", 2)
    assert (event.name, event.new_name, event.why) == ("Bob", "Zed", "a slur")
    referee.fold_log([encode(event)])
    assert referee.open_reports() == []  # acted on: the report is answered
    assert r.action_row(referee.actions[0])["new_name"] == "Zed"
    assert "new_name" not in r.action_row(ModeratorActed(1, "mia", "mark", "bob", "Bob", "x"))
    with pytest.raises(BadField):
        renamed(referee, "Zed", "Zed", 3)  # logged already


def test_a_rename_done_but_not_logged_is_logged_by_the_retry() -> None:
    referee = r.Referee()  # the account is named Zed already, and no line says so
    assert renamed(referee, "Zed", "Zed", 2).new_name == "Zed"


def test_lines_logged_before_renames_read_without_a_new_name() -> None:
    line = encode(ModeratorActed(1, "mia", "mark", "bob", "Bob", "x"))
    del line["new_name"]
    referee = r.Referee()
    referee.fold_log([line])
    assert referee.actions[0].new_name is None
