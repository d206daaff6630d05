"""Turning a ``read_pruned`` predicate into the SQL text the service prunes with.

* **SQL text** is sent as written when shredcat's parser accepts it (Spark accepts the same text,
  ``v:a::bigint`` shorthand included, and applies it to the rows). When it does not (a plain
  column, a UDF, ``<=>``...), the top-level ``AND`` is split and only the conjuncts shredcat
  understands are sent (dropping a conjunct only widens the candidate set); with none left
  nothing is pruned.
* **A PySpark Column** (PySpark 4 keeps no Python-side tree and its printed form
  ``Column<'=(variant_get(v, '$.a', 'bigint'), 5)'>`` is not SQL) is rendered from its JVM
  ``ColumnNode`` tree through py4j: operators become infix SQL, literals are rendered by
  Catalyst (timestamps with an explicit ``+00:00``, floats as ``CAST('1.5' AS FLOAT)``),
  ``F.expr`` fragments are taken verbatim. The text is then **checked by Spark itself**: both the
  Column and the text are analyzed against the table's schema, constant-folded, and must be
  semantically equal, so a rendering mistake can only cost pruning, never rows.
* **Time zones**: the service reads a timestamp literal without a zone as UTC. When the Spark
  session time zone is not UTC, a predicate mentioning timestamps is not pruned (Spark would
  read its literals in the session zone).
"""

from __future__ import annotations

import math
import re
import struct
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["Untranslatable", "column_to_sql", "is_column", "pruning_sql", "same_predicate", "session_is_utc"]


class Untranslatable(Exception):
    """The predicate has no pruning form; the message says why."""


def is_column(obj: Any) -> bool:
    try:
        from pyspark.sql import Column
    except ImportError:  # pragma: no cover - pyspark is there whenever a Column exists
        return False
    return isinstance(obj, Column)


# --- SQL text ---------------------------------------------------------------------------------


def session_is_utc(spark: Any) -> bool:
    """Whether the session time zone is UTC at every instant (UTC, Etc/UTC, GMT, +00:00...)."""
    tz = str(spark.conf.get("spark.sql.session.timeZone") or "")
    if re.fullmatch(r"(?i)(utc|gmt|z|zulu|uct|universal|etc/(utc|gmt|uct|universal|zulu)|gmt0|etc/gmt[+-]?0)", tz):
        return True
    if re.fullmatch(r"(?i)(utc|gmt)?[+-]0?0(:?00)?", tz):
        return True
    try:
        from zoneinfo import ZoneInfo

        zone = ZoneInfo(tz)
    except Exception:
        return False
    probes = [datetime(y, m, 1, tzinfo=UTC) for y in (1970, 2000, 2024, 2038) for m in (1, 7)]
    return all(p.astimezone(zone).utcoffset() == timedelta(0) for p in probes)


_TIMESTAMP = re.compile(r"(?i)timestamp")


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


def column_to_sql(spark: Any, column: Any) -> str:
    """Spark SQL text for a PySpark Column (raises :class:`Untranslatable`). The text is not
    checked here: :func:`same_predicate` does that against a schema."""
    jc = getattr(column, "_jc", None)
    if jc is None or not hasattr(jc, "node"):
        raise Untranslatable("not a classic PySpark Column (Spark Connect Columns are not supported)")
    try:
        return _Renderer(spark).render(jc.node())
    except Untranslatable:
        raise
    except Exception as e:  # py4j errors on an unexpected node
        raise Untranslatable(f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}") from None


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
