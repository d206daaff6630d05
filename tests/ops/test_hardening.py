"""Hostile and careless clients against a real ``shredcat serve`` (auth on, SQLite catalog, one local
warehouse root): each gets a clear 4xx without the server reading what it need not read, memory
stays bounded (VmRSS from ``/proc``), the catalog is unchanged, and the server is healthy after.

The rows of issue 14 covered here: an unauthenticated or oversized body refused before it is read
(1), too many stats rows for one file and a graceful shutdown during a large commit (2), a
footer-size cap checked before the footer is read (3), integers beyond BIGINT in page tokens,
cursors and snapshot ids (4), bounded metric labels (5), record counts beyond BIGINT (6), huge
bounds and extra_stats (7), symlinks out of the warehouse refused without naming their target (8),
forged session cookies (9), no time-of-check/time-of-use gap and no blocking open when committing
by path (10, 11), filter numbers beyond a double (13), the failed-login throttle, and the
``Secure`` cookie flag behind a trusted TLS-terminating proxy. Row 12 (huge predicates) is in
``test_fuzz.py``.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import shutil
import signal
import socket
import struct
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.api.conftest import write_variant_file
from tests.ops.support import TOKENS, run_migrate, server_env
from tests.support.server import Server, running_server

pytestmark = pytest.mark.slow

NS, TABLE = "lake", "events"
TABLE_URL = f"/v1/namespaces/{NS}/tables/{TABLE}"
COMMITS = f"{TABLE_URL}/commits"
MiB = 1024 * 1024
BODY_LIMIT = 8 * MiB
#: Generous: the point is "no copy of the body or of the claimed footer", which would be hundreds of MB.
RSS_BOUND_KB = 100 * 1024
SESSION_KEY = "s" * 48
#: Addresses on the loopback network: the trusted proxy, an untrusted client, and a brute-forcer.
TRUSTED, UNTRUSTED, ATTACKER = "127.0.0.1", "127.0.0.2", "127.0.0.3"


def bearer(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role]}"}


def vm_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


class Lake:
    """The warehouse root, a directory outside it, and the running server."""

    def __init__(self, root: Path, outside: Path, server: Server, database_url: str) -> None:
        self.root = root
        self.outside = outside
        self.server = server
        self.database_url = database_url

    def client(self, local_address: str | None = None, **kw: Any) -> httpx.Client:
        transport = httpx.HTTPTransport(local_address=local_address) if local_address else None
        return httpx.Client(base_url=self.server.base_url, timeout=60, transport=transport, **kw)

    def live_files(self) -> list[str]:
        with self.client() as c:
            r = c.get(f"{TABLE_URL}/files", headers=bearer("reader"))
            assert r.status_code == 200, r.text
            return sorted(f["path"] for f in r.json()["files"])

    def healthy(self) -> None:
        with self.client() as c:
            assert c.get("/health").status_code == 200

    @property
    def pid(self) -> int:
        return self.server.proc.pid


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    base = tmp_path_factory.mktemp("harden")
    root = base / "warehouse"
    outside = base / "outside"
    root.mkdir()
    outside.mkdir()
    url = f"sqlite:///{base / 'catalog.db'}"
    env = server_env(
        url,
        roots=[str(root)],
        SHREDCAT_MAX_BODY_BYTES=str(BODY_LIMIT),
        SHREDCAT_SESSION_SECRETS=json.dumps([SESSION_KEY]),
        SHREDCAT_FORWARDED_ALLOW_IPS=TRUSTED,
        SHREDCAT_EXTRACT_WORKERS="2",
    )
    done = run_migrate(env)
    assert done.returncode == 0, done.stderr
    with running_server(env, base / "server.log") as server:
        lk = Lake(root, outside, server, url)
        with lk.client() as c:
            assert c.post("/v1/namespaces", json={"namespace": [NS]}, headers=bearer("admin")).status_code == 200
            r = c.post(f"/v1/namespaces/{NS}/tables", json={"name": TABLE, "variant-columns": ["v"]}, headers=bearer("admin"))
            assert r.status_code == 200, r.text
        yield lk


def _port(lake: Lake) -> int:
    return int(lake.server.base_url.rsplit(":", 1)[1])


def _head(method: str, path: str, headers: dict[str, str]) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in headers.items()), "", ""]
    return "\r\n".join(lines).encode()


def _send_until_answered(sock: socket.socket, chunks: Iterator[bytes]) -> tuple[bytes, int]:
    """Send ``chunks`` until the server answers (or stops reading); returns (the answer, bytes
    of body sent)."""
    sent = 0
    sock.settimeout(0.5)
    for chunk in chunks:
        try:
            sock.sendall(chunk)
        except (TimeoutError, BrokenPipeError, ConnectionResetError):
            break  # the server stopped reading: it has answered (or will)
        sent += len(chunk)
        try:
            sock.setblocking(False)
            peek = sock.recv(1, socket.MSG_PEEK)
        except BlockingIOError:
            peek = b""
        finally:
            sock.settimeout(0.5)
        if peek:
            break
    sock.settimeout(30)
    answer = b""
    while True:
        head, sep, body = answer.partition(b"\r\n\r\n")
        m = re.search(rb"content-length: (\d+)", head, re.IGNORECASE)
        if sep and m and len(body) >= int(m.group(1)):
            return answer, sent
        part = sock.recv(65536)
        if not part:
            return answer, sent
        answer += part


def _status(answer: bytes) -> int:
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", answer)
    assert m, answer[:200]
    return int(m.group(1))


def _body_chunks(total: int, size: int = 256 * 1024, *, chunked: bool = False) -> Iterator[bytes]:
    piece = b"{}," * (size // 3)
    n = 0
    while n < total:
        part = piece[: total - n]
        n += len(part)
        yield f"{len(part):x}\r\n".encode() + part + b"\r\n" if chunked else part
    if chunked:
        yield b"0\r\n\r\n"


# --- row 1: authentication and size before the body ---------------------------------------------


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_unauthenticated_large_body_is_refused_before_it_is_read(lake: Lake, chunked: bool) -> None:
    total = 46 * MiB
    rss = vm_rss_kb(lake.pid)
    headers = {"Content-Type": "application/json"}
    headers.update({"Transfer-Encoding": "chunked"} if chunked else {"Content-Length": str(total)})
    with socket.create_connection(("127.0.0.1", _port(lake))) as sock:
        sock.sendall(_head("POST", COMMITS, headers))
        chunks = _body_chunks(total, chunked=chunked)
        sock.sendall(next(chunks))
        # While this body is (not) being read, the event loop serves others.
        with lake.client() as c:
            assert c.get("/health/live").status_code == 200
        answer, sent = _send_until_answered(sock, chunks)
    assert _status(answer) == 401 and b"www-authenticate" in answer.lower()
    assert sent < total  # answered before the body was sent
    assert vm_rss_kb(lake.pid) - rss < RSS_BOUND_KB
    # A reader is refused (403) before its body is read too.
    with socket.create_connection(("127.0.0.1", _port(lake))) as sock:
        sock.sendall(_head("POST", COMMITS, {**headers, **bearer("reader")}))
        answer, sent = _send_until_answered(sock, _body_chunks(total, chunked=chunked))
    assert _status(answer) == 403 and sent < total
    assert lake.live_files() == []
    lake.healthy()


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_writer_over_the_body_limit_gets_413_before_the_body_is_read(lake: Lake, chunked: bool) -> None:
    total = 46 * MiB
    rss = vm_rss_kb(lake.pid)
    headers = {"Content-Type": "application/json", **bearer("writer")}
    headers.update({"Transfer-Encoding": "chunked"} if chunked else {"Content-Length": str(total)})
    with socket.create_connection(("127.0.0.1", _port(lake))) as sock:
        sock.sendall(_head("POST", COMMITS, headers))
        answer, sent = _send_until_answered(sock, _body_chunks(total, chunked=chunked))
    assert _status(answer) == 413, answer[:300]
    assert b"limit_exceeded" in answer
    # Content-Length: refused on the header; chunked: cut once the count passes the limit.
    assert sent < total
    assert vm_rss_kb(lake.pid) - rss < RSS_BOUND_KB
    assert lake.live_files() == []
    lake.healthy()


# --- row 3: footer-size cap ---------------------------------------------------------------------


def test_a_huge_claimed_footer_is_refused_before_it_is_read(lake: Lake) -> None:
    path = lake.root / "sparse.parquet"
    size = 600 * MiB
    with path.open("wb") as f:
        f.write(b"PAR1")
        f.truncate(size)  # sparse: no disk used, reads of the hole are zeros
        f.seek(size - 8)
        f.write(struct.pack("<I", 512 * MiB) + b"PAR1")
    try:
        rss = vm_rss_kb(lake.pid)
        with lake.client() as c:
            r = c.post(COMMITS, json={"paths": [str(path)]}, headers=bearer("writer"))
        assert r.status_code == 422, r.text
        err = r.json()["error"]
        assert err["type"] == "invalid_parquet" and "larger than the limit" in err["message"]
        assert vm_rss_kb(lake.pid) - rss < RSS_BOUND_KB
        assert lake.live_files() == []
        lake.healthy()
    finally:
        path.unlink()


# --- row 5: bounded metric labels ---------------------------------------------------------------


def _series(c: httpx.Client) -> set[str]:
    text = c.get("/metrics", headers=bearer("reader")).text
    return {line.rsplit(" ", 1)[0] for line in text.splitlines() if line.startswith("shredcat_http_request")}


def test_invented_methods_and_paths_add_no_metric_series(lake: Lake) -> None:
    with lake.client() as c:
        # Methods HTTP knows but the API does not (the server's parser, httptools, refuses
        # made-up ones itself with a 400 that never reaches the app): the shared series exist
        # after a first round.
        for i, method in enumerate(("PURGE", "PROPFIND", "MKCOL")):
            c.request(method, "/v1/namespaces", headers=bearer("reader"))
            c.request(method, f"/nowhere/{i}")
            c.get(f"/nowhere/{i}")
            _series(c)
        before = _series(c)
        for i in range(30):
            for r in (
                c.request(f"INVENTED{i}", "/v1/namespaces", headers=bearer("reader")),
                c.request(("LOCK", "UNLOCK", "SEARCH")[i % 3], f"/made/up/{i}"),
                c.request(f"X{i}", f"/made/up/{i}"),
                c.get(f"/also/made/up/{i}"),
            ):
                assert 400 <= r.status_code < 500, (r.request.method, r.status_code)
        after = _series(c)
    assert after == before
    assert not [s for s in after if "INVENTED" in s or "made/up" in s]
    assert any('method="other"' in s for s in after) and any('route="unmatched"' in s for s in after)


# --- row 8: symlinks out of the warehouse -------------------------------------------------------


def test_symlinks_out_of_the_warehouse_are_refused_without_naming_their_target(lake: Lake) -> None:
    secret = write_variant_file(lake.outside / "hidden-name" / "secret.parquet", 10)
    links = {
        "zero.parquet": "/dev/zero",
        "passwd.parquet": "/etc/passwd",
        "out.parquet": str(secret),
        "dir": str(secret.parent),
    }
    for name, target in links.items():
        (lake.root / name).symlink_to(target)
    try:
        with lake.client() as c:
            for name in ("zero.parquet", "passwd.parquet", "out.parquet", "dir/secret.parquet"):
                r = c.post(COMMITS, json={"paths": [str(lake.root / name)]}, headers=bearer("writer"))
                assert r.status_code in (403, 422), r.text
                for leak in ("/dev/zero", "/etc/passwd", "hidden-name", str(lake.outside)):
                    assert leak not in r.text, (name, r.text)
        assert lake.live_files() == []
        lake.healthy()
    finally:
        for name in links:
            (lake.root / name).unlink()


# --- rows 10 and 11: no time-of-check/time-of-use gap, never a blocking open ----------------------


def test_swapping_directories_and_fifos_during_commits_never_leaks_or_blocks(lake: Lake) -> None:
    # Inside: ids 0..99. Outside, under the same relative name: ids 5000..5099.
    inside_dir = lake.root / "swap"
    inside = write_variant_file(inside_dir / "f.parquet", 100, 0)
    outside_dir = lake.outside / "swap"
    write_variant_file(outside_dir / "f.parquet", 100, 5000)
    fifo_target = lake.root / "g.parquet"
    source = write_variant_file(lake.root / "g-source.parquet", 50, 0)
    os.link(source, fifo_target)
    stop = threading.Event()
    swaps = {"dir": 0, "fifo": 0}

    def swapper() -> None:
        aside = lake.root / "swap-aside"
        tmp_fifo, tmp_link = lake.root / "g.fifo.tmp", lake.root / "g.link.tmp"
        while not stop.is_set():
            os.rename(inside_dir, aside)
            os.symlink(outside_dir, inside_dir)
            time.sleep(0.0005)
            os.unlink(inside_dir)
            os.rename(aside, inside_dir)
            swaps["dir"] += 1
            os.mkfifo(tmp_fifo)
            os.replace(tmp_fifo, fifo_target)
            time.sleep(0.0005)
            os.link(source, tmp_link)
            os.replace(tmp_link, fifo_target)
            swaps["fifo"] += 1

    statuses: list[int] = []

    def commit(i: int) -> int:
        path = inside if i % 2 == 0 else fifo_target
        with lake.client() as c:
            return c.post(COMMITS, json={"paths": [str(path)]}, headers=bearer("writer")).status_code

    t = threading.Thread(target=swapper, daemon=True)
    t.start()
    try:
        with ThreadPoolExecutor(4) as pool:
            statuses = list(pool.map(commit, range(200)))  # httpx's timeout fails a blocked commit
    finally:
        stop.set()
        t.join(30)
    assert swaps["dir"] > 0 and swaps["fifo"] > 0
    assert all(s < 500 for s in statuses), statuses
    assert set(statuses) <= {200, 403, 409, 422}, statuses
    from service.catalog import Catalog

    with Catalog(lake.database_url) as cat:
        stored = {f.path for f in cat.list_files(NS, TABLE)}
        if str(inside) in stored:
            fs = cat.file_stats(NS, TABLE, str(inside))
            ids = next(p for p in fs.paths if p.variant_path == '"id"')
            assert (ids.min_value, ids.max_value) == (0, 99)  # never the outside file's 5000..5099
        assert stored <= {str(inside), str(fifo_target)}
    lake.healthy()
    # Clean up for the other tests.
    with lake.client() as c:
        c.post(f"{TABLE_URL}/files/remove", json={"paths": sorted(stored), "missing-ok": True}, headers=bearer("writer"))
    shutil.rmtree(inside_dir)
    fifo_target.unlink()
    source.unlink()


# --- the dashboard: forged cookies, failed logins, Secure behind a proxy ------------------------


def _login(c: httpx.Client, token: str, headers: dict[str, str] | None = None) -> httpx.Response:
    html = {"Accept": "text/html", **(headers or {})}
    page = c.get("/admin/login", headers=html)
    assert page.status_code == 200
    m = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert m
    # Sent by hand: httpx keeps a Secure cookie (set behind the https proxy) off plain http.
    html["Cookie"] = f"shredcat_csrf={m.group(1)}"
    return c.post("/admin/login", data={"token": token, "csrf_token": m.group(1)}, headers=html)


def _v2_cookie(key: bytes, token: str, expiry: int) -> str:
    import base64

    digest = hashlib.sha256(token.encode()).digest()
    mac = hmac.new(key, b"shredcat-dashboard:v2:" + str(expiry).encode() + b":" + digest, hashlib.sha256).digest()
    return f"v2.{expiry}.{base64.urlsafe_b64encode(mac).decode().rstrip('=')}"


def test_a_cookie_forged_from_the_configuration_is_refused(lake: Lake) -> None:
    import base64

    digest = hashlib.sha256(TOKENS["admin"].encode()).digest()
    expiry = int(time.time()) + 3600
    v1 = hmac.new(digest, b"shredcat-dashboard:v1:" + str(expiry).encode(), hashlib.sha256).digest()
    forged = [
        f"v1.{expiry}.{base64.urlsafe_b64encode(v1).decode().rstrip('=')}",  # the old scheme
        _v2_cookie(digest, TOKENS["admin"], expiry),  # the new scheme keyed by the token's digest
        _v2_cookie(SESSION_KEY.encode(), TOKENS["admin"], int(time.time()) + 30 * 24 * 3600),  # expiry too far
    ]
    for value in forged:
        with lake.client(cookies={"shredcat_session": value}) as c:
            r = c.get("/admin", headers={"Accept": "text/html"})
            assert r.status_code == 303 and r.headers["location"].startswith("/admin/login"), value
    # The real key, within the lifetime, is accepted: the refusals above are about the forgery.
    with lake.client(cookies={"shredcat_session": _v2_cookie(SESSION_KEY.encode(), TOKENS["admin"], expiry)}) as c:
        assert c.get("/admin", headers={"Accept": "text/html"}).status_code == 200


def test_failed_logins_are_throttled_per_address(lake: Lake) -> None:
    with lake.client(ATTACKER) as c:
        for _ in range(10):
            assert _login(c, "guess").status_code == 401
        r = _login(c, "guess")
        assert r.status_code == 429 and int(r.headers["retry-after"]) >= 1
        # Throttled means the token is not even looked at.
        assert _login(c, TOKENS["admin"]).status_code == 429
    # Another address is not affected.
    with lake.client(UNTRUSTED) as c:
        assert _login(c, TOKENS["admin"]).status_code == 303
    lake.healthy()


def test_secure_cookie_only_behind_a_trusted_proxy(lake: Lake) -> None:
    https = {"X-Forwarded-Proto": "https"}
    with lake.client(TRUSTED) as c:
        r = _login(c, TOKENS["admin"], https)
        assert r.status_code == 303
        cookie = next(v for v in r.headers.get_list("set-cookie") if v.startswith("shredcat_session="))
        assert "secure" in cookie.lower()
    with lake.client(UNTRUSTED) as c:
        r = _login(c, TOKENS["admin"], https)
        assert r.status_code == 303
        cookie = next(v for v in r.headers.get_list("set-cookie") if v.startswith("shredcat_session="))
        assert "secure" not in cookie.lower()


# --- catalog errors -----------------------------------------------------------------------------


def test_a_sql_mistake_is_a_500_without_internals(tmp_path: Path) -> None:
    # A migrated catalog whose namespace table was then renamed: listing namespaces is a query
    # naming a missing table (an OperationalError in sqlite3, like "database is locked").
    import sqlite3

    db = tmp_path / "broken.db"
    env = server_env(f"sqlite:///{db}", roots=[str(tmp_path)])
    done = run_migrate(env)
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as con:
        con.execute("ALTER TABLE ducklake_schema RENAME TO gone")
    with running_server(env, tmp_path / "server.log") as server:
        r = httpx.get(server.base_url + "/v1/namespaces", headers=bearer("reader"), timeout=30)
        assert r.status_code == 500, r.text
        err = r.json()["error"]
        assert err["type"] == "internal_error" and "request id" in err["message"]
        for leak in ("no such table", "SELECT", "ducklake", "sqlite"):
            assert leak.lower() not in r.text.lower()
        assert "retry-after" not in r.headers
        assert httpx.get(server.base_url + "/health/live", timeout=10).status_code == 200


# --- client statistics, page tokens and filters beyond the limits (rows 2, 4, 6, 7, 13) ---------


def _catalog_state(lake: Lake) -> tuple[list[str], list[int], int]:
    """Live files, snapshot ids and the table's record count: what a refused request must not change."""
    with lake.client() as c:
        snaps = c.get(f"{TABLE_URL}/snapshots", headers=bearer("reader")).json()["snapshots"]
        records = c.get(TABLE_URL, headers=bearer("reader")).json()["live-record-count"]
    return lake.live_files(), [s["snapshot-id"] for s in snaps], records


