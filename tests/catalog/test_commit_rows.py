"""The rows a commit writes do not depend on how the work was shared: files of one partition
directory share their parsed values, checks and encoded partition rows (counted once per file),
and the result equals what each file gives on its own; PostgreSQL (binary COPY) and SQLite
(executemany) store the same rows."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import text

from service.catalog import Catalog
from service.catalog.encode import max_width, prepare_batch
from service.catalog.partitions import path_partitions
from service.catalog.validate import check_batch_partitions, validate_batch
from service.errors import InvalidStatsError, LimitExceededError
from service.stats.merge import PathCounters
from service.storage.partitions import partition_values
from tests.catalog.factories import (
    DEC,
    FLOAT64,
    INT64,
    LIMITS,
    VARCHAR,
    assert_consistent,
    cs,
    fs,
    ps,
    with_columns,
)

#: Directories of the batch: shared by several files each, a NULL partition, another type.
DIRS = [
    "date=2026-01-01/hour=0",
    "date=2026-01-01/hour=7",
    "date=2026-01-02/hour=0",
    "date=__HIVE_DEFAULT_PARTITION__/hour=3",
    "date=2026-01-03/hour=-0.0",
    "date=2026-01-03/hour=1.5",
]


def _file(i: int) -> Any:
    records = 100 if i % 3 else 200  # two record counts per directory
    lo, hi = i * 10, i * 10 + 9
    f = fs(
        f"s3://b/t/{DIRS[i % len(DIRS)]}/part-{i:04d}.parquet",
        ps('"a"', INT64, lo, hi, values=records),
        records=records,
    )
    return with_columns(
        f,
        cs("x", INT64, lo, hi, values=records - i % 2, nulls=i % 2),
        cs("name", VARCHAR, f"n{lo:05d}", None if i % 5 == 0 else f"n{hi:05d}"),
        cs("f", FLOAT64, -0.0 if i % 4 == 0 else 0.5, 2.5, nan=(True, False, None)[i % 3]),
        cs("d", DEC, Decimal(lo).scaleb(-2), Decimal(10**20 + i) if i % 7 == 0 else Decimal(hi)),
    )


def _batch(n: int = 48) -> list[Any]:
    files = validate_batch(path_partitions([_file(i) for i in range(n)]), LIMITS)
    check_batch_partitions(files)
    return files


def test_files_of_one_directory_share_their_parsed_values() -> None:
    paths = [
        "s3://b/t/a=1/b=x/f0.parquet",
        "s3://b/t/a=1/b=x/f1.parquet",
        "s3://b/t/a=2/b=x/f2.parquet",
        "s3://b/t/a=1/b=x/",  # no file name: not cached
        "a=1",
        "s3://b/a=1",
        "s3:/" + "/b/a=1/f",
        "s3://b/t/a=1/b=x/sub/f3.parquet",  # the run stops at "sub": no partition values
    ]
    files = path_partitions([fs(p) for p in paths])
    for f in files:
        assert f.partitions == partition_values(f.path), f.path
    assert files[0].partitions is files[1].partitions
    assert files[0].partitions is not files[2].partitions
    assert files[7].partitions == ()


def test_a_bad_directory_names_the_first_file_under_it() -> None:
    files = [fs("s3://b/t/a=1/f0.parquet"), fs("s3://b/t/a=/f1.parquet"), fs("s3://b/t/a=/f2.parquet")]
    with pytest.raises(InvalidStatsError, match=r"f1\.parquet") as e:
        path_partitions(files)
    assert e.value.details["path"] == files[1].path


def test_shared_partition_values_are_still_checked_against_each_files_columns() -> None:
    [first, second] = path_partitions([fs("s3://b/t/x=1/f0.parquet"), fs("s3://b/t/x=1/f1.parquet")])
    assert first.partitions is second.partitions
    clash = with_columns(second, cs("x", INT64, 0, 1), partitions=second.partitions)
    assert clash.partitions is first.partitions
    # Spark reads a partition column from the path, also where the file has a column of that name:
    # the file's row for it is dropped, the partition value stays.
    [_, checked] = validate_batch([first, clash], LIMITS)
    assert checked.columns == () and [pv.column for pv in checked.partitions] == ["x"]
    variant = dataclasses.replace(second, variant_columns=("x",))
    with pytest.raises(InvalidStatsError, match=r"f1\.parquet.*also a Variant column of the data file"):
        validate_batch([first, variant], LIMITS)


def test_shared_invalid_partition_values_name_the_first_file() -> None:
    [first, second] = path_partitions([fs("s3://b/t/x=1/f0.parquet"), fs("s3://b/t/x=1/f1.parquet")])
    [pv] = first.partitions
    bad = (dataclasses.replace(pv, raw="y" * (LIMITS.max_bound_chars + 1)),)
    files = [dataclasses.replace(f, partitions=bad) for f in (first, second)]
    with pytest.raises(LimitExceededError, match=r"f0\.parquet"):
        validate_batch(files, LIMITS)


def test_shared_partition_rows_equal_each_files_own_encoding() -> None:
    files = _batch()
    assert len({id(f.partitions) for f in files}) == len(DIRS)  # the sharing under test
    batch = prepare_batch(files)
    alone = [prepare_batch([f]) for f in files]
    assert batch.rows == [a.rows[0] for a in alone]
    assert batch.col_rows == [a.col_rows[0] for a in alone]
    assert batch.part_rows == [a.part_rows[0] for a in alone]
    counters: dict[Any, PathCounters] = {}
    widths: dict[Any, Any] = {}
    for a in alone:
        for k, c in a.counters.items():
            counters[k] = counters[k] + c if k in counters else c
        for k, w in a.widths.items():
            widths[k] = max_width(widths[k], w) if k in widths else w
    assert batch.counters == counters
    assert batch.widths == widths
    # Counted once per file: the -0.0 directory's files are the float64 key's -0.0 minimums.
    real = batch.counters[("hour", "", "float64")]
    assert real.file_count == sum(1 for f in files if "hour=-0.0" in f.path or "hour=1.5" in f.path)
    assert real.min_negzero_files == sum(1 for f in files if "hour=-0.0" in f.path) > 1
    nulls = [f for f in files if "__HIVE_DEFAULT_PARTITION__" in f.path]
    null = batch.counters[("date", "", "varchar")]
    assert (null.file_count, null.value_count, null.null_count) == (
        len(nulls), 0, sum(f.record_count for f in nulls)
    )


def _norm(v: Any) -> Any:
    if isinstance(v, bool):
        return int(v)  # SQLite gives booleans as 0/1
    if isinstance(v, memoryview):
        return bytes(v)
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def _dump(cat: Catalog, table: str) -> dict[str, Any]:
    """Every row the commits wrote for ``table``, by file path and key (not by generated ids)."""
    tid = cat.get_table("ns", table).table_id
    keyed = (
        "JOIN ducklake_data_file d ON d.data_file_id = s.data_file_id "
        "JOIN shredcat_variant_path p ON p.path_id = s.path_id "
        "JOIN ducklake_column c ON c.column_id = p.column_id "
        "WHERE s.table_id = :t"
    )
    queries = {
        "column_stats": "SELECT d.path, c.column_name, p.shredded_type, s.column_type, s.column_size_bytes, "
        "s.value_count, s.null_count, s.min_value, s.max_value, s.contains_nan, s.extra_stats, s.min_num, "
        "s.max_num, s.min_real, s.max_real, s.min_bin, s.max_bin, s.end_snapshot IS NULL "
        f"FROM ducklake_file_column_stats s {keyed}",
        "variant_stats": "SELECT d.path, c.column_name, s.variant_path, s.shredded_type, s.column_size_bytes, "
        "s.value_count, s.null_count, s.min_value, s.max_value, s.contains_nan, s.extra_stats, s.min_num, "
        "s.max_num, s.min_real, s.max_real, s.min_bin, s.max_bin, s.end_snapshot IS NULL "
        f"FROM ducklake_file_variant_stats s {keyed}",
        "partition_values": "SELECT d.path, s.partition_key_index, s.partition_value, c.column_name, "
        "s.end_snapshot IS NULL FROM ducklake_file_partition_value s "
        "JOIN ducklake_data_file d ON d.data_file_id = s.data_file_id "
        "JOIN ducklake_column c ON c.column_id = s.column_id WHERE s.table_id = :t",
        "keys": "SELECT c.column_name, p.variant_path, p.shredded_type, p.max_width_num, p.max_width_real, "
        "p.live_file_count, p.live_value_count, p.live_null_count, p.live_size_bytes, p.live_nan_files, "
        "p.live_nan_unknown_files, p.live_min_unknown_files, p.live_max_unknown_files, "
        "p.live_min_keyless_files, p.live_max_keyless_files "
        "FROM shredcat_variant_path p JOIN ducklake_column c ON c.column_id = p.column_id WHERE p.table_id = :t",
    }
    out: dict[str, Any] = {}
    with cat.engine.connect() as conn:
        for name, sql in queries.items():
            rows = [tuple(_norm(v) for v in r) for r in conn.execute(text(sql), {"t": tid})]
            out[name] = sorted(rows, key=repr)
    assert out["column_stats"] and out["partition_values"]
    return out


def test_one_commit_stores_what_one_commit_per_file_stores(catalog: Catalog) -> None:
    files = [_file(i) for i in range(48)]
    for t in ("batch", "single"):
        catalog.create_table("ns", t, ["v"])
    catalog.commit("ns", "batch", files)
    for f in files:
        catalog.commit("ns", "single", [f])
    batch, single = _dump(catalog, "batch"), _dump(catalog, "single")
    assert batch == single
    # Every file: its plain columns, then its two partition columns (one row each).
    assert len(batch["column_stats"]) == len(files) * 6
    assert len(batch["partition_values"]) == len(files) * 2
    assert_consistent(catalog, "ns", "batch")
    assert_consistent(catalog, "ns", "single")


@pytest.fixture
def both(sqlite_url: str, catalog_url: str) -> Iterator[tuple[Catalog, Catalog]]:
    if catalog_url.startswith("sqlite"):
        pytest.skip("compares SQLite with PostgreSQL")
    with Catalog(sqlite_url) as lite, Catalog(catalog_url) as pg:
        yield lite, pg


def test_postgres_copy_stores_the_rows_sqlite_inserts(both: tuple[Catalog, Catalog]) -> None:
    files = [_file(i) for i in range(48)]
    dumps = []
    for cat in both:
        cat.create_table("ns", "t", ["v"])
        cat.commit("ns", "t", files[:30])
        cat.commit("ns", "t", files[30:])
        cat.remove("ns", "t", [files[3].path, files[31].path])
        dumps.append(_dump(cat, "t"))
        assert_consistent(cat, "ns", "t")
    assert dumps[0] == dumps[1]
