"""The ``solitaire`` command line: subcommands, common options and the settings they resolve to.

Kept apart from the modes so the parser is testable without a terminal or a server.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from client.text import can_encode
from shared.protocol import MAX_SEED_LEN

DEFAULT_SERVER = "ws://127.0.0.1:8765"
VARIANTS = ("swiss", "quadrennial")
_COMMON_TITLE = "common options:"


_WINNABLE_HELP = "a deal the server's solver proved winnable (a secret seed: not with --seed)"


def _seed(text: str) -> str:
    """A seed as typed: any non-empty text of at most 64 characters (an integer or a word)."""
    stripped = text.strip()
    if not stripped:
        raise argparse.ArgumentTypeError("a seed cannot be empty: give a number or a word")
    if len(stripped) > MAX_SEED_LEN:
        raise argparse.ArgumentTypeError(
            f"a seed is at most {MAX_SEED_LEN} characters, not {len(stripped)}"
        )
    return stripped


def _room_code(text: str) -> str:
    """Room codes are case-insensitive: the server's are lower case."""
    code = text.strip().lower()
    if not code:
        raise argparse.ArgumentTypeError("a room code cannot be empty")
    return code


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be greater than 0, not {text}")
    return value


def _common_parent(env: Mapping[str, str], *, game: bool = True) -> argparse.ArgumentParser:
    """Options the subcommands take, so `solitaire <cmd> --help` lists them all; without
    ``game`` (an account's or a tournament's creation), not the deal's and the script's
    (--seed, --moves, --json), which would mean nothing there."""
    parent = argparse.ArgumentParser(add_help=False)
    group = parent.add_argument_group(_COMMON_TITLE[:-1])
    group.add_argument(
        "--server",
        default=env.get("SOLITAIRE_SERVER") or DEFAULT_SERVER,
        help="WebSocket URL of the server (default: $SOLITAIRE_SERVER or %(default)s)",
    )
    group.add_argument(
        "--name",
        default=env.get("SOLITAIRE_NAME") or env.get("USER") or "player",
        help="your player name (default: $SOLITAIRE_NAME, $USER or 'player')",
    )
    group.add_argument(
        "--variant", choices=VARIANTS, default="swiss", help="the game (default: %(default)s)"
    )
    if game:
        group.add_argument(
            "--seed", type=_seed, default=None, help="the deal's seed (default: a random one)"
        )
    group.add_argument(
        "--no-color",
        action="store_true",
        help="plain text, no colours (also when $NO_COLOR is set or stdout is not a terminal)",
    )
    if not game:
        parent.set_defaults(seed=None, moves=None, json=False)
        return parent
    group.add_argument(
        "--moves",
        metavar="FILE",
        default=None,
        help="play the moves in FILE (one per line, '-' for stdin) without a prompt",
    )
    group.add_argument(
        "--json", action="store_true", help="print events as JSON lines instead of the board"
    )
    return parent


def _epilog(common: argparse.ArgumentParser) -> str:
    """The top-level help's epilog: the common options as each command's help lists them, since
    they belong to the commands and argparse would not show them at the top level."""
    text = common.format_help()
    options = text[text.index(_COMMON_TITLE) :].rstrip()
    options = options.replace(
        _COMMON_TITLE,
        "common options (every COMMAND takes them; --seed, --moves and --json where they mean "
        "something):",
        1,
    )
    return (
        options
        + "\n\nsolitaire COMMAND --help shows every option of a command."
        + "\n\n"
        + EXIT_CODES
    )


EXIT_CODES = """exit status:
  0    done: every scripted move was played (or an interactive game ended)
  1    the server could not be reached, or went away for good
  2    a bad command line or request (unknown room, bad seed, ...)
  3    --moves: at least one scripted move was refused (illegal, or not a move)
  4    verify: the race is not fair, or cannot be checked
  130  interrupted (Ctrl-C); in a race your seat is kept for the server's grace"""


