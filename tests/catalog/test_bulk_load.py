"""``Catalog.bulk_load`` leaves what ``Catalog.commit`` leaves: every catalog table's rows are
compared between two fresh catalogs (one loaded by commits, one by the bulk path) on both
backends, with the plan answers of a set of predicates; its errors are the commit's, and leave
nothing of the load."""

from __future__ import annotations

import dataclasses
import gc
import shutil
import threading
from collections.abc import Iterator, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from service.catalog import Catalog, models
from service.catalog.db import ANALYZE_SLACK_ROWS
from service.errors import ConflictError, InvalidStatsError, NotFoundError, UnknownColumnError
from service.pruning.parse_sql import parse_sql
from service.stats.model import FileStats, ShreddedObject
from tests.catalog.factories import DEC, FLOAT64, INT64, VARCHAR, assert_consistent, cs, fs, ps, with_columns
from tests.conftest import _db_url, create_pg_database, drop_pg_database

NS, T = "ns", "events"
#: Values that differ between two catalogs whatever loaded them.
CLOCK_AND_UUIDS = frozenset({"snapshot_time", "schema_uuid", "table_uuid", "created_at", "failed_at"})
#: Columns holding snapshot ids: batched commits write one snapshot per batch, a bulk load one.
SNAPSHOT_IDS = frozenset(
    {"begin_snapshot", "end_snapshot", "snapshot_id", "current_snapshot_id", "first_snapshot", "last_end_snapshot"}
)


def _file(i: int, *, late: int | None = None) -> FileStats:
    """File ``i``: three Variant paths, two plain columns and two partition columns (from its
    path), objects; from file ``late`` on, one more path and one more plain column (keys a later
    batch brings)."""
    more = late is not None and i >= late
    f = fs(
        f"s3://b/t/dt=2026-01-0{1 + i % 3}/hr={i % 4}/part-{i:05d}.parquet",
        ps('"a"', INT64, i * 10, i * 10 + 9, values=9, nulls=1),
        ps('"s"', VARCHAR, f"k{i:04d}", None if i % 6 == 0 else f"k{i + 5:04d}"),
        ps('"f"', FLOAT64, -1.5 * i, 2.0 * i, nan=i % 5 == 0),
        *([ps('"late"', INT64, i, i + 1)] if more else []),
        records=10 + i % 7,
        size=1000 + i,
    )
    f = with_columns(
        f,
        cs("x", INT64, i, i + 3, nulls=i % 2),
        cs("name", VARCHAR, f"n{i:04d}", f"n{i + 9:04d}"),
        *([cs("y", DEC, Decimal(i).scaleb(-2), Decimal(i + 100).scaleb(-2))] if more else []),
    )
    fields = ("a", "f", "s", "late") if more else ("a", "f", "s")
    return dataclasses.replace(f, objects=(ShreddedObject("v", "root", tuple(sorted(fields))),))


def _batches(n: int, size: int, *, late: int | None = None) -> list[list[FileStats]]:
    return [[_file(i, late=late) for i in range(lo, min(n, lo + size))] for lo in range(0, n, size)]


