"""The solver (shared/solver.py): every "won" replays as a win, "unwinnable" only when proved,
"unknown" when the budget runs out, and each pruning gives the answers the plain search gives.

Rules cited from RULES.md by section.
"""

from __future__ import annotations

import random
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import shared
from shared import GameState, Solution, apply_move, is_won, new_game, solve
from shared.solver import ALL_PRUNINGS, Pruning, Status
from shared.solver.bounds import has_dead_card
from shared.solver.swiss import Swiss
from tests.shared.positions import QUAD_ORDER, SUIT_ORDER, SWISS_ORDER, quad, swiss

ALL_BUT_SWISS = {"C": 13, "D": 13, "H": 13}
# The complete Swiss search alone: no bound at the root, no streamliner first.
NO_BOUND = ALL_PRUNINGS - {Pruning.DEAD_CARDS}


def replays_to_win(state: GameState, solution: Solution) -> bool:
    for move in solution.moves:
        state = apply_move(state, move)
    return is_won(state)


def small_position(
    variant: str, rng: random.Random, loose: int, *, waste_weight: int = 3
) -> GameState:
    """A position of `variant` with about `loose` cards off the foundations, dealt at random
    into the places RULES.md allows them, the refill rule kept for Quadrennial. A Swiss card
    goes to the waste `waste_weight` times as often as to any one pile or the stock."""
    order = SWISS_ORDER if variant == "swiss" else QUAD_ORDER
    counts = {s: 13 for s in SUIT_ORDER}
    for _ in range(loose):
        counts[rng.choice([s for s in SUIT_ORDER if counts[s] > 0])] -= 1
    cards = [r + s for s in SUIT_ORDER for r in order[counts[s] :]]
    rng.shuffle(cards)
    if variant == "swiss":
        piles: list[list[str]] = [[] for _ in range(9)]
        stock: list[str] = []
        waste: list[str] = []
        for card in cards:
            rng.choice([*piles, stock, *[waste] * waste_weight]).append(card)
        return swiss(piles, stock=stock, waste=waste, found=counts)
    # Quadrennial, standing refill rule: a reserve pile is empty only while the stock is.
    reserve: list[str | None] = list(cards[:8]) + [None] * max(0, 8 - len(cards))
    rng.shuffle(reserve)
    rest = cards[8:]
    cut = rng.randint(0, len(rest))
    return quad(
        reserve,
        stock=rest[:cut],
        waste=rest[cut:],
        found=counts,
        redeals_left=rng.randint(0, 2),
    )


# --- The API -------------------------------------------------------------------------------


def test_solve_and_solution_are_exported() -> None:
    assert shared.solve is solve
    assert "solve" in shared.__all__
    assert "Solution" in shared.__all__


def test_status_compares_as_the_strings_the_issue_names() -> None:
    assert {s.value for s in Status} == {"won", "unwinnable", "unknown"}
    assert Status.WON == "won"


def test_a_negative_budget_or_a_hidden_stock_is_refused() -> None:
    state = new_game("swiss", seed=1)
    with pytest.raises(ValueError, match="max_nodes"):
        solve(state, max_nodes=-1)
    with pytest.raises(ValueError, match="face down"):
        solve(replace(state, stock=(None,) * len(state.stock)), max_nodes=10)


# --- Known answers -------------------------------------------------------------------------


def test_swiss_one_move_from_a_win() -> None:
    """RULES.md, Swiss, Foundations: the Ace is the last card of a suit (2 ... K A)."""
    state = swiss([["AS"]], found={**ALL_BUT_SWISS, "S": 12})
    solution = solve(state, max_nodes=10)
    assert solution.status == "won"
    assert solution.moves == ("t1f",)
    assert solution.next_move == "t1f"


def test_quadrennial_one_move_from_a_win() -> None:
    """RULES.md, Quadrennial, Foundations: Ace to King; a reserve card goes to its foundation."""
    reserve = [None, None, "KS", None, None, None, None, None]
    state = quad(reserve, found={**ALL_BUT_SWISS, "S": 12}, redeals_left=0)
    solution = solve(state, max_nodes=10)
    assert solution.status == "won"
    assert solution.moves == ("r3f",)


def test_a_won_position_needs_no_move() -> None:
    state = swiss(found={s: 13 for s in SUIT_ORDER})
    assert solve(state, max_nodes=0) == Solution(Status.WON, (), 0, 0)


