"""The writer zoo's Spark member (issue 30, point 4): trap values written by Spark itself (its
default INT96 timestamps and with TIMESTAMP_MICROS), every row true of the data read back, and a
commit taking the files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.stats.extract import extract_file
from tests.spark.conftest import spark  # noqa: F401  (the session fixture)
from tests.writers.zoo import check_row, column_values

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

TRAPS = r"""
SELECT
  CAST(CASE WHEN id % 3 = 0 THEN 127 WHEN id % 3 = 1 THEN -128 ELSE NULL END AS tinyint) AS i8,
  CASE WHEN id % 2 = 0 THEN 9223372036854775807 ELSE -9223372036854775808 END AS i64,
  CASE WHEN id % 5 = 0 THEN double('NaN') WHEN id % 5 = 1 THEN -0.0 WHEN id % 5 = 2 THEN 0.0
       WHEN id % 5 = 3 THEN double('Infinity') ELSE NULL END AS d,
  CAST(CASE WHEN id % 4 = 0 THEN -0.0 ELSE id * 0.5 END AS float) AS f,
  CASE WHEN id % 6 = 0 THEN '' WHEN id % 6 = 1 THEN repeat('é', 200) WHEN id % 6 = 2 THEN concat('a', char(0), 'b')
       WHEN id % 6 = 3 THEN repeat('z', 300) WHEN id % 6 = 4 THEN NULL ELSE '日本' END AS s,
  CAST(CASE WHEN id % 2 = 0 THEN 'x' ELSE repeat('y', 270) END AS binary) AS bl,
  CAST(id / 7 - 3 AS decimal(9,2)) AS dec9,
  CAST(CASE WHEN id % 2 = 0 THEN 12345678901234567890.1234567891 ELSE -1 END AS decimal(38,10)) AS dec38,
  CASE WHEN id % 3 = 0 THEN DATE '0001-01-01' WHEN id % 3 = 1 THEN DATE '9999-12-31' ELSE NULL END AS dt,
  CASE WHEN id % 2 = 0 THEN TIMESTAMP '1900-01-01 00:00:00' ELSE TIMESTAMP '2262-04-11 23:47:16.854775' END AS ts,
  CAST(NULL AS int) AS only_null,
  42 AS same
FROM range(0, 60)
"""


@pytest.mark.parametrize("timestamps", ["INT96", "TIMESTAMP_MICROS"])
def test_spark_files_give_true_rows(spark: Any, tmp_path: Path, timestamps: str) -> None:  # noqa: F811
    spark.conf.set("spark.sql.parquet.outputTimestampType", timestamps)
    try:
        spark.sql(TRAPS).repartition(2).write.parquet(str(tmp_path / "out"))
    finally:
        spark.conf.unset("spark.sql.parquet.outputTimestampType")
    files = sorted((tmp_path / "out").glob("*.parquet"))
    assert files
    for path in files:
        fs = extract_file(str(path))
        rows = {c.column: c for c in fs.columns}
        assert set(rows) == {"i8", "i64", "d", "f", "s", "bl", "dec9", "dec38", "dt", "ts", "only_null", "same"}
        for name, row in rows.items():
            assert check_row(column_values(path, name, row.column_type.kind.value), row) == [], name
        # INT96 (Spark's default): counts only; TIMESTAMP_MICROS: the data's bounds.
        assert (rows["ts"].min_value is None) == (timestamps == "INT96")
        assert rows["d"].contains_nan is True and rows["same"].min_value == rows["same"].max_value == 42
