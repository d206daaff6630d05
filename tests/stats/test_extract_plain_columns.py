"""Plain-column statistics on files pyarrow writes: the types DuckDB never writes (INT96,
unsigned 32/64-bit, millisecond times, FLOAT16), footers without statistics, several row groups,
and which columns get a row at all. Ground truth is the data itself, read back with pyarrow."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from service.stats.extract import extract_file
from service.stats.model import ColumnStats
from service.values import Kind, ShreddedType
from tests.support.shred_writer import write_shredded


def _by_name(path: Path) -> dict[str, ColumnStats]:
    return {c.column: c for c in extract_file(str(path)).columns}


def test_which_columns_get_a_row(tmp_path: Path) -> None:
    t = pa.table(
        {
            "a": pa.array([1, 2], pa.int32()),
            "s": pa.array([{"x": {"y": "p"}, "z": 1}, {"x": None, "z": 2}]),
            "lst": pa.array([[1], [2, 3]], pa.list_(pa.int64())),
            "ls": pa.array([[{"q": 1}], []], pa.list_(pa.struct([("q", pa.int32())]))),
            "m": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int32())),
            "h": pa.array([1.5, 2.5], pa.float16()),
        }
    )
    pq.write_table(t, tmp_path / "f.parquet")
    assert list(_by_name(tmp_path / "f.parquet")) == ["a", "s.x.y", "s.z"]
    # Variant groups are not plain columns; the plain columns beside them are.
    write_shredded(tmp_path / "v.parquet", [{"a": 1}], {"a": "int64"})
    fs = extract_file(str(tmp_path / "v.parquet"))
    assert fs.paths and all(not c.column.startswith("v") for c in fs.columns)


def test_a_dotted_name_two_columns_share_gets_no_row(tmp_path: Path) -> None:
    """A top-level column named ``a.b`` and field ``b`` of a struct ``a``: a row named ``a.b``
    could be either's, so neither has one (unknown, never pruned on) and the file still registers."""
    t = pa.table({"a.b": pa.array([1, 2]), "a": pa.array([{"b": 10}, {"b": 20}]), "c": pa.array([3, 4])})
    pq.write_table(t, tmp_path / "f.parquet")
    assert list(_by_name(tmp_path / "f.parquet")) == ["c"]
    pq.write_table(t.drop(["a"]), tmp_path / "g.parquet")  # alone, each keeps its row
    assert list(_by_name(tmp_path / "g.parquet")) == ["a.b", "c"]


def test_struct_leaf_counts_parent_nulls_as_nulls(tmp_path: Path) -> None:
    s = pa.array([{"x": 1}, None, {"x": None}, {"x": 4}], pa.struct([("x", pa.int64())]))
    pq.write_table(pa.table({"s": s}), tmp_path / "f.parquet")
    row = _by_name(tmp_path / "f.parquet")["s.x"]
    assert (row.value_count, row.null_count, row.min_value, row.max_value) == (2, 2, 1, 4)


def test_int96_has_counts_and_no_bounds(tmp_path: Path) -> None:
    ts = pa.array([dt.datetime(2024, 1, 1), None, dt.datetime(1999, 5, 5)], pa.timestamp("us"))
    pq.write_table(pa.table({"t": ts}), tmp_path / "f.parquet", use_deprecated_int96_timestamps=True)
    assert pq.ParquetFile(tmp_path / "f.parquet").schema.column(0).physical_type == "INT96"
    row = _by_name(tmp_path / "f.parquet")["t"]
    assert row.column_type == ShreddedType(Kind.TIMESTAMPTZ)
    assert (row.value_count, row.null_count, row.min_value, row.max_value) == (2, 1, None, None)


@pytest.mark.parametrize("stats", [True, False], ids=["footer", "no-statistics"])
def test_other_units_and_unsigned(tmp_path: Path, stats: bool) -> None:
    """Bounds are the same whether they come from the footer or from reading the data."""
    t = pa.table(
        {
            "u32": pa.array([3, 4_000_000_000, None], pa.uint32()),
            "u64": pa.array([5, 2**64 - 1, 7], pa.uint64()),
            "u64small": pa.array([5, 2**40, 7], pa.uint64()),
            "u8": pa.array([0, 255, 9], pa.uint8()),
            "ms": pa.array([1_700_000_000_123, -5, None], pa.timestamp("ms")),
            "mstz": pa.array([1_700_000_000_123, 0, 1], pa.timestamp("ms", tz="UTC")),
            "tm": pa.array([1000, 86_399_999, 0], pa.time32("ms")),
            "tns": pa.array([3_723_000_000_001, 5_000, None], pa.time64("ns")),
        }
    )
    pq.write_table(t, tmp_path / "f.parquet", write_statistics=stats)
    rows = _by_name(tmp_path / "f.parquet")
    got = {k: (r.column_type.name, r.value_count, r.null_count, r.min_value, r.max_value) for k, r in rows.items()}
    assert got == {
        "u32": ("int64", 2, 1, 3, 4_000_000_000),
        # UINT64 as Spark reads it, DECIMAL(20,0): exact above int64 too.
        "u64": ("decimal(20,0)", 3, 0, Decimal(5), Decimal(2**64 - 1)),
        "u64small": ("decimal(20,0)", 3, 0, Decimal(5), Decimal(2**40)),
        "u8": ("int16", 3, 0, 0, 255),
        "ms": ("timestamp", 2, 1, -5000, 1_700_000_000_123_000),
        "mstz": ("timestamptz", 3, 0, 0, 1_700_000_000_123_000),
        "tm": ("time", 3, 0, 0, 86_399_999_000),
        # Nanoseconds: whole microseconds, rounded outward (the max 01:02:03.000000001 up).
        "tns": ("time", 2, 1, 5, 3_723_000_001),
    }


