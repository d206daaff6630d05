"""Hand-built FileStats/PathStats for the catalog tests (the extractor is tested elsewhere), and
consistency checks shared by the catalog tests."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from sqlalchemy import inspect, text

from service.catalog import Catalog, models
from service.settings import Settings
from service.stats.model import ColumnStats, FileStats, PartitionValue, PathStats
from service.values import Bound, ShreddedType

INT64 = ShreddedType.parse("int64")
INT32 = ShreddedType.parse("int32")
FLOAT64 = ShreddedType.parse("float64")
FLOAT32 = ShreddedType.parse("float32")
VARCHAR = ShreddedType.parse("varchar")
DATE = ShreddedType.parse("date")
DEC = ShreddedType.parse("decimal(38,2)")
BLOB = ShreddedType.parse("blob")

#: The default limits (the settings' defaults).
LIMITS = Settings().commit_limits

_counter = itertools.count()


def ps(
    path: str = '"a"',
    t: ShreddedType = INT64,
    lo: Bound | None = 0,
    hi: Bound | None = 10,
    *,
    column: str = "v",
    values: int = 10,
    nulls: int = 0,
    size: int = 100,
    nan: bool | str | None = "auto",
    extra: str | None = None,
) -> PathStats:
    if nan == "auto":
        nan = False if t.is_float else None
    return PathStats(
        column=column,
        variant_path=path,
        shredded_type=t,
        column_size_bytes=size,
        value_count=values,
        null_count=nulls,
        min_value=lo,
        max_value=hi,
        contains_nan=nan,  # type: ignore[arg-type]
        extra_stats=extra,
    )


def committable(p: PathStats) -> PathStats:
    """``p`` as the catalog's validator accepts it: a path with no values has no bounds and no NaN
    (the merge tests also feed such rows to the pure merge, which ignores them)."""
    if p.value_count:
        return p
    return dataclasses.replace(p, min_value=None, max_value=None, contains_nan=p.contains_nan and None)


def fs(
    path: str | None = None,
    *paths: PathStats,
    columns: Sequence[str] = ("v",),
    records: int = 10,
    size: int = 1000,
    content_id: str | None = "auto",
) -> FileStats:
    if path is None:
        path = f"s3://bucket/t/part-{next(_counter):06d}.parquet"
    return FileStats(
        path=path,
        file_size_bytes=size,
        record_count=records,
        footer_size=100,
        content_id=f"etag:{path}:{size}" if content_id == "auto" else content_id,
        variant_columns=tuple(columns),
        paths=tuple(paths),
    )


def int_file(path: str | None = None, lo: int = 0, hi: int = 10, **kw: Any) -> FileStats:
    return fs(path, ps('"a"', INT64, lo, hi), **kw)


def assert_consistent(cat: Catalog, ns: str, table: str) -> None:
    """Stored global stats == recomputation, and every counter shredcat maintains == a recount."""
    stored = cat.global_stats(ns, table)
    fresh = cat.recompute_global_stats(ns, table)
    assert stored.file_count == fresh.file_count
    assert stored.columns == fresh.columns
    assert stored.ducklake_json() == fresh.ducklake_json()
    assert cat.global_stats_json(ns, table) == fresh.ducklake_json()
    info = cat.get_table(ns, table)
    assert fresh.file_count == info.live_file_count
    with cat.engine.connect() as c:
        assert_live_counters(c, info.table_id)
        # Widths are over-estimates of every live row's width (NULL = unbounded).
        widths = {
            int(r[0]): (r[1], r[2])
            for r in c.execute(
                text(
                    "SELECT path_id, max_width_num, max_width_real FROM shredcat_variant_path WHERE table_id = :t"
                ),
                {"t": info.table_id},
            )
        }
        for pid, lo_n, hi_n, lo_r, hi_r in c.execute(
            text(
                f"SELECT path_id, min_num, max_num, min_real, max_real FROM ({_ALL_STATS}) s "
                "WHERE table_id = :t AND end_snapshot IS NULL"
            ),
            {"t": info.table_id},
        ):
            wn, wr = widths[int(pid)]
            if lo_n is not None and hi_n is not None:
                assert wn is None or hi_n - lo_n <= wn, (pid, lo_n, hi_n, wn)
            if lo_r is not None and hi_r is not None and lo_r != hi_r:
                assert wr is None or hi_r - lo_r <= wr, (pid, lo_r, hi_r, wr)
        # Denormalized snapshots on stats rows (both kinds) and partition values match their files.
        bad = c.execute(
            text(
                f"SELECT count(*) FROM ({_ALL_STATS} UNION ALL SELECT data_file_id, table_id, 0, 0, 0, 0, "
                "NULL, NULL, NULL, NULL, begin_snapshot, end_snapshot FROM ducklake_file_partition_value) s "
                "JOIN ducklake_data_file d "
                "ON d.data_file_id = s.data_file_id WHERE s.table_id = :t AND (s.begin_snapshot <> d.begin_snapshot "
                "OR coalesce(s.end_snapshot, -1) <> coalesce(d.end_snapshot, -1))"
            ),
            {"t": info.table_id},
        ).scalar_one()
        assert bad == 0
        # Each snapshot's files, records and bytes added and removed are those of the files that
        # begin and end there (the table's history walks back through them). Since 0013.
        if "added_records" in {col["name"] for col in inspect(c).get_columns("ducklake_snapshot")}:
            sums = " ".join(
                f"OR s.{side}_files <> (SELECT count(*) FROM ducklake_data_file d WHERE d.{col} = s.snapshot_id) "
                f"OR s.{side}_records <> (SELECT coalesce(sum(record_count), 0) FROM ducklake_data_file d WHERE d.{col} = s.snapshot_id) "
                f"OR s.{side}_bytes <> (SELECT coalesce(sum(file_size_bytes), 0) FROM ducklake_data_file d WHERE d.{col} = s.snapshot_id)"
                for side, col in (("added", "begin_snapshot"), ("removed", "end_snapshot"))
            )
            off = c.execute(
                text(f"SELECT s.snapshot_id FROM ducklake_snapshot s WHERE s.table_id = :t AND (1 = 0 {sums})"),
                {"t": info.table_id},
            ).all()
            assert off == [], off
        # Every live stats row lies within its zone: the zone's stats, as one file's, pass every
        # test the row passes (a NULL key there is unknown, which passes everything). Schemas
        # before 0007 (the migration tests check catalogs at every revision) have no zones.
        if not inspect(c).has_table("shredcat_stats_zone"):
            return
        outside = c.execute(
            text(
                f"SELECT s.data_file_id, s.path_id FROM ({_ZONED}) s "
                f"LEFT JOIN shredcat_stats_zone z ON z.path_id = s.path_id AND z.zone = s.data_file_id / {models.ZONE_FILES} "
                "WHERE s.table_id = :t AND s.end_snapshot IS NULL AND (z.zone IS NULL OR (s.value_count > 0 AND ("
                "z.value_count = 0 "
                "OR (z.min_num IS NOT NULL AND (s.min_num IS NULL OR s.min_num < z.min_num)) "
                "OR (z.max_num IS NOT NULL AND (s.max_num IS NULL OR s.max_num > z.max_num)) "
                "OR (z.min_real IS NOT NULL AND (s.min_real IS NULL OR s.min_real < z.min_real)) "
                "OR (z.max_real IS NOT NULL AND (s.max_real IS NULL OR s.max_real > z.max_real)) "
                "OR (z.contains_nan IS NOT NULL AND NOT z.contains_nan AND (s.contains_nan IS NULL OR s.contains_nan)))))"
            ),
            {"t": info.table_id},
        ).all()
        assert outside == [], outside


def assert_live_counters(c: Any, table_id: int) -> None:
    """Every counter of live files shredcat keeps for a table (its own, its path dictionary's, its
    object shapes') == a recount over its live rows: also for a dropped table, whose are all 0."""
    live = c.execute(
        text(
            "SELECT count(*), coalesce(sum(record_count), 0), coalesce(sum(file_size_bytes), 0) "
            "FROM ducklake_data_file WHERE table_id = :t AND end_snapshot IS NULL"
        ),
        {"t": table_id},
    ).one()
    stored = c.execute(
        text("SELECT live_file_count, live_record_count, live_bytes FROM ducklake_table WHERE table_id = :t"),
        {"t": table_id},
    ).one()
    assert tuple(int(x) for x in stored) == tuple(int(x) for x in live)
    # Path dictionary counters == a recount over live stats rows.
    recount = {
        int(r[0]): (int(r[1]), int(r[2]), int(r[3]), int(r[4]))
        for r in c.execute(
            text(
                "SELECT path_id, count(*), sum(value_count), sum(null_count), sum(column_size_bytes) FROM ("
                f"{_ALL_STATS}) s WHERE table_id = :t AND end_snapshot IS NULL GROUP BY path_id"
            ),
            {"t": table_id},
        )
    }
    for pid, n, vc, nc, sz in c.execute(
        text(
            "SELECT path_id, live_file_count, live_value_count, live_null_count, live_size_bytes "
            "FROM shredcat_variant_path WHERE table_id = :t"
        ),
        {"t": table_id},
    ):
        assert (int(n), int(vc), int(nc), int(sz)) == recount.get(int(pid), (0, 0, 0, 0)), pid
    _assert_timeline_counters(c, table_id)
    _assert_shape_counters(c, table_id)


def _assert_shape_counters(c: Any, table_id: int) -> None:
    """Each object shape's live file count == its live files (schemas before 0010 have no shapes)."""
    if not inspect(c).has_table("shredcat_object_shape"):
        return
    bad = c.execute(
        text(
            "SELECT sh.shape_id, sh.live_file_count, (SELECT count(*) FROM shredcat_file_object fo "
            "JOIN ducklake_data_file d ON d.data_file_id = fo.data_file_id "
            "WHERE fo.shape_id = sh.shape_id AND d.end_snapshot IS NULL) AS n "
            "FROM shredcat_object_shape sh WHERE sh.table_id = :t"
        ),
        {"t": table_id},
    ).all()
    assert [r for r in bad if int(r[1]) != int(r[2])] == []


def _assert_timeline_counters(c: Any, table_id: int) -> None:
    """The dictionary's timeline counters == a recount over every stats row, live or removed
    (schemas before 0012, which the migration tests check, have none)."""
    if "files_ever" not in {col["name"] for col in inspect(c).get_columns("shredcat_variant_path")}:
        return
    recount = {
        int(r[0]): (int(r[1]), int(r[2]), None if r[3] is None else int(r[3]))
        for r in c.execute(
            text(
                f"SELECT path_id, count(*), min(begin_snapshot), max(end_snapshot) FROM ({_ALL_STATS}) s "
                "WHERE table_id = :t GROUP BY path_id"
            ),
            {"t": table_id},
        )
    }
    stored = {
        int(pid): (int(n), None if first is None else int(first), None if end is None else int(end))
        for pid, n, first, end in c.execute(
            text(
                "SELECT path_id, files_ever, first_snapshot, last_end_snapshot FROM shredcat_variant_path "
                "WHERE table_id = :t"
            ),
            {"t": table_id},
        )
    }
    assert stored == {pid: recount.get(pid, (0, None, None)) for pid in stored}


#: Both stats tables, in the columns the zone check reads.
_ZONED = " UNION ALL ".join(
    f"SELECT data_file_id, table_id, path_id, value_count, min_num, max_num, min_real, max_real, contains_nan, "
    f"end_snapshot FROM {t}"
    for t in ("ducklake_file_variant_stats", "ducklake_file_column_stats")
)


#: Both stats tables, in the columns the consistency checks read.
_ALL_STATS = " UNION ALL ".join(
    f"SELECT data_file_id, table_id, path_id, value_count, null_count, column_size_bytes, min_num, max_num, "
    f"min_real, max_real, begin_snapshot, end_snapshot FROM {t}"
    for t in ("ducklake_file_variant_stats", "ducklake_file_column_stats")
)


def cs(
    column: str = "x",
    t: ShreddedType = INT64,
    lo: Bound | None = 0,
    hi: Bound | None = 10,
    *,
    values: int = 10,
    nulls: int = 0,
    size: int = 100,
    nan: bool | str | None = "auto",
) -> ColumnStats:
    """A plain column's stats row."""
    if nan == "auto":
        nan = False if t.is_float else None
    return ColumnStats(
        column=column,
        column_type=t,
        column_size_bytes=size,
        value_count=values,
        null_count=nulls,
        min_value=lo,
        max_value=hi,
        contains_nan=nan,  # type: ignore[arg-type]
    )


def pv(column: str, raw: str | None, t: ShreddedType = VARCHAR, value: Bound | str | None = "raw") -> PartitionValue:
    """A partition value (``value`` defaults to the raw text, for varchar)."""
    return PartitionValue(column=column, raw=raw, value_type=t, value=raw if value == "raw" else value)  # type: ignore[arg-type]


def with_columns(f: FileStats, *columns: ColumnStats, partitions: Sequence[PartitionValue] = ()) -> FileStats:
    return dataclasses.replace(f, columns=tuple(columns), partitions=tuple(partitions))


def dec(s: str) -> Decimal:
    return Decimal(s)
