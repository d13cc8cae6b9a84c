"""The ceiling: a bare ``websockets`` server that sends every binary frame straight back.

    python -m bench.echo --port PORT [--host 127.0.0.1]

Same library, same options (no compression, the same frame limit), the same event loop
(``--loop``, as the server's) and the same one process as the real server, but no decoding, no
rules and no store: what the load generator measures against it is what Python and websockets
alone can do on this machine. bench/load.py starts it in its own process; it runs until SIGTERM
or SIGINT.
"""

from __future__ import annotations

import argparse
import asyncio
import signal

from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from bench.common import raise_nofile
from server.runtime.loops import loop_factory


async def echo(ws: ServerConnection) -> None:
    try:
        async for frame in ws:
            await ws.send(frame)
    except ConnectionClosed:
        pass


async def run(host: str, port: int, max_frame_bytes: int) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with serve(echo, host, port, max_size=max_frame_bytes, compression=None, close_timeout=1):
        print(f"echo listening on {host}:{port}", flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.echo", description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--max-frame-bytes", type=int, default=65536)
    parser.add_argument("--loop", choices=["auto", "uvloop", "asyncio"], default="auto")
    args = parser.parse_args(argv)
    raise_nofile()
    with asyncio.Runner(loop_factory=loop_factory(args.loop)) as runner:
        runner.run(run(args.host, args.port, args.max_frame_bytes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
