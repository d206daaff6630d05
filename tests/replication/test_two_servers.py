"""Two ``shredcat serve`` processes (two workers each) on one catalog with a hot standby, as behind
a load balancer: sessions, idempotency keys and caches behave as with one server, and a client
alternating between them never sees its snapshots go back (the client's ``min-snapshot-id``)."""

from __future__ import annotations

import itertools
import json
import os
import re
import warnings
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from service.api.auth import hash_token
from tests.api.conftest import TOKENS
from tests.replication.conftest import ReplicatedCatalog, replicated_catalog
from tests.support.events import write_event_files
from tests.support.server import Server, running_servers
from tests.support.standby import Pair

warnings.filterwarnings("ignore", message=".*httpx2.*")

pytestmark = [pytest.mark.postgres, pytest.mark.slow, pytest.mark.xdist_group("replication")]

ALL = "variant_get(v, '$.id', 'bigint') >= 0"
T = "/v1/namespaces/lake/tables/events"
T2 = "/v1/namespaces/lake/tables/events2"
ADMIN = {"Authorization": f"Bearer {TOKENS['admin']}"}
READER = {"Authorization": f"Bearer {TOKENS['reader']}"}


class Alternating(httpx.BaseTransport):
    """A client's requests sent to the servers in turn, as a round-robin load balancer would."""

    def __init__(self, servers: list[Server]) -> None:
        self._next = itertools.cycle([httpx.URL(s.base_url).port for s in servers])
        self._inner = httpx.HTTPTransport()
        self.ports: list[int] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        port = next(self._next)
        self.ports.append(port)
        request.url = request.url.copy_with(port=port)
        return self._inner.handle_request(request)

    def close(self) -> None:
        self._inner.close()


@pytest.fixture(scope="module")
def mrepl(pg_pair: Pair) -> Iterator[ReplicatedCatalog]:
    rc = replicated_catalog(pg_pair)
    try:
        yield rc
    finally:
        pg_pair.primary.execute(f'DROP DATABASE IF EXISTS "{rc.database}" WITH (FORCE)')


@pytest.fixture(scope="module")
def servers(mrepl: ReplicatedCatalog, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Server, list[str]]]:
    """Server A reads from the standby, server B from the primary (a standby list can differ per
    server, or a server's standby be skipped while another's is not). Each test uses a table of
    its own."""
    tmp_path = tmp_path_factory.mktemp("two-servers")
    events = write_event_files(tmp_path / "warehouse" / "events")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")},
        "SHREDCAT_DATABASE_URL": mrepl.primary_url,
        "SHREDCAT_TOKENS": json.dumps({hash_token(t): role for role, t in TOKENS.items()}),
        "SHREDCAT_SESSION_SECRETS": json.dumps(["k" * 40]),
        "SHREDCAT_WAREHOUSE_ROOTS": json.dumps([str(tmp_path / "warehouse")]),
        "SHREDCAT_DB_POOL_SIZE": "4",
        "SHREDCAT_READ_MAX_LAG_S": "60",
        "SHREDCAT_READ_WAIT_S": "0.3",
        "SHREDCAT_LOG_FORMAT": "text",
    }
    a_env = {**env, "SHREDCAT_READ_DATABASE_URLS": json.dumps([mrepl.standby_url])}
    with running_servers((a_env, tmp_path / "a.log"), (env, tmp_path / "b.log"), workers=2) as (a, b):
        yield a, b, events


