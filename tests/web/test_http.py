"""Plain HTTP on the server's port (server/net/http.py): the pages and their security headers, the
vendored library as pinned, the Origin check of WebSocket upgrades, and TLS served directly."""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import shutil
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from websockets.asyncio.client import connect
from websockets.datastructures import Headers
from websockets.exceptions import InvalidStatus

from server.net.http import CONTENT_SECURITY_POLICY, WebViewer, load_static
from server.runtime.config import parse_config
from shared.protocol import decode, encode
from tests.support.redis_server import RedisServer
from tests.support.server_process import ServerProcess
from tests.web.conftest import FAST

PAGES = [
    "/",
    "/tv",
    "/leaderboard",
    "/@/ann",
    "/@/Stra%C3%9Fe",
    "/watch/k2x7m4qa",
    "/replay/k2x7m4qa/ann",
    "/replay/K2X7M4QA/p3f9a%20b",
    "/play",
    "/play?variant=quadrennial&seed=19",
    "/play/k2x7m4qa",
    "/tournaments",
    "/tournament/t7k2m4",
]
WEB = Path(__file__).resolve().parents[2] / "server" / "net" / "web"


def get(
    url: str, context: ssl.SSLContext | None = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=10, context=context) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read()


class Scripts(HTMLParser):
    """Every script, style and event-handler attribute of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[dict[str, str | None]] = []
        self.inline: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            self.scripts.append(dict(attrs))
            self._in_script = True
        if tag == "style":
            self.inline.append("<style>")
        self.inline += [name for name, _ in attrs if name.startswith("on") or name == "style"]

    def handle_endtag(self, tag: str) -> None:
        self._in_script = self._in_script and tag != "script"

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append(data)


def test_every_page_carries_the_csp_and_has_no_inline_script(arena: ServerProcess) -> None:
    assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
    assert "script-src 'self'" in CONTENT_SECURITY_POLICY
    for path in PAGES:
        status, headers, body = get(f"http://127.0.0.1:{arena.port}{path}")
        assert status == 200, path
        assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        page = Scripts()
        page.feed(body.decode())
        assert page.inline == []
        assert page.scripts
        assert all(s["src"] and s["src"].startswith("/static/") for s in page.scripts)
    for name in load_static():
        status, headers, body = get(f"http://127.0.0.1:{arena.port}/static/{name}")
        assert status == 200
        assert body == (WEB / name).read_bytes()
        assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    # The icon where browsers look for it unasked, as any static file is served.
    status, headers, body = get(f"http://127.0.0.1:{arena.port}/favicon.ico")
    assert (status, headers["Content-Type"]) == (200, "image/svg+xml")
    assert body == (WEB / "favicon.svg").read_bytes()
    assert body.startswith(b'<svg xmlns="http://www.w3.org/2000/svg"')
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert headers["X-Content-Type-Options"] == "nosniff"
    for path in (
        "/nope",
        "/static/../app.py",
        "/static/",
        "/watch/",
        "/watch/a/b",
        "/play/",
        "/play/a/b",
        "/play/a-b",
        "/@/",
        "/@/a/b",
    ):
        assert get(f"http://127.0.0.1:{arena.port}{path}")[0] == 404, path
    status, _, body = get(f"http://127.0.0.1:{arena.port}/healthz")
    assert (status, json.loads(body)) == (200, {"status": "ok", "store": True})


def test_the_vendored_msgpack_is_the_pinned_release() -> None:
    notes = (WEB / "msgpack" / "README.md").read_text()
    pinned = re.search(r"`msgpack.min.js`: sha256 `([0-9a-f]{64})`", notes)
    assert pinned is not None
    assert hashlib.sha256((WEB / "msgpack" / "msgpack.min.js").read_bytes()).hexdigest() == (
        pinned.group(1)
    )
    assert "Copyright 2019 The MessagePack Community" in (WEB / "msgpack" / "LICENSE").read_text()


async def hello(url: str, **options: Any) -> dict[str, Any]:
    async with connect(url, **options) as ws:
        await ws.send(encode({"type": "hello", "protocol": 1}))
        return decode(await ws.recv())


async def test_a_browser_upgrade_from_a_foreign_origin_is_refused(arena: ServerProcess) -> None:
    with pytest.raises(InvalidStatus) as refused:
        await hello(arena.url, origin="http://evil.example")
    assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus):
        await hello(arena.url, origin=f"http://127.0.0.1:{arena.port + 1}")
    own = f"http://127.0.0.1:{arena.port}"
    assert (await hello(arena.url, origin=own))["type"] == "welcome"
    assert (await hello(arena.url))["type"] == "welcome"  # no Origin: not a browser


def test_allowed_origins_replace_the_same_origin_default() -> None:
    config = parse_config(["--allowed-origins", "https://arena.example/, http://LOCAL:8080"])
    assert config.allowed_origins == ("https://arena.example", "http://local:8080")
    web = WebViewer(config.allowed_origins, files={})
    own = Headers({"Host": "arena.example", "Origin": "https://arena.example"})
    assert web.origin_allowed(own)
    assert web.origin_allowed(Headers({"Host": "x", "Origin": "http://local:8080"}))
    assert not web.origin_allowed(Headers({"Host": "x", "Origin": "http://x"}))
    assert web.origin_allowed(Headers({"Host": "x"}))
    default = WebViewer((), files={})
    assert default.origin_allowed(Headers({"Host": "x:1", "Origin": "https://x:1"}))
    assert not default.origin_allowed(Headers({"Host": "x:1", "Origin": "null"}))
    assert not default.origin_allowed(Headers({"Host": "x:1", "Origin": "http://x:2"}))


def test_tls_needs_both_the_certificate_and_its_key() -> None:
    with pytest.raises(SystemExit):
        parse_config(["--tls-cert", "cert.pem"])
    config = parse_config([], env={"ARENA_TLS_CERT": "c.pem", "ARENA_TLS_KEY": "k.pem"})
    assert (config.tls_cert, config.tls_key) == ("c.pem", "k.pem")


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, made by the openssl command line."""
    openssl = shutil.which("openssl")
    assert openssl is not None, "scripts/test installs openssl"
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


