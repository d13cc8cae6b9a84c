"""Entry point of the `solitaire` command: parse the command line and run the chosen mode."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Sequence

from client.cli import parse_args, resolve_output
from client.terminal import read_script
from shared.errors import ArenaError


async def _run(args, output, script) -> int:  # type: ignore[no-untyped-def]
    if args.command == "play" and args.offline:
        from client.offline import play_offline

        return await play_offline(args, output, script)
    if args.command == "replay" and args.offline:
        from client.replay import replay_offline

        return await replay_offline(args, output, script)
    from client.online import run_online

    return await run_online(args, output, script)


def main(argv: Sequence[str] | None = None) -> int:
    """Run `solitaire`; returns the process exit code."""
    env = os.environ
    args = parse_args(argv, env)
    output = resolve_output(args, env)
    script = None
    try:
        if args.moves is not None:
            script = read_script(args.moves)
        return asyncio.run(_run(args, output, script))
    except KeyboardInterrupt:
        return 130
    except TimeoutError:
        print("solitaire: the server did not answer in time", file=sys.stderr)
        return 1
    except OSError as error:
        print(f"solitaire: {error}", file=sys.stderr)
        return 1
    except ArenaError as error:
        print(f"solitaire: {error.reason}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