def test_swiss_obvious_dead_end_is_proved_unwinnable() -> None:
    """RULES.md, Swiss: an empty pile takes only an Ace; foundations start from a Two. With the
    Three of spades under nothing but the Ace of hearts, and every foundation empty, the Ace
    can go to an empty pile and nothing else ever moves."""
    waste = [c for c in shared.FULL_DECK if c not in ("3S", "AH")] + ["3S", "AH"]
    state = swiss(waste=waste)
    bound = solve(state, max_nodes=100)
    assert bound == Solution(Status.UNWINNABLE, (), 0, 100)  # DEAD_CARDS: the Three is stuck
    solution = solve(state, max_nodes=100, prunings=NO_BOUND, streamline=False)
    assert solution.status == "unwinnable"
    assert solution.moves == ()
    assert solution.nodes == 2  # the position, and the Ace on an empty pile


def test_quadrennial_obvious_dead_end_is_proved_unwinnable() -> None:
    """RULES.md, Quadrennial: no redeal left and the Six of spades lies on the Five in the
    waste, whose foundation wants the Five."""
    reserve = ["7S", "8S", "9S", "TS", "JS", "QS", "KS", None]
    state = quad(reserve, waste=["5S", "6S"], found={**ALL_BUT_SWISS, "S": 4}, redeals_left=0)
    assert solve(state, max_nodes=100).status == "unwinnable"
    plain = solve(state, max_nodes=100, prunings=frozenset())
    assert plain.status == "unwinnable"


def test_unknown_when_the_budget_runs_out() -> None:
    state = new_game("quadrennial", seed=1)
    assert solve(state, max_nodes=0) == Solution(Status.UNKNOWN, (), 0, 0)
    tiny = solve(state, max_nodes=3)
    assert tiny.status == "unknown"
    assert tiny.nodes == 3
    assert tiny.moves == ()
    assert tiny.next_move is None
    assert solve(new_game("swiss", seed=2), max_nodes=5).status == "unknown"


def test_quadrennial_deal_is_won_where_greedy_play_loses() -> None:
    """Seed 2 of Quadrennial: foundation moves first, then deal (the greedy player of
    docs/winnability.md) loses; the solver finds a win by holding a reserve card back."""
    state = new_game("quadrennial", seed=2)
    greedy = state
    while not shared.is_over(greedy):
        legal = sorted(shared.legal_moves(greedy))
        plays = [m for m in legal if m.endswith("f")]
        greedy = apply_move(greedy, (plays or legal)[0])
    assert not is_won(greedy)
    solution = solve(state, max_nodes=50_000)
    assert solution.status == "won"
    assert replays_to_win(state, solution)


def test_solves_from_the_middle_of_a_game() -> None:
    """Works from any position: half way along a winning line, the rest is found again."""
    state = new_game("quadrennial", seed=1)
    whole = solve(state, max_nodes=50_000)
    assert whole.status == "won"
    for move in whole.moves[: len(whole.moves) // 2]:
        state = apply_move(state, move)
    rest = solve(state, max_nodes=50_000)
    assert rest.status == "won"
    assert replays_to_win(state, rest)


# --- Properties ----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(["swiss", "quadrennial"]), seed=st.integers(1, 10**9))
def test_every_solution_of_a_deal_replays_as_a_win(variant: str, seed: int) -> None:
    state = new_game(variant, seed=seed)
    solution = solve(state, max_nodes=2_000)
    assert solution.nodes <= 2_000
    if solution.status == "won":
        assert replays_to_win(state, solution)
    else:
        assert solution.moves == ()


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from(["swiss", "quadrennial"]),
    seed=st.integers(0, 2**32),
    loose=st.integers(1, 10),
)
def test_every_solution_of_a_small_position_replays_and_agrees_with_the_plain_search(
    variant: str, seed: int, loose: int
) -> None:
    """Positions with few cards left are searched to the end; the pruned search and the search
    with no pruning at all must then agree (a pruning that lost a win would show here)."""
    state = small_position(variant, random.Random(seed), loose)
    pruned = solve(state, max_nodes=5_000)
    plain = solve(state, max_nodes=5_000, prunings=frozenset())
    for solution in (pruned, plain):
        if solution.status == "won":
            assert replays_to_win(state, solution)
    if Status.UNKNOWN not in (pruned.status, plain.status):
        assert pruned.status == plain.status


# --- Each pruning: same answers, fewer positions --------------------------------------------

