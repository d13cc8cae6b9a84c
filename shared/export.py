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
from typing import Any

from shared.cards import CARDS
from shared.errors import ClientError, CorruptEvent
from shared.events import EVENT_VERSION, GAME_STARTED, MOVED, RESIGNED, check_event
from shared.variants import SWISS, VARIANTS
from shared.views import public_event, public_fold

__all__ = [
    "BAD_EXPORT",
    "ExportHeader",
    "ExportedGame",
    "bad_export",
    "exported_events",
    "parse_export",
    "write_export",
]

GAME_TAG = "Solitaire Arena"
_DAY_MS = 86_400_000
_ISO = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z")
_TAG = re.compile(r'\[([A-Za-z]+) ("(?:[^"\\]|\\.)*")\]')
_TIME = re.compile(r"(-?)(?:(\d+):)?(\d+):(\d\d)\.(\d\d\d)")
_MOVE_LINE = re.compile(r"(\d+)\. (\S+) (\S+)((?: \+[0-9TJQKA][CDHS])*)")
_RESIGN_LINE = re.compile(r"resign (\S+)(?: (\S+))?")


BAD_EXPORT = "bad_export"
COMMENT = ";"  # starts a comment, to the end of its line, below the tags


def bad_export(reason: str) -> ClientError:
    """A text game record that does not follow docs/records.md, or whose moves do not replay:
    the user's file, never a message on the wire, so a code and no class of its own (the
    protocol's error table lists every ClientError class)."""
    return ClientError(reason, code=BAD_EXPORT)


@dataclass(frozen=True)
class ExportHeader:
    """Who played which room, and how it ended; ``seed`` (and the ``salt`` that checks it against
    the race's ``commitment``, docs/protocol.md "Fairness") only when it is public."""

    room: str
    player: str
    result: str
    place: int | None = None
    seed: str | None = None
    salt: str | None = None
    commitment: str | None = None


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


