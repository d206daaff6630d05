"""Plan diagnostics as pure rules: the leaves' terms of a compiled condition, the columns a
predicate names, and the warnings given the stored types of the table's paths."""

from __future__ import annotations

import pytest

from service.pruning.conditions import AnyOf, Constant, compile_expression
from service.pruning.conjunctions import merge_conjunctions
from service.pruning.diagnostics import (
    PATH_NOT_SHREDDED,
    PREDICATE_PRUNES_NOTHING,
    TYPE_NOT_COMPARABLE,
    PlanWarning,
    TermUse,
    leaf_terms,
    plan_warnings,
    referenced_columns,
    variant_path_as_json,
)
from service.pruning.parse_sql import parse_sql
from service.values import ShreddedType

INT64 = ShreddedType.parse("int64")
INT32 = ShreddedType.parse("int32")
VARCHAR = ShreddedType.parse("varchar")
FLOAT64 = ShreddedType.parse("float64")

#: The table of these tests: v.user.id is int64, v.name varchar, w.x int32.
STORED = {
    ("v", '"user"."id"'): [INT64],
    ("v", '"name"'): [VARCHAR],
    ("w", '"x"'): [INT32],
    ("v", '"price"'): [ShreddedType.parse("decimal(9,3)")],
}
PATHS = {"v": ['"user"."id"', '"name"', '"tags".element', '"price"'], "w": ['"x"']}


def _condition(sql: str):  # type: ignore[no-untyped-def]
    return merge_conjunctions(compile_expression(parse_sql(sql)))


def _warnings(sql: str, *, pruned_nothing: bool = True) -> tuple[PlanWarning, ...]:
    return plan_warnings(_condition(sql), STORED, PATHS, pruned_nothing=pruned_nothing)


# --- leaves -------------------------------------------------------------------------------------


def test_leaf_terms_name_column_path_usable_types_and_the_term_as_written() -> None:
    (use,) = leaf_terms(_condition("variant_get(v, '$.user.id', 'bigint') = 5"))
    assert use == TermUse("v", '"user"."id"', (ShreddedType.parse("int8"), ShreddedType.parse("int16"), INT32, INT64), "$.user.id", INT64)


def test_leaf_terms_of_every_leaf_left_to_right_each_once() -> None:
    sql = (
        "variant_get(v, '$.a', 'string') = 'x' OR (variant_get(w, '$.b[3]', 'double') > 1.5 "
        "AND variant_get(v, '$.a', 'string') = 'x')"
    )
    uses = leaf_terms(_condition(sql))
    assert [(u.column, u.variant_path, u.json_path, u.requested) for u in uses] == [
        ("v", '"a"', "$.a", VARCHAR),
        ("w", '"b".element', "$.b[3]", FLOAT64),
    ]


def test_merged_conjuncts_keep_every_term() -> None:
    c = _condition("variant_get(v, '$.a', 'bigint') >= 1 AND variant_get(v, '$.a', 'bigint') <= 9")
    uses = leaf_terms(c)
    assert len(uses) == 1  # one merged leaf, two identical terms
    c = _condition("variant_get(v, '$.a', 'bigint') >= 1 AND variant_get(v, '$.a', 'int') <= 9")
    assert [u.requested for u in leaf_terms(c)] == [INT64, INT32]


def test_terms_without_typed_facts_have_no_usable_types() -> None:
    (use,) = leaf_terms(_condition("variant_get(v, '$.a', 'bigint') IS NOT NULL"))
    assert use.usable == ()
    (use,) = leaf_terms(_condition("variant_get(v, '$.a', 'bigint') IS NULL"))
    assert INT64 in use.usable
    (use,) = leaf_terms(_condition("isnan(variant_get(v, '$.a', 'double'))"))
    assert use.usable == (FLOAT64,)


def test_terms_compiled_to_constants_are_no_leaves() -> None:
    assert leaf_terms(_condition("variant_get(v, '$.a', 'tinyint') < -128")) == ()
    assert leaf_terms(_condition("true")) == ()


