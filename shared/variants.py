"""The two games by name: variants are plain strings at every boundary."""

from __future__ import annotations

from shared.errors import ClientError

SWISS = "swiss"
QUADRENNIAL = "quadrennial"
VARIANTS: tuple[str, ...] = (SWISS, QUADRENNIAL)


class UnknownVariant(ClientError):
    """A variant name that is neither "swiss" nor "quadrennial"."""

    code = "unknown_variant"


def check_variant(variant: object) -> str:
    """The variant name itself, or UnknownVariant naming the ones that exist."""
    if not isinstance(variant, str) or variant not in VARIANTS:
        raise UnknownVariant(f"unknown variant {variant!r}: use one of {', '.join(VARIANTS)}")
    return variant
