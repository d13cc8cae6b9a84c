"""`solitaire analyse CODE --player NAME [--json]`: a finished game's analysis, printed."""

from __future__ import annotations

import json
import sys
from typing import Any

from client.analysis import fetch_analysis, report_lines
from client.cli import Output
from client.connection import RequestFailed
from client.room_entry import connected
from shared.errors import ClientError


async def analyse_command(args: Any, output: Output) -> int:
    """`solitaire analyse CODE --player NAME [--json] [--wait S]`."""
    quiet = Output(color=False, tty=False, json=False)
    _app, client = await connected(args, quiet, [], "analyse", room=args.code, spectator=True)
    conn = client.conn
    assert conn is not None
    try:
        analysis = await fetch_analysis(conn, args.code, args.player, wait_s=args.wait)
    except RequestFailed as refused:
        raise ClientError(f"analyse {args.code}: {refused.reason}", code=refused.code) from None
    finally:
        await conn.close()
    if output.json:
        sys.stdout.write(json.dumps(analysis, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write("\n".join(report_lines(analysis)) + "\n")
    return 0
