"""Issue 32's second hostile-client probe against a real ``shredcat serve`` (auth on, SQLite and
PostgreSQL, loopback), on angles the first one did not try: ``/health/live`` while every request
thread waits (the one finding fixed: liveness now runs on the event loop), HTTP/1.1 pipelining,
deeply nested JSON, floods of headers and cookies, request-smuggling forms, page-size and
page-token abuse and user input in metric labels. Each asserts behaviour (statuses, answers
counted, VmRSS from ``/proc``), never a wall-clock time; socket timeouts only bound a failure."""

from __future__ import annotations

import base64
import json
import socket
import threading
from collections.abc import Iterator
from contextlib import nullcontext

import httpx
import pytest

from tests.ops.support import (
    TOKENS,
    admin_execute,
    file_payload,
    fresh_database,
    run_migrate,
    server_env,
)
from tests.ops.test_hardening import bearer, vm_rss_kb
from tests.support.server import Server, running_server

pytestmark = pytest.mark.slow

NS, TABLE = "lake", "events"
TABLE_URL = f"/v1/namespaces/{NS}/tables/{TABLE}"
#: Far below a copy per pipelined request (20,000 requests) or per nested level of a body.
RSS_BOUND_KB = 60 * 1024


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp(f"angles-{request.param}")
    url_of = fresh_database() if request.param == "postgres" else nullcontext(f"sqlite:///{base / 'catalog.db'}")
    with url_of as url:
        env = server_env(url, roots=[str(base)], SHREDCAT_SESSION_SECRETS=json.dumps(["k" * 40]))
        assert run_migrate(env).returncode == 0
        with running_server(env, base / "server.log") as s:
            s.env["BACKEND"] = request.param
            with httpx.Client(base_url=s.base_url, timeout=60) as c:
                assert c.post("/v1/namespaces", json={"namespace": [NS]}, headers=bearer("admin")).status_code == 200
                r = c.post(f"/v1/namespaces/{NS}/tables", json={"name": TABLE, "variant-columns": ["v"]}, headers=bearer("admin"))
                assert r.status_code == 200, r.text
                files = [file_payload(f"{base}/f{i}.parquet", i) for i in range(20)]
                assert c.post(f"{TABLE_URL}/commits", json={"files": files}, headers=bearer("writer")).status_code == 200
            yield s


def _port(s: Server) -> int:
    return int(s.base_url.rsplit(":", 1)[1])


def _live(s: Server) -> None:
    assert httpx.get(s.base_url + "/health/live", timeout=30).status_code == 200


def _raw(s: Server, data: bytes) -> bytes:
    """Everything the server sends back to ``data`` until it closes (or 30 s of silence)."""
    with socket.create_connection(("127.0.0.1", _port(s))) as sock:
        sock.settimeout(30)
        sock.sendall(data)
        out = b""
        try:
            while chunk := sock.recv(65536):
                out += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return out


def test_liveness_is_answered_while_every_request_thread_waits(server: Server) -> None:
    """60 listings blocked on a table lock hold every thread of the pool (and every pooled
    connection); the liveness probe, on the event loop, is answered while they wait."""
    if server.env["BACKEND"] != "postgres":
        pytest.skip("a table lock that blocks readers needs PostgreSQL")
    import psycopg

    from tests.support.pg import psycopg_dsn

    answers: list[int] = []
    with psycopg.connect(psycopg_dsn(server.env["SHREDCAT_DATABASE_URL"]), connect_timeout=10) as lock:
        lock.execute("LOCK TABLE ducklake_data_file IN ACCESS EXCLUSIVE MODE")

        def listing() -> None:
            with httpx.Client(base_url=server.base_url, timeout=120) as c:
                answers.append(c.get(f"{TABLE_URL}/files", headers=bearer("reader")).status_code)

        threads = [threading.Thread(target=listing) for _ in range(60)]
        for t in threads:
            t.start()
        # The listings are in: every one of them is waiting on the lock (or for a thread).
        waiting = "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = 'shredcat'"
        admin_url = server.env["SHREDCAT_DATABASE_URL"]
        for _ in range(600):
            if admin_execute(admin_url, waiting)[0][0] >= 16:  # SHREDCAT_DB_POOL_SIZE's default
                break
            threading.Event().wait(0.05)
        else:
            pytest.fail("the listings never reached the lock")
        with httpx.Client(base_url=server.base_url, timeout=30) as c:
            assert c.get("/health/live").status_code == 200
            assert c.head("/health/live").status_code == 200
        assert answers == []  # all still waiting: the probe did not need one of their threads
        lock.rollback()
    for t in threads:
        t.join(120)
    assert answers == [200] * 60


