"""Hive partition values in the catalog, on both backends: read from the paths at commit, the
table's partition columns (inferred and merged as Spark does, or declared), Spark's "conflicting
partition column names", the table location, NULL partitions, and planning on partition leaves
(a file whose value is stored as another type than the column's is kept, never pruned)."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest

from service.catalog import Catalog
from service.catalog.admin import admin_reads
from service.catalog.repository import require_table
from service.errors import BadInputError, InvalidStatsError, UnknownColumnError
from service.pruning import expressions as E
from service.pruning.conditions import LeafCondition, compile_expression
from service.pruning.evaluator import interpret, stats_by_path
from service.pruning.parse_sql import parse_sql
from service.values import ShreddedType
from tests.catalog.factories import INT32, INT64, VARCHAR, assert_consistent, cs, fs, ps, with_columns

DATE = ShreddedType.parse("date")


def _f(path: str, lo: int = 0, hi: int = 9, **kw: Any) -> Any:
    return with_columns(fs(path, ps('"a"', INT64, lo, hi), **kw), cs("x", INT64, lo, hi))


def _leaf(pred: Any, column: str) -> LeafCondition:
    cond = compile_expression(pred)
    assert isinstance(cond, LeafCondition)
    # A column reads its own type: no Variant cast rule (a string equality served by integer bounds).
    return dataclasses.replace(cond, column=column, variant_path=None, derived=())


def _plan(cat: Catalog, cond: Any, **kw: Any) -> list[str]:
    from service.catalog.planner import plan_in

    with cat.engine.connect() as conn:
        t = require_table(conn, "ns", "t")
        schema = cat.table_schema("ns", "t")
        types = {n: c.type for n, c in schema.columns.items() if c.partition}
        return sorted(c.path for c in plan_in(conn, t, cond, partition_types=types, **kw).candidates)


def test_partition_values_come_from_the_paths(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    files = [_f(f"s3://b/t/day=2024-01-0{d}/region=eu/f{d}.parquet", d, d + 5) for d in range(1, 4)]
    catalog.commit("ns", "t", files)
    info = catalog.get_table("ns", "t")
    assert [(c.name, c.type, c.kind) for c in info.columns] == [
        ("v", "variant", "variant"),
        ("x", "int64", "plain"),
        ("day", "date", "partition"),
        ("region", "varchar", "partition"),
    ]
    assert info.partition_columns == ("day", "region")
    got = catalog.file_stats("ns", "t", files[1].path)
    assert [(p.column, p.raw, p.value_type.name) for p in got.partitions] == [
        ("day", "2024-01-02", "date"),
        ("region", "eu", "varchar"),
    ]
    assert [c.column for c in got.columns] == ["x"]  # partition rows are not plain columns
    assert_consistent(catalog, "ns", "t")
    # Pruning on the partition column, alone and with a Variant leaf.
    day = _leaf(E.eq(E.variant("v", "$.a", "date"), "2024-01-02"), "day")
    assert _plan(catalog, day) == [files[1].path]
    catalog.remove("ns", "t", [files[1].path])
    assert _plan(catalog, day) == []
    assert_consistent(catalog, "ns", "t")


@pytest.mark.parametrize(
    ("paths", "match"),
    [
        (["s3://b/t/day=1/f0.parquet", "s3://b/t/region=eu/f1.parquet"], "conflicting partition column names"),
        (["s3://b/t/day=1/f0.parquet", "s3://b/t/f1.parquet"], "conflicting partition column names"),
        (["s3://b/t/a=1/b=2/f0.parquet", "s3://b/t/b=2/a=1/f1.parquet"], "conflicting partition column names"),
    ],
)
def test_conflicting_partition_columns_in_one_commit(catalog: Catalog, paths: list[str], match: str) -> None:
    catalog.create_table("ns", "t", ["v"])
    with pytest.raises(InvalidStatsError, match=match) as e:
        catalog.commit("ns", "t", [_f(p) for p in paths])
    assert e.value.http_status == 422
    assert catalog.get_table("ns", "t").live_file_count == 0
    assert catalog.get_table("ns", "t").partition_columns == ()


def test_a_data_column_named_like_a_partition_column_is_read_from_the_path(catalog: Catalog, tmp_path: Any) -> None:
    """Spark reads ``p`` from ``p=1/`` even when the file has a column ``p`` (of other values): the
    file registers, typed and pruned by the directory's value, its own column's stats unused."""
    import duckdb

    f = tmp_path / "t" / "p=1" / "f.parquet"
    f.parent.mkdir(parents=True)
    duckdb.sql(f"COPY (SELECT {{'a': i}}::VARIANT AS v, 5 AS p, i AS id FROM range(3) t(i)) TO '{f}' (FORMAT parquet)")
    catalog.register("ns", "t", [str(f)])
    kinds = {c.name: (c.type, c.kind) for c in catalog.get_table("ns", "t").columns}
    assert kinds["p"] == ("int32", "partition") and kinds["id"] == ("int64", "plain")

    def plan(sql: str) -> list[str]:
        return [c.path for c in catalog.iter_candidates("ns", "t", lambda schema: parse_sql(sql, schema=schema))]

    assert plan("p = 1") == [str(f)] and plan("p = 5") == []
    # Names are matched as Spark matches them, case-insensitively: `P` in the file is `p=1/` too.
    g = tmp_path / "u" / "p=1" / "g.parquet"
    g.parent.mkdir(parents=True)
    duckdb.sql(f"COPY (SELECT {{'a': i}}::VARIANT AS v, 5 AS P, i AS id FROM range(3) t(i)) TO '{g}' (FORMAT parquet)")
    catalog.register("ns", "u", [str(g)])
    assert sorted(c.name for c in catalog.get_table("ns", "u").columns) == ["id", "p", "v"]
    assert [c.path for c in catalog.iter_candidates("ns", "u", lambda schema: parse_sql("P = 1", schema=schema))] == [str(g)]


def test_a_file_must_have_the_tables_partition_columns(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    catalog.commit("ns", "t", [_f("s3://b/t/day=2024-01-01/f0.parquet")])
    for bad in ("s3://b/t/f1.parquet", "s3://b/t/region=eu/f1.parquet", "s3://b/t/day=2024-01-01/k=1/f1.parquet"):
        with pytest.raises(InvalidStatsError, match="conflicting partition column names"):
            catalog.commit("ns", "t", [_f(bad)])
    # And an unpartitioned table takes no partitioned file.
    catalog.create_table("ns", "u", ["v"])
    catalog.commit("ns", "u", [_f("s3://b/u/f0.parquet")])
    with pytest.raises(InvalidStatsError, match="conflicting partition column names"):
        catalog.commit("ns", "u", [_f("s3://b/u/day=1/f1.parquet")])


def _sql(cat: Catalog, sql: str, **kw: Any) -> list[str]:
    res = cat.plan("ns", "t", lambda schema: parse_sql(sql, schema=schema), **kw)
    return sorted(c.path for c in res.candidates)


def test_replacing_every_live_file_may_change_the_layout(catalog: Catalog) -> None:
    """Spark's overwrite with another ``partitionBy``: the commit that removes every live file
    may bring other partition columns. The old ones end at that snapshot (a predicate on them is
    an unknown column), the new ones are inferred from the new files, one snapshot in all."""
    catalog.create_table("ns", "t", ["v"])
    old = [_f(f"s3://b/t/day=2024-01-0{d}/region=eu/f{d}.parquet", d, d + 5) for d in range(1, 3)]
    first = catalog.commit("ns", "t", old).snapshot_id
    # Keeping one old file keeps the layout binding.
    new = [_f(f"s3://b/t/region=eu/hr={h}/g{h}.parquet", 10 * h, 10 * h + 5) for h in (3, 4)]
    with pytest.raises(InvalidStatsError, match="conflicting partition column names"):
        catalog.commit("ns", "t", new, remove=[old[0].path])
    assert catalog.get_table("ns", "t").partition_columns == ("day", "region")
    res = catalog.commit("ns", "t", new, remove=[f.path for f in old])
    assert res.removed == tuple(f.path for f in old)
    info = catalog.get_table("ns", "t")
    assert info.partition_columns == ("region", "hr")
    assert [(c.name, c.type, c.kind) for c in info.columns] == [
        ("v", "variant", "variant"),
        ("x", "int64", "plain"),
        ("region", "varchar", "partition"),
        ("hr", "int32", "partition"),
    ]
    assert _sql(catalog, "hr = 4") == [new[1].path]
    assert _sql(catalog, "region = 'eu' AND x >= 40") == [new[1].path]
    with pytest.raises(UnknownColumnError, match="day"):
        _sql(catalog, "day = DATE '2024-01-01'")
    # History is kept: the old files answer at the old snapshot (on their Variant and plain stats).
    assert _sql(catalog, "variant_get(v, '$.a', 'bigint') = 2", snapshot_id=first) == [old[0].path, old[1].path]
    assert _sql(catalog, "x = 7", snapshot_id=first) == [old[1].path]
    # The old files have no value of the new columns: never pruned on them.
    assert _sql(catalog, "hr = 4", snapshot_id=first) == [old[0].path, old[1].path]
    assert _sql(catalog, "hr IS NULL OR hr IS NOT NULL", snapshot_id=first) == [old[0].path, old[1].path]
    # At that snapshot the old layout's columns are the table's: the ended day and the old region.
    assert _sql(catalog, "day = DATE '2024-01-01'", snapshot_id=first) == [old[0].path]
    assert _sql(catalog, "day > '2024-01-01' AND region = 'eu'", snapshot_id=first) == [old[1].path]
    assert _sql(catalog, "hr = 4 AND region = 'us'", snapshot_id=first) == []
    assert catalog.table_schema("ns", "t").columns["region"].partition  # the current schema is unchanged
    # Paged: the token's snapshot decides the columns of later pages too.
    page = catalog.plan("ns", "t", lambda schema: parse_sql("day >= '2024-01-01'", schema=schema), snapshot_id=first, page_size=1)
    assert page.next_page_token is not None
    rest = catalog.plan("ns", "t", lambda schema: parse_sql("day >= '2024-01-01'", schema=schema), page_size=1, page_token=page.next_page_token)
    assert [c.path for c in (*page.candidates, *rest.candidates)] == [old[0].path, old[1].path]
    files = admin_reads(catalog).plan_files("ns", "t", lambda schema: parse_sql("day = '2024-01-02'", schema=schema), snapshot_id=first)
    assert [(f.path, f.kept) for f in files.files] == [(old[0].path, False), (old[1].path, True)]
    # And the new layout binds the next commits.
    with pytest.raises(InvalidStatsError, match="conflicting partition column names"):
        catalog.commit("ns", "t", [_f("s3://b/t/day=2024-01-09/region=eu/f9.parquet")])
    assert_consistent(catalog, "ns", "t")


def test_an_ended_partition_column_with_nulls_keeps_its_type_at_past_snapshots(catalog: Catalog) -> None:
    """A NULL partition value (``__HIVE_DEFAULT_PARTITION__``) has no type but is stored under
    varchar: an ended column's type is merged over the types that held a value, so it stays an
    int at the past snapshot and prunes there as it did then."""
    catalog.create_table("ns", "t", ["v"])
    old = [_f("s3://b/t/n=1/f1.parquet"), _f("s3://b/t/n=__HIVE_DEFAULT_PARTITION__/f2.parquet"), _f("s3://b/t/n=3/f3.parquet")]
    first = catalog.commit("ns", "t", old).snapshot_id
    assert _sql(catalog, "n = 3") == [old[2].path]  # live: the NULL's type is no type
    catalog.commit("ns", "t", [_f("s3://b/t/k=1/g.parquet")], remove=[f.path for f in old])
    assert _sql(catalog, "n = 3", snapshot_id=first) == [old[2].path]
    assert _sql(catalog, "n IS NULL", snapshot_id=first) == [old[1].path]
    assert _sql(catalog, "n > 1", snapshot_id=first) == [old[2].path]
    with pytest.raises(UnknownColumnError, match="'n'"):
        _sql(catalog, "n = 3")


def test_a_past_snapshot_types_a_partition_column_as_its_files_then_did(catalog: Catalog) -> None:
    """``p=1`` and ``p=abc``: Spark reads ``p`` as a string, so ``p > '05'`` holds for the file
    ``p=1`` ('1' > '05'). Once ``p=abc`` is removed the live files make ``p`` an int, but a plan
    at the first snapshot must still keep ``p=1``: typed by the files live then, never by
    today's files."""
    catalog.create_table("ns", "t", ["v"])
    one, text = _f("s3://b/t/p=1/f1.parquet"), _f("s3://b/t/p=abc/f2.parquet")
    first = catalog.commit("ns", "t", [one, text]).snapshot_id
    assert _sql(catalog, "p > '05'") == [one.path, text.path]
    catalog.remove("ns", "t", [text.path])
    assert catalog.table_schema("ns", "t").columns["p"].type == INT32  # today: an int
    assert _sql(catalog, "p > '05'") == []  # 1 > 5 is false: right for today's files
    assert _sql(catalog, "p > '05'", snapshot_id=first) == [one.path, text.path]


