"""Fair spectating: during a race no viewer gets a stock card before every racer still playing
has turned it.

Every racer plays the same deck, so a card a viewer sees in a rival's game is information about
the viewer's own coming stock. A viewer's copy of each racer's game is therefore the longest
prefix of its events whose turned cards every still-playing racer has seen too (the *frontier*:
the intersection of what they have seen). A racer whose game is done no longer holds anyone
back; once the race is over everything is released. Pure functions of the folded room.
"""

from __future__ import annotations

from server.domain.lifecycle import RoomStatus
from server.domain.model import Game, Room


def common_cards(room: Room) -> set[str] | None:
    """The cards every still-playing racer has seen, or None when nobody holds viewers back
    (no race running, or every game done). Read it at once: it may be a game's own set."""
    if room.status is not RoomStatus.RACING:
        return None
    games = room.games
    common: set[str] | None = None
    waiting = False  # a racer still playing whose game has not started: it has seen the layout
    for player in room.seats:
        game = games.get(player)
        if game is None or game.version == 0:
            waiting = True
            continue
        if game.progress.status.done:
            continue
        common = game.seen if common is None else common & game.seen
    if waiting:
        layout = _layout(room)
        common = layout if common is None else common & layout
    return common


def _layout(room: Room) -> set[str]:
    """What a racer has seen before its first event: the layout every game starts from."""
    for game in room.games.values():
        if game.reveals:
            return set(game.reveals[0])
    return set()


def viewable(game: Game, start: int, common: set[str] | None) -> int:
    """How many of the game's events a viewer may have, given that ``start`` already are."""
    if common is None:
        return game.version
    count = start
    reveals = game.reveals
    while count < game.version and common.issuperset(reveals[count]):
        count += 1
    return count
