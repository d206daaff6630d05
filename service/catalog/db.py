"""The one module that wraps SQLAlchemy engines, transactions and migrations, and translates driver
errors into :mod:`service.errors`.

Backends:

* **SQLite** (embedded default): WAL journal, ``foreign_keys=ON``, ``busy_timeout`` 30 s, and
  writers start with ``BEGIN IMMEDIATE`` (readers with a deferred ``BEGIN``), so that writers are
  serialized by SQLite's write lock instead of failing on a lock upgrade.
* **PostgreSQL** (psycopg 3): READ COMMITTED; writers serialize per table by locking the table row
  (``SELECT ... FOR UPDATE``, see :mod:`service.catalog.repository.tables`).
  A pooled connection the server has ended is replaced at checkout, found without a round trip
  while it is healthy (:func:`_discard_if_ended`).

:func:`run_transaction` runs a function in one transaction and retries it a bounded number of times
on serialization failures, deadlocks, lock timeouts and ``database is locked``.
"""

from __future__ import annotations

import functools
import logging
import random
import select
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sqlalchemy import create_engine, event, make_url
from sqlalchemy.engine import URL, Connection, Engine
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    DisconnectionError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    SQLAlchemyError,
)
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from sqlalchemy.pool import StaticPool

from service.catalog import deadlines
from service.errors import (
    BadInputError,
    ConflictError,
    DatabaseUnresponsiveError,
    SchemaNotMigratedError,
    ShredcatError,
    StorageUnavailableError,
)
from service.values.text import NUL_NOT_STORED, ascii_digits, shown

log = logging.getLogger(__name__)

T = TypeVar("T")

def _migrations_dir() -> Path:
    """The Alembic scripts: ``migrations/`` beside the package in a checkout or editable install,
    else the copy a wheel installs under ``<prefix>/share/shredcat/migrations``."""
    import sys

    source = Path(__file__).resolve().parents[2] / "migrations"
    if (source / "env.py").exists():
        return source
    return Path(sys.prefix) / "share" / "shredcat" / "migrations"


#: Where the Alembic scripts live.
MIGRATIONS_DIR = _migrations_dir()

SQLITE_BUSY_TIMEOUT_MS = 30_000
#: Attempts of one transaction on a retryable error (serialization, deadlock, locked).
DEFAULT_ATTEMPTS = 6

_WRITE_OPTION = "shredcat_write"


# --- engines ----------------------------------------------------------------------------------


def normalize_url(url: str | URL) -> URL:
    """Parse a database URL; plain ``postgresql://``/``postgres://`` mean psycopg 3."""
    try:
        u = make_url(url) if isinstance(url, str) else url
    except ArgumentError as e:
        raise BadInputError(f"invalid catalog database URL: {e}") from None
    if u.drivername in ("postgresql", "postgres"):
        u = u.set(drivername="postgresql+psycopg")
    return u


def backend_name(bind: Engine | Connection) -> str:
    """``sqlite`` or ``postgresql``."""
    return bind.dialect.name


#: PostgreSQL connections an engine keeps when no ``concurrency`` is given (a library or CLI user).
DEFAULT_POOL_SIZE = 5