def _stats_file(path: str, record_count: int, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "path": path,
        "file-size-bytes": 10_000_000,
        "record-count": record_count,
        "footer-size": 1000,
        "variant-columns": ["v"],
        "variant-stats": rows,
    }


def _row(i: int, **kw: Any) -> dict[str, Any]:
    return {
        "column": "v",
        "variant_path": f'"k{i}"',
        "shredded_type": "int64",
        "column_size_bytes": 10,
        "value_count": 1,
        "null_count": 0,
        "min_value": "1",
        "max_value": "2",
        **kw,
    }


def _refused(lake: Lake, body: dict[str, Any], status: int) -> httpx.Response:
    before = _catalog_state(lake)
    rss = vm_rss_kb(lake.pid)
    with lake.client() as c:
        r = c.post(COMMITS, json=body, headers=bearer("writer"))
    assert r.status_code == status, r.text[:500]
    assert vm_rss_kb(lake.pid) - rss < RSS_BOUND_KB
    assert _catalog_state(lake) == before
    lake.healthy()
    return r


def test_too_many_stats_rows_for_one_file_are_refused(lake: Lake) -> None:
    # Row 2: 20,000 rows for one file (the per-file row limit is 10,000): 413, not minutes of work.
    rows = [_row(i) for i in range(20_000)]
    r = _refused(lake, {"files": [_stats_file(str(lake.root / "rows.parquet"), 1, rows)]}, 413)
    assert r.json()["error"]["type"] == "limit_exceeded"
    assert "10000" in r.text.replace(",", "")


