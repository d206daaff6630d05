"""Absent fields through the catalog (issue 34): the objects the footer proves fully shredded are
stored with each file, read back with its stats, and used by the SQL planner (no footer read at
plan time), on SQLite and PostgreSQL. Real files (the spec-following test writer), real
extraction, the real catalog; ground truth from the rows."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from service.catalog import repository as repo
from service.catalog.admin import admin_reads
from service.catalog.planner import routes, sets
from service.catalog.planner.sql import compiled
from service.catalog.service import Catalog
from service.pruning.conditions import compile_expression
from service.pruning.conjunctions import merge_conjunctions
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from service.stats.model import FileStats, ShreddedObject
from tests.catalog.factories import INT64, fs, ps
from tests.support.shred_writer import write_shredded

WITH: dict[str, Any] = {"a": "int64", "b": {"c": "int64"}, "scoped": "boolean"}
WITHOUT: dict[str, Any] = {"a": "int64", "b": {"c": "int64"}}


def _files(tmp_path: Path) -> dict[str, FileStats]:
    """has: rows with ``scoped``; lacks: an object without it (proven); old: the same as lacks but
    committed without its objects (a file registered before migration 0010: nothing proven);
    residual: an object whose residual holds another key (nothing proven either)."""
    has = write_shredded(
        tmp_path / "has.parquet", [{"a": i, "b": {"c": i}, "scoped": i % 2 == 0} for i in range(6)], WITH
    )
    lacks = write_shredded(tmp_path / "lacks.parquet", [{"a": i, "b": {"c": i}} for i in range(6)], WITHOUT)
    old = write_shredded(tmp_path / "old.parquet", [{"a": i, "b": {"c": i}} for i in range(6)], WITHOUT)
    residual = write_shredded(
        tmp_path / "residual.parquet", [{"a": 1, "b": {"c": 1}}, {"a": 2, "scoped": True}], WITHOUT
    )
    out = {name: extract_file(str(p)) for name, p in (("has", has), ("lacks", lacks), ("residual", residual))}
    out["old"] = dataclasses.replace(extract_file(str(old)), objects=())
    return out


def _kept(catalog: Catalog, sql: str, **kw: Any) -> set[str]:
    res = catalog.plan("lake", "events", parse_sql(sql), page_size=100, **kw)
    return {Path(c.path).stem for c in res.candidates}


@pytest.fixture
def files(catalog: Catalog, tmp_path: Path) -> dict[str, FileStats]:
    fs = _files(tmp_path)
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", list(fs.values()))
    return fs


def test_objects_are_stored_and_read_back(catalog: Catalog, files: dict[str, FileStats]) -> None:
    lacks = files["lacks"]
    assert lacks.objects == (ShreddedObject("v", "root", ("a", "b")), ShreddedObject("v", '"b"', ("c",)))
    got = catalog.file_stats("lake", "events", lacks.path)
    assert got.objects == lacks.objects
    assert catalog.file_stats("lake", "events", files["old"].path).objects == ()
    assert catalog.file_stats("lake", "events", files["residual"].path).objects == ()


@pytest.mark.parametrize(
    ("sql", "kept"),
    [
        ("variant_get(v, '$.scoped', 'boolean') = true", {"has", "old", "residual"}),
        ("try_variant_get(v, '$.scoped', 'boolean') IS NOT NULL", {"has", "old", "residual"}),
        ("variant_get(v, '$.scoped.deep', 'bigint') > 3", {"has", "old", "residual"}),
        ("variant_get(v, '$.b.e', 'bigint') IN (1, 2)", {"old", "residual"}),
        # IS NULL holds in every row of a file lacking the field (has: scoped in every row).
        ("variant_get(v, '$.scoped', 'boolean') IS NULL", {"lacks", "old", "residual"}),
        ("NOT (variant_get(v, '$.scoped', 'boolean') IS NULL)", {"has", "old", "residual"}),
        # A key the proven object has is decided by its stats as before.
        ("variant_get(v, '$.a', 'bigint') = 3", {"has", "lacks", "old"}),
        # The walk over files in id order (an OR of two leaves) and the set plan agree.
        (
            "variant_get(v, '$.scoped', 'boolean') = true OR variant_get(v, '$.b.e', 'bigint') = 1",
            {"has", "old", "residual"},
        ),
        (
            "variant_get(v, '$.scoped', 'boolean') = true AND variant_get(v, '$.a', 'bigint') >= 0",
            {"has", "old", "residual"},
        ),
    ],
)
def test_the_planner_prunes_files_lacking_the_field(
    catalog: Catalog, files: dict[str, FileStats], sql: str, kept: set[str]
) -> None:
    assert _kept(catalog, sql) == kept
    # At a past snapshot (the planner's other SQL: no live counters), the same answer.
    snap = catalog.plan("lake", "events", parse_sql("true")).snapshot_id
    catalog.commit(
        "lake", "events", [dataclasses.replace(files["has"], path=files["has"].path + ".copy.parquet")]
    )
    assert _kept(catalog, sql, snapshot_id=snap) == kept


def test_explain_names_the_absent_field(catalog: Catalog, files: dict[str, FileStats]) -> None:
    res = catalog.plan(
        "lake", "events", parse_sql("variant_get(v, '$.scoped', 'boolean') = true"), explain=True
    )
    assert res.explain is not None
    why = {Path(e.path).stem: (e.kept, e.reason) for e in res.explain}
    assert why["lacks"][0] is False and "field scoped absent from every row of this file" in why["lacks"][1]
    assert why["old"][0] is True and "not fully shredded in this file" in why["old"][1]
    page = admin_reads(catalog).plan_files("lake", "events", parse_sql("variant_get(v, '$.b.e', 'bigint') = 1"))
    short = {Path(f.path).stem: f.reason for f in page.files}
    assert "field e absent from every row of this file" in short["lacks"]


def test_explain_names_a_narrowing_cast_and_its_bounds(catalog: Catalog, tmp_path: Path) -> None:
    p = write_shredded(
        tmp_path / "rank.parquet", [{"rank": r} for r in range(5000, 10_000, 7)], {"rank": "int64"}
    )
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", [extract_file(str(p))])
    res = catalog.plan("lake", "events", parse_sql("variant_get(v, '$.rank', 'int') <= 10"), explain=True)
    assert res.candidates == () and res.explain is not None
    assert "$.rank asked as int: int64 bounds [5000, 9998]" in res.explain[0].reason, res.explain[0].reason


def test_warnings_do_not_deny_pruning_on_an_absent_field(
    catalog: Catalog, files: dict[str, FileStats]
) -> None:
    res = catalog.plan("lake", "events", parse_sql("variant_get(v, '$.b.e', 'bigint') = 1"))
    assert {Path(c.path).stem for c in res.candidates} == {"old", "residual"}
    (w,) = res.warnings
    assert w.type == "path_not_shredded" and w.suggestions == ("$.b.c",)
    assert "files are pruned on it only where proven to lack it" in w.message
    assert "no file can be pruned" not in w.message
    res = catalog.plan("lake", "events", parse_sql("variant_get(v, '$.b.zz', 'bigint') = 1"), page_size=1)
    assert [w.type for w in res.warnings] == ["path_not_shredded"], res.warnings  # not "prunes nothing"


def _shape_counts(catalog: Catalog) -> dict[str, int]:
    from sqlalchemy import text

    with catalog.engine.connect() as c:
        rows = c.execute(text("SELECT object_path, fields, live_file_count FROM shredcat_object_shape"))
        return {f"{p} {f}": int(n) for p, f, n in rows}


def test_shape_counts_follow_commits_and_removals(catalog: Catalog, files: dict[str, FileStats]) -> None:
    """Once every live file's root is proven (old and residual removed), plans start from the files
    whose root has the key (the counts say the shapes cover every file); the answer is the same."""
    assert _shape_counts(catalog) == {
        'root ["a", "b", "scoped"]': 1, 'root ["a", "b"]': 1, '"b" ["c"]': 2,
    }  # fmt: skip
    catalog.remove("lake", "events", [files["old"].path, files["residual"].path])
    assert _shape_counts(catalog)['root ["a", "b"]'] == 1
    assert _kept(catalog, "variant_get(v, '$.scoped', 'boolean') = true") == {"has"}
    assert _kept(catalog, "variant_get(v, '$.b.e', 'bigint') = 1") == set()
    assert _kept(catalog, "variant_get(v, '$.scoped', 'boolean') IS NULL") == {"lacks"}
    catalog.remove("lake", "events", [files["lacks"].path])
    assert _shape_counts(catalog) == {'root ["a", "b", "scoped"]': 1, 'root ["a", "b"]': 0, '"b" ["c"]': 1}
    assert _kept(catalog, "variant_get(v, '$.scoped', 'boolean') = true") == {"has"}
    # Committed again (a new data file): counted again, pruned again.
    catalog.commit("lake", "events", [files["lacks"], files["old"]])
    assert _shape_counts(catalog)['root ["a", "b"]'] == 1
    assert _kept(catalog, "variant_get(v, '$.scoped', 'boolean') = true") == {"has", "old"}


def test_shapes_are_read_once_per_table_state(catalog: Catalog, files: dict[str, FileStats]) -> None:
    """A path's shapes are read once per state of the table (the catalog's metadata cache), by
    the plan and its warnings alike; a commit moves the state, so the next plan reads them again
    and prunes the new file lacking the field."""
    from sqlalchemy import event

    reads: list[str] = []

    def seen(conn: Any, cursor: Any, statement: str, *rest: Any) -> None:
        if "FROM shredcat_object_shape" in statement:
            reads.append(statement)

    sql = "variant_get(v, '$.scoped.deep', 'bigint') > 3"
    event.listen(catalog.engine, "before_cursor_execute", seen)
    try:
        assert _kept(catalog, sql) == {"has", "old", "residual"}
        assert len(reads) == 1
        assert _kept(catalog, sql) == {"has", "old", "residual"}
        assert len(reads) == 1
        catalog.commit("lake", "events", [dataclasses.replace(files["lacks"], path=files["lacks"].path + ".2.parquet")])
        reads.clear()
        assert _kept(catalog, sql) == {"has", "old", "residual"}
        assert len(reads) == 1
    finally:
        event.remove(catalog.engine, "before_cursor_execute", seen)


def _coupon_files() -> list[FileStats]:
    """40 files whose root object is proven (so its shapes cover every live file), ``a`` in
    [10 i, 10 i + 9]; one in ten also has a ``coupon`` key, never fully shredded (no stats row
    for it anywhere), as bench/prune.py's data."""
    return [
        dataclasses.replace(
            fs(f"s3://b/t/f{i:02d}.parquet", ps('"a"', INT64, 10 * i, 10 * i + 9)),
            objects=(ShreddedObject("v", "root", ("a", "coupon") if i % 10 == 0 else ("a",)),),
        )
        for i in range(40)
    ]


