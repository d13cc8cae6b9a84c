"""Fair spectating end to end: a spectator of a live race never gets a stock card before every
racer still playing has turned it (docs/protocol.md, "Fair spectating").

Three bots race on one deck at different speeds. The spectator checks every frame as it comes:
when a game event of racer X reaches it, the latest progress it has of every other racer says
how far that racer is, and each racer's own record says what it had seen by then. The test
prints how many turned cards a spectator would have seen early without the rule (judged from
the racers' own ack times) and how many it saw early with it (always 0).
"""

from __future__ import annotations

import asyncio
import random
import time
from pathlib import Path
from typing import Any

import pytest

from shared import apply_move, deal_deck, legal_moves, new_game, public_fold
from tests.server.wsclient import Client, assert_no_secrets
from tests.support.server_process import ServerProcess

pytestmark = pytest.mark.e2e  # every test here starts a process

FAST = ["--rate", "1000", "--burst", "1000"]


def layout_cards(event: dict[str, Any]) -> set[str]:
    layout = event["layout"]
    return {c for pile in layout["tableau"] for c in pile} | set(layout["reserve"])


async def bot(client: Client, variant: str, deck: list[str], pause: float, seed: int) -> None:
    """Plays foundation moves first, else a random legal move, for at most 80 moves."""
    rng = random.Random(seed)
    state = new_game(variant, deck=deck)
    for _ in range(80):
        legal = sorted(legal_moves(state))
        if not legal:
            return
        foundation = [m for m in legal if m.endswith("f")]
        move = foundation[0] if foundation else rng.choice(legal)
        assert (await client.move(move))["type"] == "ack"
        state = apply_move(state, move)
        if state.won:
            return
        await asyncio.sleep(pause)
    await client.send({"type": "resign"})


@pytest.mark.parametrize("variant", ["swiss", "quadrennial"])
async def test_no_card_reaches_a_spectator_before_every_playing_racer_turned_it(
    variant: str, tmp_path: Path
) -> None:
    server = ServerProcess(log_path=tmp_path / "server.log", extra_args=FAST)
    server.start()
    seed = f"fair-{variant}"
    deck = deal_deck(variant, seed)
    clients: list[Client] = []
    try:
        racers = [await Client(server.url, n).open() for n in ("fast", "mid", "slow")]
        spectator = await Client(server.url, "eye").open()
        clients = [*racers, spectator]
        for client in clients:
            await client.hello()
        await racers[0].send(
            {"type": "create_room", "variant": variant, "seed": seed, "countdown_ms": 0}
        )
        room = (await racers[0].expect("room"))["room"]["id"]
        for racer in racers:
            await racer.send({"type": "join", "room": room})
            await racer.expect("joined")
        await spectator.send({"type": "join", "room": room, "role": "spectator"})
        await spectator.expect("joined")
        await racers[0].send({"type": "start"})
        for client in clients:
            await client.expect("started")
        await asyncio.gather(
            *(
                bot(racer, variant, deck, pause, n)
                for n, (racer, pause) in enumerate(zip(racers, (0.0, 0.01, 0.03), strict=True))
            )
        )
        await spectator.expect("finished")
        await asyncio.sleep(0.1)

        # Each racer's own record: what it had seen after each version, and when it was acked.
        names = {r.session: r.name for r in racers}
        seen_after: dict[str, list[set[str]]] = {}
        for racer in racers:
            events = racer.game_events(racer.session)
            seen: set[str] = set()
            history = []
            for event in events:
                seen = seen | (
                    layout_cards(event)
                    if event["type"] == "game_started"
                    else set(event.get("revealed", []))
                )
                history.append(seen)
            seen_after[racer.session] = history

        # Walk the spectator's frames in order: progress says how far each racer is.
        version: dict[str, int] = {}
        done: set[str] = set()
        early = 0
        checked = 0
        for msg in spectator.messages:
            if msg["type"] == "finished":
                break
            if msg["type"] == "progress":
                player = msg["player"]
                version[player] = msg["moves"] + 1 + (1 if msg["status"] == "resigned" else 0)
                if msg["status"] != "playing":
                    done.add(player)
            events = []
            if msg["type"] == "game_event":
                events = [(msg["player"], msg["event"])]
            elif msg["type"] == "game":
                events = [(msg["player"], e) for e in msg["events"]]
            for player, event in events:
                for card in event.get("revealed", []):
                    checked += 1
                    for other in seen_after:
                        if other == player or other in done:
                            continue
                        have = seen_after[other][version.get(other, 1) - 1]
                        if card not in have:
                            early += 1
                            break

        # Without the rule: a card counted early when another racer still playing had not
        # turned it by the time its first turner's move was acked (from the racers' clocks).
        unfair = 0
        total = 0
        turned_at: dict[str, dict[str, float]] = {}
        for racer in racers:
            times: dict[str, float] = {}
            acked = {m["version"]: t for t, m in racer.timed if m["type"] == "game_event"}
            for v, event in enumerate(racer.game_events(racer.session), start=1):
                for card in event.get("revealed", []):
                    times.setdefault(card, acked.get(v, time.monotonic()))
            turned_at[racer.session] = times
        for player, times in turned_at.items():
            for card, at in times.items():
                total += 1
                if any(
                    card not in turned_at[o] or turned_at[o][card] > at
                    for o in turned_at
                    if o != player
                ):
                    unfair += 1
        print(
            f"\n{variant}: of {total} stock cards turned by the racers, {unfair} would have "
            f"reached a spectator early without fair spectating; with it the spectator got "
            f"{checked} turned cards, {early} of them early ({', '.join(names.values())})"
        )
        assert checked > 0
        assert early == 0

        # At the end the spectator's games equal the racers' own.
        for racer in racers:
            assert public_fold(spectator.game_events(racer.session)) == public_fold(
                racer.game_events(racer.session)
            )
        assert_no_secrets(clients, variant, deck, None)
    finally:
        await asyncio.gather(*(c.close() for c in clients))
        server.stop()
