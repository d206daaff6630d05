"""Whole predicates on one table: plain and partition columns beside Variant paths, resolved
against a TableSchema by both parsers; what pruning cannot use is Unknown (never prunes, never
fails); ColumnTerm leaves compile and evaluate over ColumnStats rows like Variant paths; explain
reasons name the conjunct for all three kinds; diagnostics ignore column leaves."""

from __future__ import annotations

from decimal import Decimal
from types import MappingProxyType
from typing import Any

import pytest

from service.errors import InvalidPathError, InvalidPredicateError, UnknownColumnError
from service.pruning.conditions import (
    AllOf,
    Constant,
    LeafCondition,
    compile_expression,
    condition_paths,
    usable_types,
)
from service.pruning.conjunctions import merge_conjunctions
from service.pruning.diagnostics import leaf_terms, plan_warnings, referenced_columns
from service.pruning.evaluator import FileEvaluator, evaluate, stats_by_path
from service.pruning.expressions import (
    And,
    ColumnTerm,
    LiteralPredicate,
    Not,
    Op,
    Or,
    SetPredicate,
    UnaryPredicate,
    Unknown,
    VariantTerm,
    and_,
    compare,
    not_,
    or_,
    variant,
)
from service.pruning.literals import parse_date_text
from service.pruning.parse_json import parse_json, to_json
from service.pruning.parse_sql import parse_sql, to_sql
from service.pruning.schema import ColumnInfo, TableSchema
from service.stats.model import ColumnStats
from service.values import ShreddedType
from tests.pruning.reference import stats_row

INT32 = ShreddedType.parse("int32")
INT64 = ShreddedType.parse("int64")
VARCHAR = ShreddedType.parse("varchar")
DATE = ShreddedType.parse("date")
FLOAT64 = ShreddedType.parse("float64")
BOOL = ShreddedType.parse("boolean")
DEC = ShreddedType.parse("decimal(10,2)")
TSTZ = ShreddedType.parse("timestamptz")
TS = ShreddedType.parse("timestamp")
TIME = ShreddedType.parse("time")

SCHEMA = TableSchema(
    ("v",),
    MappingProxyType(
        {
            "event_date": ColumnInfo("event_date", DATE, partition=True),
            "region": ColumnInfo("region", VARCHAR, partition=True),
            "id": ColumnInfo("id", INT64),
            "Name": ColumnInfo("Name", VARCHAR),
            "score": ColumnInfo("score", FLOAT64),
            "active": ColumnInfo("active", BOOL),
            "price": ColumnInfo("price", DEC),
            "ts": ColumnInfo("ts", TSTZ),
            "ts_ntz": ColumnInfo("ts_ntz", TS),
            "addr.zip": ColumnInfo("addr.zip", INT32),
            "tags": ColumnInfo("tags", None),
            "at": ColumnInfo("at", TIME),
            "my col": ColumnInfo("my col", INT32),
        }
    ),
)

EVENT_DATE = ColumnTerm("event_date", DATE, partition=True)
REGION = ColumnTerm("region", VARCHAR, partition=True)
ID = ColumnTerm("id", INT64)
NAME = ColumnTerm("Name", VARCHAR)
SCORE = ColumnTerm("score", FLOAT64)
USER_ID = variant("v", "$.user.id", "bigint")
D = parse_date_text("2024-03-01")


def sql(text: str) -> Any:
    return parse_sql(text, schema=SCHEMA)


# --- SQL: resolution ---------------------------------------------------------------------------


def test_the_issue_s_mixed_predicate_parses_to_one_tree() -> None:
    e = sql("event_date = '2024-03-01' AND variant_get(v,'$.user.id','bigint') = 1234")
    assert e == and_(LiteralPredicate(Op.EQ, EVENT_DATE, D), LiteralPredicate(Op.EQ, USER_ID, 1234))


@pytest.mark.parametrize(
    "text",
    ["name = 'x'", "NAME = 'x'", "`Name` = 'x'", "'x' = name", "(name) = 'x'"],
)
def test_names_resolve_case_insensitively_with_backticks_either_side(text: str) -> None:
    assert sql(text) == LiteralPredicate(Op.EQ, NAME, "x")