# pruning -> (variant, cards off the foundations, whether the sample alone shows a saving,
# positions in the sample, and how often a Swiss card goes to the waste: see small_position)
PRUNINGS = {
    Pruning.PILE_SYMMETRY: ("swiss", (10, 16), True, 60, 3),
    Pruning.DEAD_CARDS: ("swiss", (8, 16), True, 200, 9),  # a deep waste buries cards
    Pruning.RESERVE_SYMMETRY: ("quadrennial", (16, 24), True, 200, 0),
    Pruning.WASTE_TO_FOUNDATION: ("quadrennial", (16, 24), True, 200, 0),
    Pruning.FINAL_PASS: ("quadrennial", (16, 24), False, 200, 0),  # see its own test below
    Pruning.DEAD_WASTE: ("quadrennial", (16, 24), True, 200, 0),
}


def test_every_pruning_is_tested() -> None:
    assert set(PRUNINGS) == set(Pruning)


@pytest.mark.parametrize("pruning", sorted(PRUNINGS, key=lambda p: p.value), ids=str)
def test_pruning_keeps_every_answer_and_searches_less(pruning: Pruning) -> None:
    """Over a fixed sample of positions of the pruning's variant, searched with and without
    it: identical verdicts wherever both finish, and no more positions expanded in all."""
    variant, (low, high), strict, sample, waste_weight = PRUNINGS[pruning]
    rng = random.Random(f"solver-{pruning.value}")
    without = ALL_PRUNINGS - {pruning}
    decided = unwinnable = on_nodes = off_nodes = 0
    for _ in range(sample):
        state = small_position(variant, rng, rng.randint(low, high), waste_weight=waste_weight)
        on = solve(state, max_nodes=20_000)
        off = solve(state, max_nodes=20_000, prunings=without)
        on_nodes += on.nodes
        off_nodes += off.nodes
        if Status.UNKNOWN in (on.status, off.status):
            continue
        decided += 1
        assert on.status == off.status, state
        unwinnable += on.status == "unwinnable"
        for solution in (on, off):
            assert solution.status == "unwinnable" or replays_to_win(state, solution)
    assert decided >= sample * 5 // 6
    if pruning is not Pruning.PILE_SYMMETRY:  # few Swiss positions this small are lost: below
        assert unwinnable >= 5
    assert on_nodes < off_nodes if strict else on_nodes <= off_nodes


@pytest.mark.long
def test_the_streamliner_keeps_every_answer() -> None:
    """The Swiss streamliner only narrows the moves it tries first, and proves nothing when it
    fails: with it and without it the verdicts agree wherever both finish."""
    rng = random.Random("solver-streamliner")
    decided = unwinnable = 0
    for _ in range(200):
        state = small_position("swiss", rng, rng.randint(8, 16), waste_weight=9)
        on = solve(state, max_nodes=20_000)
        off = solve(state, max_nodes=20_000, streamline=False)
        if Status.UNKNOWN in (on.status, off.status):
            continue
        decided += 1
        assert on.status == off.status, state
        unwinnable += on.status == "unwinnable"
        for solution in (on, off):
            assert solution.status == "unwinnable" or replays_to_win(state, solution)
    assert decided >= 180
    assert unwinnable >= 5


def test_dead_cards_finds_a_card_stuck_in_a_pile() -> None:
    """RULES.md, Swiss: the Four of spades can leave only to its foundation (after the Three)
    or onto a red Five; all three lie beneath it in its pile (the King of clubs between, which
    does not take it), so it never leaves."""
    pile = ["3S", "5H", "5D", "KC", "4S"]
    rest = [c for c in shared.FULL_DECK if c not in pile]
    state = swiss([pile], stock=rest)
    assert solve(state, max_nodes=10) == Solution(Status.UNWINNABLE, (), 0, 10)
    assert has_dead_card(state.tableau, (), tuple(rest), (0, 0, 0, 0))
    # The Five of hearts on top instead: the Four can go on it once it is moved.
    free = swiss([["3S", "5D", "KC", "4S"], ["5H"]], stock=rest)
    assert not has_dead_card(free.tableau, (), tuple(rest), (0, 0, 0, 0))


def test_pile_symmetry_tries_one_empty_pile() -> None:
    """RULES.md, Swiss, Tableau: every empty pile takes the same cards, so an Ace goes to one
    of them only (and is never moved from a pile of its own to another empty one)."""
    waste = [c for c in shared.FULL_DECK if c not in ("3S", "AH")] + ["3S", "AH"]
    state = swiss(waste=waste)
    without = NO_BOUND - {Pruning.PILE_SYMMETRY}
    assert solve(state, max_nodes=100, prunings=NO_BOUND, streamline=False).nodes == 2
    plain = solve(state, max_nodes=100, prunings=without, streamline=False)
    assert plain.status == "unwinnable"
    assert plain.nodes == 10  # the Ace on t1..t9


