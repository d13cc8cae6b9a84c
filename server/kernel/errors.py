"""The server's wire errors: each a ClientError leaf whose ``code`` is in docs/protocol.md."""

from __future__ import annotations

from shared.errors import ClientError, ProtocolError


class HelloRequired(ProtocolError):
    code = "hello_required"


class AlreadyHello(ProtocolError):
    code = "already_hello"


class UnsupportedProtocol(ProtocolError):
    code = "unsupported_protocol"


class RateLimited(ClientError):
    code = "rate_limited"


class NoSuchRoom(ClientError):
    code = "no_such_room"


class RoomFull(ClientError):
    code = "room_full"


class TooManyRooms(ClientError):
    code = "too_many_rooms"


class TooManySpectators(ClientError):
    code = "too_many_spectators"


class AlreadyInRoom(ClientError):
    code = "already_in_room"


class NotInRoom(ClientError):
    code = "not_in_room"


class NotAPlayer(ClientError):
    code = "not_a_player"


class NotYourGame(ClientError):
    code = "not_your_game"


class WrongStatus(ClientError):
    code = "wrong_status"


class NotAllowed(ClientError):
    code = "not_allowed"


class NoSuchPlayer(ClientError):
    code = "no_such_player"


class CustomDeckDisabled(ClientError):
    code = "custom_deck_disabled"


class NotRacing(ClientError):
    code = "not_racing"


class GameOver(ClientError):
    code = "game_over"


class IdReused(ClientError):
    """A move id already used in this game for a different move: nothing is appended."""

    code = "id_reused"


class TooManyLobbies(ClientError):
    code = "too_many_lobbies"


class NameTaken(ClientError):
    """``register`` of a name an account already has (names are compared case-folded)."""

    code = "name_taken"


class BadCredentials(ClientError):
    """``login`` with an unknown name or a wrong password (one answer for both, on purpose), or
    ``change_password`` with a wrong current one."""

    code = "bad_credentials"


class NotLoggedIn(ClientError):
    code = "not_logged_in"


class NoSuchAccount(ClientError):
    code = "no_such_account"


class NotRated(ClientError):
    """``rating_change`` of a room whose race was not rated (or not yet finished)."""

    code = "not_rated"


class AlreadyQueued(ClientError):
    """A `quick` from a connection already waiting in a queue."""

    code = "already_queued"


class NotQueued(ClientError):
    """A `leave_queue` from a connection waiting in no queue."""

    code = "not_queued"


class DailyPlayed(ClientError):
    """A second attempt at the day's daily challenge by one account."""

    code = "daily_played"


class NoSuchTournament(ClientError):
    """A tournament id no tournament has."""

    code = "no_such_tournament"


class TournamentOver(ClientError):
    """Joining a tournament whose time is up."""

    code = "tournament_over"


class TooManyTournaments(ClientError):
    """An account creating more tournaments than it may have upcoming or running."""

    code = "too_many_tournaments"


class NotInTournament(ClientError):
    """Withdrawing from a tournament one is not playing in."""

    code = "not_in_tournament"


class TooManyBots(ClientError):
    """A room keeps one seat for a person at least: at most capacity - 1 bots."""

    code = "too_many_bots"


class NoSuchChallenge(ClientError):
    """A challenge code that names no challenge."""

    code = "no_such_challenge"


class ChallengeClosed(ClientError):
    """An attempt at a challenge whose window has closed."""

    code = "challenge_closed"


class ChallengePlayed(ClientError):
    """A second attempt at a challenge by one account."""

    code = "challenge_played"


class ChallengeFull(ClientError):
    """An attempt at a challenge that as many accounts as its capacity have played."""

    code = "challenge_full"


class NotInvited(ClientError):
    """An attempt at a challenge made for others: only its creator and those invited play it."""

    code = "not_invited"


class NotModerator(ClientError):
    """A moderator's request from an account that holds no moderator role."""

    code = "not_moderator"


class AlreadyReported(ClientError):
    """The same reporter's report of the same account for the same reason, while it is open."""

    code = "already_reported"


class SelfReport(ClientError):
    code = "self_report"


class AccountClosed(ClientError):
    """A login to an account a moderator closed."""

    code = "account_closed"


class NoAnalysis(ClientError):
    """A finished game with no analysis yet: the server analyses games after their race, a
    busy server later (or not that variant's: --analysis-max-nodes 0)."""

    code = "no_analysis"
