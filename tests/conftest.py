"""Shared fixtures.

Catalog databases (every catalog test runs on both backends):

* ``catalog_url``: a migrated, empty catalog database, parametrized over ``sqlite`` (a file under the
  test's tmp dir, copied from a per-worker migrated file) and ``postgres`` (a database on 127.0.0.1:5432,
  user postgres, cloned from a per-worker migrated template, and emptied back to that cloned state
  after each test; see :class:`_ReusedDatabase`). The postgres
  params carry the ``postgres`` marker (``-m "not postgres"`` runs the SQLite half).
* ``empty_db_url``: the same, but not migrated (for migration tests).
* ``catalog``: a :class:`service.catalog.Catalog` on ``catalog_url``.

When PostgreSQL is unreachable the postgres params are skipped on a laptop, and fail loudly when
``CI=true`` (``.ci/run`` sets it). Override the server with ``SHREDCAT_TEST_PG_URL`` (an admin URL
whose user may create databases). Database names carry a random suffix, so ``pytest -n``
(xdist) workers never collide.
"""

from __future__ import annotations

import functools
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

from tests.support.pg import DATA_TABLES_SQL, SHAPE_SQL, psycopg_dsn

# Hypothesis' default 200 ms deadline is a wall-clock assertion: on a shared, loaded machine it
# fails examples that are merely slow. Tests that guard against blow-ups bound CPU time instead.
settings.register_profile("shredcat", deadline=None)
settings.load_profile("shredcat")

PG_ADMIN_URL = os.environ.get("SHREDCAT_TEST_PG_URL", "postgresql://postgres@127.0.0.1:5432/postgres")

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


def _admin_dsn() -> str:
    return psycopg_dsn(PG_ADMIN_URL)


def _db_url(name: str) -> str:
    from sqlalchemy import make_url

    return (
        make_url(PG_ADMIN_URL)
        .set(drivername="postgresql+psycopg", database=name)
        .render_as_string(hide_password=False)
    )


@functools.cache
def _pg_unreachable() -> str | None:
    """None when PostgreSQL answers, else why not."""
    try:
        import psycopg

        with psycopg.connect(_admin_dsn(), connect_timeout=3, autocommit=True) as c:
            c.execute("SELECT 1")
    except Exception as e:  # any failure means "no server for the tests"
        return f"{type(e).__name__}: {e}".strip()
    return None


def require_postgres() -> None:
    """Skip (laptop) or fail (CI=true) when the PostgreSQL server is unreachable."""
    why = _pg_unreachable()
    if why is None:
        return
    msg = f"PostgreSQL is unreachable at {PG_ADMIN_URL} ({why})"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + ": CI requires it (start it with pg_ctlcluster, see .ci/run)", pytrace=False)
    pytest.skip(msg)


def _admin_execute(*sql: str) -> None:
    import psycopg

    with psycopg.connect(_admin_dsn(), autocommit=True) as c:
        for s in sql:
            c.execute(s)  # type: ignore[arg-type]


def create_pg_database(prefix: str = "shredcat_test", template: str | None = None) -> str:
    name = f"{prefix}_{uuid.uuid4().hex[:16]}"
    _admin_execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return name


def drop_pg_database(name: str) -> None:
    _admin_execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(autouse=True)
def _settings_from_each_tests_environment() -> Iterator[None]:
    """``get_settings()`` is cached per process: a test that sets a ``SHREDCAT_*`` variable with
    ``monkeypatch`` and reads the settings again before its end would leave its value cached for
    the next test on the worker (``monkeypatch`` restores the variable only at teardown). Being
    autouse, this fixture is set up before ``monkeypatch`` and so torn down after it."""
    from service.settings import get_settings

    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture(scope="session")
def _pg_template() -> Iterator[str]:
    """A migrated database per worker session; test databases are cloned from it (fast)."""
    require_postgres()
    from service.catalog.db import upgrade_to_head

    name = create_pg_database("shredcat_tpl")
    try:
        upgrade_to_head(_db_url(name))  # disposes its engine: no connection is left on the template
        yield name
    finally:
        drop_pg_database(name)


#: The relations (tables, indexes, sequences) of a catalog database outside PostgreSQL's schemas.
_USER_RELATIONS = (
    "SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
    "WHERE n.nspname NOT LIKE 'pg\\_%' AND n.nspname <> 'information_schema'"
)


