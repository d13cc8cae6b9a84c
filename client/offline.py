"""Playing with no server: the same rules, events and screen, the game kept in memory.

The local game produces the same events the server would store, and the screen shows their
public fold, so offline play looks and scripts exactly like a game on a server.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from client.app import App, now_ms
from client.cli import Output
from client.hint import hint_command
from client.play import Outcome, play_loop, refused_line, update_status
from client.session import Session
from shared.deal import deal_deck
from shared.errors import ArenaError, ClientError
from shared.events import fold_event, move_event, resign_event, start_event
from shared.views import public_event, public_view


def random_seed() -> int:
    """A fresh seed when none is given; printed in the title so the deal can be replayed."""
    return secrets.randbelow(1_000_000_000)


INT64 = range(-(2**63), 2**63)


def seed_value(seed: str | None) -> int | str:
    """A seed typed on the command line: an integer when it looks like one and fits the
    protocol's 64-bit integers, else its text; canonical_seed deals 42 and "42" alike."""
    if seed is None:
        return random_seed()
    text = seed.strip()
    if not text:
        raise ClientError("a seed cannot be empty: give a number or a word", code="bad_seed")
    if text.lstrip("-").isdigit():
        number = int(text)
        return number if number in INT64 else str(number)
    return text


class LocalGame:
    """A game held in memory, played through the shared rules; keeps its history for undo."""

    def __init__(
        self,
        variant: str,
        seed: int | str,
        *,
        clock: Callable[[], int] = now_ms,
        on_event: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.clock = clock
        self.on_event = on_event
        deck = deal_deck(variant, seed)
        self.started_at = clock()
        self.start = start_event(variant, deck, at=self.started_at, seed=seed)
        self.state = fold_event(None, self.start)
        self.events: list[dict[str, Any]] = [self.start]
        self._history: list[Any] = []
        self._view = public_view(self.state)

    @property
    def view(self) -> Any:
        """The public view of the current position."""
        return self._view

    def public_events(self) -> list[dict[str, Any]]:
        """The game's events as anyone may see them (no deck)."""
        return [public_event(event) for event in self.events]

    def _append(self, event: dict[str, Any]) -> None:
        self._history.append((self.state, len(self.events)))
        self.state = fold_event(self.state, event)
        self.events.append(event)
        self._view = public_view(self.state)
        if self.on_event is not None:
            self.on_event(public_event(event))

    async def move(self, move: str) -> None:
        """Play a canonical move (IllegalMove with the reason if the rules refuse it)."""
        self._append(move_event(self.state, move, at=self.clock()))

    async def resign(self) -> None:
        """Give up (IllegalMove if already resigned or won)."""
        from shared.game import resign

        resign(self.state)  # raises the rules' reason before anything is recorded
        self._append(resign_event(at=self.clock()))

    def undo(self) -> None:
        """Take back the last move or resignation."""
        if not self._history:
            raise ClientError("nothing to undo", code="nothing_to_undo")
        self.state, length = self._history.pop()
        del self.events[length:]
        self._view = public_view(self.state)
        if self.on_event is not None:
            self.on_event({"type": "undone", "moves_made": self._view.moves_made})


def title_for(variant: str, seed: int | str, where: str) -> str:
    """The header's left part."""
    return f"Solitaire Arena - {variant.capitalize()} - seed {seed} - {where}"


async def play_offline(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire play --offline`: local games until quit, end of input or end of script; `new`
    deals another."""
    seed = seed_value(args.seed)
    session = Session(title=title_for(args.variant, seed, "offline"), color=output.color)
    app = App(session, output, script=script)
    app.variant = args.variant
    app.next_steps = "Next: 'new' for another deal, 'replay' to see this game again, 'quit'."
    async with app:
        while True:
            outcome = await _one_game(app, args.variant, seed)
            if outcome is not Outcome.NEW:
                break
            seed = random_seed()
            session.title = title_for(args.variant, seed, "offline")
            session.clear_messages()
            session.say(f"A new deal: seed {seed}.")
    app.final_screen()
    return exit_status(app)


def exit_status(app: App) -> int:
    """0, or 3 when a script had a move refused (cli.EXIT_CODES)."""
    if app.scripted and app.refused:
        app.log(refused_line(app.refused))
        return 3
    return 0


async def _one_game(app: App, variant: str, seed: int | str) -> Outcome:
    session = app.session
    game = LocalGame(variant, seed, clock=app.clock, on_event=app.emit)
    app.emit(public_event(game.start))
    session.clock_start_ms = game.started_at

    class _Driver:
        @property
        def view(self) -> Any:
            return game.view

        async def move(self, move: str) -> None:
            await game.move(move)
            _after()

        async def resign(self) -> None:
            await game.resign()
            _after()

        def undo(self) -> None:
            game.undo()
            _after()

        def events(self) -> list[dict[str, Any]]:
            return game.public_events()

    def _after() -> None:
        session.view = game.view
        session.clock_end_ms = app.clock() if game.view.over else None
        update_status(app, game.view)

    _after()
    # Offline the client holds the whole position: `hint` asks the solver, not a heuristic.
    return await play_loop(app, _Driver(), extra=hint_command(app, lambda: game.state))


async def replay_offline(args: Any, output: Output, script: list[str] | None) -> int:
    """`solitaire replay --offline --seed S --moves FILE`: the deal and moves, replayed locally."""
    from client.replay import run_replay
    from shared.moves import parse_move

    if args.seed is None or script is None:
        raise ClientError("an offline replay needs --seed and --moves FILE")
    seed = seed_value(args.seed)
    game = LocalGame(args.variant, seed, clock=lambda: 0)
    for line in script:
        try:
            await game.move(parse_move(line, game.view))
        except ArenaError as error:
            raise ClientError(f"move {game.view.moves_made + 1} ({line}): {error.reason}") from None
    session = Session(title=title_for(args.variant, seed, "replay"), color=output.color)
    # The moves came from --moves; the replay itself is driven by the prompt or --speed.
    app = App(session, output, script=[] if args.speed is None and output.json else None)
    async with app:
        await run_replay(app, game.public_events(), args.speed)
    return 0