@pytest.mark.parametrize(
    ("sql", "kept", "per_candidate"),
    [
        # The driver (files 0-2; 9-12) has no more candidates than the files holding the key (4):
        # tested per candidate.
        ("variant_get(v, '$.a', 'bigint') BETWEEN 0 AND 25 AND variant_get(v, '$.coupon', 'string') IS NOT NULL", {"f00"}, True),
        ("variant_get(v, '$.a', 'bigint') BETWEEN 95 AND 125 AND variant_get(v, '$.coupon', 'string') > 'A'", {"f10"}, True),
        # A one-sided range (not counted) and a wider driver (every file): the key's files are
        # collected as a set.
        ("variant_get(v, '$.a', 'bigint') > 200 AND variant_get(v, '$.coupon', 'string') IS NOT NULL", {"f20", "f30"}, False),
        (
            "variant_get(v, '$.a', 'bigint') BETWEEN 0 AND 1000 AND variant_get(v, '$.coupon', 'string') IS NOT NULL",
            {"f00", "f10", "f20", "f30"},
            False,
        ),
    ],
)
def test_an_and_tests_an_absent_field_per_candidate_of_a_narrower_driver(
    catalog: Catalog, sql: str, kept: set[str], per_candidate: bool
) -> None:
    """The set plan of the AND (what a selective page reads) keeps the same files either way; the
    absent-field leaf is a per-candidate lookup only when the driver is the narrower side."""
    catalog.create_table("lake", "events", ["v"])
    catalog.commit("lake", "events", _coupon_files())
    cond = merge_conjunctions(compile_expression(parse_sql(sql)))
    with catalog.engine.connect() as conn:
        t = repo.require_table(conn, "lake", "events")
        page = routes.Page(sets.Planner(conn, t, t.current_snapshot_id, True), cond, [])
        assert {Path(r[1]).stem for r in routes.set_rows(page, 0, 100)} == kept
        built = compiled(conn.dialect, page.candidate_sql())[0]
    assert ("o.data_file_id = d.data_file_id" in built) is per_candidate
    assert ("d.data_file_id IN (" in built) is not per_candidate
    assert _kept(catalog, sql) == kept
    # At a past snapshot (no live counters: always the set), the same answer.
    snap = catalog.plan("lake", "events", parse_sql("true")).snapshot_id
    catalog.commit("lake", "events", [dataclasses.replace(_coupon_files()[1], path="s3://b/t/g.parquet")])
    assert _kept(catalog, sql, snapshot_id=snap) == kept
