"""One rule for a snapshot id given to a read, in the library, the CLI and REST
(tests/api/test_routes.py, test_snapshot_ids_over_rest): a negative one is not a snapshot id at all
(BadInputError: 422, CLI exit 2), a non-negative one that was never committed is not found
(NotFoundError: 404, CLI exit 2), on both backends."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from service.catalog import Catalog
from service.cli import main
from service.errors import BadInputError, NotFoundError
from service.pruning.parse_sql import parse_sql
from tests.catalog.factories import int_file

NS, T = "lake", "ev"
#: A snapshot id no catalog of these tests reaches.
NEVER = 10**12

#: Every library read that takes a snapshot id, by the field REST names it.
READS: dict[str, Callable[[Catalog, int], Any]] = {
    "list_files snapshot": lambda c, s: c.list_files(NS, T, snapshot=s),
    "list_files min-snapshot-id": lambda c, s: c.list_files(NS, T, min_snapshot_id=s),
    "file_stats snapshot": lambda c, s: c.file_stats(NS, T, "s3://b/f0.parquet", snapshot=s),
    "file_stats min-snapshot-id": lambda c, s: c.file_stats(NS, T, "s3://b/f0.parquet", min_snapshot_id=s),
    "global_stats snapshot": lambda c, s: c.global_stats(NS, T, snapshot=s),
    "global_stats min-snapshot-id": lambda c, s: c.global_stats(NS, T, min_snapshot_id=s),
    "recompute_global_stats snapshot": lambda c, s: c.recompute_global_stats(NS, T, snapshot=s),
    "get_table min-snapshot-id": lambda c, s: c.get_table(NS, T, min_snapshot_id=s),
    "list_tables min-snapshot-id": lambda c, s: c.list_tables(NS, min_snapshot_id=s),
    "list_snapshots min-snapshot-id": lambda c, s: c.list_snapshots(NS, T, min_snapshot_id=s),
    "plan snapshot-id": lambda c, s: c.plan(NS, T, parse_sql("variant_get(v, '$.a', 'bigint') > 1"), snapshot_id=s),
    "plan min-snapshot-id": lambda c, s: c.plan(
        NS, T, parse_sql("variant_get(v, '$.a', 'bigint') > 1"), min_snapshot_id=s
    ),
}


@pytest.fixture
def loaded(catalog: Catalog) -> Catalog:
    catalog.create_table(NS, T, ["v"])
    catalog.commit(NS, T, [int_file("s3://b/f0.parquet", 0, 9)])
    return catalog


@pytest.mark.parametrize("read", READS, ids=list(READS))
@pytest.mark.parametrize("snapshot", [-1, -(2**63)])
def test_a_negative_snapshot_id_is_bad_input(loaded: Catalog, read: str, snapshot: int) -> None:
    with pytest.raises(BadInputError) as e:
        READS[read](loaded, snapshot)
    assert not isinstance(e.value, NotFoundError)
    assert f"{snapshot} is not a snapshot id" in e.value.message


@pytest.mark.parametrize("read", READS, ids=list(READS))
def test_a_snapshot_never_committed_is_not_found(loaded: Catalog, read: str) -> None:
    with pytest.raises(NotFoundError, match=f"snapshot {NEVER} does not exist"):
        READS[read](loaded, NEVER)


@pytest.mark.parametrize("command", [["files"], ["prune", "variant_get(v, '$.a', 'bigint') > 1"]], ids=["files", "prune"])
@pytest.mark.parametrize("flag", ["--snapshot", "--min-snapshot-id"])
def test_the_cli_says_the_same(
    catalog_url: str, capsys: pytest.CaptureFixture[str], command: list[str], flag: str
) -> None:
    with Catalog(catalog_url) as cat:
        cat.create_table(NS, T, ["v"])
        cat.commit(NS, T, [int_file("s3://b/f0.parquet", 0, 9)])
    base = [*command, "--database-url", catalog_url, "--table", f"{NS}.{T}"]
    for snapshot, said in ((-1, "-1 is not a snapshot id"), (NEVER, f"snapshot {NEVER} does not exist")):
        capsys.readouterr()
        assert main([*base, f"{flag}={snapshot}"]) == 2
        out, err = capsys.readouterr()
        assert out == "" and said in err and len(err.splitlines()) == 1, err
