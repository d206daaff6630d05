"""Issue 32 row 4 against a real ``shredcat serve`` (auth on, SQLite, loopback), with real
sockets: clients sending their request head a byte at a time, many idle connections, idle
kept-alive connections. The header timeout closes slow heads, the connection cap keeps the
server's descriptors bounded (counted in ``/proc/<pid>/fd``) by closing the oldest waiting
connection, and ``/health/live`` is answered throughout. No wall-clock time is asserted: the
timeouts are settings of 1-2 s here, and the tests only wait (up to a generous socket timeout)
for the server to act."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import pytest

from tests.ops.support import run_migrate, server_env
from tests.support.server import Server, running_server

pytestmark = pytest.mark.slow

CAP = 100
HEADER_SECONDS = 2
KEEPALIVE_SECONDS = 1


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    base = tmp_path_factory.mktemp("connections")
    env = server_env(
        f"sqlite:///{base / 'catalog.db'}",
        SHREDCAT_HEADER_TIMEOUT_SECONDS=str(HEADER_SECONDS),
        SHREDCAT_KEEPALIVE_TIMEOUT_SECONDS=str(KEEPALIVE_SECONDS),
        SHREDCAT_MAX_CONNECTIONS=str(CAP),
    )
    assert run_migrate(env).returncode == 0
    with running_server(env, base / "server.log") as s:
        yield s


def _port(s: Server) -> int:
    return int(s.base_url.rsplit(":", 1)[1])


def _open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def _live(s: Server) -> None:
    # A fresh connection each time, as a liveness probe makes.
    with httpx.Client(base_url=s.base_url, timeout=30) as c:
        assert c.get("/health/live").status_code == 200


def _closed_by_server(sock: socket.socket) -> bytes:
    """What the server sent before closing ``sock`` (waits at most 30 s for it to close)."""
    sock.settimeout(30)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except ConnectionResetError:
        pass
    return out


def test_heads_sent_a_byte_at_a_time_are_cut_and_liveness_is_answered(server: Server) -> None:
    head = b"GET /health/live HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
    base_fds = _open_fds(server.proc.pid)
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.create_connection(("127.0.0.1", _port(server)))) for _ in range(150)]
        for i in range(3 * HEADER_SECONDS * 4):  # a byte per socket every quarter second
            for sock in socks:
                with contextlib.suppress(OSError):  # closed by the server already
                    sock.send(head[i : i + 1])
            if i % 4 == 0:
                _live(server)
                # Never more than the cap (plus the probe's own and the process's other files).
                assert _open_fds(server.proc.pid) <= base_fds + CAP + 2
            time.sleep(0.25)
        answers = [_closed_by_server(sock) for sock in socks]
    # Not one of them got its request answered: each was closed with a 408 (or closed to make
    # room for newer connections, also with a 408).
    assert any(answers) and all(a.startswith(b"HTTP/1.1 408 ") for a in answers if a), {a[:40] for a in answers}
    assert not any(b" 200 " in a for a in answers)
    _live(server)


def test_many_idle_connections_stay_under_the_cap(server: Server) -> None:
    base_fds = _open_fds(server.proc.pid)
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.create_connection(("127.0.0.1", _port(server)))) for _ in range(3 * CAP)]
        _live(server)
        assert _open_fds(server.proc.pid) <= base_fds + CAP + 2
        # The oldest were closed to make room (with a 408); the newest are still open.
        assert _closed_by_server(socks[0]).startswith(b"HTTP/1.1 408 ")
    _live(server)


def test_an_idle_kept_alive_connection_is_closed(server: Server) -> None:
    with socket.create_connection(("127.0.0.1", _port(server))) as sock:
        sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(30)
        first = b""
        while b"\r\n\r\n" not in first or len(first.partition(b"\r\n\r\n")[2]) < _length(first):
            first += sock.recv(65536)  # headers and body may come in two segments
        assert first.startswith(b"HTTP/1.1 200 ")
        assert _closed_by_server(sock) == b""  # nothing more: closed after the keep-alive timeout


def _length(answer: bytes) -> int:
    head = answer.partition(b"\r\n\r\n")[0].lower()
    return int(head.split(b"content-length: ", 1)[1].split(b"\r\n", 1)[0])


def test_with_1024_open_files_the_default_cap_keeps_the_server_answering(tmp_path: Path) -> None:
    """Row 4 as found: a server limited to 1,024 open files, 1,100 idle connections. The default
    cap (three quarters of the limit) closes the oldest waiting ones, so descriptors never run
    out and a new connection (the liveness probe) is still accepted and answered."""
    import resource

    from service.api.transport import auto_max_connections

    env = server_env(f"sqlite:///{tmp_path / 'catalog.db'}")
    assert run_migrate(env).returncode == 0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 2400:
        pytest.skip(f"this test needs 2,400 open files for its own sockets (hard limit {hard})")
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # inherited by the server
    try:
        with running_server(env, tmp_path / "server.log") as server:
            resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, 2400), hard))  # for this test's sockets
            limits = Path(f"/proc/{server.proc.pid}/limits").read_text()
            assert any(line.startswith("Max open files") and " 1024 " in line for line in limits.splitlines())
            cap = 1024 * 3 // 4
            with ExitStack() as socks:
                for _ in range(1100):
                    socks.enter_context(socket.create_connection(("127.0.0.1", _port(server))))
                _live(server)
                assert _open_fds(server.proc.pid) <= cap + 64  # the cap plus the process's other files
            _live(server)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert auto_max_connections() == max(16, soft * 3 // 4)