def make_engine(url: str | URL, *, concurrency: int | None = None, **kwargs: Any) -> Engine:
    """An engine configured for the catalog (see the module docstring).

    ``concurrency``: how many connections a server process keeps for its request threads. A
    PostgreSQL pool then keeps that many and no overflow (overflow connections are closed when
    returned, so a pool smaller than the load would open a new database session for most
    requests; beyond the pool a thread waits for a free connection instead). Connections are
    opened on first use, or ahead of it by :func:`fill_pool`.
    """
    u = normalize_url(url)
    if u.get_backend_name() == "sqlite":
        connect_args = {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
        if u.database in (None, "", ":memory:"):
            kwargs.setdefault("poolclass", StaticPool)
        engine = create_engine(u, connect_args=connect_args, **kwargs)
        _configure_sqlite(engine, in_memory=u.database in (None, "", ":memory:"))
        return engine
    if u.get_backend_name() == "postgresql":
        kwargs.setdefault("pool_size", concurrency or DEFAULT_POOL_SIZE)
        kwargs.setdefault("max_overflow", 0 if concurrency else 10)
        connect_args = kwargs.pop("connect_args", {})
        connect_args.setdefault("connect_timeout", 10)
        connect_args.setdefault("application_name", "shredcat")
        if "options" not in u.query:
            # The catalog's statements are index lookups and walks that stop after a page: JIT
            # compilation (60-220 ms once an IN list inflates the estimated cost) and starting
            # parallel workers (tens of ms under load) cost more than they ever save here. And
            # psycopg prepares a statement run five times, after which PostgreSQL may plan it
            # once for any parameters: a point list joined to the stats rows then became a hash
            # join over every file (8 -> 230 ms at 1M files); the literals' plan is the point.
            # An `options` in the URL (or connect_args) replaces all three.
            connect_args.setdefault(
                "options", "-c jit=off -c max_parallel_workers_per_gather=0 -c plan_cache_mode=force_custom_plan"
            )
        engine = create_engine(u, connect_args=connect_args, **kwargs)
        if not kwargs.get("pool_pre_ping"):
            event.listen(engine, "checkout", functools.partial(_discard_if_ended, engine.dialect))
        return engine
    raise ShredcatError(f"unsupported catalog database {u.get_backend_name()!r}: use sqlite or postgresql")


def fill_pool(engine: Engine, stop: threading.Event | None = None) -> int:
    """Open a PostgreSQL engine's pooled connections now rather than on first use; how many
    connections the pool has open afterwards (0 on SQLite, whose connections cost nothing to open).

    A server calls it once at start (in the background): with the pool filled lazily, a load
    that grows later (8 clients after a warm-up of 6, say) opens new database sessions in what
    should be its steady state, each costing PostgreSQL a backend fork and the request a
    connection set-up. A database that cannot be reached is logged, never raised: the server
    starts anyway, and its connections open on first use as before. ``stop`` ends the filling
    early (the server is shutting down)."""
    if backend_name(engine) != "postgresql":
        return 0
    pool = engine.pool
    size = pool.size() if hasattr(pool, "size") else 0
    held: list[Any] = []
    try:
        # Held until the end: a connection returned at once would be checked out again.
        while pool.checkedin() + pool.checkedout() < size and not (stop is not None and stop.is_set()):
            held.append(engine.raw_connection())
    except (SQLAlchemyError, engine.dialect.loaded_dbapi.Error) as e:  # the pool raises the driver's own
        log.warning("could not open the catalog's connections ahead of use (%s: %s): they open on first use", e.__class__.__name__, e)
    finally:
        for c in held:
            c.close()
    return pool.checkedin() + pool.checkedout()


def _discard_if_ended(dialect: Any, dbapi_conn: Any, _record: Any, _proxy: Any) -> None:
    """Pool checkout of a PostgreSQL connection: one the server has ended (restart, idle timeout,
    ``pg_terminate_backend``) is replaced before use, as ``pool_pre_ping`` would, but without its
    round trip (an empty query) on every checkout. An ended connection has the server's last
    message or the end of the stream waiting on its socket; a live idle one has nothing to read
    (this catalog never LISTENs), so only a connection with something waiting is pinged, and one
    whose ping fails is discarded (``DisconnectionError``: the pool checks out another, a fresh
    one if need be)."""
    if dbapi_conn.closed or dbapi_conn.broken:
        raise DisconnectionError("the connection is closed")
    poller = select.poll()  # not select.select: a descriptor may be above FD_SETSIZE
    poller.register(dbapi_conn.fileno(), select.POLLIN | select.POLLPRI)
    if not poller.poll(0):
        return
    try:
        dialect.do_ping(dbapi_conn)
    except Exception as e:
        raise DisconnectionError("the server ended the connection") from e


def _configure_sqlite(engine: Engine, *, in_memory: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # Let SQLAlchemy's "begin" event below emit BEGIN, instead of pysqlite's implicit one.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        cur.execute("PRAGMA foreign_keys = ON")
        if not in_memory:
            cur.execute("PRAGMA journal_mode = WAL")
            cur.execute("PRAGMA synchronous = NORMAL")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        write = conn.get_execution_options().get(_WRITE_OPTION, True)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")


# --- errors -----------------------------------------------------------------------------------

_RETRYABLE_SQLSTATES = {"40001", "40P01", "55P03"}  # serialization_failure, deadlock, lock_not_available
_UNAVAILABLE_SQLSTATE_CLASSES = ("08", "53", "57")  # connection, insufficient resources, operator


def _sqlstate(exc: DBAPIError) -> str | None:
    orig = exc.orig
    return getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)


def is_retryable(exc: BaseException) -> bool:
    """True for errors after which re-running the whole transaction may succeed."""
    if not isinstance(exc, DBAPIError):
        return False
    state = _sqlstate(exc)
    if state in _RETRYABLE_SQLSTATES:
        return True
    msg = str(exc.orig).lower()
    return "database is locked" in msg or "database table is locked" in msg or "database is busy" in msg


#: SQLite's messages for a database that is busy or cannot be reached right now (sqlite3 raises
#: them all as OperationalError, like its messages for SQL mistakes: the text tells them apart).
_SQLITE_UNAVAILABLE = (
    "database is locked",
    "database table is locked",
    "database is busy",
    "unable to open database",
    "disk i/o error",
    "database or disk is full",
)


def is_unavailable(exc: DBAPIError) -> bool:
    """True when the database is busy, locked or unreachable (worth retrying later: 503), False
    for a mistake in the statement or the schema (no such table, syntax error: a 500)."""
    if exc.connection_invalidated or isinstance(exc, InterfaceError) or is_retryable(exc):
        return True
    if isinstance(exc.orig, sqlite3.Error):
        msg = str(exc.orig).lower()
        return any(m in msg for m in _SQLITE_UNAVAILABLE)
    state = _sqlstate(exc) or ""
    if state:
        return state.startswith(_UNAVAILABLE_SQLSTATE_CLASSES)
    # psycopg raises OperationalError without a SQLSTATE when it cannot connect at all.
    return isinstance(exc, OperationalError)


def translate_error(exc: SQLAlchemyError) -> ShredcatError:
    """Map a SQLAlchemy/driver error onto the service's error tree: a conflict (409), an
    unavailable database (503), or an internal error (500; the API shows none of its text)."""
    if isinstance(exc, IntegrityError):
        return ConflictError(f"the catalog refused a conflicting change: {exc.orig}")
    if isinstance(exc, PoolTimeoutError):
        # Every pooled connection stayed busy for the pool's timeout (requests waiting on a lock):
        # the database is unavailable to this request now, not broken.
        return StorageUnavailableError(f"no catalog database connection was free in time: {exc}")
    if isinstance(exc, DBAPIError):
        if deadlines.gave_up(exc.orig):
            # Our own message (the database's label and the deadline, never its host): shown.
            return DatabaseUnresponsiveError(f"the catalog database is unresponsive: {exc.orig}")
        if is_unavailable(exc):
            # One line: libpq's own text adds an indented hint line ("Is the server running...").
            reason = " ".join(str(exc.orig).split())
            return StorageUnavailableError(f"the catalog database is unavailable: {reason}")
        return ShredcatError(f"catalog database error: {exc.orig}")
    return ShredcatError(f"catalog database error: {exc}")


@contextmanager
def translated() -> Iterator[None]:
    """Translate SQLAlchemy errors raised inside the block (no retry)."""
    try:
        yield
    except SQLAlchemyError as e:
        raise translate_error(e) from e


# --- transactions -----------------------------------------------------------------------------


@contextmanager
def transaction(engine: Engine, *, write: bool = True) -> Iterator[Connection]:
    """One transaction: committed when the block ends, rolled back on any exception.

    A read transaction sees ONE snapshot of the catalog on both backends: REPEATABLE READ on
    PostgreSQL (under READ COMMITTED each statement would see the commits that landed since the
    previous one, so a plan's counts and candidates could mix two table snapshots), and SQLite's
    WAL read transaction, which keeps the snapshot of its first read. Read-only REPEATABLE READ
    transactions never fail with serialization errors."""
    with engine.connect() as conn:
        conn.execution_options(**{_WRITE_OPTION: write})
        armed = None
        if not write and engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="REPEATABLE READ")
            armed = deadlines.arm_read(conn)  # the primary's reads (its writes are never armed)
        trans = conn.begin()
        try:
            yield conn
            trans.commit()  # inside: a COMMIT on a lost connection is handled as any statement
        except BaseException as e:
            if _connection_lost(e):
                # The transaction died with the connection: a ROLLBACK on it fails again (psycopg
                # left in pipeline mode: "cannot exit pipeline mode while busy"), and so would the
                # pool's reset, which logs that as an ERROR. Drop the connection instead.
                conn.invalidate()
            else:
                trans.rollback()
            raise
        finally:
            deadlines.disarm_read(armed)