def test_sessions_idempotency_and_caches_span_servers(
    servers: tuple[Server, Server, list[str]], mrepl: ReplicatedCatalog
) -> None:
    a, b, events = servers
    with httpx.Client(base_url=a.base_url) as ha, httpx.Client(base_url=b.base_url) as hb:
        # A dashboard session signed in on A is valid on every worker of B.
        form = ha.get("/admin/login")
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', form.text).group(1)  # type: ignore[union-attr]
        signed_in = ha.post("/admin/login", data={"token": TOKENS["admin"], "csrf_token": csrf, "next": "/admin"})
        assert signed_in.status_code == 303, signed_in.text
        hb.cookies.set("shredcat_session", ha.cookies["shredcat_session"])
        for _ in range(4):
            r = hb.get("/admin", headers={"Accept": "text/html"})
            assert r.status_code == 200 and "Overview" in r.text
        # A commit retried on the other server with its Idempotency-Key is answered, not repeated.
        body = {"paths": events[:2], "create-if-missing": {}}
        key = {"Idempotency-Key": "two-servers-1"}
        first = ha.post(T + "/commits", json=body, headers={**ADMIN, **key}).json()
        again = hb.post(T + "/commits", json=body, headers={**ADMIN, **key}).json()
        assert again["replayed"] is True and again["snapshot-id"] == first["snapshot-id"]
        other = hb.post(T + "/commits", json={"paths": events[2:3]}, headers={**ADMIN, **key})
        assert other.status_code == 409 and "two-servers-1" in other.text  # the key with another body
        # Caches: B's workers plan (caching the table's schema), A commits, B's next plans see it.
        for _ in range(4):
            assert len(hb.post(T + "/plan", json={"sql": ALL}, headers=READER).json()["files"]) == 2
        later = ha.post(T + "/commits", json={"paths": events[2:]}, headers=ADMIN).json()
        for _ in range(4):
            r = hb.post(T + "/plan", json={"sql": ALL}, headers=READER).json()
            assert len(r["files"]) == 5 and r["snapshot-id"] == later["snapshot-id"]
        # ...and A's, reading from the standby, once it names the snapshot.
        for _ in range(4):
            r = ha.post(T + "/plan", json={"sql": ALL, "min-snapshot-id": later["snapshot-id"]}, headers=READER).json()
            assert len(r["files"]) == 5


def test_a_client_alternating_between_servers_sees_monotonic_snapshots(
    servers: tuple[Server, Server, list[str]], mrepl: ReplicatedCatalog
) -> None:
    from service.client import ShredcatClient

    a, b, events = servers
    pair = mrepl.pair
    with httpx.Client(base_url=a.base_url) as ha:
        old = ha.post(T2 + "/commits", json={"paths": events[:2], "create-if-missing": {}}, headers=ADMIN).json()
        pair.wait_replayed()
        pair.standby.execute("SELECT pg_wal_replay_pause()")
        try:
            new = ha.post(T2 + "/commits", json={"paths": events[2:]}, headers=ADMIN).json()
            assert new["snapshot-id"] > old["snapshot-id"]
            # Without min-snapshot-id, alternating B (primary) and A (paused standby) goes back.
            raw = Alternating([b, a])
            with httpx.Client(base_url=b.base_url, transport=raw) as h:
                seen = [h.post(T2 + "/plan", json={"sql": ALL}, headers=READER).json()["snapshot-id"] for _ in range(4)]
            assert seen == [new["snapshot-id"], old["snapshot-id"]] * 2
            # The client asks for what it has seen: never back, on either server.
            lb = Alternating([b, a])
            with ShredcatClient(b.base_url, TOKENS["reader"], transport=lb) as c:
                seen = [c.plan("lake", "events2", sql=ALL).snapshot_id for _ in range(6)]
                seen += [c.list_files("lake", "events2").snapshot_id for _ in range(2)]
                seen += [c.load_table("lake", "events2").current_snapshot_id for _ in range(2)]
            assert seen == [new["snapshot-id"]] * 10
            assert set(lb.ports) == {httpx.URL(a.base_url).port, httpx.URL(b.base_url).port}
        finally:
            pair.standby.execute("SELECT pg_wal_replay_resume()")