def test_pile_symmetry_keeps_a_lost_position_lost() -> None:
    """Two Aces to place on nine empty piles, a Three of spades under them that nothing takes
    (RULES.md, Swiss: the Three goes on a red Four, and no foundation has its Two)."""
    waste = [c for c in shared.FULL_DECK if c not in ("3S", "AH", "AD")] + ["3S", "AH", "AD"]
    state = swiss(waste=waste)
    pruned = solve(state, max_nodes=10_000, prunings=NO_BOUND)
    plain = solve(state, max_nodes=10_000, prunings=NO_BOUND - {Pruning.PILE_SYMMETRY})
    assert pruned.status == plain.status == "unwinnable"
    assert pruned.nodes < plain.nodes


def test_final_pass_plays_reserve_cards_in_one_order() -> None:
    """RULES.md, Quadrennial, refill rule: with the stock empty and no redeal left no reserve
    pile is ever refilled, so the order the Kings go up in does not matter."""
    reserve = ["KC", "KD", "KH", None, None, None, None, None]
    found = {"C": 12, "D": 12, "H": 12, "S": 11}
    state = quad(reserve, waste=["QS", "KS"], found=found, redeals_left=0)
    base = ALL_PRUNINGS - {Pruning.DEAD_WASTE}
    assert solve(state, max_nodes=100, prunings=base).nodes == 4  # one King at a time
    plain = solve(state, max_nodes=100, prunings=base - {Pruning.FINAL_PASS})
    assert plain.status == "unwinnable"
    assert plain.nodes == 8  # every subset of the three Kings


def test_dead_waste_stops_at_a_buried_lower_card() -> None:
    """RULES.md, Quadrennial: no redeal left, and the Six of spades lies on the Five: however
    the hearts go, the spades never do."""
    reserve = ["7S", "8S", "9S", "TS", "JS", "QS", "KS", "KH"]
    stock = [r + "H" for r in reversed("3456789TJQ")]  # the Three dealt first
    found = {"C": 13, "D": 13, "H": 2, "S": 4}
    state = quad(reserve, stock=stock, waste=["5S", "6S"], found=found, redeals_left=0)
    assert solve(state, max_nodes=1_000) == Solution(Status.UNWINNABLE, (), 0, 1_000)
    plain = solve(state, max_nodes=1_000, prunings=ALL_PRUNINGS - {Pruning.DEAD_WASTE})
    assert plain.status == "unwinnable"
    assert plain.nodes > 10


# --- The solver's own Swiss move generator ---------------------------------------------------


def swiss_positions(
    label: str = "swiss-children", small: int = 60, seeds: int = 15, moves: int = 60
) -> list[GameState]:
    """``small`` small positions, and positions along random games (``moves`` each) of Swiss
    seeds 1..``seeds``, drawn from a generator seeded with ``label``."""
    rng = random.Random(label)
    positions = [small_position("swiss", rng, rng.randint(1, 30)) for _ in range(small)]
    for seed in range(1, seeds + 1):
        state = new_game("swiss", seed=seed)
        for _ in range(moves):
            positions.append(state)
            legal = sorted(shared.legal_moves(state))
            if not legal:
                break
            state = apply_move(state, rng.choice(legal))
    return positions


def test_swiss_children_are_the_rules_moves_and_positions() -> None:
    """With PILE_SYMMETRY off the solver's generator yields exactly legal_moves, each with
    apply_move's position; with it on, only moves whose position is another move's or the
    position itself, piles permuted, are left out (RULES.md, Swiss)."""
    for state in swiss_positions():
        plain = Swiss(state, frozenset())
        node = plain.node(state)
        children = {move: child for _, move, child in plain.children(node)}
        assert set(children) == shared.legal_moves(state), state
        for move, child in children.items():
            after = apply_move(state, move)
            assert plain.state(child, state.moves_made + 1) == after, (state, move)
            assert child == plain.node(after), (state, move)  # its counts kept right too
        pruned = Swiss(state, ALL_PRUNINGS)
        kept = {move: child for _, move, child in pruned.children(node)}
        assert set(kept) <= set(children)
        kept_keys = {pruned.key(child) for child in kept.values()} | {pruned.key(node)}
        for move in set(children) - set(kept):
            assert pruned.key(children[move]) in kept_keys, (state, move)
