"""``tournament_*``: what this process's tournament loops do (docs/operations.md lists every
metric the server exports)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram


class TournamentMetrics:
    """``tournament_*``: what the pairing loops do, per process."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.races_paired = Counter(
            "tournament_races_paired", "Tournament races paired by this process.", registry=registry
        )
        self.races_scored = Counter(
            "tournament_races_scored", "Tournament races scored by this process.", registry=registry
        )
        self.pairing_conflicts = Counter(
            "tournament_pairing_conflicts",
            "Pairings refused because the tournament moved on (another process paired).",
            registry=registry,
        )
        self.leases_taken = Counter(
            "tournament_leases_taken", "Tournament leases this process took.", registry=registry
        )
        self.pairing_seconds = Histogram(
            "tournament_pairing_seconds",
            "Time of one tournament's pairing round.",
            registry=registry,
        )
