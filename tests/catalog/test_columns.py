"""Plain-column statistics and partition values in the catalog, on both backends: commit and
read back, table columns and their kinds, counters after removals, what the Variant readers keep
seeing, validation, and the SQL planner against the pure evaluator on column leaves."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from sqlalchemy import text

from service.catalog import Catalog
from service.catalog.admin import admin_reads
from service.catalog.planner import plan_in
from service.catalog.repository import require_table
from service.errors import InvalidStatsError, UnknownColumnError
from service.pruning import expressions as E
from service.pruning.conditions import AllOf, AnyOf, Condition, LeafCondition, compile_expression
from service.pruning.evaluator import interpret, stats_by_path
from tests.catalog.factories import (
    INT64,
    VARCHAR,
    assert_consistent,
    cs,
    fs,
    ps,
    with_columns,
)


def _file(i: int, lo: int, hi: int, **kw: Any) -> Any:
    return with_columns(
        fs(f"s3://b/t/f{i:04d}.parquet", ps('"a"', INT64, lo, hi)),
        cs("x", INT64, lo, hi),
        cs("name", VARCHAR, f"n{lo:05d}", f"n{hi:05d}"),
        **kw,
    )


def test_plain_columns_round_trip(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    files = [_file(i, i * 10, i * 10 + 9) for i in range(5)]
    r = catalog.commit("ns", "t", files)
    assert len(r.added) == 5
    info = catalog.get_table("ns", "t")
    assert info.variant_columns == ("v",)  # the Variant columns, as before
    assert [(c.name, c.type, c.kind) for c in info.columns] == [
        ("v", "variant", "variant"),
        ("x", "int64", "plain"),
        ("name", "varchar", "plain"),
    ]
    got = catalog.file_stats("ns", "t", files[2].path)
    assert sorted(got.columns, key=lambda c: c.column) == sorted(files[2].columns, key=lambda c: c.column)
    assert got.paths == files[2].paths
    assert_consistent(catalog, "ns", "t")
    # Variant readers do not see plain columns.
    assert [p.variant_path for p in admin_reads(catalog).path_coverage("ns", "t")] == ['"a"']
    assert set(catalog.global_stats("ns", "t").columns) == {"v"}
    assert set(catalog.global_stats_json("ns", "t")) == {"v"}
    health = admin_reads(catalog).path_health()[info.table_id]
    assert (health.in_stats, health.conflict, health.partial) == (1, 0, 0)


def test_a_later_file_keeps_its_own_type(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_file(0, 0, 9)])
    other = with_columns(fs("s3://b/t/other.parquet", ps('"a"', INT64, 1, 2)), cs("x", VARCHAR, "a", "b"))
    catalog.commit("ns", "t", [other])
    types = {c.name: c.type for c in catalog.get_table("ns", "t").columns}
    assert types["x"] == "int64"  # the first file's type
    [x] = catalog.file_stats("ns", "t", other.path).columns
    assert x.column_type == VARCHAR and x.min_value == "a"
    assert_consistent(catalog, "ns", "t")


def test_removals_and_restatements_keep_column_counters(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    files = [_file(i, i, i + 3) for i in range(6)]
    catalog.commit("ns", "t", files)
    catalog.remove("ns", "t", [files[1].path, files[4].path])
    assert_consistent(catalog, "ns", "t")
    # Re-registering by path with other column stats restates the file (history kept).
    fresh = dataclasses.replace(files[0], columns=(cs("x", INT64, 100, 200),))
    r = catalog.commit("ns", "t", [fresh], extracted=[fresh.path])
    assert r.restated == (fresh.path,)
    assert catalog.file_stats("ns", "t", fresh.path).columns == fresh.columns
    assert_consistent(catalog, "ns", "t")
    with catalog.engine.connect() as c:
        live = c.execute(
            text(
                "SELECT count(*) FROM ducklake_file_column_stats s JOIN ducklake_data_file d "
                "ON d.data_file_id = s.data_file_id WHERE d.end_snapshot IS NULL AND s.end_snapshot IS NULL"
            )
        ).scalar_one()
    assert live == 2 * 3 + 1  # files 2, 3, 5 have two columns; the restated file one


def test_drop_table_ends_column_rows(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_file(0, 0, 9)])
    catalog.drop_table("ns", "t")
    with catalog.engine.connect() as c:
        n = c.execute(text("SELECT count(*) FROM ducklake_file_column_stats WHERE end_snapshot IS NULL")).scalar_one()
    assert n == 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda f: with_columns(f, cs("x", INT64, 5, 1)), "max_value"),
        (lambda f: with_columns(f, cs("x"), cs("x")), "column"),
        (lambda f: with_columns(f, cs("v")), "column"),
        (lambda f: with_columns(f, cs("x", INT64, 1, 2, values=0)), "min_value"),
        (lambda f: with_columns(f, cs("x", INT64, nan=True)), "contains_nan"),
        (lambda f: with_columns(f, cs("x", INT64, size=10**9)), "column_size_bytes"),
    ],
)
def test_invalid_column_rows_fail_the_whole_commit(catalog: Catalog, change: Any, field: str) -> None:
    catalog.create_table("ns", "t", ["v"])
    good = _file(0, 0, 9)
    bad = change(fs("s3://b/t/bad.parquet", ps('"a"', INT64, 0, 1)))
    with pytest.raises(InvalidStatsError) as e:
        catalog.commit("ns", "t", [good, bad])
    assert e.value.details["path"] == bad.path
    assert e.value.details["attribute"] == field
    assert catalog.get_table("ns", "t").live_file_count == 0


def test_a_file_column_named_like_a_variant_column_of_the_table_is_refused(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v", "w"])
    bad = with_columns(fs("s3://b/t/bad.parquet", ps('"a"', INT64, 0, 1)), cs("w"))
    with pytest.raises(InvalidStatsError, match="is a Variant column"):
        catalog.commit("ns", "t", [bad])


def test_idempotency_keys_tell_column_stats_apart(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    f = _file(0, 0, 9)
    catalog.commit("ns", "t", [f], idempotency_key="k")
    assert catalog.commit("ns", "t", [f], idempotency_key="k").replayed
    from service.errors import ConflictError

    with pytest.raises(ConflictError):
        catalog.commit("ns", "t", [with_columns(f, cs("x", INT64, 0, 8))], idempotency_key="k")


# --- planning on column leaves ------------------------------------------------------------------


def _column_leaf(pred: Any, column: str) -> LeafCondition:
    """The leaf a predicate on a plain column compiles to: the rules of a Variant leaf of the same
    type, read from the column's stats (variant_path None)."""
    cond = compile_expression(pred)
    assert isinstance(cond, LeafCondition)
    return dataclasses.replace(cond, column=column, variant_path=None)


