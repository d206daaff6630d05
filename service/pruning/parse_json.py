"""Iceberg-REST-shaped filter JSON ⇄ predicate tree.

Accepted (Iceberg's expression JSON plus a ``variant`` term)::

    true | false | {"type": "true"} | {"type": "false"}
    {"type": "and" | "or", "left": E, "right": E}
    {"type": "not", "child": E}
    {"type": "eq" | "not-eq" | "lt" | "lt-eq" | "gt" | "gt-eq", "term": T, "value": V}
        (also "left"/"right" for term and value, either way round: a literal on the left
         flips the comparison)
    {"type": "in" | "not-in", "term": T, "values": [V, ...]}
    {"type": "is-null" | "not-null" | "is-nan" | "not-nan", "term": T}
    T = {"type": "variant", "column": "v", "path": "$.user.id", "as": "bigint", "try": false}
      | "event_date" | {"type": "reference", "term": "event_date"}

A plain or partition column is named as Iceberg's REST spec names a column (a ``Reference``, a
bare string; the object form is accepted too) and needs the table's schema (``schema=``): it is
resolved against the table's columns as Spark resolves names (case-insensitively, ``a.b`` for a
struct leaf), and an unknown name is an UnknownColumnError; so is a Variant term's column, once a
schema is given. A term on a column whose type pruning cannot compare (no type in the value
model, or one Spark does not read as a comparable type) is kept as an unknown sub-expression:
it never prunes.

Values are JSON scalars read by the term's type: numbers are exact numerals (a JSON float is
taken as the decimal it prints as, so 0.1 means 0.1; send decimals as strings, "12.50", to keep
digits a double cannot hold) within the range of a double; dates ``"2024-01-01"``; timestamps
``"2024-01-01T10:00:00Z"`` (no zone: UTC); binary as hex; ``"Infinity"``/``"-Infinity"`` for
float/double. Errors name the JSON pointer of the offending node. Unknown keys are errors: a
misspelt ``"vlaue"`` must not pass.

Limits (LimitExceededError): ``max_depth`` for the nesting of and/or/not, ``max_in_list`` per
in-list, ``max_terms`` leaves joined by and/or (counted as the tree is walked: a chain's operands
are counted before any of them is built, and its walk stops once they are too many). They are
applied before the document's text is checked for lone surrogates (a walk over every string), so a
document past one is refused without being read whole; within them, invalid text is refused first.
:func:`decode_json` reads JSON text the way filters read numbers, for callers that decode a
document holding a filter.

``to_json`` gives the canonical form back (``parse_json(to_json(e)) == e``); long AND/OR chains
are emitted as balanced binary trees so the nesting stays logarithmic.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from decimal import Decimal
from functools import partial
from typing import Any

from service import limits
from service.errors import InvalidPathError, InvalidPredicateError, LimitExceededError, ShredcatError
from service.pruning.expressions import (
    FLIPPED,
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    BooleanExpressionVisitor,
    ColumnTerm,
    LiteralPredicate,
    Not,
    Op,
    Or,
    SetPredicate,
    Term,
    UnaryPredicate,
    Unknown,
    VariantTerm,
    and_,
    compare,
    in_list,
    not_,
    or_,
    unary,
    visit,
)
from service.pruning.literals import LiteralValue, format_date, format_timestamp, parse_numeral
from service.pruning.paths import format_json_path, parse_json_path
from service.pruning.schema import TableSchema
from service.pruning.spark_types import parse_spark_type, spark_type_name
from service.values import Bound, Kind, ShreddedType
from service.values.text import first_invalid_text, shown

DEFAULT_MAX_DEPTH = limits.MAX_PREDICATE_DEPTH
DEFAULT_MAX_IN_LIST = limits.MAX_IN_LIST
DEFAULT_MAX_TERMS = limits.MAX_PREDICATE_TERMS

_COMPARISONS = {
    "eq": Op.EQ,
    "not-eq": Op.NOT_EQ,
    "lt": Op.LT,
    "lt-eq": Op.LT_EQ,
    "gt": Op.GT,
    "gt-eq": Op.GT_EQ,
}
_SETS = {"in": Op.IN, "not-in": Op.NOT_IN}
_UNARY = {"is-null": Op.IS_NULL, "not-null": Op.NOT_NULL, "is-nan": Op.IS_NAN, "not-nan": Op.NOT_NAN}
_JSON_NAME = {op: name for name, op in (_COMPARISONS | _SETS | _UNARY).items()}
_NON_FINITE = {"inf", "+inf", "-inf", "infinity", "+infinity", "-infinity", "nan", "+nan", "-nan"}
_ALL_TYPES = ["true", "false", "and", "or", "not", *_COMPARISONS, *_SETS, *_UNARY]


class Pointer:
    """Where a node is in the filter document: its parent's place and its own key (an object key
    or a list index); ``None`` is the document itself. A child costs the same at any depth, and
    the pointer's text, as long as the node is deep, is written only for an error: writing it for
    every node made a chain's walk quadratic in its depth."""

    __slots__ = ("key", "parent")

    def __init__(self, parent: Pointer | None, key: str | int) -> None:
        self.parent = parent
        self.key = key


