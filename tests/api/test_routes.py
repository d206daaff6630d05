"""Every route and its error paths, in process on SQLite (TestClient on the app factory)."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import pytest

from service import pagetoken
from service.api import create_app
from service.settings import Settings
from tests.api.conftest import ADMIN, READER, WRITER, assert_error, write_variant_file

T = "/v1/namespaces/lake/tables/events"


def _paths(warehouse: Path, *idx: int) -> list[str]:
    return [os.path.realpath(warehouse / "events" / f"f{i}.parquet") for i in idx]


# --- app factory and operations ---------------------------------------------------------------------


def test_create_app_connects_to_nothing(tmp_path: Path) -> None:
    # An unreachable database and no lifespan: building the app (and its spec) must not connect.
    app = create_app(Settings(database_url="postgresql://nobody@127.0.0.1:1/none", auth="off"))
    assert "/v1/namespaces" in app.openapi()["paths"]


def test_health_and_liveness(client) -> None:
    r = client.get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["backend"] == "sqlite" and body["schema-revision"]
    assert client.get("/health/live").json()["status"] == "ok"


def test_health_reports_unmigrated_database(app_factory, tmp_path: Path) -> None:
    c = app_factory(database_url=f"sqlite:///{tmp_path / 'empty.db'}")
    err = assert_error(c.get("/health"), 503, "schema_not_migrated")
    assert "shredcat migrate" in err["message"]
    assert c.head("/health").status_code == 503
    assert c.get("/health/live").status_code == 200


def test_requests_on_an_unmigrated_database_name_shredcat_migrate(app_factory, empty_db_url: str, tmp_path: Path) -> None:
    """Not /health only: any request on a database never migrated is the 503 that names
    ``shredcat migrate`` (it was "the catalog database is unavailable", the missing table's error)."""
    # The SQLite half's empty file is where app_factory's migrated catalog already is: another one.
    url = f"sqlite:///{tmp_path / 'empty.db'}" if empty_db_url.startswith("sqlite") else empty_db_url
    c = app_factory(database_url=url)
    for r in (c.get("/v1/namespaces", headers=READER), c.post("/v1/namespaces", headers=ADMIN, json={"namespace": ["ns"]})):
        err = assert_error(r, 503, "schema_not_migrated")
        assert "was never migrated" in err["message"] and "run `shredcat migrate`" in err["message"]


def test_health_database_down(app_factory, tmp_path: Path) -> None:
    # A directory is not a database file: the driver fails to open it.
    c = app_factory(database_url=f"sqlite:///{tmp_path}")
    err = assert_error(c.get("/health"), 503, "storage_unavailable")
    assert str(tmp_path) not in err["message"]  # driver details stay in the log
    assert c.get("/health").headers.get("retry-after") == "1"


def test_request_id_is_echoed_or_made(client) -> None:
    r = client.get("/health/live", headers={"X-Request-ID": "abc-123"})
    assert r.headers["x-request-id"] == "abc-123"
    r = client.get("/health/live", headers={"X-Request-ID": "bad id with spaces"})
    assert r.headers["x-request-id"] != "bad id with spaces" and len(r.headers["x-request-id"]) == 32
    assert len(client.get("/health/live").headers["x-request-id"]) == 32


def test_metrics(client, table, warehouse: Path) -> None:
    client.post(T + "/commits", json={"paths": _paths(warehouse, 0, 1)}, headers=WRITER)
    client.post(T + "/commits", json={"paths": ["/elsewhere/x.parquet"]}, headers=WRITER)
    r = client.get("/metrics", headers=READER)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    text = r.text
    assert 'shredcat_http_request_duration_seconds_count{method="POST",route="/v1/namespaces/{namespace}/tables/{table}/commits",status="200"} 1.0' in text
    assert "shredcat_files_registered_total 2.0" in text
    assert 'shredcat_commits_total{mode="paths",outcome="ok"} 1.0' in text
    assert 'shredcat_commits_total{mode="paths",outcome="path_not_allowed"} 1.0' in text
    assert "shredcat_prune_calls_total" in text and "shredcat_prune_files_pruned_total" in text
    # Unknown routes do not create one series per URL.
    client.get("/no/such/route/123", headers=READER)
    assert 'route="unmatched"' in client.get("/metrics", headers=READER).text


def test_metrics_registries_are_per_app(app_factory) -> None:
    a, b = app_factory(), app_factory()
    a.get("/health/live")
    assert '/health/live' in a.get("/metrics", headers=READER).text
    assert '/health/live' not in b.get("/metrics", headers=READER).text


def _get_urls(client, path: str) -> list[str]:
    """A URL of every GET route of the API (the dashboard's pages by their entry)."""
    urls = []
    for template, item in client.app.openapi()["paths"].items():
        if "get" in item and not template.startswith("/admin"):
            query = "?path=" + path if template.endswith("/files/stats") else ""
            urls.append(template.format(namespace="lake", table="events") + query)
    return [*urls, "/admin", "/admin/", "/admin/tables/lake/events", "/admin/static/dashboard.css"]


def test_head_is_answered_as_get_without_a_body(client, table: str, warehouse: Path) -> None:
    path = _paths(warehouse, 0)[0]
    assert client.post(T + "/commits", json={"paths": [path]}, headers=WRITER).status_code == 200
    urls = _get_urls(client, path)
    assert len(urls) >= 14 and {"/metrics", "/health", T + "/files/stats?path=" + path} <= set(urls)
    for url in [*urls, "/v1/namespaces/nope", "/no/such/route", T + "/plan"]:
        for headers in (READER, {}):  # 200s and the 401s, 404s, 405s of the same URLs
            got, head = client.get(url, headers=headers), client.head(url, headers=headers)
            assert head.status_code == got.status_code, (url, head.status_code, got.status_code)
            assert head.content == b"", url
            differ = {"x-request-id", "date", "set-cookie", "content-length"}
            assert {k: v for k, v in head.headers.items() if k not in differ} == {
                k: v for k, v in got.headers.items() if k not in differ
            }, url
            if url != "/metrics":  # whose text counts this very request
                assert head.headers["content-length"] == got.headers["content-length"], url
    assert client.head("/health").status_code == 200
    text = client.get("/metrics", headers=READER).text
    assert 'method="HEAD",route="/v1/namespaces/{namespace}/tables/{table}/files/stats",status="200"' in text
    # What a wrong method is told: a GET route takes HEAD too.
    r = client.put(T + "/files", headers=WRITER)
    assert r.status_code == 405 and r.headers["allow"] == "GET, HEAD"
    assert client.put(T + "/plan", headers=WRITER).headers["allow"] == "POST"


def test_unknown_route_and_method_use_the_error_model(client) -> None:
    assert_error(client.get("/v2/nothing", headers=READER), 404, "not_found")
    assert_error(client.put("/v1/namespaces", headers=ADMIN), 405, "method_not_allowed")


def test_internal_errors_do_not_leak(client, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from service.catalog import Catalog

    def boom(self):
        raise RuntimeError("secret internals: password=hunter2")

    monkeypatch.setattr(Catalog, "list_namespaces", boom)
    with caplog.at_level(logging.ERROR, logger="service.api"):
        r = client.get("/v1/namespaces", headers=READER, params={})
    err = assert_error(r, 500, "internal_error")
    assert "hunter2" not in r.text and "RuntimeError" not in r.text
    assert err["details"]["request-id"] == r.headers["x-request-id"]
    assert "hunter2" in caplog.text  # but the log has it


# --- namespaces ------------------------------------------------------------------------------------


def test_namespaces(client) -> None:
    assert client.get("/v1/namespaces", headers=READER).json() == {"namespaces": [], "next-page-token": None}
    r = client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["namespace"] == ["lake"]
    assert_error(client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN), 409, "already_exists")
    assert client.get("/v1/namespaces", headers=READER).json()["namespaces"] == [["lake"]]
    assert client.get("/v1/namespaces/lake", headers=READER).json()["namespace"] == ["lake"]
    assert_error(client.get("/v1/namespaces/nope", headers=READER), 404, "not_found")
    # Unicode and spaces in names travel percent-encoded.
    assert client.post("/v1/namespaces", json={"namespace": ["sales é 1"]}, headers=ADMIN).status_code == 200
    assert client.get("/v1/namespaces/sales%20%C3%A9%201", headers=READER).status_code == 200


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "body.namespace"),
        ({"namespace": []}, "body.namespace"),
        ({"namespace": ["a", "b"]}, "body.namespace"),
        ({"namespace": [""]}, "body.namespace[0]"),
        ({"namespace": "lake"}, "body.namespace"),
        ({"namespace": ["lake"], "properties": {"owner": "me"}}, "body.properties"),
        ({"namespace": ["lake"], "extra": 1}, "body.extra"),
        ({"namespace": [".."]}, "body.namespace[0]"),
        ({"namespace": ["."]}, "body.namespace[0]"),
        ({"namespace": ["a\x7fb"]}, "body.namespace[0]"),
        ({"namespace": ["cafe\u0301"]}, "body.namespace[0]"),  # NFD: NFC "café" is the one spelling
        ({"namespace": ["a\u202eb"]}, "body.namespace[0]"),  # a right-to-left override
    ],
)
def test_create_namespace_validation(client, body, field: str) -> None:
    assert_error(client.post("/v1/namespaces", json=body, headers=ADMIN), 422, field=field)


