"""The referee's events, each defined once: a report a player filed, an action a moderator
took, a rated game's fair-play assessment and a browser's lost focus. Reports and actions are
two streams, so the audit log holds only what moderators did; an account's assessments and
focus lost are two streams of its own, in its own hash tag (``{referee:<account>}``), so a Redis
Cluster spreads them and an account's stay together in one slot."""

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


@dataclass(frozen=True, slots=True)
class GameAssessed:
    """One rated game of ``account`` (as ``player`` in ``room``) assessed for fair play
    (server/referee/domain/assessment.py says what each signal means): written once per game.
    ``time_difficulty`` is None when the game had too few timed moves; ``deal`` and ``known``
    are the analysis' verdicts of the deal and of the position once the deck was known
    (``unknown`` when it was not analysed)."""

    TYPE: ClassVar[str] = "game_assessed"
    at: int
    room: str
    player: str
    account: str
    name: str
    variant: str
    kind: str  # race, tournament, daily or challenge
    moves: int
    think_mean_ms: int
    think_spread: float
    even_streak: int
    timed_moves: int
    time_difficulty: float | None
    deal: str
    known: str  # the verdict of the position once the deck was known (the first redeal)
    won: bool
    kept: int
    judged: int
    focus_lost: int


@dataclass(frozen=True, slots=True)
class FocusLost:
    """The racer's browser page lost focus during a rated race: never shown to anyone but
    moderators, counted into that game's assessment."""

    TYPE: ClassVar[str] = "focus_lost"
    at: int
    room: str
    player: str


RefereeEvent = ReportFiled | ModeratorActed | GameAssessed | FocusLost

SCHEMA: Schema[RefereeEvent] = Schema(
    "referee",
    REFEREE_EVENT_VERSION,
    (ReportFiled, ModeratorActed, GameAssessed, FocusLost),
    defaults={"new_name": None},  # lines logged before renames were
)
encode = SCHEMA.encode
decode = SCHEMA.decode

REPORTS_STREAM = "{referee}:reports"
LOG_STREAM = "{referee}:log"


def assessed_stream(account: str) -> str:
    """An account's assessed games, one event per rated game."""
    return f"{{referee:{account}}}:assessed"


def focus_stream(account: str) -> str:
    """The focus an account's browser lost while racing rated games."""
    return f"{{referee:{account}}}:focus"


ASSESSMENT_DUE_INDEX = "assessment-due"  # room id -> when its rated race finished (ms)
FLAGGED_INDEX = "fairplay-flagged"  # account -> its points, value its standing (msgpack)
