"""Predicate parsing is linear in the text for every grammar shape of ``bench/parse_cost.py``,
shown by counting its work (Python and C function calls, ``sys.setprofile``), never by timing it:
four times the text costs at most about four times the calls, a refused text costs a small constant
(the limits fire on the raw text), and the calls per KiB stay under the bound README documents.
The IN list path of :mod:`service.pruning.parse_sql.lists` builds the trees sqlglot builds.
"""

from __future__ import annotations

import pytest
import sqlglot
from sqlglot import exp

from bench.parse_cost import SCHEMA, SHAPES, attempt, parse_calls
from service.errors import LimitExceededError
from service.pruning.parse_sql import parse_sql
from service.pruning.parse_sql.guard import not_run, path_steps, too_many_branches
from service.pruning.parse_sql.lists import literal_list_end, parse_tokens
from service.pruning.parse_sql.syntax import nesting, tokenize

#: Calls per KiB of text (at 8 KiB, or the largest text the limits accept) that no shape exceeds;
#: README's limits table gives the same figure. Measured: CASE chains ~35,000, the costliest.
MAX_CALLS_PER_KIB = 50_000
#: Calls a refusal by the raw-text checks may take, whatever the text's size.
MAX_REFUSAL_CALLS = 200


def _tree_facts(tree: exp.Expr) -> list[tuple[str, object, dict[str, object] | None, list[str] | None]]:
    return [(type(n).__name__, n.args.get("this") if n.is_leaf() else None, n.meta or None, n.comments) for n in tree.walk()]


@pytest.mark.parametrize(
    "text",
    [
        "x IN (1, 2, 3)",
        "x IN (1)",
        "x NOT IN ('a', 'b', 'd\\'e', \"f\")",  # 'b''c': Spark's doubled quote, not sqlglot's CONCAT (test_syntax_errors)
        "x IN ('a' 'b', 'c')",  # adjacent strings: sqlglot's path (a concatenation)
        "x IN (1, -2, 3)",  # a sign: sqlglot's path
        "x IN (1.5, 2e3, .5, 12BD, 3L)",
        "x IN (1, /* c */ 2) AND y IN (3 -- d\n, 4)",
        "x IN (1, 2,)",
        "x IN (1, 2 3)",
        "x IN (CAST('0.1' AS FLOAT), 2) OR y IN ((1), 2)",
        "variant_get(v, '$.a', 'bigint') IN (" + ", ".join(str(i) for i in range(500)) + ") OR z IN ('q', 'r')",
        "x IN (SELECT 1) OR x IN (1, 2)",
    ],
)
def test_literal_lists_parse_to_sqlglots_trees(text: str) -> None:
    try:
        expected = sqlglot.parse(text, read="spark")
    except sqlglot.errors.ParseError as e:
        with pytest.raises(sqlglot.errors.ParseError) as got:
            parse_tokens("spark", tokenize(text, "spark"), text)
        assert str(got.value) == str(e)
        return
    got = parse_tokens("spark", tokenize(text, "spark"), text)
    assert got == expected
    assert [_tree_facts(t) for t in got if t] == [_tree_facts(t) for t in expected if t]


def test_literal_list_end_takes_only_lone_literals() -> None:
    def end(text: str) -> int:
        return literal_list_end(tokenize(text, "spark"), 0)

    assert end("(1, 'a', 2.5)") == 6
    assert end("(1)") == 2
    for text in ("(1, -2)", "(1, f(2))", "(1 /* c */, 2)", "('a' 'b')", "(1, 2", "(1,)", "()", "1, 2)"):
        assert end(text) == -1, text


def test_shorthand_lists_parse_to_sqlglots_trees() -> None:
    text = "v:a.b::int IN (1, 2, 3) AND v:c::string IN ('x', 'y')"
    assert parse_tokens("databricks", tokenize(text, "databricks"), text) == sqlglot.parse(text, read="databricks")


def test_runs_of_not_are_refused_before_tokenizing() -> None:
    many = "not " * 30
    assert not_run(f"NOT NOT x = 1 AND '{many}' = s AND `{many}` = t -- {many}\n AND NOT y = 2") == 2
    assert not_run("not " * 20 + "x") == 20
    assert not_run("NOT NOT x") == 0  # fewer NOTs in all than the slack over the depth limit
    text = "NOT " * 5000 + "variant_get(v, '$.a', 'bigint') = 1"
    assert not_run(text) == 5000
    with pytest.raises(LimitExceededError):
        parse_sql(text)
    assert parse_calls(text) < MAX_REFUSAL_CALLS
    # Never more than the token measure: a lower bound cannot refuse what the parser accepts.
    for ok in ("NOT (NOT x = 1)", "x IS NOT NULL AND NOT y IN (1)", "not_a = 1 AND `not not` = 2"):
        assert not_run(ok) <= nesting(tokenize(ok, "spark"))


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_parse_work_is_linear_in_the_text(shape: str) -> None:
    make = SHAPES[shape]
    small, large = make(2048), make(8192)
    calls_small, calls_large = parse_calls(small), parse_calls(large)
    scale = len(large) / len(small)
    assert calls_large <= 1.15 * scale * calls_small + 2000, (calls_small, calls_large)
    if attempt(large) != "ok":
        assert attempt(large).startswith("limit_exceeded"), attempt(large)
        assert calls_large < MAX_REFUSAL_CALLS + 0.01 * len(large)
    assert calls_large / (len(large) / 1024) <= MAX_CALLS_PER_KIB


