"""Two partitioned tables of the same 600 rows, one written by Spark and one by DuckDB, for the
DuckDB tests: partition columns ``day`` (date) and ``bucket`` (int); plain columns ``id``,
``score`` (double with NaN and -0.0), ``name``, ``maybe`` (nullable int), ``big`` (beyond 2**53)
and ``at`` (a timestamp: INT96 from Spark, TIMESTAMPTZ from DuckDB); a Variant ``v`` with an
int64, a timestamp, a string, a decimal, a double, a boolean, a date and an array of strings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SPARK_COLUMNS = (
    "id",
    "CASE WHEN id % 97 = 5 THEN CAST('NaN' AS DOUBLE) WHEN id % 89 = 3 THEN -0.0D ELSE (id % 100) * 1.0D END AS score",
    "concat('n', id % 5) AS name",
    "CASE WHEN id % 3 = 0 THEN NULL ELSE CAST(id AS INT) END AS maybe",
    "1152921504606846977 + id AS big",
    "TIMESTAMP '2024-03-01 00:00:00' + make_interval(0, 0, 0, 0, 0, id, 0) AS at",
    "DATE '2024-03-01' + CAST(id DIV 100 AS INT) AS day",
    "CAST(id % 3 AS INT) AS bucket",
    "to_variant_object(named_struct('user', named_struct('id', id DIV 6), "
    "'ts', TIMESTAMP '2024-03-01 00:00:00' + make_interval(0, 0, 0, 0, 0, id, 0), "
    "'kind', CASE WHEN id % 4 = 0 THEN 'buy' ELSE 'view' END, 'price', CAST((id % 50) * 1.25 AS DECIMAL(10,2)), "
    "'ratio', (id % 8) / 8.0D, 'flag', id % 2 = 0, 'd', DATE '2024-01-01' + CAST(id % 30 AS INT), "
    "'tags', array(concat('t', id % 3), 'x'))) AS v",
)

DUCKDB_SELECT = """
SELECT id,
  CASE WHEN id % 97 = 5 THEN 'NaN'::DOUBLE WHEN id % 89 = 3 THEN -0.0::DOUBLE ELSE (id % 100) * 1.0 END::DOUBLE AS score,
  'n' || (id % 5) AS name,
  CASE WHEN id % 3 = 0 THEN NULL ELSE id::INTEGER END AS maybe,
  1152921504606846977 + id AS big,
  TIMESTAMPTZ '2024-03-01 00:00:00+00' + to_seconds(id) AS "at",
  DATE '2024-03-01' + (id // 100)::INTEGER AS day,
  (id % 3)::INTEGER AS bucket,
  {'user': {'id': id // 6}, 'ts': TIMESTAMPTZ '2024-03-01 00:00:00+00' + to_seconds(id),
   'kind': CASE WHEN id % 4 = 0 THEN 'buy' ELSE 'view' END, 'price': ((id % 50) * 1.25)::DECIMAL(10,2),
   'ratio': (id % 8) / 8.0, 'flag': id % 2 = 0, 'd': DATE '2024-01-01' + (id % 30)::INTEGER,
   'tags': ['t' || (id % 3), 'x']}::VARIANT AS v
FROM range(600) r(id)
"""


def write_spark(spark: Any, root: Path) -> Path:
    spark.range(0, 600, 1, 4).selectExpr(*SPARK_COLUMNS).write.partitionBy("day", "bucket").parquet(str(root))
    return root


def write_duckdb(root: Path) -> Path:
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"COPY ({DUCKDB_SELECT}) TO '{root}' (FORMAT parquet, PARTITION_BY (day, bucket))")
    con.close()
    return root


def data_files(root: Path) -> list[str]:
    return sorted(str(p.resolve()) for p in root.rglob("*.parquet"))