def test_struct_leaves_and_quoted_names() -> None:
    assert sql("addr.zip BETWEEN 1 AND 3") == and_(
        LiteralPredicate(Op.GT_EQ, ColumnTerm("addr.zip", INT32), 1),
        LiteralPredicate(Op.LT_EQ, ColumnTerm("addr.zip", INT32), 3),
    )
    assert sql("`my col` IN (1, 2)") == SetPredicate(Op.IN, ColumnTerm("my col", INT32), (1, 2))


def test_variant_columns_resolve_case_insensitively_too() -> None:
    assert sql("variant_get(V, '$.user.id', 'bigint') = 1") == LiteralPredicate(Op.EQ, USER_ID, 1)
    assert sql("V:user.id::bigint = 1") == LiteralPredicate(Op.EQ, USER_ID, 1)


def test_an_unknown_column_names_it_and_lists_the_table_s_columns() -> None:
    with pytest.raises(UnknownColumnError) as ei:
        sql("evnt_date = '2024-03-01' AND id = 1")
    msg = ei.value.message
    assert "'evnt_date'" in msg and "event_date" in msg and "did you mean event_date" in msg
    assert ei.value.details["column"] == "evnt_date"
    assert ei.value.details["columns"] == SCHEMA.names()


@pytest.mark.parametrize(
    "text",
    [
        "upper(regoin) = 'EU'",  # inside an unknown sub-expression: Spark refuses it too
        "id = idd",
        "length(nme) > 3 OR id = 1",
    ],
)
def test_unknown_columns_inside_unknown_sub_expressions_are_errors(text: str) -> None:
    with pytest.raises(UnknownColumnError):
        sql(text)


def test_an_unknown_variant_column_keeps_the_variant_message_style() -> None:
    with pytest.raises(UnknownColumnError) as ei:
        sql("variant_get(w, '$.user.id', 'bigint') = 1234")
    assert "no Variant column 'w'" in ei.value.message and "Variant columns: v" in ei.value.message
    with pytest.raises(UnknownColumnError):
        sql("variant_get(id, '$.a', 'int') = 1")  # a plain column is no Variant column


def test_without_a_schema_nothing_changes() -> None:
    with pytest.raises(InvalidPredicateError, match="plain column"):
        parse_sql("event_date = '2024-03-01'")
    with pytest.raises(InvalidPredicateError):
        parse_sql("length(variant_get(v, '$.a', 'string')) > 3")


# --- SQL: unknown sub-expressions --------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "length(name) > 3",
        "upper(region) = 'EU'",
        "id % 2 = 0",
        "id + 1 > 5",
        "id = score",  # column against column
        "name LIKE '%a'",  # no prefix
        "id LIKE '1%'",  # an int cast to text: text order is not the integers'
        "name LIKE 'a!x%' ESCAPE '!'",  # an escape Spark refuses before x
        "CASE WHEN id > 1 THEN true ELSE false END",
        "id IN (SELECT 1)",
        "my_udf(id)",
        "name = 5",  # a string column against a number: Spark's cast is not certain here
        "region = DATE '2024-03-01'",  # a string partition against a date
        "price = 1.5D",  # a decimal against a double: compared in double
        "tags IS NULL",  # a column of a type the value model does not hold
        "at = '10:00:00'",  # a time column
        "isnan(id)",
        "name",  # a non-boolean alone
        "id = NULL",
        "variant_get(v, '$.tags', 'array<string>') IS NULL",
        "variant_get(v, '$.a') IS NULL",  # Spark's VARIANT-valued form: no stats serve a VARIANT
        "try_variant_get(v, '$.a.b') IS NOT NULL",
        "exists(transform(array(1, 2), x -> x + id), y -> y > 2)",
        "event_date > current_date",
    ],
)
def test_what_pruning_cannot_use_is_unknown_never_an_error(text: str) -> None:
    e = sql(text)
    assert isinstance(e, Unknown), e
    c = compile_expression(e)
    assert isinstance(c, Constant) and c.might_match
    assert str(c.reason).startswith("not used for pruning: ")
    assert parse_sql(to_sql(e), schema=SCHEMA) == e  # the text renders back to the same tree


