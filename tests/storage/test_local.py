"""Commits by prefix and listing on the local filesystem: the warehouse-root checks of a prefix,
symlinks (directories not followed, files checked like named paths), Spark's naming rules."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from service.api.paths import InvalidFilePathError, PathNotAllowedError, check_prefix, parse_roots
from service.storage import expand_sources, list_data_files
from tests.api.conftest import ADMIN, READER, WRITER, assert_error, write_variant_file

T = "/v1/namespaces/lake/tables/events"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "root"
    # Spark's layout: every data file under the table's one partition column (a file beside them
    # would be Spark's "conflicting directory structures", refused by a commit).
    write_variant_file(r / "events" / "d=0" / "a.parquet", 10)
    write_variant_file(r / "events" / "d=1" / "b.parquet", 10, 10)
    (r / "events" / "_temporary").mkdir()
    write_variant_file(r / "events" / "_temporary" / "c.parquet", 10, 20)
    return r


def test_check_prefix(root: Path, tmp_path: Path) -> None:
    roots = parse_roots([str(root), "s3://lake/lake/"])
    assert check_prefix(str(root), roots).prefix == str(root.resolve())
    assert check_prefix(f"file://{root}/events/", roots).local
    assert check_prefix("s3://lake/lake/", roots).prefix == "s3://lake/lake/"
    assert check_prefix("s3://lake/lake/events/d=1/", roots).scheme == "s3"
    for bad in ["s3://lake/", "s3://lake/lakehouse/", "s3://lake/lake/../x/", str(tmp_path), f"{root}/../x", "gs://lake/lake/"]:
        with pytest.raises(PathNotAllowedError):
            check_prefix(bad, roots)
    assert check_prefix("s3://lake/lake/a b/", roots).prefix == "s3://lake/lake/a b/"  # keys are verbatim
    for bad in ["relative/dir", "s3://lake/lake//x/", "s3://lake/lake/a\tb/", "s3://lake/lake/?x=1"]:
        with pytest.raises(InvalidFilePathError):
            check_prefix(bad, roots)
    (root / "out").symlink_to(tmp_path)
    with pytest.raises(PathNotAllowedError):
        check_prefix(str(root / "out"), roots)


def test_local_listing_does_not_follow_directory_symlinks(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_variant_file(outside / "x.parquet", 5)
    (root / "events" / "link").symlink_to(outside)
    (root / "events" / "loop").symlink_to(root / "events")
    names = [os.path.relpath(p, root.resolve()) for p in list_data_files(str(root / "events"))]
    assert names == ["events/d=0/a.parquet", "events/d=1/b.parquet"]
    a = str(root / "events" / "d=0" / "a.parquet")
    assert expand_sources([a]) == [a]


def _table(c: Any) -> Any:
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return c


def test_commit_a_local_prefix(root: Path, app_factory: Any) -> None:
    c = _table(app_factory(roots=[str(root)]))
    r = c.post(T + "/commits", json={"prefixes": [f"{root}/events/"]}, headers=WRITER)
    assert r.status_code == 200, r.text
    real = root.resolve()
    assert sorted(r.json()["added"]) == [f"{real}/events/d=0/a.parquet", f"{real}/events/d=1/b.parquet"]
    # A file beside the partition directories conflicts with them, as in Spark: nothing committed.
    write_variant_file(root / "events" / "loose.parquet", 10, 30)
    err = assert_error(c.post(T + "/commits", json={"paths": [f"{real}/events/loose.parquet"]}, headers=WRITER), 422)
    assert "conflicting partition column names" in err["message"]


def test_a_symlinked_file_out_of_the_root_fails_the_whole_commit(root: Path, tmp_path: Path, app_factory: Any) -> None:
    outside = write_variant_file(tmp_path / "outside" / "x.parquet", 5)
    (root / "events" / "x.parquet").symlink_to(outside)
    c = _table(app_factory(roots=[str(root)]))
    assert_error(c.post(T + "/commits", json={"prefixes": [str(root)]}, headers=WRITER), 403, field="body.prefixes[0]")
    assert c.get(T + "/files", headers=READER).json()["files"] == []