def _connection_lost(e: BaseException) -> bool:
    """Whether ``e`` means the PostgreSQL connection is unusable but SQLAlchemy has not invalidated
    it: a connection-class SQLSTATE (08xxx, 57P0x: terminated by an administrator, a restart) or a
    client-side psycopg error (no SQLSTATE), such as a pipeline interrupted by a killed backend."""
    if not isinstance(e, (OperationalError, InterfaceError)) or e.connection_invalidated:
        return False
    if not type(e.orig).__module__.startswith("psycopg"):
        return False
    state = _sqlstate(e)
    return state is None or state.startswith(("08", "57P"))


def _not_unicode(e: UnicodeEncodeError) -> BadInputError:
    """Text the database cannot hold, from outside (a name looked up, a page token's path): the
    edges check the text they store (:mod:`service.values.text`); this catches what is only read
    or compared."""
    bad = e.object[e.start : e.end] if isinstance(e.object, str) else ""
    return BadInputError(f"text that is not valid Unicode ({shown(bad)!r}: bytes that are not UTF-8?)")


def _nul_text(e: BaseException) -> bool:
    """Whether ``e`` is PostgreSQL (or psycopg, before sending) refusing text holding U+0000:
    the edges refuse such text where it is stored (:data:`service.values.text.NUL_NOT_STORED`);
    this catches what is only looked up or compared (a name, a path, a page token's key)."""
    orig = getattr(e, "orig", None) or e
    if not type(orig).__module__.startswith("psycopg"):
        return False
    text = str(orig)
    # psycopg before sending: "PostgreSQL text fields cannot contain NUL (0x00) bytes"; the server
    # (a COPY): SQLSTATE 22021, 'invalid byte sequence for encoding "UTF8": 0x00'.
    return "cannot contain NUL" in text or (getattr(orig, "sqlstate", None) == "22021" and text.rstrip().endswith("0x00"))