def _days(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil): a
    calendar by arithmetic, as shared/ reads no clock and so imports no datetime."""
    year -= month <= 2
    era = year // 400
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    return era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468


def _date(days: int) -> tuple[int, int, int]:
    """The inverse of _days (civil_from_days)."""
    days += 719468
    era = days // 146097
    doe = days - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, doy - (153 * mp + 2) // 5 + 1


def _iso(ms: int) -> str:
    """Milliseconds since the epoch as UTC ISO 8601 with milliseconds, exact."""
    days, rest = divmod(ms, _DAY_MS)
    year, month, day = _date(days)
    seconds, millis = divmod(rest, 1000)
    hour, minute, second = seconds // 3600, seconds // 60 % 60, seconds % 60
    return f"{year:04d}-{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{second:02d}.{millis:03d}Z"


def _layout(start: Mapping[str, Any]) -> str:
    layout = start["layout"]
    if start["variant"] == SWISS:
        return " / ".join(" ".join(pile) or "-" for pile in layout["tableau"])
    return " ".join(card or "-" for card in layout["reserve"])


def write_export(
    header: ExportHeader,
    events: Iterable[Mapping[str, Any]],
    *,
    notes: Iterable[str] = (),
    comments: Mapping[int, str] | None = None,
) -> str:
    """The text record of a game's events (private or public), under the header's tags;
    ``notes`` are comment lines before the moves, ``comments`` a comment after a move's line
    (by move number, 1 for the first): a reader skips both (docs/records.md)."""
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
    if header.salt is not None:
        tags.append(("Salt", header.salt))
    if header.commitment is not None:
        tags.append(("Commitment", header.commitment))
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
    lines += [_comment(note) for note in notes]
    number = 0
    for event in kept[1:]:
        offset = _clock(event["at"] - start["at"])
        if event["type"] == MOVED:
            number += 1
            shown = "".join(f" +{card}" for card in event["revealed"])
            said = (comments or {}).get(number)
            note = f" {_comment(said)}" if said else ""
            lines.append(f"{number}. {event['move']} {offset}{shown}{note}")
        else:
            reason = event.get("reason")
            if reason is not None and (type(reason) is not str or not re.fullmatch(r"\S+", reason)):
                raise CorruptEvent(f"a resignation's reason is one word, not {reason!r}")
            lines.append(f"resign {offset}" + (f" {reason}" if reason else ""))
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """A comment to the line's end, as PGN's ``;``: one line, whatever the text held."""
    return f"{COMMENT} " + " ".join(text.split())


# ---- reading --------------------------------------------------------------------------------


def _offset(text: str, line: int) -> int:
    m = _TIME.fullmatch(text)
    if m is None:
        raise bad_export(f"line {line}: {text!r} is not a time like 1:02.345")
    sign, hours, minutes, seconds, millis = m.groups()
    if int(seconds) > 59 or (hours is not None and int(minutes) > 59):
        raise bad_export(f"line {line}: {text!r} is not a time like 1:02.345")
    ms = ((int(hours or 0) * 60 + int(minutes)) * 60 + int(seconds)) * 1000 + int(millis)
    return -ms if sign else ms


def _start_ms(text: str) -> int:
    m = _ISO.fullmatch(text)
    year, month, day, hour, minute, second, millis = (int(g) for g in m.groups()) if m else [0] * 7
    if (
        m is None
        or _date(_days(year, month, day)) != (year, month, day)
        or max(hour - 23, minute - 59, second - 59) > 0
    ):
        raise bad_export(f"Start {text!r} is no UTC time like 2026-01-02T03:04:05.678Z")
    return _days(year, month, day) * _DAY_MS + ((hour * 60 + minute) * 60 + second) * 1000 + millis


def _card_or_none(token: str) -> str | None:
    if token == "-":
        return None
    if token not in CARDS:
        raise bad_export(f"Layout: {token!r} is not a card")
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
            raise bad_export(f'not a {GAME_TAG} game record: it begins with no [Game "..."] tag')
        if m is None:
            raise bad_export(f'line {i + 1}: not a tag like [Room "k2x7m4qa"]')
        try:
            value = json.loads(m.group(2))
        except ValueError:
            raise bad_export(f"line {i + 1}: the {m.group(1)} tag is badly quoted") from None
        tags[m.group(1)] = value
    return tags, len(lines)


def _required(tags: Mapping[str, str], name: str) -> str:
    if name not in tags:
        raise bad_export(f"the record has no {name} tag")
    return tags[name]


def _integer(tags: Mapping[str, str], name: str) -> int:
    value = _required(tags, name)
    if not re.fullmatch(r"-?\d{1,18}", value):
        raise bad_export(f"the {name} tag is not a number: {value!r}")
    return int(value)


def parse_export(text: str) -> ExportedGame:
    """The header and public events of a text record; ClientError ``bad_export`` saying where it
    is wrong."""
    lines = text.replace("\r\n", "\n").split("\n")
    tags, first = _tags(lines)
    if tags.get("Game") != GAME_TAG:
        raise bad_export(f'not a {GAME_TAG} game record: it has no [Game "{GAME_TAG}"] tag')
    variant = _required(tags, "Variant")
    if variant not in VARIANTS:
        raise bad_export(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
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
        line = line.split(COMMENT, 1)[0].strip()  # a comment runs to the line's end
        if not line:
            continue
        if events[-1]["type"] == RESIGNED:
            raise bad_export(f"line {number}: nothing follows a resignation")
        m = _MOVE_LINE.fullmatch(line)
        if m is not None:
            if int(m.group(1)) != len(events):
                raise bad_export(f"line {number}: move {m.group(1)} where {len(events)} was due")
            revealed = m.group(4).split(" +")[1:]
            at = started + _offset(m.group(3), number)
            event = {"type": MOVED, "v": EVENT_VERSION, "move": m.group(2), "revealed": revealed}
            events.append(event | {"at": at})
            continue
        m = _RESIGN_LINE.fullmatch(line)
        if m is None:
            raise bad_export(f"line {number}: not a move like '12. t3t5 1:02.345' nor a 'resign'")
        resigned = {"type": RESIGNED, "v": EVENT_VERSION, "at": started + _offset(m[1], number)}
        events.append(resigned | ({"reason": m.group(2)} if m.group(2) else {}))
    moves = sum(1 for e in events if e["type"] == MOVED)
    if _integer(tags, "Moves") != moves:
        raise bad_export(f"the Moves tag says {tags['Moves']} but the record has {moves}")
    try:
        public_fold(events)
    except CorruptEvent as exc:
        raise bad_export(f"the moves do not replay: {exc.reason}") from None
    place = _integer(tags, "Place") if "Place" in tags else None
    header = ExportHeader(
        room=_required(tags, "Room"),
        player=_required(tags, "Player"),
        result=_required(tags, "Result"),
        place=place,
        seed=tags.get("Seed"),
        salt=tags.get("Salt"),
        commitment=tags.get("Commitment"),
    )
    return ExportedGame(header, events)
