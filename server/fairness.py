"""Fair spectating: during a race no viewer gets a stock card before every racer still playing
has turned it.

Every racer plays the same deck, so a card a viewer sees in a rival's game is information about
the viewer's own coming stock. A viewer's copy of each racer's game is therefore the longest
prefix of its events whose turned cards every still-playing racer has seen too (the *frontier*:
the intersection of what they have seen). A racer whose game is done no longer holds anyone
back; once the race is over everything is released. Pure functions of the folded room.
"""

from __future__ import annotations

from server.race import RoomStatus
from server.room import Game, Room


def common_cards(room: Room) -> set[str] | None:
    """The cards every still-playing racer has seen, or None when nobody holds viewers back
    (no race running, or every game done)."""
    if room.status is not RoomStatus.RACING:
        return None
    games = [room.games.get(player) for player in room.seats]
    playing = [g for g in games if g is None or not g.progress.status.done]
    if not playing:
        return None
    layout: set[str] | None = None
    for game in games:
        if game is not None and game.reveals:
            layout = set(game.reveals[0])
            break
    common: set[str] | None = None
    for game in playing:
        seen = game.seen if game is not None and game.version > 0 else layout or set()
        common = set(seen) if common is None else common & seen
    return common


def viewable(game: Game, start: int, common: set[str] | None) -> int:
    """How many of the game's events a viewer may have, given that ``start`` already are."""
    if common is None:
        return game.version
    count = start
    reveals = game.reveals
    while count < game.version and common.issuperset(reveals[count]):
        count += 1
    return count
