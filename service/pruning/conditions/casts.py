"""Stored types that reach a ``variant_get`` target only through a cast Spark computes, and the
tests their bounds still support.

Spark's ``variant_get(v, path, type)`` casts a shredded value to the target in TRY mode and then
fails (``variant_get``) or gives NULL (``try_variant_get``) when that cast gives NULL; ANSI mode
changes none of it (measured on Spark 4.3.0: ``3000000000`` as ``int`` is INVALID_VARIANT_CAST
under both, NULL with ``try_``). A failed cast never selects a row, so where the cast is a
*monotone* map of the stored value the bounds still decide:

* a narrower integer target (int64 stored, asked as ``int``): the value itself, when it fits;
* ``float``/``double`` asked of an integer: the nearest float (ties to even, Java's ``(double) l``);
* ``decimal(p,s)`` asked of an integer: the value itself, when ``|x| < 10**(p-s)``;
* ``decimal(p,s)`` asked of another decimal (another scale, or a larger precision): rounded to
  scale ``s`` half away from zero (``1.235`` → ``1.24``, ``-1.235`` → ``-1.24``), when the
  rounded value has at most ``p`` digits (``99.995`` as ``decimal(4,2)`` is NULL);
* ``string`` asked of an integer: its canonical decimal text, which is not monotone in string
  order; only equality and IN use it (``= '42'`` is ``= 42``; ``'042'`` or ``'abc'`` equal no
  integer's text).

A stored value is handled as an integer ``u`` of its lattice (the unscaled value of a decimal),
the cast as ``f(u)`` (None: the cast fails). ``f`` is non-decreasing on the interval ``[A, B]``
where it succeeds, so the stored values satisfying ``f(u) op literal`` are an interval, found by
binary search with the exact conversion itself: no rounding argument to get wrong. The tests are
then ordinary tests over the stored type's own bounds (:mod:`.conditions.model`), which the
evaluator and the catalog's SQL read alike.

IS NULL uses a stored type's null count only when its cast can never fail (every stored value
in ``[A, B]``); an element path never (a short array gives NULL without a null entry).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from service.pruning.conditions.model import (
    AnyPoint,
    HasNulls,
    HasValues,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
)
from service.pruning.expressions import Op
from service.values import (
    INTEGER_KINDS,
    INTEGER_RANGES,
    Bound,
    Kind,
    ShreddedType,
    bound_le,
    bound_lt,
    decimal_from_unscaled,
)
from service.values.decimals import DECIMAL_CONTEXT

_FLOAT32_DIGITS = 24


def int_to_float32(x: int) -> float:
    """The float32 nearest the integer ``x`` (ties to even), as Java's ``(float) long``; exact from
    the integer (rounding through a double first could round twice)."""
    n = abs(x)
    if n <= 1 << _FLOAT32_DIGITS:
        return float(x)
    shift = n.bit_length() - _FLOAT32_DIGITS
    q, r = divmod(n, 1 << shift)
    half = 1 << (shift - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return math.copysign(float(q << shift), x)


def _round_half_up(u: int, from_scale: int, to_scale: int) -> int:
    """The unscaled value of ``u * 10**-from_scale`` at ``to_scale``, rounded half away from zero
    (Spark's ``Decimal.changePrecision``)."""
    if to_scale >= from_scale:
        return u * int(10 ** (to_scale - from_scale))  # int(): ** of ints is typed int | float
    d = Decimal(u).scaleb(to_scale - from_scale, context=DECIMAL_CONTEXT)
    return int(d.quantize(Decimal(1), rounding=ROUND_HALF_UP, context=DECIMAL_CONTEXT))


@dataclass(frozen=True, slots=True)
class _Cast:
    """A stored type's lattice ``[lo, hi]``, its value at ``u``, and the cast ``f``."""

    lo: int
    hi: int
    value: Callable[[int], Bound]
    f: Callable[[int], Bound | None]
    #: f is monotone (else only equality with f's exact image is used: int → string).
    monotone: bool = True


def _int_value(u: int) -> Bound:
    return u


def _fits(limit: int, out: Callable[[int], Bound]) -> Callable[[int], Bound | None]:
    return lambda u: out(u) if -limit < u < limit else None


def _from_integer(stored: ShreddedType, target: ShreddedType) -> _Cast | None:
    lo, hi = INTEGER_RANGES[stored.kind]
    k = target.kind
    if k in INTEGER_KINDS:
        tlo, thi = INTEGER_RANGES[k]
        if tlo <= lo and hi <= thi:
            return None  # an exact widening: usable_types serves it
        return _Cast(lo, hi, _int_value, lambda u: u if tlo <= u <= thi else None)
    if k is Kind.FLOAT64:
        return _Cast(lo, hi, _int_value, float)
    if k is Kind.FLOAT32:
        return _Cast(lo, hi, _int_value, int_to_float32)
    if k is Kind.DECIMAL:
        assert target.precision is not None and target.scale is not None
        return _Cast(lo, hi, _int_value, _fits(10 ** (target.precision - target.scale), Decimal))
    if k is Kind.VARCHAR:
        return _Cast(lo, hi, _int_value, str, monotone=False)
    return None


def _from_decimal(stored: ShreddedType, target: ShreddedType) -> _Cast | None:
    if target.kind is not Kind.DECIMAL:
        return None
    p1, s1, p, s = stored.precision, stored.scale, target.precision, target.scale
    assert p1 is not None and s1 is not None and p is not None and s is not None
    if s1 == s and p1 <= p:
        return None  # same scale, no larger precision: usable_types serves it
    limit = 10**p

    def f(u: int) -> Bound | None:
        r = _round_half_up(u, s1, s)
        return decimal_from_unscaled(r, s) if -limit < r < limit else None

    return _Cast(-(10**p1 - 1), 10**p1 - 1, lambda u: decimal_from_unscaled(u, s1), f)


def cast_of(stored: ShreddedType, target: ShreddedType) -> _Cast | None:
    """How ``target`` is computed from values of ``stored``, when this module handles it."""
    if stored.kind in INTEGER_KINDS:
        return _from_integer(stored, target)
    if stored.kind is Kind.DECIMAL:
        return _from_decimal(stored, target)
    return None


@lru_cache(maxsize=256)
def integer_cast_types(target: ShreddedType) -> tuple[ShreddedType, ...]:
    """The integer stored types a cast to ``target`` serves (for diagnostics: their bounds are
    compared, so such a path is not "not comparable")."""
    out = []
    for k in INTEGER_KINDS:
        stored = ShreddedType(k)
        if cast_of(stored, target) is not None:
            out.append(stored)
    return tuple(out)


def has_casts(target: ShreddedType) -> bool:
    return target.kind in INTEGER_KINDS or target.kind in (Kind.FLOAT32, Kind.FLOAT64, Kind.DECIMAL, Kind.VARCHAR)


# --- binary searches over a monotone predicate -------------------------------------------------


def _least(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The least u in [lo, hi] with ok(u), for ok False…True over the interval."""
    if lo > hi or not ok(hi):
        return None
    while lo < hi:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _greatest(lo: int, hi: int, ok: Callable[[int], bool]) -> int | None:
    """The greatest u in [lo, hi] with ok(u), for ok True…False over the interval."""
    if lo > hi or not ok(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _valid(c: _Cast, u: int) -> bool:
    return c.f(u) is not None


def _domain(c: _Cast) -> tuple[int, int]:
    """[A, B]: where the cast succeeds (0 always does; the failures are the large magnitudes)."""
    a = _least(c.lo, 0, lambda u: _valid(c, u))
    b = _greatest(0, c.hi, lambda u: _valid(c, u))
    assert a is not None and b is not None
    return a, b


def _value_at(c: _Cast, u: int) -> Bound:
    out = c.f(u)
    assert out is not None
    return out


# --- tests -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CastRule:
    """A leaf's predicate (``op`` with ``literals`` of ``target``), for the stored types a cast
    serves; :meth:`test` is computed for each stored type a plan meets (a decimal target is served
    by every decimal of another scale: too many to list)."""

    op: Op
    target: ShreddedType
    literals: tuple[Bound, ...]
    max_points: int
    #: IS NULL may use null counts (not on an element path).
    nulls: bool = True

    def test(self, stored: ShreddedType) -> Test | None:
        """The test of a stats row of ``stored`` (None: no cast here, the leaf's ``otherwise``)."""
        return _cast_test(self, stored)

    def __repr__(self) -> str:
        # Part of the condition's repr, which page tokens fingerprint on every plan: short.
        return f"CastRule({self.op.value}, {self.target.name}, {self.literals!r}, {self.max_points}, {self.nulls})"


class _Tests:
    def __init__(self, c: _Cast) -> None:
        self.c = c
        self.a, self.b = _domain(c)

    @property
    def total(self) -> bool:
        return (self.a, self.b) == (self.c.lo, self.c.hi)

    def range(self, lo: int | None, hi: int | None) -> Test:
        if lo is None or hi is None or lo > hi:
            return Never()
        c = self.c
        lo_v = None if lo == c.lo else c.value(lo)
        hi_v = None if hi == c.hi else c.value(hi)
        if lo_v is None and hi_v is None:
            return HasValues()
        return RangeMayContain(lo_v, hi_v)

    def preimage(self, d: Bound) -> tuple[int, int] | None:
        """The stored values whose cast equals ``d`` (an interval), or None."""
        c, a, b = self.c, self.a, self.b
        if not c.monotone:
            try:
                u = int(d)
            except (TypeError, ValueError):
                return None
            # Only the canonical text ('42', '-7', '0') is some integer's cast.
            return (u, u) if a <= u <= b and c.f(u) == d else None
        lo = _least(a, b, lambda u: bound_le(d, _value_at(c, u)))
        hi = _greatest(a, b, lambda u: bound_le(_value_at(c, u), d))
        if lo is None or hi is None or lo > hi:
            return None
        return lo, hi

    def compare(self, op: Op, d: Bound) -> Test | None:
        c, a, b = self.c, self.a, self.b
        if op is Op.EQ:
            pre = self.preimage(d)
            return Never() if pre is None else self.range(*pre)
        if op is Op.NOT_EQ:
            return self.not_in((d,))
        if not c.monotone:
            return None  # string order is not the integers' order
        if op is Op.LT:
            return self.range(a, _greatest(a, b, lambda u: bound_lt(_value_at(c, u), d)))
        if op is Op.LT_EQ:
            return self.range(a, _greatest(a, b, lambda u: bound_le(_value_at(c, u), d)))
        if op is Op.GT:
            return self.range(_least(a, b, lambda u: bound_lt(d, _value_at(c, u))), b)
        assert op is Op.GT_EQ
        return self.range(_least(a, b, lambda u: bound_le(d, _value_at(c, u))), b)

    def in_list(self, values: tuple[Bound, ...], max_points: int) -> Test:
        pres = [p for p in map(self.preimage, values) if p is not None]
        if not pres:
            return Never()
        if all(lo == hi for lo, hi in pres):
            points = sorted({lo for lo, _ in pres})
            if len(points) <= max_points:
                return AnyPoint(tuple(self.c.value(u) for u in points))
        return self.range(min(lo for lo, _ in pres), max(hi for _, hi in pres))

    def not_in(self, values: tuple[Bound, ...]) -> Test:
        # A row whose every value is one u with f(u) among the literals selects nothing; values
        # outside [A, B] select nothing either (another test: used when no point serves).
        pres = [p for p in map(self.preimage, values) if p is not None]
        points = sorted({lo for lo, hi in pres if lo == hi})
        if points:
            return NotAllIn(tuple(self.c.value(u) for u in points))
        return self.range(self.a, self.b)


def _is_nan(v: Bound) -> bool:
    return isinstance(v, float) and math.isnan(v)


@lru_cache(maxsize=4096)
def _cast_test(rule: CastRule, stored: ShreddedType) -> Test | None:
    c = cast_of(stored, rule.target)
    if c is None or any(_is_nan(v) for v in rule.literals):
        return None
    tests = _Tests(c)
    op = rule.op
    if op is Op.IS_NULL:
        return HasNulls() if rule.nulls and tests.total else None
    if op is Op.IS_NAN:
        # An integer cast to a float is never NaN.
        return Never() if rule.target.is_float else None
    if op is Op.IN:
        return tests.in_list(rule.literals, rule.max_points)
    if op is Op.NOT_IN:
        return tests.not_in(rule.literals)
    if op in (Op.NOT_NULL, Op.NOT_NAN):
        return None
    return tests.compare(op, rule.literals[0])
