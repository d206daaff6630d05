"""Syntax errors of SQL predicates in words, at a position: ``expected a value after '=' at
column 35`` with ``InvalidPredicateError.position`` (0-based) for a caret under the text."""

from __future__ import annotations

import pytest

from service.errors import InvalidPredicateError
from service.pruning.parse_sql import parse_sql

ID = "variant_get(v, '$.id', 'bigint')"


@pytest.mark.parametrize(
    ("text", "message", "at"),
    [
        (f"{ID} =", "expected a value after '=' at column 35", len(ID) + 2),
        (f"{ID} =   ", "expected a value after '=' at column 38", len(ID) + 5),
        (f"{ID} = AND x", "expected a value after '=', found 'AND' at column 36", len(ID) + 3),
        (f"{ID} > 5 AND", "expected a value after 'AND' at column 41", len(ID) + 8),
        (f"{ID} <= ", "expected a value after '<=' at column 37", len(ID) + 4),
        (f"({ID} = 1", "expected ')' at column 38", len(ID) + 5),
        (f"{ID} IN (1, 2", "expected ')' at column 42", len(ID) + 9),
        (f"{ID} = 1)", "unexpected ')' at column 37", len(ID) + 4),
        (f"{ID} BETWEEN 1", "expected AND and an upper bound after BETWEEN at column 43", len(ID) + 10),
        (f"{ID} = 'abc", "unterminated string at column 36", len(ID) + 3),
        ("v:id::bigint = ", "expected a value after '=' at column 16", 15),
        ("v:id::bigint = 'x:y", "unterminated string at column 16", 15),
        (f"{ID} = 5 5", "unexpected '5' at column 38", len(ID) + 5),
        # A parameter marker: sqlglot's node name ("incomplete Parameter (no this)") is not shown.
        ("$", "unexpected '$' at column 1", 0),
        (f"{ID} = $", "unexpected '$' at column 36", len(ID) + 3),
    ],
)
def test_syntax_errors_name_what_was_expected_and_where(text: str, message: str, at: int) -> None:
    with pytest.raises(InvalidPredicateError) as ei:
        parse_sql(text)
    e = ei.value
    assert e.message == message
    assert e.position == at and e.details["position"] == at
    assert e.details["line"] == 1 and e.details["column"] == at + 1
    assert "sqlglot" not in e.message and "Required keyword" not in e.message and "(no " not in e.message


def test_a_multi_line_predicate_names_line_and_column() -> None:
    text = f"{ID} = 1\nAND {ID} >"
    with pytest.raises(InvalidPredicateError) as ei:
        parse_sql(text)
    e = ei.value
    assert e.message == f"expected a value after '>' at line 2, column {len(ID) + 7}"
    assert e.position == len(text) and (e.details["line"], e.details["column"]) == (2, len(ID) + 7)


def test_errors_that_are_not_syntax_have_no_position() -> None:
    with pytest.raises(InvalidPredicateError) as ei:
        parse_sql("variant_get(v, '$.id', 'nosuchtype') = 1")
    assert ei.value.position is None and "position" not in ei.value.details


def test_escaped_quotes_are_not_unterminated() -> None:
    # Closed literals parse; the one unclosed quote is found after them.
    parse_sql("variant_get(v, '$.s', 'string') = 'it\\'s'")
    with pytest.raises(InvalidPredicateError) as ei:
        parse_sql("variant_get(v, '$.s', 'string') = 'a\\'b' OR variant_get(v, '$.s', 'string') = 'x")
    assert ei.value.message.startswith("unterminated string") and ei.value.position is not None
    assert ei.value.position == len("variant_get(v, '$.s', 'string') = 'a\\'b' OR variant_get(v, '$.s', 'string') = ")


@pytest.mark.parametrize(
    ("literal", "value"),
    [("'O''Brien'", "O'Brien"), ("''''", "'"), ("'a''b''c'", "a'b'c"), ('"x""y"', 'x"y'), ("'it\\'s'", "it's")],
)
def test_a_doubled_quote_inside_a_string_literal_is_that_quote(literal: str, value: str) -> None:
    """Spark reads ``'O''Brien'`` as O'Brien (tests/spark/test_translate_columns.py asks it);
    sqlglot made it CONCAT('O', 'Brien'): no literal, so the term never pruned and its warning
    showed a predicate the user did not write."""
    from service.pruning.expressions import LiteralPredicate, SetPredicate
    from service.pruning.parse_sql.syntax import split_conjunctions

    tree = parse_sql(f"variant_get(v, '$.s', 'string') = {literal}")
    assert isinstance(tree, LiteralPredicate) and tree.literal == value
    listed = parse_sql(f"variant_get(v, '$.s', 'string') IN ('x', {literal})")
    assert isinstance(listed, SetPredicate) and set(listed.literals) == {"x", value}
    with pytest.raises(InvalidPredicateError, match="expected a literal"):  # with a space: a CONCAT, as in Spark
        parse_sql(f"variant_get(v, '$.s', 'string') = 'a' {literal}")
    parts = split_conjunctions(f"length(s) > 1 AND variant_get(v, '$.s', 'string') = {literal}")
    assert parts is not None and parse_sql(parts[1]) == tree