def test_huge_bounds_and_extra_stats_are_refused(lake: Lake) -> None:
    # Row 7: multi-megabyte strings in a statistics row (bounds are <= 256 bytes by DuckLake's rule).
    big = "x" * (3 * MiB)
    path = str(lake.root / "bounds.parquet")
    _refused(lake, {"files": [_stats_file(path, 1, [_row(0, shredded_type="varchar", min_value="a", max_value=big)])]}, 413)
    _refused(lake, {"files": [_stats_file(path, 1, [_row(0, extra_stats=big)])]}, 413)


def test_record_counts_beyond_bigint_are_refused_and_sums_stay_exact(lake: Lake) -> None:
    # Row 6: two files of 2^63 - 1 records would sum past BIGINT (and once printed as a float).
    big = 2**63 - 1
    a, b = str(lake.root / "big-a.parquet"), str(lake.root / "big-b.parquet")
    r = _refused(lake, {"files": [_stats_file(a, big, []), _stats_file(b, big, [])]}, 422)
    assert "record" in r.text
    _refused(lake, {"files": [_stats_file(a, 2**63, [])]}, 422)
    # Up to BIGINT the total is exact (it was once summed through a float: 18446744073709551616).
    with lake.client() as c:
        r = c.post(COMMITS, json={"files": [_stats_file(a, 2**62, []), _stats_file(b, 2**62 - 1, [])]}, headers=bearer("writer"))
        assert r.status_code == 200, r.text
        assert c.get(TABLE_URL, headers=bearer("reader")).json()["live-record-count"] == 2**63 - 1
        r = c.post(f"{TABLE_URL}/files/remove", json={"paths": [a, b]}, headers=bearer("writer"))
        assert r.status_code == 200, r.text
    lake.healthy()