def _nul_refused() -> BadInputError:
    return BadInputError(f"text refused: {NUL_NOT_STORED}")


def run_transaction(
    engine: Engine,
    fn: Callable[[Connection], T],
    *,
    write: bool = True,
    attempts: int = DEFAULT_ATTEMPTS,
    retry_integrity: bool = False,
) -> T:
    """Run ``fn(conn)`` in one transaction, retrying on retryable errors; errors come out translated.

    ``retry_integrity``: also retry once on a unique violation (for get-or-create races, where the
    second attempt finds the row the other writer created).
    """
    integrity_retried = False
    attempt = 0
    while True:
        attempt += 1
        try:
            with transaction(engine, write=write) as conn:
                return fn(conn)
        except IntegrityError as e:
            if retry_integrity and not integrity_retried:
                integrity_retried = True
                continue
            raise translate_error(e) from e
        except UnicodeEncodeError as e:
            raise _not_unicode(e) from None
        except SQLAlchemyError as e:
            orig = getattr(e, "orig", None)
            if isinstance(orig, UnicodeEncodeError):
                raise _not_unicode(orig) from None
            if _nul_text(e):
                raise _nul_refused() from None
            if attempt < attempts and is_retryable(e):
                delay = min(2.0, 0.02 * 2**attempt) * (0.5 + random.random())
                log.info("catalog transaction retry %d after %s", attempt, e.__class__.__name__)
                time.sleep(delay)
                continue
            raise _unmigrated(engine, e) or translate_error(e) from e
        except Exception as e:
            if _nul_text(e):  # psycopg's own, from a COPY (not wrapped by SQLAlchemy)
                raise _nul_refused() from None
            raise


#: A table or column the statement names is not in the database (PostgreSQL's SQLSTATEs,
#: SQLite's messages): a catalog never migrated, or migrated by older code.
_UNDEFINED_SQLSTATES = ("42P01", "42703")
_SQLITE_UNDEFINED = ("no such table", "no such column")


def _unmigrated(engine: Engine, exc: SQLAlchemyError) -> SchemaNotMigratedError | None:
    """The :func:`schema_revision_error` of ``engine``'s database when ``exc`` is a missing table or
    column there and its schema is not this code's: the library, the server and the CLI then name
    ``shredcat migrate`` alike, where the library said "no such table: ducklake_schema". Checked on
    such an error only, so a catalog pays no revision read per transaction. None otherwise (the
    revision read failing too: the original error stands)."""
    if not isinstance(exc, DBAPIError):
        return None
    if isinstance(exc.orig, sqlite3.Error):
        if not str(exc.orig).lower().startswith(_SQLITE_UNDEFINED):
            return None
    elif _sqlstate(exc) not in _UNDEFINED_SQLSTATES:
        return None
    try:
        return schema_revision_error(current_revision(engine))
    except ShredcatError:
        return None


