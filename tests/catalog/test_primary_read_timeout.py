"""The primary's read transactions carry their own ``statement_timeout`` (``SET LOCAL``, sent with
their ``BEGIN``): a primary that is slow but alive stops a read past the read timeout itself,
rather than run it on for a client that gave up on it (:mod:`service.catalog.deadlines`). Real
PostgreSQL (the shared server): a read made slow on purpose with ``pg_sleep``."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from sqlalchemy.engine import Connection, Engine

from service.catalog.db import make_engine, run_transaction
from service.catalog.replicas import ReadRouter
from service.errors import DatabaseUnresponsiveError, StorageUnavailableError
from tests.conftest import PG_ADMIN_URL, require_postgres
from tests.support.guard import returns
from tests.support.pg import psycopg_dsn

pytestmark = pytest.mark.postgres

#: The read timeout here (the client's own deadline is GRACE_S, 1 s, later).
TIMEOUT_S = 0.5
#: How long the slow read would sleep if nothing stopped it (far past any bound here).
SLEEP_S = 60


@pytest.fixture
def app_name() -> str:
    """The ``application_name`` of the test's connections: how pg_stat_activity tells them apart."""
    return f"shredcat_test_{uuid.uuid4().hex[:12]}"


@pytest.fixture
def make_router(app_name: str) -> Iterator[Callable[[float], ReadRouter]]:
    """``make_router(read_timeout_s)``: a router without standbys on the shared server, its
    primary engine's reads armed with that timeout, one pooled connection (so a kept connection
    is the next read's); the test's connections are ended at teardown, whatever they still run."""
    require_postgres()
    engines: list[Engine] = []

    def make(read_timeout_s: float) -> ReadRouter:
        # connect_args: the catalog's engines name their sessions there, over the URL's name.
        args = {"application_name": app_name}
        engines.append(make_engine(PG_ADMIN_URL, pool_size=1, max_overflow=0, connect_args=args))
        return ReadRouter(engines[-1], read_timeout_s=read_timeout_s)

    try:
        yield make
    finally:
        for engine in engines:
            engine.dispose()
        _admin(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{app_name}'")


def _admin(sql: str) -> Any:
    import psycopg

    with psycopg.connect(psycopg_dsn(PG_ADMIN_URL), autocommit=True) as c:
        return c.execute(sql).fetchall()  # type: ignore[arg-type]


def _sleeping(app_name: str) -> int:
    """How many of the test's connections are running their ``pg_sleep`` now."""
    rows = _admin(
        "SELECT count(*) FROM pg_stat_activity "
        f"WHERE application_name = '{app_name}' AND state = 'active' AND query LIKE '%pg_sleep%'"
    )
    return int(rows[0][0])


def _until(cond: Callable[[], object], what: str, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)


def _pid(conn: Connection) -> int:
    return int(conn.exec_driver_sql("SELECT pg_backend_pid()").scalar_one())


def test_a_slow_read_on_the_primary_is_cancelled_there_and_its_connection_kept(
    make_router: Callable[[float], ReadRouter], app_name: str
) -> None:
    """503 database_unresponsive as before, but the primary no longer runs the read on: nothing of
    the test's is active in pg_stat_activity after the error (before: its ``pg_sleep`` ran on for
    the full minute), and the next read answers on the same connection (rolled back, not closed)."""
    router = make_router(TIMEOUT_S)
    pids: list[int] = []

    def slow(conn: Connection) -> object:
        pids.append(_pid(conn))
        return conn.exec_driver_sql(f"SELECT pg_sleep({SLEEP_S})").scalar()

    with pytest.raises(DatabaseUnresponsiveError) as e:
        returns(lambda: router.read(slow, primary=True))
    assert e.value.code == "database_unresponsive" and e.value.http_status == 503
    _until(lambda: _sleeping(app_name) == 0, "stopped the abandoned read on the server")
    # The server's cancel, at the read timeout (the client's deadline, GRACE_S later, never came).
    assert f"the primary database did not answer within {TIMEOUT_S:g} s: it cancelled the read" in str(e.value)
    assert returns(lambda: router.read(_pid, primary=True)) == pids[0]


def _settings(conn: Connection) -> str:
    return str(conn.exec_driver_sql("SHOW statement_timeout").scalar_one())


def test_only_the_primarys_read_transactions_get_the_statement_timeout(
    make_router: Callable[[float], ReadRouter],
) -> None:
    """Set local to each read transaction (also when its first statement runs in a psycopg
    pipeline, as ``executemany`` does): writes and work outside a transaction (``ANALYZE``, a
    migration) keep none, on the same pooled connection."""
    router = make_router(TIMEOUT_S)
    engine: Engine = router.primary
    assert router.read(_settings, primary=True) == "500ms"
    assert run_transaction(engine, _settings) == "0"
    with engine.connect() as conn:
        assert _settings(conn.execution_options(isolation_level="AUTOCOMMIT")) == "0"

    def piped(conn: Connection) -> str:
        dbapi: Any = conn.connection.dbapi_connection
        with dbapi.pipeline(), dbapi.cursor() as cur:
            cur.execute("SHOW statement_timeout")
            return str(cur.fetchone()[0])

    assert router.read(piped, primary=True) == "500ms"
    assert router.read(_settings, primary=True) == "500ms"


def test_a_read_an_administrator_cancels_before_the_timeout_is_not_called_unresponsive(
    make_router: Callable[[float], ReadRouter], app_name: str
) -> None:
    """Only the statement timeout's cancel is the database not answering in time; another
    (``pg_cancel_backend``) stays the unavailable database it was."""
    router = make_router(30.0)
    seen: list[str] = []

    def slow(conn: Connection) -> object:
        seen.append(_settings(conn))
        return conn.exec_driver_sql(f"SELECT pg_sleep({SLEEP_S})").scalar()

    def cancel() -> None:
        _until(lambda: _sleeping(app_name) == 1, "slept")
        _admin(f"SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = '{app_name}'")

    canceller = threading.Thread(target=cancel, daemon=True)
    canceller.start()
    with pytest.raises(StorageUnavailableError) as e:
        returns(lambda: router.read(slow, primary=True))
    canceller.join()
    assert not isinstance(e.value, DatabaseUnresponsiveError)
    assert seen == ["30s"]