def test_new_names_must_be_nfc_without_hidden_characters(client) -> None:
    err = assert_error(client.post("/v1/namespaces", json={"namespace": ["cafe\u0301"]}, headers=ADMIN), 422)
    assert "not in Unicode NFC (composed) form; its NFC form is 'caf\\xe9'" in err["message"]
    assert client.post("/v1/namespaces", json={"namespace": ["caf\u00e9"]}, headers=ADMIN).status_code == 200
    body = {"name": "invoice\u202egpj", "variant-columns": ["v"]}
    err = assert_error(client.post("/v1/namespaces/caf%C3%A9/tables", json=body, headers=ADMIN), 422, field="body.name")
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in err["message"]
    assert client.get("/v1/namespaces/cafe%CC%81", headers=READER).status_code == 404  # NFD spelling: another name
    assert client.get("/v1/namespaces/caf%C3%A9/tables", headers=READER).json()["identifiers"] == []


def test_invalid_json_body(client) -> None:
    r = client.post("/v1/namespaces", content=b"{not json", headers={**ADMIN, "content-type": "application/json"})
    assert_error(r, 422, "validation_error")


def _json_body_operations(client) -> list[tuple[str, str, dict]]:
    """``(method, path, operation)`` of every operation of the document that takes a JSON body."""
    return [
        (method.upper(), path, op)
        for path, item in client.app.openapi()["paths"].items()
        for method, op in item.items()
        if "application/json" in op.get("requestBody", {}).get("content", {})
    ]