@pytest.fixture
def other_url(catalog_url: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """A second fresh catalog of ``catalog_url``'s backend."""
    if catalog_url.startswith("sqlite"):
        p = tmp_path / "other.db"
        shutil.copyfile(request.getfixturevalue("_template_db"), p)
        yield f"sqlite:///{p}"
        return
    yield request.getfixturevalue("pg_url")


@pytest.fixture
def pg_url(_pg_template: str) -> Iterator[str]:
    """A fresh, migrated PostgreSQL catalog of its own."""
    name = create_pg_database(template=_pg_template)
    try:
        yield _db_url(name)
    finally:
        drop_pg_database(name)


def _dump(cat: Catalog, ignore: frozenset[str], skip: Sequence[str] = ()) -> dict[str, list[tuple[Any, ...]]]:
    """Every catalog table's rows (sorted), without the ``ignore`` columns and ``skip`` tables."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    with cat.engine.connect() as c:
        for table in models.schema().sorted_tables:
            if table.name in skip:
                continue
            cols = [col.name for col in table.columns if col.name not in ignore]
            rows = c.execute(text(f"SELECT {', '.join(cols)} FROM {table.name}")).all()
            out[table.name] = sorted((tuple(r) for r in rows), key=repr)
    return out


#: Surrogate keys a load allocates as it meets their objects: one commit of every file and a load
#: of batches meet them in another order. Compared by what they name.
SURROGATES = ("column_id", "parent_column", "path_id", "shape_id")


def _by_name(cat: Catalog) -> dict[str, list[tuple[Any, ...]]]:
    """Every catalog table's rows (:func:`_dump`, but clock, UUIDs, snapshot ids and the
    snapshot table), column, path and shape ids replaced by what they name."""
    ignore = CLOCK_AND_UUIDS | SNAPSHOT_IDS
    with cat.engine.connect() as c:
        col: dict[int, str] = dict(c.execute(text("SELECT column_id, column_name || ':' || column_kind FROM ducklake_column")).all())
        name = {
            "column_id": col,
            "parent_column": col,
            "path_id": {
                p: (col[cid], vp, ty)
                for p, cid, vp, ty in c.execute(text("SELECT path_id, column_id, variant_path, shredded_type FROM shredcat_variant_path"))
            },
            "shape_id": {
                s: (col[cid], op, d)
                for s, cid, op, d in c.execute(text("SELECT shape_id, column_id, object_path, fields_digest FROM shredcat_object_shape"))
            },
        }
    out = {}
    for table, rows in _dump(cat, ignore, ("ducklake_snapshot",)).items():
        cols = [x.name for x in models.schema().tables[table].columns if x.name not in ignore]
        out[table] = sorted(
            (tuple(name[k].get(v, v) if k in name and v is not None else v for k, v in zip(cols, r, strict=True)) for r in rows),
            key=repr,
        )
    return out


#: Predicates over every kind of key the files have (plain, partition, Variant, mixed, absent).
PREDICATES = (
    "variant_get(v, '$.a', 'bigint') BETWEEN 100 AND 260",
    "variant_get(v, '$.s', 'string') = 'k0010'",
    "variant_get(v, '$.f', 'double') > 40",
    "variant_get(v, '$.late', 'bigint') = 50",
    "x = 7 OR name = 'n0030'",
    "dt = DATE '2026-01-02' AND hr = 1",
    "y > 0.5 AND variant_get(v, '$.a', 'bigint') < 500",
    "variant_get(v, '$.zz', 'string') = 'q'",
)


def _answers(cat: Catalog) -> list[tuple[Any, ...]]:
    schema = cat.table_schema(NS, T)
    out: list[tuple[Any, ...]] = []
    for sql in PREDICATES:
        try:
            expr = parse_sql(sql, schema=schema)
        except UnknownColumnError as e:  # a column only the later batches bring
            out.append((sql, e.message))
            continue
        r = cat.plan(NS, T, expr, counts=True)
        out.append((sql, [c.path for c in r.candidates], r.files_kept, r.files_pruned, r.rows_skipped))
    return out


def test_bulk_load_leaves_the_rows_of_one_commit(catalog_url: str, other_url: str) -> None:
    """Three batches loaded in bulk == the same files in one commit: every row of every table,
    snapshot ids included (one snapshot each)."""
    files = [f for b in _batches(60, 25) for f in b]
    with Catalog(catalog_url) as by_commit, Catalog(other_url) as by_bulk:
        for cat in (by_commit, by_bulk):
            cat.create_table(NS, T, ["v"])
        by_commit.commit(NS, T, files)
        res = by_bulk.bulk_load(NS, T, iter(_batches(60, 25)))
        assert (res.added, res.unchanged, res.batches) == (60, 0, 3)
        assert res.snapshot_id == by_commit.get_table(NS, T).current_snapshot_id
        assert _dump(by_bulk, CLOCK_AND_UUIDS) == _dump(by_commit, CLOCK_AND_UUIDS)
        assert _answers(by_bulk) == _answers(by_commit)
        assert_consistent(by_bulk, NS, T)


def test_bulk_load_leaves_the_rows_of_its_batches_committed(catalog_url: str, other_url: str) -> None:
    """Keys a later batch brings (a path, a plain column) and files already there: the same rows
    as one commit per batch, but for snapshot ids; every added row at the load's one snapshot."""
    batches = _batches(70, 20, late=45)
    with Catalog(catalog_url) as by_commit, Catalog(other_url) as by_bulk:
        for cat in (by_commit, by_bulk):
            cat.create_table(NS, T, ["v"])
            cat.commit(NS, T, batches[0][:5])  # live before the load: left unchanged by it
        for b in batches:
            by_commit.commit(NS, T, b)
        res = by_bulk.bulk_load(NS, T, iter(batches))
        assert (res.added, res.unchanged, res.batches) == (65, 5, 4)
        skip = ("ducklake_snapshot",)
        assert _dump(by_bulk, CLOCK_AND_UUIDS | SNAPSHOT_IDS, skip) == _dump(
            by_commit, CLOCK_AND_UUIDS | SNAPSHOT_IDS, skip
        )
        assert _answers(by_bulk) == _answers(by_commit)
        assert_consistent(by_bulk, NS, T)
        with by_bulk.engine.connect() as c:
            snaps = c.execute(text("SELECT snapshot_id, changes_made, added_files FROM ducklake_snapshot")).all()
            assert snaps[-1] == (res.snapshot_id, f"inserted_into_table:{by_bulk.get_table(NS, T).table_id}", 65)
            for table in ("ducklake_data_file", "ducklake_file_variant_stats", "ducklake_file_column_stats"):
                begins = c.execute(text(f"SELECT DISTINCT begin_snapshot FROM {table}")).scalars().all()
                assert sorted(begins) == [snaps[-2][0], res.snapshot_id], table