def _child(ptr: Pointer | None, key: str | int) -> Pointer:
    return Pointer(ptr, key)


def _pointer_text(ptr: Pointer | None) -> str:
    """The JSON pointer (RFC 6901) of ``ptr``; ``/`` for the document itself."""
    keys: list[str] = []
    while ptr is not None:
        keys.append(str(ptr.key).replace("~", "~0").replace("/", "~1"))
        ptr = ptr.parent
    return "/" + "/".join(reversed(keys))


def _err(ptr: Pointer | None, msg: str) -> InvalidPredicateError:
    where = _pointer_text(ptr)
    return InvalidPredicateError(f"{where}: {msg}", details={"pointer": where})


def _over_limit(ptr: Pointer | None, msg: str, limit: int) -> LimitExceededError:
    where = _pointer_text(ptr)
    return LimitExceededError(f"{where}: {msg}", details={"pointer": where, "limit": limit})


def _reraise(ptr: Pointer | None, exc: ShredcatError) -> ShredcatError:
    where = _pointer_text(ptr)
    details = dict(exc.details)
    details.setdefault("pointer", where)
    return type(exc)(f"{where}: {exc.message}", details=details)


def _is_term(node: Any) -> bool:
    """A term object rather than a value: a variant term or a ``reference`` object. (A bare
    string is a column reference only where a term must be: ``term``, or ``left`` when ``right``
    is not a term object.)"""
    return isinstance(node, Mapping) and node.get("type") in ("variant", "reference")


