"""``solitaire-server`` (``python -m server``): parse options, serve until SIGINT or SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from server.accounts.services.ratings import Ratings
from server.app import App, configured_analyser
from server.archive import Archive, open_archive
from server.endpoint import AddressInUse
from server.race.domain.lifecycle import RoomStatus
from server.race.services.directory import Directory
from server.referee.services.assessor import Assessor
from server.runtime.clock import Clock, SystemClock, clock_from_env
from server.runtime.config import Config, default_data_dir, parse_config
from server.runtime.logging import configure_logging, get_logger
from server.runtime.loops import loop_factory
from server.store import DataDirError, EventStore, open_store
from server.workers import run_workers


async def serve(config: Config) -> None:
    """Run until a signal asks to stop, then shut down gracefully."""
    log = get_logger("server")
    store = _open(config)
    _say_where(config, log)
    app = App(config, store, clock_from_env(os.environ), _open_archive(config))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    starting = asyncio.ensure_future(app.start())
    stopping = asyncio.ensure_future(stop.wait())
    await asyncio.wait({starting, stopping}, return_when=asyncio.FIRST_COMPLETED)
    if not starting.done():  # a signal while still waiting for the store
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await starting
    else:
        starting.result()  # a failed start-up ends here, with its traceback
        await stopping
    stopping.cancel()
    log.info("shutting_down")
    await app.stop()


def _open(config: Config) -> EventStore:
    """The store the options name; raises DataDirInUse if another server holds --data-dir."""
    if not config.redis_url:
        if config.store == "memory":
            return open_store(None, retention=config.retention_s)
        data_dir = config.data_dir or default_data_dir(os.environ)
        return open_store(None, data_dir=data_dir, retention=config.retention_s)
    return open_store(
        config.redis_url,
        prefix=config.redis_prefix,
        retention=config.retention_s,
        cluster=config.redis_cluster,
        ack_after_replicas=config.ack_after_replicas,
    )


def _say_where(config: Config, log: Any) -> None:
    """The operator's first question: where do the races go, and do they outlive a stop?"""
    if config.redis_url:
        log.info("store_opened", store="redis", prefix=config.redis_prefix)
    elif config.store == "memory":
        log.warning(
            "store_keeps_nothing",
            store="memory",
            note="--store memory: accounts, ratings and races are forgotten when this stops",
        )
    else:
        log.info("store_opened", store="sqlite", data_dir=config.data_dir)


def _open_archive(config: Config) -> Archive | None:
    """With Redis, finished rooms move to the archive (docs/storage.md, "Tiers"); the
    embedded store keeps them itself."""
    if not config.redis_url:
        return None
    data_dir = Path(config.data_dir) if config.data_dir else None
    archive = open_archive(config.archive_url, data_dir)
    where = "PostgreSQL" if config.archive_url else str(getattr(archive, "path", ""))
    get_logger("server").info("archive", at=where, after_s=config.archive_after_s)
    return archive


async def rebuild_ratings(config: Config) -> dict[str, int]:
    """``solitaire-server ratings --rebuild``: fold every rated race of the log again and
    rewrite the leaderboard indexes (docs/ratings.md)."""
    async with _open(config) as store:
        return await Ratings(store, SystemClock()).rebuild()


def ratings_main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="solitaire-server ratings",
        description="Rebuild the ratings projection and leaderboards from the log. Takes the "
        "server's store options (--redis-url, --redis-prefix, --redis-cluster, --store, "
        "--data-dir); a running server holds its --data-dir, so stop it first.",
    )
    parser.add_argument("--rebuild", action="store_true", required=True)
    _, rest = parser.parse_known_args(argv)
    config = parse_config(rest)
    configure_logging(config.log_format, config.log_level)
    started = time.perf_counter()
    try:
        folded = asyncio.run(rebuild_ratings(config))
    except DataDirError as error:  # the server holds it: stop it first
        print(f"solitaire-server ratings: {error}", file=sys.stderr)
        return 1
    seconds = time.perf_counter() - started
    for variant, races in folded.items():
        print(f"{variant}: {races} rated races folded")
    print(f"rebuilt in {seconds:.2f} s")
    return 0


