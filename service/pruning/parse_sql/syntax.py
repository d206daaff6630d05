"""sqlglot's front door: the one module that tokenizes and parses with sqlglot and turns its
errors into :class:`~service.errors.InvalidPredicateError` (the converter only reads the node
classes of the tree it is given).

sqlglot's ``spark`` dialect has no ``:`` operator, so text that fails to parse as Spark and
contains ``:`` is parsed again with the ``databricks`` dialect (a superset of Spark's grammar for
predicates, with the ``v:a.b::type`` shorthand).
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokens import TokenType

from service.errors import InvalidPredicateError

_PREFIX = frozenset({TokenType.NOT, TokenType.DASH, TokenType.PLUS})


def nesting(text: str) -> int:
    """Parenthesis depth plus the longest run of prefix operators (NOT, unary minus): what
    makes sqlglot's recursive-descent parser recurse."""
    try:
        tokens = sqlglot.tokenize(text, read="spark" if ":" not in text else "databricks")
    except TokenError as e:
        raise InvalidPredicateError(f"cannot tokenize SQL predicate: {e}") from None
    depth = best = run = 0
    for t in tokens:
        if t.token_type is TokenType.L_PAREN:
            depth += 1
        elif t.token_type is TokenType.R_PAREN:
            depth -= 1
        run = run + 1 if t.token_type in _PREFIX else 0
        best = max(best, depth + run)
    return best


def _parse_error(e: ParseError) -> InvalidPredicateError:
    if e.errors:
        first = e.errors[0]
        msg = f"cannot parse SQL predicate: {first.get('description')} at line {first.get('line')}, column {first.get('col')}"
        near = (first.get("start_context") or "") + (first.get("highlight") or "")
        if near:
            msg += f" (near {near[-40:]!r})"
        return InvalidPredicateError(msg, details={"line": first.get("line"), "column": first.get("col")})
    return InvalidPredicateError(f"cannot parse SQL predicate: {e}")


def _statements(text: str) -> list[exp.Expression | None]:
    try:
        return sqlglot.parse(text, read="spark")
    except ParseError as e:
        if ":" not in text:
            raise _parse_error(e) from None
        try:
            # The `v:a.b::type` shorthand exists only in sqlglot's databricks dialect.
            return sqlglot.parse(text, read="databricks")
        except ParseError:
            raise _parse_error(e) from None
    except TokenError as e:
        raise InvalidPredicateError(f"cannot tokenize SQL predicate: {e}") from None


def parse_predicate(text: str) -> exp.Expression:
    """The sqlglot tree of one predicate. RecursionError passes through: the caller, which
    sized the recursion headroom, reports it as a limit."""
    try:
        statements = [s for s in _statements(text) if s is not None]
    except SqlglotError as e:  # pragma: no cover - other sqlglot failures
        raise InvalidPredicateError(f"cannot parse SQL predicate: {e}") from None
    if len(statements) != 1:
        raise InvalidPredicateError(f"expected exactly one predicate, got {len(statements)} statements")
    return statements[0]


def split_conjunctions(text: str) -> list[str] | None:
    """The top-level AND operands of ``text`` as SQL text, or None when it does not parse (as
    Spark or Databricks SQL, with the interpreter's own recursion limit) or has fewer than two.
    For a predicate the parser refuses as a whole, whose conjuncts may each still prune."""
    for dialect in ("spark", "databricks"):
        try:
            tree = sqlglot.parse_one(text, dialect=dialect)
            break
        except (SqlglotError, RecursionError):
            continue
    else:
        return None
    out: list[exp.Expression] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        while isinstance(node, exp.Paren):
            node = node.this
        if isinstance(node, exp.And):
            stack.extend([node.right, node.left])
        else:
            out.append(node)
    if len(out) < 2:
        return None
    return [n.sql(dialect=dialect) for n in out]