class _Untyped(Exception):
    """A column term whose type pruning cannot compare: its leaf is unknown."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _check_keys(node: Mapping[str, Any], ptr: Pointer | None, allowed: set[str]) -> None:
    extra = sorted(set(node) - allowed - {"type"})
    if extra:
        raise _err(
            ptr, f"unexpected key(s) {extra} in a {node.get('type')!r} node; allowed: {sorted(allowed)}"
        )


def _require(node: Mapping[str, Any], key: str, ptr: Pointer | None) -> Any:
    if key not in node:
        raise _err(ptr, f"a {node.get('type')!r} node needs {key!r}")
    return node[key]


def _reference(name: Any, ptr: Pointer | None, schema: TableSchema) -> ColumnTerm:
    if not isinstance(name, str) or not name:
        raise _err(ptr, "a column reference must be a non-empty string")
    info = schema.resolve(name)
    if info is None:
        e = schema.unknown_column(name)
        raise type(e)(e.message, details={**e.details, "pointer": _pointer_text(ptr)})
    if info.type is None:
        raise _Untyped(info.name)
    return ColumnTerm(info.name, info.type, info.partition)


def parse_term(node: Any, ptr: Pointer | None = None, schema: TableSchema | None = None) -> Term:
    """A term: a variant term, or (with a schema) a column reference. A column whose type
    pruning cannot compare raises the private ``_Untyped`` (the caller makes the leaf unknown)."""
    if schema is not None and isinstance(node, str):
        return _reference(node, ptr, schema)
    if schema is not None and isinstance(node, Mapping) and node.get("type") == "reference":
        _check_keys(node, ptr, {"term"})
        return _reference(_require(node, "term", ptr), _child(ptr, "term"), schema)
    if isinstance(node, str) or (isinstance(node, Mapping) and node.get("type") == "reference"):
        name = node if isinstance(node, str) else node.get("term")
        raise _err(
            ptr,
            f"plain column reference {name!r} needs the table's schema; use a variant term "
            '{"type": "variant", "column": ..., "path": ..., "as": ...}',
        )
    if not isinstance(node, Mapping) or node.get("type") != "variant":
        raise _err(ptr, 'expected a variant term {"type": "variant", "column": ..., "path": ..., "as": ...}')
    _check_keys(node, ptr, {"column", "path", "as", "try"})
    column = _require(node, "column", ptr)
    if not isinstance(column, str) or not column:
        raise _err(_child(ptr, "column"), "column must be a non-empty string")
    if schema is not None:
        resolved = schema.resolve_variant(column)
        if resolved is None:
            e = schema.unknown_column(column, variant=True)
            raise type(e)(e.message, details={**e.details, "pointer": _pointer_text(_child(ptr, "column"))})
        column = resolved
    path = _require(node, "path", ptr)
    try:
        jp = parse_json_path(path)
    except InvalidPathError as e:
        raise _reraise(_child(ptr, "path"), e) from None
    as_type = _require(node, "as", ptr)
    try:
        target = parse_spark_type(as_type)
    except InvalidPredicateError as e:
        raise _reraise(_child(ptr, "as"), e) from None
    try_cast = node.get("try", False)
    if not isinstance(try_cast, bool):
        raise _err(_child(ptr, "try"), "try must be true or false")
    return VariantTerm(column, jp, target, try_cast)


def _in_double_range(v: int | Decimal, ptr: Pointer | None) -> int | Decimal:
    # JSON numbers are interoperable within the double range (RFC 8259 §6); beyond it a decoder
    # gives infinity or fails, so such a number is refused rather than read as something else.
    try:
        finite = not math.isinf(float(v))
    except OverflowError:  # an int beyond the double range
        finite = False
    if not finite:
        raise _err(ptr, 'a number beyond the range of a double (use "Infinity" for an infinite double)')
    return v


def _value(v: Any, target: ShreddedType, ptr: Pointer | None) -> LiteralValue:
    """A JSON scalar as a literal, read by the term's type."""
    if v is None:
        raise _err(ptr, "null is not a value (use is-null / not-null)")
    if isinstance(v, bool):
        return v
    if isinstance(v, int):
        return _in_double_range(v, ptr)
    if isinstance(v, float):
        if math.isnan(v):
            raise _err(ptr, "NaN is not a comparable value (use is-nan / not-nan)")
        # The decimal the float prints as: what the JSON text said, for every target type (an
        # infinite float is a JSON number that overflowed the decoder's double).
        return _in_double_range(Decimal(repr(v)) if math.isfinite(v) else Decimal(v), ptr)
    if isinstance(v, Decimal):
        return _in_double_range(v, ptr)
    if isinstance(v, str):
        k = target.kind
        if k is Kind.BLOB:
            try:
                return bytes.fromhex(v)
            except ValueError:
                raise _err(ptr, f"binary values are hex strings; {v!r} is not hex") from None
        if target.is_integer or target.is_float or k is Kind.DECIMAL:
            if target.is_float and v.strip().lower() in _NON_FINITE:
                return v
            # JSON strings carry exact numerals (decimals that a double would round).
            d = parse_numeral(v)
            if d is None:
                raise _err(ptr, f"{v!r} is not a number")
            return _in_double_range(d, ptr)
        return v
    raise _err(ptr, f"expected a JSON scalar, got {type(v).__name__}")


def _exact_int(text: str) -> int | Decimal:
    try:
        return int(text)
    except ValueError:  # more digits than Python reads into an int: far beyond any literal type
        return Decimal(text)


def _exact_float(text: str) -> Decimal | float:
    try:
        return Decimal(text)
    except ArithmeticError:  # an exponent beyond Decimal's: read as the infinity it is refused as
        return float(text)


def decode_json(text: str | bytes | bytearray) -> Any:
    """JSON text decoded with every number exact (Decimal for fractions and exponents, int or,
    past Python's int-from-text limit, Decimal for integers), so no number fails the decoder:
    one out of range is refused by the filter's rules, naming its node. JSONDecodeError and
    RecursionError pass through."""
    return json.loads(text, parse_float=_exact_float, parse_int=_exact_int)


