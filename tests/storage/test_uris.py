"""One identity per object: every URI form Spark, Hadoop and fsspec write maps to one canonical
form (pure functions; the stores' suites prove it end to end)."""

from __future__ import annotations

import pytest

from service.errors import FileAccessError
from service.storage.objects import canonical_uri, stored_path

ENV = {"AZURE_STORAGE_ACCOUNT_NAME": "acct", "AZURE_STORAGE_ACCOUNT_KEY": "a2V5"}


@pytest.mark.parametrize(
    ("given", "canonical"),
    [
        ("s3://b/k/f.parquet", "s3://b/k/f.parquet"),
        ("s3a://b/k/f.parquet", "s3://b/k/f.parquet"),
        ("S3N://b/k/f.parquet", "s3://b/k/f.parquet"),
        ("gcs://b/k/", "gs://b/k/"),
        ("GS://b/k", "gs://b/k"),
        ("abfss://c/k/f.parquet", "abfs://c/k/f.parquet"),
        ("az://c/k/f.parquet", "abfs://c/k/f.parquet"),
        ("abfss://c@acct.dfs.core.windows.net/k/f.parquet", "abfs://c/k/f.parquet"),
        ("abfs://c@ACCT.dfs.core.chinacloudapi.cn/k/", "abfs://c/k/"),
        ("wasbs://c@acct.blob.core.windows.net/k/f.parquet", "abfs://c/k/f.parquet"),
        ("wasb://c@acct.blob.core.windows.net", "abfs://c"),
        # Keys stay verbatim: stores read them so.
        ("s3a://b/ts=2024-01-01 10%3A00%3A00/f.parquet", "s3://b/ts=2024-01-01 10%3A00%3A00/f.parquet"),
        # Not a store's scheme: only the scheme's case.
        ("HDFS://nn/k/f.parquet", "hdfs://nn/k/f.parquet"),
    ],
)
def test_every_form_has_one_canonical_form(given: str, canonical: str) -> None:
    assert canonical_uri(given, ENV) == canonical
    assert canonical_uri(canonical, ENV) == canonical  # idempotent


def test_azure_accounts_must_be_the_configured_one() -> None:
    with pytest.raises(FileAccessError, match="names the storage account 'other'; this server reads 'acct'"):
        canonical_uri("abfss://c@other.dfs.core.windows.net/k", ENV)
    for bad in ("abfss://c@acct/k", "abfss://@acct.dfs.core.windows.net/k", "wasbs://c@acct.queue.core.windows.net/k"):
        with pytest.raises(FileAccessError, match="container@account"):
            canonical_uri(bad, ENV)
    # A connection string names the account too; no configuration at all: reading will say so.
    conn = {"AZURE_STORAGE_CONNECTION_STRING": "AccountName=acct;AccountKey=a2V5"}
    assert canonical_uri("abfss://c@acct.dfs.core.windows.net/k", conn) == "abfs://c/k"
    assert canonical_uri("abfss://c@any.dfs.core.windows.net/k", {}) == "abfs://c/k"


def test_stored_path_is_the_canonical_form(monkeypatch: pytest.MonkeyPatch) -> None:
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    assert stored_path("abfss://c@acct.dfs.core.windows.net/k/f.parquet") == "abfs://c/k/f.parquet"
    assert stored_path("s3a://b/k/f.parquet") == "s3://b/k/f.parquet"
    assert stored_path("file:///a/./b//f.parquet") == "/a/b/f.parquet"
