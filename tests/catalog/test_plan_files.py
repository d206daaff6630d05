"""``AdminReads.plan_files``: every live file with the plan's decision and a short reason, filtered
(all, kept, skipped) and paged by offset, on both backends, against ``Catalog.plan``."""

from __future__ import annotations

import pytest

from service.catalog import Catalog
from service.catalog.admin import admin_reads
from service.errors import BadInputError, NotFoundError, UnknownColumnError
from service.pruning.parse_sql import parse_sql
from service.stats.model import FileStats, PathStats
from service.values import ShreddedType

INT64 = ShreddedType.parse("int64")
VARCHAR = ShreddedType.parse("varchar")


def _file(i: int) -> FileStats:
    # File i holds ids [100 i, 100 i + 99]; every 7th file stores "name" as int64 (a conflict).
    name = PathStats("v", '"name"', INT64 if i % 7 == 0 else VARCHAR, 10, 10, 0, *((i, i) if i % 7 == 0 else (f"a{i:03d}", f"b{i:03d}")), None)
    return FileStats(
        f"/lake/t/part-{i:03d}.parquet", 1000 + i, 10, 100, f"etag-{i}", ("v",),
        (PathStats("v", '"id"', INT64, 10, 10, 0, 100 * i, 100 * i + 99, None), name),
    )


@pytest.fixture
def table(catalog: Catalog) -> Catalog:
    catalog.create_table("lake", "t", ["v"])
    catalog.commit("lake", "t", [_file(i) for i in range(0, 30)])
    catalog.commit("lake", "t", [_file(i) for i in range(30, 45)])
    return catalog


def _all(cat: Catalog, sql: str, decision: str, limit: int, **kw: object) -> list:
    out, offset = [], 0
    while True:
        page = admin_reads(cat).plan_files("lake", "t", parse_sql(sql), decision=decision, offset=offset, limit=limit, **kw)  # type: ignore[arg-type]
        out.extend(page.files)
        assert page.offset == offset and len(page.files) <= limit
        if not page.has_more:
            return out
        assert len(page.files) == limit
        offset += limit


@pytest.mark.parametrize(
    "sql",
    [
        "variant_get(v, '$.id', 'bigint') BETWEEN 250 AND 1210",
        "variant_get(v, '$.id', 'bigint') = 4200",
        "variant_get(v, '$.name', 'string') = 'a010'",
        "variant_get(v, '$.id', 'bigint') < 0 OR variant_get(v, '$.name', 'string') = 'zzz'",
    ],
)
def test_pages_cover_every_live_file_once_with_the_plans_decision(table: Catalog, sql: str) -> None:
    plan = table.plan("lake", "t", parse_sql(sql), page_size=1000)
    kept = {c.path for c in plan.candidates}
    every = _all(table, sql, "all", 8)
    assert [f.data_file_id for f in every] == sorted(f.data_file_id for f in every)
    assert len(every) == len({f.path for f in every}) == plan.files_considered == 45
    assert {f.path for f in every if f.kept} == kept
    assert [f.path for f in _all(table, sql, "kept", 7)] == [f.path for f in every if f.kept]
    assert [f.path for f in _all(table, sql, "skipped", 7)] == [f.path for f in every if not f.kept]
    for f in every:
        assert f.reason and "variant_get" not in f.reason  # words, not the predicate again
        assert f.record_count == 10 and f.file_size_bytes >= 1000


def test_reasons_in_words(table: Catalog) -> None:
    files = _all(table, "variant_get(v, '$.id', 'bigint') = 4200", "all", 100)
    by_name = {f.path.rsplit("/", 1)[1]: f for f in files}
    assert by_name["part-000.parquet"].reason == "max 99 < 4200" and not by_name["part-000.parquet"].kept
    assert by_name["part-042.parquet"].reason == "bounds [4200, 4299] admit it" and by_name["part-042.parquet"].kept
    assert by_name["part-043.parquet"].reason == "min 4300 > 4200"
    # A string range (equality would compare with an integer's text: comparable).
    mistyped = _all(table, "variant_get(v, '$.name', 'string') > 'a010'", "all", 100)
    conflict = next(f for f in mistyped if f.path.endswith("part-007.parquet"))
    assert conflict.kept and conflict.reason == "path stored as int64, asked as string: not comparable"
    two = _all(table, "variant_get(v, '$.id', 'bigint') = 4200 OR variant_get(v, '$.name', 'string') >= 'zzz'", "skipped", 100)
    assert two[0].path.endswith("part-001.parquet")  # part-000 stores "name" as int64: kept
    assert two[0].reason == "$.id: max 199 < 4200; $.name: max b001 < zzz"


def test_past_snapshot_offsets_and_errors(table: Catalog) -> None:
    first = admin_reads(table).recent_snapshots(limit=10)
    at = min(s.snapshot_id for s in first if s.added_files)
    sql = "variant_get(v, '$.id', 'bigint') >= 0"
    assert len(_all(table, sql, "all", 10, snapshot_id=at)) == 30
    beyond = admin_reads(table).plan_files("lake", "t", parse_sql(sql), offset=45, limit=10)
    assert beyond.files == () and not beyond.has_more
    with pytest.raises(BadInputError):
        admin_reads(table).plan_files("lake", "t", parse_sql(sql), decision="maybe")  # type: ignore[arg-type]
    with pytest.raises(BadInputError):
        admin_reads(table).plan_files("lake", "t", parse_sql(sql), offset=-1)
    with pytest.raises(BadInputError):
        admin_reads(table).plan_files("lake", "t", parse_sql(sql), limit=0)
    with pytest.raises(UnknownColumnError):
        admin_reads(table).plan_files("lake", "t", parse_sql("variant_get(w, '$.id', 'bigint') = 1"))
    with pytest.raises(NotFoundError):
        admin_reads(table).plan_files("lake", "t", parse_sql(sql), snapshot_id=10**6)


@pytest.mark.parametrize("decision", ["all", "kept", "skipped"])
def test_with_plan_carries_the_plans_counts_and_warnings(table: Catalog, decision: str) -> None:
    sql = "variant_get(v, '$.id', 'bigint') BETWEEN 250 AND 1210 AND variant_get(v, '$.id.d', 'bigint') = 1"  # a warning
    plan = table.plan("lake", "t", parse_sql(sql), page_size=1, counts=True)
    page = admin_reads(table).plan_files("lake", "t", parse_sql(sql), decision=decision, limit=4, with_plan=True)  # type: ignore[arg-type]
    assert page.plan is not None and page.plan.warnings and page.plan.warnings == plan.warnings
    counts = ("files_considered", "files_kept", "files_pruned", "rows_skipped", "bytes_skipped", "snapshot_id")
    assert [getattr(page.plan, c) for c in counts] == [getattr(plan, c) for c in counts]
    alone = admin_reads(table).plan_files("lake", "t", parse_sql(sql), decision=decision, limit=4)  # type: ignore[arg-type]
    assert alone.plan is None and page.files == alone.files and page.offset == 0
    # An offset past the selected files moves back to the start of their last page.
    selected = {"all": plan.files_considered, "kept": plan.files_kept, "skipped": plan.files_pruned}[decision] or 0
    last = admin_reads(table).plan_files("lake", "t", parse_sql(sql), decision=decision, offset=10**6, limit=4, with_plan=True)  # type: ignore[arg-type]
    assert last.offset == max(0, (selected - 1) // 4 * 4) and not last.has_more
    assert len(last.files) == (selected - last.offset if selected else 0)
