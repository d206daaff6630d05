"""The size and complexity checks around sqlglot: a text too long, with too many terms (counted
on the raw text), too deeply nested (measured on its tokens, before sqlglot's recursive-descent
parser can recurse into it) or nested past the recursion headroom raises LimitExceededError
rather than exhausting the stack or the CPU.

The length, term and arithmetic-operator checks run first and cost microseconds for an ordinary
predicate: sqlglot needs ~3 ms per KiB of text (more for arithmetic chains), so a megabyte of OR-ed
comparisons, or a chain of thousands of ``+``, is refused before any of it is tokenized.
"""

from __future__ import annotations

import functools
import re
from itertools import accumulate
from typing import TYPE_CHECKING

from service import limits
from service.errors import InvalidPredicateError, LimitExceededError
from service.pruning.parse_sql.recursion import recursion_headroom
from service.pruning.parse_sql.syntax import first_dialect, nesting, parse_predicate, tokenize

if TYPE_CHECKING:
    from sqlglot import exp

DEFAULT_MAX_DEPTH = limits.MAX_PREDICATE_DEPTH
DEFAULT_MAX_IN_LIST = limits.MAX_IN_LIST
DEFAULT_MAX_LENGTH = limits.MAX_PREDICATE_LENGTH
DEFAULT_MAX_TERMS = limits.MAX_PREDICATE_TERMS
DEFAULT_MAX_PATH_DEPTH = limits.MAX_PATH_DEPTH

# Slack over max_depth for parentheses that are not boolean nesting (function calls, casts).
_PAREN_SLACK = 16
_FRAMES_PER_LEVEL = 25

# The connectives AND/OR, skipping what may hold the words without being SQL. Each skipped
# form always matches (an unterminated one runs to the end of the text, which the tokenizer then
# refuses), so the scan is linear in the text whatever its quotes.
_CONNECTIVES = re.compile(
    r"""
      \b[rR]'[^']*'? | \b[rR]"[^"]*"?           # raw strings: no escapes
    | '(?:[^'\\]|\\.?)*'? | "(?:[^"\\]|\\.?)*"?  # strings, with Spark's backslash escapes
    | `[^`]*`?                                  # quoted identifiers
    | --[^\n]* | /\*.*?(?:\*/|\Z)               # comments
    | \b(and|or)\b
    """,
    re.ASCII | re.IGNORECASE | re.DOTALL | re.VERBOSE,
)


# Binary arithmetic operators (after an operand), skipping the same forms and numbers (an
# exponent's sign is no operator; neither is a unary minus). Linear like the scan above.
_OPERATORS = re.compile(
    r"""
      \b[rR]'[^']*'? | \b[rR]"[^"]*"?
    | '(?:[^'\\]|\\.?)*'? | "(?:[^"\\]|\\.?)*"?
    | `[^`]*`?
    | --[^\n]* | /\*.*?(?:\*/|\Z)
    | \d+(?:\.\d*)?(?:[eE][-+]?\d+)?
    | (?<=[\w)\]'"`])\s*(?!--|/\*)([-+*/%])
    """,
    re.ASCII | re.DOTALL | re.VERBOSE,
)


def too_many_operators(text: str, limit: int) -> bool:
    """Whether ``text`` holds more than ``limit`` binary arithmetic operators. Pruning uses no
    arithmetic (such a term never prunes), and a chain of them (``1+1+...+1``) is the costliest
    text to parse per byte: refused before sqlglot sees it."""
    if sum(text.count(c) for c in "+-*/%") <= limit:
        return False
    return _more_than(_OPERATORS, text, limit)


def _more_than(pattern: re.Pattern[str], text: str, limit: int) -> bool:
    """Whether more than ``limit`` matches of ``pattern`` in ``text`` capture a group (the others
    are what it skips); the scan stops at the first beyond the limit."""
    n = 0
    for m in pattern.finditer(text):
        if m.lastindex:
            n += 1
            if n > limit:
                return True
    return False


# What may hold parentheses without nesting anything: strings, quoted identifiers, comments.
_NOT_NESTING = re.compile(
    r"""\b[rR]'[^']*'? | \b[rR]"[^"]*"? | '(?:[^'\\]|\\.?)*'? | "(?:[^"\\]|\\.?)*"? | `[^`]*`?
        | --[^\n]* | /\*.*?(?:\*/|\Z) | [^()'"`rR/-]+""",
    re.ASCII | re.DOTALL | re.VERBOSE,
)
_STEP = {"(": 1, ")": -1}


def paren_depth(text: str) -> int:
    """The deepest parenthesis nesting of ``text`` outside strings and comments, from the raw text
    (a lower bound of :func:`nesting`, which tokenizes: ~0.5 ms per KiB, so a text of thousands of
    parentheses is refused on this one first)."""
    parens = [c for c in _NOT_NESTING.sub("", text) if c in "()"]
    return max(accumulate(map(_STEP.__getitem__, parens)), default=0)


