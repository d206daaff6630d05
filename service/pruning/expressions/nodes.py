"""The nodes of the one immutable predicate tree shared by the JSON and SQL parsers, the
renderers and the stats compiler.

Semantics are Spark SQL's, three-valued: a leaf over a NULL term (missing path, Variant null,
failed ``try_variant_get`` cast) is NULL, and a row is selected only when the whole predicate
is TRUE. ``is_null``/``not_null`` and ``is_nan``/``not_nan`` are two-valued, as in Spark
(``isnan(NULL)`` is false, so ``not_nan`` holds for NULL).

A leaf's term is a :data:`Term`: a Variant path read with ``variant_get`` or a plain/partition
column. :class:`Unknown` stands for a sub-expression the pruner cannot reason about (``length(name)
> 3``, a UDF): it may be TRUE, FALSE or NULL on any row, so it never prunes, and it keeps its SQL
text so that rendering selects the same rows.

Nodes are plain values; build trees with :mod:`.builders` (which simplifies and pushes ``Not``
down to the leaves) and walk them with :func:`.visitor.visit`.
"""

from __future__ import annotations

import math
import operator
from dataclasses import Field, dataclass, field
from decimal import Decimal
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar, Final

from service.errors import InvalidPredicateError, InvalidStatsError
from service.pruning.paths import JsonPath, parse_json_path
from service.pruning.spark_types import parse_spark_type, spark_type_name
from service.values import INTEGER_RANGES, Bound, Kind, ShreddedType, check_bound, plain_integers


class Op(StrEnum):
    EQ = "eq"
    NOT_EQ = "not_eq"
    LT = "lt"
    LT_EQ = "lt_eq"
    GT = "gt"
    GT_EQ = "gt_eq"
    IN = "in"
    NOT_IN = "not_in"
    IS_NULL = "is_null"
    NOT_NULL = "not_null"
    IS_NAN = "is_nan"
    NOT_NAN = "not_nan"


COMPARISON_OPS: Final = frozenset({Op.EQ, Op.NOT_EQ, Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ})
SET_OPS: Final = frozenset({Op.IN, Op.NOT_IN})
UNARY_OPS: Final = frozenset({Op.IS_NULL, Op.NOT_NULL, Op.IS_NAN, Op.NOT_NAN})

NEGATION: Final[dict[Op, Op]] = {
    Op.EQ: Op.NOT_EQ,
    Op.NOT_EQ: Op.EQ,
    Op.LT: Op.GT_EQ,
    Op.GT_EQ: Op.LT,
    Op.LT_EQ: Op.GT,
    Op.GT: Op.LT_EQ,
    Op.IN: Op.NOT_IN,
    Op.NOT_IN: Op.IN,
    Op.IS_NULL: Op.NOT_NULL,
    Op.NOT_NULL: Op.IS_NULL,
    Op.IS_NAN: Op.NOT_NAN,
    Op.NOT_NAN: Op.IS_NAN,
}

#: ``literal op term`` is ``term FLIPPED[op] literal``.
FLIPPED: Final[dict[Op, Op]] = {
    Op.EQ: Op.EQ,
    Op.NOT_EQ: Op.NOT_EQ,
    Op.LT: Op.GT,
    Op.GT: Op.LT,
    Op.LT_EQ: Op.GT_EQ,
    Op.GT_EQ: Op.LT_EQ,
}


@dataclass(frozen=True, slots=True)
class VariantTerm:
    """``variant_get(column, path, target)`` (``try_variant_get`` when ``try_cast``).

    ``try_cast`` does not change pruning: a failed cast is NULL under try_variant_get and an
    error under variant_get, and neither returns the row. It is kept for rendering.
    """

    column: str
    path: JsonPath
    target: ShreddedType
    try_cast: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.column, str) or not self.column:
            raise InvalidPredicateError("a variant term needs a non-empty column name")
        if not isinstance(self.path, JsonPath):
            raise InvalidPredicateError("a variant term's path must be a parsed JsonPath")
        spark_type_name(self.target)  # only Spark variant_get target types

    @property
    def variant_path(self) -> str:
        return self.path.variant_path

    @property
    def has_wildcard(self) -> bool:
        return self.path.has_wildcard


@dataclass(frozen=True, slots=True)
class ColumnTerm:
    """A plain or partition column of the table (dotted for a struct leaf, ``a.b``), read as
    ``target``: the column's type in the table (declared, or as Spark infers it for a partition
    column). Stats of such a column are keyed ``(name, None)`` in the pruning IR."""

    name: str
    target: ShreddedType
    partition: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidPredicateError("a column term needs a non-empty column name")

    @property
    def column(self) -> str:
        return self.name

    @property
    def variant_path(self) -> None:
        return None

    @property
    def has_wildcard(self) -> bool:
        """A column holds one value per row: never "some element"."""
        return False


#: What a leaf compares: a Variant path read with ``variant_get``, or a plain/partition column.
Term = VariantTerm | ColumnTerm


def variant(
    column: str, path: str | JsonPath, as_type: str | ShreddedType, try_cast: bool = False
) -> VariantTerm:
    """Convenience: ``variant("v", "$.user.id", "bigint")``."""
    jp = parse_json_path(path) if isinstance(path, str) else path
    t = parse_spark_type(as_type) if isinstance(as_type, str) else as_type
    return VariantTerm(column, jp, t, try_cast)