def _v(path: str, t: str) -> E.VariantTerm:
    return E.variant("v", path, t)


def _random_leaf(rng: random.Random, column: str, t: str) -> LeafCondition:
    term = _v("$.a", t)
    if t == "bigint":
        lit: Any = rng.randint(-5, 130)
        points: list[Any] = [rng.randint(0, 130) for _ in range(rng.randint(1, 4))]
    else:
        lit = f"n{rng.randint(0, 130):05d}"
        points = [f"n{rng.randint(0, 130):05d}" for _ in range(rng.randint(1, 4))]
    pred = rng.choice(
        [
            E.eq(term, lit),
            E.lt(term, lit),
            E.gt_eq(term, lit),
            E.not_eq(term, lit),
            E.in_(term, points),
            E.is_null(term),
            E.not_null(term),
        ]
    )
    return _column_leaf(pred, column)


def _random_condition(rng: random.Random, depth: int = 0) -> Condition:
    if depth < 2 and rng.random() < 0.5:
        kids = tuple(_random_condition(rng, depth + 1) for _ in range(rng.randint(2, 3)))
        return AllOf(kids) if rng.random() < 0.5 else AnyOf(kids)
    r = rng.random()
    if r < 0.4:
        return _random_leaf(rng, "x", "bigint")
    if r < 0.7:
        return _random_leaf(rng, "name", "string")
    # A Variant leaf beside the column leaves.
    return compile_expression(E.lt(_v("$.a", "bigint"), rng.randint(0, 130)))


def test_sql_planner_agrees_with_the_evaluator_on_column_leaves(catalog: Catalog) -> None:
    rng = random.Random(13)
    catalog.create_table("ns", "t", ["v"])
    files = []
    for i in range(40):
        lo = rng.randint(0, 120)
        hi = lo + rng.randint(0, 10)
        cols = [cs("x", INT64, lo, hi, nulls=rng.choice([0, 0, 3]))]
        if i % 7 == 3:
            cols = [cs("x", INT64, None, None, values=0, nulls=10)]  # all NULL
        if i % 9 == 4:
            cols = []  # no stats for x at all: never pruned on x
        if i % 5 != 2:
            cols.append(cs("name", VARCHAR, f"n{lo:05d}", f"n{hi:05d}"))
        files.append(with_columns(fs(f"s3://b/t/p{i:03d}.parquet", ps('"a"', INT64, lo, hi)), *cols))
    catalog.commit("ns", "t", files[:30])
    catalog.commit("ns", "t", files[30:])
    catalog.remove("ns", "t", [files[5].path])
    live = [f for f in files if f.path != files[5].path]
    pruned = 0
    with catalog.engine.connect() as conn:
        t = require_table(conn, "ns", "t")
        for _ in range(120):
            cond = _random_condition(rng)
            got = {c.path for c in plan_in(conn, t, cond, page_size=1000).candidates}
            want = {f.path for f in live if interpret(cond, stats_by_path([*f.paths, *f.columns])).might_match}
            assert got == want, cond
            pruned += len(live) - len(got)
    assert pruned > 0