def build_parser(env: Mapping[str, str] | None = None) -> argparse.ArgumentParser:
    """The full parser; ``env`` stands in for ``os.environ`` so tests control the defaults."""
    env = os.environ if env is None else env
    common = _common_parent(env)
    plain = _common_parent(env, game=False)
    parser = argparse.ArgumentParser(
        prog="solitaire",
        description="Solitaire Arena in the terminal: play, race, watch and replay.",
        epilog=_epilog(common),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    play = sub.add_parser(
        "play", parents=[common], help="play a solo game", description="Play a solo game."
    )
    play.add_argument("--offline", action="store_true", help="play locally, with no server at all")
    play.add_argument("--winnable", action="store_true", help=_WINNABLE_HELP)

    race = sub.add_parser(
        "race", help="race others on the same deal", description="Race others on the same deal."
    )
    race_sub = race.add_subparsers(dest="race_command", required=True, metavar="ACTION")
    create = race_sub.add_parser(
        "create",
        parents=[common],
        help="open a race room and play in it",
        description="Open a race room, share its code, start it and play.",
    )
    create.add_argument(
        "--time-limit",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="end the race after this many seconds (default: the server's)",
    )
    create.add_argument(
        "--countdown",
        type=float,
        default=None,
        metavar="SECONDS",
        help="seconds of countdown before the start (default: the server's)",
    )
    create.add_argument("--winnable", action="store_true", help=_WINNABLE_HELP)
    create.add_argument(
        "--unrated",
        action="store_true",
        help="a race that does not count for ratings (races on a secret seed between logged-in "
        "players are rated by default)",
    )
    create.add_argument(
        "--bots",
        type=int,
        default=0,
        metavar="N",
        help="seat N bots, server-side racers (at most the room's size minus one; the race is "
        "then unrated)",
    )
    create.add_argument(
        "--bot-level",
        type=int,
        choices=range(1, 6),
        default=3,
        metavar="LEVEL",
        help="the bots' level, 1 (a beginner) to 5 (the solver's line): see docs/bots.md",
    )
    create.add_argument(
        "--players",
        type=int,
        default=None,
        metavar="N",
        help="start automatically when N players have joined (default: start with 'start')",
    )
    join = race_sub.add_parser(
        "join",
        parents=[common],
        help="join a race room by its code",
        description="Join a race room by its code and play when it starts.",
    )
    join.add_argument("code", metavar="CODE", type=_room_code, help="the room code")
    quick = race_sub.add_parser(
        "quick",
        parents=[common],
        help="race players of your level, found by the server",
        description="Wait in the server's queue until it finds players with a rating close to "
        "yours (the range widens as you wait; guests race guests, unrated), then race them. "
        "A match that falls through before the start (someone never sat down, or left) "
        "searches again. Ctrl-C leaves the queue.",
    )
    quick.add_argument(
        "--players",
        type=int,
        choices=(2, 3, 4),
        default=2,
        metavar="N",
        help="racers in the room, 2 to 4 (default: %(default)s)",
    )

    _tournament_parser(sub, common, plain)

    sub.add_parser(
        "rooms",
        parents=[common],
        help="list the open rooms",
        description="List the rooms on the server.",
    )

    watch = sub.add_parser(
        "watch",
        parents=[common],
        help="watch a room live",
        description="Watch every racer of a room live, or one of them with --player.",
    )
    watch.add_argument("code", metavar="CODE", type=_room_code, help="the room code")
    watch.add_argument("--player", default=None, metavar="NAME", help="watch only this racer")

    replay = sub.add_parser(
        "replay",
        parents=[common],
        help="replay a finished game",
        description=(
            "Replay a finished game: from a room on the server (CODE, --player), offline from "
            "--variant/--seed and --moves, or from a file 'solitaire export' wrote (--file). "
            "Step with n/p (next/previous), or play at --speed."
        ),
    )
    replay.add_argument(
        "code", metavar="CODE", nargs="?", type=_room_code, default=None, help="the room code"
    )
    replay.add_argument("--player", default=None, metavar="NAME", help="whose game to replay")
    replay.add_argument(
        "--speed",
        type=_positive_float,
        default=None,
        metavar="MOVES_PER_SECOND",
        help="play the replay on its own at this many moves per second (default: step by hand)",
    )
    replay.add_argument(
        "--offline",
        action="store_true",
        help="replay locally: the deal from --variant/--seed, the moves from --moves",
    )
    replay.add_argument(
        "--file",
        default=None,
        metavar="FILE",
        help="replay a game saved by 'solitaire export', offline (no server)",
    )
    export = sub.add_parser(
        "export",
        parents=[common],
        help="save a finished game as a plain-text record",
        description=(
            "Write a finished game's plain-text record (the room, deal, racer and result, then "
            "each move with its time) to standard output or to -o FILE; replay it offline with "
            "'solitaire replay --file FILE'. A race's games are exported once it is over (a "
            "daily challenge's once its day is over)."
        ),
    )
    export.add_argument("code", metavar="CODE", type=_room_code, help="the room code")
    export.add_argument(
        "--player", default=None, metavar="NAME", help="whose game (default: the first racer's)"
    )
    export.add_argument(
        "-o", "--output", default=None, metavar="FILE", help="write to FILE (default: stdout)"
    )
    analyse = sub.add_parser(
        "analyse",
        parents=[common],
        help="a finished game's analysis: could it be won, and the move that lost it",
        description=(
            "Print the server's analysis of a finished game: whether the deal could be won, "
            "every move with the verdict (won, lost, ? = not settled) of the positions before "
            "and after it, the move that lost a won game, and a winning line. Shown once the "
            "game could be exported (the race over; a daily challenge's once its day is over)."
        ),
    )
    analyse.add_argument("code", metavar="CODE", type=_room_code, help="the room code")
    analyse.add_argument("--player", required=True, metavar="NAME", help="whose game")
    analyse.add_argument(
        "--wait",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for an analysis the server has not made yet (default 10)",
    )
    verify = sub.add_parser(
        "verify",
        parents=[common],
        help="check that a finished race was fair",
        description=(
            "Check a finished race from what the server published: the commitment made before "
            "the race against the seed and salt revealed at its end, and every racer's deal and "
            "moves against the deck that seed deals. Says 'fair', or 'not fair' and which check "
            "failed. --file checks a game 'solitaire export' wrote, with no server."
        ),
    )
    verify.add_argument(
        "code", metavar="CODE", nargs="?", type=_room_code, default=None, help="the room code"
    )
    verify.add_argument(
        "--file", default=None, metavar="FILE", help="check a game saved by 'solitaire export'"
    )
    daily = sub.add_parser(
        "daily",
        parents=[common],
        help="today's daily challenge: one deal for everyone, once a day",
        description="Play today's (UTC) daily challenge deal, once per account (log in first); "
        "'solitaire daily results' shows the standings, the seed once the day is over.",
    )
    daily.add_argument(
        "action", nargs="?", choices=("results",), default=None, help="'results': the standings"
    )
    daily.add_argument(
        "--date", default=None, metavar="YYYY-MM-DD", help="the day of the results (default: today)"
    )
    challenge = sub.add_parser(
        "challenge",
        parents=[common],
        help="a deal for friends, each playing it once when they can",
        description="'challenge create' deals a fresh deal for those you name with --to (or "
        "anyone with its code) and prints its code and link; each plays it once, alone, "
        "within the window with 'challenge play CODE'; 'challenge show CODE' shows the "
        "standings once you have played (to everyone once it is over), 'challenge list' yours. "
        "Log in first.",
    )
    challenge.add_argument("action", choices=("create", "play", "show", "list"), help="what to do")
    challenge.add_argument(
        "code", metavar="CODE", nargs="?", default=None, help="the challenge (play, show)"
    )
    challenge.add_argument(
        "--to",
        metavar="NAME",
        nargs="+",
        default=[],
        help="create: the accounts invited (default: anyone with the code)",
    )
    challenge.add_argument(
        "--capacity",
        type=int,
        default=None,
        metavar="N",
        help="create: how many accounts may play it, you counted (default: you and those "
        "invited, or 8)",
    )
    challenge.add_argument(
        "--window",
        type=int,
        default=None,
        metavar="DAYS",
        help="create: the days it may be played in (1 to 30, default 7)",
    )
    for command, text in (("register", "create an account"), ("login", "log in")):
        account = sub.add_parser(
            command,
            parents=[plain],
            help=f"{text}: your races are rated",
            description=f"{text.capitalize()}; the key is kept in your state directory and "
            "every later command uses it. The password is read without echo.",
        )
        account.add_argument("account", metavar="NAME", help="the account name")
        account.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of standard input (for scripts)",
        )
    sub.add_parser(
        "logout",
        parents=[plain],
        help="log out (the key is revoked)",
        description="Log out: the server revokes the key, and it is removed from disk.",
    )
    password = sub.add_parser(
        "password",
        parents=[plain],
        help="change your password (your other devices are logged out)",
        description="Change the password of the account you are logged in as: asks for the "
        "current one and the new one twice, without echo. Every other key of the account is "
        "revoked, so each other device must log in again; this one stays logged in.",
    )
    password.add_argument(
        "--password-stdin",
        action="store_true",
        help="read the current password, then the new one, from the first two lines of "
        "standard input (for scripts)",
    )
    sub.add_parser(
        "whoami",
        parents=[plain],
        help="the account you are logged in as",
        description="Say which account the saved key logs in as.",
    )
    board = sub.add_parser(
        "leaderboard",
        parents=[common],
        help="the best rated players",
        description="Rank, name, rating, games and wins of a variant's rated players; your "
        "own line is marked, even outside the top.",
    )
    board.add_argument("--top", type=int, default=10, metavar="N", help="rows (default: 10)")
    profile = sub.add_parser(
        "profile",
        parents=[common],
        help="a player's ratings and recent races",
        description="Ratings per variant with rank, games, wins, best winning time, and recent "
        "races with their room codes (replay one with 'solitaire replay CODE --player NAME').",
    )
    profile.add_argument(
        "player", metavar="NAME", nargs="?", default=None, help="whose (default: yours)"
    )
    report = sub.add_parser(
        "report",
        parents=[common],
        help="report a player to the moderators",
        description="Tell the moderators that a player broke a rule: cheating, a name that "
        "breaks the rules, abuse, or something else. You must be logged in; one open report "
        "per player and reason.",
    )
    report.add_argument("player", metavar="NAME", help="the account you report")
    report.add_argument(
        "--reason", required=True, choices=("cheat", "name", "abuse", "other"), help="why"
    )
    report.add_argument("--race", metavar="CODE", default=None, help="the race it happened in")
    report.add_argument("--note", metavar="TEXT", default="", help="what you saw (500 chars)")
    mod = sub.add_parser(
        "mod",
        parents=[common],
        help="moderate: the queue, the log, an account; mark, close, rename and undo",
        description="For the accounts the server names with --moderators. 'mark' takes the "
        "account's rated races out of every rating and the account out of the leaderboards; "
        "'close' ends its logins and refuses new ones; 'unmark' and 'reopen' undo them; "
        "'rename' gives an account whose name breaks the rules a new one (its ratings and "
        "password stay, the player is told at their next login, and the old name stays "
        "theirs). Every action needs --reason and is kept in the moderators' log "
        "(docs/operations.md).",
    )
    mod_sub = mod.add_subparsers(dest="mod_command", required=True, metavar="ACTION")
    mod_sub.add_parser("queue", parents=[common], help="reports waiting for a moderator")
    mod_sub.add_parser("log", parents=[common], help="the moderators' actions, newest first")
    shown = mod_sub.add_parser("show", parents=[common], help="an account's reports and actions")
    shown.add_argument("player", metavar="NAME")
    for action, text in (
        ("mark", "fair-play mark: out of every rating and leaderboard"),
        ("unmark", "take a fair-play mark back"),
        ("close", "close an account: no login"),
        ("reopen", "open a closed account again"),
    ):
        acting = mod_sub.add_parser(action, parents=[common], help=text)
        acting.add_argument("player", metavar="NAME")
        acting.add_argument("--reason", required=True, metavar="TEXT", help="why, for the log")
    renaming = mod_sub.add_parser(
        "rename", parents=[common], help="rename an account whose name breaks the rules"
    )
    renaming.add_argument("player", metavar="NAME")
    renaming.add_argument("new_name", metavar="NEW", help="its new name (as registration takes)")
    renaming.add_argument(
        "--reason", required=True, metavar="TEXT", help="why: for the log, and told to the player"
    )
    rules = sub.add_parser(
        "rules",
        help="how to play Swiss and Quadrennial",
        description="The rules of the two games, as the server applies them.",
    )
    rules.add_argument(
        "game", nargs="?", choices=VARIANTS, default=None, help="one game only (default: both)"
    )
    rules.add_argument("--no-color", action="store_true", help=argparse.SUPPRESS)
    rules.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    rules.set_defaults(moves=None)
    return parser