@pytest.mark.parametrize(
    "text",
    [
        "id = ",  # syntax
        "variant_get(v, '$.a', 'bigintt') = 1",  # a type Spark does not know
        "variant_get(v) = 1",  # Spark's arity
        "variant_get(w, '$.a') IS NULL",  # no such Variant column
    ],
)
def test_syntax_and_malformed_variant_terms_still_fail(text: str) -> None:
    with pytest.raises((InvalidPredicateError, UnknownColumnError)):
        sql(text)


def test_a_bad_json_path_still_fails() -> None:
    with pytest.raises(InvalidPathError):
        sql("variant_get(v, '$.a[', 'int') = 1")


def test_unknown_under_and_or_not() -> None:
    u = Unknown("LENGTH(name) > 3")  # the text as written
    id5 = LiteralPredicate(Op.EQ, ID, 5)
    assert sql("length(name) > 3 AND id = 5") == And((u, id5))
    assert sql("NOT (length(name) > 3)") == Unknown("NOT (LENGTH(name) > 3)")
    assert not_(Unknown("x > 1")) == Unknown("NOT (x > 1)")
    # AND keeps the other side's power; OR with an unknown keeps every file.
    assert compile_expression(and_(u, id5)) == compile_expression(id5)
    ored = compile_expression(or_(u, id5))
    assert isinstance(ored, Constant) and ored.might_match
    notted = compile_expression(not_(and_(u, id5)))  # NOT u OR id != 5
    assert isinstance(notted, Constant) and notted.might_match


def test_a_boolean_column_alone_is_a_predicate() -> None:
    active = ColumnTerm("active", BOOL)
    assert sql("active") == LiteralPredicate(Op.EQ, active, True)
    assert sql("NOT active") == LiteralPredicate(Op.NOT_EQ, active, True)
    assert sql("active AND id = 1") == and_(LiteralPredicate(Op.EQ, active, True), LiteralPredicate(Op.EQ, ID, 1))


# --- SQL: Spark's comparison semantics for column terms ----------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("id = 1.5", SetPredicate(Op.IN, ID, ())),  # bigint vs decimal: exact, no value equals
        ("id < 1.5", LiteralPredicate(Op.LT_EQ, ID, 1)),
        ("id > 1.5D", LiteralPredicate(Op.GT_EQ, ID, 2)),  # bigint vs double below 2**53
        ("id = '7'", LiteralPredicate(Op.EQ, ID, 7)),  # a string naming a bigint exactly
        ("event_date = '2024-03-01'", LiteralPredicate(Op.EQ, EVENT_DATE, D)),
        ("event_date = DATE '2024-03-01'", LiteralPredicate(Op.EQ, EVENT_DATE, D)),
        # a date against a timestamp: the date's midnight (UTC, the service's session zone)
        ("event_date < TIMESTAMP '2024-03-01 00:00:01'", LiteralPredicate(Op.LT_EQ, EVENT_DATE, D)),
        ("region = 'EU'", LiteralPredicate(Op.EQ, REGION, "EU")),
        ("price = 1.5", LiteralPredicate(Op.EQ, ColumnTerm("price", DEC), Decimal("1.50"))),
        ("price = 1.505", SetPredicate(Op.IN, ColumnTerm("price", DEC), ())),
        (
            "ts >= TIMESTAMP_NTZ '2024-03-01 10:00:00'",
            LiteralPredicate(Op.GT_EQ, ColumnTerm("ts", TSTZ), (D * 86_400 + 36_000) * 1_000_000),
        ),
        (
            "ts_ntz < TIMESTAMP '2024-03-01 10:00:00+00:00'",
            LiteralPredicate(Op.LT, ColumnTerm("ts_ntz", TS), (D * 86_400 + 36_000) * 1_000_000),
        ),
        ("score > 1", LiteralPredicate(Op.GT, SCORE, 1.0)),
        ("isnan(score)", UnaryPredicate(Op.IS_NAN, SCORE)),
        ("id IS NOT NULL", UnaryPredicate(Op.NOT_NULL, ID)),
        ("isnull(region)", UnaryPredicate(Op.IS_NULL, REGION)),
        ("at IS NULL", UnaryPredicate(Op.IS_NULL, ColumnTerm("at", TIME))),
    ],
)
def test_column_literals_follow_spark_s_implicit_casts(text: str, expected: Any) -> None:
    assert sql(text) == expected


