"""Migrations on a catalog that holds data, on both backends.

* ``test_upgrade_keeps_every_file_and_stat[<rev>]``: a database built at revision ``<rev>`` (every
  revision of ``migrations/versions``, in order) is filled through the library (two tables, several
  snapshots, a removal, every stats family), then upgraded to head: every table, snapshot, file (at
  every snapshot), per-file stats row and global stat is unchanged, the global stats still equal a
  recomputation, and the library keeps working on the upgraded database.
* ``test_down_and_up_keeps_a_sound_schema[<a>-><b>]``: for every consecutive pair of revisions
  (``base`` first) a database at ``b`` is taken down to ``a`` and up to head again: no drift from the
  models, and commits and global stats work on it.

Every revision is covered by these parameters without editing this file. A revision whose schema
the head library can no longer write gets its own seeder in ``SEEDERS``: every revision before
``0007`` (zone maps, written with every stats row), filled at head and taken down. Down to ``0003``
and later only the zone maps go, which the upgrade rebuilds, so what a reader sees must come back
unchanged; further down, plain-column statistics go too (``0001``'s idempotency keys lose their
principal; the upgraded key belongs to the library's principal, so the library's replay still
finds it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from service.catalog import Catalog
from service.catalog.admin import admin_reads
from service.catalog.db import current_revision, downgrade, schema_drift, upgrade_to_head
from service.catalog.history import table_history
from service.errors import ConflictError
from tests.catalog.factories import (
    BLOB,
    DATE,
    DEC,
    FLOAT32,
    FLOAT64,
    INT32,
    INT64,
    VARCHAR,
    assert_consistent,
    cs,
    fs,
    ps,
    with_columns,
)


def _revisions() -> list[str]:
    """Every revision id, oldest first."""
    from alembic.script import ScriptDirectory

    from service.catalog.db import alembic_config

    script = ScriptDirectory.from_config(alembic_config())
    return [r.revision for r in reversed(list(script.walk_revisions("base", "heads")))]


REVISIONS = _revisions()
HEAD = REVISIONS[-1]
PAIRS = list(zip(["base", *REVISIONS[:-1]], REVISIONS, strict=True))


def _batch1() -> list[Any]:
    return [
        fs(f"s3://b/events/a{i}.parquet", ps('"id"', INT64, i * 100, i * 100 + 99, values=90, nulls=10),
           ps('"score"', FLOAT64, -1.5 * i, float("inf") if i == 2 else 2.5 * i, nan=i % 2 == 0, values=100, nulls=0),
           ps('"name"', VARCHAR, f"a{i}", f"z{i}", column="w", values=100, nulls=0), columns=("v", "w"), records=100)
        for i in range(5)
    ]


def _batch2() -> list[Any]:
    return [
        fs(f"s3://b/events/b{i}.parquet", ps('"id"', INT64, -i, i, values=100, nulls=0),
           ps('"price"', DEC, Decimal("-1.25") * i, Decimal("99999999999999999999999999999999.99"), values=100, nulls=0),
           ps('"day"', DATE, 19723 + i, 19754, values=100, nulls=0),  # days since 1970-01-01
           ps('"n"', INT32, 0, 7, values=50, nulls=50),
           ps('"r"', FLOAT32, 0.5, 1.5, values=100, nulls=0),
           ps('"blob"', BLOB, b"\x00", b"\xff" * 3, values=100, nulls=0),
           ps('"items".element."x"', INT64, 1, 2, values=300, nulls=0),
           columns=("v", "w"), records=100)
        for i in range(4)
    ]


KEY = "migration-test-key"


def _seed_with_library(url: str) -> None:
    with Catalog(url) as cat:
        cat.create_table("lake", "events", ["v", "w"])
        cat.create_table("other", "t", ["v"])
        cat.commit("lake", "events", _batch1())
        cat.commit("lake", "events", _batch2(), idempotency_key=KEY)
        cat.remove("lake", "events", ["s3://b/events/a1.parquet", "s3://b/events/b3.parquet"])
        cat.commit("other", "t", [fs("s3://b/other/x.parquet", ps('"k"', VARCHAR, "a", "b"))])


def _seed_at_head_then_down_to(revision: str) -> Callable[[str], None]:
    """For a revision whose schema the head library can no longer write: fill the database at head
    with the library (plain and partition columns included), then take it down to ``revision``
    (the downgrades drop what that revision cannot hold: plain-column rows, principals of keys)."""

    def seed(url: str) -> None:
        upgrade_to_head(url)
        _seed_with_library(url)
        with Catalog(url) as cat:
            cat.commit("other", "t", [with_columns(fs("s3://b/other/y.parquet", ps('"k"', VARCHAR, "c", "d")), cs("n", INT64, 1, 2))])
            cat.remove("other", "t", ["s3://b/other/y.parquet"])
            # Rows of one key ended at two snapshots: 0012 fills in the later one.
            cat.commit("other", "t", [fs("s3://b/other/z.parquet", ps('"k"', VARCHAR, "e", "f"))])
            cat.remove("other", "t", ["s3://b/other/z.parquet"])
        # What a reader sees, taken at head: a schema before 0010 cannot be read by the head
        # library (the files' proven objects), and the way down and up must give it back.
        SEEN_AT_HEAD[url] = fingerprint(url)
        downgrade(url, revision)

    return seed


#: database URL -> its fingerprint at head, taken by a seeder before it went down to a revision.
SEEN_AT_HEAD: dict[str, dict[str, Any]] = {}

#: revision -> how to fill a database at that revision (default: the head library). The library
#: writes zone maps with every stats row since 0007, the keys' ``had_values`` since 0008, the
#: files' proven objects (absent fields) since 0010, the keys' timeline counters since 0012 and the
#: snapshots' records and bytes since 0013 (the way up fills them from the rows: ``assert_consistent``
#: recounts them, the fingerprint holds the table's history), so every earlier revision is seeded
#: at head.
SEEDERS: dict[str, Callable[[str], None]] = {
    r: _seed_at_head_then_down_to(r) for r in REVISIONS[: REVISIONS.index("0013")]
}
#: Revisions whose seeding loses nothing a reader sees on the way down (only zone maps, which the
#: upgrade rebuilds): the upgrade must give back exactly what the seed wrote.
LOSSLESS = set(REVISIONS[REVISIONS.index("0003") :])


def fingerprint(url: str) -> dict[str, Any]:
    """Everything a reader can see, at every snapshot of every table; also checks that the stored
    global stats equal a recomputation."""
    out: dict[str, Any] = {}
    with Catalog(url) as cat:
        for t in cat.list_tables():
            ns, name = t.namespace, t.name
            assert_consistent(cat, ns, name)
            snaps = cat.list_snapshots(ns, name, limit=10_000)
            at: dict[int, Any] = {}
            for s in snaps:
                files = cat.list_files(ns, name, snapshot=s.snapshot_id, limit=10_000)
                at[s.snapshot_id] = (
                    files,
                    # Proven objects are not kept on the way down past 0010 (files then prove no
                    # field absent, which only prunes less): compared without them.
                    {
                        f.path: dataclasses.replace(cat.file_stats(ns, name, f.path, snapshot=s.snapshot_id), objects=())
                        for f in files
                    },
                    cat.recompute_global_stats(ns, name, snapshot=s.snapshot_id).ducklake_json(),
                )
            out[f"{ns}.{name}"] = {
                "table": t,
                "snapshots": snaps,
                "at": at,
                "global": cat.global_stats_json(ns, name),
                "coverage": admin_reads(cat).path_coverage(ns, name),
                "history": table_history(cat, ns, name),
            }
    return out


@pytest.mark.parametrize("revision", REVISIONS)
def test_upgrade_keeps_every_file_and_stat(empty_db_url: str, revision: str) -> None:
    upgrade_to_head(empty_db_url, revision)
    assert current_revision(empty_db_url) == revision
    SEEDERS.get(revision, _seed_with_library)(empty_db_url)
    at_head = SEEN_AT_HEAD.pop(empty_db_url, None)
    before = (at_head if at_head is not None else fingerprint(empty_db_url)) if revision in LOSSLESS else None
    upgrade_to_head(empty_db_url)
    assert current_revision(empty_db_url) == HEAD
    assert schema_drift(empty_db_url) == []
    after = fingerprint(empty_db_url)
    if before is not None:
        assert after == before
    events = after["lake.events"]
    assert events["table"].live_file_count == 7 and len(events["snapshots"]) == 4
    assert after["other.t"]["table"].live_file_count == 1
    # The upgraded catalog keeps working: a commit, an idempotent replay, a removal.
    with Catalog(empty_db_url) as cat:
        r = cat.commit("lake", "events", [fs("s3://b/events/c0.parquet", ps('"id"', INT64, 5, 6), columns=("v", "w"))])
        assert r.added == ("s3://b/events/c0.parquet",)
        # Idempotency keys survive: a replay answers the first result, another body is a conflict.
        again = cat.commit("lake", "events", _batch2(), idempotency_key=KEY)
        assert again.replayed and again.added == tuple(f"s3://b/events/b{i}.parquet" for i in range(4))
        with pytest.raises(ConflictError):
            cat.commit("lake", "events", _batch1(), idempotency_key=KEY)
        cat.remove("lake", "events", ["s3://b/events/c0.parquet"])
        assert_consistent(cat, "lake", "events")


@pytest.mark.parametrize(("down_to", "up_from"), PAIRS, ids=[f"{a}->{b}" for a, b in PAIRS])
def test_down_and_up_keeps_a_sound_schema(empty_db_url: str, down_to: str, up_from: str) -> None:
    upgrade_to_head(empty_db_url, up_from)
    SEEDERS.get(up_from, _seed_with_library)(empty_db_url)
    SEEN_AT_HEAD.pop(empty_db_url, None)  # this test checks the schema, not the data
    downgrade(empty_db_url, down_to)
    assert current_revision(empty_db_url) == (None if down_to == "base" else down_to)
    upgrade_to_head(empty_db_url)
    assert current_revision(empty_db_url) == HEAD
    assert schema_drift(empty_db_url) == []
    with Catalog(empty_db_url) as cat:
        if down_to == "base":
            assert cat.list_tables() == []  # the data went with the schema
        cat.create_table("lake", "fresh", ["v"], if_not_exists=True)
        cat.commit("lake", "fresh", [fs("s3://b/fresh/a.parquet", ps('"id"', INT64, 1, 9))])
        assert_consistent(cat, "lake", "fresh")
        assert cat.get_table("lake", "fresh").live_file_count == 1


def test_a_catalog_from_before_0003_replays_its_keys_and_names_refresh(empty_db_url: str) -> None:
    """What code before schema 0003 left: files without plain-column or partition rows (the
    downgrade drops them) and keys whose request hash had no such rows (written as that code
    hashed). After the upgrade a retried commit still replays, and a partitioned table's new file
    is refused with the way out (``refresh``), which then lets it in."""
    from sqlalchemy import text

    from service.catalog.db import make_engine
    from service.catalog.validate import request_hash
    from service.errors import InvalidStatsError

    def file(path: str) -> Any:
        return with_columns(fs(path, ps('"a"', INT64, 1, 2)), cs("n", INT64, 1, 2))

    old = [file("s3://b/t/k=1/old.parquet")]
    upgrade_to_head(empty_db_url)
    with Catalog(empty_db_url) as cat:
        cat.create_table("up", "t", ["v"])
        first = cat.commit("up", "t", old, idempotency_key="before-0003")
    downgrade(empty_db_url, "0002")
    engine = make_engine(empty_db_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("UPDATE shredcat_commit_key SET request_hash = :h"), {"h": request_hash(old, columns=False)})
    finally:
        engine.dispose()
    upgrade_to_head(empty_db_url)
    with Catalog(empty_db_url) as cat:
        again = cat.commit("up", "t", old, idempotency_key="before-0003")
        assert again.replayed and again.snapshot_id == first.snapshot_id
        new = [file("s3://b/t/k=2/new.parquet")]
        with pytest.raises(InvalidStatsError, match=r"run `shredcat refresh --table up\.t` once"):
            cat.commit("up", "t", new)
        assert cat.refresh("up", "t", read=file).refreshed == 1
        assert cat.commit("up", "t", new).added == ("s3://b/t/k=2/new.parquet",)
