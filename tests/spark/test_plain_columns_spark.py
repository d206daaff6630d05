"""Plain-column statistics of Spark-written files against Spark's own aggregates of each file:
counts of values and NULLs, and min/max without NaN (``contains_nan`` from ``isnan``). Spark's
default timestamp encoding (INT96, whose order no footer defines) must give counts and no bounds;
with ``outputTimestampType=TIMESTAMP_MICROS`` the bounds are the data's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.stats.extract import extract_file

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

COLUMNS = ["i", "l", "d", "f", "s", "dec", "dt", "ts", "b", "st.x", "st.y"]


def _write(spark: Any, out: Path, timestamp_type: str | None) -> list[Path]:
    df = spark.sql(
        """SELECT CAST(id AS int) AS i, id * 1000000007 - 5 AS l,
                  CASE WHEN id % 17 = 3 THEN double('NaN') WHEN id % 5 = 0 THEN NULL ELSE id / 7.0 - 20 END AS d,
                  CAST(CASE WHEN id % 9 = 0 THEN -0.0 ELSE id * 0.25 END AS float) AS f,
                  CASE WHEN id % 4 = 0 THEN NULL ELSE concat('name', CAST(id % 13 AS string)) END AS s,
                  CAST(id / 3 AS decimal(12,3)) AS dec,
                  date_add(DATE '1969-12-20', CAST(id AS int)) AS dt,
                  timestamp_micros(id * 3600000123) AS ts,
                  id % 3 = 0 AS b,
                  CASE WHEN id % 6 = 1 THEN NULL ELSE named_struct('x', CAST(id AS int), 'y', CAST(id AS string)) END AS st
           FROM range(0, 300)"""
    ).repartition(3, "i")
    writer = df.write
    if timestamp_type is not None:
        writer = writer.option("spark.sql.parquet.outputTimestampType", timestamp_type)
        spark.conf.set("spark.sql.parquet.outputTimestampType", timestamp_type)
    try:
        writer.parquet(str(out))
    finally:
        spark.conf.unset("spark.sql.parquet.outputTimestampType")
    files = sorted(out.glob("*.parquet"))
    assert len(files) == 3
    return files


def _truth(spark: Any, path: Path) -> dict[str, tuple[int, int, Any, Any, bool | None]]:
    df = spark.read.parquet(str(path))
    # Every column's aggregates in one select: one Spark job per file instead of one per column.
    exprs: list[str] = []
    floats: set[str] = set()
    for i, c in enumerate(COLUMNS):
        col = "`" + c.replace(".", "`.`") + "`"
        kind = dict(df.select(col).dtypes)[c.split(".")[-1]]
        v = col
        if kind == "timestamp":
            v = f"unix_micros({col})"
        elif kind == "date":
            v = f"unix_date({col})"
        is_float = kind in ("double", "float")
        if is_float:
            floats.add(c)
        keep = f"CASE WHEN isnan({col}) THEN NULL ELSE {v} END" if is_float else v
        nan = f"bool_or(isnan({col}))" if is_float else "NULL"
        exprs += [f"count({col}) AS n{i}", f"count(*) - count({col}) AS nulls{i}", f"min({keep}) AS lo{i}", f"max({keep}) AS hi{i}", f"{nan} AS nan{i}"]
    r = df.selectExpr(*exprs).collect()[0]
    return {
        c: (r[f"n{i}"], r[f"nulls{i}"], r[f"lo{i}"], r[f"hi{i}"], None if c not in floats else bool(r[f"nan{i}"]))
        for i, c in enumerate(COLUMNS)
    }


@pytest.mark.parametrize("timestamp_type", [None, "TIMESTAMP_MICROS"], ids=["spark-default", "micros"])
def test_plain_columns_equal_sparks_aggregates(spark: Any, tmp_path: Path, timestamp_type: str | None) -> None:
    import pyarrow.parquet as pq

    for path in _write(spark, tmp_path / "t", timestamp_type):
        ours = {c.column: c for c in extract_file(str(path)).columns}
        assert sorted(ours) == sorted(COLUMNS)
        ts_physical = pq.ParquetFile(path).schema_arrow.field("ts").type
        int96 = pq.ParquetFile(path).metadata.schema.column(7).physical_type == "INT96"
        for c, (n, nulls, lo, hi, nan) in _truth(spark, path).items():
            row = ours[c]
            assert (row.value_count, row.null_count) == (n, nulls), c
            if c == "ts" and int96:
                assert (row.min_value, row.max_value) == (None, None), ts_physical
                continue
            if c == "f" and lo == 0.0:
                # Spark's min() does not tell -0.0 from 0.0; the value model keeps the first zero.
                assert row.min_value == 0.0
            else:
                assert (row.min_value, row.max_value) == (lo, hi), c
            assert row.contains_nan == nan, c
