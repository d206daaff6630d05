"""Reading sqlglot nodes: unwrapping parentheses, printing a node for an error message, and the
error that names a construct pruning does not support."""

from __future__ import annotations

from sqlglot import exp

from service.errors import InvalidPredicateError

_UNSUPPORTED_NAMES: dict[type[exp.Expression], str] = {
    exp.Like: "LIKE",
    exp.ILike: "ILIKE",
    exp.RegexpLike: "RLIKE / REGEXP",
    exp.SimilarTo: "SIMILAR TO",
    exp.Add: "arithmetic (+)",
    exp.Sub: "arithmetic (-)",
    exp.Mul: "arithmetic (*)",
    exp.Div: "arithmetic (/)",
    exp.Mod: "arithmetic (%)",
    exp.Subquery: "subqueries",
    exp.Select: "a SELECT statement (pass only the predicate)",
    exp.NullSafeEQ: "<=> (null-safe equality)",
    exp.NullSafeNEQ: "null-safe inequality",
    exp.Xor: "XOR",
    exp.Star: "*",
}


def hard(e: InvalidPredicateError) -> InvalidPredicateError:
    """Mark an error that stays an error with a schema too (Spark refuses the text as well)."""
    e._shredcat_hard = True  # type: ignore[attr-defined]
    return e


def is_hard(e: InvalidPredicateError) -> bool:
    return bool(getattr(e, "_shredcat_hard", False))


def snippet(node: exp.Expression) -> str:
    try:
        # databricks prints the `v:a` shorthand as written (spark would say GET_JSON_OBJECT).
        s = node.sql(dialect="databricks")
    except Exception:  # pragma: no cover - printing is best effort
        s = type(node).__name__
    return s if len(s) <= 80 else s[:77] + "..."


def unsupported(node: exp.Expression, what: str | None = None) -> InvalidPredicateError:
    if what is None:
        what = next((n for t, n in _UNSUPPORTED_NAMES.items() if isinstance(node, t)), None)
    if what is None:
        if isinstance(node, exp.Anonymous):
            what = f"function {node.name}()"
        elif isinstance(node, exp.Func):
            what = f"function {node.sql_name()}()"
        else:
            what = type(node).__name__
    return InvalidPredicateError(
        f"{what} is not supported in a pruning predicate: {snippet(node)}",
        details={"unsupported": what},
    )


def unparen(node: exp.Expression) -> exp.Expression:
    while isinstance(node, exp.Paren):
        node = node.this
    return node


def is_string(node: exp.Expression) -> bool:
    return isinstance(node, exp.Literal) and node.is_string

