"""Accounts and ratings: the I/O around the pure decisions of ``server.accounts.domain.accounts``
and ``server.accounts.domain.ratings`` (streams, indexes, hashing off the event loop)."""
