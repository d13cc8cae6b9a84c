"""A page's first view on the server (server/net/first_view.py, server/net/http.py): every text
escaped, the head and body put in the shell, a renderer's page served with the security
headers, and the plain shell when a renderer has nothing or the store fails it."""

from __future__ import annotations

import asyncio
import re

from websockets.datastructures import Headers
from websockets.http11 import Request

from server.kernel.errors import NoSuchRoom
from server.net.first_view import FirstView, PageView, element, filled
from server.net.http import CONTENT_SECURITY_POLICY, SHELL, WebViewer, load_static
from server.store.errors import StoreUnavailable

EVIL = '"><script>alert(1)</script>&'


def test_element_escapes_every_text_and_attribute() -> None:
    made = element("a", {"href": f"/@/{EVIL}"}, EVIL, 7, None, [element("b", {}, "x")])
    assert made.html == (
        '<a href="/@/&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;">'
        '"&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;7<b>x</b></a>'
    )


def test_the_shell_gets_the_head_and_the_body() -> None:
    shell = load_static()[SHELL].decode()
    view = FirstView(title=EVIL, description=EVIL, body=element("p", {}, EVIL), kind="profile")
    page = filled(shell, view, f"http://a.example/@/{EVIL}")
    assert "<script>alert" not in page
    assert page.count("<title>") == 1
    assert '<meta property="og:type" content="profile">' in page
    assert '<meta property="og:url" content="http://a.example/@/&quot;&gt;&lt;script' in page
    head, body = page.split("</head>")
    assert "og:title" in head
    assert '<main id="main">\n<p>&quot;' not in body  # text, not an attribute: quotes stay
    assert '<main id="main">\n<p>"&gt;&lt;script&gt;' in body


def serve(web: WebViewer, path: str, **headers: str) -> tuple[int, str, Headers]:
    response = asyncio.run(web.respond(None, Request(path, Headers(headers))))  # type: ignore[arg-type]
    assert response is not None
    return response.status_code, response.body.decode(), response.headers


def test_a_registered_renderer_fills_its_pages_and_only_those() -> None:
    asked: list[str] = []

    async def render(match: re.Match[str]) -> FirstView | None:
        asked.append(match.group(1))
        if match.group(1) == "none":
            return None
        if match.group(1) == "down":
            raise StoreUnavailable("the store is down")
        if match.group(1) == "gone":
            raise NoSuchRoom("no room")
        return FirstView(
            title=f"Room {match.group(1)}", description="d", body=element("p", {}, "b")
        )

    view = PageView(re.compile(r"/watch/([a-z0-9]+)"), render)
    web = WebViewer((), views=[view], scheme="https")
    status, page, headers = serve(web, "/watch/abc?x=1", Host="arena.example")
    assert status == 200
    assert headers["Content-Security-Policy"] == CONTENT_SECURITY_POLICY
    assert headers["Content-Type"] == "text/html; charset=utf-8"
    assert int(headers["Content-Length"]) == len(page.encode())
    assert "<title>Room abc</title>" in page
    assert '<meta property="og:url" content="https://arena.example/watch/abc?x=1">' in page
    plain = load_static()[SHELL].decode()
    for code in ("none", "down", "gone"):  # nothing to show, or the store failing: the shell
        assert serve(web, f"/watch/{code}")[1] == plain
    assert serve(web, "/tv")[1] == plain  # no renderer
    assert asked == ["abc", "none", "down", "gone"]
    _, page, _ = serve(web, "/watch/abc", Host="a.example", **{"X-Forwarded-Proto": "http"})
    assert '<meta property="og:url" content="http://a.example/watch/abc">' in page