def parse_json(
    doc: Any,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_in_list: int = DEFAULT_MAX_IN_LIST,
    max_terms: int = DEFAULT_MAX_TERMS,
    schema: TableSchema | None = None,
) -> BooleanExpression:
    """Parse filter JSON (a str/bytes document or already-decoded objects) into a tree.

    ``schema``: the table's columns; needed for column references, and Variant columns are
    then checked against it (UnknownColumnError).

    ``max_depth`` bounds the nesting of and/or/not (a chain of the same operator counts once);
    ``max_in_list`` bounds each in/not-in list; ``max_terms`` the leaves joined by and/or. All
    raise LimitExceededError.
    """
    if isinstance(doc, str | bytes | bytearray):
        try:
            # NaN/Infinity are not JSON.
            doc = json.loads(
                doc, parse_float=_exact_float, parse_int=_exact_int, parse_constant=_reject_constant
            )
        except RecursionError:
            raise LimitExceededError(
                "filter JSON is nested too deeply", details={"limit": max_depth}
            ) from None
        except ValueError as e:
            raise InvalidPredicateError(f"filter is not valid JSON: {e}") from None
    # The limits first: the parser refuses a document past one after the limit's work, where
    # the walk over every string would have read all of it. Any other outcome (a tree or another
    # error) gives way to invalid text, as when the text was checked first.
    try:
        tree = _Parser(max_depth, max_in_list, max_terms, schema).parse(doc, None, 0)
    except LimitExceededError:
        raise
    except Exception:
        _refuse_invalid_text(doc)
        raise
    _refuse_invalid_text(doc)
    return tree


def _refuse_invalid_text(doc: Any) -> None:
    bad = first_invalid_text(doc)
    if bad is not None:
        raise InvalidPredicateError(f"the filter holds text that is not valid Unicode: {shown(bad)!r}") from None


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


