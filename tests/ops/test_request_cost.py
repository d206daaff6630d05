"""What a request costs a real ``shredcat serve`` beyond its own work.

* No Nagle stalls, with one worker and with several: the server's side of every accepted
  connection has ``TCP_NODELAY`` (read from the serving process itself with ``pidfd_getfd``).
  That option is the cause of the ≈ 40 ms delayed-ACK wait per sequential request; the latency
  itself is measured by ``bench/http_plan.py``, never asserted here (shared machines are noisy).
* No connection churn: the server opens its pool's PostgreSQL sessions at start, and a load of
  concurrent clients, however it grows, opens no more (the pool holds a connection per thread
  that may need one).
"""

from __future__ import annotations

import contextlib
import ctypes
import http.client
import json
import os
import socket
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.ops.support import (
    PG_STATS_FLUSH_S,
    TOKENS,
    file_payload,
    fresh_database,
    run_migrate,
    server_backends,
    server_env,
    sessions_opened,
)
from tests.support.server import Server, running_server

_SYS_PIDFD_GETFD = 438  # the same number on every Linux architecture


def _process_tree(pid: int) -> list[int]:
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        for task in os.listdir(f"/proc/{p}/task"):
            children = Path(f"/proc/{p}/task/{task}/children").read_text().split()
            todo.extend(int(c) for c in children)
    return pids


def _server_side_nodelay(server: Server, client: socket.socket) -> int:
    """``TCP_NODELAY`` of the server's end of ``client``'s connection, read in the process that
    accepted it (a copy of its descriptor through ``pidfd_getfd``)."""
    libc = ctypes.CDLL(None, use_errno=True)
    peer = client.getsockname()
    for pid in _process_tree(server.proc.pid):
        pidfd = os.pidfd_open(pid)
        try:
            for name in os.listdir(f"/proc/{pid}/fd"):
                try:
                    if not os.readlink(f"/proc/{pid}/fd/{name}").startswith("socket:"):
                        continue
                except OSError:
                    continue
                fd = libc.syscall(_SYS_PIDFD_GETFD, pidfd, int(name), 0)
                if fd < 0:
                    err = ctypes.get_errno()
                    pytest.skip(f"pidfd_getfd is not allowed here: {os.strerror(err)}")
                s = socket.socket(fileno=fd)
                try:
                    if s.family == socket.AF_INET and s.type == socket.SOCK_STREAM and s.getpeername() == peer:
                        return s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
                except OSError:  # a listening or unconnected socket has no peer
                    pass
                finally:
                    s.close()
        finally:
            os.close(pidfd)
    raise AssertionError(f"no process of the server holds the connection from {peer}")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    if not hasattr(os, "pidfd_open"):
        pytest.skip("needs Linux pidfds")
    env = server_env(f"sqlite:///{tmp_path / 'catalog.db'}", SHREDCAT_LOG_LEVEL="warning")
    m = run_migrate(env)
    assert m.returncode == 0, m.stderr
    return env


@pytest.mark.parametrize("workers", [1, 2])
def test_accepted_sockets_have_tcp_nodelay(env: dict[str, str], tmp_path: Path, workers: int) -> None:
    with running_server(env, tmp_path / "server.log", workers=workers) as server:
        host, port = server.base_url.removeprefix("http://").split(":")
        for _ in range(4):  # new connections, spread over the workers by the kernel
            conn = http.client.HTTPConnection(host, int(port), timeout=10)
            try:
                conn.request("GET", "/health/live")
                assert conn.getresponse().read()
                assert conn.sock is not None
                assert _server_side_nodelay(server, conn.sock) == 1
            finally:
                conn.close()


