"""The authoritative Solitaire Arena server: a thin asyncio shell around ``shared``."""
