"""Anyone can check a race was fair: a real race says fair; a record with its seed, salt, deal or
a move altered says not fair, naming the check that failed."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shared.deal import deal_deck
from shared.events import move_event, resign_event, start_event
from shared.export import ExportHeader, parse_export, write_export
from shared.game import apply_move, is_over, legal_moves, new_game
from shared.protocol import commitment
from shared.variants import QUADRENNIAL, SWISS
from shared.verification import Outcome, RaceRecord, verify_export, verify_race
from shared.views import public_event

SALT = "0123456789abcdef0123456789abcdef"


def play(variant: str, seed: str, rng: random.Random, moves: int) -> list[dict[str, Any]]:
    """A racer's game as the server serves it: public events of random legal moves."""
    state = new_game(variant, seed=seed)
    at = 1_780_000_000_000
    private = [start_event(variant, deal_deck(variant, seed), at=at, seed=seed)]
    for _ in range(moves):
        if is_over(state):
            break
        move = rng.choice(sorted(legal_moves(state)))
        at += rng.randint(300, 4000)
        private.append(move_event(state, move, at=at))
        state = apply_move(state, move)
    if not is_over(state):
        private.append(resign_event(at=at + 1000))
    return [public_event(e) for e in private]


def race(variant: str = SWISS, seed: str = "42", racers: int = 3, moves: int = 80) -> RaceRecord:
    rng = random.Random(f"{variant}{seed}")
    games = {f"racer{i}": play(variant, seed, rng, moves) for i in range(racers)}
    return RaceRecord(variant, commitment(seed, SALT), seed, SALT, games)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([SWISS, QUADRENNIAL]), st.text(min_size=1, max_size=64), st.integers(1, 4))
def test_a_real_race_is_fair(variant: str, seed: str, racers: int) -> None:
    verdict = verify_race(race(variant, seed, racers, moves=60))
    assert verdict.outcome is Outcome.FAIR, verdict
    assert str(verdict) == "fair"
    assert len(verdict.passed) == 3


def test_a_wrong_seed_or_salt_breaks_the_commitment() -> None:
    real = race()
    for seed, salt in (("43", SALT), ("42", "f" * 32)):
        tampered = RaceRecord(real.variant, real.commitment, seed, salt, real.games)
        verdict = verify_race(tampered)
        assert verdict.outcome is Outcome.NOT_FAIR
        assert str(verdict).startswith("not fair: the revealed seed")
        assert "do not match the commitment" in str(verdict)


def test_a_racer_dealt_another_deck_is_caught_by_name() -> None:
    real = race(SWISS, "42", racers=2)
    other = play(SWISS, "7", random.Random(1), 10)
    games = dict(real.games) | {"mallory": other}
    verdict = verify_race(RaceRecord(SWISS, real.commitment, "42", SALT, games))
    assert verdict.outcome is Outcome.NOT_FAIR
    assert str(verdict).startswith("not fair: mallory was dealt")
    assert "the seed deals" in str(verdict)
    assert verdict.passed[0].startswith("the commitment")


def test_a_card_turned_up_that_the_deck_does_not_hold_is_caught() -> None:
    real = race(QUADRENNIAL, "9", racers=1)
    events = [dict(e) for e in real.games["racer0"]]
    index, event = next((i, e) for i, e in enumerate(events) if e.get("revealed"))
    wrong = next(c for c in deal_deck(QUADRENNIAL, "9") if c not in event["revealed"])
    events[index] = event | {"revealed": [wrong, *event["revealed"][1:]]}
    verdict = verify_race(RaceRecord(QUADRENNIAL, real.commitment, "9", SALT, {"ann": events}))
    assert verdict.outcome is Outcome.NOT_FAIR
    assert f"ann's move {index} " in str(verdict)
    assert f"turned up {wrong}" in str(verdict)


def test_an_illegal_move_is_caught() -> None:
    real = race(SWISS, "5", racers=1)
    events = [dict(e) for e in real.games["racer0"]]
    events[1] = events[1] | {"move": "t1t1"}
    verdict = verify_race(RaceRecord(SWISS, real.commitment, "5", SALT, {"bob": events}))
    assert str(verdict) == "not fair: bob's move 1 (t1t1) is not legal on the seed's deal"


@pytest.mark.parametrize(
    ("seed", "salt", "games", "why"),
    [
        (None, SALT, {"a": []}, "no seed was revealed"),
        ("42", None, {"a": []}, "no seed was revealed"),
        ("42", SALT, {}, "no racer's game was served"),
    ],
)
def test_what_cannot_be_checked_says_why(
    seed: str | None, salt: str | None, games: dict[str, Any], why: str
) -> None:
    record = RaceRecord(SWISS, commitment("42", SALT), seed, salt, games)
    verdict = verify_race(record)
    assert verdict.outcome is Outcome.UNCHECKABLE
    assert not verdict.fair
    assert str(verdict).startswith(f"cannot be checked: {why}")