def test_a_past_snapshot_is_not_typed_by_a_later_files_values(catalog: Catalog) -> None:
    """``p=05`` and ``p=5``: Spark reads ``p`` as an int, where both equal '5'. A later ``p=a``
    makes ``p`` a string today, but a plan at the first snapshot reads it as the int its files
    then made it (typed by every type ever stored, it read a string: the DuckDB read of that
    snapshot lost the ``p=05`` row, tests/spark/test_partitions_spark.py)."""
    catalog.create_table("ns", "t", ["v"])
    padded, five = _f("s3://b/t/p=05/f1.parquet"), _f("s3://b/t/p=5/f2.parquet")
    first = catalog.commit("ns", "t", [padded, five]).snapshot_id
    catalog.commit("ns", "t", [_f("s3://b/t/p=a/f3.parquet")])
    assert catalog.table_schema("ns", "t").columns["p"].type == VARCHAR  # today: a string
    assert _sql(catalog, "p = '5'", snapshot_id=first) == [padded.path, five.path]
    # As ints, 05 = 5 too: both files pruned (as strings, '05' <> '5' would keep p=05).
    assert _sql(catalog, "p <> '5'", snapshot_id=first) == []
    # The plan's first page says so (a REST reader of that snapshot types the files by it); a
    # follow-up page says nothing.
    def plan(**kw: Any) -> Any:
        return catalog.plan("ns", "t", lambda schema: parse_sql("p IS NOT NULL", schema=schema), page_size=1, **kw)

    page = plan(snapshot_id=first)
    assert page.partition_types == {"p": "int32"} and plan().partition_types == {"p": "varchar"}
    assert page.next_page_token is not None and plan(page_token=page.next_page_token).partition_types is None


