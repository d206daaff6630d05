"""Exact decimal helpers. Python's default context keeps 28 digits; DECIMAL(38,S) needs 38
exactly (and a sum of scale and digits a little more), so every decimal operation that could
round goes through :data:`DECIMAL_CONTEXT`."""

from __future__ import annotations

from decimal import Context, Decimal

DECIMAL_CONTEXT = Context(prec=100)


def decimal_from_unscaled(unscaled: int, scale: int) -> Decimal:
    """The exact decimal ``unscaled * 10**-scale`` (no rounding, whatever the digit count)."""
    sign = 1 if unscaled < 0 else 0
    return Decimal((sign, tuple(int(c) for c in str(abs(unscaled))), -scale))


def unscaled_of(v: Decimal, scale: int) -> Decimal:
    return v.scaleb(scale, context=DECIMAL_CONTEXT)


def quantize_to_scale(v: Decimal, scale: int) -> Decimal:
    return v.quantize(Decimal(1).scaleb(-scale), context=DECIMAL_CONTEXT)