def test_rendered_column_trees_parse_back() -> None:
    e = sql(
        "(event_date BETWEEN '2024-03-01' AND '2024-03-03' OR region IN ('EU', 'US')) "
        "AND NOT (v:user.id::bigint > 5 AND length(name) > 3) AND `my col` = 1 AND addr.zip IS NULL"
    )
    assert parse_sql(to_sql(e), schema=SCHEMA) == e


# --- JSON --------------------------------------------------------------------------------------


def test_json_references_in_both_spellings() -> None:
    j = {"type": "eq", "term": "event_date", "value": "2024-03-01"}
    assert parse_json(j, schema=SCHEMA) == LiteralPredicate(Op.EQ, EVENT_DATE, D)
    j2 = {"type": "lt", "term": {"type": "reference", "term": "ID"}, "value": 5}
    assert parse_json(j2, schema=SCHEMA) == LiteralPredicate(Op.LT, ID, 5)
    j3 = {"type": "gt", "left": 3, "right": {"type": "reference", "term": "id"}}
    assert parse_json(j3, schema=SCHEMA) == LiteralPredicate(Op.LT, ID, 3)


def test_json_mixed_tree_round_trips_and_matches_sql() -> None:
    text = "event_date = '2024-03-01' AND (v:user.id::bigint IN (1, 2) OR region IS NULL)"
    e = sql(text)
    doc = to_json(e)
    assert doc["left"]["term"] == "event_date"  # Iceberg's Reference: the bare name
    assert parse_json(doc, schema=SCHEMA) == e


def test_json_unknown_column_and_variant_column() -> None:
    with pytest.raises(UnknownColumnError) as ei:
        parse_json({"type": "eq", "term": "nope", "value": 1}, schema=SCHEMA)
    assert ei.value.details["pointer"] == "/term"
    with pytest.raises(UnknownColumnError):
        parse_json({"type": "is-null", "term": {"type": "variant", "column": "w", "path": "$.a", "as": "int"}}, schema=SCHEMA)


def test_json_references_need_a_schema() -> None:
    with pytest.raises(InvalidPredicateError, match="needs the table's schema"):
        parse_json({"type": "eq", "term": "event_date", "value": "2024-03-01"})


def test_json_terms_on_columns_pruning_cannot_compare_are_unknown() -> None:
    e = parse_json(
        {"type": "and", "left": {"type": "eq", "term": "tags", "value": "a"}, "right": {"type": "eq", "term": "at", "value": "10:00"}},
        schema=SCHEMA,
    )
    assert e == And((Unknown("tags = 'a'"), Unknown("at = '10:00'")))
    with pytest.raises(InvalidPredicateError, match="no filter JSON form"):
        to_json(e)


# --- compile and evaluate ----------------------------------------------------------------------


def col_row(
    name: str, t: ShreddedType, vc: int, nc: int, lo: Any, hi: Any, nan: bool | None = None
) -> ColumnStats:
    return ColumnStats(name, t, 10, vc, nc, lo, hi, nan)


def test_column_leaves_read_column_rows_keyed_without_a_path() -> None:
    c = compile_expression(sql("id = 5"))
    assert isinstance(c, LeafCondition) and (c.column, c.variant_path) == ("id", None)
    assert condition_paths(compile_expression(sql("id = 5 AND v:a::int = 1"))) == {("id", None), ("v", '"a"')}
    assert FileEvaluator(sql("region = 'EU'")).paths == {("region", None)}


