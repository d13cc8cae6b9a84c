"""The layer structure of Swiss (shared/solver/layers.py): every move is either reversible
inside its layer or lowers 2 * stock + waste + breaks, and the census of a small position
agrees with the complete search.

Rules cited from RULES.md, "Swiss".
"""

from __future__ import annotations

import random

import pytest

import shared
from shared import GameState, new_game, solve
from shared.solver import ALL_PRUNINGS, Status
from shared.solver.layers import Census, breaks, census, layer, potential
from shared.solver.swiss import Swiss
from tests.shared.positions import swiss
from tests.shared.test_solver import NO_BOUND, small_position, swiss_positions


def walk_positions() -> list[GameState]:
    """Positions along random games of Swiss deals, and small random positions."""
    return swiss_positions("swiss-layers", small=80, seeds=20, moves=80)


def test_every_move_is_reversible_in_its_layer_or_lowers_the_potential() -> None:
    """RULES.md, Swiss: one pass of the stock, cards placed only where the tableau rule takes
    them (an empty pile only an Ace), foundation tops may come back. So a move either keeps
    (stock, waste, breaks) and can be undone by one move, or lowers the potential."""
    undone = lowered = 0
    for state in walk_positions():
        search = Swiss(state, frozenset())  # no symmetry: positions compared exactly
        node = search.node(state)
        assert breaks(state.tableau) >= node[5]
        for _, move, child in search.children(node):
            assert child[1] <= node[1]  # the stock never grows
            assert breaks(child[0]) <= breaks(node[0])  # no break is ever formed
            if layer(child) == layer(node):
                back = {grandchild for _, _, grandchild in search.children(child)}
                assert node in back, (state, move)
                undone += 1
            else:
                assert potential(child) < potential(node), (state, move)
                lowered += 1
    assert undone > 1_000
    assert lowered > 1_000


def test_a_fresh_deal_has_a_potential_of_at_most_seventy_nine() -> None:
    """27 stock cards count twice, an empty waste nothing, at most 25 tableau breaks."""
    for seed in range(1, 50):
        state = new_game("swiss", seed=seed)
        node = Swiss(state, ALL_PRUNINGS).node(state)
        assert layer(node)[:2] == (27, 0)
        assert 54 <= potential(node) <= 54 + 25


@pytest.mark.long
def test_census_wins_where_the_complete_search_wins() -> None:
    """A census that reaches a win has found a won position reachable from the start; the
    complete search (no bound, no streamliner) must then find a line too, and never call the
    position unwinnable."""
    rng = random.Random("swiss-census")
    wins = 0
    for _ in range(60):  # 13 of these reach a win: enough to hold the claim, at half the CPU
        state = small_position("swiss", rng, rng.randint(2, 8), waste_weight=9)
        count = census(state, 3_000)
        assert count.components <= count.positions
        assert count.largest <= count.positions
        plain = solve(state, max_nodes=20_000, prunings=NO_BOUND, streamline=False)
        assert not (count.won and plain.status == Status.UNWINNABLE), state
        assert not (count.complete and plain.status == Status.WON), state
        wins += count.won
    assert wins >= 10


def test_census_of_a_lost_position_is_complete() -> None:
    """RULES.md, Swiss: the Three of spades waits for its Two, which lies under it in the
    waste; the Ace of hearts on top can only go to an empty pile (one, by PILE_SYMMETRY), and
    from there back up nowhere (no foundation takes an Ace before the King). Two positions,
    two components (the Ace played is a waste card played: irreversible)."""
    waste = [c for c in shared.FULL_DECK if c not in ("3S", "AH")] + ["3S", "AH"]
    state = swiss(waste=waste)
    assert census(state, 100) == Census(2, 2, 1, False, True, 2)
    assert solve(state, max_nodes=100, prunings=NO_BOUND, streamline=False).status == (
        Status.UNWINNABLE
    )


def test_census_stops_at_its_budget() -> None:
    count = census(new_game("swiss", seed=3), 2_000)
    assert not count.complete
    assert not count.won
    assert count.positions == 2_000
