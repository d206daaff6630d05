"""The extractor on files written by Spark 4's own shredding writer (parquet-java)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from service.stats.extract import extract_file

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]


def _write(spark: Any, rows: list[Any], out: Path, *, files: int = 1, conf: dict[str, str] | None = None) -> list[Path]:
    df = spark.createDataFrame([(json.dumps(r),) for r in rows], "j string").selectExpr("parse_json(j) AS v")
    for k, v in (conf or {}).items():
        spark.conf.set(k, v)
    try:
        df.repartition(files).write.mode("overwrite").parquet(str(out))
    finally:
        for k in conf or {}:
            spark.conf.unset(k)
    return sorted(out.glob("*.parquet"))


def _by_path(f: Path) -> dict[str, dict[str, Any]]:
    return {p.variant_path: {**p.ducklake_row(), "min": p.min_value, "max": p.max_value} for p in extract_file(str(f)).paths}


def test_spark_objects_arrays_and_late_mismatches(spark: Any, tmp_path: Path) -> None:
    rows = [
        {"a": i, "b": {"c": f"s{i:05d}", "d": i * 1.5}, "tags": [i, i + 1], "late": "n/a" if i == 4999 else i}
        for i in range(5000)
    ]
    (f,) = _write(spark, rows, tmp_path / "t")
    got = _by_path(f)
    assert pq.read_metadata(f).created_by.startswith("parquet-mr")
    assert got['"a"']["shredded_type"] == "int64"
    assert (got['"a"']["min"], got['"a"']["max"], got['"a"']["value_count"]) == (0, 4999, 5000)
    assert (got['"b"."c"']["min"], got['"b"."c"']["max"]) == ("s00000", "s04999")
    # Spark's parse_json makes 1.5 a decimal: shredded as decimal, bounds exact.
    assert got['"b"."d"']["shredded_type"].startswith("decimal(")
    assert got['"b"."d"']["min"] == Decimal(0) and got['"b"."d"']["max"] == Decimal("7498.5")
    assert got['"tags".element']["value_count"] == 10000
    # The schema was inferred from the first 4096 rows; the string in row 4999 went to `value`.
    assert '"late"' not in got, "Should not report: a late row holds a string in the value column"


def test_spark_missing_and_null_fields(spark: Any, tmp_path: Path) -> None:
    rows: list[Any] = [{"a": i, "n": None if i % 3 == 0 else i} for i in range(100)] + [{"b": 1}] * 10
    (f,) = _write(spark, rows, tmp_path / "m")
    got = _by_path(f)
    assert got['"a"']["value_count"] == 100 and got['"a"']["null_count"] == 10
    n = got['"n"']
    assert n["value_count"] == 66 and n["null_count"] == 44 and n["min"] == 1 and n["max"] == 98


def test_spark_forced_schema_with_doubles_nan_and_strings(spark: Any, tmp_path: Path) -> None:
    # Force a double column; JSON cannot carry NaN, so the NaN comes from SQL.
    df = spark.sql(
        "SELECT CASE WHEN id = 7 THEN to_variant_object(named_struct('x', double('NaN'), 's', 'q')) "
        "ELSE to_variant_object(named_struct('x', double(id) - 0.5, 's', repeat('z', 300))) END AS v "
        "FROM range(20)"
    )
    spark.conf.set("spark.sql.variant.forceShreddingSchemaForTest", "x double, s string")
    try:
        df.coalesce(1).write.mode("overwrite").parquet(str(tmp_path / "n"))
    finally:
        spark.conf.unset("spark.sql.variant.forceShreddingSchemaForTest")
    (f,) = sorted((tmp_path / "n").glob("*.parquet"))
    got = _by_path(f)
    x = got['"x"']
    assert x["shredded_type"] == "float64" and x["contains_nan"] is True
    assert (x["min"], x["max"]) == (-0.5, 18.5)
    s = got['"s"']
    # parquet-java drops binary stats of 4 KiB and more; 300-byte strings keep theirs, and the
    # DuckLake 256-byte rule applies either way.
    assert s["min"] == "q" and s["max"] == "z" * 255 + "{"
