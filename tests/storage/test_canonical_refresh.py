"""Catalogs written before one object had one path: ``shredcat refresh --canonical-paths`` ends the
duplicate spellings of an object and moves the others to their canonical form, in one snapshot,
on both backends; and the pure plan of it (:func:`canonical_moves`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from service.cli.refresh import canonical_paths
from service.stats.extract import extract_file
from service.storage.objects import canonical_moves
from tests.api.conftest import write_variant_file

ENV = {"AZURE_STORAGE_ACCOUNT_NAME": "acct"}


def test_the_plan_of_canonical_paths() -> None:
    live = [
        "s3://b/t/a.parquet",
        "s3a://b/t/a.parquet",  # the same object as the first: ended
        "s3n://b/t/b.parquet",  # alone: renamed
        "S3A://b/t/b.parquet",  # b again, in a second spelling: ended (b moves once)
        "gcs://g/t/c.parquet",
        "abfss://c@acct.dfs.core.windows.net/t/d.parquet",
        "abfss://c@other.dfs.core.windows.net/t/e.parquet",  # another account: left alone
        "/local/t/f.parquet",
        "hdfs://nn/t/g.parquet",
    ]
    drop, rename = canonical_moves(live, ENV)
    assert drop == ["s3a://b/t/a.parquet", "s3n://b/t/b.parquet"]
    assert rename == {
        "S3A://b/t/b.parquet": "s3://b/t/b.parquet",
        "abfss://c@acct.dfs.core.windows.net/t/d.parquet": "abfs://c/t/d.parquet",
        "gcs://g/t/c.parquet": "gs://g/t/c.parquet",
    }
    assert canonical_moves(["s3://b/x.parquet", "gs://g/y.parquet"], ENV) == ([], {})


def test_refresh_merges_the_spellings_of_one_object(catalog: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    local = [extract_file(str(write_variant_file(tmp_path / f"{i}.parquet", 50, i * 50))) for i in range(3)]
    old = ["s3://b/t/0.parquet", "s3a://b/t/0.parquet", "s3a://b/t/1.parquet", "gcs://g/t/2.parquet"]
    catalog.create_table("ns", "t", ["v"])
    stats = [dataclasses.replace(local[int(p[-9])], path=p) for p in old]
    catalog.commit("ns", "t", stats)
    assert catalog.get_table("ns", "t").live_record_count == 200  # file 0 counted twice
    before = len(catalog.list_snapshots("ns", "t"))

    moves = canonical_paths(catalog, "ns", "t")
    assert moves["dropped"] == ["s3a://b/t/0.parquet"]
    assert moves["renamed"] == {"gcs://g/t/2.parquet": "gs://g/t/2.parquet", "s3a://b/t/1.parquet": "s3://b/t/1.parquet"}
    files = sorted(f.path for f in catalog.list_files("ns", "t"))
    assert files == ["gs://g/t/2.parquet", "s3://b/t/0.parquet", "s3://b/t/1.parquet"]
    assert catalog.get_table("ns", "t").live_record_count == 150
    assert len(catalog.list_snapshots("ns", "t")) == before + 1  # one snapshot
    moved = catalog.file_stats("ns", "t", "s3://b/t/1.parquet")
    # The stats it had (the catalog may give the paths in another order).
    assert sorted(map(repr, moved.paths)) == sorted(map(repr, local[1].paths))
    assert dataclasses.replace(moved, path="x", paths=()) == dataclasses.replace(local[1], path="x", paths=())
    # Again: nothing to do, no snapshot.
    assert canonical_paths(catalog, "ns", "t") == {"table": "ns.t", "dropped": [], "renamed": {}}
    assert len(catalog.list_snapshots("ns", "t")) == before + 1


def test_a_table_past_the_commit_limit_is_refreshed_in_several_commits(catalog_url: str, tmp_path: Path) -> None:
    """Lakes Spark wrote with s3a:// hold more files than one commit may: the refresh commits at
    most SHREDCAT_MAX_FILES_PER_COMMIT at a time, each rename atomic (it was one commit, refused)."""
    from service.catalog import Catalog
    from service.cli._common import DEFAULT_LIMITS
    from service.limits import Limits

    local = extract_file(str(write_variant_file(tmp_path / "f.parquet", 10)))
    old = [f"s3a://b/t/{i}.parquet" for i in range(5)] + ["s3://b/t/0.parquet", "gcs://g/t/x.parquet"]
    with Catalog(catalog_url) as cat:
        cat.create_table("ns", "t", ["v"])
        cat.commit("ns", "t", [dataclasses.replace(local, path=p) for p in old])
    with Catalog(catalog_url, limits=Limits(**{**DEFAULT_LIMITS, "max_files_per_commit": 2})) as small:
        before = len(small.list_snapshots("ns", "t"))
        moves = canonical_paths(small, "ns", "t")
        assert moves["dropped"] == ["s3a://b/t/0.parquet"] and len(moves["renamed"]) == 5
        files = sorted(f.path for f in small.list_files("ns", "t"))
        assert files == ["gs://g/t/x.parquet", *(f"s3://b/t/{i}.parquet" for i in range(5))]
        assert len(small.list_snapshots("ns", "t")) == before + 3  # 2 + 2 + 1 renames, the drop beside the last
        assert small.get_table("ns", "t").live_record_count == 60


def test_the_cli_step(sqlite_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from service.catalog import Catalog
    from service.cli import main

    f = extract_file(str(write_variant_file(tmp_path / "0.parquet", 10)))
    with Catalog(sqlite_url) as cat:
        cat.create_table("ns", "t", ["v"])
        cat.commit("ns", "t", [dataclasses.replace(f, path="s3a://b/t/0.parquet")])
    code = main(["refresh", "--table", "ns.t", "--canonical-paths", "--json", "--database-url", sqlite_url])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["renamed"] == {"s3a://b/t/0.parquet": "s3://b/t/0.parquet"}
