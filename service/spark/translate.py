"""Turning a ``read_pruned`` predicate into the SQL text the service prunes with.

* **SQL text** is sent as written first: the service parses it against the table's schema, so
  plain and partition columns prune beside Variant paths and what it cannot use (a function of a
  column, ``<=>``...) is kept as unknown. A service that refuses it (one that knows only Variant
  terms, or a table whose catalog lacks a column Spark sees) is then asked with the top-level
  ``AND`` split and only the conjuncts shredcat's schema-free parser understands (dropping a
  conjunct only widens the candidate set); with none left nothing is pruned
  (:func:`pruning_attempts`).
* **A PySpark Column** (PySpark 4 keeps no Python-side tree and its printed form
  ``Column<'=(variant_get(v, '$.a', 'bigint'), 5)'>`` is not SQL) is rendered from its JVM
  ``ColumnNode`` tree through py4j: operators become infix SQL, literals are rendered by
  Catalyst (timestamps with an explicit ``+00:00``, floats as ``CAST('1.5' AS FLOAT)``),
  ``F.expr`` fragments are taken verbatim; plain and partition columns by the name Spark resolves.
  A top-level ``AND`` is rendered conjunct by conjunct (:func:`column_conjuncts`), so one
  conjunct without a SQL form (a Python UDF) is left out rather than losing the others. Each text
  is then **checked by Spark itself**: the Column and the text are analyzed against the table's
  schema, constant-folded, and must be semantically equal, so a rendering mistake can only cost
  pruning, never rows.
* **Time zones**: when the Spark session time zone is not UTC, the plan names it
  (``session-time-zone``) and the service reads zone-less timestamp literals in it, as Spark does.
  A service that does not know the field is asked as before: a predicate mentioning timestamps,
  or comparing a timestamp column (``ts > '2024-03-01 10:00'`` names no type), is then not
  pruned.
"""

from __future__ import annotations

import math
import re
import struct
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.pruning.schema import ColumnInfo

__all__ = [
    "Untranslatable",
    "column_conjuncts",
    "column_to_sql",
    "is_column",
    "pruning_attempts",
    "pruning_sql",
    "same_predicate",
    "session_is_utc",
    "session_zone_of",
    "table_schema_of",
]


class Untranslatable(Exception):
    """The predicate has no pruning form; the message says why."""


def is_column(obj: Any) -> bool:
    try:
        from pyspark.sql import Column
    except ImportError:  # pragma: no cover - pyspark is there whenever a Column exists
        return False
    return isinstance(obj, Column)


# --- SQL text ---------------------------------------------------------------------------------


def _session_zone(spark: Any) -> tuple[str, Any]:
    """The session time zone's name and the service's reading of it
    (:func:`service.pruning.zones.session_zone`; None: a name it does not read)."""
    from service.errors import ShredcatError
    from service.pruning.zones import session_zone

    tz = str(spark.conf.get("spark.sql.session.timeZone") or "")
    if not tz:
        return tz, None
    try:
        return tz, session_zone(tz)
    except ShredcatError:
        return tz, None


def session_is_utc(spark: Any) -> bool:
    """Whether the session time zone is UTC at every instant (UTC, Etc/UTC, GMT, +00:00, or a
    region whose offset is always zero)."""
    _, zone = _session_zone(spark)
    return zone is not None and _always_utc(zone)


def _always_utc(zone: Any) -> bool:
    if zone.is_utc:
        return True
    probes = [datetime(y, m, 1, tzinfo=UTC) for y in (1970, 2000, 2024, 2038) for m in (1, 7)]
    return all(p.astimezone(zone.zone).utcoffset() == timedelta(0) for p in probes)


def session_zone_of(spark: Any) -> str | None:
    """The session time zone to send with a plan: its name when it is not UTC and the service
    reads it (:func:`service.pruning.zones.session_zone`), else None."""
    tz, zone = _session_zone(spark)
    return None if zone is None or _always_utc(zone) else tz


_TIMESTAMP = re.compile(r"(?i)timestamp")


def table_schema_of(struct: Any) -> Any:
    """The :class:`~service.pruning.schema.TableSchema` of a Spark schema (a StructType): Variant
    fields are Variant columns, primitive fields (struct leaves dotted) plain columns typed in the
    value model, any other type a column of no comparable type."""
    from types import MappingProxyType

    from service.pruning.schema import TableSchema

    variants: list[str] = []
    columns: dict[str, ColumnInfo] = {}
    _walk_fields(struct.fields, "", variants, columns)
    return TableSchema(tuple(variants), MappingProxyType(columns))


