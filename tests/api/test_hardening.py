"""Hardening at the API level (issue 14), in process: catalog errors split into 503 (busy, locked,
unreachable) and 500 (a SQL mistake, no internals shown) on both backends; the footer-size cap at
the edges (REST, CLI); the failed-login throttle through the app (its counting: ``tests/catalog/test_login_failures.py``) and session key rotation as a unit. The same rows
against a real ``shredcat serve`` are in ``tests/ops/test_hardening.py``."""

from __future__ import annotations

import io
import json
import sqlite3
import struct
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from service.api.auth import hash_token
from service.catalog.db import make_engine, translate_error
from service.dashboard.session import SESSION_SECONDS, SessionSigner
from service.errors import InvalidParquetError, StorageUnavailableError
from service.parquet.footer import DEFAULT_MAX_FOOTER_BYTES, read_file_metadata
from service.settings import Settings
from tests.api.conftest import ADMIN, READER, WRITER, assert_error, write_variant_file
from tests.support.server import free_port, shredcat_cmd

INTERNALS = ("select", "from ", "no such", "relation", "ducklake_", "sqlite", "psycopg", "does not exist")


def _no_internals(r: object) -> None:
    body = r.text.lower()  # type: ignore[attr-defined]
    for word in INTERNALS:
        assert word not in body, (word, body)


# --- catalog errors: 500 for mistakes, 503 for unavailability ----------------------------------


def test_a_sql_mistake_is_a_500_with_no_internals(catalog_url: str, app_factory: Callable[..., TestClient]) -> None:
    # A migrated catalog whose namespace table was renamed: listing namespaces names a missing table.
    engine = make_engine(catalog_url)
    try:
        with engine.begin() as conn:
            conn.execute(text("ALTER TABLE ducklake_schema RENAME TO gone"))
    finally:
        engine.dispose()
    c = app_factory(database_url=catalog_url)
    r = c.get("/v1/namespaces", headers=READER)
    err = assert_error(r, 500, "internal_error")
    assert "request id" in err["message"] and "retry-after" not in r.headers
    _no_internals(r)


@pytest.mark.parametrize("url", ["sqlite:////nonexistent-dir/x/catalog.db", "postgresql://nobody@127.0.0.1:{port}/x"])
def test_an_unreachable_catalog_is_a_503(app_factory: Callable[..., TestClient], url: str) -> None:
    c = app_factory(database_url=url.format(port=free_port()))
    r = c.get("/v1/namespaces", headers=READER)
    assert_error(r, 503, "storage_unavailable")
    assert r.headers["retry-after"] == "1"
    _no_internals(r)


def _raised(engine_url: str, sql: str) -> SQLAlchemyError:
    engine = make_engine(engine_url)
    try:
        return _raised_on(engine, sql)
    finally:
        engine.dispose()


def test_translate_error_on_real_driver_errors(empty_db_url: str, tmp_path: Path) -> None:
    for sql in ("SELEC 1", "SELECT * FROM no_such_table", "SELECT no_such_column FROM (SELECT 1 AS a) t"):
        e = translate_error(_raised(empty_db_url, sql))
        assert not isinstance(e, StorageUnavailableError) and e.http_status == 500, (sql, e)
    if empty_db_url.startswith("sqlite"):
        # A write lock held by another connection: "database is locked" once the wait gives up.
        db = tmp_path / "locked.db"
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("CREATE TABLE t (x)")
        holder.execute("BEGIN EXCLUSIVE")
        try:
            waiter = sqlite3.connect(db, timeout=0)
            try:
                waiter.execute("SELECT * FROM t")
            except sqlite3.OperationalError as orig:
                assert "locked" in str(orig)
                from sqlalchemy.exc import OperationalError

                assert isinstance(translate_error(OperationalError("SELECT", {}, orig)), StorageUnavailableError)
            else:
                raise AssertionError("no lock error")
            finally:
                waiter.close()
        finally:
            holder.close()
        return
    # PostgreSQL: a lock that cannot be had in time (55P03), through the real driver.
    import psycopg

    from tests.support.pg import psycopg_dsn

    engine = make_engine(empty_db_url)
    try:
        with psycopg.connect(psycopg_dsn(empty_db_url), autocommit=True) as setup:
            setup.execute("CREATE TABLE t (x int)")
        with engine.connect() as holder, engine.connect() as waiter:
            holder.execute(text("BEGIN"))
            holder.execute(text("LOCK TABLE t IN ACCESS EXCLUSIVE MODE"))
            waiter.execute(text("SET lock_timeout = '50ms'"))
            try:
                waiter.execute(text("SELECT * FROM t"))
            except SQLAlchemyError as e:
                assert isinstance(translate_error(e), StorageUnavailableError)
            else:
                raise AssertionError("no lock error")
    finally:
        engine.dispose()