@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded", None])
def test_a_json_body_of_another_content_type_is_415(client, table: str, content_type: str | None) -> None:
    """One rule on every JSON route, whoever decodes its body (FastAPI, or the route in its thread):
    no Content-Type is not JSON's either (commits, removals and plans read such bodies as JSON,
    the others answered FastAPI's 422 'Input should be a valid dictionary')."""
    operations = _json_body_operations(client)
    assert len(operations) == 6  # namespaces, tables, commits, removals, plans, verification
    for method, path, op in operations:
        url = path.format(namespace="lake", table="events")
        # A body each route would accept as JSON: refused for its content type alone.
        headers = ADMIN if content_type is None else {**ADMIN, "content-type": content_type}
        r = client.request(method, url, content=b'{"namespace": ["x"]}', headers=headers)
        err = assert_error(r, 415, "unsupported_media_type")
        assert "application/json" in err["message"] and (content_type or "without a Content-Type") in err["message"], err
        assert err["details"] == {"content-type": content_type, "expected": "application/json"}
        assert "415" in op["responses"], op["operationId"]
    assert client.get("/v1/namespaces/x", headers=READER).status_code == 404  # nothing was created


def test_drop_namespace(client) -> None:
    client.post("/v1/namespaces", json={"namespace": ["tmp"]}, headers=ADMIN)
    r = client.delete("/v1/namespaces/tmp", headers=ADMIN)
    assert r.status_code == 200, r.text
    assert_error(client.get("/v1/namespaces/tmp", headers=READER), 404)
    assert_error(client.delete("/v1/namespaces/tmp", headers=ADMIN), 404)
    client.post("/v1/namespaces", json={"namespace": ["busy"]}, headers=ADMIN)
    client.post("/v1/namespaces/busy/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN)
    assert_error(client.delete("/v1/namespaces/busy", headers=ADMIN), 409)


# --- tables ----------------------------------------------------------------------------------------


def test_tables(client, table: str) -> None:
    t = client.get(table, headers=READER).json()
    assert t["identifier"] == {"namespace": ["lake"], "name": "events"}
    assert t["variant-columns"] == ["v"] and t["live-file-count"] == 0
    assert client.get("/v1/namespaces/lake/tables", headers=READER).json()["identifiers"] == [
        {"namespace": ["lake"], "name": "events"}
    ]
    assert_error(
        client.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN),
        409,
        "already_exists",
    )
    assert_error(client.get("/v1/namespaces/lake/tables/nope", headers=READER), 404, "not_found")
    assert_error(client.get("/v1/namespaces/nope/tables", headers=READER), 404, "not_found")
    # Tables are created only in existing namespaces.
    r = client.post("/v1/namespaces/nope/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN)
    assert_error(r, 404, "not_found")
    # Drop: gone, and a second drop is 404.
    r = client.delete(table, headers=ADMIN)
    assert r.status_code == 200 and isinstance(r.json()["snapshot-id"], int)
    assert_error(client.get(table, headers=READER), 404)
    assert_error(client.delete(table, headers=ADMIN), 404)
    assert client.get("/v1/namespaces/lake/tables", headers=READER).json()["identifiers"] == []


def test_create_table_inferring_columns(client, warehouse: Path) -> None:
    client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    r = client.post(
        "/v1/namespaces/lake/tables",
        json={"name": "inferred", "infer-from": str(warehouse / "events" / "f0.parquet")},
        headers=ADMIN,
    )
    assert r.status_code == 200, r.text
    assert r.json()["variant-columns"] == ["v"]
    assert r.json()["live-file-count"] == 0  # the file itself is not registered


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"name": "t"}, 422, "body"),
        ({"name": "t", "variant-columns": ["v"], "infer-from": "/x.parquet"}, 422, "body"),
        ({"name": "t", "variant-columns": ["v", "v"]}, 422, "body.variant-columns"),
        ({"name": "", "variant-columns": ["v"]}, 422, "body.name"),
        ({"name": "t", "variant-columns": [1]}, 422, "body.variant-columns[0]"),
        ({"name": "t", "infer-from": "/etc/x.parquet"}, 403, "body.infer-from"),
        ({"name": "t", "infer-from": "@W@/events/missing.parquet"}, 422, None),
        ({"name": "t", "infer-from": "@W@/plain.parquet"}, 422, "body.infer-from"),
    ],
)
def test_create_table_errors(client, warehouse: Path, body, status: int, field: str | None) -> None:
    client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    plain = warehouse / "plain.parquet"
    if not plain.exists():
        import duckdb

        duckdb.connect().execute(f"COPY (SELECT 1 AS x) TO '{plain}' (FORMAT parquet)")
    body = {k: v.replace("@W@", str(warehouse)) if isinstance(v, str) else v for k, v in body.items()}
    assert_error(client.post("/v1/namespaces/lake/tables", json=body, headers=ADMIN), status, field=field)


