"""The plain-text game record players keep and share (docs/records.md, "Text export").

Like chess's PGN: tag lines (`[Room "k2x7m4qa"]`), a blank line, then one line per move in the
canonical notation with its time from the start and the cards it turned up. It holds the public
game only (the layout and what was turned, never the stock's order), and the seed only when the
caller says it is public, so a file can be replayed with the public fold and nothing else.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from shared.cards import CARDS
from shared.errors import ClientError, CorruptEvent
from shared.events import EVENT_VERSION, GAME_STARTED, MOVED, RESIGNED, check_event
from shared.variants import SWISS, VARIANTS
from shared.views import public_event, public_fold

__all__ = ["BadExport", "ExportHeader", "ExportedGame", "parse_export", "write_export"]

GAME_TAG = "Solitaire Arena"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_TAG = re.compile(r'\[([A-Za-z]+) ("(?:[^"\\]|\\.)*")\]')
_TIME = re.compile(r"(-?)(?:(\d+):)?(\d+):(\d\d)\.(\d\d\d)")
_MOVE_LINE = re.compile(r"(\d+)\. (\S+) (\S+)((?: \+[0-9TJQKA][CDHS])*)")
_RESIGN_LINE = re.compile(r"resign (\S+)(?: (\S+))?")


class BadExport(ClientError):
    """A text game record that does not follow docs/records.md, or whose moves do not replay."""

    code = "bad_export"


@dataclass(frozen=True)
class ExportHeader:
    """Who played which room, and how it ended; ``seed`` only when it is public."""

    room: str
    player: str
    result: str
    place: int | None = None
    seed: str | None = None


@dataclass(frozen=True)
class ExportedGame:
    """A parsed text record: its header and the game's public events."""

    header: ExportHeader
    events: list[dict[str, Any]]


