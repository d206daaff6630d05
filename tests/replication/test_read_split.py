"""Reads on a real hot standby, writes on the primary (service.catalog.replicas)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from service.catalog import Catalog
from service.catalog.db import make_engine
from service.catalog.replicas import ReadRouter
from service.pruning.parse_sql import parse_sql
from tests.replication.conftest import ReplicatedCatalog, close_catalog, standby_catalog

warnings.filterwarnings("ignore", message=".*httpx2.*")

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("replication")]

PLAN_SQL = "variant_get(v, '$.id', 'bigint') < 150"



def _statements(server: object, database: str, like: str) -> int:
    """Calls of statements of ``database`` whose text holds ``like`` (pg_stat_statements)."""
    rows = server.execute(  # type: ignore[attr-defined]
        "SELECT coalesce(sum(s.calls), 0)::bigint FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
        f"WHERE d.datname = '{database}' AND s.query ILIKE '%{like}%' AND s.query NOT ILIKE '%pg_stat_statements%'",
        database,
    )
    return int(rows[0][0])  # type: ignore[call-overload]


def test_plans_and_listings_run_on_the_standby_and_writes_on_the_primary(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    pair = repl.pair
    pair.primary.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements", repl.database)
    cat = standby_catalog(repl, max_lag_s=60)
    try:
        result = cat.register("lake", "events", events[:3])
        pair.wait_replayed()
        pair.primary.execute("SELECT pg_stat_statements_reset()", repl.database)
        pair.standby.execute("SELECT pg_stat_statements_reset()", repl.database)
        for _ in range(3):
            plan = cat.plan("lake", "events", lambda schema: parse_sql(PLAN_SQL, schema=schema))
            assert [c.path for c in plan.candidates] == events[:2]
            assert plan.snapshot_id == result.snapshot_id
        assert [f.path for f in cat.list_files("lake", "events")] == sorted(events[:3])
        assert cat.get_table("lake", "events").live_file_count == 3
        assert cat.global_stats("lake", "events").snapshot_id == result.snapshot_id
        # The candidates' statement reads the stats tables: only the standby ran it.
        assert _statements(pair.primary, repl.database, "ducklake_data_file") == 0
        assert _statements(pair.standby, repl.database, "ducklake_data_file") > 0
        assert cat.reads.primary_reads == 0 and cat.reads.standbys[0].reads >= 6
        # A commit is the primary's (a standby refuses any write).
        later = cat.register("lake", "events", events[3:])
        assert _statements(pair.primary, repl.database, "ducklake_data_file") > 0
        rows = pair.primary.execute("SELECT max(snapshot_id) FROM ducklake_snapshot", repl.database)
        assert rows == [(later.snapshot_id,)]
    finally:
        close_catalog(cat)


def test_the_router_reports_lag_and_state(repl: ReplicatedCatalog) -> None:
    cat = standby_catalog(repl)
    try:
        [s] = cat.reads.status()
        assert s.state == "ok" and s.lag_s is not None and s.lag_s <= 5
        assert s.name == f"127.0.0.1:{repl.pair.standby.port}/{repl.database}"
    finally:
        close_catalog(cat)


def test_the_whole_read_api_runs_on_a_standby_alone(
    repl: ReplicatedCatalog, events: list[str], tmp_path: Path
) -> None:
    """Nothing on the read path writes: a server whose only database is the standby (which refuses
    any write) answers every read route and dashboard page."""
    from fastapi.testclient import TestClient

    from service.api import create_app
    from tests.api.conftest import ADMIN, READER, make_settings

    with Catalog(repl.primary_url) as cat:
        cat.register("lake", "events", events[:3])
        cat.register("lake", "events", events[3:])
        cat.create_table("lake", "empty", ["v"])
    repl.pair.wait_replayed()
    settings = make_settings(repl.standby_url, [str(Path(events[0]).parent.parent)])
    T = "/v1/namespaces/lake/tables/events"
    html = {**ADMIN, "Accept": "text/html"}
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        gets = [
            ("/health", {}),
            ("/metrics", READER),
            ("/v1/namespaces", READER),
            ("/v1/namespaces/lake", READER),
            ("/v1/namespaces/lake/tables", READER),
            (T, READER),
            (T + "/files?page-size=2", READER),
            (T + f"/files/stats?path={events[0]}", READER),
            (T + "/stats", READER),
            (T + "/snapshots", READER),
            ("/admin", html),
            ("/admin/tables/lake/events", html),
            ("/admin/tables/lake/events/coverage?column=v&path=%22name%22&type=varchar", html),
            (f"/admin/tables/lake/events/file?path={events[0]}", html),
            ("/admin/tables/lake/events/path?column=v&path=%22id%22", html),
            ("/admin/tables/lake/events/prune", html),
            ("/admin/tables/lake/empty", html),
        ]
        for url, headers in gets:
            r = c.get(url, headers=headers)
            assert r.status_code == 200, (url, r.status_code, r.text[:500])
        page = c.get(T + "/files?page-size=2", headers=READER).json()
        r = c.get(T + "/files", params={"page-size": 2, "page-token": page["next-page-token"]}, headers=READER)
        assert r.status_code == 200 and len(r.json()["files"]) == 2
        plan = c.post(T + "/plan", json={"sql": PLAN_SQL, "page-size": 1}, headers=READER)
        assert plan.status_code == 200, plan.text
        more = c.post(T + "/plan", json={"sql": PLAN_SQL, "page-token": plan.json()["next-page-token"]}, headers=READER)
        assert more.status_code == 200, more.text
        assert c.post("/admin/tables/lake/events/prune", data={"sql": PLAN_SQL}, headers=html).status_code == 200
        assert c.post(T + "/verify", json={"all": True}, headers=ADMIN).status_code == 200
        # ...and a write is refused there (so the routes above would have failed had they written).
        r = c.post("/v1/namespaces", json={"namespace": ["other"]}, headers=ADMIN)
        assert r.status_code >= 500, r.text


def test_reads_take_the_standbys_in_turn(repl: ReplicatedCatalog, events: list[str]) -> None:
    """Two read databases (the one standby under two host names: two engines, two pools) share
    the reads evenly."""
    primary = make_engine(repl.primary_url)
    other_name = repl.standby_url.replace("@127.0.0.1:", "@localhost:")
    cat = Catalog(primary, reads=ReadRouter(primary, [make_engine(repl.standby_url), make_engine(other_name)]))
    try:
        cat.register("lake", "events", events[:1])
        repl.pair.wait_replayed()
        for _ in range(6):
            assert cat.get_table("lake", "events", min_snapshot_id=0).live_file_count == 1
        a, b = cat.reads.standbys
        assert a.name != b.name and (a.reads, b.reads) == (3, 3)
        assert cat.reads.primary_reads == 0
    finally:
        close_catalog(cat)
