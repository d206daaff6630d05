"""Whole predicates against Spark's own answer, on both catalog backends.

Spark writes a table with ``partitionBy("day", "bucket")`` (a date and an int partition column),
plain columns (bigints, one of them beyond 2**53, a double with NaN and -0.0, a string, a nullable int) and a shredded
Variant column; the catalog registers every file by path (footers read by the extractor,
partition values read from the paths). For each predicate mixing partition columns, plain
columns, Variant paths and sub-expressions pruning cannot use, the ground truth is Spark's
``_metadata.file_path`` of the rows the predicate selects: every such file must be a candidate
(zero false prunes); the predicates as a whole must prune.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from service.catalog import Catalog
from service.pruning.parse_sql import parse_sql
from tests.spark.truth import matching_file_uris

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

PREDICATES = [
    "day = DATE '2024-03-02' AND variant_get(v, '$.user.id', 'bigint') = 37",
    "day = '2024-03-03'",
    "day >= '2024-03-04' AND bucket = 1",
    "bucket IN (0, 2) AND id BETWEEN 100 AND 180",
    "id BETWEEN 50 AND 60 OR variant_get(v, '$.ts', 'timestamp') BETWEEN TIMESTAMP '2024-03-01 05:00:00' "
    "AND TIMESTAMP '2024-03-01 05:30:00'",
    "NOT (day < '2024-03-05') AND variant_get(v, '$.kind', 'string') = 'buy'",
    "score > 90.5",
    "score < 0 OR isnan(score)",
    "name = 'n3' AND day BETWEEN DATE '2024-03-01' AND DATE '2024-03-02'",
    "maybe IS NULL AND bucket = 2",
    "maybe IS NOT NULL AND variant_get(v, '$.user.id', 'bigint') < 10",
    "length(name) > 2 AND day = '2024-03-06'",
    "id % 7 = 0 OR bucket = 0",
    "upper(name) = 'N1' AND variant_get(v, '$.user.id', 'bigint') IN (1, 2, 90)",
    "variant_get(v, '$.user.id', 'bigint') > 55 AND (bucket = 1 OR id < 20)",
    "day IS NULL OR bucket IS NULL",
    "id = 599",
    "try_variant_get(v, '$.user.id', 'int') = 12 AND day <> '2024-03-01'",
    # Spark compares a whole IN list in its common type: with a DOUBLE in it, every bigint casts to
    # double, and 2**60 + 1 .. 2**60 + 128 all equal 2**60 there (no exact bound can say so).
    "big IN (1152921504606846976, 1.0D)",
    "big IN (1152921504606846976, 2) AND bucket = 1",
]


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mixed") / "events"
    df = spark.range(0, 600, 1, 4).selectExpr(
        "id",
        "CASE WHEN id % 97 = 5 THEN CAST('NaN' AS DOUBLE) WHEN id % 89 = 3 THEN -0.0D "
        "ELSE (id % 100) * 1.0D END AS score",
        "concat('n', id % 5) AS name",
        "CASE WHEN id % 3 = 0 THEN NULL ELSE CAST(id AS INT) END AS maybe",
        "1152921504606846977 + id AS big",
        "DATE '2024-03-01' + CAST(id DIV 100 AS INT) AS day",
        "CAST(id % 3 AS INT) AS bucket",
        "to_variant_object(named_struct('user', named_struct('id', id DIV 6), "
        "'ts', TIMESTAMP '2024-03-01 00:00:00' + make_interval(0, 0, 0, 0, 0, id, 0), "
        "'kind', CASE WHEN id % 4 = 0 THEN 'buy' ELSE 'view' END)) AS v",
    )
    df.write.partitionBy("day", "bucket").parquet(str(root))
    return root


def _local(uri: str) -> str:
    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


def _truth_and_plan(
    full: Any, lake: Path, cat: Catalog, predicate: str, corpus: list[str]
) -> tuple[set[str], set[str]]:
    """The files of the rows Spark's filter selects (``corpus`` answered in the same job), and the
    catalog's candidates for it."""
    truth = {_local(f) for f in matching_file_uris(full, lake, predicate, corpus)}
    got = {
        c.path for c in cat.iter_candidates("lake", "events", lambda schema: parse_sql(predicate, schema=schema))
    }
    return truth, got


#: Where Spark's modes compare differently (without ANSI an IN list with a string is compared as
#: strings, a float with an integer literal as float; with ANSI as values and as double).
MODE_PREDICATES = [
    "id NOT IN ('07')",
    "id NOT IN ('7', 1.0D)",
    "day NOT IN ('2024-3-1')",
    "score NOT IN ('90')",
    "maybe IN ('5') OR bucket NOT IN ('01')",
    "CAST(score AS FLOAT) = 16777217",
    "id IN ('7', 8) AND bucket = 1",
    # Beyond int64 Spark folds an ordering to a constant that holds for NULLs too: the bucket=0
    # files, whose `maybe` is NULL in every row, hold matching rows.
    "NOT (maybe > 9223372036854775808)",
    "maybe <= 9223372036854775808 AND bucket = 0",
    "NOT (variant_get(v, '$.user.id', 'int') < -9223372036854775809) AND maybe IS NULL",
]


@pytest.mark.parametrize("ansi", [False, True])
def test_predicates_spark_modes_read_differently_never_prune_wrongly(
    spark: Any, lake: Path, catalog_url: str, ansi: bool
) -> None:
    paths = sorted(str(p.resolve()) for p in lake.rglob("*.parquet"))
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())
    try:
        with Catalog(catalog_url) as cat:
            cat.register("lake", "events", paths)
            full = spark.read.parquet(str(lake))
            for predicate in MODE_PREDICATES:
                truth, got = _truth_and_plan(full, lake, cat, predicate, MODE_PREDICATES)
                assert truth <= got, (ansi, predicate, sorted(truth - got))
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def test_no_false_prunes_against_sparks_file_paths(spark: Any, lake: Path, catalog_url: str) -> None:
    paths = sorted(str(p.resolve()) for p in lake.rglob("*.parquet"))
    with Catalog(catalog_url) as cat:
        cat.register("lake", "events", paths)
        info = cat.get_table("lake", "events")
        kinds = {c.name: (c.type, c.kind) for c in info.columns}
        assert kinds["day"] == ("date", "partition") and kinds["bucket"] == ("int32", "partition")
        assert kinds["id"] == ("int64", "plain") and kinds["score"] == ("float64", "plain")
        full = spark.read.parquet(str(lake))
        total = len(paths)
        pruned = 0
        for predicate in PREDICATES:
            truth, got = _truth_and_plan(full, lake, cat, predicate, PREDICATES)
            assert truth <= got, (predicate, sorted(truth - got))
            pruned += total - len(got)
        assert pruned > 0