def test_an_exhausted_connection_pool_is_unavailable_not_internal(empty_db_url: str) -> None:
    # Every pooled connection busy past the pool's timeout (issue 32's second probe: 60 requests
    # waiting on a lock answered 500): 503, like any catalog that cannot answer now.
    if not empty_db_url.startswith("postgresql"):
        pytest.skip("SQLite's file engine has no bounded pool")
    engine = make_engine(empty_db_url, concurrency=1, pool_timeout=0.1)
    try:
        with engine.connect():
            e = _raised_on(engine, "SELECT 1")
        assert isinstance(translate_error(e), StorageUnavailableError), e
    finally:
        engine.dispose()


def _raised_on(engine: Engine, sql: str) -> SQLAlchemyError:
    try:
        with engine.connect() as conn:
            conn.execute(text(sql))
    except SQLAlchemyError as e:
        return e
    raise AssertionError(f"{sql} did not fail")


# --- footer-size cap ----------------------------------------------------------------------------


def _claiming_footer(claimed: int, size: int) -> bytes:
    return b"PAR1" + b"\0" * (size - 12) + struct.pack("<I", claimed) + b"PAR1"


def test_footer_cap_is_checked_before_the_footer_is_read(tmp_path: Path) -> None:
    class CountingReads(io.BytesIO):
        largest = 0

        def read(self, n: int | None = -1) -> bytes:
            out = super().read(n)
            CountingReads.largest = max(CountingReads.largest, len(out))
            return out

    data = _claiming_footer(200_000, 300_000)
    with pytest.raises(InvalidParquetError, match="larger than the limit of 100000"):
        read_file_metadata(CountingReads(data), max_footer_bytes=100_000)
    assert CountingReads.largest <= 64 * 1024  # the tail only
    # A real file's footer is small: well under the default cap, refused under a tiny one.
    real = write_variant_file(tmp_path / "real.parquet", 10)
    with real.open("rb") as f:
        meta = read_file_metadata(f)
        assert meta.footer_size < DEFAULT_MAX_FOOTER_BYTES
        with pytest.raises(InvalidParquetError, match="limit"):
            read_file_metadata(f, max_footer_bytes=meta.footer_size - 1)
    assert Settings().max_footer_bytes == DEFAULT_MAX_FOOTER_BYTES


