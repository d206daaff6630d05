"""Files written by Spark 4's own shredding writer (parquet-java), read back from Azure Blob
(Azurite) and GCS (gcp-storage-emulator): ``shredcat stats`` over the store's prefix gives exactly
the rows of the same files on the local disk, and the Spark helpers' Python side (listing, an
executor's extraction) takes the stores' URIs. (S3: tests/storage/test_s3_spark.py.)

Spark itself cannot write to these stores here (``abfs://`` and ``gs://`` need Hadoop connector
jars no reachable registry has): it writes locally and the files are uploaded as they are."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.spark import list_parquet_files
from service.spark.backfill import _extract_partition
from tests.spark.conftest import spark  # noqa: F401 - the session-wide SparkSession fixture
from tests.storage.remote_suite import cli, rows

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]
#: Rows in all: each of the three files is larger than the 64 KiB tail read first, so the float
#: page scan reads column chunks with ranged requests beyond it.
N = 24_000


@pytest.fixture(scope="module")
def spark_dir(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:  # noqa: F811
    """Three Spark-shredded files: ints, strings, doubles (page-scanned for NaN and -0.0),
    decimals, arrays, a nested object, and a late row that does not fit the inferred schema."""
    out = tmp_path_factory.mktemp("spark") / "events"

    def doc(i: int) -> str:
        late = '"x"' if i == N - 1 else str(i)  # a string after the rows the schema is inferred from
        return (
            f'{{"id": {i}, "name": "n{i:06d}", "score": {i}.5e0, "price": {i}.25, "tags": [{i}, {i + 1}], '
            f'"user": {{"age": {i % 90}}}, "late": {late}}}'
        )

    docs = [doc(i) for i in range(N)]
    df = spark.createDataFrame([(d,) for d in docs], "j string").selectExpr("parse_json(j) AS v")
    df.repartition(3).write.mode("overwrite").parquet(str(out))
    files = sorted(out.glob("*.parquet"))
    assert len(files) == 3 and all(f.stat().st_size > 2 * 64 * 1024 for f in files)
    return out


@pytest.mark.parametrize("which", ["azure", "gcs"])
def test_spark_files_from_a_store_give_the_local_rows(which: str, spark_dir: Path, request: pytest.FixtureRequest, tmp_path: Path) -> None:
    server: Any = request.getfixturevalue(which)  # the store, with this process's environment set
    uris = [server.upload(f, f"spark/{f.name}") for f in sorted(spark_dir.glob("*.parquet"))]
    prefix = uris[0].rsplit("/", 1)[0] + "/"
    local = cli(["stats", str(spark_dir)], tmp_path, server.env())
    assert local.returncode == 0, local.stderr
    expected = rows(local.stdout)
    assert {r["variant_path"] for r in expected} >= {'"id"', '"name"', '"score"', '"tags".element', '"user"."age"'}
    assert any(r["shredded_type"] == "float64" and r["contains_nan"] is False for r in expected)
    server.control("/_test/reset")
    remote = cli(["stats", prefix], tmp_path, server.env())
    assert remote.returncode == 0, remote.stderr
    assert rows(remote.stdout) == expected
    # Beside each file's tail, the float chunks the page scan needs came by ranged reads.
    ranged = [r for r in server.requests() if r["method"] == "GET" and r["range"]]
    assert len(ranged) > len(uris), ranged
    # The Spark helpers' Python side: the listing, and an executor's partition.
    assert list_parquet_files(prefix) == uris
    assert [(p, err) for p, _, err in _extract_partition(uris)] == [(u, None) for u in uris]