@pytest.mark.parametrize("stats", [True, False], ids=["footer", "no-statistics"])
def test_nanosecond_times_get_outward_microsecond_bounds(tmp_path: Path, stats: bool) -> None:
    """TIME(NANOS): the row's microsecond bounds hold every value, both as nanoseconds and as
    DuckDB reads the column (TIME, truncated to microseconds); the last nanosecond of a day has
    24:00:00 as its upper bound."""
    import duckdb

    ns = [86_399_999_999_999, 999, 1_000, 43_200_000_000_500, None, 7]
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"t": pa.array(ns, pa.time64("ns"))}), path, write_statistics=stats, row_group_size=3)
    row = _by_name(path)["t"]
    assert row.column_type == ShreddedType(Kind.TIME) and (row.value_count, row.null_count) == (5, 1)
    assert (row.min_value, row.max_value) == (0, 86_400_000_000)
    assert row.ducklake_row()["max_value"] == "24:00:00"
    assert isinstance(row.min_value, int) and isinstance(row.max_value, int)
    assert all(row.min_value * 1000 <= v <= row.max_value * 1000 for v in ns if v is not None)
    con = duckdb.connect()
    kind, lo, hi = con.execute("SELECT any_value(typeof(t)), min(t), max(t) FROM read_parquet(?)", [str(path)]).fetchone()  # type: ignore[misc]
    assert kind == "TIME"
    micros = lambda t: ((t.hour * 60 + t.minute) * 60 + t.second) * 1_000_000 + t.microsecond  # noqa: E731
    assert row.min_value <= micros(lo) and micros(hi) <= row.max_value


def _truth(col: pa.ChunkedArray) -> tuple[int, int, Any, Any, bool]:
    vals = col.drop_null()
    nan = False
    if pa.types.is_floating(col.type):
        isnan = pc.is_nan(vals)
        nan = bool(pc.any(isnan).as_py())
        vals = vals.filter(pc.invert(isnan))
    mm = pc.min_max(vals) if len(vals) else None
    lo = mm["min"].as_py() if mm else None
    hi = mm["max"].as_py() if mm else None
    return len(col) - col.null_count, col.null_count, lo, hi, nan


@pytest.mark.parametrize("stats", [True, False], ids=["footer", "no-statistics"])
def test_several_row_groups_equal_the_data(tmp_path: Path, stats: bool) -> None:
    n = 5000
    t = pa.table(
        {
            "i": pa.array([None if k < 1000 else k * 3 - 7000 for k in range(n)], pa.int64()),
            "d": pa.array([math.nan if k == 2500 else (None if k % 7 == 0 else k / 3) for k in range(n)], pa.float64()),
            "s": pa.array([None if k >= 4000 else f"s{k % 977:04d}" for k in range(n)], pa.string()),
            "b": pa.array([k % 3 == 0 for k in range(n)], pa.bool_()),
        }
    )
    path = tmp_path / "f.parquet"
    pq.write_table(t, path, row_group_size=1000, write_statistics=stats)
    assert pq.ParquetFile(path).metadata.num_row_groups == 5
    rows = _by_name(path)
    for name in t.column_names:
        r = rows[name]
        vc, nc, lo, hi, nan = _truth(t[name])
        assert (r.value_count, r.null_count, r.min_value, r.max_value) == (vc, nc, lo, hi), name
        assert r.contains_nan == (nan if name == "d" else None)
    assert rows["i"].column_size_bytes == sum(
        pq.ParquetFile(path).metadata.row_group(g).column(0).total_compressed_size for g in range(5)
    )


