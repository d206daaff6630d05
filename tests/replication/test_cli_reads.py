"""``shredcat files``, ``tables`` and ``prune`` read from the hot standbys of
``SHREDCAT_READ_DATABASE_URLS`` as the server does, and ``--min-snapshot-id`` makes them read a
commit the standby has not replayed (from the primary, after ``SHREDCAT_READ_WAIT_S``). Each
command's first run is a real subprocess; its variations run the same ``main`` in this process
(:mod:`tests.support.cli`)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.catalog import Catalog
from service.catalog.db import make_engine
from tests.replication.conftest import ReplicatedCatalog
from tests.support.cli import shredcat
from tests.support.events import write_event_files
from tests.support.standby import Pair

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("replication")]

ALL = "variant_get(v, '$.id', 'bigint') >= 0"


@pytest.fixture
def behind(repl: ReplicatedCatalog, tmp_path: Path) -> Iterator[tuple[list[str], int]]:
    """Two files committed and replayed, then three more committed with the standby's replay
    paused (resumed afterwards): the events' paths and the second commit's snapshot id."""
    events = write_event_files(tmp_path / "warehouse" / "events")
    pair: Pair = repl.pair
    primary = make_engine(repl.primary_url)
    try:
        cat = Catalog(primary)
        cat.register("lake", "events", events[:2])
        pair.wait_replayed()
        pair.standby.execute("SELECT pg_wal_replay_pause()")
        second = cat.register("lake", "events", events[2:])
        yield events, second.snapshot_id
    finally:
        pair.standby.execute("SELECT pg_wal_replay_resume()")
        primary.dispose()


def _shredcat(
    repl: ReplicatedCatalog, *args: str, standbys: bool = True, status: int = 0, real: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.upper().startswith("SHREDCAT_")}
    env.update(SHREDCAT_DATABASE_URL=repl.primary_url, SHREDCAT_READ_MAX_LAG_S="3600", SHREDCAT_READ_WAIT_S="0.2")
    if standbys:
        env["SHREDCAT_READ_DATABASE_URLS"] = json.dumps([repl.standby_url])
    done = shredcat(args, env, real=real)
    assert done.returncode == status, done.stderr
    return done


def test_files_and_tables_read_the_standby_unless_told_a_newer_snapshot(
    repl: ReplicatedCatalog, behind: tuple[list[str], int]
) -> None:
    events, second = behind
    files = ["files", "--table", "lake.events"]
    assert _shredcat(repl, *files, real=True).stdout.split() == events[:2]  # the standby, paused before the second commit
    assert _shredcat(repl, *files, "--min-snapshot-id", str(second)).stdout.split() == events
    assert _shredcat(repl, *files, standbys=False).stdout.split() == events  # no standby: the primary
    tables = ["tables", "--json"]
    (row,) = [json.loads(line) for line in _shredcat(repl, *tables, real=True).stdout.splitlines()]
    assert (row["files"], row["snapshot_id"]) == (2, second - 1)
    (row,) = [json.loads(line) for line in _shredcat(repl, *tables, "--min-snapshot-id", str(second)).stdout.splitlines()]
    assert (row["files"], row["snapshot_id"]) == (5, second)


def test_prune_reads_the_standby_unless_told_a_newer_snapshot(
    repl: ReplicatedCatalog, behind: tuple[list[str], int]
) -> None:
    events, second = behind
    prune = ["prune", "--table", "lake.events", ALL, "--json"]
    stale = json.loads(_shredcat(repl, *prune, real=True).stdout)
    assert [c["path"] for c in stale["candidates"]] == events[:2] and stale["snapshot_id"] == second - 1
    fresh = json.loads(_shredcat(repl, *prune, "--min-snapshot-id", str(second)).stdout)
    assert [c["path"] for c in fresh["candidates"]] == events and fresh["snapshot_id"] == second
    duck = [*prune, "--sql", "duckdb"]
    assert json.loads(_shredcat(repl, *duck).stdout)["candidates"] == events[:2]
    assert json.loads(_shredcat(repl, *duck, "--min-snapshot-id", str(second)).stdout)["candidates"] == events


def test_a_min_snapshot_id_past_the_newest_is_refused_by_the_primary(
    repl: ReplicatedCatalog, behind: tuple[list[str], int]
) -> None:
    """A snapshot past the primary's newest is not waited for forever, nor answered at an older
    snapshot as if it were the caller's: it was never committed (exit 2, one line)."""
    _, second = behind
    out = _shredcat(repl, "files", "--table", "lake.events", "--min-snapshot-id", str(second + 100), status=2, real=True)
    assert out.stdout == ""
    assert out.stderr == f"shredcat files: snapshot {second + 100} does not exist (the newest is {second})\n"