def _walk_fields(fields: Any, prefix: str, variants: list[str], columns: dict[str, ColumnInfo]) -> None:
    """:func:`table_schema_of`'s walk, a module function: a closure calling itself is a reference
    cycle (the function and its cell) left to the garbage collector on every call."""
    from service.pruning.schema import ColumnInfo
    from service.pruning.spark_types import parse_spark_type

    for f in fields:
        name = prefix + f.name
        dt = f.dataType
        kind = dt.typeName()
        if kind == "variant":
            variants.append(name)
        elif kind == "struct":
            _walk_fields(dt.fields, name + ".", variants, columns)
        else:
            simple = dt.simpleString()
            if simple.startswith(("char", "varchar")):
                simple = "string"
            try:
                columns[name] = ColumnInfo(name, parse_spark_type(simple))
            except Exception:  # a list, a map, an interval...: known, never compared
                columns[name] = ColumnInfo(name, None)


def _timestamp_columns(text: str, schema: Any) -> list[str]:
    """The timestamp columns a predicate compares (whose literals Spark reads in its session zone)."""
    from service.pruning.expressions import ColumnTerm, iter_predicates
    from service.pruning.parse_sql import parse_sql
    from service.values import Kind

    try:
        tree = parse_sql(text, schema=schema)
    except Exception:
        return []
    return [
        p.term.name
        for p in iter_predicates(tree)
        if isinstance(p.term, ColumnTerm) and p.term.target.kind in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ)
    ]


def pruning_attempts(text: str, *, utc: bool = True, schema: Any = None) -> tuple[list[str], str | None]:
    """``(texts to ask the service with, in order, None)``, or ``([], why nothing can be
    pruned)``: the text as written (the service resolves it against the table), then, for a
    service that refuses it, :func:`pruning_sql`'s schema-free form when that differs.
    ``schema``: the table's :class:`~service.pruning.schema.TableSchema` as Spark sees it, used
    to find timestamp columns when the session is not UTC."""
    from service.pruning.parse_sql.syntax import parse_predicate

    if not utc and _TIMESTAMP.search(text):
        return [], "the Spark session time zone is not UTC and the predicate involves timestamps"
    if not utc and schema is not None and (cols := _timestamp_columns(text, schema)):
        return [], f"the Spark session time zone is not UTC and the predicate compares timestamp column {cols[0]}"
    attempts: list[str] = []
    try:
        parse_predicate(text)
        attempts.append(text)
    except Exception:
        pass  # not even its syntax: the schema-free split may still find conjuncts
    legacy, why = pruning_sql(text, utc=utc)
    if legacy is not None and legacy not in attempts:
        attempts.append(legacy)
    if not attempts:
        return [], why
    return attempts, None


def pruning_sql(text: str, *, utc: bool = True) -> tuple[str | None, str | None]:
    """``(sql to send the service, None)``, or ``(None, why nothing can be pruned)``.

    ``sql`` is ``text`` itself when shredcat parses it, else the AND of the conjuncts it parses
    (each rendered by :func:`service.pruning.render.to_sql`)."""
    from service.errors import ShredcatError
    from service.pruning.parse_sql import parse_sql
    from service.pruning.parse_sql.syntax import split_conjunctions
    from service.pruning.render import to_sql

    if not utc and _TIMESTAMP.search(text):
        return None, "the Spark session time zone is not UTC and the predicate involves timestamps"
    try:
        parse_sql(text)
        return text, None
    except ShredcatError as e:
        first_error = e.message
    except Exception as e:  # a parser bug must cost pruning, not the query
        first_error = f"{type(e).__name__}: {e}"
    parts = split_conjunctions(text)
    kept = []
    for part in parts or ():
        try:
            kept.append(to_sql(parse_sql(part)))
        except Exception:
            continue
    if not kept:
        return None, f"shredcat cannot prune with it ({first_error})"
    if len(kept) == 1:
        return kept[0], None
    return " AND ".join(f"({k})" for k in kept), None


# --- PySpark Column -----------------------------------------------------------------------------

_COMPARISON = {"=": "=", "==": "=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "!=": "!=", "<>": "!=", "<=>": "<=>"}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _seq(s: Any) -> list[Any]:
    return [s.apply(i) for i in range(s.length())]


def _float32_text(x: float) -> str:
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    target = struct.unpack("<f", struct.pack("<f", x))[0]
    for digits in range(1, 10):
        s = f"{x:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(s)))[0] == target:
            return s
    return repr(x)  # pragma: no cover - 9 significant digits always round-trip a float32


def _literal_sql(lit: Any) -> str:
    """A Catalyst Literal as SQL text shredcat's parser and Spark both read as the same value."""
    type_name = lit.dataType().typeName()
    value = lit.value()
    if value is None:
        return lit.sql()
    if type_name == "timestamp":
        at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(value))
        return f"TIMESTAMP '{at.strftime('%Y-%m-%d %H:%M:%S.%f')}+00:00'"
    if type_name == "float":
        return f"CAST('{_float32_text(float(value))}' AS FLOAT)"
    return str(lit.sql())


