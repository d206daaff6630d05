"""A hot standby that stops answering with its connections up (its processes stopped: SIGSTOP, as a
paused VM or a black hole after the handshake): a read under way on it, the monitor's measure and an
HTTP plan each give up on it at the read timeout, it is marked down, the read is answered by the
primary, and it is back once it answers again. The shared standby is always continued
(:meth:`tests.support.standby.Server.frozen`)."""

from __future__ import annotations

import time
import warnings
from contextlib import ExitStack

import pytest
from sqlalchemy.engine import Connection

from service.catalog import Catalog
from service.catalog import repository as repo
from tests.replication.conftest import ALL, ReplicatedCatalog, close_catalog, plan_all, standby_catalog, until
from tests.support.guard import returns

warnings.filterwarnings("ignore", message=".*httpx2.*")

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("replication")]

#: The standbys' read timeout here (the client gives up GRACE_S = 1 s later on a frozen one).
TIMEOUT_S = 0.5




def test_a_read_under_way_on_a_standby_that_freezes_is_answered_by_the_primary(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    standby = repl.pair.standby
    cat = standby_catalog(repl, read_timeout_s=TIMEOUT_S, check_interval_s=60)  # measured once: only the read meets the freeze
    freeze = ExitStack()
    try:
        cat.register("lake", "events", events)
        repl.pair.wait_replayed()
        assert plan_all(cat) == events and cat.reads.standbys[0].reads == 1
        answered_on: list[int | None] = []

        def read(conn: Connection) -> int:
            answered_on.append(conn.engine.url.port)
            if conn.engine.url.port == standby.port:
                freeze.enter_context(standby.frozen())  # its transaction is open on the standby
            return repo.table_infos(conn, "lake", "events")[0].live_file_count

        assert returns(lambda: cat.reads.read(read)) == 5
        assert answered_on == [standby.port, repl.pair.primary.port]
        assert cat.reads.status(measure=False)[0].state == "down"
        # While it stays frozen, later reads skip it (no wait).
        before = cat.reads.primary_reads
        assert returns(lambda: plan_all(cat)) == events
        assert cat.reads.primary_reads == before + 1
        freeze.close()
        until(lambda: (cat.reads.check(force=True), cat.reads.standbys[0].state)[1] == "ok", "measured ok again")
        standby_reads = cat.reads.standbys[0].reads
        assert plan_all(cat) == events and cat.reads.standbys[0].reads == standby_reads + 1
    finally:
        freeze.close()
        close_catalog(cat)


def test_the_monitor_marks_a_frozen_standby_down_and_measures_it_back_once_it_answers(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    standby = repl.pair.standby
    cat = standby_catalog(repl, read_timeout_s=TIMEOUT_S, check_interval_s=0.2)
    cat.reads.start_monitor()
    try:
        cat.register("lake", "events", events[:2])
        repl.pair.wait_replayed()
        until(lambda: cat.reads.status(measure=False)[0].state == "ok", "measured ok")
        with standby.frozen():
            # The monitor's measure on the frozen standby times out: down, not the last "ok".
            until(lambda: cat.reads.status(measure=False)[0].state == "down", "marked down by the monitor")
            assert returns(lambda: plan_all(cat)) == events[:2]
            thawed_after = time.monotonic()
        assert all(t.is_alive() for t in cat.reads._monitors)
        until(
            lambda: cat.reads.standbys[0].state == "ok" and cat.reads.standbys[0].checked_at > thawed_after,
            "measured ok again after the standby continued",
        )
        until(lambda: plan_all(cat) == events[:2] and cat.reads.standbys[0].reads > 0, "read from the standby again")
    finally:
        close_catalog(cat)


def test_an_http_plan_on_a_frozen_standby_is_answered_and_metrics_show_it_down(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    from fastapi.testclient import TestClient

    from service.api import create_app
    from tests.api.conftest import READER, make_settings

    with Catalog(repl.primary_url) as c:
        c.register("lake", "events", events)
    repl.pair.wait_replayed()
    # Measured at start, then every 30 s: the plan meets the freeze, not the monitor.
    settings = make_settings(
        repl.primary_url, [], read_database_urls=[repl.standby_url], read_check_interval_s=60, read_timeout_s=TIMEOUT_S,
        db_pool_size=2,
    )
    with TestClient(create_app(settings)) as http:
        def standby_state() -> str:
            (standby,) = http.get("/health").json()["standbys"]
            return str(standby["state"])

        until(lambda: standby_state() == "ok", "measured ok")
        ctx = http.app.state.ctx  # type: ignore[attr-defined]
        until(lambda: ctx.pool_filler is None or not ctx.pool_filler.is_alive(), "pools filled")
        # Standby sessions time their statements out themselves too (a slow standby, not frozen).
        reads = ctx.catalog.reads
        assert reads.read(lambda conn: conn.exec_driver_sql("SHOW statement_timeout").scalar()) == "500ms"
        assert reads.standbys[0].reads == 1
        # The plan takes a connection already open (opening one would fail while connecting, before the read is sent).
        assert reads.standbys[0].engine.pool.checkedin() == 2
        with repl.pair.standby.frozen():
            r = returns(lambda: http.post("/v1/namespaces/lake/tables/events/plan", json={"sql": ALL}, headers=READER))
            assert r.status_code == 200, r.text
            assert len(r.json()["files"]) == 5
            assert standby_state() == "down"
            metrics = http.get("/metrics", headers=READER).text
            assert 'state="down"} 1.0' in metrics
            assert 'shredcat_catalog_reads_total{database="primary"} 1.0' in metrics
    repl.pair.wait_replayed()
