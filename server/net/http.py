"""Plain HTTP beside the WebSocket on one port: the web client's pages and static files with the
headers every page on the internet needs, and the Origin check of browsers' WebSocket upgrades.

Each page is the one shell (web/index.html) whose scripts speak the documented protocol over
WebSocket from the browser, as any other player or spectator (docs/architecture.md, "Web
viewer"). A feature may register a renderer of its pages' first view (server/net/first_view.py),
so what runs no script still sees what the page is; nothing here knows a room.
"""

from __future__ import annotations

import re
import ssl
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from importlib import resources
from urllib.parse import urlsplit

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from server.net.first_view import FirstView, PageView, filled
from server.runtime.logging import get_logger
from shared.errors import ArenaError

log = get_logger("server.net.http")

# Scripts, styles and sockets from this origin only; no inline script or style, no framing.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-cache",
}
# The pages: the ways in, TV, one room's race, one game's replay, the leaderboards, a player's
# profile, a game to play (a solo deal or a seat in a room), the tournaments, and moderation
# (docs/operations.md).
_PAGE = re.compile(
    r"/(?:|tv|leaderboard|mod|play|play/[A-Za-z0-9]{1,32}|@/[^/]{1,80}|watch/[A-Za-z0-9]{1,32}"
    r"|replay/[A-Za-z0-9]{1,32}/[^/]{1,80}|tournaments|tournament/[A-Za-z0-9]{1,64})"
)
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".md": "text/plain; charset=utf-8",
    ".svg": "image/svg+xml",
    "": "text/plain; charset=utf-8",  # LICENSE
}
SHELL = "index.html"
ICON = "favicon.svg"  # also at /favicon.ico, where browsers look for it unasked


def load_static() -> dict[str, bytes]:
    """Every file of server/net/web by its path under /static/, read once at start-up: a few
    tens of kilobytes, shipped as package data."""
    files: dict[str, bytes] = {}

    def walk(folder: resources.abc.Traversable, prefix: str) -> None:
        for entry in folder.iterdir():
            if entry.is_dir():
                walk(entry, f"{prefix}{entry.name}/")
            elif _suffix(entry.name) in _TYPES:
                files[prefix + entry.name] = entry.read_bytes()

    walk(resources.files("server.net") / "web", "")
    return files


def _suffix(name: str) -> str:
    return name[name.rfind(".") :] if "." in name else ""


def tls_context(cert: str | None, key: str | None) -> ssl.SSLContext | None:
    """The server side of TLS for https and wss on the port, or None to serve plain (a reverse
    proxy in front then terminates TLS, docs/operations.md)."""
    if cert is None or key is None:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(cert, key)
    return context


class WebViewer:
    """Answers the viewer's GET requests and screens WebSocket upgrades by their Origin."""

    def __init__(
        self,
        allowed_origins: tuple[str, ...],
        files: Mapping[str, bytes] | None = None,
        *,
        views: Iterable[PageView] = (),
        scheme: str = "http",
    ) -> None:
        self.allowed_origins = frozenset(allowed_origins)
        self.files = dict(load_static() if files is None else files)
        self.views = tuple(views)
        self.scheme = scheme  # how this port is reached, for a page's og:url

    async def respond(self, connection: ServerConnection, request: Request) -> Response | None:
        """The response to a plain GET, a 403 for a browser's upgrade from a foreign origin,
        or None to go on with the WebSocket handshake."""
        if "websocket" in request.headers.get("Upgrade", "").lower():
            if self.origin_allowed(request.headers):
                return None
            return connection.respond(HTTPStatus.FORBIDDEN, "origin not allowed\n")
        path = request.path.split("?", 1)[0]
        if _PAGE.fullmatch(path):
            view = await self.first_view(path)
            if view is None:
                return self._file(SHELL)
            shell = self.files[SHELL].decode("utf-8")
            page = filled(shell, view, self.url(request.headers, request.path))
            return self._response(page.encode("utf-8"), _TYPES[".html"])
        if path == "/favicon.ico" and ICON in self.files:
            return self._file(ICON)
        if path.startswith("/static/") and path[len("/static/") :] in self.files:
            return self._file(path[len("/static/") :])
        return connection.respond(HTTPStatus.NOT_FOUND, "not found\n")

    async def first_view(self, path: str) -> FirstView | None:
        """The first view a feature renders for ``path``, None for the plain shell (no
        renderer, or the store failing it: the script still fills the page)."""
        for view in self.views:
            match = view.pattern.fullmatch(path)
            if match is None:
                continue
            try:
                return await view.render(match)
            except ArenaError as exc:
                log.warning("first_view_failed", path=path[:120], code=exc.code)
                return None
        return None

    def url(self, headers: Headers, target: str) -> str:
        """The page's own address, as the request reached this port (a proxy's
        X-Forwarded-Proto names the scheme it was asked in)."""
        scheme = headers.get("X-Forwarded-Proto", self.scheme).strip().lower()
        scheme = scheme if scheme in ("http", "https") else self.scheme
        return f"{scheme}://{headers.get('Host', 'localhost').strip()}{target}"

    def origin_allowed(self, headers: Headers) -> bool:
        """No Origin: not a browser, let in. Else one of --allowed-origins, or by default the
        page's own: an Origin naming the host (and port) the request was sent to."""
        origin = headers.get("Origin")
        if origin is None:
            return True
        origin = origin.strip().rstrip("/").lower()
        if self.allowed_origins:
            return origin in self.allowed_origins
        parts = urlsplit(origin)
        host = headers.get("Host", "").strip().lower()
        return parts.scheme in ("http", "https") and bool(host) and parts.netloc == host

    def _file(self, name: str) -> Response:
        return self._response(self.files[name], _TYPES[_suffix(name)])

    @staticmethod
    def _response(body: bytes, content_type: str) -> Response:
        headers = Headers(_SECURITY_HEADERS)
        headers["Content-Type"] = content_type
        headers["Content-Length"] = str(len(body))
        return Response(HTTPStatus.OK.value, HTTPStatus.OK.phrase, headers, body)
