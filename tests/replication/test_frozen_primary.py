"""A primary that stops answering with its connections up (its processes stopped with SIGSTOP, as a
paused VM or a black hole after the handshake would): a read under way on it, the monitor, and HTTP
plans with and without a fit standby each give up on it at the read timeout with
:class:`~service.errors.DatabaseUnresponsiveError` (503) or are answered by a standby that has what
they need; a write under way keeps waiting and completes once it answers (writes have no client
deadline: :mod:`service.catalog.deadlines`). The primary frozen is the test pair's own (never the
machine's cluster), always continued (:meth:`tests.support.standby.Server.frozen`)."""

from __future__ import annotations

import threading
import time
import warnings
from contextlib import ExitStack
from typing import Any

import pytest
from sqlalchemy.engine import Connection

from service.catalog import Catalog
from service.catalog import repository as repo
from service.catalog.db import fill_pool, run_transaction
from service.catalog.deadlines import GRACE_S
from service.errors import DatabaseUnresponsiveError
from tests.replication.conftest import ALL, ReplicatedCatalog, close_catalog, plan_all, standby_catalog, until
from tests.support.guard import returns

warnings.filterwarnings("ignore", message=".*httpx2.*")

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("replication")]

#: The read timeout here: a read on the frozen primary gives up GRACE_S (1 s) after it.
TIMEOUT_S = 0.5
DEADLINE_S = TIMEOUT_S + GRACE_S
UNRESPONSIVE = rf"the primary database did not answer within {DEADLINE_S:g} s"
PLAN = "/v1/namespaces/lake/tables/events/plan"




def _live_files(conn: Connection) -> int:
    return repo.table_infos(conn, "lake", "events")[0].live_file_count