class _ReusedDatabase:
    """The PostgreSQL half's catalog database: one clone of the worker's template, emptied back to
    its cloned state after each test instead of dropped and cloned again (a clone cost 0.3-1.2 s,
    measured on this machine under load; emptying ~50 ms). After a test its sessions are ended (as
    DROP ... WITH (FORCE) did); then, if its shape (:data:`SHAPE_SQL`: relations, columns,
    indexes, functions, settings, revision...) is still the clone's, every table is truncated,
    every sequence restarted, and planner statistics and counters cleared. A changed shape, a
    clone that held rows, or any failure drops the database: the next test gets a new clone."""

    def __init__(self, template: str) -> None:
        self._template = template
        self._name: str | None = None
        self._shape = ""
        self._tables: list[str] = []
        self._sequences: list[str] = []
        self._sizes: list[tuple[int, int, float, int]] = []

    def take(self) -> str:
        if self._name is None:
            self._name = create_pg_database(template=self._template)
            self._record_clone(self._name)
        return self._name

    def _record_clone(self, name: str) -> None:
        import psycopg

        with psycopg.connect(psycopg_dsn(_db_url(name)), autocommit=True) as c:
            self._shape = str(c.execute(SHAPE_SQL).fetchone()[0])  # type: ignore[index]
            self._tables = [r[0] for r in c.execute(DATA_TABLES_SQL)]
            self._sequences = [r[0] for r in c.execute("SELECT format('%I.%I', schemaname, sequencename) FROM pg_sequences")]
            rows = c.execute(" UNION ALL ".join(f"SELECT count(*) FROM {t}" for t in self._tables) or "SELECT 0").fetchall()
            used = c.execute("SELECT count(*) FROM pg_sequences WHERE last_value IS NOT NULL").fetchone()
            sizes = f"SELECT oid, relpages, reltuples, relallvisible FROM pg_class WHERE oid IN ({_USER_RELATIONS})"
            self._sizes = [tuple(r) for r in c.execute(sizes)]  # type: ignore[arg-type]
        if any(n for (n,) in rows) or (used and used[0]):
            self._tables = []  # emptying could not restore this clone: never reuse it

    def give_back(self) -> None:
        name, self._name = self._name, None
        if name is None:
            return
        try:
            if self._tables and self._empty(name):
                self._name = name
                return
        except Exception:  # whatever went wrong, a new clone is the fresh database the next test needs
            pass
        drop_pg_database(name)

    def _empty(self, name: str) -> bool:
        """Whether ``name`` is back in its cloned state (False: its shape changed)."""
        import psycopg

        with psycopg.connect(psycopg_dsn(_db_url(name)), autocommit=True) as c:
            others = "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
            deadline = time.monotonic() + 10
            # Ended again on each turn: a server the test has not closed yet may still be opening
            # its pool in the background (sessions that began after the first round).
            while c.execute(f"SELECT count(pg_terminate_backend(pid)) {others}").fetchone() != (0,):  # type: ignore[arg-type]
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.01)
            if c.execute(SHAPE_SQL).fetchone() != (self._shape,):
                return False
            c.execute("SET lock_timeout = '5s'")
            with c.transaction():  # one commit (one WAL flush) rather than one per statement
                # DELETE, not TRUNCATE: a TRUNCATE of the catalog's tables made new files for
                # every table and index (0.6-0.8 s, measured); the rows of a test are few. With
                # replication_role "replica" no foreign key orders the deletes: all go.
                c.execute("SET LOCAL session_replication_role = replica")
                for table in self._tables:
                    c.execute(f"DELETE FROM {table}")  # type: ignore[arg-type]
                for seq in self._sequences:
                    c.execute(f"ALTER SEQUENCE {seq} RESTART")  # type: ignore[arg-type]
                # The clone's size estimates (what ANALYZE and analyze_if_grown read) and no
                # planner statistics: another test's ANALYZE must not show through.
                c.execute(
                    "UPDATE pg_class SET relpages = v.p, reltuples = v.t, relallvisible = v.a "
                    "FROM unnest(%s::oid[], %s::int[], %s::real[], %s::int[]) AS v(o, p, t, a) WHERE pg_class.oid = v.o",
                    [list(col) for col in zip(*self._sizes, strict=True)],
                )
                c.execute(f"DELETE FROM pg_statistic WHERE starelid IN ({_USER_RELATIONS})")  # type: ignore[arg-type]
            c.execute("SELECT pg_stat_reset()")  # activity counters (pg_stat_user_tables) as a clone's
        return True

    def close(self) -> None:
        if self._name is not None:
            drop_pg_database(self._name)
            self._name = None


@pytest.fixture(scope="session")
def _pg_catalog_db(_pg_template: str) -> Iterator[_ReusedDatabase]:
    db = _ReusedDatabase(_pg_template)
    try:
        yield db
    finally:
        db.close()  # before the template is dropped


@pytest.fixture(params=BACKENDS)
def empty_db_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    """An empty (not migrated) database of each backend."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/catalog.db"
        return
    require_postgres()
    name = create_pg_database()
    try:
        yield _db_url(name)
    finally:
        drop_pg_database(name)


@pytest.fixture(params=BACKENDS)
def catalog_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """A migrated, empty catalog database of each backend."""
    if request.param == "sqlite":
        # A copy of the session's migrated file, as for the PostgreSQL half: running the
        # migrations again for each of the ~260 SQLite tests cost more than most of those tests.
        yield request.getfixturevalue("sqlite_url")
        return
    db: _ReusedDatabase = request.getfixturevalue("_pg_catalog_db")
    name = db.take()
    try:
        yield _db_url(name)
    finally:
        db.give_back()


@pytest.fixture
def catalog(catalog_url: str) -> Iterator[object]:
    from service.catalog import Catalog

    cat = Catalog(catalog_url)
    try:
        yield cat
    finally:
        cat.close()


# --- a migrated SQLite catalog per test ----------------------------------------------------------


@pytest.fixture(scope="session")
def _template_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Migrated once per session; each test gets a copy (faster than migrating per test)."""
    from service.catalog.db import upgrade_to_head

    p = tmp_path_factory.mktemp("template") / "catalog.db"
    upgrade_to_head(f"sqlite:///{p}")
    return p


@pytest.fixture
def sqlite_url(_template_db: Path, tmp_path: Path) -> str:
    p = tmp_path / "catalog.db"
    shutil.copyfile(_template_db, p)
    return f"sqlite:///{p}"