def exported_events(events: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The public events a text record keeps of a game (private or public), nothing more."""
    kept: list[dict[str, Any]] = []
    for event in events:
        kind = check_event(event)
        shown = public_event(event) if kind == GAME_STARTED and "deck" in event else event
        if kind == GAME_STARTED:
            keys: tuple[str, ...] = ("variant", "deal_version", "layout", "stock_count", "at")
        elif kind == MOVED:
            keys = ("move", "revealed", "at")
        else:
            keys = ("at", "reason") if shown.get("reason") is not None else ("at",)
        kept.append({"type": kind, "v": EVENT_VERSION} | {k: shown[k] for k in keys})
    return kept


# ---- writing --------------------------------------------------------------------------------


def _quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _clock(ms: int) -> str:
    """An offset in milliseconds as [h:]m:ss.mmm, exact."""
    sign = "-" if ms < 0 else ""
    seconds, millis = divmod(abs(ms), 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{sign}{hours}:{minutes:02d}:{seconds:02d}.{millis:03d}"
    return f"{sign}{minutes}:{seconds:02d}.{millis:03d}"


def _iso(ms: int) -> str:
    moment = _EPOCH + timedelta(milliseconds=ms)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def _layout(start: Mapping[str, Any]) -> str:
    layout = start["layout"]
    if start["variant"] == SWISS:
        return " / ".join(" ".join(pile) or "-" for pile in layout["tableau"])
    return " ".join(card or "-" for card in layout["reserve"])


def write_export(header: ExportHeader, events: Iterable[Mapping[str, Any]]) -> str:
    """The text record of a game's events (private or public), under the header's tags."""
    kept = exported_events(events)
    if not kept or kept[0]["type"] != GAME_STARTED:
        raise CorruptEvent("a game starts with a game_started event")
    public_fold(kept)  # refuses what does not replay
    start = kept[0]
    moves = [e for e in kept[1:] if e["type"] == MOVED]
    tags: list[tuple[str, str]] = [
        ("Game", GAME_TAG),
        ("Room", header.room),
        ("Variant", start["variant"]),
        ("DealVersion", str(start["deal_version"])),
    ]
    if header.seed is not None:
        tags.append(("Seed", header.seed))
    tags += [("Player", header.player), ("Result", header.result)]
    if header.place is not None:
        tags.append(("Place", str(header.place)))
    tags += [
        ("Start", _iso(start["at"])),
        ("Moves", str(len(moves))),
        ("Layout", _layout(start)),
        ("Stock", str(start["stock_count"])),
    ]
    lines = [f"[{name} {_quote(value)}]" for name, value in tags]
    lines.append("")
    number = 0
    for event in kept[1:]:
        offset = _clock(event["at"] - start["at"])
        if event["type"] == MOVED:
            number += 1
            shown = "".join(f" +{card}" for card in event["revealed"])
            lines.append(f"{number}. {event['move']} {offset}{shown}")
        else:
            reason = event.get("reason")
            if reason is not None and (type(reason) is not str or not re.fullmatch(r"\S+", reason)):
                raise CorruptEvent(f"a resignation's reason is one word, not {reason!r}")
            lines.append(f"resign {offset}" + (f" {reason}" if reason else ""))
    return "\n".join(lines) + "\n"


# ---- reading --------------------------------------------------------------------------------


def _offset(text: str, line: int) -> int:
    m = _TIME.fullmatch(text)
    if m is None:
        raise BadExport(f"line {line}: {text!r} is not a time like 1:02.345")
    sign, hours, minutes, seconds, millis = m.groups()
    if int(seconds) > 59 or (hours is not None and int(minutes) > 59):
        raise BadExport(f"line {line}: {text!r} is not a time like 1:02.345")
    ms = ((int(hours or 0) * 60 + int(minutes)) * 60 + int(seconds)) * 1000 + int(millis)
    return -ms if sign else ms


def _start_ms(text: str) -> int:
    try:
        moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=UTC)
    except ValueError:
        raise BadExport(f"Start {text!r} is not a UTC time like 2026-01-02T03:04:05.678Z") from None
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def _card_or_none(token: str) -> str | None:
    if token == "-":
        return None
    if token not in CARDS:
        raise BadExport(f"Layout: {token!r} is not a card")
    return token


def _parse_layout(variant: str, text: str) -> dict[str, Any]:
    if variant == SWISS:
        piles = [p.split() for p in text.split("/")]
        tableau = [[] if p == ["-"] else [_card_or_none(c) for c in p] for p in piles]
        return {"tableau": tableau, "reserve": []}
    return {"tableau": [], "reserve": [_card_or_none(c) for c in text.split()]}


def _tags(lines: list[str]) -> tuple[dict[str, str], int]:
    tags: dict[str, str] = {}
    for i, line in enumerate(lines):
        if not line.strip():
            return tags, i + 1
        m = _TAG.fullmatch(line.strip())
        if m is None and i == 0:
            raise BadExport(f'not a {GAME_TAG} game record: it begins with no [Game "..."] tag')
        if m is None:
            raise BadExport(f'line {i + 1}: not a tag like [Room "k2x7m4qa"]')
        try:
            value = json.loads(m.group(2))
        except ValueError:
            raise BadExport(f"line {i + 1}: the {m.group(1)} tag's value is badly quoted") from None
        tags[m.group(1)] = value
    return tags, len(lines)


def _required(tags: Mapping[str, str], name: str) -> str:
    if name not in tags:
        raise BadExport(f"the record has no {name} tag")
    return tags[name]


def _integer(tags: Mapping[str, str], name: str) -> int:
    value = _required(tags, name)
    if not re.fullmatch(r"-?\d{1,18}", value):
        raise BadExport(f"the {name} tag is not a number: {value!r}")
    return int(value)


def parse_export(text: str) -> ExportedGame:
    """The header and public events of a text record; BadExport saying where it is wrong."""
    lines = text.replace("\r\n", "\n").split("\n")
    tags, first = _tags(lines)
    if tags.get("Game") != GAME_TAG:
        raise BadExport(f'not a {GAME_TAG} game record: it has no [Game "{GAME_TAG}"] tag')
    variant = _required(tags, "Variant")
    if variant not in VARIANTS:
        raise BadExport(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
    started = _start_ms(_required(tags, "Start"))
    start = {
        "type": GAME_STARTED,
        "v": EVENT_VERSION,
        "variant": variant,
        "deal_version": _integer(tags, "DealVersion"),
        "layout": _parse_layout(variant, _required(tags, "Layout")),
        "stock_count": _integer(tags, "Stock"),
        "at": started,
    }
    events: list[dict[str, Any]] = [start]
    for number, line in enumerate(lines[first:], first + 1):
        line = line.strip()
        if not line:
            continue
        if events[-1]["type"] == RESIGNED:
            raise BadExport(f"line {number}: nothing follows a resignation")
        m = _MOVE_LINE.fullmatch(line)
        if m is not None:
            if int(m.group(1)) != len(events):
                raise BadExport(f"line {number}: move {m.group(1)} where {len(events)} was due")
            revealed = m.group(4).split(" +")[1:]
            at = started + _offset(m.group(3), number)
            event = {"type": MOVED, "v": EVENT_VERSION, "move": m.group(2), "revealed": revealed}
            events.append(event | {"at": at})
            continue
        m = _RESIGN_LINE.fullmatch(line)
        if m is None:
            raise BadExport(f"line {number}: not a move like '12. t3t5 1:02.345' nor a 'resign'")
        resigned = {"type": RESIGNED, "v": EVENT_VERSION, "at": started + _offset(m[1], number)}
        events.append(resigned | ({"reason": m.group(2)} if m.group(2) else {}))
    moves = sum(1 for e in events if e["type"] == MOVED)
    if _integer(tags, "Moves") != moves:
        raise BadExport(f"the Moves tag says {tags['Moves']} but the record has {moves}")
    try:
        public_fold(events)
    except CorruptEvent as exc:
        raise BadExport(f"the moves do not replay: {exc.reason}") from None
    place = _integer(tags, "Place") if "Place" in tags else None
    header = ExportHeader(
        room=_required(tags, "Room"),
        player=_required(tags, "Player"),
        result=_required(tags, "Result"),
        place=place,
        seed=tags.get("Seed"),
    )
    return ExportedGame(header, events)
