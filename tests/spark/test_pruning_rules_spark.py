"""The cast and prefix rules against Spark's own answer, on both catalog backends, in both ANSI
modes.

Spark writes a small listing table (``partitionBy("registry")``, ranges of ``rank`` per file, a
Variant shredded by Spark per file with an int64 ``rank``, a decimal ``score``, an int64
``version.major`` and string ``name``); for each predicate the ground truth is Spark's
``_metadata.file_path`` of the rows it selects: every such file must be a candidate (zero false
prunes), and each rule must prune some file.
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

RULES: dict[str, list[str]] = {
    "narrowing": [
        "variant_get(v, '$.rank', 'int') <= 10",
        "try_variant_get(v, '$.rank', 'smallint') BETWEEN 700 AND 720",
        "try_variant_get(v, '$.big', 'int') > 5",  # every big value overflows int: no row
        "try_variant_get(v, '$.rank', 'tinyint') = 100",
        "try_variant_get(v, '$.rank', 'smallint') IN (5, 1999)",
        "try_variant_get(v, '$.rank', 'tinyint') IS NULL AND rank < 50",
    ],
    "widening": [
        "variant_get(v, '$.version.major', 'double') > 100",
        "variant_get(v, '$.rank', 'float') >= 1990.5",
        "variant_get(v, '$.rank', 'decimal(10,2)') < 3.5",
        "try_variant_get(v, '$.rank', 'decimal(3,1)') = 12.0",
        "variant_get(v, '$.big', 'double') = 9007199254740992.0",  # 2**53 + 1 rounds to 2**53
    ],
    "decimal_scale": [
        "variant_get(v, '$.score', 'decimal(10,1)') >= 1999.0",
        "variant_get(v, '$.score', 'decimal(12,4)') < 0.5",
        "try_variant_get(v, '$.score', 'decimal(3,1)') > 90",
        "variant_get(v, '$.score', 'decimal(10,0)') = 3",
    ],
    "string_eq": [
        "variant_get(v, '$.rank', 'string') = '42'",
        "variant_get(v, '$.rank', 'string') IN ('1', '1500', '042')",
        "variant_get(v, '$.rank', 'string') != '7' AND rank < 20",
    ],
    "prefix": [
        "name LIKE 'boto3%'",
        "startswith(name, 'pytest-')",
        "variant_get(v, '$.name', 'string') LIKE 'pytest-%'",
        "startswith(variant_get(v, '$.name', 'string'), 'boto3')",
        "name LIKE 'aws!_%' ESCAPE '!'",
        "NOT (name LIKE 'boto3%') AND rank < 100",
        "name NOT LIKE 'boto3%'",
        "name NOT LIKE 'aws!_%' ESCAPE '!'",
        "variant_get(v, '$.name', 'string') NOT LIKE 'pytest-%'",
    ],
}
CORPUS = [p for predicates in RULES.values() for p in predicates]


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("rules") / "listings"
    stems = "array('boto3', 'pytest', 'aws', 'serde', 'react', 'flask')"
    df = spark.range(1, 2001, 1, 1).selectExpr(
        "CAST(id AS INT) AS rank",
        "CASE WHEN id % 2 = 0 THEN 'pypi' ELSE 'npm' END AS registry",
        f"concat(element_at({stems}, CAST(id DIV 200 % 6 + 1 AS INT)), "
        "CASE WHEN id % 3 = 0 THEN '_' ELSE '-' END, CAST(id AS STRING)) AS name",
    )
    df = df.selectExpr(
        "rank",
        "registry",
        "name",
        "to_variant_object(named_struct('rank', CAST(rank AS BIGINT), 'name', name, "
        "'score', CAST(rank / 1.0 + 0.005 * (rank % 3) AS DECIMAL(9,3)), "
        "'big', CAST(9007199254740993 + rank AS BIGINT), "
        "'version', named_struct('major', CAST(rank DIV 10 AS BIGINT)))) AS v",
    )
    df.repartitionByRange(12, "rank").write.partitionBy("registry").parquet(str(root))
    return root


def _local(uri: str) -> str:
    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


@pytest.mark.parametrize("ansi", [False, True])
def test_rules_never_prune_a_file_spark_reads_rows_from(spark: Any, lake: Path, catalog_url: str, ansi: bool) -> None:
    paths = sorted(str(p.resolve()) for p in lake.rglob("*.parquet"))
    before = spark.conf.get("spark.sql.ansi.enabled")
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())
    try:
        with Catalog(catalog_url) as cat:
            cat.register("lake", "listings", paths)
            full = spark.read.parquet(str(lake))
            for rule, predicates in RULES.items():
                pruned = 0
                for predicate in predicates:
                    truth = {str(Path(_local(f)).resolve()) for f in matching_file_uris(full, lake, predicate, CORPUS)}
                    got = {
                        c.path
                        for c in cat.iter_candidates(
                            "lake", "listings", lambda schema, p=predicate: parse_sql(p, schema=schema)
                        )
                    }
                    assert truth <= got, (ansi, predicate, sorted(truth - got))
                    pruned += len(paths) - len(got)
                assert pruned > 0, (rule, "prunes nothing")
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)