def exported(variant: str = QUADRENNIAL, seed: str = "42") -> str:
    events = race(variant, seed, racers=1, moves=120).games["racer0"]
    header = ExportHeader(
        room="k2x7m4qa",
        player="Ann",
        result="resigned",
        place=1,
        seed=seed,
        salt=SALT,
        commitment=commitment(seed, SALT),
    )
    return write_export(header, events)


@pytest.mark.parametrize("variant", [SWISS, QUADRENNIAL])
def test_an_exported_game_is_fair(variant: str) -> None:
    text = exported(variant)
    assert f'[Salt "{SALT}"]' in text
    assert str(verify_export(parse_export(text))) == "fair"


def _retag(text: str, tag: str, value: str) -> str:
    lines = [
        f'[{tag} "{value}"]' if line.startswith(f"[{tag} ") else line for line in text.split("\n")
    ]
    return "\n".join(lines)


def test_a_tampered_export_is_not_fair() -> None:
    text = exported(QUADRENNIAL, "42")
    assert "not fair: the revealed seed '43'" in str(
        verify_export(parse_export(_retag(text, "Seed", "43")))
    )
    assert "do not match the commitment" in str(
        verify_export(parse_export(_retag(text, "Salt", "e" * 32)))
    )
    layout = next(line for line in text.split("\n") if line.startswith("[Layout "))
    cards = layout[len('[Layout "') : -2].split()
    swapped = " ".join([cards[1], cards[0], *cards[2:]])
    verdict = verify_export(parse_export(_retag(text, "Layout", swapped)))
    assert str(verdict).startswith(f"not fair: Ann was dealt {cards[1]} on r1")


def test_an_export_with_an_altered_move_is_not_fair() -> None:
    text = exported(QUADRENNIAL, "42")
    lines = text.split("\n")
    number, line = next((i, ln) for i, ln in enumerate(lines) if " +" in ln and ln[0].isdigit())
    shown = line.split(" +")[1]
    other = next(c for c in deal_deck(QUADRENNIAL, "42") if c != shown and f"+{c}" not in text)
    lines[number] = line.replace(f"+{shown}", f"+{other}", 1)
    verdict = verify_export(parse_export("\n".join(lines)))
    assert verdict.outcome is Outcome.NOT_FAIR
    assert f"turned up {other}" in str(verdict)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from([SWISS, QUADRENNIAL]), st.integers(0, 10**6), st.data())
def test_any_two_dealt_cards_swapped_or_any_turned_card_changed_is_not_fair(
    variant: str, seed: int, data: st.DataObject
) -> None:
    real = race(variant, str(seed), racers=1, moves=60)
    events = [dict(e) for e in real.games["racer0"]]
    if data.draw(st.booleans(), label="swap two dealt cards"):
        kind = "tableau" if variant == SWISS else "reserve"
        places = [
            (i, j) for i, pile in enumerate(events[0]["layout"][kind]) for j in range(len(pile))
        ] if kind == "tableau" else [(i, None) for i in range(8)]  # fmt: skip
        a, b = data.draw(st.lists(st.sampled_from(places), min_size=2, max_size=2, unique=True))
        layout = {k: [list(p) if isinstance(p, list) else p for p in v]
                  for k, v in events[0]["layout"].items()}  # fmt: skip

        def get(at: tuple[int, int | None]) -> Any:
            return layout[kind][at[0]] if at[1] is None else layout[kind][at[0]][at[1]]

        def put(at: tuple[int, int | None], card: Any) -> None:
            if at[1] is None:
                layout[kind][at[0]] = card
            else:
                layout[kind][at[0]][at[1]] = card

        first, second = get(a), get(b)
        put(a, second)
        put(b, first)
        events[0] = events[0] | {"layout": layout}
    else:
        turned = [i for i, e in enumerate(events) if e.get("revealed")]
        assume(turned)
        index = data.draw(st.sampled_from(turned), label="the move")
        shown = events[index]["revealed"]
        spot = data.draw(st.integers(0, len(shown) - 1), label="the card")
        other = data.draw(st.sampled_from([c for c in deal_deck(variant, "1") if c != shown[spot]]))
        events[index] = events[index] | {"revealed": [*shown[:spot], other, *shown[spot + 1 :]]}
    record = RaceRecord(variant, real.commitment, str(seed), SALT, {"racer0": events})
    assert verify_race(record).outcome is Outcome.NOT_FAIR
