"""Stats conditions: the small IR that the per-file evaluator interprets and that the catalog
translates into WHERE clauses over its typed key columns.

A predicate tree compiles to a :data:`Condition`::

    Condition     = LeafCondition | AllOf(children) | AnyOf(children) | Constant(might_match, reason)
    LeafCondition = (column, variant_path, cases: tuple[TypedTest, ...], otherwise: Test, label, terms)
    TypedTest     = (types: tuple[ShreddedType, ...], test: Test)
    Test          = Keep | Never | HasValues | HasNulls | MayHaveNaN
                  | RangeMayContain(lo, hi, lo_inclusive, hi_inclusive, nan_matches)
                  | AnyPoint(points) | NotAllIn(values, nan_matches)

``label`` (the predicate as Spark SQL) and ``terms`` (the terms as written, :class:`LeafTerm`) are
for people and diagnostics only: they take no part in a leaf's meaning, equality or repr.

Meaning, for ONE file. A LeafCondition reads the stats rows of ``(column, variant_path)``;
``variant_path`` is None for a plain or partition column, whose rows are
:class:`~service.stats.model.ColumnStats` (a partition value is a row too), read alike:

* no row → the file MIGHT match (the path is not fully shredded in that file, the column has no
  statistics there: no facts);
* a row whose ``shredded_type`` is in some case's ``types`` → that case's test decides for the
  row; any other stored type → ``otherwise`` (only type-independent facts hold there);
* several rows → the file can be pruned only if every row's test says CANNOT.

AllOf prunes if any child prunes, AnyOf only if every child does. Tests, per stats row
(``vc`` = value_count, ``nc`` = null_count; an absent min/max is unbounded, never "empty"):

=================  =====================================================================
Keep               might match: nothing can be concluded
Never              cannot match: no value of this stored type satisfies the leaf
HasValues          vc > 0
HasNulls           nc > 0
MayHaveNaN         vc > 0 and contains_nan is not false
RangeMayContain    vc > 0 and ((nan_matches and contains_nan is not false) or
                   ([min, max] meets the interval lo..hi, bounds inclusive as flagged;
                   lo/hi None = unbounded))
AnyPoint           vc > 0 and some point p has min <= p <= max
NotAllIn           vc > 0 and not (min = max, that value in ``values``, and not
                   (nan_matches and contains_nan is not false))
=================  =====================================================================

Every literal in a test is a value of the case's stored type (int8 stats get int8 points:
an int64 literal 300 cannot equal an int8 value, so that case is Never), so the SQL layer can
compare it with the typed key columns (``min_num``/``max_num``, ``min_real``/``max_real``,
``min_bin``/``max_bin`` via :func:`service.values.index_key`) of exactly those types.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from service.pruning.paths import JsonPath
from service.values import Bound, ShreddedType, bound_lt


@dataclass(frozen=True, slots=True)
class Keep:
    pass


@dataclass(frozen=True, slots=True)
class Never:
    pass


@dataclass(frozen=True, slots=True)
class HasValues:
    pass


@dataclass(frozen=True, slots=True)
class HasNulls:
    pass


@dataclass(frozen=True, slots=True)
class MayHaveNaN:
    pass


@dataclass(frozen=True, slots=True)
class RangeMayContain:
    lo: Bound | None
    hi: Bound | None
    lo_inclusive: bool = True
    hi_inclusive: bool = True
    nan_matches: bool = False


@dataclass(frozen=True, slots=True)
class AnyPoint:
    points: tuple[Bound, ...]


@dataclass(frozen=True, slots=True)
class NotAllIn:
    values: tuple[Bound, ...]
    nan_matches: bool = False


Test = Keep | Never | HasValues | HasNulls | MayHaveNaN | RangeMayContain | AnyPoint | NotAllIn


# These tests all require value_count > 0 already: HasValues adds nothing to them.
_IMPLIES_VALUES = (HasValues, RangeMayContain, AnyPoint, NotAllIn, MayHaveNaN)


def merge_tests(a: Test, b: Test) -> Test | None:
    """One test equivalent to ``a AND b`` on every stats row, or None when there is none."""
    if isinstance(a, Never) or isinstance(b, Never):
        return Never()
    if isinstance(a, Keep):
        return b
    if isinstance(b, Keep):
        return a
    if a == b:
        return a
    if isinstance(a, HasValues) and isinstance(b, _IMPLIES_VALUES):
        return b
    if isinstance(b, HasValues) and isinstance(a, _IMPLIES_VALUES):
        return a
    if isinstance(a, RangeMayContain) and isinstance(b, RangeMayContain):
        if a.nan_matches != b.nan_matches:
            return None
        lo, lo_inc = a.lo, a.lo_inclusive
        if b.lo is not None and (lo is None or bound_lt(lo, b.lo) or (b.lo == lo and not b.lo_inclusive)):
            lo, lo_inc = b.lo, b.lo_inclusive
        hi, hi_inc = a.hi, a.hi_inclusive
        if b.hi is not None and (hi is None or bound_lt(b.hi, hi) or (b.hi == hi and not b.hi_inclusive)):
            hi, hi_inc = b.hi, b.hi_inclusive
        return RangeMayContain(lo, hi, lo_inc, hi_inc, a.nan_matches)
    return None


class Derivation(Protocol):
    """A leaf's test for stored types not listed in its cases, computed when a plan meets one
    (:class:`service.pruning.conditions.casts.CastRule`: the stored types a cast serves are unbounded)."""

    def test(self, stored: ShreddedType) -> Test | None: ...


@dataclass(frozen=True, slots=True)
class TypedTest:
    types: tuple[ShreddedType, ...]
    test: Test


class Label:
    """Text for people (a predicate as Spark SQL, a reason), rendered when first read.

    Reasons are read only by explain mode and error messages, so planning never pays for
    rendering, nor for the SQL renderer's imports (sqlglot's keyword table, which the CLI's JSON
    predicates would otherwise load). Compares and hashes as its text.
    """

    __slots__ = ("_render", "_text")

    def __init__(self, render: Callable[[], str]) -> None:
        self._render: Callable[[], str] | None = render
        self._text: str | None = None

    def __str__(self) -> str:
        if self._text is None:
            assert self._render is not None
            self._text, self._render = self._render(), None
        return self._text

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return repr(str(self))

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other) if isinstance(other, Label | str) else NotImplemented

    def __hash__(self) -> int:
        return hash(str(self))


@dataclass(frozen=True, slots=True)
class LeafTerm:
    """One predicate term a leaf was compiled from, as the user wrote it (for diagnostics)."""

    #: The term's JSON path; None for a plain or partition column.
    path: JsonPath | None
    #: The type the term asks for (``variant_get``'s target, or the column's type).
    requested: ShreddedType
    #: The stored types whose type-specific facts (bounds, null counts, NaN) the leaf's test reads
    #: for this term; empty when the test reads none (``IS NOT NULL``), so no stored type is
    #: ever "not comparable" with it.
    usable: tuple[ShreddedType, ...]


@dataclass(frozen=True, slots=True)
class LeafCondition:
    column: str
    #: None for a plain or partition column.
    variant_path: str | None
    cases: tuple[TypedTest, ...]
    otherwise: Test
    #: The predicate as Spark SQL, for reasons; not part of the condition's meaning (nor of its
    #: equality and repr, which page tokens fingerprint).
    label: Label | str = field(default="", compare=False, repr=False)
    #: The terms the leaf was compiled from (several once same-path conjuncts are merged), for
    #: the plan's warnings; not part of the condition's meaning either.
    terms: tuple[LeafTerm, ...] = field(default=(), compare=False, repr=False)
    #: Tests for stored types outside ``cases`` (a cast's), each a conjunct of the leaf: a stored
    #: type one of them serves gets their AND with ``otherwise``.
    derived: tuple[Derivation, ...] = ()

    def test_for(self, stored: ShreddedType) -> Test:
        for case in self.cases:
            if stored in case.types:
                return case.test
        if not self.derived:
            return self.otherwise
        out = self.otherwise
        for d in self.derived:
            t = d.test(stored)
            if t is not None:
                # Each conjunct's test alone is sound; their AND is kept when one test says it.
                out = merge_tests(out, t) or t
        return out


@dataclass(frozen=True, slots=True)
class AllOf:
    children: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    children: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class Constant:
    might_match: bool
    reason: Label | str = field(compare=False, repr=False)


Condition = LeafCondition | AllOf | AnyOf | Constant
