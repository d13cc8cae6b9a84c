"""Test helpers that run real processes (redis-server, solitaire-server)."""
