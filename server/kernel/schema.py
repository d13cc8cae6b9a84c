"""A family of typed events and the one place its members turn into or out of stored maps.

Room events, account events and rating events are each a family: frozen dataclasses with a
wire name (``TYPE``), stored as ``{"type", "v", fields...}``. A ``Schema`` holds what a family
needs to read what older writers left: the defaults of fields added later, and which fields are
sequences (stored as lists, held as tuples).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar

from shared.errors import CorruptEvent


class Typed(Protocol):
    """An event of a family: a dataclass with its wire name."""

    TYPE: ClassVar[str]


E = TypeVar("E", bound=Typed)


class Schema(Generic[E]):
    """Encode and decode the events of one family (``what`` names it in errors)."""

    def __init__(
        self,
        what: str,
        version: int,
        types: Iterable[type[E]],
        *,
        defaults: Mapping[str, Any] | None = None,
        sequences: Iterable[str] = (),
    ) -> None:
        self.what = what
        self.version = version
        self.types: dict[str, type[E]] = {cls.TYPE: cls for cls in types}
        self.defaults: Mapping[str, Any] = dict(defaults or {})
        self.sequences = frozenset(sequences)
        self.fields: dict[type[E], tuple[str, ...]] = {
            cls: tuple(f.name for f in dataclasses.fields(cls))  # type: ignore[arg-type]
            for cls in self.types.values()
        }

    def encode(self, event: E) -> dict[str, Any]:
        """The map a store keeps: ``type``, ``v`` and the fields (sequences as lists)."""
        data: dict[str, Any] = {"type": event.TYPE, "v": self.version}
        for name in self.fields[type(event)]:
            value = getattr(event, name)
            data[name] = list(value) if name in self.sequences and value is not None else value
        return data

    def decode(self, data: Mapping[str, Any]) -> E:
        """The event a stored map holds; CorruptEvent for an unknown type or version, or a
        field missing that has no default."""
        kind = data.get("type")
        cls = self.types.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise CorruptEvent(f"unknown {self.what} event type {kind!r}")
        if data.get("v", self.version) != self.version:
            raise CorruptEvent(f"{self.what} event {kind} has unknown version {data.get('v')!r}")
        values: dict[str, Any] = {}
        for name in self.fields[cls]:
            if name in data:
                value = data[name]
                if name in self.sequences and value is not None:
                    value = tuple(value)
                values[name] = value
            elif name in self.defaults:
                values[name] = self.defaults[name]
            else:
                raise CorruptEvent(f"{self.what} event {kind} has no field {name!r}")
        try:
            return cls(**values)
        except TypeError as exc:  # pragma: no cover - every field is filled above
            raise CorruptEvent(f"{self.what} event {kind}: {exc}") from None
