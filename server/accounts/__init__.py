"""Accounts and ratings: the I/O around the pure decisions of ``server.domain.accounts`` and
``server.domain.ratings`` (streams, indexes, hashing off the event loop)."""