def _tournament_code(text: str) -> str:
    code = text.strip().lower()
    if not code:
        raise argparse.ArgumentTypeError("a tournament id cannot be empty")
    return code


TOURNAMENT_SCRIPT = (
    " With --moves FILE every race you are paired into plays FILE's moves from its first line "
    "(nothing is typed between races); a game still on when they run out is resigned, and the "
    "run ends when the tournament is over, with the final standings and podium (exit status 3 "
    "if a move was refused). --json prints every message as a JSON line, as 'race join --json' "
    "does: each race's tournament_paired, its room, game events and finished (the result), "
    "tournament_standings as they change (final: true the last), and the last tournament, "
    "with its podium."
)


def _tournament_parser(
    sub: Any, common: argparse.ArgumentParser, plain: argparse.ArgumentParser
) -> None:
    """`solitaire tournament list | create | join ID | show ID`."""
    tournament = sub.add_parser(
        "tournament",
        help="arena tournaments: race again and again until the time is up",
        description="Arena tournaments: while one runs, every racer who finishes a race is "
        "paired into the next with players near their rank; the standings say who leads.",
    )
    actions = tournament.add_subparsers(dest="tournament_command", required=True, metavar="ACTION")
    actions.add_parser(
        "list",
        parents=[common],
        help="the upcoming, live and finished tournaments",
        description="List the tournaments: live ones, then upcoming, then the last finished.",
    )
    create = actions.add_parser(
        "create",
        parents=[plain],
        help="create a tournament (logged in)",
        description="Create a tournament on --variant; it is listed at once. Join it with "
        "'solitaire tournament join ID' (its creator too).",
    )
    create.add_argument("title", metavar="TITLE", help="the tournament's name")
    create.add_argument(
        "--minutes",
        type=_positive_float,
        default=30.0,
        help="how long it runs, 5 to 720 (default: %(default)s)",
    )
    create.add_argument(
        "--starts-in",
        type=float,
        default=0.0,
        metavar="MINUTES",
        help="start this many minutes from now (default: at once)",
    )
    create.add_argument(
        "--race-time",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="each race's time limit (default: the server's, 3 minutes)",
    )
    create.add_argument(
        "--racers",
        type=int,
        choices=(2, 3, 4),
        default=2,
        help="racers in each race (default: %(default)s)",
    )
    create.add_argument("--unrated", action="store_true", help="races that do not count")
    create.add_argument("--no-berserk", action="store_true", help="nobody may go berserk")
    create.add_argument("--no-streaks", action="store_true", help="no double points for streaks")
    for action, text, more in (
        ("join", "join and play every race you are paired into; Ctrl-C pauses", TOURNAMENT_SCRIPT),
        ("show", "the standings and podium of a tournament", ""),
    ):
        parser = actions.add_parser(
            action, parents=[common], help=text, description=text + "." + more
        )
        parser.add_argument(
            "tournament", metavar="ID", type=_tournament_code, help="the tournament's id"
        )


@dataclass(frozen=True)
class Output:
    """How to write: colour or not, and whether the screen can be redrawn in place."""

    color: bool
    tty: bool
    json: bool
    ascii: bool = False


def resolve_output(
    args: argparse.Namespace, env: Mapping[str, str], stdout: TextIO | None = None
) -> Output:
    """Colour only on a terminal, never with --no-color or NO_COLOR (https://no-color.org)."""
    stdout = sys.stdout if stdout is None else stdout
    try:
        tty = stdout.isatty()
    except (AttributeError, ValueError):
        tty = False
    no_color = bool(args.no_color) or bool(env.get("NO_COLOR")) or env.get("TERM") == "dumb"
    return Output(
        color=tty and not no_color and not args.json,
        tty=tty,
        json=bool(args.json),
        ascii=not can_encode(getattr(stdout, "encoding", None)),
    )


def parse_args(
    argv: Sequence[str] | None = None, env: Mapping[str, str] | None = None
) -> argparse.Namespace:
    """Parse ``argv`` (default: the process's) into a namespace."""
    return build_parser(env).parse_args(argv)