# --- files and stats ---------------------------------------------------------------------------------


def test_list_files_pagination_and_prefix(client, table: str, warehouse: Path) -> None:
    paths = _paths(warehouse, 0, 1, 2)
    r = client.post(table + "/commits", json={"paths": paths}, headers=WRITER)
    assert r.status_code == 200, r.text
    snap = r.json()["snapshot-id"]
    page = client.get(table + "/files", params={"page-size": 2}, headers=READER).json()
    assert [f["path"] for f in page["files"]] == paths[:2] and page["snapshot-id"] == snap
    f0 = page["files"][0]
    assert f0["record-count"] == 100 and f0["file-size-bytes"] == os.path.getsize(paths[0])
    assert f0["begin-snapshot"] == snap and f0["end-snapshot"] is None
    # A removal between pages does not change what the pinned listing returns.
    client.post(table + "/files/remove", json={"paths": [paths[2]]}, headers=WRITER)
    page2 = client.get(table + "/files", params={"page-size": 2, "page-token": page["next-page-token"]}, headers=READER).json()
    assert [f["path"] for f in page2["files"]] == paths[2:] and page2["next-page-token"] is None
    assert page2["snapshot-id"] == snap
    # The current listing no longer has it; an exact page has no next token.
    now = client.get(table + "/files", params={"page-size": 2}, headers=READER).json()
    assert [f["path"] for f in now["files"]] == paths[:2] and now["next-page-token"] is None
    # Prefix filter.
    pre = client.get(table + "/files", params={"prefix": paths[1][:-8]}, headers=READER).json()
    assert [f["path"] for f in pre["files"]] == [paths[1]]
    # As of an old snapshot.
    old = client.get(table + "/files", params={"snapshot-id": snap}, headers=READER).json()
    assert len(old["files"]) == 3


