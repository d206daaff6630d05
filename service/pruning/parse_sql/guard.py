"""The size and complexity checks around sqlglot: a text too long, too deeply nested (measured
on its tokens, before sqlglot's recursive-descent parser can recurse into it) or nested past the
recursion headroom raises LimitExceededError rather than exhausting the stack or the CPU.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.errors import InvalidPredicateError, LimitExceededError
from service.pruning.parse_sql.recursion import recursion_headroom
from service.pruning.parse_sql.syntax import nesting, parse_predicate

if TYPE_CHECKING:
    from sqlglot import exp

DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_IN_LIST = 10_000
DEFAULT_MAX_LENGTH = 1_000_000

# Slack over max_depth for parentheses that are not boolean nesting (function calls, casts).
_PAREN_SLACK = 16
_FRAMES_PER_LEVEL = 25


def guarded_parse(text: str, *, max_depth: int, max_length: int) -> exp.Expression:
    """sqlglot's tree of ``text`` once it passed the checks (see the module docstring)."""
    if not isinstance(text, str):
        raise InvalidPredicateError(f"a SQL predicate must be a string, not {type(text).__name__}")
    if len(text) > max_length:
        raise LimitExceededError(
            f"SQL predicate is {len(text)} characters; the limit is {max_length}",
            details={"limit": max_length},
        )
    if not text.strip():
        raise InvalidPredicateError("empty SQL predicate")
    depth = nesting(text)
    if depth > max_depth + _PAREN_SLACK:
        raise LimitExceededError(
            f"SQL predicate nested {depth} levels deep; the limit is {max_depth}",
            details={"limit": max_depth},
        )
    try:
        with recursion_headroom(_FRAMES_PER_LEVEL * (depth + 10)):
            return parse_predicate(text)
    except RecursionError:
        raise LimitExceededError("SQL predicate nested too deeply", details={"limit": max_depth}) from None