def test_page_tokens_and_snapshot_ids_beyond_bigint_are_bad_requests(lake: Lake) -> None:
    # Row 4: integers past BIGINT in tokens, cursors and snapshot ids never reach the driver.
    from service import pagetoken

    forged = pagetoken.encode({"after": 2**70, "snapshot": 2**70})
    with lake.client() as c:
        for url in (f"{TABLE_URL}/files", f"{TABLE_URL}/snapshots"):
            r = c.get(url, params={"page-token": forged}, headers=bearer("reader"))
            assert r.status_code == 422, (url, r.text)
            assert r.json()["error"]["type"] == "bad_input"
        r = c.get(f"{TABLE_URL}/files", params={"snapshot-id": 2**70}, headers=bearer("reader"))
        assert 400 <= r.status_code < 500, r.text
        html = {"Accept": "text/html", **bearer("admin")}
        page = f"/admin/tables/{NS}/{TABLE}"
        for params in ({"cursor": pagetoken.encode([2**70, "x"]), "sort": "size"}, {"before": 2**70}):
            r = c.get(page, params=params, headers=html)
            assert r.status_code == 422 and r.headers["content-type"].startswith("text/html"), (params, r.text[:300])
    lake.healthy()


def test_filter_numbers_beyond_double_are_bad_requests(lake: Lake) -> None:
    # Row 13: 1e999 (and a 5,000-digit integer) in a JSON filter are 422, never 200 or 500.
    term = {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}
    with lake.client() as c:
        for literal in ("1e999", "-1e999", "9" * 5000):
            raw = '{"filter": {"type": "eq", "term": ' + json.dumps(term) + ', "value": ' + literal + "}}"
            r = c.post(f"{TABLE_URL}/plan", content=raw, headers={**bearer("reader"), "Content-Type": "application/json"})
            assert r.status_code == 422, (literal[:10], r.text[:300])
    lake.healthy()