def test_a_min_snapshot_id_never_committed_is_not_found(client, table: str, warehouse: Path) -> None:
    """Read-your-writes names a snapshot the caller committed: one newer than the catalog's newest
    was never committed, and answering at an older snapshot would pass for the caller's writes."""
    r = client.post(table + "/commits", json={"paths": _paths(warehouse, 0)}, headers=WRITER)
    snap = r.json()["snapshot-id"]
    ok = client.get(table + "/files", params={"min-snapshot-id": snap}, headers=READER)
    assert ok.status_code == 200 and len(ok.json()["files"]) == 1, ok.text
    for route, params in (("/files", {}), ("", {}), ("/plan", None)):
        if params is None:
            r = client.post(table + route, json={"sql": "true", "min-snapshot-id": snap + 1}, headers=READER)
        else:
            r = client.get(table + route, params={"min-snapshot-id": snap + 1}, headers=READER)
        err = assert_error(r, 404, "not_found")
        assert err["message"] == f"snapshot {snap + 1} does not exist (the newest is {snap})", err


def test_a_listings_page_token_is_refused_by_another_table_or_prefix(client, table: str, warehouse: Path) -> None:
    """Reused on another table, a file or snapshot token listed that table's rows after the other
    table's key, silently (an empty page, or files skipped); the plan's tokens were already bound."""
    paths = _paths(warehouse, 0, 1, 2)
    other = "/v1/namespaces/lake/tables/other"
    assert client.post("/v1/namespaces/lake/tables", json={"name": "other", "variant-columns": ["v"]}, headers=ADMIN).status_code == 200
    for i, t in ((0, table), (1, table), (2, other)):
        assert client.post(t + "/commits", json={"paths": [paths[i]]}, headers=WRITER).status_code == 200
    files = client.get(table + "/files", params={"page-size": 1}, headers=READER).json()["next-page-token"]
    snaps = client.get(table + "/snapshots", params={"page-size": 1}, headers=READER).json()["next-page-token"]
    for url, params, what in (
        (other + "/files", {"page-token": files}, "table or prefix"),
        (table + "/files", {"page-token": files, "prefix": paths[1]}, "table or prefix"),
        (other + "/snapshots", {"page-token": snaps}, "table"),
    ):
        err = assert_error(client.get(url, params=params, headers=READER), 422, "bad_input", "query.page-token")
        assert err["message"] == f"query.page-token: the page token belongs to another {what}", err
    page = client.get(table + "/files", params={"page-token": files}, headers=READER).json()
    assert [f["path"] for f in page["files"]] == [paths[1]]
    assert len(client.get(table + "/snapshots", params={"page-token": snaps}, headers=READER).json()["snapshots"]) == 2
    # A token of a server from before the binding (no "listing") still pages, as during an upgrade.
    legacy = pagetoken.encode({"after": paths[0], "snapshot": page["snapshot-id"]})
    assert client.get(table + "/files", params={"page-token": legacy}, headers=READER).json()["files"] == page["files"]


@pytest.mark.parametrize(
    ("params", "status", "field"),
    [
        ({"page-size": 0}, 422, "query.page-size"),
        ({"page-size": 10_001}, 422, "query.page-size"),
        ({"page-size": "x"}, 422, "query.page-size"),
        ({"page-token": "%%%"}, 422, "query.page-token"),
        ({"page-token": "eyJ4IjoxfQ"}, 422, "query.page-token"),  # {"x":1}
        ({"snapshot-id": -1}, 422, "query.snapshot-id"),
        ({"snapshot-id": 999999}, 404, None),
    ],
)
def test_list_files_errors(client, table: str, params, status: int, field: str | None) -> None:
    assert_error(client.get(table + "/files", params=params, headers=READER), status, field=field)