@pytest.mark.parametrize(
    ("metadata", "rebased"),
    [
        ({b"org.apache.spark.legacyDateTime": b""}, True),  # Spark 3+ writing in LEGACY mode
        ({b"org.apache.spark.version": b"2.4.8"}, True),  # every Spark 2 file
        ({b"org.apache.spark.version": b"3.5.1"}, False),  # Spark 3+ in CORRECTED mode
        ({}, False),  # any other writer: the values are proleptic Gregorian
    ],
)
def test_spark_legacy_calendar_files_keep_no_bounds_before_the_cutovers(
    tmp_path: Path, metadata: dict[bytes, bytes], rebased: bool
) -> None:
    """Spark rebases the dates before 1582-10-15 and timestamps before 1900 of files written in
    its LEGACY mode (Julian calendar) when it reads them: those bounds are not what it compares,
    so they are unknown; later values are stored as they are, so their bounds stay."""
    ts = pa.timestamp("us", tz="UTC")
    t = pa.table(
        {
            "old_d": pa.array([dt.date(1000, 6, 15), dt.date(1600, 1, 1)], pa.date32()),
            "new_d": pa.array([dt.date(1582, 10, 15), dt.date(2024, 1, 1)], pa.date32()),
            "old_ts": pa.array([dt.datetime(1899, 12, 31, 23), dt.datetime(1950, 1, 1)], ts),
            "new_ts": pa.array([dt.datetime(1900, 1, 1), dt.datetime(2024, 1, 1)], ts),
            "n": pa.array([1, 2], pa.int64()),
        }
    ).replace_schema_metadata(metadata)
    pq.write_table(t, tmp_path / "f.parquet")
    rows = _by_name(tmp_path / "f.parquet")
    for name in ("old_d", "old_ts"):
        bounds = (rows[name].min_value, rows[name].max_value)
        assert (bounds == (None, None)) is rebased, (name, bounds)
        assert rows[name].value_count == 2  # counts are facts of either calendar
    for name in ("new_d", "new_ts", "n"):
        assert rows[name].min_value is not None and rows[name].max_value is not None, name


def test_columns_spark_compares_by_a_collation_have_no_bounds(tmp_path: Path) -> None:
    """Spark 4 writes ``STRING COLLATE UTF8_LCASE`` as a plain string whose collation only its row
    metadata names: 'ABC' = 'abc' there, so byte-order bounds would prune files Spark reads from."""
    import json

    spark_schema = {
        "type": "struct",
        "fields": [
            {"name": "lname", "type": "string", "nullable": True, "metadata": {"__COLLATIONS": {"lname": "spark.UTF8_LCASE"}}},
            {"name": "bname", "type": "string", "nullable": True, "metadata": {"__COLLATIONS": {"bname": "spark.UTF8_BINARY"}}},
            {"name": "s", "type": {"type": "struct", "fields": [{"name": "x", "type": "string", "nullable": True, "metadata": {"__COLLATIONS": {"x": "icu.de_DE"}}}]}, "nullable": True, "metadata": {}},
            {"name": "name", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
    t = pa.table({"lname": ["ABC", "abx"], "bname": ["ABC", "abx"], "s": [{"x": "a"}, {"x": "b"}], "name": ["ABC", "abx"]})
    t = t.replace_schema_metadata({"org.apache.spark.sql.parquet.row.metadata": json.dumps(spark_schema)})
    path = tmp_path / "collated.parquet"
    pq.write_table(t, path)
    cols = {c.column: c for c in extract_file(str(path)).columns}
    for name in ("lname", "s.x"):
        assert (cols[name].min_value, cols[name].max_value) == (None, None), name
        assert (cols[name].value_count, cols[name].null_count) == (2, 0), name
    for name in ("bname", "name"):
        assert (cols[name].min_value, cols[name].max_value) == ("ABC", "abx"), name


@pytest.mark.parametrize("stats", [True, False], ids=["footer", "no-statistics"])
def test_decimals_wider_than_38_digits_are_doubles_rounded_outward(tmp_path: Path, stats: bool) -> None:
    """DECIMAL(40,2) and DECIMAL(40,0): typed as DuckDB reads them (DOUBLE), exact counts, no
    NaN; the footer's bounds as the nearest doubles outside them. Without statistics: no bounds
    (the data is not read for them)."""
    import duckdb

    wide = [Decimal("12345678901234567890123456789012345678.91"), Decimal("-1.50"), None, Decimal("0.01")]
    widest = [Decimal("9" * 40), Decimal("-" + "9" * 40), None, Decimal(0)]
    path = tmp_path / "f.parquet"
    t = pa.table({"w": pa.array(wide, pa.decimal256(40, 2)), "z": pa.array(widest, pa.decimal256(40, 0))})
    pq.write_table(t, path, write_statistics=stats, row_group_size=2)
    rows = _by_name(path)
    con = duckdb.connect()
    for name, values in (("w", wide), ("z", widest)):
        row = rows[name]
        assert row.column_type == ShreddedType(Kind.FLOAT64)
        assert (row.value_count, row.null_count, row.contains_nan) == (3, 1, False)
        if not stats:
            assert (row.min_value, row.max_value) == (None, None)
            continue
        assert isinstance(row.min_value, float) and isinstance(row.max_value, float)
        present = [v for v in values if v is not None]
        assert Decimal(row.min_value) <= min(present) and max(present) <= Decimal(row.max_value)
        # Each is the nearest double on its side: one step inward crosses the exact bound.
        assert Decimal(math.nextafter(row.min_value, math.inf)) > min(present)
        assert Decimal(math.nextafter(row.max_value, -math.inf)) < max(present)
        # DuckDB's type for it (its values are not compared: DuckDB 1.5.5 misreads FIXED_LEN_BYTE_ARRAY
        # decimals longer than 16 bytes, -1.50 as -1.07e17).
        (kind,) = con.execute(f"SELECT any_value(typeof({name})) FROM read_parquet(?)", [str(path)]).fetchone()  # type: ignore[misc]
        assert kind == "DOUBLE"