def test_footer_cap_applies_to_rest_and_cli(app_factory: Callable[..., TestClient], tmp_path: Path) -> None:
    lake = tmp_path / "lake"
    real = write_variant_file(lake / "real.parquet", 10)
    c = app_factory(roots=[str(lake)], max_footer_bytes=1024)
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = c.post("/v1/namespaces/lake/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200
    footer = real.stat().st_size  # any real footer is smaller than its file
    big = lake / "big.parquet"
    big.write_bytes(_claiming_footer(4096, 8192))
    r = c.post("/v1/namespaces/lake/tables/t/commits", json={"paths": [str(big)]}, headers=WRITER)
    err = assert_error(r, 422, "invalid_parquet")
    assert "larger than the limit of 1024" in err["message"] and footer > 0
    assert c.get("/v1/namespaces/lake/tables/t", headers=ADMIN).json()["live-file-count"] == 0
    env = {"SHREDCAT_MAX_FOOTER_BYTES": "1024", "PATH": "/usr/bin:/bin"}
    import os

    env = {**{k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}, **env}
    out = subprocess.run([*shredcat_cmd(), "stats", str(big), str(real)], env=env, capture_output=True, text=True)
    assert out.returncode == 1 and "larger than the limit of 1024" in out.stderr
    assert [json.loads(line)["file"] for line in out.stdout.splitlines()][:1] == [str(real)]


# --- text that is not valid Unicode ------------------------------------------------------------


def test_text_that_is_not_unicode_is_a_4xx_never_a_500(
    app_factory: Callable[..., TestClient], catalog_url: str, tmp_path: Path
) -> None:
    """Lone surrogates (a file name whose bytes are not UTF-8, a JSON ``\\ud800`` escape) cannot be
    stored in either database: wherever they come in, the answer is a 422 naming the text, and a
    commit that meets one commits nothing. Both backends."""
    import base64
    import os

    lake = tmp_path / "lake"
    write_variant_file(lake / "latin" / "ok.parquet", 10)
    Path(os.fsdecode(bytes(lake / "latin") + b"/caf\xe9.parquet")).hardlink_to(lake / "latin" / "ok.parquet")
    c = app_factory(database_url=catalog_url, roots=[str(lake)])
    assert c.post("/v1/namespaces", json={"namespace": ["r"]}, headers=ADMIN).status_code == 200
    assert c.post("/v1/namespaces/r/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN).status_code == 200
    t = "/v1/namespaces/r/tables/t"
    err = assert_error(c.post(t + "/commits", json={"prefixes": [str(lake / "latin")]}, headers=WRITER), 422)
    assert "caf\\udce9.parquet: the path is not valid Unicode" in err["message"], err
    assert c.get(t, headers=READER).json()["live-file-count"] == 0
    assert c.post(t + "/commits", json={"paths": [str(lake / "latin" / "ok.parquet")]}, headers=WRITER).status_code == 200
    raw = {"content-type": "application/json", **READER}
    for body in (
        '{"sql": "variant_get(v, \'$.\\ud800\', \'string\') = \'a\'"}',
        '{"sql": "v:\\ud800::int = 1"}',
        '{"sql": "`\\ud800` = 1"}',
        '{"filter": {"type": "eq", "term": "\\ud800", "value": "a"}}',
        '{"filter": {"type": "eq", "term": {"type": "variant", "column": "v", "path": "$.\\ud800"}, "value": "a"}}',
    ):
        r = c.post(t + "/plan", content=body, headers=raw)
        assert_error(r, 422, "invalid_predicate")
        assert "not valid Unicode" in r.text, r.text
    token = base64.urlsafe_b64encode(b'{"after": "\\ud800", "snapshot": 3}').decode()
    r = c.get(t + "/files", params={"page-token": token}, headers=READER)
    assert 400 <= r.status_code < 500, r.text
    for name_body in ('{"name": "\\ud800", "variant-columns": ["v"]}', '{"namespace": ["\\udcff"]}'):
        url = "/v1/namespaces/r/tables" if "name" in name_body else "/v1/namespaces"
        assert_error(c.post(url, content=name_body, headers={**raw, **ADMIN}), 422)
    err = assert_error(c.get("/v1/namespaces/r/tables/%ED%A0%80", headers=READER), 422, "bad_input")
    assert "not UTF-8 (%ED)" in err["message"], err
    # Client-side statistics: a string bound holding a lone surrogate is the file's 422.
    from tests.ops.support import file_payload

    body = file_payload(str(lake / "client.parquet"), 1)
    raw_body = json.dumps({"files": [body]}).replace('"n00000001z"', '"n\\ud800"')
    r = c.post(t + "/commits", content=raw_body, headers={"content-type": "application/json", **WRITER})
    err = assert_error(r, 422)
    assert "not valid Unicode" in err["message"] and "client.parquet" in err["message"], err
    assert c.get(t, headers=READER).json()["live-file-count"] == 1


def test_text_holding_nul_is_a_4xx_and_files_with_nul_strings_register(
    app_factory: Callable[..., TestClient], catalog_url: str, tmp_path: Path
) -> None:
    """U+0000 cannot be stored in PostgreSQL text. A file whose string bounds hold it still
    registers (those bounds are cut to NUL-free ones that still bound the data, see
    service.values.bounds.nul_free_bounds; a field named with it gets no row), and wherever such
    text comes in otherwise, the answer is a 4xx and nothing changes. Both backends alike."""
    import duckdb
    import pyarrow as pa
    import pyarrow.parquet as pq

    from tests.ops.support import file_payload

    lake = tmp_path / "lake"
    lake.mkdir()
    duckdb.connect().execute(
        "COPY (SELECT json_object('name', CASE WHEN r = 0 THEN chr(0) || 'x' ELSE 'n' || r END, "
        f"'k' || chr(0), r)::VARIANT AS v FROM range(5) t(r)) TO '{lake}/var.parquet'"
    )
    pq.write_table(pa.table({"s": ["b\x00c", "zzz", "b"], "t\x00": [1, 2, 3]}), lake / "plain.parquet")
    c = app_factory(database_url=catalog_url, roots=[str(lake)])
    t = "/v1/namespaces/r/tables/t"
    r = c.post(t + "/commits", json={"paths": [str(lake / "var.parquet")], "create-if-missing": {}}, headers=ADMIN)
    assert r.status_code == 200, r.text
    assert c.post(t + "/commits", json={"paths": [str(lake / "plain.parquet")]}, headers=WRITER).status_code == 200
    var = c.get(t + "/files/stats", params={"path": str(lake / "var.parquet")}, headers=READER).json()
    assert [(p["variant_path"], p["min_value"], p["max_value"]) for p in var["variant-stats"]] == [('"name"', "", "n4")]
    plain = c.get(t + "/files/stats", params={"path": str(lake / "plain.parquet")}, headers=READER).json()
    assert [(p["column"], p["min_value"], p["max_value"]) for p in plain["column-stats"]] == [("s", "b", "zzz")]
    # The cut bounds still bound the data: nothing is pruned that holds a match.
    for sql, kept in [("s = 'b'", True), ("s > 'b'", True), ("s < 'b\x01'", True), ("s < 'b'", False)]:
        body = c.post(t + "/plan", json={"sql": sql.replace("\x01", "\u0001")}, headers=READER).json()
        assert (str(lake / "plain.parquet") in [f["path"] for f in body["files"]]) is kept, (sql, body)
    plan = c.post(t + "/plan", json={"sql": "variant_get(v, '$.name', 'string') < 'a'"}, headers=READER).json()
    assert str(lake / "var.parquet") in [f["path"] for f in plan["files"]]

    live = c.get(t, headers=READER).json()["live-file-count"]
    client = file_payload(str(lake / "client.parquet"), 1)
    for where, doc in [
        ("a string bound", json.loads(json.dumps(client).replace('"n00000001z"', '"n\\u0000"'))),
        ("content-id", {**client, "content-id": "e\x00"}),
    ]:
        err = assert_error(c.post(t + "/commits", json={"files": [doc]}, headers=WRITER), 422)
        assert "NUL" in err["message"] and "client.parquet" in err["message"], (where, err)
    # A path holding NUL is shredded in no file (its fields get no row): every file is kept, with
    # the plan's warning; a literal holding NUL is compared as any other.
    flt = {"type": "eq", "term": {"type": "variant", "column": "v", "path": "$.na\x00me", "as": "string"}, "value": "a"}
    for body in [{"sql": "variant_get(v, '$.na\x00me', 'string') = 'a'"}, {"filter": flt}]:
        r = c.post(t + "/plan", json=body, headers=READER)
        assert r.status_code == 200 and len(r.json()["files"]) == 2 and r.json()["warnings"], r.text
    r = c.post(t + "/plan", json={"sql": "s = 'a\x00'"}, headers=READER)
    assert r.status_code == 200 and str(lake / "plain.parquet") not in [f["path"] for f in r.json()["files"]], r.text
    import base64

    token = base64.urlsafe_b64encode(b'{"after": "x\\u0000y", "snapshot": 3}').decode()
    for r in [
        c.get(t + "/files", params={"prefix": "\x00"}, headers=READER),
        c.get(t + "/files", params={"page-token": token}, headers=READER),
        c.get(t + "/files/stats", params={"path": "/a\x00.parquet"}, headers=READER),
        c.get("/v1/namespaces/a%00b/tables", headers=READER),
        c.get("/v1/namespaces/r/tables/a%00b", headers=READER),
        c.delete("/v1/namespaces/a%00b", headers=ADMIN),
        c.post(t + "/files/remove", json={"paths": ["/x\x00.parquet"], "missing-ok": True}, headers=WRITER),
        c.post(t + "/commits", json={"remove": ["/x\x00.parquet"], "remove-missing-ok": True}, headers=WRITER),
    ]:
        # Refused before any database sees it: one answer on both backends.
        assert r.status_code == 422 and ("NUL" in r.text or "invalid page token" in r.text), (r.request.url, r.text)
    assert c.get(t, headers=READER).json()["live-file-count"] == live


def test_a_nul_in_an_api_url_is_json_saying_it_once(app_factory: Callable[..., TestClient]) -> None:
    c = app_factory()
    for url in ("/v1/namespaces?x=%00", "/v1/namespaces/a%00b/tables", "/v1/namespaces/r/tables/t/files?prefix=%00"):
        err = assert_error(c.get(url, headers=READER), 422, "bad_input")
        assert err["message"] == "the request's URL holds a NUL character (%00), which no name, path or value in the catalog holds"


def test_percent_encoded_bytes_that_are_not_utf8_are_refused_before_any_route(
    app_factory: Callable[..., TestClient], warehouse: Path
) -> None:
    """They were decoded to U+FFFD: a commit creating its missing table made namespace
    'n\ufffd' and table '\ufffd(' of names the caller never sent."""
    c = app_factory()
    body = {"paths": [str((warehouse / "events" / "f0.parquet").resolve())], "create-if-missing": {}}
    for url, bad in (("/v1/namespaces/n%FF/tables/t/commits", "%FF"), ("/v1/namespaces/lake/tables/%C3%28/commits", "%C3")):
        err = assert_error(c.post(url, json=body, headers=ADMIN), 422, "bad_input")
        assert err["message"].startswith(f"the request's URL path holds percent-encoded bytes that are not UTF-8 ({bad})")
    err = assert_error(c.get("/v1/namespaces?x=%E9t%E9", headers=READER), 422, "bad_input")
    assert "URL query" in err["message"] and "(%E9)" in err["message"]
    assert c.get("/v1/namespaces", headers=READER).json()["namespaces"] == []
    # UTF-8 spelled with escapes, U+FFFD itself included, is a name like any other.
    for name in ("%C3%A9t%C3%A9", "%EF%BF%BD"):
        assert_error(c.get(f"/v1/namespaces/{name}", headers=READER), 404, "not_found")


def test_an_encoded_slash_in_a_name_is_refused_naming_it(app_factory: Callable[..., TestClient], warehouse: Path) -> None:
    """Decoded before routing, ``a%2Fb`` split the segment: a bare 404 'Not Found' from no route,
    whatever the call (a commit creating its missing table included)."""
    c = app_factory()
    body = {"paths": [str((warehouse / "events" / "f0.parquet").resolve())], "create-if-missing": {}}
    for r in (
        c.get("/v1/namespaces/ns/tables/a%2Fb", headers=READER),
        c.get("/v1/namespaces/a%2fb/tables", headers=READER),
        c.delete("/v1/namespaces/a%2Fb", headers=ADMIN),
        c.post("/v1/namespaces/ns/tables/a%2Fb/commits", json=body, headers=ADMIN),
    ):
        err = assert_error(r, 422, "bad_input", field="path")
        assert "encoded '/' (%2F)" in err["message"] and "names cannot contain '/'" in err["message"], err
    assert c.get("/v1/namespaces", headers=READER).json()["namespaces"] == []
    # In the query it is a path's '/', as ever; '%252F' is the name 'a%2Fb'.
    assert_error(c.get("/v1/namespaces/a%252Fb", headers=READER), 404, "not_found")


def test_a_query_parameter_given_twice_is_refused_naming_it(
    app_factory: Callable[..., TestClient], warehouse: Path
) -> None:
    """Every query parameter takes one value; a route used the last one given, without a word."""
    c = app_factory()
    t = "/v1/namespaces/lake/tables/events"
    c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    path = str((warehouse / "events" / "f0.parquet").resolve())
    snapshot = c.post(t + "/commits", json={"paths": [path]}, headers=WRITER).json()["snapshot-id"]
    valid = {"path": path, "prefix": "/", "snapshot-id": snapshot, "min-snapshot-id": snapshot, "page-size": 1}
    checked = set()
    for template, item in c.app.openapi()["paths"].items():
        for method, op in item.items():
            url = template.format(namespace="lake", table="events")
            query = [p for p in op.get("parameters", []) if p["in"] == "query"]
            for param in query:
                name = param["name"]
                assert "array" not in json.dumps(param["schema"]), (template, name)  # none takes several
                given = [(p["name"], valid.get(p["name"], "x")) for p in query if p["name"] in valid]
                twice = [*(kv for kv in given if kv[0] != name), (name, "x"), (name, valid.get(name, "x"))]
                err = assert_error(c.request(method, url, params=twice, headers=READER), 422, "bad_input")
                assert err["message"] == f"the query parameter {name!r} is given 2 times: it takes one value", err
                assert err["details"] == {"field": f"query.{name}"}
                checked.add(name)
    assert checked == {"path", "prefix", "snapshot-id", "min-snapshot-id", "page-size", "page-token"}
    # Escaped, the name is the same name; distinct parameters and one empty value stay fine.
    assert_error(c.get(t + "/files/stats?path=x&pa%74h=" + path, headers=READER), 422, "bad_input", field="query.path")
    assert c.get(t + "/files", params={"prefix": "", "page-size": 1}, headers=READER).status_code == 200


# --- sessions and the login throttle (units) -----------------------------------------------------


def test_session_keys_rotate_and_expiry_is_capped() -> None:
    tokens = {hash_token("t0k3n"): "admin"}
    old, new = b"o" * 32, b"n" * 32
    by_old = SessionSigner([old]).make("t0k3n", now=1000)
    rotated = SessionSigner([new, old])
    assert rotated.verify(by_old, tokens, now=1001) is not None  # old sessions survive the rotation
    by_new = rotated.make("t0k3n", now=1000)
    assert SessionSigner([new]).verify(by_new, tokens, now=1001) is not None  # the first key signs
    assert SessionSigner([new]).verify(by_old, tokens, now=1001) is None  # a dropped key is refused
    # The token's digest from the configuration is not a key.
    forged = SessionSigner([bytes.fromhex(hash_token("t0k3n"))]).make("t0k3n", now=1000)
    assert rotated.verify(forged, tokens, now=1001) is None
    # A validly signed cookie whose expiry is further ahead than a session lasts is refused.
    far = SessionSigner([new]).make("t0k3n", now=1000 + 2 * SESSION_SECONDS)
    assert rotated.verify(far, tokens, now=1001) is None
    # An expiry of digits int() refuses ('²' passes str.isdigit()) is no session, not a 500.
    for bad in ("v2.\xb2.x", "v2.\u0661\u0662.x"):
        assert rotated.verify(bad, tokens, now=1001) is None


def test_login_is_throttled_with_429_and_retry_after(app_factory: Callable[..., TestClient]) -> None:
    import re

    c = app_factory(login_failures_per_address=2)
    html = {"Accept": "text/html"}

    def attempt(token: str) -> object:
        page = c.get("/admin/login", headers=html)
        csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
        return c.post("/admin/login", data={"token": token, "csrf_token": csrf}, headers=html, follow_redirects=False)

    assert attempt("wrong").status_code == 401  # type: ignore[attr-defined]
    assert attempt("wrong").status_code == 401  # type: ignore[attr-defined]
    r = attempt("admin-token-3")
    assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1  # type: ignore[attr-defined]
    assert "Too many failed sign-ins" in r.text  # type: ignore[attr-defined]


def test_sign_in_without_the_catalog_is_a_503_not_an_unthrottled_check(
    app_factory: Callable[..., TestClient],
) -> None:
    """The failures are counted in the catalog: when it cannot be reached, no token is checked
    (a sign-in the limits cannot see would be a way around them)."""
    import re

    c = app_factory(database_url=f"postgresql://nobody@127.0.0.1:{free_port()}/x")
    html = {"Accept": "text/html"}
    page = c.get("/admin/login", headers=html)
    csrf = re.search(r'name="csrf_token" value="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    for token in ("wrong", "admin-token-3"):
        r = c.post("/admin/login", data={"token": token, "csrf_token": csrf}, headers=html, follow_redirects=False)
        assert r.status_code == 503 and "Catalog unavailable" in r.text and "shredcat_session" not in r.cookies


def test_session_secrets_must_be_long() -> None:
    with pytest.raises(ValueError, match="at least 32"):
        Settings(session_secrets=["short"])
