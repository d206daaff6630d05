"""The main paths of the API on PostgreSQL (in process)."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.client import file_stats_payload
from service.stats.extract import extract_file
from tests.api.conftest import ADMIN, READER, WRITER, assert_error, write_variant_file

pytestmark = pytest.mark.postgres

T = "/v1/namespaces/lake/tables/events"


def _with_table(c):
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return c


@pytest.fixture
def pg_client(app_factory, pg_url: str):
    return _with_table(app_factory(database_url=pg_url))


def test_main_paths_on_postgres(pg_client, warehouse: Path, tmp_path: Path) -> None:
    c = pg_client
    health = c.get("/health").json()
    assert health["backend"] == "postgresql"
    paths = [os.path.realpath(warehouse / "events" / f"f{i}.parquet") for i in range(3)]
    h = {**WRITER, "Idempotency-Key": "pg-1"}
    r = c.post(T + "/commits", json={"paths": paths[:2]}, headers=h)
    assert r.status_code == 200, r.text
    assert c.post(T + "/commits", json={"paths": paths[:2]}, headers=h).json()["replayed"] is True
    # Client-side statistics.
    remote = write_variant_file(tmp_path / "remote.parquet", 10, 1000)
    doc = file_stats_payload(extract_file(str(remote)))
    doc["path"] = str(warehouse / "events" / "remote-pg.parquet")
    assert c.post(T + "/commits", json={"files": [doc]}, headers=WRITER).status_code == 200
    # A bad row refuses the whole commit.
    bad = {**doc, "path": str(warehouse / "events" / "bad.parquet"), "record-count": 11}
    assert_error(c.post(T + "/commits", json={"paths": [paths[2]], "files": [bad]}, headers=WRITER), 422)

    t = c.get(T, headers=READER).json()
    assert t["live-file-count"] == 3 and t["live-record-count"] == 210
    files = c.get(T + "/files", params={"page-size": 2}, headers=READER).json()
    assert len(files["files"]) == 2 and files["next-page-token"]
    rest = c.get(T + "/files", params={"page-size": 2, "page-token": files["next-page-token"]}, headers=READER).json()
    assert len(rest["files"]) == 1 and rest["next-page-token"] is None
    fs = c.get(T + "/files/stats", params={"path": doc["path"]}, headers=READER).json()
    assert sorted(fs["variant-stats"], key=lambda x: x["variant_path"]) == sorted(
        doc["variant-stats"], key=lambda x: x["variant_path"]
    )
    g = c.get(T + "/stats", headers=READER).json()
    ids = next(o for o in g["columns"]["v"] if o["field_name"] == '"id"')
    assert (ids["min"], ids["max"]) == ("0", "1009")
    r = c.post(T + "/files/remove", json={"paths": [doc["path"]]}, headers=WRITER)
    assert r.status_code == 200
    ids = next(o for o in c.get(T + "/stats", headers=READER).json()["columns"]["v"] if o["field_name"] == '"id"')
    assert ids["max"] == "199"
    assert len(c.get(T + "/snapshots", headers=READER).json()["snapshots"]) == 4
    plan = c.post(T + "/plan", json={"sql": "variant_get(v, '$.id', 'bigint') = 150"}, headers=READER).json()
    assert [f["path"] for f in plan["files"]] == [paths[1]]
    assert c.delete(T, headers=ADMIN).status_code == 200
    assert_error(c.get(T, headers=READER), 404)


def test_concurrent_commits_on_postgres(app_factory, pg_url: str, tmp_path: Path) -> None:
    paths = [os.path.realpath(write_variant_file(tmp_path / f"c{i}.parquet", 10, i * 10)) for i in range(6)]
    c = _with_table(app_factory(database_url=pg_url, roots=[str(tmp_path)]))

    def commit(p: str) -> int:
        return c.post(T + "/commits", json={"paths": [p]}, headers=WRITER).status_code

    with ThreadPoolExecutor(6) as pool:
        assert list(pool.map(commit, paths)) == [200] * 6
    t = c.get(T, headers=READER).json()
    assert t["live-file-count"] == 6 and t["live-record-count"] == 60
    g = c.get(T + "/stats", headers=READER).json()
    ids = next(o for o in g["columns"]["v"] if o["field_name"] == '"id"')
    assert (ids["min"], ids["max"], ids["num_values"]) == ("0", "59", 60)




def _reading_requests(events: str) -> dict[str, tuple[str, dict[str, object], dict[str, str]]]:
    """Each request that reads files (footers from disk or an object store) before it writes:
    (URL, body, headers)."""
    f0 = f"{events}/f0.parquet"
    return {
        "commit by path": (T + "/commits", {"paths": [f0]}, {**WRITER, "Idempotency-Key": "slow-1"}),
        "commit by prefix, creating the table": (
            "/v1/namespaces/lake/tables/fresh/commits",
            {"prefixes": [events], "create-if-missing": {}},
            ADMIN,
        ),
        "create a table from a file": ("/v1/namespaces/lake/tables", {"name": "inferred", "infer-from": f0}, ADMIN),
    }


@pytest.mark.parametrize("request_name", list(_reading_requests("")))
def test_a_request_reading_files_holds_no_connection_meanwhile(
    app_factory: Callable[..., TestClient], pg_url: str, warehouse: Path, monkeypatch: pytest.MonkeyPatch, request_name: str
) -> None:
    """One pooled connection, and a request whose store blocks until another request has been
    answered: that request gets the connection (files are read with none held: a slow store
    must not exhaust the pool for everyone), then the first one completes."""
    import threading

    from service.api import ingest
    from tests.support.guard import returns

    c = _with_table(app_factory(database_url=pg_url, db_pool_size=1))
    reading, answered = threading.Event(), threading.Event()
    extract = ingest.extract_checked

    def slow_store(*args: Any, **kw: Any) -> Any:
        reading.set()
        assert answered.wait(60), "the other request was never answered"
        return extract(*args, **kw)

    monkeypatch.setattr(ingest, "extract_checked", slow_store)
    url, body, headers = _reading_requests(os.path.realpath(warehouse / "events"))[request_name]
    with ThreadPoolExecutor(1) as pool:
        reads_files = pool.submit(c.post, url, json=body, headers=headers)
        assert reading.wait(60)
        other = returns(lambda: c.get(T, headers=READER))
        answered.set()
        assert other.status_code == 200, other.text
        r = reads_files.result(60)
    assert r.status_code == 200, r.text