def test_the_spark_helpers_read_their_own_commit_through_a_standby(
    servers: tuple[Server, Server, list[str]], mrepl: ReplicatedCatalog
) -> None:
    """``register_written``'s commit and a later ``plan_pruned`` each open a client of their own
    (``client_for``): the snapshot is kept for the service URL between them, so the plan, on a
    server reading from a standby that has not replayed the commit, still includes it."""
    from service.spark._common import client_for

    a, _, events = servers
    pair = mrepl.pair
    with client_for(None, a.base_url, TOKENS["admin"]) as c:
        c.commit("lake", "events3", paths=events[:2], create_if_missing=True)
    pair.wait_replayed()
    pair.standby.execute("SELECT pg_wal_replay_pause()")
    try:
        with client_for(None, a.base_url, TOKENS["admin"]) as c:
            committed = c.commit("lake", "events3", paths=events[2:])
        with client_for(None, a.base_url, TOKENS["reader"]) as c:
            plan = c.plan_all("lake", "events3", sql=ALL)
        assert plan.snapshot_id == committed.snapshot_id and len(plan.paths) == 5
        # A client that is not the helpers' (no memory of the commit) is answered by the standby.
        with httpx.Client(base_url=a.base_url) as h:
            stale = h.post("/v1/namespaces/lake/tables/events3/plan", json={"sql": ALL}, headers=READER).json()
        assert len(stale["files"]) == 2
        # An explicit min_snapshot_id (another process's commit) is passed the same way: this URL
        # names A otherwise, so the helpers have no memory of it.
        other_url = f"http://localhost:{httpx.URL(a.base_url).port}"
        with client_for(None, other_url, TOKENS["reader"]) as c:
            assert len(c.plan_all("lake", "events3", sql=ALL).paths) == 2
        with client_for(None, other_url, TOKENS["reader"], min_snapshot_id=committed.snapshot_id) as c:
            assert len(c.plan_all("lake", "events3", sql=ALL).paths) == 5
    finally:
        pair.standby.execute("SELECT pg_wal_replay_resume()")


def _spark_named(files: list[str], job: str) -> list[str]:
    """``files`` renamed as Spark's writer names its output (the helpers register only those)."""
    out = []
    for i, f in enumerate(files):
        p = Path(f)
        out.append(str(p.rename(p.with_name(f"part-{i:05d}-{job}-c000.snappy.parquet"))))
    return out


def test_the_duckdb_helper_plans_after_the_spark_helpers_commit_through_a_standby(
    servers: tuple[Server, Server, list[str]], mrepl: ReplicatedCatalog
) -> None:
    """``register_written`` (its own client, made from the URL) commits; DuckDB's ``plan_pruned``
    then plans with another client the caller made for the same URL: the helpers' snapshot is
    passed to it, so a server reading from a paused standby still answers with the commit."""
    import uuid

    from service.client import ShredcatClient
    from service.duckdb import engine, plan_pruned, read_pruned
    from service.spark.write import register_written

    a, _, events = servers
    pair = mrepl.pair
    root = Path(events[0]).parent.parent / "spark-job"
    first = _spark_named(write_event_files(root / "one")[:2], str(uuid.uuid4()))
    register_written(str(root), "lake.events5", [], url=a.base_url, token=TOKENS["admin"])
    pair.wait_replayed()
    pair.standby.execute("SELECT pg_wal_replay_pause()")
    con = engine.connect()
    try:
        later = _spark_named(write_event_files(root / "two"), str(uuid.uuid4()))
        written = register_written(str(root), "lake.events5", first, url=a.base_url, token=TOKENS["admin"])
        assert written.commit is not None
        snapshot = written.commit.snapshot_id
        with ShredcatClient(a.base_url, TOKENS["reader"]) as c:
            scan = plan_pruned(con, "lake.events5", ALL, client=c)
            assert sorted(scan.paths) == sorted(first + later) and scan.snapshot_id == snapshot
            assert read_pruned(con, "lake.events5", ALL, client=c).count("*").fetchone() == (700,)
        # Another URL of the same server: the helpers have no memory of it, the standby answers...
        other = f"http://localhost:{httpx.URL(a.base_url).port}"
        with ShredcatClient(other, TOKENS["reader"]) as c:
            assert sorted(plan_pruned(con, "lake.events5", ALL, client=c).paths) == sorted(first)
        # ...unless told the snapshot.
        with ShredcatClient(other, TOKENS["reader"]) as c:
            told = plan_pruned(con, "lake.events5", ALL, client=c, min_snapshot_id=snapshot)
            assert sorted(told.paths) == sorted(first + later)
    finally:
        con.close()
        pair.standby.execute("SELECT pg_wal_replay_resume()")
