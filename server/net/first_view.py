"""A page's first view, rendered on the server: what a link preview, a crawler or a browser
without scripts sees of a page whose script fills it over the WebSocket (its title, a
description, an Open Graph card and a plain HTML body). The script replaces the body when it
runs. A feature registers a renderer for its pages' paths (``PageView``); the transport knows
no feature, only this shape.

Every text is escaped here: a renderer builds its body from ``element`` and plain strings, so
a name from the server is never markup.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from html import escape


@dataclass(frozen=True, slots=True)
class Markup:
    """HTML known to be safe: made by ``element`` from escaped text."""

    html: str


Child = Markup | str | int | None | Iterable["Child"]


def _flat(child: Child) -> str:
    if child is None:
        return ""
    if isinstance(child, Markup):
        return child.html
    if isinstance(child, str | int):
        return escape(str(child), quote=False)
    return "".join(_flat(c) for c in child)


def element(tag: str, attrs: dict[str, str] | None = None, *children: Child) -> Markup:
    """``<tag attrs>children</tag>`` with every attribute value and text escaped; ``tag`` and
    the attribute names are the renderer's own constants."""
    shown = "".join(f' {name}="{escape(value)}"' for name, value in (attrs or {}).items())
    return Markup(f"<{tag}{shown}>{_flat(children)}</{tag}>")


@dataclass(frozen=True, slots=True)
class FirstView:
    """What a page shows before its script runs."""

    title: str  # the <title> and og:title
    description: str  # the meta description and og:description
    body: Markup  # the first view of <main>
    kind: str = "website"  # og:type


Renderer = Callable[[re.Match[str]], Awaitable[FirstView | None]]
"""A page's renderer, given its path's match: None leaves the plain shell."""


@dataclass(frozen=True, slots=True)
class PageView:
    """A feature's pages (a full match of the path) and their renderer."""

    pattern: re.Pattern[str]
    render: Renderer


_TITLE = "<title>Solitaire Arena</title>"
_MAIN = '<main id="main">'


def filled(shell: str, view: FirstView, url: str) -> str:
    """The shell with ``view``'s head (title, description, Open Graph card) and body."""
    meta = [
        f"<title>{escape(view.title, quote=False)}</title>",
        f'<meta name="description" content="{escape(view.description)}">',
        f'<meta property="og:title" content="{escape(view.title)}">',
        f'<meta property="og:description" content="{escape(view.description)}">',
        f'<meta property="og:type" content="{escape(view.kind)}">',
        f'<meta property="og:url" content="{escape(url)}">',
        '<meta property="og:site_name" content="Solitaire Arena">',
    ]
    return shell.replace(_TITLE, "\n".join(meta), 1).replace(_MAIN, f"{_MAIN}\n{view.body.html}", 1)
