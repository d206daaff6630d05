"""sqlglot's front door: the one module that tokenizes and parses with sqlglot (its parser
through :mod:`.lists`) and turns its errors into :class:`~service.errors.InvalidPredicateError`
(the converter only reads the node classes of the tree it is given). A text is tokenized once per
dialect: the tokens that measured its nesting are the ones parsed.

sqlglot's ``spark`` dialect has no ``:`` operator, so text that fails to parse as Spark and
contains ``:`` is parsed again with the ``databricks`` dialect (a superset of Spark's grammar for
predicates, with the ``v:a.b::type`` shorthand).
"""

from __future__ import annotations

import logging
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ParseError, SqlglotError, TokenError
from sqlglot.tokens import Token, TokenType

from service.errors import InvalidPredicateError
from service.pruning.parse_sql.lists import parse_tokens

_PREFIX = frozenset({TokenType.NOT, TokenType.DASH, TokenType.PLUS})

# sqlglot logs a warning ("... contains unsupported syntax. Falling back to parsing as a
# 'Command'") for some malformed texts it then parses loosely; the converter refuses what it does
# not know with a message of its own, so every bad predicate a client sends would otherwise be
# a log line of the server's too.
logging.getLogger("sqlglot").setLevel(logging.ERROR)


def first_dialect(text: str) -> str:
    """The dialect whose tokens measure ``text``'s nesting: Databricks' when ``:`` may be its
    shorthand (see the module docstring)."""
    return "spark" if ":" not in text else "databricks"


def tokenize(text: str, dialect: str) -> list[Token]:
    """``text``'s tokens in ``dialect``; an unterminated quote is an InvalidPredicateError at it."""
    try:
        tokens = sqlglot.tokenize(text, read=dialect)
    except TokenError as e:
        raise _token_error(text, e) from None
    return _doubled_quotes(text, tokens)


def _doubled_quotes(text: str, tokens: list[Token]) -> list[Token]:
    """Spark reads a quote doubled inside a string literal as that quote (``'O''Brien'`` is
    O'Brien); sqlglot tokenizes two literals there, which its parser joins with CONCAT ('OBrien').
    Literals with nothing between them are one literal again (``'a' 'b'``, with a space, stays a
    concatenation, as in Spark)."""
    out: list[Token] = []
    for t in tokens:
        prev = out[-1] if out else None
        if prev is not None and t.token_type is TokenType.STRING is prev.token_type and t.start == prev.end + 1:
            out[-1] = Token(
                TokenType.STRING, prev.text + text[prev.end] + t.text, line=t.line, col=t.col,
                start=prev.start, end=t.end, comments=[*prev.comments, *t.comments],
            )  # fmt: skip
        else:
            out.append(t)
    return out


def is_plain_name(text: str) -> bool:
    """Whether ``text`` is one name in Spark's dialect (no keyword, no function without
    parentheses such as ``current_date``)."""
    try:
        tokens = sqlglot.tokenize(text, read="spark")
    except TokenError:
        return False
    return len(tokens) == 1 and tokens[0].token_type is TokenType.VAR


def nesting(tokens: list[Token]) -> int:
    """Parenthesis depth plus the longest run of prefix operators (NOT, unary minus): what
    makes sqlglot's recursive-descent parser recurse."""
    depth = best = run = 0
    for t in tokens:
        if t.token_type is TokenType.L_PAREN:
            depth += 1
        elif t.token_type is TokenType.R_PAREN:
            depth -= 1
        run = run + 1 if t.token_type in _PREFIX else 0
        best = max(best, depth + run)
    return best


#: sqlglot's node classes as the operator a user typed (for "expected a value after '='").
_OPERATORS = {
    "EQ": "=", "NEQ": "<>", "GT": ">", "GTE": ">=", "LT": "<", "LTE": "<=", "NullSafeEQ": "<=>",
    "And": "AND", "Or": "OR", "Not": "NOT", "Is": "IS", "Like": "LIKE", "Add": "+", "Sub": "-",
    "Mul": "*", "Div": "/", "Mod": "%",
}
_MISSING = re.compile(r"Required keyword: '(\w+)' missing for <class '[\w.]*?(\w+)'>")


def _offset(text: str, line: int, col: int) -> int:
    """sqlglot's (1-based line, column of the token's last character) as an offset in ``text``."""
    lines = text.split("\n")
    line = min(max(line, 1), len(lines))
    return min(sum(len(x) + 1 for x in lines[: line - 1]) + max(col, 0), len(text))


