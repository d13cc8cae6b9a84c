"""The ``solitaire`` terminal client: a thin asyncio shell around ``shared``."""