def test_pipelined_requests_are_all_answered_in_bounded_memory(server: Server) -> None:
    before = vm_rss_kb(server.proc.pid)
    n = 20_000
    with socket.create_connection(("127.0.0.1", _port(server))) as sock:
        sock.settimeout(30)
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n" * n)
        out = b""
        while out.count(b"HTTP/1.1 200 OK") < n:
            chunk = sock.recv(1 << 20)
            assert chunk, "closed before answering every request"
            out += chunk
    assert vm_rss_kb(server.proc.pid) - before < RSS_BOUND_KB
    _live(server)


@pytest.mark.parametrize(
    ("path", "role"),
    [("/v1/namespaces", "admin"), (f"{TABLE_URL}/plan", "reader"), (f"{TABLE_URL}/commits", "writer")],
    ids=["create", "plan", "commit"],
)
def test_deeply_nested_json_bodies_get_4xx(server: Server, path: str, role: str) -> None:
    before = vm_rss_kb(server.proc.pid)
    depth = 200_000  # within every route's body limit; far past any JSON decoder's recursion
    body = b'{"namespace": ' + b"[" * depth + b"]" * depth + b"}"
    r = httpx.post(server.base_url + path, content=body, headers={**bearer(role), "content-type": "application/json"}, timeout=60)
    assert 400 <= r.status_code < 500, (r.status_code, r.text[:200])
    assert r.json()["error"]["type"] != "internal_error"
    assert vm_rss_kb(server.proc.pid) - before < RSS_BOUND_KB
    _live(server)


def test_floods_of_headers_and_cookies_are_answered(server: Server) -> None:
    headers = "".join(f"X-H{i}: v\r\n" for i in range(5000))  # ~55 KiB: under the 64 KiB head limit
    out = _raw(server, f"GET /health/live HTTP/1.1\r\nHost: x\r\n{headers}Connection: close\r\n\r\n".encode())
    assert out.startswith(b"HTTP/1.1 200 ")
    cookies = "; ".join(f"c{i}=v" for i in range(9000))[:60000]
    for path, status in (("/admin", b"401"), ("/admin/login", b"200"), ("/v1/namespaces", b"401")):
        out = _raw(server, f"GET {path} HTTP/1.1\r\nHost: x\r\nCookie: {cookies}\r\nConnection: close\r\n\r\n".encode())
        assert out.split(b" ", 2)[1] == status, (path, out[:200])
    _live(server)


def test_request_smuggling_forms_are_refused(server: Server) -> None:
    # Content-Length beside Transfer-Encoding, with a second request hidden in the body.
    out = _raw(
        server,
        b"POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"0\r\n\r\nGET /health/live HTTP/1.1\r\nHost: x\r\n\r\n",
    )
    assert out.startswith(b"HTTP/1.1 400 ") and out.count(b"HTTP/1.1 ") == 1
    out = _raw(server, b"GET /health/live HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n12345")
    assert out.startswith(b"HTTP/1.1 400 ") and out.count(b"HTTP/1.1 ") == 1
    _live(server)


def test_page_size_and_page_token_abuse_get_422(server: Server) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30, headers=bearer("reader")) as c:
        for size in ("9" * 60_000, "1" + "0" * 30, "-1", "0", "1e3", "10001", "5\x00"):
            assert c.get(f"{TABLE_URL}/files", params={"page-size": size}).status_code == 422, size
        nested = base64.urlsafe_b64encode(b"[" * 2000 + b"]" * 2000).decode()
        huge_after = base64.urlsafe_b64encode(json.dumps({"after": "x" * 2000, "snapshot": 10**30}).encode()).decode()
        for token in ("A" * 60_000, "%%%", nested, huge_after, base64.urlsafe_b64encode(b'{"after": 1}').decode()):
            r = c.get(f"{TABLE_URL}/files", params={"page-token": token})
            assert r.status_code == 422 and r.json()["error"]["type"] != "internal_error", (token[:20], r.text[:200])
    _live(server)


def _series(c: httpx.Client) -> set[str]:
    text = c.get("/metrics", headers=bearer("reader")).text
    return {line.rsplit(" ", 1)[0] for line in text.splitlines() if line.startswith("shredcat_http_request")}


def test_names_and_queries_from_users_add_no_metric_series(server: Server) -> None:
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        for _ in range(2):  # the first round makes the shared series (404, 401, 422 on these routes)
            c.get("/v1/namespaces/n0/tables/t0/files", headers=bearer("reader"))
            c.get("/v1/namespaces/n0", headers={"Authorization": "Bearer wrong"})
            c.get(f"{TABLE_URL}/files", params={"page-size": -1}, headers=bearer("reader"))
            before = _series(c)
        for i in range(100):
            c.get(f"/v1/namespaces/n{i}/tables/t{i}/files", headers=bearer("reader"))
            c.get(f"/v1/namespaces/n{i}", headers={"Authorization": f"Bearer wrong{i}"})
            c.get(f"{TABLE_URL}/files", params={"page-size": -i - 1, "prefix": f"p{i}"}, headers=bearer("reader"))
        assert _series(c) == before
    assert not any(TOKENS["reader"] in line for line in before)