def test_terms_take_no_part_in_a_leafs_meaning() -> None:
    """Page tokens fingerprint the condition's repr: the terms as written must not change it."""
    a = _condition("variant_get(v, '$.a', 'bigint') = 5")
    b = _condition("variant_get(v, '$[\"a\"]', 'bigint') = 5")
    assert a == b and repr(a) == repr(b) and leaf_terms(a)[0].json_path == leaf_terms(b)[0].json_path == "$.a"
    assert "LeafTerm" not in repr(a)


def test_referenced_columns_in_order_each_once() -> None:
    expr = parse_sql("variant_get(w, '$.a', 'bigint') = 1 OR variant_get(v, '$.a', 'bigint') = 2 OR w:b::int = 3")
    assert referenced_columns(expr) == ("w", "v")
    # Also the terms no leaf is left for.
    assert referenced_columns(parse_sql("variant_get(x, '$.a', 'tinyint') < -128")) == ("x",)


@pytest.mark.parametrize(
    ("variant_path", "json_path"),
    [("root", "$"), ('"user"."id"', "$.user.id"), ('"tags".element', "$.tags[*]"), ('"a b"', "$['a b']")],
)
def test_variant_paths_as_json_paths(variant_path: str, json_path: str) -> None:
    assert variant_path_as_json(variant_path) == json_path


# --- warnings -----------------------------------------------------------------------------------


def test_no_warning_for_a_path_stored_as_a_usable_type() -> None:
    assert _warnings("variant_get(v, '$.user.id', 'bigint') = 5") == ()
    assert _warnings("variant_get(w, '$.x', 'bigint') = 5") == ()  # int32 stats serve a bigint
    assert _warnings("variant_get(v, '$.user.id', 'string') IS NOT NULL") == ()  # no typed fact read


def test_a_path_shredded_nowhere_warns_with_close_paths() -> None:
    w = _warnings("variant_get(v, '$.user.idd', 'bigint') = 1234", pruned_nothing=False)
    assert w == (
        PlanWarning(
            PATH_NOT_SHREDDED,
            "path $.user.idd of column v is not shredded in any live file: no file can be pruned on it "
            "(did you mean $.user.id?)",
            "v",
            "$.user.idd",
            ("$.user.id",),
        ),
    )
    (w,) = _warnings("variant_get(v, '$.zzzzzz', 'bigint') = 1", pruned_nothing=False)
    assert w.type == PATH_NOT_SHREDDED and w.suggestions == () and "did you mean" not in w.message
    (w,) = _warnings("variant_get(v, '$.tag[0]', 'string') = 'a'", pruned_nothing=False)
    assert w.suggestions == ("$.tags[*]",)


def test_a_type_the_path_is_not_stored_as_warns() -> None:
    # Text order is not the integers' order: a string range reads no integer bound.
    (w,) = _warnings("variant_get(v, '$.user.id', 'string') > '12'", pruned_nothing=False)
    assert w.type == TYPE_NOT_COMPARABLE and (w.column, w.path) == ("v", "$.user.id")
    assert "stored as int64, asked as string: not comparable" in w.message
    assert w.suggestions == ("bigint",) and w.message.endswith("(ask for bigint)")
    (w,) = _warnings("variant_get(v, '$.user.id', 'date') = DATE '2024-01-01'", pruned_nothing=False)
    assert w.type == TYPE_NOT_COMPARABLE and "asked as date" in w.message
    # A narrower integer, a float, a decimal, and string equality are casts the bounds serve.
    for sql in (
        "variant_get(v, '$.user.id', 'int') = 12",
        "variant_get(v, '$.user.id', 'double') > 1.5",
        "variant_get(v, '$.user.id', 'decimal(10,2)') < 3",
        "variant_get(v, '$.user.id', 'string') = '12'",
        "variant_get(v, '$.price', 'decimal(10,2)') = 3.25",  # another scale: rounded
        "variant_get(v, '$.price', 'decimal(4,1)') > 3",
    ):
        assert _warnings(sql, pruned_nothing=False) == (), sql
    # A cast's term is not blind: beside a warned term, the predicate may still prune.
    w = _warnings("variant_get(v, '$.nope', 'bigint') = 1 AND variant_get(v, '$.price', 'decimal(10,2)') = 3.25")
    assert [x.type for x in w] == [PATH_NOT_SHREDDED]
    (w,) = _warnings("variant_get(v, '$.user.id', 'bigint') IS NOT NULL AND variant_get(v, '$.name', 'bigint') IS NULL", pruned_nothing=False)
    assert w.path == "$.name"


