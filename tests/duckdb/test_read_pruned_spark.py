"""``service.duckdb.read_pruned`` against Spark's own rows, on both catalog backends.

The same 600 rows are written by Spark and by DuckDB as partitioned tables (``tests/duckdb/lakes.py``)
and registered by path. For each of ≥ 100 predicates mixing partition columns, plain columns and
Variant paths (all three kinds, under AND/OR/NOT), the truth is the ids of the rows on which Spark's
value of the predicate is true (the rows its ``where`` keeps), on a full read of the directory;
``read_pruned`` (a DuckDB relation over the catalog's candidates, the predicate rendered in DuckDB
SQL) must return exactly those ids, duplicates included, and the corpus as a whole must prune files.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from service.catalog import Catalog
from service.duckdb import engine, plan_pruned, read_pruned
from tests.duckdb.lakes import data_files, write_duckdb, write_spark

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

PARTITION = [
    "day = '2024-03-02'",
    "day >= DATE '2024-03-04'",
    "bucket = 1",
    "bucket IN (0, 2)",
    "day BETWEEN '2024-03-01' AND '2024-03-02'",
    "bucket <> 1",
    "day IS NULL",
    "day < '2024-03-03'",
]
PLAIN = [
    "id BETWEEN 100 AND 180",
    "id = 599",
    "score > 90.5",
    "isnan(score)",
    "score < 0",
    "score = 0",
    "name = 'n3'",
    "name IN ('n1', 'n4')",
    "maybe IS NULL",
    "maybe > 300",
    "big > 1152921504606847300",
    "NOT isnan(score)",
    "id < 50",
    "big IN (1152921504606846977, 1152921504606847000)",
    "name > 'n2'",
    "score >= 99.0",
    "at >= TIMESTAMP '2024-03-01 00:08:00'",
    "at < TIMESTAMP '2024-03-01 00:00:30' OR at IS NULL",
]
VARIANT = [
    "variant_get(v, '$.user.id', 'bigint') = 37",
    "variant_get(v, '$.user.id', 'bigint') < 10",
    "variant_get(v, '$.user.id', 'int') IN (1, 2, 90)",
    "try_variant_get(v, '$.user.id', 'int') = 12",
    "variant_get(v, '$.ts', 'timestamp') BETWEEN TIMESTAMP '2024-03-01 00:05:00' AND TIMESTAMP '2024-03-01 00:06:30'",
    "variant_get(v, '$.kind', 'string') = 'buy'",
    "variant_get(v, '$.price', 'decimal(10,2)') > 12.50",
    "variant_get(v, '$.price', 'decimal(12,3)') <= 5.000",
    "variant_get(v, '$.ratio', 'double') <= 0.25",
    "variant_get(v, '$.flag', 'boolean') = true",
    "variant_get(v, '$.d', 'date') = DATE '2024-01-05'",
    "variant_get(v, '$.tags[0]', 'string') = 't1'",
    "v:user.id::int > 80",
    "variant_get(v, '$.nope', 'bigint') IS NULL",
    "variant_get(v, '$.user.id', 'double') > 50.5",
    "variant_get(v, '$.user.id', 'decimal(5,1)') = 7.0",
    "variant_get(v, '$.user.id', 'tinyint') < 5",
    "try_variant_get(v, '$.tags', 'bigint') IS NULL",
    "variant_get(v, '$.tags[1]', 'string') <> 'x'",
    "variant_get(v, '$.ts', 'timestamp') > TIMESTAMP '2024-03-01 00:09:00'",
]


def _corpus() -> list[str]:
    """Every atom alone, then 120 seeded combinations of two or three atoms of different kinds."""
    rng = random.Random(35)
    out = [*PARTITION, *PLAIN, *VARIANT]
    kinds = [PARTITION, PLAIN, VARIANT]
    while len(out) < len(PARTITION) + len(PLAIN) + len(VARIANT) + 120:
        picked = rng.sample(kinds, rng.choice([2, 3]))
        atoms = [f"({rng.choice(k)})" for k in picked]
        text = atoms[0]
        for a in atoms[1:]:
            text = f"{text} {rng.choice(['AND', 'AND', 'OR'])} {a}"
        if rng.random() < 0.2:
            text = f"NOT ({text})"
        out.append(text)
    return out


#: Some element of the array (``[*]``: Spark's three-valued ``exists``), alone and combined.
SOME_TAG = "exists(try_variant_get(v, '$.tags', 'array<variant>'), e -> variant_get(e, '$', 'string') = 't1')"
PREDICATES = [
    *_corpus(),
    SOME_TAG,
    f"NOT ({SOME_TAG})",
    f"bucket = 1 AND {SOME_TAG}",
    f"{SOME_TAG} OR id < 20",
    "exists(try_variant_get(v, '$.tags', 'array<variant>'), e -> variant_get(e, '$', 'string') > 't1') AND day < '2024-03-03'",
]


@pytest.fixture(scope="module")
def lakes(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("duckdb-read")
    return {"spark": write_spark(spark, root / "spark"), "duck": write_duckdb(root / "duck")}


_TRUTH: dict[tuple[str, str], list[int]] = {}


def _truth(spark: Any, lake: Path, which: str, predicate: str) -> list[int]:
    key = (which, predicate)
    if key not in _TRUTH:
        # The whole corpus in one full read: a column per predicate holding Spark's value of it on
        # each row, whose true rows are those its ``where`` keeps. A union of one filtered branch per
        # predicate (one plan of ~170 scans) took Spark minutes to analyse and optimise, one job per
        # predicate ~0.5 s each; this is one scan and one job.
        from pyspark.sql import functions as F

        todo = [p for p in dict.fromkeys([*PREDICATES, predicate]) if (which, p) not in _TRUTH]
        columns = [F.expr(p).alias(f"p{i}") for i, p in enumerate(todo)]
        rows = spark.read.parquet(str(lake)).select("id", *columns).collect()
        for i, p in enumerate(todo):
            _TRUTH[(which, p)] = sorted(r["id"] for r in rows if r[f"p{i}"] is True)
    return _TRUTH[key]


@pytest.mark.parametrize("which", ["spark", "duck"])
def test_read_pruned_rows_equal_sparks_rows(spark: Any, lakes: dict[str, Path], catalog_url: str, which: str) -> None:
    assert len(PREDICATES) >= 100
    con = engine.connect()
    with Catalog(catalog_url) as cat:
        cat.register("lake", which, data_files(lakes[which]))
        pruned = 0
        total = len(data_files(lakes[which]))
        wrong = []
        for predicate in PREDICATES:
            scan = plan_pruned(con, f"lake.{which}", predicate, catalog=cat)
            got = sorted(r[0] for r in scan.relation(con).project("id").fetchall())
            if got != _truth(spark, lakes[which], which, predicate):
                wrong.append((predicate, scan.where))
            assert scan.files_total == total and len(scan.paths) == total - scan.files_pruned
            pruned += scan.files_pruned
        assert wrong == []
        assert pruned > len(PREDICATES)  # the corpus prunes (on average more than one file each)
        # read_pruned is plan_pruned's relation; a predicate keeping no file reads none.
        rel = read_pruned(con, f"lake.{which}", "id = 599 AND bucket = 0", catalog=cat)
        assert rel.columns[:2] == ["id", "score"] and rel.fetchall() == []


def test_verify_data_passes_on_honest_spark_and_duckdb_files(lakes: dict[str, Path], sqlite_url: str) -> None:
    """``verify --data`` on both writers' files: every stored fact agrees with the data, and every
    stored row is checked but the array's element path (DuckDB reads Spark's Variant as VARIANT)."""
    from service.duckdb.verify import verify_data

    with Catalog(sqlite_url) as cat:
        for which, root in lakes.items():
            cat.register("lake", which, data_files(root))
            report, checks = verify_data(cat, "lake", which)
            assert report.problems == () and report.matching == len(data_files(root)), which
            assert {u for c in checks for u in c.unchecked} == {("v", '"tags".element', "array element paths are not checked")}


@pytest.mark.parametrize("which", ["spark", "duck"])
def test_ducklake_export_rows_equal_sparks_rows_and_skip_files(
    spark: Any, lakes: dict[str, Path], sqlite_url: str, tmp_path: Path, which: str
) -> None:
    """The exported DuckLake table, attached by the real extension, answers every predicate of the
    corpus with Spark's rows, and DuckLake reads fewer files than the table holds (its EXPLAIN
    ANALYZE count) on the exported column and partition statistics: Spark's Variant files included."""
    from service.duckdb.ducklake import export_table
    from service.pruning.parse_sql import parse_sql
    from service.pruning.render_duckdb import to_duckdb_sql
    from tests.duckdb.test_ducklake_export import attached, files_read, rows_and_files_read

    total = len(data_files(lakes[which]))
    with Catalog(sqlite_url) as cat:
        cat.register("lake", which, data_files(lakes[which]))
        result = export_table(cat, "lake", which, str(tmp_path / "x.ducklake"))
        schema = cat.table_schema("lake", which)
    assert (result.files, result.rows, result.skipped_files, result.skipped_columns) == (total, 600, (), ())
    con = attached(result)
    table = f"lake.lake.{which}"
    types = engine.describe(con, table)
    wrong, read = [], 0
    for predicate in PREDICATES:
        where = to_duckdb_sql(parse_sql(predicate, schema=schema), column_types=types)
        rows, n = rows_and_files_read(con, f"SELECT id FROM {table} WHERE {where}")
        if sorted(r[0] for r in rows) != _truth(spark, lakes[which], which, predicate):
            wrong.append((predicate, where))
        read += n
    assert wrong == []
    assert read < len(PREDICATES) * total
    assert files_read(con, f"SELECT id FROM {table} WHERE id = 599") == 1
    assert files_read(con, f"SELECT id FROM {table} WHERE day = DATE '2024-03-02' AND bucket = 1") == files_read(
        con, f"SELECT id FROM read_parquet('{lakes[which]}/day=2024-03-02/bucket=1/*.parquet')"
    )
