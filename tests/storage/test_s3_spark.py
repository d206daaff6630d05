"""Spark-written files in an S3 API server (moto on loopback): the rows equal the local rows,
and the Spark helpers' Python side (listing, executor-side extraction, driver-side payloads)
takes ``s3://`` URIs.

Spark's own ``s3a://`` connector needs the hadoop-aws jars, which no reachable registry serves
here: Spark writes to the local filesystem, the files are uploaded, and the helpers' extraction
functions run in this process as an executor would run them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from service.client import file_stats_payload
from service.spark import list_parquet_files
from service.spark.backfill import _extract_partition
from service.spark.write import extract_payloads
from service.stats.extract import extract_file
from tests.spark.conftest import spark  # noqa: F401 - the session-wide SparkSession fixture
from tests.storage.conftest import BUCKET, S3Server

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]


def _spark_files(spark: Any, out: Path) -> list[Path]:  # noqa: F811
    rows = [
        {"id": i, "user": {"name": f"u{i % 7}", "score": i * 0.25}, "tags": [i, i + 1], "x": float(i) if i % 5 else 0.5}
        for i in range(600)
    ]
    df = spark.createDataFrame([(json.dumps(r),) for r in rows], "j string").selectExpr("parse_json(j) AS v")
    df.repartition(3).write.mode("overwrite").parquet(str(out))
    return sorted(out.glob("*.parquet"))


def test_spark_files_over_s3(spark: Any, s3: S3Server, tmp_path: Path) -> None:  # noqa: F811
    local = _spark_files(spark, tmp_path / "out")
    assert len(local) == 3
    prefix = f"s3://{BUCKET}/spark/out/"
    for f in (tmp_path / "out").iterdir():  # _SUCCESS and .crc files too: the listing skips them
        s3.upload(f, f"spark/out/{f.name}")
    uris = [prefix + f.name for f in local]
    assert list_parquet_files(prefix) == uris
    for f, uri in zip(local, uris, strict=True):
        remote, here = extract_file(uri), extract_file(str(f))
        assert remote.paths and remote.paths == here.paths
        assert (remote.file_size_bytes, remote.record_count, remote.footer_size) == (
            here.file_size_bytes, here.record_count, here.footer_size,
        )  # fmt: skip
    # The helpers' Python side: an executor's partition and the driver's payloads.
    expected = [file_stats_payload(extract_file(str(f))) for f in local]
    for e, uri in zip(expected, uris, strict=True):
        e["path"] = uri
    got = list(_extract_partition(uris))
    assert [(p, err) for p, _, err in got] == [(u, None) for u in uris]
    assert [{**pl, "content-id": None} for _, pl, _ in got] == [{**e, "content-id": None} for e in expected]  # type: ignore[dict-item]
    assert [{**pl, "content-id": None} for pl in extract_payloads(None, uris)] == [{**e, "content-id": None} for e in expected]
    # A missing object is that file's error; the others are still extracted.
    bad = list(_extract_partition([uris[0], prefix + "gone.parquet", uris[1]]))
    assert [err is None for _, _, err in bad] == [True, False, True]
    assert "no such file" in str(bad[1][2])