@pytest.mark.parametrize(
    ("text", "might"),
    [
        # Spark types IN as a whole: one DOUBLE literal makes every comparison DOUBLE, so 2**60 + 1
        # (which casts to the same double as 2**60) is in (2**60, 1.0D), though not = 2**60.
        ("id IN (1152921504606846976, 1.0D)", True),
        ("variant_get(v, '$.user.id', 'bigint') IN (1152921504606846976, 1.0D)", True),
        ("id IN (9223372036854775808, 0.5D)", True),
        ("id IN (1152921504606846976.5, CAST(1 AS DOUBLE))", True),
        ("id IN ('1152921504606846976', 1e0)", True),
        # Without a double the list stays exact; small doubles stay exact too.
        ("id IN (1152921504606846976, 1.0)", False),
        ("id IN (1152921504606846976)", False),
        ("id IN (3, 4.0D)", False),
        ("id IN (1152921504606846977, 4.0D)", True),
    ],
)
def test_an_in_list_compares_in_the_lists_common_type(text: str, might: bool) -> None:
    big = 2**60 + 1
    rows = stats_by_path(
        [col_row("id", INT64, 2, 0, big, big), stats_row('"user"."id"', INT64, 2, 0, big, big)]
    )
    assert evaluate(sql(text), rows).might_match is might, f"Should {'read' if might else 'skip'}: {text}"


@pytest.mark.parametrize(
    ("text", "might"),
    [
        # Without ANSI, Spark compares an IN list holding a string as strings ('1' is not '01');
        # with ANSI as values. Only literals both modes read alike may prune.
        ("id NOT IN ('01')", True),
        ("id NOT IN ('+1')", True),
        ("id NOT IN ('5', 1.0D)", True),
        ("event_date NOT IN ('2024-3-1')", True),
        ("event_date NOT IN ('2024-03-01T00:00')", True),
        ("score NOT IN ('1')", True),
        ("id NOT IN ('1', 2)", False),
        ("id NOT IN (1)", False),
        ("event_date NOT IN ('2024-03-01', DATE '2024-03-02')", False),
    ],
)
def test_in_lists_with_strings_prune_only_where_sparks_modes_agree(text: str, might: bool) -> None:
    rows = stats_by_path(
        [col_row("id", INT64, 2, 0, 1, 1), col_row("event_date", DATE, 2, 0, D, D), col_row("score", FLOAT64, 2, 0, 1.0, 1.0)]
    )
    assert evaluate(sql(text), rows).might_match is might, f"Should {'read' if might else 'skip'}: {text}"


def test_files_written_before_a_column_was_widened_still_prune() -> None:
    assert usable_types(INT64)[:3] == (ShreddedType.parse("int8"), ShreddedType.parse("int16"), INT32)
    old = stats_by_path([col_row("id", INT32, 5, 0, 10, 20)])
    assert not evaluate(sql("id = 5"), old).might_match
    assert evaluate(sql("id = 15"), old).might_match
    # A stored type whose values Spark would not read exactly as bigint: only type-free facts.
    odd = stats_by_path([col_row("id", VARCHAR, 5, 0, "10", "20")])
    assert evaluate(sql("id = 5"), odd).might_match


