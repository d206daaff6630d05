"""Hive partition values against Spark itself: Spark writes a table with ``partitionBy`` (int,
bigint, decimal, double, date, timestamp and string columns; NULLs, NaN, and the values Spark
escapes in paths), reads it back with ``spark.read.parquet`` and tells, per row, its file
(``_metadata.file_path``) and its partition values; shredcat's :func:`partition_values` of each
file, merged per column with :func:`merge_types` and read again with :func:`retype`, must give
Spark's schema and Spark's values.
"""

from __future__ import annotations

import math
import os
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from service.storage.partitions import merge_types, partition_values, retype
from service.values import Kind, ShreddedType

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]


def _spark_type(dt: Any) -> ShreddedType | None:
    from pyspark.sql import types as T

    if isinstance(dt, T.IntegerType):
        return ShreddedType(Kind.INT32)
    if isinstance(dt, T.LongType):
        return ShreddedType(Kind.INT64)
    if isinstance(dt, T.DecimalType):
        return ShreddedType(Kind.DECIMAL, dt.precision, dt.scale)
    if isinstance(dt, T.DoubleType):
        return ShreddedType(Kind.FLOAT64)
    if isinstance(dt, T.DateType):
        return ShreddedType(Kind.DATE)
    if isinstance(dt, T.TimestampType):
        return ShreddedType(Kind.TIMESTAMPTZ)
    if isinstance(dt, T.StringType):
        return ShreddedType(Kind.VARCHAR)
    if isinstance(dt, T.NullType):
        return None
    raise AssertionError(f"unexpected partition type {dt}")


