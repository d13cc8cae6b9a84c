"""Entry point of the `solitaire` command: parse the command line and run the chosen mode.

Every failure a user can cause ends in one line on stderr and an exit status (cli.EXIT_CODES),
never a traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

from client.cli import parse_args, resolve_output
from client.terminal import read_script
from shared.errors import ArenaError, ServerError

_ACCOUNT_COMMANDS = (
    "register",
    "login",
    "logout",
    "password",
    "whoami",
    "leaderboard",
    "profile",
)


async def _run(args: Any, output: Any, script: list[str] | None) -> int:
    if args.command in _ACCOUNT_COMMANDS:
        from client.accounts import account_command

        return await account_command(args, output)
    if args.command in ("report", "mod"):
        from client.referee import referee_command

        return await referee_command(args, output)
    if args.command == "tournament" and args.tournament_command == "join":
        from client.tournament.join import join_tournament

        return await join_tournament(args, output, script)
    if args.command == "tournament":
        from client.tournament.follow import tournament_command

        return await tournament_command(args, output)
    if args.command == "daily":
        from client.daily import daily_command

        return await daily_command(args, output, script)
    if args.command == "challenge":
        from client.challenge import challenge_command

        return await challenge_command(args, output, script)
    if args.command == "play" and args.offline:
        from client.offline import play_offline

        return await play_offline(args, output, script)
    if args.command == "replay" and args.file is not None:
        from client.export import replay_file

        return await replay_file(args, output)
    if args.command == "verify":
        from client.verify import verify_command

        return await verify_command(args, output)
    if args.command == "analyse":
        from client.analyse import analyse_command

        return await analyse_command(args, output)
    if args.command == "export":
        from client.export import export_online

        return await export_online(args, output)
    if args.command == "replay" and args.offline:
        from client.offline import replay_offline

        return await replay_offline(args, output, script)
    from client.online import run_online

    return await run_online(args, output, script)


def _rules(args: Any) -> int:
    from client.rules import plain, rules_for
    from client.text import can_encode, to_ascii

    text = plain(rules_for(args.game))
    sys.stdout.write(text if can_encode(sys.stdout.encoding) else to_ascii(text))
    return 0


def _fail(text: str, status: int) -> int:
    print(f"solitaire: {text}", file=sys.stderr)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """Run `solitaire`; returns the process exit code."""
    for stream in (sys.stdout, sys.stderr):
        # A terminal that cannot show a character gets '?', not a UnicodeEncodeError.
        with contextlib.suppress(AttributeError, ValueError):
            stream.reconfigure(errors="replace")  # type: ignore[union-attr]
    env = os.environ
    args = parse_args(argv, env)
    if args.command == "rules":
        return _rules(args)
    output = resolve_output(args, env)
    script = None
    try:
        if args.moves is not None:
            script = read_script(args.moves)
        return asyncio.run(_run(args, output, script))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`| head`): nothing more to say, and nobody to say it to.
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115
        return 141
    except TimeoutError:
        return _fail("the server did not answer in time", 1)
    except OSError as error:
        return _fail(error.strerror or str(error), 2 if args.moves else 1)
    except ServerError as error:
        return _fail(error.reason, 1)
    except ArenaError as error:
        return _fail(error.reason, 2)


if __name__ == "__main__":
    sys.exit(main())