class TlsServerProcess(ServerProcess):
    """A server serving https and wss: its health is asked over TLS."""

    def __init__(self, cert: Path, **options: Any) -> None:
        super().__init__(**options)
        self.context = ssl.create_default_context(cafile=str(cert))

    def _healthy(self) -> bool:
        try:
            return get(f"https://127.0.0.1:{self.port}/healthz", self.context)[0] == 200
        except OSError:
            return False


async def test_https_and_wss_with_a_test_certificate(
    redis_server: RedisServer, browser: webdriver.Chrome, tmp_path: Path
) -> None:
    cert, key = make_certificate(tmp_path)
    server = TlsServerProcess(
        cert,
        redis_url=redis_server.url,
        log_path=tmp_path / "server.log",
        extra_args=[*FAST, "--tls-cert", str(cert), "--tls-key", str(key)],
    )
    server.start()
    try:
        context = server.context
        status, headers, body = get(f"https://127.0.0.1:{server.port}/watch/abc", context)
        assert status == 200
        assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
        assert b"/static/viewer.js" in body
        wss = f"wss://127.0.0.1:{server.port}"
        assert (await hello(wss, ssl=context))["type"] == "welcome"
        with pytest.raises(InvalidStatus):
            await hello(wss, ssl=context, origin="https://evil.example")
        # The page over https opens its socket over wss, same origin, and lists the rooms.
        browser.get(f"https://127.0.0.1:{server.port}/")
        deadline = time.monotonic() + 15
        while (
            browser.execute_script("return document.getElementById('main').dataset.refreshed")
            is None
        ):
            assert time.monotonic() < deadline, "the page never got the rooms over wss"
            await asyncio.sleep(0.1)
        assert browser.execute_script("return location.protocol") == "https:"
        assert browser.find_element("id", "link").text == "connected"
    finally:
        server.stop()