def test_pages_keep_the_first_pages_partition_types_across_a_commit(catalog: Catalog) -> None:
    """A commit between pages may change an inferred partition type (here int to string, and the
    first page's snapshot becomes a past one): later pages read the predicate with the types the
    first page was planned with, so the token stays valid and the pages make one answer."""
    catalog.create_table("ns", "t", ["v"])
    files = [_f(f"s3://b/t/p={v}/f{i}.parquet") for i, v in enumerate(["1", "2", "3", "__HIVE_DEFAULT_PARTITION__", "4"])]
    catalog.commit("ns", "t", files)

    def plan(**kw: Any) -> Any:
        return catalog.plan("ns", "t", lambda schema: parse_sql("p > 1", schema=schema), page_size=1, **kw)

    first = plan()
    catalog.commit("ns", "t", [_f("s3://b/t/p=abc/f9.parquet")])
    assert catalog.table_schema("ns", "t").columns["p"].type == VARCHAR  # now a string column
    got = [c.path for c in first.candidates]
    token = first.next_page_token
    while token is not None:
        page = plan(page_token=token)
        got += [c.path for c in page.candidates]
        token = page.next_page_token
    assert got == [files[1].path, files[2].path, files[4].path]  # 2, 3, 4 as ints, at the first snapshot
    # A token whose types were tampered with is refused, not used.
    from service.pagetoken import decode, encode

    doc = decode(first.next_page_token or "", ValueError())
    with pytest.raises(BadInputError, match="invalid page token"):
        plan(page_token=encode({**doc, "pt": {"p": "not-a-type"}}))