def test_page_size_limit_is_configurable(app_factory) -> None:
    c = app_factory(max_page_size=5)
    c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    err = assert_error(c.get(T + "/files", params={"page-size": 6}, headers=READER), 422, field="query.page-size")
    assert "5" in err["message"]
    assert c.get(T + "/files", params={"page-size": 5}, headers=READER).status_code == 200
    assert_error(c.get(T + "/snapshots", params={"page-size": 6}, headers=READER), 422, field="query.page-size")


def test_file_stats_and_table_stats(client, table: str, warehouse: Path) -> None:
    paths = _paths(warehouse, 0, 1)
    client.post(table + "/commits", json={"paths": paths}, headers=WRITER)
    fs = client.get(table + "/files/stats", params={"path": paths[0]}, headers=READER).json()
    assert fs["path"] == paths[0] and fs["variant-columns"] == ["v"] and fs["record-count"] == 100
    rows = {r["variant_path"]: r for r in fs["variant-stats"]}
    assert rows['"id"'] == {
        "column": "v", "variant_path": '"id"', "shredded_type": "int64",
        "column_size_bytes": rows['"id"']["column_size_bytes"], "value_count": 100, "null_count": 0,
        "min_value": "0", "max_value": "99", "contains_nan": None, "extra_stats": None,
    }
    assert rows['"score"']["contains_nan"] is False
    assert_error(client.get(table + "/files/stats", params={"path": "/nope.parquet"}, headers=READER), 404)
    assert_error(client.get(table + "/files/stats", headers=READER), 422, field="query.path")

    g = client.get(table + "/stats", headers=READER).json()
    assert g["file-count"] == 2
    ids = next(o for o in g["columns"]["v"] if o["field_name"] == '"id"')
    assert ids["min"] == "0" and ids["max"] == "199" and ids["num_values"] == 200
    assert json.loads(g["extra-stats"]["v"]) == g["columns"]["v"]
    # As of the first snapshot the table had no file.
    first = client.get(table + "/snapshots", headers=READER).json()["snapshots"][0]["snapshot-id"]
    g0 = client.get(table + "/stats", params={"snapshot-id": first}, headers=READER).json()
    assert g0["file-count"] == 0 and g0["columns"] == {"v": []} and g0["extra-stats"] == {"v": None}


def test_snapshots_pagination(client, table: str, warehouse: Path) -> None:
    for p in _paths(warehouse, 0, 1, 2):
        client.post(table + "/commits", json={"paths": [p]}, headers=WRITER)
    allsnaps = client.get(table + "/snapshots", headers=READER).json()
    assert len(allsnaps["snapshots"]) == 4 and allsnaps["next-page-token"] is None
    assert allsnaps["snapshots"][0]["changes-made"].startswith("created_table")
    assert [s["added-files"] for s in allsnaps["snapshots"]] == [0, 1, 1, 1]
    seen, token = [], None
    while True:
        params = {"page-size": 3} | ({"page-token": token} if token else {})
        page = client.get(table + "/snapshots", params=params, headers=READER).json()
        seen += [s["snapshot-id"] for s in page["snapshots"]]
        token = page["next-page-token"]
        if not token:
            break
    assert seen == [s["snapshot-id"] for s in allsnaps["snapshots"]]


@pytest.mark.parametrize("big", [2**70, -(2**70), 2**63])
def test_page_tokens_beyond_bigint_are_bad_requests(client, table: str, warehouse: Path, big: int) -> None:
    """A forged token whose keys no BIGINT holds is a 422 naming the token (once a driver
    OverflowError, 500)."""
    client.post(table + "/commits", json={"paths": _paths(warehouse, 0)}, headers=WRITER)
    for route, doc in (
        ("/files", {"after": "/a", "snapshot": big}),
        ("/snapshots", {"after": big}),
    ):
        r = client.get(table + route, params={"page-token": pagetoken.encode(doc)}, headers=READER)
        assert_error(r, 422, "bad_input", "query.page-token")
    # The largest BIGINT is a valid key (that snapshot just has nothing after it).
    r = client.get(table + "/snapshots", params={"page-token": pagetoken.encode({"after": 2**63 - 1})}, headers=READER)
    assert r.status_code == 200 and r.json()["snapshots"] == []


