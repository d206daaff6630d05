"""Engines, settings and error translation (service.catalog.db, service.settings)."""

from __future__ import annotations

import select
import socket
import sqlite3
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from service.catalog import Catalog
from service.catalog import db as catalog_db
from service.catalog.db import (
    analyze_if_grown,
    current_revision,
    is_retryable,
    make_engine,
    normalize_url,
    run_transaction,
    transaction,
    upgrade_to_head,
)
from service.errors import ConflictError, ShredcatError, StorageUnavailableError
from service.settings import Settings, get_settings


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_settings_default_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHREDCAT_DATABASE_URL", raising=False)
    assert Settings().database_url == "sqlite:///./shredcat.db"
    monkeypatch.setenv("SHREDCAT_DATABASE_URL", "postgresql://u@h/db")
    get_settings.cache_clear()
    try:
        assert get_settings().database_url == "postgresql://u@h/db"
    finally:
        get_settings.cache_clear()


def test_catalog_defaults_to_the_settings_url(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SHREDCAT_DATABASE_URL", f"sqlite:///{tmp_path}/env.db")
    get_settings.cache_clear()
    try:
        with Catalog() as cat:
            assert cat.engine.url.database == f"{tmp_path}/env.db"
    finally:
        get_settings.cache_clear()


def test_plain_postgres_urls_mean_psycopg3() -> None:
    assert normalize_url("postgresql://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("postgres://u@h/db").drivername == "postgresql+psycopg"
    assert normalize_url("sqlite:///x.db").drivername == "sqlite"


def test_sqlite_pragmas(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/p.db")
    try:
        with transaction(engine, write=False) as c:
            assert c.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert c.exec_driver_sql("PRAGMA foreign_keys").scalar() == 1
            assert c.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30_000
    finally:
        engine.dispose()


def test_unreachable_postgres_is_storage_unavailable() -> None:
    cat = Catalog(f"postgresql://postgres@127.0.0.1:{_free_port()}/nope")
    try:
        with pytest.raises(StorageUnavailableError):
            cat.list_tables()
    finally:
        cat.close()


def test_unopenable_sqlite_is_storage_unavailable(tmp_path: Path) -> None:
    cat = Catalog(f"sqlite:///{tmp_path}/missing-dir/x.db")
    try:
        with pytest.raises(StorageUnavailableError):
            cat.list_tables()
    finally:
        cat.close()


def test_unmigrated_database_is_an_error_not_a_crash(empty_db_url: str) -> None:
    cat = Catalog(empty_db_url)
    try:
        with pytest.raises(Exception) as e:
            cat.list_tables()
        assert e.type.__module__ == "service.errors"
    finally:
        cat.close()


def test_current_revision_reads_what_alembic_reads(empty_db_url: str) -> None:
    """The cheap revision read (no Alembic import) agrees with Alembic's own at every state."""
    from alembic.runtime.migration import MigrationContext

    def alembic_revision() -> str | None:
        engine = make_engine(empty_db_url)
        try:
            with engine.connect() as conn:
                return MigrationContext.configure(conn).get_current_revision()
        finally:
            engine.dispose()

    assert current_revision(empty_db_url) is None is alembic_revision()
    upgrade_to_head(empty_db_url)
    assert current_revision(empty_db_url) == alembic_revision() is not None
    engine = make_engine(empty_db_url)
    try:
        with transaction(engine) as conn:
            conn.execute(text("INSERT INTO alembic_version (version_num) VALUES ('other')"))
        with pytest.raises(ShredcatError, match="several revisions"):
            current_revision(engine)
        with transaction(engine) as conn:
            conn.execute(text("DELETE FROM alembic_version"))
        assert current_revision(engine) is None is alembic_revision()
    finally:
        engine.dispose()


def test_integrity_errors_become_conflicts(catalog_url: str) -> None:
    engine = make_engine(catalog_url)
    try:

        def dup(c):  # type: ignore[no-untyped-def]
            c.execute(
                text(
                    "INSERT INTO shredcat_commit_key (table_id, idempotency_key, request_hash, result, created_at) "
                    "VALUES (1, 'k', 'h', '{}', CURRENT_TIMESTAMP)"
                )
            )

        with pytest.raises(ConflictError):  # no such table_id: foreign key violation
            run_transaction(engine, dup)
    finally:
        engine.dispose()


class _PgError(Exception):
    def __init__(self, sqlstate: str) -> None:
        super().__init__(f"sqlstate {sqlstate}")
        self.sqlstate = sqlstate


@pytest.mark.parametrize(
    "orig",
    [sqlite3.OperationalError("database is locked"), _PgError("40P01"), _PgError("40001"), _PgError("55P03")],
    ids=["sqlite-locked", "pg-deadlock", "pg-serialization", "pg-lock-timeout"],
)
def test_transient_errors_are_retried(tmp_path: Path, orig: Exception) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/r.db")
    calls: list[int] = []

    def flaky(c):  # type: ignore[no-untyped-def]
        calls.append(1)
        if len(calls) < 3:
            raise OperationalError("SELECT 1", {}, orig)
        return c.exec_driver_sql("SELECT 42").scalar()

    try:
        assert is_retryable(OperationalError("x", {}, orig))
        assert run_transaction(engine, flaky) == 42 and len(calls) == 3

        def always(c):  # type: ignore[no-untyped-def]
            raise OperationalError("SELECT 1", {}, orig)

        with pytest.raises(StorageUnavailableError):
            run_transaction(engine, always, attempts=2)
    finally:
        engine.dispose()


def test_postgres_sessions_plan_without_jit_or_parallel_workers() -> None:
    """Catalog sessions switch off JIT and parallel workers (both cost more than a page-sized
    statement saves) and plan every statement for its values (a generic plan of a prepared
    point-list join reads every file); `options` in the URL replaces the default."""
    from tests.conftest import PG_ADMIN_URL, require_postgres

    require_postgres()
    for url, ours in ((PG_ADMIN_URL, True), (PG_ADMIN_URL + "?options=-c%20jit%3Don", False)):
        engine = make_engine(url)
        try:
            with engine.connect() as conn:
                assert conn.execute(text("SHOW jit")).scalar() == ("off" if ours else "on")
                workers = conn.execute(text("SHOW max_parallel_workers_per_gather")).scalar()
                assert (workers == "0") == ours
                custom = conn.execute(text("SHOW plan_cache_mode")).scalar()
                assert (custom == "force_custom_plan") == ours
        finally:
            engine.dispose()


@pytest.mark.postgres
def test_a_pooled_postgres_connection_the_server_ended_is_replaced_at_checkout() -> None:
    """No ping on checkout of a healthy connection (a round trip per transaction): a connection the
    server has ended is recognised by what waits on its socket and replaced, so the next
    transaction succeeds on a new session instead of failing once; a live one is reused."""
    from sqlalchemy import event

    from tests.conftest import _admin_execute, _db_url, create_pg_database, drop_pg_database, require_postgres

    require_postgres()
    name = create_pg_database()
    engine = make_engine(_db_url(name), concurrency=1)
    statements: list[str] = []
    try:
        with transaction(engine, write=False) as conn:
            first = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        _admin_execute(f"SELECT pg_terminate_backend({int(first)}, 5000)")
        event.listen(engine, "before_cursor_execute", lambda *a: statements.append(a[2]))
        with transaction(engine, write=False) as conn:
            second = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        assert second != first
        with transaction(engine, write=False) as conn:
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() == second
        assert statements == ["SELECT pg_backend_pid()"] * 2
        # Something waiting on a live connection (a notification here) is not taken for its end:
        # the connection is asked, answers, and is kept.
        with transaction(engine, write=True) as conn:
            conn.execute(text("LISTEN shredcat_test"))
            fd = conn.connection.dbapi_connection.fileno()  # type: ignore[union-attr]
        other = make_engine(_db_url(name), concurrency=1)  # notifications stay within a database
        try:
            with transaction(other, write=True) as conn:
                conn.execute(text("NOTIFY shredcat_test"))
        finally:
            other.dispose()
        waiting = select.poll()
        waiting.register(fd, select.POLLIN)
        assert waiting.poll(10_000), "the notification did not arrive"
        with transaction(engine, write=False) as conn:
            assert conn.execute(text("SELECT pg_backend_pid()")).scalar_one() == second
    finally:
        engine.dispose()
        drop_pg_database(name)


def test_commits_refresh_the_file_tables_statistics_when_it_has_doubled(
    catalog_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL only: a commit that leaves ``ducklake_data_file`` more than twice as large as its
    statistics say ANALYZEs it and the stats tables (so the per-path probe of the next commit and
    the plans are planned on real counts); smaller growth does not; SQLite never does."""
    from tests.catalog.factories import int_file

    monkeypatch.setattr(catalog_db, "ANALYZE_SLACK_ROWS", 10)
    cat = Catalog(catalog_url)
    try:
        cat.create_table("ns", "t", ["v"])

        def never_analyzed() -> list[str]:
            with cat.engine.connect() as conn:
                return list(
                    conn.execute(
                        text("SELECT relname FROM pg_stat_user_tables WHERE relname = ANY(:t) AND last_analyze IS NULL"),
                        {"t": list(catalog_db.ANALYZED_TABLES)},
                    ).scalars()
                )

        def counted() -> float:
            with cat.engine.connect() as conn:
                return float(
                    conn.execute(text("SELECT reltuples FROM pg_class WHERE oid = 'ducklake_data_file'::regclass")).scalar()
                )

        cat.commit("ns", "t", [int_file(f"s3://b/t/a{i}.parquet") for i in range(30)])
        if cat.backend != "postgresql":
            assert analyze_if_grown(cat.engine) is False
            return
        assert counted() == 30  # the commit analyzed the table: 30 > 2 x 0 + 10
        assert never_analyzed() == []  # with the tables that grow with the files
        cat.commit("ns", "t", [int_file(f"s3://b/t/b{i}.parquet") for i in range(20)])
        assert counted() == 30 and analyze_if_grown(cat.engine) is False  # 50 <= 2 x 30 + 10
        cat.commit("ns", "t", [int_file(f"s3://b/t/c{i}.parquet") for i in range(30)])
        assert counted() == 80
    finally:
        cat.close()


@pytest.mark.postgres
def test_a_transaction_whose_connection_is_lost_drops_it_instead_of_rolling_back() -> None:
    """A client-side psycopg error (a pipeline a killed backend left busy) or a connection-class
    SQLSTATE means the session is gone: the connection is dropped, not rolled back (the ROLLBACK
    fails again, and the pool's reset logs that as an ERROR with a traceback); any other error
    rolls back and keeps the connection."""
    import psycopg

    from tests.conftest import PG_ADMIN_URL, require_postgres

    require_postgres()
    engine = make_engine(PG_ADMIN_URL, concurrency=1)
    try:
        lost = OperationalError("COMMIT", {}, psycopg.OperationalError("cannot exit pipeline mode while busy"))
        with pytest.raises(OperationalError), transaction(engine) as conn:
            first = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
            raise lost
        with pytest.raises(ValueError), transaction(engine) as conn:
            second = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
            raise ValueError("not the connection's fault")
        with transaction(engine) as conn:
            third = conn.execute(text("SELECT pg_backend_pid()")).scalar_one()
        assert second != first  # dropped: a new session
        assert third == second  # rolled back and kept
    finally:
        engine.dispose()


@pytest.mark.postgres
def test_fill_pool_opens_the_pools_connections_and_transactions_reuse_them() -> None:
    """A server fills its pool at start, so a load that grows later opens no database sessions:
    after ``fill_pool`` as many transactions as the pool holds, all at once, run on the sessions
    it opened."""
    import threading

    from tests.conftest import _db_url, create_pg_database, drop_pg_database, require_postgres

    require_postgres()
    name = create_pg_database()
    engine = make_engine(_db_url(name), concurrency=4)
    try:
        assert catalog_db.fill_pool(engine) == 4
        assert engine.pool.checkedin() == 4  # type: ignore[attr-defined]
        assert catalog_db.fill_pool(engine) == 4  # filled already: nothing more opened
        with transaction(engine, write=False) as conn:
            opened = set(conn.execute(text("SELECT pid FROM pg_stat_activity WHERE datname = current_database()")).scalars())
        assert len(opened) == 4
        pids: list[int] = []
        together = threading.Barrier(4)

        def run() -> None:
            with transaction(engine, write=False) as conn:
                together.wait(timeout=30)  # all four connections checked out at once
                pids.append(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())

        threads = [threading.Thread(target=run) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(pids) == sorted(opened)
        stop = threading.Event()
        stop.set()
        other = make_engine(_db_url(name), concurrency=4)
        try:
            assert catalog_db.fill_pool(other, stop) == 0  # stopped before the first connection
        finally:
            other.dispose()
    finally:
        engine.dispose()
        drop_pg_database(name)


def test_fill_pool_is_a_no_op_on_sqlite_and_only_logs_an_unreachable_postgres(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'c.db'}")
    try:
        assert catalog_db.fill_pool(engine) == 0
    finally:
        engine.dispose()
    engine = make_engine(f"postgresql://postgres@127.0.0.1:{_free_port()}/nope", concurrency=3)
    try:
        with caplog.at_level("WARNING", logger="service.catalog.db"):
            assert catalog_db.fill_pool(engine) == 0
        assert "open on first use" in caplog.text
    finally:
        engine.dispose()