@pytest.mark.parametrize(
    ("text", "pruned"),
    [
        ("event_date = '2024-03-01'", False),
        ("event_date = '2024-03-02'", True),
        ("event_date IS NULL", True),
        ("event_date IS NOT NULL", False),
        ("region = 'EU' OR id > 100", False),
        ("region = 'US' OR id > 100", True),
        ("region = 'US' OR length(name) > 3", False),
        ("region = 'US' AND length(name) > 3", True),
        ("NOT (region = 'EU') AND id = 1", True),
        ("score > 10", False),  # NaN might be there (contains_nan true): NaN > 10 in Spark
        ("score < 0", True),
        ("isnan(score)", False),
        ("v:user.id::bigint = 7 AND region = 'EU'", True),
        ("v:user.id::bigint = 3 AND region = 'EU'", False),
        ("v:user.id::bigint = 7 OR region = 'EU'", False),
        ("id IN (1, 2, 3)", True),
        ("id NOT IN (42)", True),
    ],
)
def test_partition_plain_and_variant_rows_prune_alike(text: str, pruned: bool) -> None:
    stats = stats_by_path(
        [
            col_row("event_date", DATE, 4, 0, D, D),  # the partition value as a row
            col_row("region", VARCHAR, 4, 0, "EU", "EU"),
            col_row("id", INT64, 4, 0, 42, 42),
            col_row("score", FLOAT64, 4, 0, 1.0, 2.0, nan=True),
            ColumnStats("Name", VARCHAR, 10, 4, 0, "a", "z", None),
            stats_row('"user"."id"', "int64", 4, 0, 1, 5),
        ]
    )
    verdict = evaluate(sql(text), stats)
    assert verdict.might_match is not pruned, verdict.reason


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("event_date = '2024-03-02' AND id = 42", "event_date = DATE '2024-03-02'"),
        ("event_date = '2024-03-01' AND id = 41", "id = 41"),
        ("v:user.id::bigint = 9 AND id = 42", "variant_get(v, '$.user.id', 'bigint') = 9"),
    ],
)
def test_explain_names_the_conjunct_that_pruned_for_every_kind(text: str, named: str) -> None:
    stats = stats_by_path(
        [
            col_row("event_date", DATE, 4, 0, D, D),
            col_row("id", INT64, 4, 0, 42, 42),
            stats_row('"user"."id"', "int64", 4, 0, 1, 5),
        ]
    )
    verdict = evaluate(sql(text), stats)
    assert not verdict.might_match
    assert verdict.reason.startswith(named + ":"), verdict.reason


def test_no_stats_for_a_column_keeps_the_file_and_says_so() -> None:
    v = evaluate(sql("id = 1"), {})
    assert v.might_match and "no stats for column id" in v.reason
    u = evaluate(sql("length(name) > 3"), {})
    assert u.might_match and "not used for pruning: LENGTH(name) > 3" in u.reason


def test_same_column_conjuncts_merge_like_paths() -> None:
    c = merge_conjunctions(compile_expression(sql("id >= 1 AND id <= 5 AND region = 'EU'")))
    assert isinstance(c, AllOf) and len(c.children) == 2


# --- diagnostics --------------------------------------------------------------------------------


def test_column_leaves_are_not_warned_about_nor_listed_as_variant_columns() -> None:
    e = sql("event_date = '2024-03-01' AND v:user.idd::bigint = 1")
    assert referenced_columns(e) == ("v",)
    cond = merge_conjunctions(compile_expression(e))
    assert [u.column for u in leaf_terms(cond)] == ["v"]
    ws = plan_warnings(cond, {}, {"v": ['"user"."id"']}, pruned_nothing=True)
    assert [w.type for w in ws] == ["path_not_shredded"]  # the column could still have pruned
    # In an OR, the typo'd path is what keeps the column's leaf from pruning anything.
    either = merge_conjunctions(compile_expression(sql("v:user.idd::bigint = 1 OR id = 1")))
    ws = plan_warnings(either, {}, {"v": ['"user"."id"']}, pruned_nothing=True)
    assert [w.type for w in ws] == ["path_not_shredded", "predicate_prunes_nothing"]
    # An OR with an unknown prunes nothing whatever its paths: no leaf, so nothing to warn about.
    unknown = compile_expression(sql("v:user.idd::bigint = 1 OR length(name) > 1"))
    assert plan_warnings(unknown, {}, {"v": []}, pruned_nothing=True) == ()


def test_nodes_of_every_kind_are_visited() -> None:
    e = Or((Not(Unknown("a > 1")), compare(Op.EQ, ID, 1), LiteralPredicate(Op.EQ, USER_ID, 1)))
    assert isinstance(e.children[2].term, VariantTerm)  # type: ignore[attr-defined]
    assert to_sql(e) == "NOT (a > 1) OR id = 1 OR variant_get(v, '$.user.id', 'bigint') = 1"
