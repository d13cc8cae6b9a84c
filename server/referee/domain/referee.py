"""The referee folded from its two streams, and its decisions, pure: who may report whom, which
reports are still open (none since a moderator acted on the account), and which actions make
sense now. Who is a moderator is the server's configuration, checked by the service."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from server.kernel.errors import AlreadyReported, SelfReport, WrongStatus
from server.kernel.names import fold_name
from server.referee.domain.events import ModeratorActed, ReportFiled, decode
from shared.protocol import BadField

_UNDONE = {"mark": "unmark", "close": "reopen"}


@dataclass
class Referee:
    """Reports and actions so far, each stream's version, and what holds on each account."""

    reports: list[ReportFiled] = field(default_factory=list)
    actions: list[ModeratorActed] = field(default_factory=list)
    reports_version: int = 0
    log_version: int = 0
    marked: set[str] = field(default_factory=set)
    closed: set[str] = field(default_factory=set)
    last_acted: dict[str, int] = field(default_factory=dict)  # account -> index in ``actions``

    def fold_reports(self, events: Iterable[Mapping[str, Any]]) -> None:
        for data in events:
            event = decode(data)
            assert isinstance(event, ReportFiled), event
            self.reports.append(event)
            self.reports_version += 1

    def fold_log(self, events: Iterable[Mapping[str, Any]]) -> None:
        for data in events:
            event = decode(data)
            assert isinstance(event, ModeratorActed), event
            _EFFECTS[event.action](self, event.account)
            self.last_acted[event.account] = len(self.actions)
            self.actions.append(event)
            self.log_version += 1

    def is_open(self, report: ReportFiled) -> bool:
        """A report waits for a moderator until one acts on the account after it was filed."""
        acted = self.last_acted.get(report.reported)
        return acted is None or self.actions[acted].at < report.at

    def open_reports(self) -> list[ReportFiled]:
        return [r for r in self.reports if self.is_open(r)]


def decide_report(
    referee: Referee,
    *,
    reporter: str,
    reported: str,
    name: str,
    reason: str,
    race: str | None,
    note: str,
    now: int,
) -> ReportFiled:
    """A report, or why not: nobody reports themselves, and one open report per reporter,
    account and reason (a second would only shout louder)."""
    if reporter == reported:
        raise SelfReport("you cannot report yourself")
    for report in referee.open_reports():
        if (report.reporter, report.reported, report.reason) == (reporter, reported, reason):
            raise AlreadyReported(
                f"you reported {name} for {reason} already; a moderator will look at it"
            )
    return ReportFiled(now, reporter, reported, name, reason, race, note)


def decide_action(
    referee: Referee,
    *,
    moderator: str,
    action: str,
    account: str,
    name: str,
    why: str,
    now: int,
    new_name: str | None = None,
) -> ModeratorActed:
    """A moderator's action, or why not: every action says why, and undoes only what holds."""
    if not why.strip():
        raise BadField("field 'reason' must say why", field="reason")
    if action == "rename":
        return decide_rename(referee, moderator, account, name, new_name, why.strip(), now)
    held = account in (referee.marked if action in ("mark", "unmark") else referee.closed)
    if action in _UNDONE and held:
        raise WrongStatus(f"{name} is already {'marked' if action == 'mark' else 'closed'}")
    if action not in _UNDONE and not held:
        raise WrongStatus(f"{name} is not {'marked' if action == 'unmark' else 'closed'}")
    return ModeratorActed(now, moderator, action, account, name, why.strip())


def decide_rename(
    referee: Referee,
    moderator: str,
    account: str,
    name: str,
    new_name: str | None,
    why: str,
    now: int,
) -> ModeratorActed:
    """A rename, or why not: it names a new name, not the one the account has, unless no line
    of the log gave it that name (the effect done, the process gone before the log's append: the
    retry logs it)."""
    if new_name is None:
        raise BadField("field 'new_name' is required to rename", field="new_name")
    logged = logged_name(referee, account)
    unlogged = logged != name if logged is not None else fold_name(name) != account
    if new_name == name and not unlogged:
        raise BadField(f"field 'new_name': the account is named {name} already", field="new_name")
    return ModeratorActed(now, moderator, "rename", account, name, why, new_name)


def logged_name(referee: Referee, account: str) -> str | None:
    """The name the log's latest rename of the account gave; None when none did."""
    renames = [a for a in referee.actions if a.account == account and a.action == "rename"]
    return renames[-1].new_name if renames else None


def queue(referee: Referee, flagged: Iterable[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """The moderators' queue: each account with open reports or an automatic fair-play flag,
    most evidence first (open reports plus the assessment's points), the evidence in one row
    (how many reports, for what, the latest note and race; the flag's level and reasons). A
    flag is open until a moderator acts on the account after its latest assessed game."""
    rows: dict[str, dict[str, Any]] = {}

    def row_of(account: str, name: str) -> dict[str, Any]:
        return rows.setdefault(
            account,
            {
                "account": account,
                "name": name,
                "reports": 0,
                "reasons": {},
                "latest": None,
                "flag": None,
                "marked": account in referee.marked,
                "closed": account in referee.closed,
            },
        )

    for report in referee.open_reports():
        row = row_of(report.reported, report.name)
        row["reports"] += 1
        row["reasons"][report.reason] = row["reasons"].get(report.reason, 0) + 1
        row["latest"] = {"at": report.at, "note": report.note, "race": report.race}
    for flag in flagged:
        acted = referee.last_acted.get(flag["account"])
        if acted is not None and referee.actions[acted].at >= flag["last_at"]:
            continue
        row_of(flag["account"], flag["name"])["flag"] = {
            "level": flag["level"],
            "points": flag["points"],
            "reasons": list(flag["reasons"]),
            "evidence": flag["evidence"],
            "games": flag["games"],
        }
    return sorted(rows.values(), key=_weight)


def _weight(row: Mapping[str, Any]) -> tuple[int, int, str]:
    points = row["flag"]["points"] if row["flag"] else 0
    latest = row["latest"]["at"] if row["latest"] else 0
    return (-(row["reports"] + points), -latest, row["account"])


def report_row(report: ReportFiled) -> dict[str, Any]:
    return {
        "at": report.at,
        "reporter": report.reporter,
        "account": report.reported,
        "name": report.name,
        "reason": report.reason,
        "race": report.race,
        "note": report.note,
    }


def action_row(action: ModeratorActed) -> dict[str, Any]:
    return {
        "at": action.at,
        "moderator": action.moderator,
        "action": action.action,
        "account": action.account,
        "name": action.name,
        "why": action.why,
        **({"new_name": action.new_name} if action.new_name is not None else {}),
    }


_EFFECTS = {
    "mark": lambda r, account: r.marked.add(account),
    "unmark": lambda r, account: r.marked.discard(account),
    "close": lambda r, account: r.closed.add(account),
    "reopen": lambda r, account: r.closed.discard(account),
    "rename": lambda r, account: None,  # the name is the account's, not the referee's
}
"""What each action holds on an account, by the action's name."""