class _Parser:
    def __init__(self, max_depth: int, max_in_list: int, max_terms: int, schema: TableSchema | None = None) -> None:
        self.max_depth = max_depth
        self.max_in_list = max_in_list
        self.max_terms = max_terms
        self.schema = schema
        self.terms = 0

    def _term(self, node: Any, ptr: Pointer | None) -> Term:
        return parse_term(node, ptr, self.schema)

    def _room(self, ptr: Pointer | None, n: int) -> None:
        """Refuse when ``n`` more leaves would pass max_terms."""
        if self.terms + n > self.max_terms:
            raise _over_limit(
                ptr, f"more than {self.max_terms} terms joined by and/or (the limit); use in-lists", self.max_terms
            )

    def _leaf(self, ptr: Pointer | None) -> None:
        self._room(ptr, 1)
        self.terms += 1

    def parse(self, node: Any, ptr: Pointer | None, depth: int) -> BooleanExpression:
        if depth > self.max_depth:
            raise _over_limit(ptr, f"predicate nested deeper than {self.max_depth}", self.max_depth)
        if node is True or node is False:
            self._leaf(ptr)
            return AlwaysTrue() if node else AlwaysFalse()
        if not isinstance(node, Mapping):
            raise _err(ptr, f"expected an expression object, got {type(node).__name__}")
        kind = node.get("type")
        if not isinstance(kind, str):
            raise _err(ptr, "an expression needs a string 'type'")
        kind = kind.lower()
        if kind in ("true", "false"):
            _check_keys(node, ptr, set())
            self._leaf(ptr)
            return AlwaysTrue() if kind == "true" else AlwaysFalse()
        if kind in ("and", "or"):
            return self._chain(node, ptr, depth, kind)
        if kind == "not":
            _check_keys(node, ptr, {"child"})
            return not_(self.parse(_require(node, "child", ptr), _child(ptr, "child"), depth + 1))
        if kind in _COMPARISONS:
            self._leaf(ptr)
            return self._unknown_if_untyped(node, kind, lambda: self._comparison(node, ptr, _COMPARISONS[kind]))
        if kind in _SETS:
            self._leaf(ptr)
            return self._unknown_if_untyped(node, kind, lambda: self._set(node, ptr, _SETS[kind]))
        if kind in _UNARY:
            self._leaf(ptr)
            return self._unknown_if_untyped(node, kind, lambda: self._unary(node, ptr, kind))
        raise _err(ptr, f"unknown expression type {kind!r}; expected one of {_ALL_TYPES}")

    def _unary(self, node: Mapping[str, Any], ptr: Pointer | None, kind: str) -> BooleanExpression:
        has_term = "term" in node
        _check_keys(node, ptr, {"term"} if has_term else {"left"})
        term = self._term(
            _require(node, "term" if has_term else "left", ptr),
            _child(ptr, "term" if has_term else "left"),
        )
        if isinstance(term, ColumnTerm) and kind in ("is-nan", "not-nan") and not term.target.is_float:
            raise _Untyped(term.name)  # Spark casts it to double: never NaN, but not ours to model
        return self._build(ptr, lambda: unary(_UNARY[kind], term))

    def _unknown_if_untyped(
        self, node: Mapping[str, Any], kind: str, make: Callable[[], BooleanExpression]
    ) -> BooleanExpression:
        """The leaf ``make`` builds, or an Unknown when it compares a column whose values pruning
        cannot compare (a column with no type in the value model, or one Spark has no literal
        comparison for here: time, uuid, nanosecond timestamps)."""
        try:
            return make()
        except _Untyped as u:
            return Unknown(_leaf_sql(kind, u.name, node), f"column {u.name} has no type pruning can compare")

    def _chain(self, node: Mapping[str, Any], ptr: Pointer | None, depth: int, kind: str) -> BooleanExpression:
        # A long left-deep chain (how clients write many conjuncts) is walked with a stack,
        # counting as one level of nesting, so it neither recurses nor trips max_depth.
        operands: list[tuple[Any, Pointer | None]] = []
        stack: list[tuple[Any, Pointer | None]] = [(node, ptr)]
        while stack:
            n, p = stack.pop()
            if isinstance(n, Mapping) and isinstance(n.get("type"), str) and n["type"].lower() == kind:
                _check_keys(n, p, {"left", "right"})
                stack.append((_require(n, "right", p), _child(p, "right")))
                stack.append((_require(n, "left", p), _child(p, "left")))
                # Every operand, and every node still to walk, holds at least one leaf: a chain
                # too long is refused once the walk has seen max_terms of them, before any is
                # built, so refusing a chain costs the limit's work, not the chain's. (Popping an
                # operand leaves the count as it is: its last value is the number of operands.)
                self._room(ptr, len(operands) + len(stack))
            else:
                operands.append((n, p))
        children = [self.parse(n, p, depth + 1) for n, p in operands]
        return and_(*children) if kind == "and" else or_(*children)

    def _build(self, ptr: Pointer | None, make: Callable[[], BooleanExpression]) -> BooleanExpression:
        try:
            return make()
        except (InvalidPredicateError, InvalidPathError) as e:
            raise _reraise(ptr, e) from None

    def _comparison(self, node: Mapping[str, Any], ptr: Pointer | None, op: Op) -> BooleanExpression:
        if "term" in node:
            _check_keys(node, ptr, {"term", "value"})
            term = self._term(node["term"], _child(ptr, "term"))
            value, vptr = _require(node, "value", ptr), _child(ptr, "value")
        else:
            _check_keys(node, ptr, {"left", "right"})
            left, right = _require(node, "left", ptr), _require(node, "right", ptr)
            if _is_term(left) and _is_term(right):
                raise _err(ptr, "comparing two terms is not supported; compare a term with a value")
            if _is_term(right):
                term = self._term(right, _child(ptr, "right"))
                value, vptr, op = left, _child(ptr, "left"), FLIPPED[op]
            else:
                term = self._term(left, _child(ptr, "left"))
                value, vptr = right, _child(ptr, "right")
        _comparable(term)
        lit = _value(value, term.target, vptr)
        return self._build(vptr, lambda: compare(op, term, lit))

    def _set(self, node: Mapping[str, Any], ptr: Pointer | None, op: Op) -> BooleanExpression:
        has_term = "term" in node
        _check_keys(node, ptr, {"term", "values"} if has_term else {"left", "values"})
        tkey = "term" if has_term else "left"
        term = self._term(_require(node, tkey, ptr), _child(ptr, tkey))
        _comparable(term)
        values = _require(node, "values", ptr)
        vptr = _child(ptr, "values")
        if not isinstance(values, list | tuple):
            raise _err(vptr, "values must be a list")
        if len(values) > self.max_in_list:
            raise _over_limit(
                vptr, f"{len(values)} values in an in-list; the limit is {self.max_in_list}", self.max_in_list
            )
        lits = [_value(v, term.target, _child(vptr, i)) for i, v in enumerate(values)]
        for i, lit in enumerate(lits):
            # Convert one by one first so an error points at the offending value.
            self._build(_child(vptr, i), partial(compare, Op.EQ, term, lit))
        return self._build(vptr, lambda: in_list(op, term, lits))


def _comparable(term: Term) -> None:
    """A column of a type Spark has no name for here cannot be compared with a JSON value."""
    if isinstance(term, ColumnTerm):
        try:
            spark_type_name(term.target)
        except InvalidPredicateError:
            raise _Untyped(term.name) from None


_LEAF_SQL = {
    "eq": "=",
    "not-eq": "!=",
    "lt": "<",
    "lt-eq": "<=",
    "gt": ">",
    "gt-eq": ">=",
}


