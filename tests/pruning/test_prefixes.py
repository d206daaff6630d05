"""Prefix ranges: LIKE 'abc%' and startswith(s, 'abc') imply s >= 'abc' AND s < successor('abc').

The pure functions against Spark's LIKE rules, the conversion with a schema (the LIKE is kept as
an unknown conjunct, so NOT LIKE never prunes), and a property: every string that matches the
pattern (by a regex built the way Spark builds it) lies in the range.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.pruning.conditions import Constant, compile_expression
from service.pruning.evaluator import evaluate, stats_by_path
from service.pruning.expressions import And, Op, Unknown
from service.pruning.parse_sql import parse_sql, to_sql
from service.pruning.prefixes import like_prefix, prefix_successor
from service.stats.model import ColumnStats
from service.values import ShreddedType
from tests.pruning.reference import stats_row
from tests.pruning.test_columns import SCHEMA

VARCHAR = ShreddedType.parse("varchar")


def sql(text: str) -> Any:
    return parse_sql(text, schema=SCHEMA)


@pytest.mark.parametrize(
    ("pattern", "escape", "prefix"),
    [
        ("pytest-%", "\\", "pytest-"),
        ("abc", "\\", "abc"),
        ("ab_c%", "\\", "ab"),
        ("%abc", "\\", ""),
        ("a\\_b%", "\\", "a_b"),
        ("a\\%b%", "\\", "a%b"),
        ("a\\\\b%", "\\", "a\\b"),
        ("a!_b%", "!", "a_b"),
        ("a\\_b%", "!", "a\\"),  # with another escape, the backslash is a plain character
        ("a\\xb%", "\\", None),  # Spark: the escape character may not precede 'x'
        ("ab\\", "\\", None),  # Spark: a pattern may not end with the escape character
        ("ab%\\q", "\\", None),  # refused after the wildcard too
        ("é😀%", "\\", "é😀"),
    ],
)
def test_like_prefix_follows_spark(pattern: str, escape: str, prefix: str | None) -> None:
    assert like_prefix(pattern, escape) == prefix


@pytest.mark.parametrize(
    ("prefix", "successor"),
    [
        ("abc", "abd"),
        ("pytest-", "pytest."),
        ("a\U0010ffff", "b"),
        ("\U0010ffff\U0010ffff", None),
        ("", None),
        ("a\ud7ff", "a\ue000"),  # the surrogates are no characters: skipped
        ("z\x7f", "z\x80"),
    ],
)
def test_prefix_successor(prefix: str, successor: str | None) -> None:
    assert prefix_successor(prefix) == successor


def _spark_like(pattern: str, escape: str) -> re.Pattern[str]:
    """Spark's StringUtils.escapeLikeRegex, for patterns like_prefix accepts."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == escape:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append("." if c == "_" else ".*" if c == "%" else re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


ALPHABET = "ab_%\\!é\U0010ffff\ud7ff\ue000z"


@settings(max_examples=400, deadline=None)
@given(st.text(ALPHABET, max_size=6), st.sampled_from(["\\", "!"]), st.text(ALPHABET.replace("\\", ""), max_size=6))
def test_every_match_lies_in_the_prefix_range(pattern: str, escape: str, s: str) -> None:
    prefix = like_prefix(pattern, escape)
    if prefix is None or not prefix:
        return
    candidates = [s, prefix + s, prefix, s + prefix]
    rx = _spark_like(pattern, escape)
    hi = prefix_successor(prefix)
    for c in candidates:
        if rx.fullmatch(c):
            assert c >= prefix and (hi is None or c < hi), (pattern, c)
        if c.startswith(prefix):
            assert c >= prefix and (hi is None or c < hi), (prefix, c)


def test_like_on_a_string_column_implies_the_range() -> None:
    e = sql("Name LIKE 'pytest-%'")
    assert isinstance(e, And)
    ops = [(c.op, c.literal) for c in e.children if not isinstance(c, Unknown)]
    assert ops == [(Op.GT_EQ, "pytest-"), (Op.LT, "pytest.")]
    assert any(isinstance(c, Unknown) and c.text == "Name LIKE 'pytest-%'" for c in e.children)
    assert sql(to_sql(e)) == e  # renders back to the same tree


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("startswith(Name, 'boto3')", None),
        ("Name LIKE 'boto3%'", None),
        ("Name LIKE 'boto3_x%'", None),
        ("Name LIKE 'boto3'", None),
        ("variant_get(v, '$.name', 'string') LIKE 'boto3%'", '"name"'),
        ("startswith(v:name::string, 'boto3')", '"name"'),
    ],
)
def test_prefix_predicates_prune_on_bounds(text: str, path: str | None) -> None:
    e = sql(text)

    def row(lo: str, hi: str) -> Any:
        if path is None:
            return stats_by_path([ColumnStats("Name", VARCHAR, 10, 5, 0, lo, hi, None)])
        return stats_by_path([stats_row(path, "varchar", 5, 0, lo, hi)])

    assert not evaluate(e, row("boto4", "zz")).might_match
    assert not evaluate(e, row("a", "boto2zzz")).might_match
    assert evaluate(e, row("a", "boto3")).might_match
    assert evaluate(e, row("boto3-x", "boto3-y")).might_match


def test_an_escaped_wildcard_is_part_of_the_prefix() -> None:
    e = sql("Name LIKE 'boto3!%%' ESCAPE '!'")
    assert [(c.op, c.literal) for c in e.children if not isinstance(c, Unknown)] == [
        (Op.GT_EQ, "boto3%"),
        (Op.LT, "boto3&"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "NOT (Name LIKE 'pytest-%')",
        # sqlglot reads these as a Like marked negated, not as a NOT around it (a false prune once:
        # the range of the LIKE was implied by its negation).
        "Name NOT LIKE 'pytest-%'",
        "Name NOT LIKE 'pytest!_%' ESCAPE '!'",
        "variant_get(v, '$.name', 'string') NOT LIKE 'pytest-%'",
        "NOT startswith(Name, 'pytest-')",
    ],
)
def test_not_like_never_prunes(text: str) -> None:
    c = compile_expression(sql(text))
    assert isinstance(c, Constant) and c.might_match, text


def test_like_without_a_prefix_or_on_a_non_string_is_unknown() -> None:
    for text in ("Name LIKE '%x'", "Name LIKE '_x%'", "id LIKE '1%'", "startswith(Name, '')"):
        assert isinstance(sql(text), Unknown), text