def test_a_read_under_way_on_the_primary_that_freezes_fails_as_unresponsive(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    primary = repl.pair.primary
    cat = standby_catalog(repl, read_timeout_s=TIMEOUT_S, check_interval_s=60)
    freeze = ExitStack()
    try:
        cat.register("lake", "events", events)

        def read(conn: Connection) -> int:
            freeze.enter_context(primary.frozen())  # its transaction is open on the primary
            return _live_files(conn)

        with pytest.raises(DatabaseUnresponsiveError, match=UNRESPONSIVE):
            returns(lambda: cat.reads.read(read, primary=True))
        freeze.close()
        # The connection it closed was dropped, not pooled: the next read on the primary answers.
        assert returns(lambda: cat.reads.read(_live_files, primary=True)) == 5
    finally:
        freeze.close()
        close_catalog(cat)


def test_the_monitor_keeps_measuring_the_standby_while_the_primary_is_frozen(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    """The standby that had replayed the primary's last reading answers until that reading is
    ``max_lag_s`` old (nothing it lacks can be older), then is lagging (reads go to the primary:
    the other tests show what they meet there); its monitor thread is never held by the primary's."""
    # A monitored standby is fit only while its last measure is younger than the check interval:
    # 1 s (measured every 0.5 s) leaves a loaded machine time between a measure and the plan.
    cat = standby_catalog(repl, read_timeout_s=TIMEOUT_S, check_interval_s=1.0, max_lag_s=3.0)
    cat.reads.start_monitor()
    standby = cat.reads.standbys[0]
    try:
        cat.register("lake", "events", events[:2])
        repl.pair.wait_replayed()
        until(lambda: standby.state == "ok" and standby.lag_s is not None and standby.lag_s < 1, "measured ok")
        with repl.pair.primary.frozen():
            frozen_at = time.monotonic()
            until(lambda: standby.checked_at > frozen_at and standby.state == "ok", "measured during the freeze")
            assert returns(lambda: plan_all(cat)) == events[:2] and standby.reads == 1
            until(lambda: standby.state == "lagging", "past max_lag_s since the primary last answered")
            assert standby.lag_s is not None and standby.lag_s > 3.0
            primary_seen = cat.reads._primary_seen
            assert primary_seen is not None and primary_seen[1] < frozen_at  # not read since
            thawed_at = time.monotonic()
        assert all(t.is_alive() for t in cat.reads._monitors)
        until(lambda: standby.state == "ok" and standby.checked_at > thawed_at, "measured ok again")
        assert returns(lambda: plan_all(cat)) == events[:2] and standby.reads == 2
    finally:
        close_catalog(cat)


def test_a_read_naming_a_snapshot_is_answered_by_a_standby_that_holds_it_else_fails_as_unresponsive(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    """The primary is asked about a snapshot id only when no standby holds it (a made-up id would
    otherwise hold the read for the whole wait): frozen, that question fails at the read timeout."""
    pair = repl.pair
    cat = standby_catalog(repl, read_timeout_s=TIMEOUT_S, check_interval_s=60, max_lag_s=60, wait_s=30)
    try:
        held = cat.register("lake", "events", events[:2]).snapshot_id
        pair.wait_replayed()
        cat.reads.check(force=True)
        pair.standby.execute("SELECT pg_wal_replay_pause()")
        try:
            newer = cat.register("lake", "events", events[2:]).snapshot_id
            with pair.primary.frozen():
                assert returns(lambda: plan_all(cat, min_snapshot_id=held)) == events[:2]
                assert cat.reads.standbys[0].reads == 1
                with pytest.raises(DatabaseUnresponsiveError, match=UNRESPONSIVE):
                    returns(lambda: plan_all(cat, min_snapshot_id=newer))
        finally:
            pair.standby.execute("SELECT pg_wal_replay_resume()")
        pair.wait_replayed()
        assert returns(lambda: plan_all(cat, min_snapshot_id=newer)) == events
    finally:
        close_catalog(cat)


def test_a_write_under_way_when_the_primary_freezes_completes_once_it_answers(repl: ReplicatedCatalog) -> None:
    """Writes have no client deadline (an outcome unknown to the caller is worse than a wait): a
    read begun after the write gives up at the read timeout, the write is still waiting, and it
    commits once the primary continues."""
    primary = repl.pair.primary
    primary.execute("CREATE TABLE frozen_write (x int)", repl.database)
    cat = standby_catalog(repl, read_timeout_s=TIMEOUT_S, check_interval_s=60)
    freeze = ExitStack()
    in_write = threading.Event()
    outcome: list[object] = []

    def write(conn: Connection) -> None:
        freeze.enter_context(primary.frozen())
        in_write.set()
        conn.exec_driver_sql("INSERT INTO frozen_write VALUES (1)")

    def run() -> None:
        try:
            outcome.append(run_transaction(cat.engine, write))
        except BaseException as e:
            outcome.append(e)

    writer = threading.Thread(target=run, daemon=True)
    try:
        fill_pool(cat.engine)  # the read below takes an open connection (a new one would fail while connecting, before the read is sent)
        writer.start()
        assert in_write.wait(30)
        with pytest.raises(DatabaseUnresponsiveError):
            returns(lambda: cat.reads.read(lambda conn: conn.exec_driver_sql("SELECT 1").scalar(), primary=True))
        assert writer.is_alive() and outcome == []
        freeze.close()
        writer.join(30)
        assert outcome == [None]
        assert primary.execute("SELECT count(*) FROM frozen_write", repl.database) == [(1,)]
    finally:
        freeze.close()
        close_catalog(cat)


def test_only_read_transactions_on_the_primary_are_armed(repl: ReplicatedCatalog) -> None:
    """One pooled connection, used in turn by a read, a write, and outside any transaction (as
    ``analyze_if_grown`` after a commit): armed in the read only, and returned to the pool unarmed."""
    cat = standby_catalog(repl, read_timeout_s=TIMEOUT_S)
    seen: list[tuple[int, object]] = []

    def deadline(conn: Connection) -> None:
        dbapi = conn.connection.dbapi_connection
        seen.append((id(dbapi), getattr(dbapi, "deadline_s", "no deadline attribute")))

    try:
        cat.reads.read(deadline, primary=True)
        run_transaction(cat.engine, deadline)
        with cat.engine.connect() as conn:
            deadline(conn)
        cat.reads.read(deadline, primary=True)
    finally:
        close_catalog(cat)
    assert len({conn for conn, _ in seen}) == 1
    assert [s for _, s in seen] == [DEADLINE_S, None, None, DEADLINE_S]


def _http(repl: ReplicatedCatalog, **settings: Any) -> Any:
    from fastapi.testclient import TestClient

    from service.api import create_app
    from tests.api.conftest import make_settings

    return TestClient(create_app(make_settings(repl.primary_url, [], read_timeout_s=TIMEOUT_S, db_pool_size=2, **settings)))


def _pools_filled(http: Any) -> None:
    """Until the server has opened its pooled connections (a plan then takes one already open:
    opening one to a frozen server would fail while connecting, before the plan's read is sent)."""
    ctx = http.app.state.ctx
    until(lambda: ctx.pool_filler is None or not ctx.pool_filler.is_alive(), "pools filled")
    assert ctx.catalog.engine.pool.checkedin() == 2


def test_an_http_plan_with_a_fit_standby_is_answered_while_the_primary_is_frozen(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    from tests.api.conftest import READER

    with Catalog(repl.primary_url) as c:
        c.register("lake", "events", events)
    repl.pair.wait_replayed()
    # Fit only while its last measure is younger than the check interval: 3 s (measured every 1.5 s)
    # so that the plan, sent right after a measure, still finds it fit on a loaded machine (0.2 s
    # did not: CI's plan went to the frozen primary).
    with _http(repl, read_database_urls=[repl.standby_url], read_check_interval_s=3.0, read_max_lag_s=60) as http:
        _pools_filled(http)
        standby = http.app.state.ctx.catalog.reads.standbys[0]
        until(lambda: standby.state == "ok", "measured ok")
        with repl.pair.primary.frozen():
            frozen_at = time.monotonic()
            # Measured again without the primary (a stale measure would send the plan to it).
            until(lambda: standby.checked_at > frozen_at + 0.2 and standby.state == "ok", "measured during the freeze")
            r = returns(lambda: http.post(PLAN, json={"sql": ALL}, headers=READER))
            assert r.status_code == 200, r.text
            assert len(r.json()["files"]) == 5 and standby.reads == 1
            assert returns(lambda: http.get("/health")).status_code == 503  # readiness is the primary's


def test_an_http_plan_without_a_fit_standby_is_503_naming_the_primary_unresponsive(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    from tests.api.conftest import READER

    with Catalog(repl.primary_url) as c:
        c.register("lake", "events", events)
    with _http(repl) as http:  # no standby at all
        _pools_filled(http)
        with repl.pair.primary.frozen():
            _assert_unresponsive(returns(lambda: http.post(PLAN, json={"sql": ALL}, headers=READER)))
        r = http.post(PLAN, json={"sql": ALL}, headers=READER)
        assert r.status_code == 200, r.text


def test_an_http_plan_needing_a_new_connection_to_the_frozen_primary_is_503_naming_it_unresponsive(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    """The server accepts the TCP connection but never answers its start-up: given up on at the
    read deadline as a read on an open connection is (not after the 10 s connect timeout, as if
    it were unreachable)."""
    from tests.api.conftest import READER

    with Catalog(repl.primary_url) as c:
        c.register("lake", "events", events)
    with _http(repl) as http:
        _pools_filled(http)
        http.app.state.ctx.catalog.engine.dispose()  # no open connection left: the plan opens one
        with repl.pair.primary.frozen():
            _assert_unresponsive(returns(lambda: http.post(PLAN, json={"sql": ALL}, headers=READER)))
        r = http.post(PLAN, json={"sql": ALL}, headers=READER)
        assert r.status_code == 200, r.text


def _assert_unresponsive(r: Any) -> None:
    assert r.status_code == 503, r.text
    assert r.headers["Retry-After"] == "1"
    error = r.json()["error"]
    assert error["type"] == "database_unresponsive"
    assert f"the primary database did not answer within {DEADLINE_S:g} s" in error["message"]