def test_a_replacement_may_swap_plain_and_partition_columns_or_drop_the_layout(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    old = [_f(f"s3://b/t/day={d}/f{d}.parquet", d, d) for d in (1, 2)]  # plain x, partition day
    first_snap = catalog.commit("ns", "t", old).snapshot_id
    # Now partitioned by x, with day a plain column of the files.
    swapped = [
        with_columns(fs(f"s3://b/t/x={k}/g{k}.parquet", ps('"a"', INT64, k, k)), cs("day", INT32, k, k + 1))
        for k in (5, 6)
    ]
    catalog.commit("ns", "t", swapped, remove=[f.path for f in old])
    info = catalog.get_table("ns", "t")
    assert {c.name: c.kind for c in info.columns} == {"v": "variant", "day": "plain", "x": "partition"}
    assert _sql(catalog, "x = 6") == [swapped[1].path]
    assert _sql(catalog, "day = 5") == [swapped[0].path]  # day 5..6 in the first file, 6..7 in the second
    # At the first snapshot x is the plain column it was, day the partition column.
    assert _sql(catalog, "x = 2 AND day = 2", snapshot_id=first_snap) == [old[1].path]
    # Then no partitions at all.
    flat = [with_columns(fs("s3://b/t/h0.parquet", ps('"a"', INT64, 1, 1)), cs("day", INT32, 1, 1))]
    catalog.commit("ns", "t", flat, remove=[f.path for f in swapped])
    assert catalog.get_table("ns", "t").partition_columns == ()
    with pytest.raises(UnknownColumnError, match="x"):
        _sql(catalog, "x = 6")
    assert_consistent(catalog, "ns", "t")


def test_an_emptied_table_takes_a_new_layout_unless_it_is_declared(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    f0 = _f("s3://b/t/day=2024-01-01/f0.parquet")
    catalog.commit("ns", "t", [f0])
    catalog.remove("ns", "t", [f0.path])
    catalog.commit("ns", "t", [_f("s3://b/t/k=1/f1.parquet")])
    assert catalog.get_table("ns", "t").partition_columns == ("k",)
    assert_consistent(catalog, "ns", "t")
    # A declared layout is the table's own: a full replacement must keep it.
    catalog.create_table("ns", "d", ["v"], partition_columns={"day": "date"})
    d0 = _f("s3://b/d/day=2024-01-01/f0.parquet")
    catalog.commit("ns", "d", [d0])
    with pytest.raises(InvalidStatsError, match="conflicting partition column names"):
        catalog.commit("ns", "d", [_f("s3://b/d/k=1/f1.parquet")], remove=[d0.path])
    assert catalog.get_table("ns", "d").live_file_count == 1
    assert catalog.get_table("ns", "d").partition_columns == ("day",)


def test_undeclared_types_merge_and_other_types_are_kept(catalog: Catalog) -> None:
    """``n=1`` is an int, ``n=3000000000`` a bigint, ``n=abc`` a string: the column's type is
    Spark's merge over the live files; a file whose value is stored as a type the merged type does
    not read exactly is never pruned on it."""
    catalog.create_table("ns", "t", ["v"])
    small = _f("s3://b/t/n=1/f0.parquet")
    big = _f("s3://b/t/n=3000000000/f1.parquet")
    catalog.commit("ns", "t", [small, big])
    assert catalog.table_schema("ns", "t").columns["n"].type == INT64
    eq1 = _leaf(E.eq(E.variant("v", "$.a", "bigint"), 1), "n")
    assert _plan(catalog, eq1) == [small.path]  # int32 values serve a bigint column
    text = _f("s3://b/t/n=abc/f2.parquet")
    catalog.commit("ns", "t", [text])
    assert catalog.table_schema("ns", "t").columns["n"].type == VARCHAR
    assert {c.name: c.type for c in catalog.get_table("ns", "t").columns}["n"] == "varchar"
    eq_abc = _leaf(E.eq(E.variant("v", "$.a", "string"), "abc"), "n")
    # Only the string file can be judged: the int files are kept.
    assert _plan(catalog, eq_abc) == sorted([small.path, big.path, text.path])
    eq_zzz = _leaf(E.eq(E.variant("v", "$.a", "string"), "zzz"), "n")
    assert _plan(catalog, eq_zzz) == sorted([small.path, big.path])
    # Removing the string file makes the column bigint again.
    catalog.remove("ns", "t", [text.path])
    assert catalog.table_schema("ns", "t").columns["n"].type == INT64
    assert_consistent(catalog, "ns", "t")


def test_declared_partition_types_and_location(catalog: Catalog) -> None:
    catalog.create_table(
        "ns", "t", ["v"], partition_columns={"n": "int64", "day": "varchar"}, location="s3://b/env=prod/t"
    )
    f = _f("s3://b/env=prod/t/n=5/day=2024-01-01/f0.parquet")
    catalog.commit("ns", "t", [f])
    got = catalog.file_stats("ns", "t", f.path)
    assert [(p.column, p.value_type, p.value) for p in got.partitions] == [("n", INT64, 5), ("day", VARCHAR, "2024-01-01")]
    info = catalog.get_table("ns", "t")
    assert [(c.name, c.type, c.declared) for c in info.columns if c.kind == "partition"] == [
        ("n", "int64", True),
        ("day", "varchar", True),
    ]
    with pytest.raises(InvalidStatsError, match="not a valid int64"):
        catalog.commit("ns", "t", [_f("s3://b/env=prod/t/n=abc/day=x/f1.parquet")])
    with pytest.raises(InvalidStatsError, match="not inside the table location"):
        catalog.commit("ns", "t", [_f("s3://b/elsewhere/n=1/day=x/f1.parquet")])
    assert catalog.get_table("ns", "t").live_file_count == 1
    assert_consistent(catalog, "ns", "t")


def test_null_partitions(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    null = _f("s3://b/t/k=__HIVE_DEFAULT_PARTITION__/f0.parquet")
    one = _f("s3://b/t/k=1/f1.parquet")
    catalog.commit("ns", "t", [null, one])
    assert catalog.file_stats("ns", "t", null.path).partitions[0].raw is None
    assert catalog.table_schema("ns", "t").columns["k"].type == INT32  # NULL takes no part
    term = E.variant("v", "$.a", "int")
    assert _plan(catalog, _leaf(E.is_null(term), "k")) == [null.path]
    assert _plan(catalog, _leaf(E.not_null(term), "k")) == [one.path]
    assert _plan(catalog, _leaf(E.eq(term, 1), "k")) == [one.path]


def test_sql_planner_agrees_with_the_evaluator_on_partition_leaves(catalog: Catalog) -> None:
    rng = random.Random(5)
    catalog.create_table("ns", "t", ["v"])
    files = [
        _f(f"s3://b/t/day=2024-01-{1 + i % 20:02d}/h={i % 24}/f{i:03d}.parquet", i, i + rng.randint(0, 9))
        for i in range(60)
    ]
    catalog.commit("ns", "t", files)
    stored = {f.path: catalog.file_stats("ns", "t", f.path) for f in files}
    from service.storage.partitions import partition_stats

    for _ in range(60):
        day = f"2024-01-{rng.randint(1, 21):02d}"
        preds = [
            _leaf(E.eq(E.variant("v", "$.a", "date"), day), "day"),
            _leaf(E.gt_eq(E.variant("v", "$.a", "date"), day), "day"),
            _leaf(E.in_(E.variant("v", "$.a", "int"), [rng.randint(0, 30) for _ in range(3)]), "h"),
            _leaf(E.lt(E.variant("v", "$.a", "bigint"), rng.randint(0, 70)), "x"),
        ]
        from service.pruning.conditions import AllOf, AnyOf

        cond = rng.choice([preds[0], preds[2], AllOf((preds[0], preds[3])), AnyOf((preds[1], preds[2]))])
        got = _plan(catalog, cond)
        want = sorted(
            p
            for p, s in stored.items()
            if interpret(
                cond,
                stats_by_path([*s.paths, *s.columns, *(partition_stats(v, s.record_count) for v in s.partitions)]),
            ).might_match
        )
        assert got == want, cond


def test_a_nan_partition_is_committed_and_never_pruned_by_a_bound(catalog: Catalog) -> None:
    """Spark reads `score=NaN` as a double NaN: the file commits (its partition row has no
    bounds and contains_nan) instead of failing the whole commit, reads back as NaN, and stays a
    candidate wherever NaN might match (`score > 1.0`: NaN is larger than any number in Spark)."""
    from service.pruning.parse_sql import parse_sql

    catalog.create_table("ns", "t", ["v"])
    files = [_f("s3://b/t/score=NaN/f0.parquet"), _f("s3://b/t/score=1.5/f1.parquet")]
    catalog.commit("ns", "t", files)
    got = catalog.file_stats("ns", "t", files[0].path)
    (pv,) = got.partitions
    assert (pv.column, pv.raw, pv.value_type.name) == ("score", "NaN", "float64") and pv.value != pv.value

    def kept(sql: str) -> list[str]:
        return [c.path for c in catalog.iter_candidates("ns", "t", lambda s: parse_sql(sql, schema=s))]

    assert kept("score > 1.0") == [files[0].path, files[1].path]
    assert kept("isnan(score)") == [files[0].path]
    assert kept("score < 1.0") == [files[0].path]  # unknown bounds: kept (sound), 1.5 pruned
