"""Pruning soundness on Spark-written files (the smaller, slow run of the soundness property).

Spark writes random-ish events over several files (late type mismatches after its 4096-row
sample, nulls, missing fields, NaN, decimals); shredcat extracts and registers them; for random
predicates, Spark itself gives the ground truth: the files holding at least one matching row
(`input_file_name()` of `df.where(predicate)`). Every such file must be a candidate.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from service.catalog.db import upgrade_to_head
from service.catalog.service import Catalog
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from tests.spark.truth import files_per_predicate

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

N_PREDICATES = 40


def _predicates(rng: random.Random) -> list[str]:
    leaves = [
        lambda: f"variant_get(v, '$.id', 'bigint') = {rng.randint(0, 12000)}",
        lambda: f"variant_get(v, '$.id', 'bigint') BETWEEN {(a := rng.randint(0, 12000))} AND {a + rng.randint(0, 300)}",
        lambda: f"variant_get(v, '$.id', 'int') < {rng.randint(0, 12000)}",
        lambda: f"variant_get(v, '$.late', 'bigint') > {rng.randint(0, 12000)}",
        lambda: f"variant_get(v, '$.late', 'string') = '{rng.randint(0, 12000)}'",
        lambda: f"variant_get(v, '$.score', 'double') >= {rng.uniform(0, 100):.3f}",
        lambda: "isnan(variant_get(v, '$.score', 'double'))",
        lambda: "variant_get(v, '$.kind', 'string') IN ('a', 'c', 'zz')",
        lambda: f"variant_get(v, '$.user.name', 'string') = 'u{rng.randint(0, 300)}'",
        lambda: "variant_get(v, '$.opt', 'bigint') IS NOT NULL",
        lambda: "variant_get(v, '$.opt', 'bigint') IS NULL",
        lambda: f"variant_get(v, '$.amount', 'decimal(10,2)') > {rng.randint(0, 500)}.25",
    ]
    out = []
    for _ in range(N_PREDICATES):
        a = rng.choice(leaves)()
        r = rng.random()
        if r < 0.3:
            out.append(f"{a} AND {rng.choice(leaves)()}")
        elif r < 0.5:
            out.append(f"({a}) OR ({rng.choice(leaves)()})")
        elif r < 0.6:
            out.append(f"NOT ({a})")
        else:
            out.append(a)
    return out


def test_spark_written_files_are_never_pruned_wrongly(spark: Any, tmp_path: Path) -> None:
    from pyspark.sql import functions as F

    df = spark.range(0, 12000, 1, 6).selectExpr(
        "id",
        """to_variant_object(named_struct(
              'id', id,
              'late', CASE WHEN id % 2000 = 1999 THEN CAST(CAST(id AS STRING) AS VARIANT) ELSE CAST(id AS VARIANT) END,
              'score', CASE WHEN id % 977 = 5 THEN double('NaN') ELSE (id % 100) * 1.0D END,
              'kind', CASE WHEN id % 3 = 0 THEN 'a' WHEN id % 3 = 1 THEN 'b' ELSE CAST(NULL AS STRING) END,
              'user', named_struct('name', concat('u', CAST(id DIV 40 AS STRING))),
              'opt', CASE WHEN id < 6000 THEN CAST(NULL AS BIGINT) ELSE id END,
              'amount', CAST((id % 1000) * 0.5 AS DECIMAL(10,2))
           )) AS v""",
    )
    out = tmp_path / "lake"
    df.write.parquet(str(out))
    files = sorted(str(p) for p in out.glob("*.parquet"))
    assert len(files) >= 6

    url = f"sqlite:///{tmp_path / 'cat.db'}"
    upgrade_to_head(url)
    with Catalog(url) as catalog:
        catalog.create_table("lake", "t", ["v"])
        catalog.commit("lake", "t", [extract_file(f) for f in files])
        data = spark.read.parquet(*files)
        texts = _predicates(random.Random(11))
        # Spark's files for every predicate in one job (tests/spark/truth.py).
        truths = files_per_predicate(
            data,
            F.input_file_name(),
            [f"try_variant_get(v, '$.id', 'bigint') IS NOT NULL AND ({t.replace('variant_get(', 'try_variant_get(')})" for t in texts],
        )
        pruned_total = 0
        for text, uris in zip(texts, truths, strict=True):
            candidates = {c.path for c in catalog.iter_candidates("lake", "t", parse_sql(text))}
            truth = {u.replace("file://", "") for u in uris}
            missing = truth - candidates
            assert not missing, f"Should read: {sorted(missing)} hold rows matching {text}"
            pruned_total += len(files) - len(candidates)
        assert pruned_total > 0, "selective predicates should prune some Spark-written files"