class BooleanExpression:
    """Base of every node. Nodes are frozen dataclasses: equal trees compare and hash equal."""

    __slots__ = ()


class Predicate(BooleanExpression):
    """Base of the leaves, ``term op ...``: every leaf kind has these two fields."""

    __slots__ = ()

    op: Op
    term: Term
    if TYPE_CHECKING:
        # Every concrete leaf is a frozen dataclass: dataclasses.replace() applies to any leaf.
        __dataclass_fields__: ClassVar[dict[str, Field[Any]]]


@dataclass(frozen=True, slots=True)
class Unknown(BooleanExpression):
    """A sub-expression the pruner cannot reason about, as Spark SQL text (``length(name) > 3``).

    Its value may be TRUE, FALSE or NULL for any row: NOT of it is unknown (``Unknown("NOT
    (...)")``), OR with it is unknown, and AND with it keeps the other side's pruning power. It
    compiles to a condition that keeps every file, and renders as its text."""

    text: str
    #: Why the pruner cannot use it ("LIKE is not supported", "string 'abc' is not a valid
    #: bigint"), for the plan's warnings; not part of the expression's identity.
    why: str = field(default="", compare=False)
    #: Whether a range it implies stands beside it and prunes (a LIKE's literal prefix): such a
    #: term is used, through that range, and gets no ``term_not_used`` warning.
    implied: bool = field(default=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not self.text.strip():
            raise InvalidPredicateError("an unknown sub-expression needs its SQL text")


@dataclass(frozen=True, slots=True, repr=False)
class AlwaysTrue(BooleanExpression):
    def __repr__(self) -> str:
        return "AlwaysTrue()"


@dataclass(frozen=True, slots=True, repr=False)
class AlwaysFalse(BooleanExpression):
    def __repr__(self) -> str:
        return "AlwaysFalse()"


TRUE: Final = AlwaysTrue()
FALSE: Final = AlwaysFalse()


@dataclass(frozen=True, slots=True)
class And(BooleanExpression):
    children: tuple[BooleanExpression, ...]


@dataclass(frozen=True, slots=True)
class Or(BooleanExpression):
    children: tuple[BooleanExpression, ...]


@dataclass(frozen=True, slots=True)
class Not(BooleanExpression):
    """After building, found only directly above a predicate whose path has ``[*]``."""

    child: BooleanExpression


def _check_literal(term: Term, v: Bound) -> None:
    t = term.target
    if t.kind is Kind.DECIMAL:
        # check_bound's quantize would round past 28 digits; test the value directly.
        assert t.precision is not None and t.scale is not None
        # copy_abs is exact; abs() would round to the context's 28 digits.
        ok = (
            isinstance(v, Decimal)
            and v.is_finite()
            and v.as_tuple().exponent == -t.scale
            and v.copy_abs() < Decimal(f"1E{t.precision - t.scale}")
        )
        if not ok:
            raise InvalidPredicateError(
                f"{v!r} is not a {t.name} value with exactly {t.scale} fraction digits"
            )
        return
    try:
        check_bound(t, v)
    except InvalidStatsError:
        raise InvalidPredicateError(f"{v!r} is not a {t.name} value") from None
    if isinstance(v, float) and v == 0 and math.copysign(1.0, v) < 0:
        raise InvalidPredicateError("use 0.0, not -0.0, in a tree (they compare equal)")


@dataclass(frozen=True, slots=True)
class UnaryPredicate(Predicate):
    op: Op
    term: Term

    def __post_init__(self) -> None:
        if self.op not in UNARY_OPS:
            raise InvalidPredicateError(f"{self.op} is not a unary predicate")
        if self.op in (Op.IS_NAN, Op.NOT_NAN) and not self.term.target.is_float:
            raise InvalidPredicateError(
                f"{self.op.value} needs a float or double term, not {spark_type_name(self.term.target)}"
            )


@dataclass(frozen=True, slots=True)
class LiteralPredicate(Predicate):
    """``term op literal`` with the literal a value of ``term.target`` (see literals.py)."""

    op: Op
    term: Term
    literal: Bound

    def __post_init__(self) -> None:
        if self.op not in COMPARISON_OPS:
            raise InvalidPredicateError(f"{self.op} is not a comparison")
        _check_literal(self.term, self.literal)


@dataclass(frozen=True, slots=True)
class SetPredicate(Predicate):
    """``term IN (...)`` / ``NOT IN``; literals sorted and distinct. An empty ``IN ()`` stands
    for "no value equals" (NULL for a NULL term, else FALSE); ``NOT IN ()`` for its negation."""

    op: Op
    term: Term
    literals: tuple[Bound, ...]

    def __post_init__(self) -> None:
        if self.op not in SET_OPS:
            raise InvalidPredicateError(f"{self.op} is not a set predicate")
        lits = self.literals
        ints = plain_integers(self.term.target.kind, lits)
        # check_bound of a plain integer is its range test: for a list of them, its least and
        # greatest suffice (an id list: 10,000 calls were ~3 ms).
        lo, hi = INTEGER_RANGES.get(self.term.target.kind, (0, -1))
        if ints is None or not (lo <= min(ints) and max(ints) <= hi):
            for v in lits:
                _check_literal(self.term, v)
        # Sorted and distinct, as in_list builds them: the compiler takes the literals within a
        # stored type's range as one slice of them.
        if not all(map(operator.lt, lits, lits[1:])):
            raise InvalidPredicateError("IN list literals must be sorted and distinct (build them with in_list)")