def _bad(f: FileStats) -> FileStats:
    """``f`` with a Variant row whose min exceeds its max."""
    return dataclasses.replace(f, paths=(ps('"a"', INT64, 10, 1), *f.paths[1:]))


def _conflicting(f: FileStats) -> FileStats:
    return dataclasses.replace(f, content_id="other", file_size_bytes=f.file_size_bytes + 1)


def _failing(batches: list[list[FileStats]], at: int) -> Iterator[list[FileStats]]:
    for k, b in enumerate(batches):
        if k == at:
            raise OSError("the source of the batches failed")
        yield b


@pytest.mark.parametrize(
    ("case", "error"),
    [("invalid", InvalidStatsError), ("conflict", ConflictError), ("source", OSError)],
)
def test_a_failed_bulk_load_leaves_nothing(catalog: Catalog, case: str, error: type[Exception]) -> None:
    """A bad file, a path live with other content, or batches that fail to come, in the third
    batch: the commit's typed error, and every table as before the load."""
    catalog.create_table(NS, T, ["v"])
    catalog.commit(NS, T, [_file(1000)])
    before = _dump(catalog, frozenset())
    batches = _batches(60, 20)
    if case == "invalid":
        batches[2][3] = _bad(batches[2][3])
    elif case == "conflict":
        batches[2][3] = _conflicting(_file(1000))
    source = _failing(batches, 2) if case == "source" else iter(batches)
    with pytest.raises(error) as e:
        catalog.bulk_load(NS, T, source)
    if case == "invalid":
        assert batches[2][3].path in str(e.value)
    assert _dump(catalog, frozenset()) == before


def _in(column: str, f: FileStats) -> FileStats:
    """``f`` with its Variant stats in ``column`` instead of ``v``."""
    return dataclasses.replace(
        f,
        variant_columns=(column,),
        paths=tuple(dataclasses.replace(p, column=column) for p in f.paths),
        objects=tuple(dataclasses.replace(o, column=column) for o in f.objects),
    )


def test_bulk_load_creates_the_table_register_would(catalog_url: str, other_url: str) -> None:
    """``create=True``: a missing table is created as one registration of every file creates it
    (the Variant columns of every batch, in the order they first appear, a later batch's too),
    and every row equals that registration's, snapshot ids included."""
    batches = _batches(50, 20, late=25)
    batches[1] = [_in("w", f) if i % 3 == 0 else f for i, f in enumerate(batches[1])]
    batches[2] = [_in("u", f) for f in batches[2]]
    files = [f for b in batches for f in b]
    with Catalog(catalog_url) as by_register, Catalog(other_url) as by_bulk:
        by_register.register(NS, T, [], given=files)
        res = by_bulk.bulk_load(NS, T, iter(batches), create=True)
        assert (res.added, res.batches, res.created) == (50, 3, True)
        assert [c.name for c in by_bulk.get_table(NS, T).columns][:3] == ["v", "w", "u"]
        # Column ids aside (the load meets its Variant columns later than its plain columns).
        assert _by_name(by_bulk) == _by_name(by_register)
        snapshots = "SELECT snapshot_id, changes_made, added_files, table_id FROM ducklake_snapshot ORDER BY 1"
        with by_bulk.engine.connect() as b, by_register.engine.connect() as r:
            assert b.execute(text(snapshots)).all() == r.execute(text(snapshots)).all()
        assert _answers(by_bulk) == _answers(by_register)
        assert_consistent(by_bulk, NS, T)
        again = by_bulk.bulk_load(NS, T, iter(batches), create=True)
        assert (again.snapshot_id, again.unchanged, again.created) == (None, 50, False)


