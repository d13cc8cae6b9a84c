"""A connection's account requests: register, login, logout, a new password, leaderboard,
profile and a race's rating changes. The I/O behind them is the wing's services."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from server.accounts.domain.accounts import Account, key_hash
from server.accounts.domain.ratings import VARIANTS
from server.accounts.services.accounts import Accounts
from server.accounts.services.logins import LiveLogin, Logins
from server.accounts.services.ratings import Ratings
from server.daily.domain.days import Streaks
from server.kernel.errors import NoSuchAccount, NotLoggedIn, NotRated
from server.kernel.names import bot_level_of_name, clean_name
from server.net.router import Part
from server.race.services.commands import Commands
from server.runtime.logging import bind
from shared import protocol as p

Reply = Callable[[dict[str, Any], dict[str, Any]], None]


class AccountRequests(Part):
    """Who this connection is logged in as (its ``Identity``), and the requests about
    accounts and ratings."""

    def __init__(
        self,
        accounts: Accounts,
        ratings: Ratings,
        commands: Commands,
        reply: Reply,
        address: str,
        *,
        on_account: Callable[[Account | None], None],
        streaks: Callable[[str], Awaitable[Streaks]] | None = None,
        logins: Logins | None = None,
        tournaments: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = None,
        challenges: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = None,
        accuracy: Callable[[str], Awaitable[list[dict[str, Any]]]] | None = None,
    ) -> None:
        self.accuracy = accuracy  # the analyses' verdict on an account's moves, for profiles
        self.tournaments = tournaments  # an account's finished tournaments, for profiles
        self.accounts = accounts
        self.challenges = challenges  # an account's finished challenges, for profiles
        self.ratings = ratings
        self.commands = commands
        self.reply = reply
        self.address = address
        self.on_account = on_account
        self.streaks = streaks  # the daily challenge's, for profiles
        self.logins = logins  # told when this connection's key is revoked elsewhere
        self.account: Account | None = None
        self.key: str | None = None
        self._login: LiveLogin | None = None
        self._notice: str | None = None  # a rename told in this hello's welcome

    @property
    def account_id(self) -> str | None:
        return self.account.id if self.account is not None else None

    @property
    def account_name(self) -> str | None:
        return self.account.name if self.account is not None else None

    async def greet(self, hello: dict[str, Any]) -> None:
        if "key" in hello:
            await self.authenticate(hello["key"])
            self._notice = self.account.notice if self.account is not None else None

    def welcome(self, welcome: dict[str, Any]) -> None:
        if self._notice is not None:
            welcome["notice"] = self._notice

    async def greeted(self) -> None:
        """A rename told in the welcome is not told again."""
        if self._notice is not None and self.account is not None:
            self._notice = None
            await self.accounts.told(self.account.id)

    async def gone(self) -> None:
        await self.release()

    def handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[None]]]:
        return {
            p.REGISTER: self.on_register,
            p.LOGIN: self.on_login,
            p.LOGOUT: self.on_logout,
            p.CHANGE_PASSWORD: self.on_change_password,
            p.LEADERBOARD: self.on_leaderboard,
            p.PROFILE: self.on_profile,
            p.RACE_RATINGS: self.on_race_ratings,
        }

    async def authenticate(self, key: str) -> None:
        """``hello.key``: log in with an account key; an unknown or revoked one leaves the
        connection a guest (``welcome.account`` nil)."""
        await self.release()
        self.account = await self.accounts.authenticate(key)
        self.key = key if self.account is not None else None
        if self.account is not None:
            bind(account=self.account.id)
            if self.logins is not None:
                self._login = await self.logins.hold(self.account.id, key_hash(key), self._revoked)
        self.on_account(self.account)

    async def release(self) -> None:
        """This connection's login is no longer followed (a logout, the connection closed)."""
        login, self._login = self._login, None
        if login is not None and self.logins is not None:
            await self.logins.release(login)

    def _revoked(self) -> None:
        """The key was revoked elsewhere: a guest from now on, and told so."""
        self._login = None
        self.account = self.key = None
        self.on_account(None)
        self.reply({}, {"type": p.LOGGED_OUT})

    async def _logged_in(self, key: str) -> None:
        await self.authenticate(key)

    async def on_register(self, msg: dict[str, Any]) -> None:
        login = await self.accounts.register(msg["name"], msg["password"], address=self.address)
        await self._logged_in(login.key)
        self.reply(msg, {"type": p.ACCOUNT, "name": login.name, "key": login.key})

    async def on_login(self, msg: dict[str, Any]) -> None:
        login = await self.accounts.login(msg["name"], msg["password"], address=self.address)
        await self._logged_in(login.key)
        answer = {"type": p.ACCOUNT, "name": login.name, "key": login.key}
        if login.notice is not None:
            answer["notice"] = login.notice  # a moderator's rename, told once
        self.reply(msg, answer)

    async def on_logout(self, msg: dict[str, Any]) -> None:
        if self.key is None:
            raise NotLoggedIn("this connection is not logged in")
        await self.release()  # its own revocation is answered here, not told as news
        revoked = await self.accounts.logout(self.key)
        self.account = self.key = None
        if not revoked:
            raise NotLoggedIn("this connection is not logged in")
        self.reply(msg, {"type": p.LOGGED_OUT})

    async def on_change_password(self, msg: dict[str, Any]) -> None:
        if self.key is None:
            raise NotLoggedIn("this connection is not logged in")
        revoked = await self.accounts.change_password(
            self.key, msg["password"], msg["new_password"], address=self.address
        )
        self.reply(msg, {"type": p.PASSWORD_CHANGED, "revoked": revoked})

    async def on_leaderboard(self, msg: dict[str, Any]) -> None:
        variant = msg.get("variant", VARIANTS[0])
        rows = await self.ratings.leaderboard(variant)
        me = next((r for r in rows if r["account"] == self.account_id), None)
        self.reply(
            msg,
            {
                "type": p.STANDINGS,
                "variant": variant,
                "rows": rows[: msg.get("top", 10)],
                "me": me,
                "players": len(rows),
            },
        )

    async def on_profile(self, msg: dict[str, Any]) -> None:
        if "name" not in msg and self.account is None:
            raise NotLoggedIn("log in, or name the player whose profile to show")
        level = bot_level_of_name(msg.get("name", ""))
        if level is not None:  # a bot's: it never logs in, and is never rated
            name = clean_name(msg["name"])
            self.reply(
                msg,
                {"type": p.PLAYER_CARD, "name": name, "ratings": [], "recent": [], "bot": level},
            )
            return
        if "name" in msg:  # by its name now, or one it had
            account = await self.accounts.named(msg["name"])
        else:
            account = await self.accounts.account(self.account.id) if self.account else None
        if account is None:
            raise NoSuchAccount(f"no account {msg.get('name')!r}")
        ratings: list[dict[str, Any]] = []
        recent: list[dict[str, Any]] = []
        for variant in VARIANTS:
            table = await self.ratings.catch_up(variant)
            standing = table.players.get(account.id)
            if standing is None:
                continue
            rows = await self.ratings.leaderboard(variant)
            rank = next((r["rank"] for r in rows if r["account"] == account.id), None)
            ratings.append(
                {
                    "variant": variant,
                    "rating": standing.rating,
                    "provisional": standing.provisional,
                    "rank": rank,
                    "players": len(rows),
                    "games": standing.games,
                    "wins": standing.wins,
                    "best_ms": standing.best_ms,
                }
            )
            recent.extend({"variant": variant, **race} for race in standing.recent)
        recent.sort(key=lambda race: -race["at"])
        card: dict[str, Any] = {
            "type": p.PLAYER_CARD,
            "name": account.name,
            "ratings": ratings,
            "recent": recent,
        }
        if self.streaks is not None:
            streaks = await self.streaks(account.id)
            card["streaks"] = {"played": streaks.played, "won": streaks.won}
        if self.tournaments is not None:
            played = await self.tournaments(account.id)
            podiums = [row for row in played if row["place"] <= 3][:20]
            card["tournaments"] = {"played": len(played), "podiums": podiums}
        if self.challenges is not None:
            card["challenges"] = await self.challenges(account.id)
        if await self.ratings.is_marked(account.id):
            card["marked"] = True  # a moderator's fair-play mark: out of the leaderboards
        if self.accuracy is not None:
            card["accuracy"] = await self.accuracy(account.id)
        self.reply(msg, card)

    async def on_race_ratings(self, msg: dict[str, Any]) -> None:
        room = await self.commands.room(msg["room"])
        await self.commands.hub.sync(room)
        if not room.rated or room.finished is None:
            raise NotRated(f"room {room.id}'s race is not rated (or not finished)")
        changes = await self.ratings.record(room)
        if changes is None:
            raise NotRated(f"room {room.id}'s race had fewer than two logged-in racers")
        self.reply(
            msg,
            {
                "type": p.RATING_CHANGES,
                "room": room.id,
                "variant": room.settings.variant,
                "changes": [c.wire() for c in changes],
            },
        )
