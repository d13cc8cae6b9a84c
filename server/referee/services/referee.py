"""The referee's I/O: a report filed (rate-limited per account, on every process together), a
moderator's action carried out and written to the audit log, and what moderators read.

A rename changes the account's shown name, never its key (docs/operations.md, "Moderation").
An action's effect goes first and is idempotent (a mark already folded, an account already
closed change nothing), then the action is appended at the log's version: a process that dies
in between leaves the effect without its line, and the moderator's retry writes the line.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from server.accounts.domain.accounts import check_name
from server.accounts.services.accounts import Accounts
from server.accounts.services.limits import AttemptLimiter
from server.accounts.services.ratings import Ratings
from server.kernel.errors import NoSuchAccount, NotModerator
from server.kernel.names import clean_name, fold_name
from server.race.domain.lifecycle import RoomStatus
from server.race.services.commands import Commands
from server.referee.domain import assessment as a
from server.referee.domain import referee as r
from server.referee.domain.events import (
    LOG_STREAM,
    REPORTS_STREAM,
    ModeratorActed,
    ReportFiled,
    encode,
)
from server.referee.services.assessor import MAX_FOCUS_PER_GAME, Assessor, kind_of
from server.runtime.clock import Clock
from server.runtime.logging import get_logger
from server.store import EventStore
from shared.errors import ServerError, WrongExpectedVersion
from shared.game import is_over
from shared.protocol import BadField

log = get_logger("server.referee.services.referee")

SHOWN_GAMES = 50  # assessed games ``mod_show`` lists, newest first


def moderators_of(names: str) -> frozenset[str]:
    """The folded names of ``--moderators NAME[,NAME...]``."""
    return frozenset(fold_name(clean_name(n)) for n in names.split(",") if n.strip())


class RefereeService:
    """Reports and moderators' actions over the store; the accounts and ratings they act on."""

    def __init__(
        self,
        store: EventStore,
        clock: Clock,
        accounts: Accounts,
        ratings: Ratings,
        commands: Commands,
        *,
        moderators: frozenset[str],
        limiter: AttemptLimiter,
        assessor: Assessor,
    ) -> None:
        self.store = store
        self.clock = clock
        self.accounts = accounts
        self.ratings = ratings
        self.commands = commands  # a closed account's seat in a live race is given up
        self.moderators = moderators
        self.limiter = limiter
        self.assessor = assessor  # the fair-play assessments the queue and ``shown`` read

    def is_moderator(self, account: str | None) -> bool:
        return account is not None and account in self.moderators

    async def state(self) -> r.Referee:
        """Both streams folded afresh: they hold people's reports and actions, a few a day."""
        referee = r.Referee()
        streams = await self.store.read_many([REPORTS_STREAM, LOG_STREAM])
        referee.fold_reports(e.data for e in streams.get(REPORTS_STREAM, []))
        referee.fold_log(e.data for e in streams.get(LOG_STREAM, []))
        return referee

    async def _named(self, raw_name: str) -> tuple[str, str]:
        """An account's key (its first name, folded) and its name as shown, found by its name
        now or one it had; no_such_account otherwise."""
        account = await self.accounts.named(raw_name)
        if account is None:
            raise NoSuchAccount(f"no account {raw_name!r}")
        return account.id, account.name

    async def report(
        self, reporter: str, raw_name: str, reason: str, *, race: str | None, note: str
    ) -> ReportFiled:
        folded, name = await self._named(raw_name)
        await self.limiter.attempt(reporter)

        def decide(referee: r.Referee) -> ReportFiled:
            return r.decide_report(
                referee,
                reporter=reporter,
                reported=folded,
                name=name,
                reason=reason,
                race=race,
                note=note,
                now=self.clock.now_ms(),
            )

        filed = await self._appended(REPORTS_STREAM, lambda s: s.reports_version, decide)
        log.info("report_filed", reporter=reporter, reported=folded, reason=reason)
        return filed

    async def act(
        self, moderator: str, action: str, raw_name: str, why: str, new_name: str | None = None
    ) -> ModeratorActed:
        """A moderator's action carried out, then logged; not_moderator for anyone else. A
        rename's ``new_name`` is checked as registration checks a name (bad_field)."""
        if not self.is_moderator(moderator):
            raise NotModerator("only a moderator may do that")
        folded, name = await self._named(raw_name)
        if new_name is not None:
            try:
                new_name = check_name(new_name)[0]
            except BadField as exc:
                raise BadField(str(exc).replace("'name'", "'new_name'"), field="new_name") from None

        def decide(referee: r.Referee) -> ModeratorActed:
            return r.decide_action(
                referee,
                moderator=moderator,
                action=action,
                account=folded,
                name=name,
                why=why,
                now=self.clock.now_ms(),
                new_name=new_name,
            )

        decide(await self.state())  # refused before anything is done
        if action == "rename":
            assert new_name is not None  # decide_action refused otherwise
            await self._rename(folded, new_name, why.strip())
        else:
            await _EFFECTS[action](self, folded)
        acted = await self._appended(LOG_STREAM, lambda s: s.log_version, decide)
        log.info("moderator_acted", moderator=moderator, action=action, account=folded)
        return acted

    async def _rename(self, account: str, new_name: str, why: str) -> None:
        """The account's new name (name_taken for another account's: nothing is done), then
        the leaderboards': both idempotent, as a retry needs."""
        renamed = await self.accounts.rename(account, new_name, why)
        await self.ratings.rename(account, renamed.name)

    async def _appended(
        self,
        stream: str,
        version_of: Callable[[r.Referee], int],
        decide: Callable[[r.Referee], Any],
    ) -> Any:
        """What ``decide`` makes of the referee, appended at the stream's version read; decided
        again when another append came first."""
        for _ in range(20):
            referee = await self.state()
            event = decide(referee)
            try:
                await self.store.append(
                    stream, [encode(event)], expected_version=version_of(referee)
                )
            except WrongExpectedVersion:
                continue
            return event
        raise ServerError("the referee's log is changing too fast; try again")

    async def shown(self, raw_name: str) -> dict[str, Any]:
        """One account as moderators see it: what holds on it, its reports, its actions, its
        fair-play level with the reasons, and its assessed games."""
        folded, name = await self._named(raw_name)
        referee = await self.state()
        games = await self.assessor.games(folded)
        standing = a.standing(games)
        return {
            "account": folded,
            "name": name,
            "marked": folded in referee.marked,
            "closed": folded in referee.closed,
            "reports": [r.report_row(x) for x in referee.reports if x.reported == folded],
            "actions": [r.action_row(x) for x in referee.actions if x.account == folded],
            "assessment": {**standing.wire(), "evidence": standing.evidence()},
            "games": [a.game_row(g) for g in reversed(games)][:SHOWN_GAMES],
        }

    async def queue(self) -> list[dict[str, Any]]:
        """The moderators' queue: open reports and automatic fair-play flags."""
        return r.queue(await self.state(), await self.assessor.flagged())

    async def focus_lost(self, account: str, counted: Mapping[str, int]) -> str | None:
        """The account's page lost focus: recorded if it races a rated game not over for it,
        up to ``MAX_FOCUS_PER_GAME`` (``counted``: by this connection, per room); the room,
        or None when ignored."""
        room_id = await self.commands.racing(account)
        if room_id is None or counted.get(room_id, 0) >= MAX_FOCUS_PER_GAME:
            return None
        room = await self.commands.room(room_id)
        if room.status is not RoomStatus.RACING or kind_of(room) is None:
            return None
        for player, seat in room.seats.items():
            game = room.games.get(player)
            if seat.account is None or fold_name(seat.account) != account or game is None:
                continue
            if game.state is None or is_over(game.state):
                return None
            await self.assessor.record_focus(account, room_id, player)
            return room_id
        return None


async def _mark(service: RefereeService, account: str) -> None:
    await service.ratings.mark(account, marked=True)


async def _unmark(service: RefereeService, account: str) -> None:
    await service.ratings.mark(account, marked=False)


async def _close(service: RefereeService, account: str) -> None:
    """No login from now on, and a seat the account holds in a race not over is given up: a
    racer's game is resigned, a lobby's seat freed."""
    await service.accounts.close(account)
    room_id = await service.commands.racing(account)
    if room_id is None:
        return
    room = await service.commands.room(room_id)
    for player, seat in list(room.seats.items()):
        if seat.account is not None and fold_name(seat.account) == account:
            await service.commands.leave(room, player)


async def _reopen(service: RefereeService, account: str) -> None:
    await service.accounts.reopen(account)


_EFFECTS: dict[str, Callable[[RefereeService, str], Awaitable[None]]] = {
    "mark": _mark,
    "unmark": _unmark,
    "close": _close,
    "reopen": _reopen,
}
"""What each action does to the account, by the action's name."""