@pytest.mark.parametrize("case", ["invalid", "source"])
def test_a_failed_bulk_load_that_creates_leaves_nothing(catalog: Catalog, case: str) -> None:
    """A load that would create its table (and namespace) and fails in its third batch, after a
    second batch added a Variant column: every catalog table's rows as before, no snapshot."""
    catalog.create_table("other", "t", ["v"])
    before = _dump(catalog, frozenset())
    batches = _batches(60, 20)
    batches[1] = [_in("w", f) for f in batches[1]]
    if case == "invalid":
        batches[2][3] = _bad(batches[2][3])
    with pytest.raises(InvalidStatsError if case == "invalid" else OSError):
        catalog.bulk_load(NS, T, _failing(batches, 2) if case == "source" else iter(batches), create=True)
    assert _dump(catalog, frozenset()) == before


@pytest.mark.postgres
def test_a_table_another_writer_creates_meanwhile_is_not_the_loads(pg_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``create=True`` finds the table missing, then another writer creates it (and commits)
    before the load creates it: the load goes into that table as into any existing one, and never
    gives it its own columns (a later batch's other Variant column is refused, as by a commit)."""
    from service.catalog.commit import bulk

    real = bulk.repo.find_table
    with Catalog(pg_url) as cat, Catalog(pg_url) as other:
        cat.create_namespace(NS)
        calls = 0

        def racing(conn: Any, namespace: str, name: str, **kw: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == 1:  # the load's first look: missing; the other writer creates it now
                other.create_table(NS, T, ["v"])
                return None
            return real(conn, namespace, name, **kw)

        monkeypatch.setattr(bulk.repo, "find_table", racing)
        batches = _batches(40, 20)
        batches[1] = [_in("w", f) for f in batches[1]]
        with pytest.raises(InvalidStatsError, match="'w' not in table"):
            cat.bulk_load(NS, T, iter(batches), create=True)
        monkeypatch.setattr(bulk.repo, "find_table", real)
        assert [c.name for c in cat.get_table(NS, T).columns] == ["v"]
        res = cat.bulk_load(NS, T, iter(_batches(40, 20)), create=True)
        assert (res.added, res.created) == (40, False)


def test_a_failed_bulk_load_leaves_no_prefetching_thread(catalog: Catalog) -> None:
    """The load's batch generator is closed when the load fails, not later by the garbage
    collector: run inside another thread's start, its close (a join of the prefetching thread)
    deadlocked a test run. The error's traceback keeps the generator alive; collector off."""
    catalog.create_table(NS, T, ["v"])
    catalog.commit(NS, T, [_file(1000)])
    batches = _batches(60, 20)
    batches[2][3] = _conflicting(_file(1000))  # refused by the load, while the generator waits
    gc.disable()
    try:
        with pytest.raises(ConflictError) as failed:
            catalog.bulk_load(NS, T, iter(batches))
        assert failed.value is not None  # kept, with its traceback, as the failing test kept it
        assert [t.name for t in threading.enumerate() if t.name.startswith("shredcat-bulk")] == []
    finally:
        gc.enable()


def test_bulk_load_errors_are_the_commits(catalog: Catalog) -> None:
    with pytest.raises(NotFoundError) as missing:
        catalog.bulk_load(NS, T, [[_file(0)]])
    with pytest.raises(NotFoundError) as by_commit:
        catalog.commit(NS, T, [_file(0)], create_with=None)
    assert missing.value.message == by_commit.value.message
    catalog.create_table(NS, T, ["v"])
    res = catalog.bulk_load(NS, T, [])
    assert (res.snapshot_id, res.added, res.batches) == (None, 0, 0)
    assert catalog.get_table(NS, T).live_file_count == 0


@pytest.mark.postgres
def test_bulk_load_analyzes_the_tables_it_grows_within_its_transaction(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No commit in between runs ``analyze_if_grown``: the load itself ANALYZEs in its transaction
    once the file table has doubled, or its later batches' per-path probes are planned on guesses
    (each batch read every live file of the table: 210 files/s instead of 1,035 over 20,000)."""
    import service.catalog.service as service_module

    monkeypatch.setattr(service_module, "analyze_if_grown", lambda engine: False)  # only the load's own
    n = ANALYZE_SLACK_ROWS + 200
    with Catalog(pg_url) as cat:
        cat.create_table(NS, T, ["v"])
        cat.bulk_load(NS, T, _batches(n, 100))
        with cat.engine.connect() as c:
            counted = c.execute(
                text("SELECT reltuples FROM pg_class WHERE oid = 'ducklake_file_variant_stats'::regclass")
            ).scalar_one()
    assert counted >= ANALYZE_SLACK_ROWS * 3  # 3 Variant rows per file, sampled after the first 1,001 files