def _local(file_path: str) -> str:
    p = urlparse(file_path).path
    return p if os.path.exists(p) else unquote(p)


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, float) and isinstance(b, float) and a == b == 0:
        return math.copysign(1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b


def _check(spark: Any, base: Path, columns: list[str]) -> dict[str, ShreddedType | None]:
    """Compare shredcat with Spark on the table at ``base``; returns the column types."""
    df = spark.read.parquet(str(base))
    schema = {f.name: f.dataType for f in df.schema.fields}
    types = {c: _spark_type(schema[c]) for c in columns}
    # Values as numbers Spark computes itself (no Python timezone conversion on the way).
    exprs = ["_metadata.file_path AS fp"]
    for c in columns:
        k = types[c].kind if types[c] is not None else None  # type: ignore[union-attr]
        if k is Kind.TIMESTAMPTZ:
            exprs.append(f"unix_micros(`{c}`) AS `{c}`")
        elif k is Kind.DATE:
            exprs.append(f"unix_date(`{c}`) AS `{c}`")
        else:
            exprs.append(f"`{c}`")
    rows = df.selectExpr(*exprs).collect()
    assert rows
    by_file: dict[str, dict[str, object]] = {}
    for r in rows:
        by_file[_local(r["fp"])] = {c: r[c] for c in columns}

    ours = {path: {pv.column: pv for pv in partition_values(path, str(base))} for path in by_file}
    for c in columns:
        merged = merge_types(None if pv[c].raw is None else pv[c].value_type for pv in ours.values())
        assert merged == types[c], c
        for path, spark_values in by_file.items():
            pv = ours[path][c]
            mine = retype(pv, merged).value if merged is not None else pv.value
            expected = spark_values[c]
            if isinstance(expected, Decimal) and isinstance(mine, Decimal):
                assert mine == expected and mine.as_tuple().exponent == expected.as_tuple().exponent, (c, path)
            else:
                assert _same(mine, expected), (c, path, mine, expected)
    return types


def test_partition_values_equal_sparks(spark: Any, tmp_path: Path) -> None:
    rows = [
        (1, 10_000_000_000, Decimal("12345678901234567890"), 1.5, "2024-03-01", "2024-03-01 10:00:00", "a b", 0),
        (2, None, Decimal("-5"), float("nan"), "1969-12-31", "1970-01-01 00:00:00.5", "a/b", 1),
        (None, 7, None, -0.0, None, None, "%", 2),
        (3, 8, Decimal("0"), None, "0001-01-01", "2024-03-01 23:59:59", "=", 3),
        (4, 9, Decimal("7"), 2.0, "2024-02-29", "2000-01-01 00:00:00", "é:x", 4),
        (5, 11, Decimal("8"), 1e300, "2024-01-01", "2024-01-01 00:00:01", None, 5),
        (6, 12, Decimal("9"), -1.25, "2024-01-02", "2024-01-01 00:00:02", "", 6),
        (7, 13, Decimal("10"), 3.0, "2024-01-03", "2024-01-01 00:00:03", "2024-01-01", 7),
    ]
    df = spark.createDataFrame(
        rows, "i int, l bigint, dec decimal(20,0), d double, dt string, ts string, s string, x int"
    ).selectExpr("i", "l", "dec", "d", "CAST(dt AS date) AS dt", "CAST(ts AS timestamp) AS ts", "s", "x")
    base = tmp_path / "t"
    cols = ["i", "l", "dec", "d", "dt", "ts", "s"]
    df.write.partitionBy(*cols).parquet(str(base))
    types = _check(spark, base, cols)
    # What Spark made of them (documents the inference this test pins down).
    assert types["i"] == ShreddedType(Kind.INT32)
    assert types["l"] == ShreddedType(Kind.INT64)
    assert types["dec"] == ShreddedType(Kind.DECIMAL, 20, 0)
    assert types["d"] == ShreddedType(Kind.FLOAT64)
    assert types["dt"] == ShreddedType(Kind.DATE)
    assert types["ts"] == ShreddedType(Kind.TIMESTAMPTZ)
    assert types["s"] == ShreddedType(Kind.VARCHAR)


def test_type_conflicts_and_microsecond_timestamps(spark: Any, tmp_path: Path) -> None:
    rows = [
        ("1", "1", "2024-01-01 10:00:00.123456", 1, "2024-01-01", 0),
        ("2147483648", "1.5", "2024-01-01 10:00:00", 2, "2024-01-01 10:00:00", 1),
        ("abc", "2", "2024-01-02 00:00:00", None, "2024-01-02", 2),
    ]
    df = spark.createDataFrame(rows, "a string, b string, t string, n int, m string, x int").selectExpr(
        "a", "b", "t", "CAST(NULL AS int) AS z", "n", "m", "x"
    )
    base = tmp_path / "t"
    cols = ["a", "b", "t", "z", "n", "m"]
    df.write.partitionBy(*cols).parquet(str(base))
    types = _check(spark, base, cols)
    assert types["a"] == ShreddedType(Kind.VARCHAR)  # int, bigint and a string
    assert types["b"] == ShreddedType(Kind.FLOAT64)  # int and double
    assert types["t"] == ShreddedType(Kind.VARCHAR)  # microseconds are not a partition timestamp
    assert types["z"] is None  # every value NULL: void
    assert types["n"] == ShreddedType(Kind.INT32)
    assert types["m"] == ShreddedType(Kind.TIMESTAMPTZ)  # date and timestamp


def test_a_plan_at_a_past_snapshot_types_partitions_as_spark_reads_that_snapshot(
    spark: Any, tmp_path: Path, catalog_url: str
) -> None:
    """``p=05`` and ``p=5``, then ``p=a``: Spark reading the first snapshot's two files types
    ``p`` as an int, so ``p = '5'`` holds for both rows. The catalog typed a past snapshot by
    every type ever stored (a string, once ``p=a`` came), so the plan and the DuckDB read of that
    snapshot compared ``'05' = '5'`` as strings and lost the ``p=05`` row."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from service.catalog import Catalog
    from service.duckdb import engine, read_pruned

    paths = {}
    for i, raw in enumerate(["05", "5", "a"]):
        (tmp_path / f"p={raw}").mkdir()
        paths[raw] = str(tmp_path / f"p={raw}" / "f.parquet")
        pq.write_table(pa.table({"id": pa.array([i], pa.int64())}), paths[raw])
    then = [paths["05"], paths["5"]]
    truth = spark.read.option("basePath", str(tmp_path)).parquet(*then)
    assert dict((f.name, f.dataType.simpleString()) for f in truth.schema.fields)["p"] == "int"
    want = sorted(r.id for r in truth.where("p = '5'").collect())
    assert want == [0, 1]
    with Catalog(catalog_url) as cat:
        first = cat.register("lake", "t", then).snapshot_id
        cat.register("lake", "t", [paths["a"]])
        rel = read_pruned(engine.connect(), "lake.t", "p = '5'", catalog=cat, snapshot=first)
        assert sorted(r[0] for r in rel.project("id").fetchall()) == want
