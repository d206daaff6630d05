"""The pure parts of bounded listing: which directory of an object's name is pruned, the offset that
jumps over it (never past a key that sorts after its subtree), and the bound on objects listed,
here on a local directory (the same bound as for object stores)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.errors import LimitExceededError
from service.storage import list_data_files
from service.storage.listing import LISTED_PER_FILE, LISTED_SLACK, is_hidden_name
from service.storage.objects.base import ListingBound, first_pruned_dir, past_dir


@pytest.mark.parametrize(
    ("rel", "pruned"),
    [
        ("part-0.parquet", None),
        ("_SUCCESS", None),  # a hidden file is the caller's to skip, no subtree to jump
        ("_temporary/0/part-0.parquet", "_temporary"),
        ("a=1/_temporary/0/x", "a=1/_temporary"),
        ("_c=1/part-0.parquet", None),  # a Hive directory starting with "_" is data
        ("a=1/b=2/.hidden/x", "a=1/b=2/.hidden"),
        ("a=1/", None),  # a directory marker object
    ],
)
def test_first_pruned_dir(rel: str, pruned: str | None) -> None:
    assert first_pruned_dir(rel, is_hidden_name) == pruned
    assert first_pruned_dir(rel, None) is None


def test_the_jump_passes_over_the_subtree_only() -> None:
    keys = sorted(
        ["p/_t", "p/_t-x/a.parquet", "p/_t.parquet", "p/_t/0/a.parquet", "p/_t/\U0010ffff", "p/_t0", "p/_t0/a.parquet", "p/_u.parquet", "p/a"]
    )
    offset = past_dir("p/_t")
    # Sorted by code point, as by UTF-8 bytes: what lies past the offset (exclusive, as S3 and GCS
    # take it) is everything after the subtree but the object named exactly "p/_t0".
    after = [k for k in keys if k > offset]
    assert after == ["p/_t0/a.parquet", "p/_u.parquet", "p/a"]
    skipped = [k for k in keys if k not in after and k > "p/_t/"]
    assert skipped == ["p/_t/0/a.parquet", "p/_t/\U0010ffff", "p/_t0"]
    assert sorted(k.encode() for k in keys) == [k.encode() for k in keys]


def test_the_bound_counts_every_object() -> None:
    bound = ListingBound(3, "why")
    bound.count("s3://b/p/", 3)
    with pytest.raises(LimitExceededError, match=r"s3://b/p/: more than 3 objects listed under it \(why\)") as e:
        bound.count("s3://b/p/")
    assert e.value.details == {"path": "s3://b/p/", "limit": 3, "count": 4}


def test_a_local_directory_of_debris_is_refused_past_the_bound(tmp_path: Path) -> None:
    limit = 2
    (tmp_path / "a.parquet").write_bytes(b"x")
    for i in range(LISTED_PER_FILE * limit + LISTED_SLACK):
        (tmp_path / f"x{i}.crc").write_bytes(b"")
    with pytest.raises(LimitExceededError, match=f"cannot list {tmp_path}: .*more than {LISTED_PER_FILE * limit + LISTED_SLACK} objects"):
        list_data_files(str(tmp_path), limit=limit)
    assert list_data_files(str(tmp_path)) == [str(tmp_path / "a.parquet")]  # no limit, no bound
    (tmp_path / "x0.crc").unlink()
    assert list_data_files(str(tmp_path), limit=limit) == [str(tmp_path / "a.parquet")]  # exactly the bound
