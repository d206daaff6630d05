"""The absent-field rule against Spark's own answer, on files Spark wrote and shredded itself.

Spark infers each file's shredding from its rows (a key in >= 10 % of them is shredded, a rarer
one goes to the residual ``value``). The table: files whose rows all carry ``scoped`` (shredded),
files whose rows never do (the root object fully shredded without it: the rule prunes them), and
files where ``scoped`` (or ``version.minor``) is rare, left in the residual: no proof there, and
Spark reads matching rows from them, so pruning them would be a false prune. Ground truth is
Spark's ``_metadata.file_path`` of the rows each predicate selects, in both ANSI modes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from service.pruning.absent import objects_by_path
from service.pruning.evaluator import FileEvaluator, stats_by_path
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from service.stats.objects import file_objects
from tests.spark.truth import matching_file_uris

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

PREDICATES = [
    "variant_get(v, '$.scoped', 'boolean') = true",
    "try_variant_get(v, '$.scoped', 'int') > 0",
    "variant_get(v, '$.scoped', 'boolean') IS NOT NULL",
    "NOT (variant_get(v, '$.scoped', 'boolean') IS NULL)",
    "NOT (variant_get(v, '$.scoped', 'boolean') = false)",
    "variant_get(v, '$.scoped', 'boolean') = true OR variant_get(v, '$.rank', 'bigint') < 5",
    "try_variant_get(v, '$.version.minor', 'bigint') >= 0",
    "variant_get(v, '$.version.minor', 'bigint') IN (1, 2, 3)",
    "variant_get(v, '$.scoped', 'boolean') IS NULL",
    "NOT (variant_get(v, '$.scoped', 'boolean') = true AND variant_get(v, '$.rank', 'bigint') > 10)",
]


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("absent") / "listings"
    # rank 1..800: scoped in every row; 801..1600: never; 1601..2400: in 1 row of 25 (rare: the
    # residual holds it); version.minor in every row up to 400, in 1 of 25 above 2000.
    json = (
        "concat('{\"rank\": ', id, ', \"name\": \"p', id, '\"', "
        "CASE WHEN id <= 800 THEN concat(', \"scoped\": ', CASE WHEN id % 2 = 0 THEN 'true' ELSE 'false' END) "
        "WHEN id > 1600 AND id % 25 = 0 THEN ', \"scoped\": true' ELSE '' END, "
        "', \"version\": {\"major\": ', id DIV 100, "
        "CASE WHEN id <= 400 OR (id > 2000 AND id % 25 = 0) THEN concat(', \"minor\": ', id % 4) ELSE '' END, "
        "'}}')"
    )
    df = spark.range(1, 2401, 1, 1).selectExpr("CAST(id AS INT) AS rank", f"parse_json({json}) AS v")
    df.repartitionByRange(12, "rank").write.parquet(str(root))
    return root


def _local(uri: str) -> str:
    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


@pytest.mark.parametrize("ansi", [False, True])
def test_absent_fields_never_prune_a_file_spark_reads_rows_from(spark: Any, lake: Path, ansi: bool) -> None:
    paths = sorted(str(p.resolve()) for p in lake.rglob("*.parquet"))
    files = {p: (stats_by_path(extract_file(p).paths), objects_by_path(file_objects(p))) for p in paths}
    recorded = [p for p, (_, objects) in files.items() if ("v", "root") in objects]
    assert 0 < len(recorded) < len(paths)  # Spark's rare keys leave some roots unproven
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())
    try:
        full = spark.read.parquet(str(lake))
        pruned_by_rule = 0
        for predicate in PREDICATES:
            truth = {str(Path(_local(f)).resolve()) for f in matching_file_uris(full, lake, predicate, PREDICATES)}
            ev = FileEvaluator(parse_sql(predicate))
            kept = set()
            for p, (stats, objects) in files.items():
                verdict = ev.evaluate(stats, objects)
                if verdict.might_match:
                    kept.add(p)
                elif ev.evaluate(stats).might_match:
                    pruned_by_rule += 1
                    assert "absent from every row of this file" in verdict.reason
            assert truth <= kept, (ansi, predicate, sorted(truth - kept))
            if predicate == PREDICATES[0]:
                # Spark reads scoped rows from files whose root is unproven (scoped rare there).
                assert truth - set(recorded), "no file with a rare scoped key: the risky case is untested"
        assert pruned_by_rule >= 3 * 4  # the files never holding scoped, for several predicates
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def test_the_catalog_prunes_absent_fields_as_spark_reads(spark: Any, lake: Path, catalog_url: str) -> None:
    """The same table registered in the catalog (objects stored, planned in SQL at both backends):
    every file Spark reads a selected row from is a candidate, and the files lacking ``scoped``
    are pruned without any footer read at plan time."""
    from service.catalog import Catalog

    paths = sorted(str(p.resolve()) for p in lake.rglob("*.parquet"))
    full = spark.read.parquet(str(lake))
    with Catalog(catalog_url) as cat:
        cat.register("lake", "listings", paths)
        pruned_by_rule = 0
        for predicate in PREDICATES:
            truth = {str(Path(_local(f)).resolve()) for f in matching_file_uris(full, lake, predicate, PREDICATES)}
            kept = {c.path for c in cat.iter_candidates("lake", "listings", parse_sql(predicate))}
            assert truth <= kept, (predicate, sorted(truth - kept))
            ev = FileEvaluator(parse_sql(predicate))
            plain = {p for p in paths if ev.evaluate(stats_by_path(extract_file(p).paths)).might_match}
            pruned_by_rule += len(plain - kept)
        assert pruned_by_rule >= 3 * 4  # as the evaluator alone: the files never holding scoped