def test_sql_planner_on_column_leaves_at_a_past_snapshot(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    a = with_columns(fs("s3://b/t/a.parquet", ps('"a"', INT64, 0, 1)), cs("x", INT64, 0, 9))
    b = with_columns(fs("s3://b/t/b.parquet", ps('"a"', INT64, 0, 1)), cs("x", INT64, 50, 59))
    first = catalog.commit("ns", "t", [a, b]).snapshot_id
    catalog.remove("ns", "t", [a.path])
    cond = _column_leaf(E.eq(_v("$.a", "bigint"), 5), "x")
    with catalog.engine.connect() as conn:
        t = require_table(conn, "ns", "t")
        assert [c.path for c in plan_in(conn, t, cond, snapshot_id=first).candidates] == [a.path]
        assert [c.path for c in plan_in(conn, t, cond).candidates] == []


def test_explain_reasons_read_column_stats(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_file(0, 0, 9), _file(1, 50, 59)])
    cond = _column_leaf(E.eq(_v("$.a", "bigint"), 55), "x")
    with catalog.engine.connect() as conn:
        t = require_table(conn, "ns", "t")
        res = plan_in(conn, t, cond, explain=True)
    assert [c.path for c in res.candidates] == [_file(1, 50, 59).path]
    reasons = {x.path: (x.kept, x.reason) for x in res.explain or ()}
    assert reasons[_file(0, 0, 9).path][0] is False
    assert "kept by the SQL layer" not in reasons[_file(1, 50, 59).path][1]


def test_an_unknown_column_is_named_with_every_column_of_the_table(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_file(0, 0, 9)])
    with pytest.raises(UnknownColumnError) as e:
        catalog.plan("ns", "t", E.eq(E.variant("w", "$.a", "bigint"), 1))
    assert e.value.details["column"] == "w"
    assert e.value.details["columns"] == ["v", "x", "name"]
    assert "x, name" in e.value.message


def test_table_schema_lists_plain_columns_with_types(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_file(0, 0, 9)])
    schema = catalog.table_schema("ns", "t")
    assert schema.variant_columns == ("v",)
    assert {n: (c.type, c.partition) for n, c in schema.columns.items()} == {
        "x": (INT64, False),
        "name": (VARCHAR, False),
    }
    assert catalog.table_schema("ns", "t") is schema  # cached for the snapshot
    catalog.commit("ns", "t", [_file(1, 0, 9)])
    assert catalog.table_schema("ns", "t") is not schema


# --- refresh of tables committed before schema 0003 -----------------------------------------------


def test_refresh_fills_columns_of_files_committed_at_0002(empty_db_url: str) -> None:
    """A catalog at 0002 with files (made at head and taken down: the head library cannot write
    0002), upgraded: ``refresh`` adds the files' column rows in place, once, without a snapshot."""
    from service.catalog.db import downgrade, upgrade_to_head

    upgrade_to_head(empty_db_url)
    files = [_file(i, i * 10, i * 10 + 9) for i in range(4)]
    bare = [dataclasses.replace(f, columns=()) for f in files]
    with Catalog(empty_db_url) as cat:
        cat.create_table("ns", "t", ["v"])
        first = cat.commit("ns", "t", bare[:2]).snapshot_id
        cat.commit("ns", "t", bare[2:])
        cat.remove("ns", "t", [bare[3].path])
    downgrade(empty_db_url, "0002")
    upgrade_to_head(empty_db_url)
    by_path = {f.path: f for f in files}
    with Catalog(empty_db_url) as cat:
        before = cat.get_table("ns", "t")
        assert [c.kind for c in before.columns] == ["variant"]
        r = cat.refresh("ns", "t", by_path.__getitem__)
        assert (r.read, r.refreshed, r.without_columns) == (3, 3, 0)
        after = cat.get_table("ns", "t")
        assert after.current_snapshot_id == before.current_snapshot_id  # in place
        assert [(c.name, c.kind) for c in after.columns] == [("v", "variant"), ("x", "plain"), ("name", "plain")]
        for f in files[:3]:
            assert cat.file_stats("ns", "t", f.path).columns == f.columns
        assert_consistent(cat, "ns", "t")
        # The rows begin with their files: a plan at the first snapshot prunes on them too.
        cond = _column_leaf(E.eq(_v("$.a", "bigint"), 15), "x")
        with cat.engine.connect() as conn:
            t = require_table(conn, "ns", "t")
            assert [c.path for c in plan_in(conn, t, cond, snapshot_id=first).candidates] == [files[1].path]
        again = cat.refresh("ns", "t", by_path.__getitem__)
        assert (again.read, again.refreshed) == (0, 0)


def test_refresh_refuses_a_changed_file_and_writes_nothing(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    files = [dataclasses.replace(_file(i, 0, 9), columns=()) for i in range(2)]
    catalog.commit("ns", "t", files)
    changed = {f.path: _file(i, 0, 9) for i, f in enumerate(files)}
    changed[files[1].path] = dataclasses.replace(changed[files[1].path], file_size_bytes=999_999)
    from service.errors import ConflictError

    with pytest.raises(ConflictError, match="changed since it was committed"):
        catalog.refresh("ns", "t", changed.__getitem__)
    assert all(not catalog.file_stats("ns", "t", f.path).columns for f in files)