# What may hold SQL words and parentheses without being SQL: raw strings (no escapes), strings
# with Spark's backslash escapes, quoted identifiers, comments. Each always matches (an
# unterminated one runs to the end of the text, which the tokenizer then refuses).
_SKIPPED = r"""\b[rR]'[^']*'? | \b[rR]"[^"]*"? | '(?:[^'\\]|\\.?)*'? | "(?:[^"\\]|\\.?)*"? | `[^`]*`?
    | --[^\n]* | /\*.*?(?:\*/|\Z)"""

# Runs of NOT outside those forms.
_NOTS = re.compile(_SKIPPED + r" | ((?:\bnot\b\s*)+)", re.ASCII | re.IGNORECASE | re.DOTALL | re.VERBOSE)


def not_run(text: str) -> int:
    """The longest run of consecutive NOTs in ``text`` outside strings and comments: a lower bound
    of :func:`nesting` (each NOT of a run is a prefix operator the parser recurses into), so a text
    of thousands of NOTs is refused without being tokenized. 0 when the text has fewer NOTs in all
    than the slack allowed over the depth limit."""
    if text.lower().count("not") <= _PAREN_SLACK:
        return 0
    runs = (m.group(1).lower().count("not") for m in _NOTS.finditer(text) if m.group(1))
    return max(runs, default=0)


# CASE branches and variant_get calls outside those forms.
_BRANCHES_AND_CALLS = re.compile(
    _SKIPPED + r" | (\bwhen\b | \b(?:try_)?variant_get\s*\()", re.ASCII | re.IGNORECASE | re.DOTALL | re.VERBOSE
)


def too_many_branches(text: str, limit: int) -> bool:
    """Whether ``text`` holds more than ``limit`` CASE branches and ``variant_get`` calls together:
    no AND/OR joins them, yet each is a sub-expression the parser builds and the converter walks (a
    256 KiB CASE chain cost 2.3 s of CPU). A predicate of the terms limit's comparisons, each on
    one term, or on an ``exists`` of two, stays within twice that limit."""
    low = text.lower()
    if low.count("when") + low.count("variant_get") <= limit:
        return False
    return _more_than(_BRANCHES_AND_CALLS, text, limit)


# Chains of path steps (``:key``, ``.key``, ``[i]``) outside those forms and numbers: a Variant
# shorthand path (``v:a.b[0]``) or a column reference (``s.a.b``). Not ASCII-only: a key may be any
# word. The ``::`` of a cast is no step. Linear like the scans above (each step opens with its own
# character).
_ONE_STEP = r"(?:(?<!:):(?!:)|\.)\s*(?:(?!\d)\w+|`[^`]*`?)|\[[^\[\]]*\]"
_STEPS = re.compile(_ONE_STEP)


@functools.lru_cache(maxsize=8)
def _path_chains(depth: int) -> re.Pattern[str]:
    """Chains of up to ``depth`` + 1 steps: a longer chain is refused as soon as that is read."""
    chain = r"((?:\s*(?:" + _ONE_STEP + r")){1," + str(depth + 1) + "})"
    return re.compile(_SKIPPED + r" | \b\d+(?:\.\d*)?(?:[eE][-+]?\d+)? | " + chain, re.IGNORECASE | re.DOTALL | re.VERBOSE)


def path_steps(text: str, depth: int, limit: int) -> tuple[int, int]:
    """The steps of ``text``'s longest path and of all its paths together, counted on the raw
    text; the scan stops once the longest passes ``depth`` or the total passes ``limit`` (0, 0
    when no more than ``depth`` of the characters a step opens with appear at all). Each step is a
    node sqlglot builds and the converter walks (a 256 KiB ``v:a.b.…`` path cost 1.3 s of CPU,
    ``v:a[0][0]…`` 2.9 s), and a column reference is resolved one recursion per step."""
    if text.count(".") + text.count(":") + text.count("[") <= depth:
        return 0, 0
    longest = total = 0
    for m in _path_chains(depth).finditer(text):
        if m.group(1):
            steps = len(_STEPS.findall(m.group(1)))
            longest, total = max(longest, steps), total + steps
            if longest > depth or total > limit:
                break
    return longest, total


# Parentheses, commas and the IN that opens a list, skipping the same forms as above; a run of
# commas between numbers (``, 9000001, 9000002``) is one match (a list of 10,000 ids was 10,000).
_LISTS = re.compile(
    _SKIPPED + r" | (\bin\s*\() | ([()]) | ((?:,[ \t\r\n0-9.]*)+)", re.ASCII | re.IGNORECASE | re.DOTALL | re.VERBOSE
)


