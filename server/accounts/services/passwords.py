"""Password hashing with Argon2id (argon2-cffi's PasswordHasher), off the event loop.

A hash takes tens of milliseconds and 64 MiB (docs/ratings.md has this machine's figure), so
it runs in a worker thread (argon2-cffi releases the GIL), at most ``concurrency`` at once per
process so a burst of logins cannot take the memory or every core.
"""

from __future__ import annotations

import asyncio

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from server.runtime.config import Config


class Passwords:
    """Hash and verify passwords; ``hasher`` carries the parameters (argon2-cffi's defaults:
    RFC 9106's low-memory profile, t=3, m=64 MiB, p=4)."""

    def __init__(self, hasher: PasswordHasher | None = None, *, concurrency: int = 2) -> None:
        self.hasher = hasher if hasher is not None else PasswordHasher()
        self._gate = asyncio.Semaphore(max(1, concurrency))
        self._dummy: str | None = None

    async def hash(self, password: str) -> str:
        async with self._gate:
            return await asyncio.to_thread(self.hasher.hash, password)

    async def verify(self, password_hash: str | None, password: str) -> tuple[bool, str | None]:
        """Whether ``password`` matches, and a new hash when the old one's parameters are not
        today's. An unknown account (None) is verified against a dummy hash: its answer takes
        as long as a wrong password's."""
        if password_hash is None:
            if self._dummy is None:
                self._dummy = await self.hash("not a password of anyone's")
            await self._verify(self._dummy, password)
            return False, None
        if not await self._verify(password_hash, password):
            return False, None
        if self.hasher.check_needs_rehash(password_hash):
            return True, await self.hash(password)
        return True, None

    async def _verify(self, password_hash: str, password: str) -> bool:
        async with self._gate:
            try:
                return await asyncio.to_thread(self.hasher.verify, password_hash, password)
            except (VerifyMismatchError, VerificationError, InvalidHashError):
                return False


def passwords_of(config: Config) -> Passwords:
    """The server's hasher: Argon2id at the configured cost (argon2-cffi's defaults unless an
    operator, or a test suite, asks for another)."""
    hasher = PasswordHasher(
        time_cost=config.password_time_cost,
        memory_cost=config.password_memory_kib,
        parallelism=config.password_parallelism,
    )
    return Passwords(hasher, concurrency=config.hash_concurrency)