# --- migrations -------------------------------------------------------------------------------


#: PostgreSQL: ANALYZE the file table once it holds this many rows more than twice what its
#: statistics last counted (never analyzed counts as 0).
ANALYZE_SLACK_ROWS = 1_000
#: What a commit's probe and a plan read, analyzed together: the stats tables grow with the files.
ANALYZED_TABLES = (
    "ducklake_data_file",
    "ducklake_file_variant_stats",
    "ducklake_file_column_stats",
    "ducklake_file_partition_value",
    "shredcat_variant_path",
    "shredcat_stats_zone",
    "shredcat_file_object",
)


def analyze_if_grown(engine: Engine) -> bool:
    """On PostgreSQL, ANALYZE ``ducklake_data_file`` and the tables that grow with it
    (:data:`ANALYZED_TABLES`) when it has more than doubled since its statistics were taken;
    whether it did. Called after each commit, outside its transaction.

    A fresh or fast-growing catalog otherwise waits for autovacuum (a minute or more), and until
    then PostgreSQL plans on guesses:

    * it cannot tell the unique ``(table_id, path)`` index from the ``(table_id, data_file_id)``
      one: the commit's per-path probe was planned on the latter and read every live file of the
      table once per new path, so each batch of 1,000 cost more than the last (0.18 -> 0.58 s
      over 5,000 files);
    * plans on never-analyzed stats tables were slow: 432 ms instead of 5 ms for one query at
      20,000 files, 10-19 ms instead of 2-4 ms at 100,000, and a removal 3x slower
      (docs/benchmarks-history.md, "Planner statistics after a bulk load").

    Rows ever inserted are read off the id sequence (the primary key's last entry), so the test
    costs one index probe; the stats tables hold a fixed number of rows per file, so the file
    table's growth stands for theirs. Best effort: a failure, or another session's ANALYZE holding
    a lock for more than a moment, is logged and skipped."""
    if engine.dialect.name != "postgresql":
        return False
    try:
        with engine.connect() as conn:
            conn.exec_driver_sql("SET LOCAL lock_timeout = '200ms'")
            if not analyze_grown(conn):
                return False
            conn.commit()
            return True
    except SQLAlchemyError as e:
        log.warning("could not refresh the planner statistics of the catalog's file tables: %s", e)
        return False


def analyze_grown(conn: Connection) -> bool:
    """:func:`analyze_if_grown`'s test and ANALYZE, in ``conn``'s transaction (PostgreSQL only).

    A bulk load calls it between its batches: ANALYZE in the load's own transaction samples the
    rows the load inserted (counted as live there), which no other session can see yet."""
    rows, counted = conn.exec_driver_sql(
        "SELECT (SELECT coalesce(max(data_file_id), 0) FROM ducklake_data_file), "
        "(SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'ducklake_data_file'::regclass)"
    ).one()
    if rows <= 2 * counted + ANALYZE_SLACK_ROWS:
        return False
    # A tenth of the default sample: row counts and rough histograms are what the plans of a
    # growing catalog were missing; autovacuum refines them later.
    conn.exec_driver_sql("SET LOCAL default_statistics_target = 10")
    conn.exec_driver_sql("ANALYZE " + ", ".join(ANALYZED_TABLES))
    return True


def alembic_config(connection: Connection | None = None, url: str | None = None) -> Any:
    """An Alembic Config for ``migrations/``; ``env.py`` uses ``connection`` (or ``url``) if given,
    else the settings' ``database_url``."""
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        cfg.set_main_option("sqlalchemy.url", str(url).replace("%", "%%"))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


#: The PostgreSQL advisory lock key ``shredcat migrate`` holds (any fixed number no other
#: application on the database uses: "shredcat" in ASCII).
MIGRATION_LOCK = 0x7368726564636174