def longest_in_list(text: str, limit: int) -> int:
    """More than ``limit`` when an ``IN (...)`` list of ``text`` holds more than ``limit`` values
    (counted by its top-level commas; the scan stops there), else at most ``limit`` (0 when no
    list can pass it): what the parser would refuse after parsing it all, refused here first."""
    if text.count(",") < limit:
        return 0  # fewer commas anywhere than the limit: no list can pass it
    stack: list[list[int]] = []  # per open parenthesis: [is an IN list, values]
    best = 0
    for m in _LISTS.finditer(text):
        if m.group(1):
            stack.append([1, 1])
        elif m.group(2) == "(":
            stack.append([0, 1])
        elif m.group(2) == ")":
            if stack:
                stack.pop()
        elif m.group(3) and stack and stack[-1][0]:
            stack[-1][1] += m.group(3).count(",")
            best = max(best, stack[-1][1])
            if best > limit:
                return limit + 1  # what counting one comma at a time stops at
    return best


def too_many_terms(text: str, limit: int) -> bool:
    """Whether ``text`` joins more than ``limit`` terms with AND/OR (connectives + 1; the AND of
    a BETWEEN counts, as BETWEEN becomes two comparisons)."""
    low = text.lower()
    if low.count("and") + low.count("or") < limit:
        # Fewer of the words anywhere than the limit allows: the exact scan cannot say more.
        return False
    return _more_than(_CONNECTIVES, text, limit - 1)  # terms are the connectives + 1


def _check_paths(text: str, max_path_depth: int, max_steps: int) -> None:
    """Refuse a path of more than ``max_path_depth`` steps, or more than ``max_steps`` in all."""
    longest, total = path_steps(text, max_path_depth, max_steps)
    if total > max_steps:
        raise LimitExceededError(
            f"SQL predicate has more than {max_steps} path steps in all (four times the terms limit)",
            details={"limit": max_steps},
        )
    if longest > max_path_depth:
        raise LimitExceededError(
            f"SQL predicate has a path of {longest} steps; the limit is {max_path_depth}",
            details={"limit": max_path_depth},
        )


def check_text(text: str, *, max_length: int, max_terms: int, max_in_list: int, max_path_depth: int) -> None:
    """The checks on the raw text (type, length, emptiness, terms, operators, branches, paths, IN
    lists), each a LimitExceededError or InvalidPredicateError, before anything parses it."""
    if not isinstance(text, str):
        raise InvalidPredicateError(f"a SQL predicate must be a string, not {type(text).__name__}")
    if len(text) > max_length:
        raise LimitExceededError(
            f"SQL predicate is {len(text)} characters; the limit is {max_length}",
            details={"limit": max_length},
        )
    if not text.strip():
        raise InvalidPredicateError("empty SQL predicate")
    if too_many_terms(text, max_terms):
        raise LimitExceededError(
            f"SQL predicate has more than {max_terms} terms joined by AND/OR (the limit); "
            "use IN lists or split it",
            details={"limit": max_terms},
        )
    if too_many_operators(text, max_terms):
        raise LimitExceededError(
            f"SQL predicate has more than {max_terms} arithmetic operators (the terms limit); "
            "pruning uses no arithmetic",
            details={"limit": max_terms},
        )
    if too_many_branches(text, 2 * max_terms):
        raise LimitExceededError(
            f"SQL predicate has more than {2 * max_terms} CASE branches and variant_get calls "
            "(twice the terms limit)",
            details={"limit": 2 * max_terms},
        )
    _check_paths(text, max_path_depth, max(4 * max_terms, max_path_depth))
    if (n := longest_in_list(text, max_in_list)) > max_in_list:
        raise LimitExceededError(
            f"more than {n - 1} values in an IN list; the limit is {max_in_list}",
            details={"limit": max_in_list},
        )


def checked_parse(text: str, *, max_depth: int) -> exp.Expression:
    """sqlglot's tree of a text :func:`check_text` passed, its nesting measured first."""
    depth = max(paren_depth(text), not_run(text))
    tokens = {}
    if depth <= max_depth + _PAREN_SLACK:
        dialect = first_dialect(text)
        tokens[dialect] = tokenize(text, dialect)
        depth = nesting(tokens[dialect])
    if depth > max_depth + _PAREN_SLACK:
        raise LimitExceededError(
            f"SQL predicate nested {depth} levels deep; the limit is {max_depth}",
            details={"limit": max_depth},
        )
    try:
        with recursion_headroom(_FRAMES_PER_LEVEL * (depth + 10)):
            return parse_predicate(text, tokens)
    except RecursionError:
        raise LimitExceededError("SQL predicate nested too deeply", details={"limit": max_depth}) from None
