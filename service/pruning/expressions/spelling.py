"""How a term and a comparison are spelled in Spark SQL: quoted strings and identifiers, a column
or a ``variant_get`` term, the comparison operators.

Apart from :mod:`service.pruning.render` (which renders whole trees with these and re-exports
them) because the builders spell the terms of the :class:`~.nodes.Unknown` nodes they make, and
the renderer imports the package whose builders those are: one module below both keeps the
imports acyclic.
"""

from __future__ import annotations

import re
from functools import cache

from service.pruning.expressions.nodes import Op, Term, VariantTerm
from service.pruning.paths import JsonPath, format_spark_path
from service.pruning.spark_types import spark_type_name

#: A comparison's SQL operator.
COMPARISON_SYMBOLS = {
    Op.EQ: "=",
    Op.NOT_EQ: "!=",
    Op.LT: "<",
    Op.LT_EQ: "<=",
    Op.GT: ">",
    Op.GT_EQ: ">=",
}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@cache
def _keywords() -> frozenset[str]:
    from sqlglot.dialects.spark import Spark

    return frozenset(k.upper() for k in Spark.Tokenizer.KEYWORDS if _IDENT.fullmatch(k))


def sql_string(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def quote_identifier(name: str) -> str:
    if _IDENT.fullmatch(name) and name.upper() not in _keywords():
        return name
    return "`" + name.replace("`", "``") + "`"


def render_column(column: str) -> str:
    """A dotted column name is a Variant field nested in structs (as the catalog names them)."""
    return ".".join(quote_identifier(p) for p in column.split("."))


def render_term(term: Term, base: str | None = None, path: JsonPath | None = None) -> str:
    if not isinstance(term, VariantTerm):
        return render_column(term.name)
    fn = "try_variant_get" if term.try_cast else "variant_get"
    b = render_column(term.column) if base is None else base
    p = term.path if path is None else path
    return f"{fn}({b}, {sql_string(format_spark_path(p))}, '{spark_type_name(term.target)}')"