def test_the_largest_accepted_in_list_stays_linear() -> None:
    # 10,000 values (the limit) cost no more per KiB than 1,000.
    few, most = SHAPES["in"](12 * 1000), SHAPES["in"](12 * 10_000)
    assert attempt(most) == "ok"
    per_kib = [parse_calls(t) / (len(t) / 1024) for t in (few, most)]
    assert per_kib[1] <= 1.1 * per_kib[0] and per_kib[1] < 8_000, per_kib


def test_case_branches_and_variant_get_calls_are_bounded_before_parsing() -> None:
    term = "variant_get(v, '$.a', 'bigint')"
    # 400 comparisons on an exists() of two calls each: within twice the terms limit.
    ok = " OR ".join(f"exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'int') = {i})" for i in range(400))
    assert not too_many_branches(ok, 800)
    parse_sql(ok)
    assert not too_many_branches("s = 'when when' AND `variant_get(` = 1 -- when\n", 0)
    for text in (
        "CASE " + " ".join(f"WHEN {term} = {i} THEN {i}" for i in range(801)) + " END = 1",
        "coalesce(" + ", ".join([term] * 801) + ") = 1",
    ):
        assert too_many_branches(text, 800)
        with pytest.raises(LimitExceededError):
            parse_sql(text)
        assert parse_calls(text) < MAX_REFUSAL_CALLS


def test_path_steps_are_counted_on_the_raw_text() -> None:
    # The depth given is the longest path's, so that the scan does not stop early.
    assert path_steps("v:a.b::int = 1.5 AND x = .5 AND s.t = 'a.b.c' AND `a.b` = 1 -- .x.y\n", 2, 99) == (2, 3)
    assert path_steps("v:['a b'].c[0]::int = 1 OR variant_get(v, '$.a.b.c.d', 'int') = 2", 3, 99) == (3, 3)
    assert path_steps("v:café.é.é = 1 AND y = 1.5", 3, 99) == (3, 3)  # any word is a key, not only ASCII
    assert path_steps("k1.k2.k3 = 1 AND x IN (1.5, 2.5, 3e5)", 2, 99) == (2, 2)  # digits in keys are no numbers
    assert path_steps("v:" + ".".join(["a"] * 64) + " = 1", 64, 1600) == (0, 0)  # too few dots to pass 64
    assert path_steps("v:" + ".".join(["a"] * 1000) + " = 1", 64, 1600) == (65, 65)  # stops past the limit


def _keys(n: int) -> str:
    return ".".join(f"k{i}" for i in range(n))


@pytest.mark.parametrize(
    ("deep", "within"),
    [
        (f"v:{_keys(65)}::int = 1", f"v:{_keys(64)}::int = 1"),
        ("v:a" + "[0]" * 64 + "::int = 1", "v:a" + "[0]" * 63 + "::int = 1"),
        # A column reference (resolved one recursion per step); its parent is no struct: refused after parsing.
        (f"id.{_keys(65)} = 1", None),
        (f"id.{_keys(40_000)} = 1", None),  # 256 KiB: a RecursionError before the limit
    ],
    ids=["shorthand", "subscripts", "struct", "struct-256k"],
)
def test_a_path_deeper_than_the_limit_is_refused_before_parsing(deep: str, within: str | None) -> None:
    with pytest.raises(LimitExceededError, match="a path of 65 steps; the limit is 64") as e:
        parse_sql(deep, schema=SCHEMA, max_length=len(deep))
    assert e.value.details["limit"] == 64
    assert parse_calls(deep) < MAX_REFUSAL_CALLS
    if within is not None:
        assert attempt(within) == "ok"


def test_path_steps_in_all_are_bounded_by_four_times_the_terms_limit() -> None:
    term = "v:" + ".".join(f"k{j}" for j in range(50)) + "::int = {}"
    within = " OR ".join(term.format(i) for i in range(32))  # 1,600 steps
    beyond = " OR ".join(term.format(i) for i in range(33))
    assert attempt(within) == "ok"
    with pytest.raises(LimitExceededError, match="more than 1600 path steps") as e:
        parse_sql(beyond)
    assert e.value.details["limit"] == 1600
    assert parse_calls(beyond) < MAX_REFUSAL_CALLS + 0.01 * len(beyond)  # a few calls per path
    parse_sql(beyond, max_terms=10_000)  # the total follows the terms setting