async def _finished_rooms(store: EventStore, clock: Clock, archive: Archive | None) -> list[str]:
    """Every finished room the room list shows: what a rebuild takes when no room is named."""
    listed = await Directory(store, clock, archive).list_rooms({})
    return [r["id"] for r in listed if r["status"] == RoomStatus.FINISHED.value]


def _rebuild_options(prog: str, description: str, argv: Sequence[str]) -> tuple[list[str], Config]:
    """A rebuild command's rooms (``--room CODE``, lowercased; none for all) and the server's
    options it takes for its store."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--rebuild", action="store_true", required=True)
    parser.add_argument(
        "--room", action="append", default=[], metavar="CODE", help="a room (default: all)"
    )
    args, rest = parser.parse_known_args(argv)
    config = parse_config(rest)
    configure_logging(config.log_format, config.log_level)
    return [r.lower() for r in args.room], config


async def rebuild_analyses(config: Config, rooms: Sequence[str]) -> dict[str, int]:
    """``solitaire-server analysis --rebuild``: analyse the rooms' games again (every finished
    room the room list shows, with none named), each analysis added after the old one; the
    games written per room."""
    async with _open(config) as store:
        archive = _open_archive(config)
        clock = SystemClock()
        analyser = configured_analyser(store, archive, clock, config, "rebuild")
        try:
            rooms = rooms or await _finished_rooms(store, clock, archive)
            return {room: await analyser.analyse_room(room, again=True) for room in rooms}
        finally:
            await analyser.aclose()
            if archive is not None:
                await archive.aclose()


def analysis_main(argv: Sequence[str]) -> int:
    rooms, config = _rebuild_options(
        "solitaire-server analysis",
        "Analyse finished games again (old games, or a new solver version) at "
        "--analysis-max-nodes: the rooms named, or every finished room listed. Takes the "
        "server's store options; a running server holds its --data-dir, so stop it first.",
        argv,
    )
    try:
        written = asyncio.run(rebuild_analyses(config, rooms))
    except DataDirError as error:
        print(f"solitaire-server analysis: {error}", file=sys.stderr)
        return 1
    for room, games in written.items():
        print(f"{room}: {games} games analysed")
    return 0


async def rebuild_fairplay(config: Config, rooms: Sequence[str]) -> tuple[int, int]:
    """``solitaire-server fairplay --rebuild``: assess the finished rooms' games not assessed
    yet (every finished room listed, with none named), then the flagged index again."""
    async with _open(config) as store:
        archive = _open_archive(config)
        clock = SystemClock()
        assessor = Assessor(store, archive, clock, config.analysis_max_nodes)
        try:
            rooms = rooms or await _finished_rooms(store, clock, archive)
            return await assessor.rebuild(rooms)
        finally:
            if archive is not None:
                await archive.aclose()


def fairplay_main(argv: Sequence[str]) -> int:
    rooms, config = _rebuild_options(
        "solitaire-server fairplay",
        "Assess finished rated games not assessed yet and fold every account's "
        "fair-play level again (run `analysis --rebuild` first for analyses). Takes the "
        "server's store options; a running server holds its --data-dir, so stop it first.",
        argv,
    )
    try:
        written, flagged = asyncio.run(rebuild_fairplay(config, rooms))
    except DataDirError as error:
        print(f"solitaire-server fairplay: {error}", file=sys.stderr)
        return 1
    print(f"{written} games assessed; {flagged} accounts flagged")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["ratings"]:
        return ratings_main(argv[1:])
    if argv[:1] == ["analysis"]:
        return analysis_main(argv[1:])
    if argv[:1] == ["fairplay"]:
        return fairplay_main(argv[1:])
    config = parse_config(argv)
    configure_logging(config.log_format, config.log_level)
    if config.workers > 1:
        return run_workers(config, serve)
    try:
        with asyncio.Runner(loop_factory=loop_factory(config.loop)) as runner:
            runner.run(serve(config))
    except (AddressInUse, DataDirError) as error:  # a busy port or data directory: one line
        print(f"solitaire-server: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