def test_a_malformed_predicate_is_an_error_not_a_log_line_of_sqlglots(caplog: pytest.LogCaptureFixture) -> None:
    """sqlglot warns before parsing some malformed texts as a 'Command'; the error is the
    client's answer, and the server's log stays quiet."""
    import logging

    with caplog.at_level(logging.DEBUG), pytest.raises(InvalidPredicateError, match="not supported"):
        parse_sql("if S NOT NUL '7'L")
    assert not [r for r in caplog.records if r.name.startswith("sqlglot") and r.levelno >= logging.WARNING]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("variant_get(v, '$.a', 'bigint') = abs(  3 )", "got abs(  3 )"),
        ("variant_get(v, '$.a', 'bigint') LIKE 'a%'", ": variant_get(v, '$.a', 'bigint') LIKE 'a%'"),
        ("variant_get(v, '$.a', 'bigint') = x % 2", "got x % 2"),
    ],
)
def test_error_snippets_are_cut_from_the_text_as_written(text: str, shown: str) -> None:
    """Issue 32 row 3: a snippet is the predicate's own text (regenerating SQL for a long chain
    cost more than parsing it), as the user wrote it."""
    with pytest.raises(InvalidPredicateError) as e:
        parse_sql(text)
    assert e.value.message.endswith(shown), e.value.message


def test_the_snippet_of_a_long_chain_is_short_and_never_regenerated(monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlglot import exp

    def never(*args: object, **kwargs: object) -> str:
        raise AssertionError("SQL regenerated for a snippet")

    monkeypatch.setattr(exp.Expression, "sql", never)
    text = "variant_get(v, '$.a', 'bigint') = " + " + ".join(["1"] * 5000)
    with pytest.raises(InvalidPredicateError) as e:
        parse_sql(text, max_length=10**6, max_terms=10_000)  # past the arithmetic limit's default
    assert e.value.message.startswith("expected a literal, got 1 + 1 + 1") and e.value.message.endswith("...")
    assert len(e.value.message) < 120


def test_arithmetic_chains_are_refused_before_sqlglot_parses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 row 3: ``= 1+1+...+1`` (262 KB) took seconds of CPU in sqlglot; more binary
    arithmetic operators than the terms limit are refused on the raw text (pruning uses none)."""
    import sqlglot

    from service.errors import LimitExceededError
    from service.pruning.parse_sql import guard

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("tokenized a refused predicate")

    chain = "variant_get(v, '$.user.id', 'bigint') = " + "+".join(["1"] * 131_000)
    star = "variant_get(v, '$.user.id', 'bigint') = " + "*".join(["2"] * 402)
    with monkeypatch.context() as m:
        m.setattr(sqlglot, "tokenize", must_not_run)
        m.setattr(guard, "parse_predicate", must_not_run)
        for text in (chain, star):
            with pytest.raises(LimitExceededError, match="more than 400 arithmetic operators"):
                parse_sql(text, max_length=10**6)
    # Unary minus, exponents and text in strings or comments are no operators.
    ok = (
        "variant_get(v, '$.a', 'double') IN (" + ", ".join(f"-{i}e-3" for i in range(2000)) + ")"
        " AND variant_get(v, '$.s', 'string') = '" + "+" * 1000 + "' -- " + "*" * 1000
    )
    assert not guard.too_many_operators(ok, 400)
    assert guard.too_many_operators("a" + " - a" * 401, 400) and not guard.too_many_operators("a" + " - a" * 400, 400)


def test_deep_parentheses_and_calls_are_refused_before_tokenizing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 row 3: the nesting measure tokenizes (~2 ms per KiB); a text nested past the
    limit on its raw parentheses (outside strings and comments) is refused without it."""
    import sqlglot

    from service.errors import LimitExceededError
    from service.pruning.parse_sql import guard

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("tokenized a refused predicate")

    with monkeypatch.context() as m:
        m.setattr(sqlglot, "tokenize", must_not_run)
        for text in ("x = " + "(" * 50_000 + "1" + ")" * 50_000, "x = " + "abs(" * 30_000 + "1" + ")" * 30_000):
            with pytest.raises(LimitExceededError, match="nested"):
                parse_sql(text, max_length=10**6)
    assert guard.paren_depth("s = '((((' AND t = `((` -- ((((\n AND f(g(1))") == 2


def test_an_in_list_past_its_limit_is_refused_before_tokenizing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 32 row 3: a 21,000-value IN list was parsed whole (0.5 s) before its length was
    checked; its top-level commas are counted on the raw text first."""
    import sqlglot

    from service.errors import LimitExceededError
    from service.pruning.parse_sql import guard

    def must_not_run(*args: object, **kwargs: object) -> None:
        raise AssertionError("tokenized a refused predicate")

    text = "variant_get(v, '$.id', 'bigint') IN (" + ", ".join(str(i) for i in range(21_000)) + ")"
    with monkeypatch.context() as m:
        m.setattr(sqlglot, "tokenize", must_not_run)
        with pytest.raises(LimitExceededError, match="IN list; the limit is 10000"):
            parse_sql(text, max_length=10**6)
    # Commas in strings, comments and calls inside the list are not values of it.
    assert guard.longest_in_list("x IN ('a,b,c', f(1, 2, 3), -- ,,,\n 4)", 3) == 3  # three values
    assert guard.longest_in_list("x IN (1, 2) AND y IN (1, 2, 3)", 2) > 2
    exact = "variant_get(v, '$.id', 'bigint') IN (" + ", ".join(str(i) for i in range(10_000)) + ")"
    assert parse_sql(exact, max_length=10**6) is not None  # the limit itself is allowed
