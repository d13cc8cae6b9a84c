"""Fair spectating: during a race no viewer gets a stock card before every racer still playing
has turned it.

Every racer plays the same deck, so a card a viewer sees in a rival's game is information about
the viewer's own coming stock. A viewer's copy of each racer's game is therefore the longest
prefix of its events whose turned cards every still-playing racer has seen too (the *frontier*:
the intersection of what they have seen). A racer whose game is done no longer holds anyone
back; once the race is over everything is released. Pure functions of the folded room.
"""

from __future__ import annotations

from server.race.domain.lifecycle import RoomStatus
from server.race.domain.model import FairnessKept, Game, Room


def common_cards(room: Room) -> set[str] | None:
    """The cards every still-playing racer has seen, or None when nobody holds viewers back
    (no race running, or every game done). Read it at once: it is kept for the next call.

    Asked at every move, it intersected every racer's seen set each time (3 % of a paced
    server). While the racers holding viewers back stay the same, their seen sets only grow, so
    a card joins the intersection only when one of them turns it: the room keeps the last
    answer (``Room.fairness``, derived from the folded model alone, so the same in every
    process) and adds to it only the cards turned since, recomputing it when the holders change.
    """
    if room.status is not RoomStatus.RACING:
        return None
    holders, waiting = _holders(room)
    layout = _layout_reveal(room) if waiting else None
    kept = room.fairness
    if kept is not None and kept.holders == holders and kept.layout is layout:
        common = kept.common
        if common is None:
            return None
        versions = kept.versions
        for i, game in enumerate(holders):
            counted = versions[i]
            if game.version == counted:
                continue
            if game.version < counted:
                break  # cannot happen (a stream going back resets the room): recompute
            for revealed in game.reveals[counted : game.version]:
                for card in revealed:
                    if card not in common and _seen_by_all(card, holders, layout):
                        common.add(card)
            versions[i] = game.version
        else:
            return common
    common = _intersection(holders, layout)
    room.fairness = FairnessKept(holders, layout, [g.version for g in holders], common)
    return common


def computed_common_cards(room: Room) -> set[str] | None:
    """``common_cards`` computed from scratch (what it must always equal; tests compare)."""
    if room.status is not RoomStatus.RACING:
        return None
    holders, waiting = _holders(room)
    return _intersection(holders, _layout_reveal(room) if waiting else None, copy=False)


def _holders(room: Room) -> tuple[tuple[Game, ...], bool]:
    """The started games still playing of the seated racers, and whether a seated racer's game
    has not started (it has seen the layout)."""
    games = room.games
    holders: list[Game] = []
    waiting = False
    for player in room.seats:
        game = games.get(player)
        if game is None or game.version == 0:
            waiting = True
        elif not game.progress.status.done:
            holders.append(game)
    return tuple(holders), waiting


def _intersection(
    holders: tuple[Game, ...], layout: tuple[str, ...] | None, copy: bool = True
) -> set[str] | None:
    if not holders:
        common = None
    else:
        common = set(holders[0].seen) if copy else holders[0].seen
        for game in holders[1:]:
            common = common & game.seen
    if layout is not None:
        common = set(layout) if common is None else common & set(layout)
    return common


def _seen_by_all(card: str, holders: tuple[Game, ...], layout: tuple[str, ...] | None) -> bool:
    if layout is not None and card not in layout:
        return False
    return all(card in game.seen for game in holders)


def _layout_reveal(room: Room) -> tuple[str, ...]:
    """What a racer has seen before its first event: the layout every game starts from."""
    for game in room.games.values():
        if game.reveals:
            return game.reveals[0]
    return _NO_LAYOUT


_NO_LAYOUT: tuple[str, ...] = ()


def viewable(game: Game, start: int, common: set[str] | None) -> int:
    """How many of the game's events a viewer may have, given that ``start`` already are."""
    if common is None:
        return game.version
    count = start
    reveals = game.reveals
    while count < game.version and common.issuperset(reveals[count]):
        count += 1
    return count