def _located(what: str, text: str, position: int) -> InvalidPredicateError:
    """``what`` at ``position`` (0-based offset), worded with 1-based line and column."""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    where = f"at column {column}" if "\n" not in text else f"at line {line}, column {column}"
    return InvalidPredicateError(f"{what} {where}", details={"line": line, "column": column}, position=position)


def _parse_error(text: str, e: ParseError) -> InvalidPredicateError:
    """sqlglot's first error in words, at the character where it stopped: ``expected a value
    after '=' at column 27`` (``position`` and ``details.position``: 0-based offset)."""
    if not e.errors:
        return InvalidPredicateError(f"cannot parse SQL predicate: {e}")
    first = e.errors[0]
    highlight = first.get("highlight") or ""
    end = _offset(text, int(first.get("line") or 1), int(first.get("col") or 0))
    start = max(0, end - len(highlight))
    description = str(first.get("description") or "")
    at_end = not text[end:].strip()
    missing = _MISSING.fullmatch(description)
    if missing:
        _, node = missing.groups()
        op = _OPERATORS.get(node)
        if node == "Between":
            what, position = "expected AND and an upper bound after BETWEEN", start if not at_end else len(text)
        elif op is not None and highlight.upper() == op:  # the operator is the last token read
            what, position = f"expected a value after '{op}'", len(text) if at_end else end
        elif op is not None:
            what, position = f"expected a value after '{op}', found '{highlight}'", start
        else:
            # sqlglot's own node names ("incomplete Parameter (no this)") mean nothing to a user.
            what, position = (f"unexpected '{highlight}'", start) if highlight.strip() else ("incomplete expression", start)
    elif description.startswith("Expecting "):
        expected = description.removeprefix("Expecting ").strip()
        what, position = (f"expected '{expected}'", len(text)) if at_end else (f"expected '{expected}' before '{highlight}'", start)
    elif description.startswith("Invalid expression / Unexpected token"):
        what, position = f"unexpected '{highlight}'", start
    else:
        what, position = description, start
    return _located(what, text, position)


def _token_error(text: str, e: TokenError) -> InvalidPredicateError:
    """sqlglot names no position for a tokenizing error; an unterminated quote is the usual one."""
    quote_at = _unclosed_quote(text)
    if quote_at is None:
        return InvalidPredicateError(f"cannot tokenize SQL predicate: {e}")
    return _located("unterminated string", text, quote_at)


def _unclosed_quote(text: str) -> int | None:
    """The offset of a quote (' " `) that is never closed (doubled quotes and backslash escapes
    inside a literal taken as Spark does), or None."""
    i, n = 0, len(text)
    while i < n:
        q = text[i]
        if q in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and q != "`":
                    j += 2
                    continue
                if text[j] == q:
                    if j + 1 < n and text[j + 1] == q:
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                return i
            i = j + 1
        else:
            i += 1
    return None


def _statements(text: str, tokens: dict[str, list[Token]]) -> list[exp.Expr | None]:
    def parse(dialect: str) -> list[exp.Expr | None]:
        if dialect not in tokens:
            tokens[dialect] = tokenize(text, dialect)
        return parse_tokens(dialect, tokens[dialect], text)

    try:
        return parse("spark")
    except ParseError as e:
        if ":" not in text:
            raise _parse_error(text, e) from None
        try:
            # The `v:a.b::type` shorthand exists only in sqlglot's databricks dialect; its error
            # is the one to show (Spark's stops at the first `:`).
            return parse("databricks")
        except ParseError as e2:
            raise _parse_error(text, e2) from None


def parse_predicate(text: str, tokens: dict[str, list[Token]] | None = None) -> exp.Expression:
    """The sqlglot tree of one predicate, from ``tokens`` (by dialect) where given. RecursionError
    passes through: the caller, which sized the recursion headroom, reports it as a limit."""
    try:
        # Every concrete sqlglot node class is an Expression (Expr is their abstract base).
        statements = [s for s in _statements(text, {} if tokens is None else tokens) if isinstance(s, exp.Expression)]
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
            trees = parse_tokens(dialect, tokenize(text, dialect), text)
        except (SqlglotError, InvalidPredicateError, RecursionError):
            continue
        if len(trees) == 1 and isinstance(trees[0], exp.Expression):
            break
    else:
        return None
    out: list[exp.Expr] = []
    stack: list[exp.Expr] = [trees[0]]
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