def _with_alembic(bind: str | URL | Engine, action: Callable[[Any], None]) -> None:
    from alembic import command  # noqa: F401  (import check before opening connections)

    owned = not isinstance(bind, Engine)
    engine = bind if isinstance(bind, Engine) else make_engine(bind)
    try:
        with translated(), transaction(engine, write=True) as conn:
            if engine.dialect.name == "postgresql":
                # Replicas started together each run `shredcat migrate`: without one lock they
                # create the same tables at once and all but one fail (or wait on each other's
                # catalog locks). Held to the transaction's end, so the next one finds the head
                # already there. SQLite's write transaction already serializes them.
                conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATION_LOCK})")
            action(alembic_config(connection=conn))
    finally:
        if owned:
            engine.dispose()


def upgrade_to_head(bind: str | URL | Engine, revision: str = "head") -> None:
    """Create or upgrade the catalog schema (``shredcat migrate``)."""
    from alembic import command

    _with_alembic(bind, lambda cfg: command.upgrade(cfg, revision))


migrate = upgrade_to_head


def known_revisions() -> list[str]:
    """The revisions of ``migrations/``, oldest first (imports Alembic)."""
    from alembic.script import ScriptDirectory

    script = ScriptDirectory.from_config(alembic_config())
    return [s.revision for s in reversed(list(script.walk_revisions()))]


def downgrade(bind: str | URL | Engine, revision: str = "base") -> None:
    from alembic import command

    _with_alembic(bind, lambda cfg: command.downgrade(cfg, revision))


#: Alembic's table holding the schema revision (its default name; ``migrations/env.py`` keeps it).
VERSION_TABLE = "alembic_version"
#: The schema revision this code reads and writes: Alembic's head in ``migrations/`` (a test keeps
#: them equal), known without importing Alembic so that every command can check it cheaply.
SCHEMA_REVISION = "0013"


def current_revision(bind: str | URL | Engine) -> str | None:
    """The schema revision of the database (None when it was never migrated).

    A plain read of Alembic's version table, as Alembic's ``get_current_revision`` does, without
    importing Alembic: every CLI catalog command checks the revision, and importing Alembic would
    cost more start-up than the command's own work.
    """
    owned = not isinstance(bind, Engine)
    engine = bind if isinstance(bind, Engine) else make_engine(bind)
    try:
        with translated(), transaction(engine, write=False) as conn:
            if not conn.dialect.has_table(conn, VERSION_TABLE):
                return None
            heads = conn.exec_driver_sql(f"SELECT version_num FROM {VERSION_TABLE}").scalars().all()
    finally:
        if owned:
            engine.dispose()
    if len(heads) > 1:
        raise ShredcatError(f"the catalog schema has several revisions at once: {sorted(heads)}")
    return heads[0] if heads else None


def schema_revision_error(revision: str | None) -> SchemaNotMigratedError | None:
    """The error of a catalog at schema ``revision`` for this code (None: at :data:`SCHEMA_REVISION`):
    a database never migrated, or migrated by older code, would otherwise answer with the SQL
    errors of missing tables and columns."""
    if revision == SCHEMA_REVISION:
        return None
    if revision is not None and not (ascii_digits(revision) and revision < SCHEMA_REVISION):
        # Revisions are numbered in order: a higher or foreign one is a newer shredcat's schema.
        return SchemaNotMigratedError(
            f"the catalog database is at schema revision {revision}, which this shredcat (revision "
            f"{SCHEMA_REVISION}) does not know: a newer shredcat migrated it; run that version, or restore a backup"
        )
    at = "was never migrated" if revision is None else f"is at schema revision {revision}"
    return SchemaNotMigratedError(
        f"the catalog database {at}; this shredcat needs revision {SCHEMA_REVISION}: run `shredcat migrate`"
    )


def require_current_schema(engine: Engine) -> str:
    """The catalog's schema revision (one read), :data:`SCHEMA_REVISION`; else SchemaNotMigratedError."""
    revision = current_revision(engine)
    error = schema_revision_error(revision)
    if error is not None:
        raise error
    assert revision is not None
    return revision


def schema_drift(bind: str | URL | Engine) -> list[Any]:
    """Differences between the models and the migrated database (empty = no drift)."""
    from alembic.autogenerate import compare_metadata
    from alembic.runtime.migration import MigrationContext

    from service.catalog.models import schema

    owned = not isinstance(bind, Engine)
    engine = bind if isinstance(bind, Engine) else make_engine(bind)
    try:
        with translated(), transaction(engine, write=False) as conn:
            ctx = MigrationContext.configure(
                conn, opts={"compare_type": True, "compare_server_default": True}
            )
            return list(compare_metadata(ctx, schema()))
    finally:
        if owned:
            engine.dispose()
