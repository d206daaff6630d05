"""Many writers on one table at once, on both backends: no file lost, none registered twice, global
stats equal to a recomputation."""

from __future__ import annotations

import random
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text

from service.catalog import Catalog, CommitResult
from service.errors import ConflictError
from service.pruning.parse_sql import parse_sql
from service.stats.model import FileStats
from tests.catalog.factories import FLOAT64, INT64, VARCHAR, assert_consistent, fs, ps

NS, T = "lake", "events"
WRITERS = 8


def make_file(i: int) -> FileStats:
    """File i: path "a" typed everywhere, "s" dropped by every 7th file, bounds spread out."""
    paths = [ps('"a"', INT64, i * 10, i * 10 + 5), ps('"f"', FLOAT64, float(-i), float(i), nan=i % 5 == 0)]
    if i % 7:
        paths.append(ps('"s"', VARCHAR, f"k{i:04d}", f"k{i + 3:04d}"))
    return fs(f"s3://b/t/f{i:04d}.parquet", *paths, records=i + 1, size=1000 + i)


def test_overlapping_writers_register_each_file_exactly_once(catalog_url: str) -> None:
    with Catalog(catalog_url) as setup:
        setup.create_table(NS, T, ["v"])
    # 8 writers x 6 batches of 25 files drawn from 300 files: every file is offered by ~4 writers.
    rnd = random.Random(42)
    universe = [make_file(i) for i in range(300)]
    plans = [[rnd.sample(universe, 25) for _ in range(6)] for _ in range(WRITERS)]
    offered = {f.path for plan in plans for batch in plan for f in batch}
    barrier = threading.Barrier(WRITERS)

    def writer(w: int) -> list[CommitResult]:
        out = []
        with Catalog(catalog_url) as cat:  # one engine per writer, like separate processes
            barrier.wait()
            for k, batch in enumerate(plans[w]):
                out.append(cat.commit(NS, T, batch, idempotency_key=f"w{w}-b{k}"))
        return out

    with ThreadPoolExecutor(WRITERS) as pool:
        results = [r for rs in pool.map(writer, range(WRITERS)) for r in rs]

    added = Counter(p for r in results for p in r.added)
    assert set(added) == offered and set(added.values()) == {1}  # each file added by exactly one commit
    for r in results:  # every offered file was either added or found unchanged
        assert r.snapshot_id is not None or not r.added
    with Catalog(catalog_url) as cat:
        files = [f.path for f in cat.list_files(NS, T, limit=10_000)]
        assert sorted(files) == sorted(offered) and len(files) == len(set(files))
        snaps = [s for s in cat.list_snapshots(NS, T) if s.added_files]
        assert len(snaps) == len({r.snapshot_id for r in results if r.snapshot_id is not None})
        assert sum(s.added_files for s in snaps) == len(offered)
        with cat.engine.connect() as c:
            dup = c.execute(
                text(
                    "SELECT count(*) FROM (SELECT path FROM ducklake_data_file WHERE end_snapshot IS NULL "
                    "GROUP BY table_id, path HAVING count(*) > 1) d"
                )
            ).scalar_one()
            rows = c.execute(
                text("SELECT count(*) FROM ducklake_file_variant_stats WHERE end_snapshot IS NULL")
            ).scalar_one()
        assert dup == 0
        assert rows == sum(len(f.paths) for f in universe if f.path in offered)
        assert_consistent(cat, NS, T)
        # Replaying every writer's keys returns the original results and changes nothing.
        replay = cat.commit(NS, T, plans[3][2], idempotency_key="w3-b2")
        assert replay.replayed and replay.snapshot_id == results[3 * 6 + 2].snapshot_id


