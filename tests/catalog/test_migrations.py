"""Alembic migrations: empty -> head -> base on both backends, and no drift from the models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import inspect

from service.catalog import Catalog
from service.catalog.db import (
    current_revision,
    downgrade,
    make_engine,
    schema_drift,
    schema_revision_error,
    upgrade_to_head,
)
from service.catalog.models import schema
from service.errors import SchemaNotMigratedError

REPO = Path(__file__).resolve().parents[2]
HEAD = "0013"


def test_the_code_knows_the_head_revision_without_alembic() -> None:
    from alembic.script import ScriptDirectory

    from service.catalog.db import SCHEMA_REVISION, alembic_config

    assert SCHEMA_REVISION == HEAD == ScriptDirectory.from_config(alembic_config()).get_current_head()


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_commands_refuse_a_catalog_not_at_the_code_revision(empty_db_url: str, tmp_path: Path) -> None:
    """A server database never migrated, or migrated by older code, is a one-line error naming
    ``shredcat migrate`` (exit 1), not the SQL error of a missing table or column; only a fresh
    embedded SQLite file is migrated on first use."""
    import os

    from tests.support.cli import shredcat

    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}

    def tables(real: bool = False) -> subprocess.CompletedProcess[str]:
        """The first run a real process, the second the same ``main`` here (tests.support.cli)."""
        return shredcat(["tables", "--database-url", empty_db_url], env, real=real, cwd=tmp_path)

    if empty_db_url.startswith("sqlite"):
        assert tables(real=True).returncode == 0 and current_revision(empty_db_url) == HEAD
    else:
        r = tables(real=True)
        assert r.returncode == 1 and r.stderr.strip() == (
            "shredcat tables: the catalog database was never migrated; this shredcat needs revision "
            f"{HEAD}: run `shredcat migrate`"
        ), r.stderr
        upgrade_to_head(empty_db_url)
    downgrade(empty_db_url, "0007")
    r = tables()
    assert r.returncode == 1 and "is at schema revision 0007; this shredcat needs revision" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and "column" not in r.stderr


def test_the_library_names_shredcat_migrate_on_an_unmigrated_database(empty_db_url: str) -> None:
    """``Catalog(url)`` on a database never migrated failed with "catalog database error: no such
    table: ducklake_schema": now the typed error and the words of the CLI and the server
    (:func:`schema_revision_error`), for a read and a write alike, leaving the database empty."""
    want = schema_revision_error(None)
    assert want is not None and "run `shredcat migrate`" in want.message
    with Catalog(empty_db_url) as cat:
        for op in (cat.list_namespaces, lambda: cat.create_table("ns", "t", ["v"]), lambda: cat.get_table("ns", "t")):
            with pytest.raises(SchemaNotMigratedError) as e:
                op()
            assert e.value.message == want.message
    assert current_revision(empty_db_url) is None and _tables(empty_db_url) == set()


def test_upgrade_downgrade_round_trip(empty_db_url: str) -> None:
    assert current_revision(empty_db_url) is None
    upgrade_to_head(empty_db_url)
    assert current_revision(empty_db_url) == HEAD
    assert set(schema().tables) <= _tables(empty_db_url)
    upgrade_to_head(empty_db_url)  # idempotent
    downgrade(empty_db_url, "base")
    assert current_revision(empty_db_url) is None
    assert _tables(empty_db_url) <= {"alembic_version"}
    upgrade_to_head(empty_db_url)  # and up again from scratch
    assert current_revision(empty_db_url) == HEAD


def test_models_and_migrations_do_not_drift(catalog_url: str) -> None:
    assert schema_drift(catalog_url) == []


def test_partial_indexes_exist(catalog_url: str) -> None:
    engine = make_engine(catalog_url)
    try:
        names = {ix["name"] for ix in inspect(engine).get_indexes("ducklake_file_variant_stats")}
    finally:
        engine.dispose()
    assert {
        f"ix_ducklake_file_variant_stats_live_{k}"
        for k in ("min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin")
    } <= names


def test_alembic_command_line_uses_the_url_argument(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/cli.db"
    alembic = Path(sys.executable).with_name("alembic")
    out = subprocess.run(
        [str(alembic), "-x", f"url={url}", "upgrade", "head"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert current_revision(url) == HEAD


def _keys(url: str) -> list[tuple[object, ...]]:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            cols = {c["name"] for c in inspect(conn).get_columns("shredcat_commit_key")}
            who = "principal" if "principal" in cols else "'-'"
            rows = conn.exec_driver_sql(f"SELECT table_id, {who}, idempotency_key, result FROM shredcat_commit_key")
            return sorted(tuple(r) for r in rows)
    finally:
        engine.dispose()


def _insert_key(url: str, table_id: int, principal: str | None, result: str, day: int) -> None:
    from datetime import UTC, datetime

    from sqlalchemy import text

    cols, values = ("principal, ", ":p, ") if principal is not None else ("", "")
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                text(
                    f"INSERT INTO shredcat_commit_key (table_id, {cols}idempotency_key, request_hash, snapshot_id, "
                    f"result, created_at) VALUES (:t, {values}'k1', 'h', NULL, :r, :at)"
                ),
                {"t": table_id, "p": principal, "r": result, "at": datetime(2026, 1, day, tzinfo=UTC)},
            )
    finally:
        engine.dispose()


def test_commit_keys_get_a_principal_and_a_wider_primary_key(empty_db_url: str) -> None:
    """0001 -> 0002: existing keys belong to the library principal; the same key of another
    principal is then another row; the downgrade keeps the earliest key of each (table, key)."""
    from service.catalog import Catalog

    # The table is made by the head library, then the schema is taken down to 0001 (the head
    # library cannot write 0001's schema).
    upgrade_to_head(empty_db_url)
    with Catalog(empty_db_url) as catalog:
        table_id = catalog.create_table("ns", "t", ["v"]).table_id
    downgrade(empty_db_url, "0001")
    _insert_key(empty_db_url, table_id, None, "r1", 1)
    upgrade_to_head(empty_db_url)
    assert _keys(empty_db_url) == [(table_id, "library", "k1", "r1")]
    _insert_key(empty_db_url, table_id, "token:ab", "r2", 2)
    assert [k[1:] for k in _keys(empty_db_url)] == [("library", "k1", "r1"), ("token:ab", "k1", "r2")]
    downgrade(empty_db_url, "0001")
    assert _keys(empty_db_url) == [(table_id, "-", "k1", "r1")]
    upgrade_to_head(empty_db_url)
    assert schema_drift(empty_db_url) == []


def test_keys_that_had_values_are_found_by_the_upgrade(empty_db_url: str) -> None:
    """0007 -> 0008: a partition column's key had values if any stats row of it held one, even of
    a file removed since; the key of NULL values (varchar) had none."""
    from sqlalchemy import text

    from service.catalog import Catalog
    from service.catalog.db import make_engine
    from tests.catalog.factories import fs, ps

    upgrade_to_head(empty_db_url)
    with Catalog(empty_db_url) as catalog:
        catalog.create_table("ns", "t", ["v"])
        files = [fs(f"s3://b/t/p={v}/f{i}.parquet", ps()) for i, v in enumerate(["1", "__HIVE_DEFAULT_PARTITION__"])]
        catalog.commit("ns", "t", files)
        catalog.remove("ns", "t", [files[0].path])  # the int is gone; the NULL (under varchar) stays
    downgrade(empty_db_url, "0007")
    upgrade_to_head(empty_db_url)
    engine = make_engine(empty_db_url)
    try:
        with engine.connect() as conn:
            got = dict(conn.execute(text("SELECT shredded_type, had_values FROM shredcat_variant_path WHERE variant_path = ''")).all())
    finally:
        engine.dispose()
    assert {k: bool(v) for k, v in got.items()} == {"int32": True, "varchar": False}


def test_migrations_started_at_once_all_succeed(empty_db_url: str) -> None:
    """Several replicas (or deploy hooks) run ``shredcat migrate`` at the same moment on a fresh
    catalog: each must end at the head revision without error; none may fail on the tables another
    is creating."""
    import threading

    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def run() -> None:
        start.wait()
        try:
            upgrade_to_head(empty_db_url)
        except BaseException as e:  # collected: a thread's exception would otherwise be lost
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert errors == []
    assert current_revision(empty_db_url) == HEAD
    assert schema_drift(empty_db_url) == []
