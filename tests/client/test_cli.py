"""The command line: subcommands, common options, environment defaults and colour choice."""

from __future__ import annotations

import io
import subprocess
import sys

import pexpect
import pytest

from client.cli import DEFAULT_SERVER, build_parser, parse_args, resolve_output
from tests.client.pty_driver import finish, spawn

COMMON = ["--server", "--name", "--variant", "--seed", "--no-color", "--moves", "--json"]


def parse(argv: list[str], env: dict[str, str] | None = None):
    return build_parser(env or {}).parse_args(argv)


def test_play_defaults() -> None:
    args = parse(["play"])
    assert args.command == "play"
    assert args.server == DEFAULT_SERVER
    assert args.variant == "swiss"
    assert args.seed is None
    assert not args.offline
    assert not args.no_color
    assert not args.json
    assert args.moves is None


def test_server_and_name_come_from_the_environment_unless_given() -> None:
    env = {"SOLITAIRE_SERVER": "ws://example:9", "USER": "ann"}
    args = parse(["rooms"], env)
    assert args.server == "ws://example:9"
    assert args.name == "ann"
    args = parse(["rooms", "--server", "ws://other:1", "--name", "bob"], env)
    assert (args.server, args.name) == ("ws://other:1", "bob")


def test_every_subcommand() -> None:
    args = parse(["play", "--offline", "--seed", "7", "--variant", "quadrennial"])
    assert (args.offline, args.seed, args.variant) == (True, "7", "quadrennial")
    args = parse(["race", "create", "--time-limit", "60", "--players", "2", "--countdown", "0"])
    assert (args.race_command, args.time_limit, args.players, args.countdown) == (
        "create",
        60.0,
        2,
        0.0,
    )
    args = parse(["race", "join", "abc123", "--name", "bob"])
    assert (args.race_command, args.code, args.name) == ("join", "abc123", "bob")
    args = parse(["watch", "abc123", "--player", "ann"])
    assert (args.command, args.code, args.player) == ("watch", "abc123", "ann")
    args = parse(["replay", "abc123", "--speed", "4"])
    assert (args.code, args.speed, args.offline) == ("abc123", 4.0, False)
    args = parse(["play", "--moves", "-", "--json"])
    assert (args.moves, args.json) == ("-", True)


@pytest.mark.parametrize(
    "argv",
    [
        ["play", "--variant", "klondike"],
        ["race"],
        ["race", "join"],
        ["watch"],
        ["replay", "--speed", "0"],
        ["nonsense"],
    ],
)
def test_bad_command_lines_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse(argv)
    assert exit_info.value.code == 2
    assert "usage:" in capsys.readouterr().err


@pytest.mark.e2e
@pytest.mark.parametrize(
    "argv",
    [["play"], ["race", "create"], ["race", "join"], ["rooms"], ["watch"], ["replay"]],
)
def test_help_of_each_subcommand_lists_every_common_option(argv: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "client", *argv, "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    for option in COMMON:
        assert option in result.stdout, (argv, option)


@pytest.mark.e2e
def test_top_level_help_ends_with_the_common_options() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "client", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    out = result.stdout
    for command in ("play", "race", "rooms", "watch", "replay"):
        assert f"    {command} " in out, command
    epilog = out[out.index("common options (every COMMAND takes them;") :]
    for option in COMMON:
        assert f"  {option}" in epilog, option
    assert "--variant {swiss,quadrennial}" in epilog
    assert "solitaire COMMAND --help shows every option of a command." in epilog
    # The exit statuses close the help, so a script writer finds them.
    assert out.rstrip().endswith("in a race your seat is kept for the server's grace")
    for status in ("0 ", "1 ", "2 ", "3 ", "130 "):
        assert f"\n  {status}" in out


def test_top_level_help_shows_the_environment_defaults() -> None:
    text = build_parser({"SOLITAIRE_SERVER": "ws://example:9"}).format_help()
    assert "ws://example:9" in text


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_without_no_color() -> None:
    tty, pipe = FakeTTY(), io.StringIO()
    assert resolve_output(parse(["play"]), {}, tty).color
    assert resolve_output(parse(["play"]), {}, tty).tty
    assert not resolve_output(parse(["play"]), {}, pipe).color
    assert not resolve_output(parse(["play", "--no-color"]), {}, tty).color
    assert not resolve_output(parse(["play"]), {"NO_COLOR": "1"}, tty).color
    assert not resolve_output(parse(["play", "--json"]), {}, tty).color


@pytest.mark.parametrize("argv", [["play"], ["race", "create"]])
def test_winnable_asks_the_server_for_a_proved_deal(argv: list[str]) -> None:
    from client.online import _create_msg

    asked = _create_msg(parse([*argv, "--winnable"]), 1)
    assert asked["winnable"] is True
    assert "seed" not in asked
    assert "winnable" not in _create_msg(parse(argv), 1)


def test_the_tournament_commands() -> None:
    args = parse(["tournament", "join", " T7K2 "])
    assert (args.command, args.tournament_command, args.tournament) == (
        "tournament",
        "join",
        "t7k2",
    )
    made = parse(
        ["tournament", "create", "Friday", "--minutes", "45", "--racers", "3", "--no-berserk"],
        env={},
    )
    assert (made.title, made.minutes, made.racers, made.no_berserk) == ("Friday", 45.0, 3, True)
    assert (made.starts_in, made.race_time, made.unrated) == (0.0, None, False)
    assert parse(["tournament", "list"]).tournament_command == "list"


@pytest.mark.e2e
@pytest.mark.parametrize(
    "command", [("register",), ("login",), ("whoami",), ("tournament", "create")]
)
def test_help_offers_no_option_that_means_nothing_to_the_command(command: tuple[str, ...]) -> None:
    """An account's commands and a tournament's creation deal no cards and play no script:
    their help, as a person reads it at 80 columns, offers no --seed, --moves or --json."""
    child = spawn(*command, "--help", columns=80, rows=24)
    child.expect(pexpect.EOF)
    text = str(child.before)
    assert "--server" in text
    for option in ("--seed", "--moves", "--json"):
        assert option not in text, option
    assert finish(child) == 0
    with pytest.raises(SystemExit):  # refused, not silently ignored
        parse_args([*command, *(("NAME",) if command[0] != "whoami" else ()), "--json"])


def test_commands_that_deal_or_script_still_offer_them() -> None:
    play = parse_args(["play", "--seed", "7", "--moves", "f", "--json"])
    assert (play.seed, play.moves, play.json) == ("7", "f", True)
    joined = parse_args(["tournament", "join", "abc", "--moves", "f", "--json"])
    assert (joined.moves, joined.json) == ("f", True)
    made = parse_args(["tournament", "create", "Cup"])
    assert (made.seed, made.moves, made.json) == (None, None, False)