def test_remove_files(client, table: str, warehouse: Path) -> None:
    paths = _paths(warehouse, 0, 1)
    client.post(table + "/commits", json={"paths": paths}, headers=WRITER)
    err = assert_error(
        client.post(table + "/files/remove", json={"paths": [paths[0], "/x.parquet"]}, headers=WRITER), 404
    )
    assert "/x.parquet" in err["message"]
    assert client.get(table, headers=READER).json()["live-file-count"] == 2  # nothing partial
    r = client.post(table + "/files/remove", json={"paths": [paths[0], "/x.parquet"], "missing-ok": True}, headers=WRITER)
    assert r.status_code == 200
    assert r.json()["removed"] == [paths[0]] and r.json()["missing"] == ["/x.parquet"]
    g = client.get(table + "/stats", headers=READER).json()
    assert g["file-count"] == 1
    ids = next(o for o in g["columns"]["v"] if o["field_name"] == '"id"')
    assert (ids["min"], ids["max"]) == ("100", "199")
    assert_error(client.post(table + "/files/remove", json={"paths": []}, headers=WRITER), 422, field="body.paths")


def test_commit_requires_existing_table_before_reading(client, warehouse: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import service.stats.extract as extract

    monkeypatch.setattr(extract, "extract_file", lambda p: pytest.fail("read before the table was checked"))
    r = client.post("/v1/namespaces/x/tables/y/commits", json={"paths": _paths(warehouse, 0)}, headers=WRITER)
    assert_error(r, 404, "not_found")


def test_lifespan_closes_the_catalog(sqlite_url: str, warehouse: Path) -> None:
    from fastapi.testclient import TestClient

    from tests.api.conftest import make_settings

    app = create_app(make_settings(sqlite_url, [str(warehouse)]))
    with TestClient(app) as c:
        assert c.get("/health").status_code == 200
        assert app.state.ctx.catalog is not None
    assert app.state.ctx.catalog is None and app.state.ctx.executor is None


def test_files_written_while_serving(client, table: str, tmp_path: Path, warehouse: Path) -> None:
    # A new file appearing in the warehouse is picked up by path (no caching of directory state).
    p = write_variant_file(warehouse / "late" / f"{tmp_path.name}.parquet", 5)
    r = client.post(table + "/commits", json={"paths": [str(p)]}, headers=WRITER)
    assert r.status_code == 200 and r.json()["added"] == [os.path.realpath(p)]


def test_operation_ids_are_stable(client) -> None:
    spec = client.app.openapi()
    ops = {(m.upper(), p): op["operationId"] for p, item in spec["paths"].items() for m, op in item.items()}
    assert ops == {
        ("GET", "/health"): "health",
        ("GET", "/health/live"): "liveness",
        ("GET", "/metrics"): "metrics",
        ("GET", "/v1/namespaces"): "listNamespaces",
        ("POST", "/v1/namespaces"): "createNamespace",
        ("GET", "/v1/namespaces/{namespace}"): "loadNamespaceMetadata",
        ("DELETE", "/v1/namespaces/{namespace}"): "dropNamespace",
        ("GET", "/v1/namespaces/{namespace}/tables"): "listTables",
        ("POST", "/v1/namespaces/{namespace}/tables"): "createTable",
        ("GET", "/v1/namespaces/{namespace}/tables/{table}"): "loadTable",
        ("DELETE", "/v1/namespaces/{namespace}/tables/{table}"): "dropTable",
        ("POST", "/v1/namespaces/{namespace}/tables/{table}/commits"): "commitFiles",
        ("POST", "/v1/namespaces/{namespace}/tables/{table}/files/remove"): "removeFiles",
        ("GET", "/v1/namespaces/{namespace}/tables/{table}/files"): "listFiles",
        ("GET", "/v1/namespaces/{namespace}/tables/{table}/files/stats"): "loadFileStats",
        ("GET", "/v1/namespaces/{namespace}/tables/{table}/stats"): "loadTableStats",
        ("GET", "/v1/namespaces/{namespace}/tables/{table}/snapshots"): "listSnapshots",
        ("POST", "/v1/namespaces/{namespace}/tables/{table}/plan"): "planTableScan",
        ("POST", "/v1/namespaces/{namespace}/tables/{table}/verify"): "verifyFiles",
    }
    # Request bodies carry examples.
    schemas = spec["components"]["schemas"]
    for name in ("CreateNamespaceRequest", "CreateTableRequest", "CommitRequest", "PlanRequest", "RemoveFilesRequest",
                 "VerifyRequest"):
        assert schemas[name].get("examples"), name


#: Every REST read taking a snapshot id: (method, path under the table's URL, where the id goes,
#: its name), with the library call it answers by (given the file's path and the id).
SNAPSHOT_READS: list[tuple[str, str, str, str, Any]] = [
    ("GET", "/files", "query", "snapshot-id", lambda c, p, s: c.list_files("lake", "events", snapshot=s)),
    ("GET", "/files", "query", "min-snapshot-id", lambda c, p, s: c.list_files("lake", "events", min_snapshot_id=s)),
    ("GET", "/files/stats", "query", "snapshot-id", lambda c, p, s: c.file_stats("lake", "events", p, snapshot=s)),
    ("GET", "/files/stats", "query", "min-snapshot-id", lambda c, p, s: c.file_stats("lake", "events", p, min_snapshot_id=s)),
    ("GET", "/stats", "query", "snapshot-id", lambda c, p, s: c.global_stats("lake", "events", snapshot=s)),
    ("GET", "/stats", "query", "min-snapshot-id", lambda c, p, s: c.global_stats("lake", "events", min_snapshot_id=s)),
    ("GET", "/snapshots", "query", "min-snapshot-id", lambda c, p, s: c.list_snapshots("lake", "events", min_snapshot_id=s)),
    ("GET", "", "query", "min-snapshot-id", lambda c, p, s: c.get_table("lake", "events", min_snapshot_id=s)),
    ("POST", "/plan", "body", "snapshot-id", lambda c, p, s: c.plan("lake", "events", _plan_expr(), snapshot_id=s)),
    ("POST", "/plan", "body", "min-snapshot-id", lambda c, p, s: c.plan("lake", "events", _plan_expr(), min_snapshot_id=s)),
]
PLAN_SQL = "variant_get(v, '$.id', 'bigint') > 1"


def _plan_expr() -> Any:
    from service.pruning.parse_sql import parse_sql

    return parse_sql(PLAN_SQL)


@pytest.mark.parametrize(
    ("method", "route", "where", "name", "library"), SNAPSHOT_READS, ids=[f"{m} {r} {n}" for m, r, _, n, _ in SNAPSHOT_READS]
)
def test_snapshot_ids_over_rest_and_in_the_library(
    client, table: str, warehouse: Path, sqlite_url: str, method: str, route: str, where: str, name: str, library: Any
) -> None:
    """One rule, both layers: a negative id is bad input (422 naming the field; the library's
    BadInputError), one never committed is not found (404; NotFoundError). The library's side on
    both backends: tests/catalog/test_snapshot_ids.py."""
    from service.catalog import Catalog
    from service.errors import ShredcatError

    paths = _paths(warehouse, 0, 1)
    client.post(table + "/commits", json={"paths": paths}, headers=WRITER)
    for snapshot, status, field in ((-1, 422, f"{where}.{name}"), (10**12, 404, None)):
        if method == "GET":
            params = {name: snapshot, **({"path": paths[0]} if route == "/files/stats" else {})}
            r = client.get(table + route, params=params, headers=READER)
        else:
            r = client.post(table + route, json={"sql": PLAN_SQL, name: snapshot}, headers=READER)
        err = assert_error(r, status, field=field)
        assert ("does not exist" in err["message"]) is (status == 404), err
        with Catalog(sqlite_url) as cat, pytest.raises(ShredcatError) as e:
            library(cat, paths[0], snapshot)
        assert e.value.http_status == status, (snapshot, e.value.message)
