"""Absent fields (issue 34 point 6): a key that a fully shredded object of the file lacks is NULL
in every row, so ``= x``, ranges, IN and IS NOT NULL on it never hold and IS NULL always does.

Real files (the spec-following test writer, pyarrow), real extraction of their stats and of their
fully shredded objects (footer only), the per-file evaluator, and ground truth from the rows
(:mod:`tests.pruning.reference`, Spark's three-valued semantics).
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from service.pruning.absent import absent_key, key_steps, objects_by_path, rejects_nulls
from service.pruning.conditions import compile_expression
from service.pruning.evaluator import FileEvaluator, evaluate, stats_by_path
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from service.stats.model import ShreddedObject
from service.stats.objects import file_objects
from service.values import Kind, ShreddedType
from tests.pruning.reference import Typed, may_select
from tests.support.shred_writer import MISSING, write_shredded

INT64 = ShreddedType(Kind.INT64)
VARCHAR = ShreddedType(Kind.VARCHAR)
SPEC: dict[str, Any] = {"a": "int64", "s": "varchar", "b": {"c": "int64"}}


def _rows(n: int) -> list[Any]:
    return [{"a": i, "s": f"s{i}", "b": {"c": i * 10}} for i in range(n)]


def _objects(path: Path) -> dict[tuple[str, str], frozenset[str]]:
    return objects_by_path(file_objects(str(path)))


# --- what the footer proves ---------------------------------------------------------------------


def test_objects_whose_residual_is_all_null_are_recorded_with_their_fields(tmp_path: Path) -> None:
    f = write_shredded(tmp_path / "a.parquet", _rows(10), SPEC)
    assert file_objects(str(f)) == (
        ShreddedObject("v", "root", ("a", "s", "b")),
        ShreddedObject("v", '"b"', ("c",)),
    )


def test_variant_nulls_and_sql_nulls_keep_the_proof(tmp_path: Path) -> None:
    rows = [*_rows(5), None, {"a": 1, "b": None}, {"a": 2, "b": {"c": MISSING}}, {}]
    f = write_shredded(tmp_path / "a.parquet", rows, SPEC, sql_null_rows=[0])
    assert set(_objects(f)) == {("v", "root"), ("v", '"b"')}


@pytest.mark.parametrize(
    ("extra", "recorded"),
    [
        ({"a": 1, "x": 2}, set()),  # a key beside the shredded ones: the root residual holds it
        ("text", set()),  # a non-object Variant: the root residual holds it
        ({"a": 1, "b": {"c": 1, "e": 2}}, {("v", "root")}),  # b's residual holds e
        ({"a": 1, "b": 7}, {("v", "root")}),  # b not an object there
    ],
)
def test_a_residual_value_anywhere_on_the_way_ends_the_proof(
    tmp_path: Path, extra: Any, recorded: set[tuple[str, str]]
) -> None:
    f = write_shredded(tmp_path / "a.parquet", [*_rows(5), extra], SPEC)
    assert set(_objects(f)) == recorded


def test_without_footer_statistics_nothing_is_recorded(tmp_path: Path) -> None:
    f = write_shredded(tmp_path / "a.parquet", _rows(5), SPEC, write_statistics=False)
    assert file_objects(str(f)) == ()


def test_every_row_group_must_prove_it(tmp_path: Path) -> None:
    rows = [*_rows(9), {"a": 1, "x": 1}]
    f = write_shredded(tmp_path / "a.parquet", rows, SPEC, row_group_size=3)
    assert ("v", "root") not in _objects(f)
    g = write_shredded(tmp_path / "b.parquet", _rows(10), SPEC, row_group_size=3)
    assert ("v", "root") in _objects(g)


def test_keys_are_quoted_like_ducklake_paths(tmp_path: Path) -> None:
    spec = {'q"k': {"x.y": "int64"}}
    f = write_shredded(tmp_path / "a.parquet", [{'q"k': {"x.y": 1}}], spec)
    assert file_objects(str(f)) == (
        ShreddedObject("v", "root", ('q"k',)),
        ShreddedObject("v", '"q""k"', ("x.y",)),
    )
    assert absent_key("v", '"q""k"."z"', _objects(f)) == "z"
    assert absent_key("v", '"q""k"."x.y"', _objects(f)) is None


# --- the rule -----------------------------------------------------------------------------------


def test_key_steps_cover_object_keys_only() -> None:
    assert key_steps('"a"."b"') == (("root", "a"), ('"a"', "b"))
    assert key_steps("root") == key_steps(None) == ()
    assert key_steps('"arr".element."x"') == ()  # through an array: never decided
    assert key_steps('"unterminated') == ()


def test_absent_key_needs_a_record_lacking_it() -> None:
    objects = {("v", "root"): frozenset({"a", "b"}), ("v", '"b"'): frozenset({"c"})}
    assert absent_key("v", '"scoped"', objects) == "scoped"
    assert absent_key("v", '"scoped"."deep"', objects) == "scoped"
    assert absent_key("v", '"b"."e"', objects) == "e"
    assert absent_key("v", '"b"."c"', objects) is None
    assert absent_key("v", '"a"."z"', objects) is None  # a is no recorded object: no proof
    assert absent_key("w", '"scoped"', objects) is None  # another column
    assert absent_key("v", '"scoped"', {}) is None  # registered without a record


@pytest.mark.parametrize(
    ("sql", "rejects"),
    [
        ("variant_get(v, '$.scoped', 'boolean') = true", True),
        ("variant_get(v, '$.scoped', 'bigint') BETWEEN 1 AND 5", True),
        ("variant_get(v, '$.scoped', 'string') IN ('a', 'b')", True),
        ("variant_get(v, '$.scoped', 'int') IS NOT NULL", True),
        ("try_variant_get(v, '$.scoped', 'int') <= 10", True),
        ("variant_get(v, '$.scoped', 'double') != 1.5", True),
        ("variant_get(v, '$.scoped', 'int') IS NULL", False),
        ("NOT (variant_get(v, '$.scoped', 'int') IS NOT NULL)", False),
    ],
)
def test_leaves_that_need_a_value(sql: str, rejects: bool) -> None:
    c = compile_expression(parse_sql(sql))
    leaves = [c] if hasattr(c, "variant_path") else list(getattr(c, "children", ()))
    assert leaves and all(rejects_nulls(leaf) is rejects for leaf in leaves)  # type: ignore[arg-type]


def test_explain_names_the_absent_field(tmp_path: Path) -> None:
    f = write_shredded(tmp_path / "a.parquet", _rows(5), SPEC)
    fs = extract_file(str(f))
    stats, objects = stats_by_path(fs.paths), _objects(f)
    expr = parse_sql("variant_get(v, '$.scoped', 'boolean') = true")
    v = evaluate(expr, stats, objects=objects)
    assert not v.might_match
    assert "field scoped absent from every row of this file" in v.reason
    assert v.short == "field scoped absent from every row of this file"
    assert evaluate(expr, stats).might_match  # no record given: no proof
    assert evaluate(parse_sql("variant_get(v, '$.scoped', 'boolean') IS NULL"), stats, objects=objects).might_match
    # NOT and OR through the three-valued logic: NOT (x = true) is NULL, x IS NULL OR ... TRUE.
    assert not evaluate(parse_sql("NOT (variant_get(v, '$.scoped', 'boolean') = true)"), stats, objects=objects)
    either = "variant_get(v, '$.scoped', 'int') = 1 OR variant_get(v, '$.a', 'bigint') = 3"
    assert evaluate(parse_sql(either), stats, objects=objects).might_match
    assert not evaluate(parse_sql(either.replace("= 3", "= 99")), stats, objects=objects)


# --- property: ground truth from the rows, >= 10,000 (predicate, file) pairs ---------------------

PATHS = ["$.a", "$.s", "$.b.c", "$.x", "$.x.y", "$.b.e", "$.a.z", "$.scoped"]
LEAVES = [
    "{get}(v, '{p}', 'bigint') = {k}",
    "{get}(v, '{p}', 'bigint') < {k}",
    "{get}(v, '{p}', 'int') >= {k}",
    "{get}(v, '{p}', 'bigint') IN ({k}, 2)",
    "{get}(v, '{p}', 'string') = '{k}'",
    "{get}(v, '{p}', 'bigint') IS NULL",
    "{get}(v, '{p}', 'bigint') IS NOT NULL",
    "{get}(v, '{p}', 'bigint') != {k}",
]


def _leaf(rnd: random.Random) -> str:
    get = rnd.choice(["variant_get", "try_variant_get"])
    return rnd.choice(LEAVES).format(get=get, p=rnd.choice(PATHS), k=rnd.randrange(0, 7))


def _predicate(rnd: random.Random) -> str:
    a, b = _leaf(rnd), _leaf(rnd)
    return rnd.choice(
        [a, f"NOT ({a})", f"{a} OR {b}", f"{a} AND {b}", f"NOT ({a} OR {b})", f"NOT ({a} AND {b})"]
    )


def _value(rnd: random.Random, spec: Any) -> Any:
    if isinstance(spec, dict):
        return {k: _value(rnd, sub) for k, sub in spec.items() if rnd.random() < 0.85}
    r = rnd.random()
    if r < 0.1:
        return None  # a Variant null
    if spec == "int64":
        return rnd.randrange(0, 7) if r < 0.9 else str(rnd.randrange(0, 7))
    return str(rnd.randrange(0, 7))


def _file_rows(rnd: random.Random) -> tuple[dict[str, Any], list[Any], list[int]]:
    spec: dict[str, Any] = {k: SPEC[k] for k in SPEC if rnd.random() < 0.8} or {"a": "int64"}
    noise = rnd.random() < 0.5  # files whose rows sometimes hold keys the schema does not shred
    rows: list[Any] = []
    for _ in range(rnd.randrange(1, 25)):
        row = _value(rnd, spec)
        if noise and rnd.random() < 0.15:
            row[rnd.choice(["x", "scoped", "s", "b"])] = rnd.choice([3, "3", {"y": 3, "c": 3, "e": 3}])
        if noise and "b" in spec and rnd.random() < 0.1:
            row["b"] = {"c": 1, "e": rnd.randrange(0, 7)}
        if noise and rnd.random() < 0.05:
            row = rnd.choice([5, "text"])
        rows.append(row)
    sql_null = [i for i in range(len(rows)) if rnd.random() < 0.05]
    return spec, rows, sql_null


def _typed(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _typed(x) for k, x in v.items()}
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int):
        return Typed(INT64, v)
    return Typed(VARCHAR, v)


def test_no_pruned_file_holds_a_matching_row(tmp_path: Path) -> None:
    rnd = random.Random(34_6)
    files = []
    for i in range(48):
        spec, rows, sql_null = _file_rows(rnd)
        f = write_shredded(
            tmp_path / f"f{i}.parquet", rows, spec, sql_null_rows=sql_null, row_group_size=rnd.choice([None, 4])
        )
        truth_rows = [{"v": None if j in sql_null else _typed(r)} for j, r in enumerate(rows)]
        files.append((stats_by_path(extract_file(str(f)).paths), _objects(f), truth_rows))
    assert sum(1 for _, objects, _ in files if ("v", "root") in objects) >= 10
    assert sum(1 for _, objects, _ in files if ("v", "root") not in objects) >= 10

    pairs = absent_prunes = 0
    for _ in range(250):
        ev = FileEvaluator(parse_sql(_predicate(rnd)))
        for stats, objects, rows in files:
            pairs += 1
            verdict = ev.evaluate(stats, objects)
            if verdict.might_match:
                continue
            for row in rows:
                assert not may_select(ev.expression, row), f"pruned ({verdict.reason}) but {row} may match"
            if ev.evaluate(stats).might_match:
                absent_prunes += 1  # pruned only thanks to the record
                assert "absent from every row" in verdict.reason
    assert pairs >= 12_000
    assert absent_prunes >= 1_000, absent_prunes
