"""Reading sqlglot nodes: unwrapping parentheses, printing a node for an error message, and the
error that names a construct pruning does not support."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

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
    # In the instance dict: an attribute of this module, not one of the error class.
    e.__dict__["_shredcat_hard"] = True
    return e


def is_hard(e: InvalidPredicateError) -> bool:
    return bool(getattr(e, "_shredcat_hard", False))


#: The text being parsed, for error snippets cut from it (set by :func:`source_text`).
_SOURCE: ContextVar[str | None] = ContextVar("shredcat_sql_source", default=None)
#: Longest snippet in an error message.
SNIPPET_CHARS = 80


@contextmanager
def source_text(text: str) -> Iterator[None]:
    """Error snippets of nodes parsed from ``text`` are cut from it while this is active."""
    token = _SOURCE.set(text)
    try:
        yield
    finally:
        _SOURCE.reset(token)


def _edge(node: exp.Expression, *, last: bool) -> int | None:
    """Where ``node`` starts (or ends) in the text: the extreme position sqlglot kept on the path
    to its first (or last) leaf, following one child per level (a call keeps its name's, its
    arguments theirs)."""
    found: int | None = None
    key = "end" if last else "start"
    while True:
        at = node.meta.get(key) if node.meta else None
        if at is not None:
            found = at if found is None else (max(found, at) if last else min(found, at))
        children = list(node.iter_expressions())
        if not children:
            return found
        node = children[-1] if last else children[0]


def _span(node: exp.Expression, text: str) -> str | None:
    """The part of ``text`` a node was parsed from (its start to its last leaf's end and the
    parentheses that close it), or None when sqlglot kept no position for it."""
    start = _edge(node, last=False)
    if start is None:
        return None
    end = _edge(node, last=True)
    if end is None or end < start:
        return text[start : start + SNIPPET_CHARS + 1]
    part = text[start : end + 1]
    if len(part) > SNIPPET_CHARS:
        return part
    # A call or a parenthesized group ends after its last leaf: close what the part opened.
    opened = part.count("(") - part.count(")")
    i = end + 1
    while opened > 0 and i < len(text) and len(part) <= SNIPPET_CHARS:
        c = text[i]
        if c == ")":
            opened -= 1
        elif not c.isspace():
            break
        part += c
        i += 1
    return part


def snippet(node: exp.Expression) -> str:
    """The node as the predicate's text wrote it (cut from the text, never regenerated: printing a
    node of a long chain costs more than parsing it), else as sqlglot prints it."""
    text = _SOURCE.get()
    s = _span(node, text) if text is not None else None
    if s is None:
        try:
            # databricks prints the `v:a` shorthand as written (spark would say GET_JSON_OBJECT).
            s = node.sql(dialect="databricks")
        except Exception:  # pragma: no cover - printing is best effort
            s = type(node).__name__
    return s if len(s) <= SNIPPET_CHARS else s[: SNIPPET_CHARS - 3] + "..."


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