def test_graceful_shutdown_completes_during_a_large_commit(tmp_path: Path) -> None:
    # Row 2: SIGTERM while a 10,000-row commit is being validated and written: the server exits.
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    root = tmp_path / "warehouse"
    root.mkdir()
    env = server_env(url, roots=[str(root)])
    assert run_migrate(env).returncode == 0
    with running_server(env, tmp_path / "server.log") as server:
        with httpx.Client(base_url=server.base_url, timeout=60) as c:
            c.post("/v1/namespaces", json={"namespace": [NS]}, headers=bearer("admin"))
            c.post(f"/v1/namespaces/{NS}/tables", json={"name": TABLE, "variant-columns": ["v"]}, headers=bearer("admin"))
        rows = [_row(i) for i in range(10_000)]
        body = {"files": [_stats_file(str(root / f"f{j}.parquet"), 1, rows) for j in range(3)]}

        def commit() -> None:
            with contextlib.suppress(httpx.HTTPError), httpx.Client(base_url=server.base_url, timeout=60) as c:
                c.post(COMMITS, json=body, headers=bearer("writer"))

        t = threading.Thread(target=commit, daemon=True)
        t.start()
        time.sleep(0.3)
        os.killpg(server.proc.pid, signal.SIGTERM)
        # A generous bound: the point is that it ends at all (it once ignored SIGTERM for minutes).
        assert server.proc.wait(timeout=120) is not None
        t.join(60)
