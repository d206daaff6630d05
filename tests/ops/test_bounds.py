"""Issue 32 against a real ``shredcat serve`` (auth on, SQLite, loopback): every request bounded
before its body is buffered. Rows 1 and 2: public and unmatched routes read at most their own
small limit or nothing, a body that stalls is cut by the body timeout, a plan body has its own
limit checked before it is read and is decoded off the event loop; row 3: arithmetic chains
refused on the raw text; row 5: a keyed removal's stored result stays small; row 6: decimal
literals; row 8: relative redirects; row 9: no file bytes in errors. (Row 4 is in
``test_connections.py``, row 7 in ``test_sessions.py``.)
Memory is VmRSS from ``/proc``; liveness is answered throughout; no wall-clock time is asserted
(the body timeout is a setting of 2 s here, and the tests only wait for its answer)."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.ops.support import run_migrate, server_env
from tests.ops.test_hardening import _body_chunks, _head, _send_until_answered, _status, bearer, vm_rss_kb
from tests.support.server import Server, running_server

pytestmark = pytest.mark.slow

MiB = 1024 * 1024
NS, TABLE = "lake", "events"
TABLE_URL = f"/v1/namespaces/{NS}/tables/{TABLE}"
#: Far below what buffering the bodies below would cost (10 x 30 MB).
RSS_BOUND_KB = 60 * 1024
BODY_SECONDS = 2


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("bounds")
    env = server_env(
        f"sqlite:///{base / 'catalog.db'}",
        roots=[str(base)],
        SHREDCAT_SESSION_SECRETS=json.dumps(["k" * 40]),
        SHREDCAT_BODY_TIMEOUT_SECONDS=str(BODY_SECONDS),
    )
    assert run_migrate(env).returncode == 0
    with running_server(env, base / "server.log") as s:
        s.env["ROOT"] = str(base)
        with httpx.Client(base_url=s.base_url, timeout=30) as c:
            assert c.post("/v1/namespaces", json={"namespace": [NS]}, headers=bearer("admin")).status_code == 200
            r = c.post(f"/v1/namespaces/{NS}/tables", json={"name": TABLE, "variant-columns": ["v"]}, headers=bearer("admin"))
            assert r.status_code == 200, r.text
        yield s


def _port(s: Server) -> int:
    return int(s.base_url.rsplit(":", 1)[1])


def _live(s: Server) -> None:
    assert httpx.get(s.base_url + "/health/live", timeout=30).status_code == 200


@pytest.mark.parametrize(
    ("path", "status"),
    [("/admin/login", 413), ("/nowhere/at/all", 404), ("/v1/namespaces/", 307), ("/health/live", 405)],
    ids=["login-form", "unmatched", "slash-redirect", "public-get-route"],
)
def test_public_and_unmatched_routes_read_at_most_their_small_limit(server: Server, path: str, status: int) -> None:
    """Row 1: ten chunked bodies of 30 MB without a token: each answered from its route's limit
    (the login form's 16 KiB, or nothing), the connection closed, the server's memory flat."""
    rss = vm_rss_kb(server.proc.pid)
    head = _head("POST", path, {"Content-Type": "application/x-www-form-urlencoded", "Transfer-Encoding": "chunked"})
    answers: list[tuple[bytes, int]] = []
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.create_connection(("127.0.0.1", _port(server)))) for _ in range(10)]
        for sock in socks:
            sock.sendall(head)
        _live(server)
        for sock in socks:
            answers.append(_send_until_answered(sock, _body_chunks(30 * MiB, chunked=True)))
    for answer, sent in answers:
        assert _status(answer) == status, answer[:300]
        assert b"connection: close" in answer.lower()
        assert sent < 30 * MiB
    assert vm_rss_kb(server.proc.pid) - rss < RSS_BOUND_KB
    _live(server)


@pytest.mark.parametrize(
    ("path", "role"), [("/admin/login", None), (f"{TABLE_URL}/commits", "writer"), (f"{TABLE_URL}/plan", "reader")]
)
def test_a_body_that_stalls_is_cut_by_the_body_timeout(server: Server, path: str, role: str | None) -> None:
    """Row 1: eight bodies stalled mid-way hold nothing for ever: 408 once the body timeout
    passes, connection closed; liveness answered meanwhile."""
    ctype = "application/x-www-form-urlencoded" if role is None else "application/json"
    headers = {"Content-Type": ctype, "Content-Length": "4000", **(bearer(role) if role else {})}
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.create_connection(("127.0.0.1", _port(server)))) for _ in range(8)]
        for sock in socks:
            sock.sendall(_head("POST", path, headers) + b"{" * 1000)
        _live(server)
        for sock in socks:
            sock.settimeout(10 * BODY_SECONDS)
            answer = b""
            while chunk := sock.recv(65536):  # the server closes it after answering
                answer += chunk
            assert _status(answer) == 408, answer[:300]
            assert b"request_timeout" in answer and b"connection: close" in answer.lower()
    _live(server)


@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
@pytest.mark.parametrize("table", [TABLE, "no_such_table"])
def test_a_huge_plan_body_is_refused_before_it_is_read(server: Server, chunked: bool, table: str) -> None:
    """Row 2: a 60 MB plan body (``{"sql": "true", "x": [[], ...]}``) from a reader: 413 at the
    plan limit, never decoded; three at once leave liveness answering and memory flat."""
    total = 60 * MiB
    headers = {"Content-Type": "application/json", **bearer("reader")}
    headers.update({"Transfer-Encoding": "chunked"} if chunked else {"Content-Length": str(total)})
    path = f"/v1/namespaces/{NS}/tables/{table}/plan"
    rss = vm_rss_kb(server.proc.pid)
    results: list[tuple[bytes, int]] = []

    def one() -> None:
        with socket.create_connection(("127.0.0.1", _port(server))) as sock:
            start = b'{"sql": "true", "x": ['
            sock.sendall(_head("POST", path, headers) + (b"%x\r\n%s\r\n" % (len(start), start) if chunked else start))
            results.append(_send_until_answered(sock, _body_chunks(total, chunked=chunked)))

    threads = [threading.Thread(target=one) for _ in range(3)]
    for t in threads:
        t.start()
    _live(server)
    for t in threads:
        t.join(120)
    assert len(results) == 3
    for answer, sent in results:
        assert _status(answer) == 413 and b"limit_exceeded" in answer, answer[:300]
        assert sent < total
    assert vm_rss_kb(server.proc.pid) - rss < RSS_BOUND_KB
    _live(server)


def test_a_plan_body_within_its_limit_is_planned(server: Server) -> None:
    """The plan limit leaves room for a predicate of the longest allowed text."""
    from service.limits import MAX_PREDICATE_LENGTH

    sql = "variant_get(v, '$.id', 'bigint') = 1" + " " * (MAX_PREDICATE_LENGTH - 100)
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        r = c.post(f"{TABLE_URL}/plan", json={"sql": sql}, headers=bearer("reader"))
        assert r.status_code == 200, r.text[:300]
        r = c.post(f"{TABLE_URL}/plan", content=b'{"sql": 1', headers={**bearer("reader"), "Content-Type": "application/json"})
        assert r.status_code == 422 and r.json()["error"]["type"] == "validation_error", r.text


def test_a_get_with_an_endless_body_is_answered_and_closed(server: Server) -> None:
    """A body on a method that takes none is never read: the answer closes the connection, so a
    client streaming it for ever holds nothing."""
    with socket.create_connection(("127.0.0.1", _port(server))) as sock:
        sock.sendall(_head("GET", "/health/live", {"Transfer-Encoding": "chunked"}))
        answer, sent = _send_until_answered(sock, _body_chunks(30 * MiB, chunked=True))
        assert _status(answer) == 200 and b"connection: close" in answer.lower()
        assert sent < 30 * MiB


def test_trailing_slash_redirects_are_relative(server: Server) -> None:
    """Row 8: the ``Location`` of a trailing-slash redirect never comes from the ``Host`` header."""
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        for path, location in (("/v1/namespaces/", "/v1/namespaces"), ("/health/live/?a=1", "/health/live?a=1")):
            r = c.get(path, headers={"Host": "evil.example"})
            assert r.status_code == 307 and r.headers["location"] == location, (path, r.headers)
        r = c.get("//evil.example/", headers={"Host": "evil.example"})
        assert r.status_code == 404, r.headers


def test_errors_on_files_in_the_root_carry_none_of_their_bytes(server: Server) -> None:
    """Row 9: a writer may name any file in the warehouse root; refusing it must not reveal its
    last bytes (the magic, the footer length) or its first ones."""
    import struct

    root = Path(server.env["ROOT"])
    files = {
        "trailing.parquet": b"PAR1" + b"\0" * 100 + b"TOPSECRT",
        "length.parquet": b"PAR1" + b"\0" * 100 + struct.pack("<I", 0x7FFF_FF5E) + b"PAR1",
        "leading.parquet": b"SCRT" + b"\0" * 100 + struct.pack("<I", 20) + b"PAR1",
        "huge.parquet": None,  # a sparse file claiming a footer past the limit
    }
    for name, data in files.items():
        if data is None:
            with (root / name).open("wb") as f:
                f.write(b"PAR1")
                f.truncate(40 * MiB)
                f.seek(40 * MiB - 8)
                f.write(struct.pack("<I", 0x1357_9BDF & 0x01FF_FFFF) + b"PAR1")
        else:
            (root / name).write_bytes(data)
    with httpx.Client(base_url=server.base_url, timeout=30) as c:
        for name in files:
            r = c.post(f"{TABLE_URL}/commits", json={"paths": [str(root / name)]}, headers=bearer("writer"))
            assert r.status_code == 422 and r.json()["error"]["type"] == "invalid_parquet", r.text
            text = r.text
            for leak in ("ECRT", "SCRT", "\\x", str(0x7FFF_FF5E), str(0x1357_9BDF & 0x01FF_FFFF)):
                assert leak not in text, (name, text)
    for name in files:
        (root / name).unlink()


def test_arithmetic_chains_and_decimal_literals_get_4xx(server: Server) -> None:
    """Rows 3 and 6: four 262 KB ``1+1+...+1`` predicates at once are 413 (refused on the raw
    text) with liveness answered; decimal literals beyond their type are 422 naming them (they
    were 500s), or a sound plan."""
    chain = "variant_get(v, '$.user.id', 'bigint') = " + "+".join(["1"] * 131_000)
    with httpx.Client(base_url=server.base_url, timeout=60) as c:
        results: list[int] = []

        def one() -> None:
            results.append(c.post(f"{TABLE_URL}/plan", json={"sql": chain}, headers=bearer("reader")).status_code)

        threads = [threading.Thread(target=one) for _ in range(4)]
        for t in threads:
            t.start()
        _live(server)
        for t in threads:
            t.join(60)
        assert results == [413] * 4
        for literal, status, named in (
            ("1." + "0" * 99 + "1BD", 422, "DECIMAL(101,100)"),
            ("1e400BD", 422, "DECIMAL(401,0)"),
            ("CAST('1e400' AS DECIMAL(38,2))", 200, None),
        ):
            sql = f"variant_get(v, '$.p', 'decimal(38,2)') = {literal}"
            r = c.post(f"{TABLE_URL}/plan", json={"sql": sql}, headers=bearer("reader"))
            assert r.status_code == status, r.text
            if named:
                assert named in r.json()["error"]["message"]


def test_a_huge_keyed_removal_stores_a_small_result_and_replays_it(server: Server) -> None:
    """Row 5: a remove-only commit with remove-missing-ok, 9,999 missing 2 KB paths and a new
    idempotency key: the key's stored result is a few hundred bytes (it was ~20 MB), and the
    replay is the same answer."""
    import sqlite3

    missing = ["s3://lake/" + "p" * 2000 + f"{i:05d}.parquet" for i in range(9_999)]
    body = {"files": [], "remove": missing, "remove-missing-ok": True}
    headers = {**bearer("writer"), "Idempotency-Key": "huge-removal"}
    with httpx.Client(base_url=server.base_url, timeout=120) as c:
        first = c.post(f"{TABLE_URL}/commits", json=body, headers=headers)
        assert first.status_code == 200, first.text[:300]
        again = c.post(f"{TABLE_URL}/commits", json=body, headers=headers)
        assert again.status_code == 200
    a, b = first.json(), again.json()
    assert len(a["missing"]) == 9_999 and b["missing"] == a["missing"] and b["snapshot-id"] == a["snapshot-id"]
    db = Path(server.env["SHREDCAT_DATABASE_URL"].removeprefix("sqlite:///"))
    with sqlite3.connect(db) as con:
        [(size,)] = con.execute(
            "SELECT length(result) FROM shredcat_commit_key WHERE idempotency_key = 'huge-removal'"
        ).fetchall()
    assert size < 1000