@pytest.mark.postgres
def test_concurrent_clients_open_no_new_database_sessions(tmp_path: Path) -> None:
    """The server opens its pool's connections at start (``fill_pool``), so a load with more
    clients in flight at once than it has ever served opens no new session."""
    from tests.conftest import PG_ADMIN_URL, require_postgres

    require_postgres()
    clients, timed, pool = 8, 40, 12
    with fresh_database(PG_ADMIN_URL, "shredcat_pool") as url:
        env = server_env(url, SHREDCAT_LOG_LEVEL="warning", SHREDCAT_DB_POOL_SIZE=str(pool))
        m = run_migrate(env)
        assert m.returncode == 0, m.stderr
        with running_server(env, tmp_path / "server.log", workers=1) as server:
            deadline = time.monotonic() + 30
            while len(server_backends(url)) < pool:  # filled in the background, before any request
                assert time.monotonic() < deadline, f"the pool was not filled: {server_backends(url)}"
                time.sleep(0.05)
            admin = {"Authorization": f"Bearer {TOKENS['admin']}"}
            base = server.base_url + "/v1/namespaces"
            assert httpx.post(base, json={"namespace": ["lake"]}, headers=admin).status_code == 200
            r = httpx.post(f"{base}/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=admin)
            assert r.status_code == 200, r.text
            files = [file_payload(f"s3://ops-lake/warehouse/events/f{i}.parquet", i) for i in range(20)]
            r = httpx.post(f"{base}/lake/tables/events/commits", json={"files": files}, headers=admin)
            assert r.status_code == 200, r.text
            time.sleep(PG_STATS_FLUSH_S)  # every session so far has reported its start
            backends, before = server_backends(url), sessions_opened(url)
            assert len(backends) == pool

            # No warm-up: every client's first request is in the counted load.
            go = threading.Barrier(clients)
            errors: list[str] = []

            def client(k: int) -> None:
                headers = {"Authorization": f"Bearer {TOKENS['reader']}"}
                with httpx.Client(base_url=server.base_url, headers=headers, timeout=60) as c:
                    go.wait()
                    for i in range(timed):
                        body = {"sql": f"variant_get(v, '$.id', 'bigint') = {(k * 7 + i) % 20 * 1000 + 5}"}
                        resp = c.post("/v1/namespaces/lake/tables/events/plan", json=body)
                        if resp.status_code != 200:
                            errors.append(resp.text)

            threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            time.sleep(PG_STATS_FLUSH_S)
            after, now = sessions_opened(url), server_backends(url)
        assert errors == []
        assert now == backends, f"sessions replaced: {sorted(backends ^ now)}"
        assert after == before, f"{after - before} new sessions for {clients * timed} requests"


def test_the_trace_log_level_is_uvicorns(tmp_path: Path) -> None:
    """``trace`` (uvicorn's level below debug) is accepted and logs uvicorn's connection events."""
    env = server_env(f"sqlite:///{tmp_path / 'catalog.db'}", SHREDCAT_LOG_LEVEL="trace")
    m = run_migrate(env)
    assert m.returncode == 0, m.stderr
    with running_server(env, tmp_path / "server.log") as server:
        assert httpx.get(server.base_url + "/health/live", timeout=10).status_code == 200
    levels = [json.loads(line)["level"] for line in server.log_lines() if line.startswith("{")]
    assert "TRACE" in levels, levels


def test_request_heads_are_limited(env: dict[str, str], tmp_path: Path) -> None:
    """httptools buffers a header of any size on the event loop: a request line plus headers
    beyond MAX_HEAD_BYTES (plus the chunk they began in) is a 431 and the connection closes;
    smaller ones are served, also when a large body shares their chunk."""
    from service.api.transport import MAX_HEAD_BYTES

    def send(head: bytes) -> bytes:
        host, port = server.base_url.removeprefix("http://").split(":")
        with socket.create_connection((host, int(port)), timeout=20) as s:
            # Refused before all of it was sent: the answer is still there to read.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                s.sendall(head)
            data = b""
            while chunk := s.recv(65536):
                data += chunk
            return data

    with running_server(env, tmp_path / "server.log") as server:
        ok = send(b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * (MAX_HEAD_BYTES // 2) + b"\r\nConnection: close\r\n\r\n")
        assert ok.startswith(b"HTTP/1.1 200"), ok[:100]
        # Beyond the limit plus the chunk a head begins in (asyncio reads up to 256 KiB at once).
        one = send(b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Pad: " + b"a" * (8 * MAX_HEAD_BYTES) + b"\r\n\r\n")
        assert one.startswith(b"HTTP/1.1 431"), one[:100]
        many = send(b"GET /health/live HTTP/1.1\r\nHost: x\r\n" + b"X-A: b\r\n" * MAX_HEAD_BYTES + b"\r\n")
        assert many.startswith(b"HTTP/1.1 431"), many[:100]
        # A small head sent together with a large body (one chunk to the server) is no large head.
        body = b'{"namespace": ["' + b"a" * (2 * MAX_HEAD_BYTES) + b'"]}'
        head = (
            f"POST /v1/namespaces HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKENS['admin']}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        )
        big_body = send(head.encode() + body)
        assert big_body.startswith(b"HTTP/1.1 422"), big_body[:100]  # the name is too long: read, then refused
        assert httpx.get(server.base_url + "/health/live", timeout=10).status_code == 200