def test_one_warning_per_term_whatever_its_uses() -> None:
    w = _warnings(
        "variant_get(v, '$.nope', 'bigint') = 1 OR variant_get(v, '$.nope', 'bigint') IS NOT NULL "
        "OR variant_get(v, '$.nope', 'bigint') > 7",
        pruned_nothing=False,
    )
    assert [x.type for x in w] == [PATH_NOT_SHREDDED]


@pytest.mark.parametrize(
    ("sql", "prunes_nothing"),
    [
        ("variant_get(v, '$.user.idd', 'bigint') = 1", True),
        ("variant_get(v, '$.user.id', 'string') < '1'", True),
        ("variant_get(v, '$.user.id', 'bigint') = 1 OR variant_get(v, '$.nope', 'bigint') = 1", True),
        # Another term could prune: pruning nothing is then not the warned term's doing.
        ("variant_get(v, '$.user.id', 'bigint') = 1 AND variant_get(v, '$.nope', 'bigint') = 1", False),
    ],
)
def test_a_predicate_that_prunes_nothing_because_of_the_warnings_says_so(sql: str, prunes_nothing: bool) -> None:
    w = _warnings(sql)
    assert w and w[0].type in (PATH_NOT_SHREDDED, TYPE_NOT_COMPARABLE)
    assert (w[-1].type == PREDICATE_PRUNES_NOTHING) is prunes_nothing
    if prunes_nothing:
        assert (w[-1].column, w[-1].path) == (None, None)
    # Only when the plan really pruned nothing.
    assert all(x.type != PREDICATE_PRUNES_NOTHING for x in _warnings(sql, pruned_nothing=False))


def test_no_predicate_warning_when_nothing_could_prune_anyway() -> None:
    assert _warnings("variant_get(v, '$.user.id', 'bigint') = 1") == ()
    # A part no stats can decide (as NOT over a [*] leaf compiles to) keeps every file by itself.
    c = AnyOf((_condition("variant_get(v, '$.nope', 'bigint') = 1"), Constant(True, "undecidable")))
    assert [w.type for w in plan_warnings(c, STORED, PATHS, pruned_nothing=True)] == [PATH_NOT_SHREDDED]


def test_suggestions_are_looked_for_for_the_first_terms_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each suggestion compares the term with every candidate path: a predicate of hundreds of
    misspelt terms on a table of 200,000 paths took minutes. The first MAX_SUGGESTED_TERMS get
    suggestions; every term still gets its warning; the paths are converted once per column."""
    import service.pruning.diagnostics as diagnostics

    terms = diagnostics.MAX_SUGGESTED_TERMS + 3
    sql = " OR ".join(f"variant_get(v, '$.user.ib{i}', 'bigint') = 1" for i in range(terms))
    converted = []
    real = diagnostics.variant_path_as_json
    monkeypatch.setattr(diagnostics, "variant_path_as_json", lambda p: converted.append(p) or real(p))
    paths = {"v": ['"user"."ib0"', '"user"."ib1"', *(f'"other{i}"' for i in range(50))]}
    ws = [w for w in plan_warnings(_condition(sql), {}, paths, pruned_nothing=True) if w.type == PATH_NOT_SHREDDED]
    assert len(ws) == terms
    assert all(w.suggestions for w in ws[: diagnostics.MAX_SUGGESTED_TERMS])
    assert not any(w.suggestions for w in ws[diagnostics.MAX_SUGGESTED_TERMS :])
    assert len(converted) == len(paths["v"])  # once, not once per term