def test_concurrent_commits_and_removals_keep_global_stats_exact(catalog_url: str) -> None:
    with Catalog(catalog_url) as setup:
        setup.create_table(NS, T, ["v"])
    universe = [make_file(i) for i in range(160)]
    barrier = threading.Barrier(WRITERS)
    removed: list[str] = []
    lock = threading.Lock()

    def worker(w: int) -> None:
        rnd = random.Random(w)
        with Catalog(catalog_url) as cat:
            barrier.wait()
            for _ in range(6):
                batch = rnd.sample(universe, 12)
                if w % 4 == 3:  # two of the eight workers remove instead
                    r = cat.remove(NS, T, [f.path for f in batch], missing_ok=True)
                    with lock:
                        removed.extend(r.removed)
                else:
                    try:
                        cat.commit(NS, T, batch)
                    except ConflictError:  # cannot happen: same path always has the same content
                        raise

    with ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(worker, range(WRITERS)))
    with Catalog(catalog_url) as cat:
        assert_consistent(cat, NS, T)
        live = [f.path for f in cat.list_files(NS, T, limit=10_000)]
        assert len(live) == len(set(live))
        # Replaying history: the snapshots tell exactly which files are live.
        ops = cat.list_snapshots(NS, T)
        assert sum(s.added_files for s in ops) - sum(s.removed_files for s in ops) == len(live)
        assert sum(s.removed_files for s in ops) == len(removed)


def test_concurrent_create_if_not_exists_and_register_agree(catalog_url: str) -> None:
    barrier = threading.Barrier(WRITERS)

    def create(w: int) -> int:
        with Catalog(catalog_url) as cat:
            barrier.wait()
            info = cat.create_table("fresh_ns", "t", ["v"], if_not_exists=True)
            cat.commit("fresh_ns", "t", [make_file(w), make_file(100)])
            return info.table_id

    with ThreadPoolExecutor(WRITERS) as pool:
        ids = set(pool.map(create, range(WRITERS)))
    assert len(ids) == 1
    with Catalog(catalog_url) as cat:
        assert [n.name for n in cat.list_namespaces()] == ["fresh_ns"]
        assert len(cat.list_files("fresh_ns", "t")) == WRITERS + 1
        assert_consistent(cat, "fresh_ns", "t")


def test_a_plan_reads_one_snapshot_while_a_commit_lands_between_its_statements(catalog_url: str) -> None:
    """A commit that lands after the plan read the table row and before it read the candidates
    must not leak into the answer: the counts (kept <= considered) and the candidates belong to
    the snapshot the plan reports. Deterministic: the commit runs from inside the plan's first
    statement on the stats rows."""
    from sqlalchemy import event

    with Catalog(catalog_url) as setup:
        setup.create_table(NS, T, ["v"])
        setup.commit(NS, T, [make_file(i) for i in range(5)])
    with Catalog(catalog_url) as cat, Catalog(catalog_url) as other:
        fired = []

        def interleave(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
            if not fired and "FROM ducklake_data_file AS f" in statement:
                fired.append(other.commit(NS, T, [make_file(i) for i in range(5, 20)]))

        event.listen(cat.engine, "before_cursor_execute", interleave)
        result = cat.plan(NS, T, parse_sql("variant_get(v, '$.a', 'bigint') >= 0"))
        assert fired and fired[0].snapshot_id is not None
        assert result.snapshot_id < fired[0].snapshot_id
        assert result.files_considered == 5 and result.files_kept == 5 and result.files_pruned == 0
        assert sorted(c.path for c in result.candidates) == sorted(make_file(i).path for i in range(5))


def test_a_creating_commit_that_loses_its_table_to_a_drop_creates_it_again(catalog_url: str) -> None:
    """A commit with ``create_with`` found the table, then a drop committed before the commit
    locked it: the table is created again in the commit's transaction (it was a 404 before).
    Deterministic: the drop runs from inside the commit's locking statement."""
    from sqlalchemy import event

    if not catalog_url.startswith("postgresql"):
        pytest.skip("SQLite has one writer at a time: a drop cannot land inside a commit")
    with Catalog(catalog_url) as setup:
        setup.create_table(NS, T, ["v"])
        setup.commit(NS, T, [make_file(0)])
    with Catalog(catalog_url) as cat, Catalog(catalog_url) as other:
        dropped = []

        def interleave(conn, cursor, statement, parameters, context, executemany):  # type: ignore[no-untyped-def]
            if not dropped and "FOR UPDATE" in statement and "ducklake_table" in statement:
                dropped.append(other.drop_table(NS, T))

        event.listen(cat.engine, "before_cursor_execute", interleave)
        result = cat.commit(NS, T, [make_file(1)], create_with=["v"])
        assert dropped and result.added == (make_file(1).path,)
        assert [f.path for f in cat.list_files(NS, T)] == [make_file(1).path]  # a new table, not the dropped one
        assert_consistent(cat, NS, T)
