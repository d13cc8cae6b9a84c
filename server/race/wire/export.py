"""GET /export/CODE/PLAYER: a finished game as its plain-text record (docs/records.md).

Over the same fairness as watching and replaying (server.race.domain.export): 404 for a room or a
racer there is not, 403 saying when for a game that may not be shown yet (a challenge's attempt:
until the challenge is over, as the request names nobody).
"""

from __future__ import annotations

import re
from http import HTTPStatus
from urllib.parse import unquote

import msgpack
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from server.kernel.errors import NoSuchChallenge, NoSuchPlayer, NoSuchRoom, NotAllowed, WrongStatus
from server.race.domain.export import export_header, exportable_game
from server.race.services.commands import Commands
from server.race.wire.requests import ViewCheck
from server.runtime.clock import Clock
from shared.errors import ArchiveUnavailable, CorruptRecord
from shared.export import write_export

_EXPORT = re.compile(r"/export/([A-Za-z0-9]{1,32})/([^/]{1,240})")
_SAFE = re.compile(r"[^A-Za-z0-9_-]+")
TEXT = "text/plain; charset=utf-8"


class GameExport:
    """Answers GET /export/CODE/PLAYER; any other path is not its."""

    def __init__(self, commands: Commands, clock: Clock, check_view: ViewCheck) -> None:
        self.commands = commands
        self.clock = clock
        self.check_view = check_view  # an attempt at a challenge: once it is settled

    async def respond(self, connection: ServerConnection, request: Request) -> Response | None:
        m = _EXPORT.fullmatch(request.path.split("?", 1)[0])
        if m is None:
            return None
        code, who = m.group(1).lower(), unquote(m.group(2))
        try:
            room = await self.commands.room(code)
            game = exportable_game(room, who, now=self.clock.now_ms())
            # Nobody is logged in over plain HTTP: a challenge's game waits for its end.
            await self.check_view(room, None)
        except (NoSuchRoom, NoSuchPlayer, NoSuchChallenge) as exc:
            return _text(connection, HTTPStatus.NOT_FOUND, f"{exc.code}: {exc.reason}\n")
        except (NotAllowed, WrongStatus) as exc:
            return _text(connection, HTTPStatus.FORBIDDEN, f"{exc.code}: {exc.reason}\n")
        except (ArchiveUnavailable, CorruptRecord) as exc:  # a race archived, unreadable now
            status = HTTPStatus.SERVICE_UNAVAILABLE
            if isinstance(exc, CorruptRecord):
                status = HTTPStatus.INTERNAL_SERVER_ERROR
            return _text(connection, status, f"{exc.code}: {exc.reason}\n")
        header = export_header(room, game)
        events = [msgpack.unpackb(e, raw=False) for e in game.public]
        response = _text(connection, HTTPStatus.OK, write_export(header, events))
        name = _SAFE.sub("_", header.player).strip("_") or "player"
        response.headers["Content-Disposition"] = (
            f'attachment; filename="solitaire-{room.id}-{name}.txt"'
        )
        return response


def _text(connection: ServerConnection, status: HTTPStatus, body: str) -> Response:
    response = connection.respond(status, "")
    response.body = body.encode("utf-8")
    del response.headers["Content-Type"]
    del response.headers["Content-Length"]
    response.headers["Content-Type"] = TEXT
    response.headers["Content-Length"] = str(len(response.body))
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Cache-Control"] = "no-cache"
    return response
