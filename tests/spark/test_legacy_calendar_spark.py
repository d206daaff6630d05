"""Files Spark writes in its LEGACY calendar mode (``datetimeRebaseModeInWrite=LEGACY``): old dates
and timestamps are stored in the Julian calendar and rebased by Spark when it reads them, so their
stored bounds are not what Spark compares. Ground truth is Spark's own reading of the files: every
file holding a matching row must be a candidate, for plain columns and Variant paths alike, while
the values past the cutovers still prune."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from service.catalog import Catalog
from service.pruning.parse_sql import parse_sql
from tests.spark.truth import matching_file_uris

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

DATES = ["0001-01-01", "1000-06-15", "1582-10-01", "1582-10-20", "2024-03-01"]
PREDICATES = [
    *(f"d = DATE'{d}'" for d in DATES),
    *(f"ts = TIMESTAMP'{d} 00:00:00'" for d in DATES),
    *(f"try_variant_get(v, '$.d', 'date') = DATE'{d}'" for d in DATES),
    *(f"try_variant_get(v, '$.t', 'timestamp') = TIMESTAMP'{d} 00:00:00'" for d in DATES),
    "d <= DATE'1000-06-20'",
    "d > DATE'2000-01-01'",
]


@pytest.fixture(scope="module")
def legacy_lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("legacy") / "t"
    keys = ("spark.sql.parquet.datetimeRebaseModeInWrite", "spark.sql.parquet.outputTimestampType")
    saved = {k: spark.conf.get(k, None) for k in keys}
    spark.conf.set(keys[0], "LEGACY")
    spark.conf.set(keys[1], "TIMESTAMP_MICROS")
    try:
        for i, day in enumerate(DATES):
            spark.sql(
                f"SELECT DATE'{day}' AS d, TIMESTAMP'{day} 00:00:00' AS ts, "
                f"to_variant_object(named_struct('d', DATE'{day}', 't', TIMESTAMP'{day} 00:00:00')) AS v"
            ).coalesce(1).write.parquet(str(root / f"part={i}"))
    finally:
        for k, v in saved.items():
            if v is None:
                spark.conf.unset(k)
            else:
                spark.conf.set(k, v)
    return root


def test_legacy_calendar_files_are_never_pruned_wrongly(spark: Any, legacy_lake: Path, catalog_url: str) -> None:
    paths = sorted(str(p.resolve()) for p in legacy_lake.rglob("*.parquet"))
    assert spark.conf.get("spark.sql.session.timeZone") in ("UTC", "Etc/UTC")
    full = spark.read.parquet(str(legacy_lake))
    pruned = 0
    with Catalog(catalog_url) as cat:
        cat.register("lake", "legacy", paths)
        for predicate in PREDICATES:
            truth = {unquote(urlparse(f).path) for f in matching_file_uris(full, legacy_lake, predicate, PREDICATES)}
            assert truth, predicate  # every predicate names a value some file holds, or is a range
            got = {
                c.path
                for c in cat.iter_candidates("lake", "legacy", lambda schema, p=predicate: parse_sql(p, schema=schema))
            }
            assert truth <= got, (predicate, sorted(truth - got))
            pruned += len(paths) - len(got)
    assert pruned > 0  # the files past the cutovers still prune
