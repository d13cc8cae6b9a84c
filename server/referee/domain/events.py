"""The referee's events, each defined once: a report a player filed, and an action a moderator
took. Reports and actions are two streams, so the audit log holds only what moderators did."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from server.kernel.schema import Schema

REFEREE_EVENT_VERSION = 1
REASONS = ("cheat", "name", "abuse", "other")
ACTIONS = ("mark", "unmark", "close", "reopen", "rename")
MAX_NOTE = 500
MAX_WHY = 500


@dataclass(frozen=True, slots=True)
class ReportFiled:
    """``reporter`` says ``reported`` (both folded names) broke a rule: ``reason`` one of
    ``REASONS``, ``race`` the room it happened in, if any, and the reporter's ``note``."""

    TYPE: ClassVar[str] = "report_filed"
    at: int
    reporter: str
    reported: str
    name: str  # the reported account's name as shown
    reason: str
    race: str | None
    note: str


@dataclass(frozen=True, slots=True)
class ModeratorActed:
    """Who did what to which account, and why: one line of the audit log. ``name`` is the
    account's name when acted on; a rename's ``new_name`` the one it gave (None otherwise)."""

    TYPE: ClassVar[str] = "moderator_acted"
    at: int
    moderator: str
    action: str
    account: str
    name: str
    why: str
    new_name: str | None = None


RefereeEvent = ReportFiled | ModeratorActed

SCHEMA: Schema[RefereeEvent] = Schema(
    "referee",
    REFEREE_EVENT_VERSION,
    (ReportFiled, ModeratorActed),
    defaults={"new_name": None},  # lines logged before renames were
)
encode = SCHEMA.encode
decode = SCHEMA.decode

REPORTS_STREAM = "{referee}:reports"
LOG_STREAM = "{referee}:log"