def _sql_value(v: Any) -> str:
    from service.pruning.render import sql_string

    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, int | float | Decimal):
        return str(v)
    return sql_string(str(v))


def _leaf_sql(kind: str, column: str, node: Mapping[str, Any]) -> str:
    """Spark SQL for a JSON leaf on a column kept as an unknown sub-expression."""
    from service.pruning.render import render_column

    col = render_column(column)
    if kind in _LEAF_SQL:
        if "term" in node:
            return f"{col} {_LEAF_SQL[kind]} {_sql_value(node.get('value'))}"
        if _is_term(node.get("right")):  # a value on the left, as written
            return f"{_sql_value(node.get('left'))} {_LEAF_SQL[kind]} {col}"
        return f"{col} {_LEAF_SQL[kind]} {_sql_value(node.get('right'))}"
    if kind in ("in", "not-in"):
        items = ", ".join(_sql_value(v) for v in node.get("values", ()))
        return f"{col} {'IN' if kind == 'in' else 'NOT IN'} ({items})"
    return {
        "is-null": f"{col} IS NULL",
        "not-null": f"{col} IS NOT NULL",
        "is-nan": f"isnan({col})",
        "not-nan": f"NOT isnan({col})",
    }[kind]


# --- to_json ----------------------------------------------------------------------------------


def value_to_json(t: ShreddedType, v: Bound) -> Any:
    k = t.kind
    if k is Kind.BOOLEAN or t.is_integer:
        return v
    if t.is_float:
        assert isinstance(v, float)
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        # A float32 is sent as its exact double value: Spark compares a float term with a
        # JSON/decimal number in double, so a shorter spelling would name another value.
        return v
    if k is Kind.DECIMAL:
        assert isinstance(v, Decimal)
        return f"{v:f}"
    if k is Kind.DATE:
        assert isinstance(v, int)
        return format_date(v)
    if k is Kind.TIMESTAMPTZ:
        assert isinstance(v, int)
        return format_timestamp(v, tz=True, sep="T")
    if k is Kind.TIMESTAMP:
        assert isinstance(v, int)
        return format_timestamp(v, tz=False, sep="T")
    if k is Kind.BLOB:
        assert isinstance(v, bytes)
        return v.hex().upper()
    return v


def term_to_json(term: Term) -> Any:
    """A variant term's object; a column as Iceberg names it, its bare name (a Reference)."""
    if isinstance(term, ColumnTerm):
        return term.name
    return {
        "type": "variant",
        "column": term.column,
        "path": format_json_path(term.path),
        "as": spark_type_name(term.target),
        "try": term.try_cast,
    }


def _balanced(kind: str, items: list[dict[str, Any]]) -> dict[str, Any]:
    if len(items) == 1:
        return items[0]
    mid = len(items) // 2
    return {"type": kind, "left": _balanced(kind, items[:mid]), "right": _balanced(kind, items[mid:])}


class _Json(BooleanExpressionVisitor[Any]):
    def visit_true(self) -> Any:
        return {"type": "true"}

    def visit_false(self) -> Any:
        return {"type": "false"}

    def visit_and(self, node: And) -> Any:
        return _balanced("and", [visit(c, self) for c in node.children])

    def visit_or(self, node: Or) -> Any:
        return _balanced("or", [visit(c, self) for c in node.children])

    def visit_not(self, node: Not) -> Any:
        return {"type": "not", "child": visit(node.child, self)}

    def visit_unknown(self, node: Unknown) -> Any:
        raise InvalidPredicateError(
            f"the sub-expression {node.text!r} has no filter JSON form (it is not used for pruning)"
        )

    def visit_unary(self, pred: UnaryPredicate) -> Any:
        return {"type": _JSON_NAME[pred.op], "term": term_to_json(pred.term)}

    def visit_literal(self, pred: LiteralPredicate) -> Any:
        return {
            "type": _JSON_NAME[pred.op],
            "term": term_to_json(pred.term),
            "value": value_to_json(pred.term.target, pred.literal),
        }

    def visit_set(self, pred: SetPredicate) -> Any:
        return {
            "type": _JSON_NAME[pred.op],
            "term": term_to_json(pred.term),
            "values": [value_to_json(pred.term.target, v) for v in pred.literals],
        }


_JSON = _Json()


def to_json(e: BooleanExpression) -> Any:
    """The canonical JSON of a tree (Python objects; ``json.dumps`` them to send)."""
    return visit(e, _JSON)