class _Renderer:
    def __init__(self, spark: Any) -> None:
        self.converter = spark._jsparkSession.converter()

    def render(self, node: Any) -> str:
        kind = node.getClass().getSimpleName()
        if kind == "SqlExpression":
            return f"({node.expression()})"
        if kind == "UnresolvedFunction":
            return self._function(node)
        if kind == "Literal":
            return _literal_sql(self.converter.apply(node))
        if kind == "UnresolvedAttribute":
            return str(self.converter.apply(node).sql())
        if kind == "Cast":
            return self._cast(node)
        if kind == "Alias":
            return self.render(node.child())
        raise Untranslatable(f"no SQL form for a {kind} ({node.sql()})")

    def _function(self, node: Any) -> str:
        name = str(node.functionName())
        if node.isUserDefinedFunction():
            raise Untranslatable(f"user-defined function {name}")
        if node.isDistinct():
            raise Untranslatable(f"DISTINCT in {name}")
        args = [self.render(a) for a in _seq(node.arguments())]
        low = name.lower()
        if name in _COMPARISON and len(args) == 2:
            return f"({args[0]} {_COMPARISON[name]} {args[1]})"
        if low in ("and", "or") and len(args) >= 2:
            return "(" + f" {low.upper()} ".join(args) + ")"
        if low in ("!", "not") and len(args) == 1:
            return f"(NOT {args[0]})"
        if low == "isnull" and len(args) == 1:
            return f"({args[0]} IS NULL)"
        if low == "isnotnull" and len(args) == 1:
            return f"({args[0]} IS NOT NULL)"
        if low == "in" and len(args) >= 2:
            return f"({args[0]} IN ({', '.join(args[1:])}))"
        if _IDENT.fullmatch(name):
            return f"{name}({', '.join(args)})"
        raise Untranslatable(f"no SQL form for the function {name!r}")

    def _cast(self, node: Any) -> str:
        target = node.dataType()
        child = node.child()
        mode = str(node.evalMode().toString())
        word = "TRY_CAST" if "Try" in mode else "CAST"
        if word == "CAST" and target.typeName() == "float" and child.getClass().getSimpleName() == "Literal":
            # CAST(1.5D AS FLOAT): fold it, shredcat reads float literals as CAST('1.5' AS FLOAT).
            e = self.converter.apply(node)
            if e.resolved() and e.foldable():
                value = e.eval(None)
                if value is not None:
                    return f"CAST('{_float32_text(float(value))}' AS FLOAT)"
        return f"{word}({self.render(child)} AS {target.sql()})"


def _render(spark: Any, node: Any) -> str:
    try:
        return _Renderer(spark).render(node)
    except Untranslatable:
        raise
    except Exception as e:  # py4j errors on an unexpected node
        raise Untranslatable(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None


def _node(column: Any) -> Any:
    jc = getattr(column, "_jc", None)
    if jc is None or not hasattr(jc, "node"):
        raise Untranslatable("not a classic PySpark Column (Spark Connect Columns are not supported)")
    return jc.node()


def column_to_sql(spark: Any, column: Any) -> str:
    """Spark SQL text for a PySpark Column (raises :class:`Untranslatable`). The text is not
    checked here: :func:`same_predicate` does that against a schema."""
    return _render(spark, _node(column))


def _and_operands(node: Any) -> list[Any]:
    """The operands of a top-level AND chain of ColumnNodes (the node itself when it is none)."""
    out: list[Any] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.getClass().getSimpleName() == "UnresolvedFunction" and str(n.functionName()).lower() == "and":
            stack.extend(reversed(_seq(n.arguments())))
        elif n.getClass().getSimpleName() == "Alias":
            stack.append(n.child())
        else:
            out.append(n)
    return out


def column_conjuncts(spark: Any, column: Any) -> list[tuple[Any, str | None, str | None]]:
    """The top-level AND operands of a PySpark Column, each as ``(Column, sql, None)`` or
    ``(Column, None, why it has no SQL form)``; a Column that is no AND is its one operand.
    Raises :class:`Untranslatable` for a Column that is not a classic one."""
    from pyspark.sql import Column

    out: list[tuple[Any, str | None, str | None]] = []
    for n in _and_operands(_node(column)):
        part = Column(spark._jvm.org.apache.spark.sql.Column(n))
        try:
            out.append((part, _render(spark, n), None))
        except Untranslatable as e:
            out.append((part, None, str(e)))
    return out


def _condition(frame: Any, predicate: Any) -> Any:
    spark = frame.sparkSession
    plan = frame.where(predicate)._jdf.queryExecution().analyzed()
    folding = spark._jvm.org.apache.spark.sql.catalyst.optimizer.ConstantFolding
    return folding.apply(plan).condition()


def same_predicate(spark: Any, schema: Any, column: Any, text: str) -> bool:
    """Whether Spark analyzes ``column`` and ``text`` into the same condition over ``schema``
    (after constant folding). Any failure is a no."""
    try:
        frame = spark.createDataFrame([], schema)
        return bool(_condition(frame, column).semanticEquals(_condition(frame, text)))
    except Exception:
        return False
