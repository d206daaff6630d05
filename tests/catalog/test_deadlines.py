"""The standby deadline's watchdog (:mod:`service.catalog.deadlines`) without PostgreSQL: socket
pairs, and a fake server that completes psycopg's start-up handshake, then never answers (as a
frozen standby whose kernel still acknowledges what it is sent)."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator

import pytest
import sqlalchemy.exc
from sqlalchemy import create_engine

from service.catalog import deadlines
from service.catalog.db import make_engine
from service.catalog.deadlines import Watchdog, install, no_answer_error, with_statement_timeout
from tests.support.guard import GUARD_S, returns


def test_a_wait_past_its_deadline_has_its_socket_shut_down() -> None:
    dog = Watchdog()
    a, b = socket.socketpair()
    with a, b:
        a.settimeout(GUARD_S)
        armed = dog.arm(a.fileno, 0.1)
        assert a.recv(1) == b""  # woken by the shutdown: without it, a timeout after GUARD_S
        assert dog.disarm(armed) is True
        assert dog.pending() == 0


def test_a_wait_disarmed_in_time_keeps_its_socket() -> None:
    dog = Watchdog()
    (a, b), (c, d) = socket.socketpair(), socket.socketpair()
    with a, b, c, d:
        # 0.5 s between arming and disarming: a process held up that long fires the deadline first.
        early = dog.arm(a.fileno, 0.5)
        assert dog.disarm(early) is False
        c.settimeout(GUARD_S)
        late = dog.arm(c.fileno, 0.6)
        assert c.recv(1) == b"" and dog.disarm(late)  # the later deadline fired...
        # ...so the earlier one has passed: its socket still carries data both ways.
        b.sendall(b"x")
        assert a.recv(1) == b"x"
        a.sendall(b"y")
        assert b.recv(1) == b"y"


def test_deadlines_ended_in_order_leave_the_heap_empty() -> None:
    dog = Watchdog()
    armed = [dog.arm(lambda: -1, 60.0) for _ in range(1000)]
    assert dog.pending() == 1000
    for x in armed:
        dog.disarm(x)
    assert dog.pending() == 0


def test_a_connection_closed_before_its_deadline_fires_is_left_alone() -> None:
    dog = Watchdog()
    a, b = socket.socketpair()
    with a, b:
        b.settimeout(GUARD_S)

        def closed() -> int:
            raise OSError("the connection is closed")

        dog.arm(closed, 0.01)
        probe = dog.arm(b.fileno, 0.1)
        assert b.recv(1) == b"" and dog.disarm(probe)  # the thread went past the closed one


def test_statement_timeout_options_come_first_so_the_urls_own_wins() -> None:
    assert with_statement_timeout(None, 10) == "-c statement_timeout=10000"
    assert with_statement_timeout("-c jit=off", 0.25) == "-c statement_timeout=250 -c jit=off"
    assert with_statement_timeout("", 0.0001) == "-c statement_timeout=1"


def test_install_leaves_other_databases_alone() -> None:
    engine = create_engine("sqlite://")
    install(engine, 1.0, label="x")
    with engine.connect() as conn:
        assert conn.exec_driver_sql("SELECT 1").scalar() == 1


# --- psycopg against a server that never answers -----------------------------------------------


class SilentServer:
    """Accepts PostgreSQL connections, completes the start-up handshake (no SSL, no password), then
    reads what is sent and never answers. Records each start-up packet's parameters.
    ``handshake=False``: answers nothing at all, the start-up included (frozen before it)."""

    def __init__(self, *, handshake: bool = True) -> None:
        self.handshake = handshake
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.startups: list[dict[str, str]] = []
        self.conns: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                if self.listener.fileno() == -1:  # closed
                    return
                continue  # a client that gave up before it was accepted (ECONNABORTED)
            self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        try:
            while not self.handshake and conn.recv(65536):
                pass
            while True:
                (length,) = struct.unpack("!i", _read(conn, 4))
                body = _read(conn, length - 4)
                (code,) = struct.unpack("!i", body[:4])
                if code in (80877103, 80877104):  # SSLRequest, GSSENCRequest: refused
                    conn.sendall(b"N")
                    continue
                words = body[4:].split(b"\0")
                self.startups.append({k.decode(): v.decode() for k, v in zip(words[::2], words[1::2], strict=False) if k})
                break
            reply = _message(b"R", struct.pack("!i", 0))  # AuthenticationOk
            for k, v in (("server_version", "15.0"), ("client_encoding", "UTF8"), ("DateStyle", "ISO, MDY"),
                         ("integer_datetimes", "on"), ("standard_conforming_strings", "on")):
                reply += _message(b"S", k.encode() + b"\0" + v.encode() + b"\0")
            reply += _message(b"K", struct.pack("!ii", 1, 2)) + _message(b"Z", b"I")
            conn.sendall(reply)
            while conn.recv(65536):  # frozen: every query is read, none answered
                pass
        except (OSError, struct.error, ConnectionError):
            pass

    def startup(self) -> dict[str, str]:
        """The one start-up packet received, waited for: it was sent before the client gave up,
        but a descheduled accept thread may read it only afterwards (seen on a loaded machine)."""
        deadline = time.monotonic() + 10
        while not self.startups and time.monotonic() < deadline:
            time.sleep(0.01)
        (startup,) = self.startups
        return startup

    def dsn(self) -> str:
        return f"host=127.0.0.1 port={self.port} user=u dbname=d sslmode=disable gssencmode=disable connect_timeout=5"

    def close(self) -> None:
        self.listener.close()
        for c in self.conns:
            c.close()


def _read(conn: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def _message(kind: bytes, payload: bytes) -> bytes:
    return kind + struct.pack("!i", len(payload) + 4) + payload


@pytest.fixture
def silent() -> Iterator[SilentServer]:
    server = SilentServer()
    try:
        yield server
    finally:
        server.close()


def test_a_psycopg_statement_the_server_never_answers_fails_at_its_deadline(silent: SilentServer) -> None:
    cls = deadlines._deadline_connection_class()
    conn = cls.connect(silent.dsn())
    conn.deadline_s, conn.label = 0.2, "read database silent"  # type: ignore[attr-defined]
    with pytest.raises(no_answer_error(), match=r"read database silent did not answer within 0\.2 s"):
        returns(lambda: conn.execute("SELECT 1"))
    assert conn.closed and deadlines.WATCHDOG.pending() == 0


def test_an_engine_given_a_deadline_gives_up_on_a_server_that_never_answers(
    silent: SilentServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through SQLAlchemy, as the read router's standbys: the first connect's own queries (the
    dialect's set-up) already hit the deadline; each session asks for the statement timeout."""
    engine = make_engine(
        f"postgresql+psycopg://u@127.0.0.1:{silent.port}/d?sslmode=disable&gssencmode=disable", pool_size=1
    )
    # Long enough for the handshake to finish first on a loaded machine (the case under test is
    # the queries after it; a stall past a shorter deadline gave up while connecting instead).
    install(engine, 0.5, label="read database silent")
    monkeypatch.setattr(deadlines, "GRACE_S", 0.5)
    try:
        with pytest.raises(sqlalchemy.exc.OperationalError) as raised:
            returns(lambda: engine.connect().exec_driver_sql("SELECT 1"))
    finally:
        engine.dispose()
    assert isinstance(raised.value.orig, no_answer_error())
    assert silent.startup()["options"].startswith("-c statement_timeout=500 -c jit=off")


def test_waits_that_need_no_answer_arm_no_deadline(silent: SilentServer, monkeypatch: pytest.MonkeyPatch) -> None:
    """psycopg also runs settings and a rollback outside a transaction through its wait (5 of a
    read's 7): they send nothing, so they cost no deadline; a statement costs one."""
    import psycopg

    conn = deadlines._deadline_connection_class().connect(silent.dsn())
    conn.deadline_s = 0.2  # type: ignore[attr-defined]
    armed: list[float] = []
    arm = deadlines.WATCHDOG.arm
    monkeypatch.setattr(deadlines.WATCHDOG, "arm", lambda fileno, s: armed.append(s) or arm(fileno, s))
    conn.autocommit = True
    conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
    conn.autocommit = False
    conn.rollback()
    assert armed == []
    with pytest.raises(no_answer_error()):
        returns(lambda: conn.execute("SELECT 1"))
    assert armed == [0.2]


def test_an_engine_that_also_writes_gets_no_statement_timeout_and_its_reads_fail_as_unresponsive(
    silent: SilentServer,
) -> None:
    """The primary's engine (``shared_with_writes``): its sessions also write, so they get no server-side
    statement timeout; a read past the deadline (``timeout_s`` + GRACE_S, as on a standby) is a DatabaseUnresponsiveError naming the database, its own message. Installed once:
    a second install (another router on the same engine) changes nothing."""
    from service.catalog.db import run_transaction
    from service.errors import DatabaseUnresponsiveError

    engine = make_engine(
        f"postgresql+psycopg://u@127.0.0.1:{silent.port}/d?sslmode=disable&gssencmode=disable", pool_size=1
    )
    install(engine, 0.2, label="the primary database", shared_with_writes=True)
    install(engine, 30.0, label="another", shared_with_writes=True)
    try:
        with pytest.raises(DatabaseUnresponsiveError, match=r"the primary database did not answer within 1\.2 s"):
            returns(lambda: run_transaction(engine, lambda conn: conn.exec_driver_sql("SELECT 1").scalar(), write=False))
    finally:
        engine.dispose()
    assert "statement_timeout" not in silent.startup()["options"]


def test_a_new_connection_the_server_never_answers_fails_as_unresponsive_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Connecting goes through psycopg's own wait, not the armed one: a server that accepts TCP and
    never answers the start-up is given up on at the read deadline, with the read's typed error
    and message (before: psycopg's connect timeout, 5 s here, then 'unavailable')."""
    from service.catalog.db import run_transaction
    from service.errors import DatabaseUnresponsiveError

    mute = SilentServer(handshake=False)
    engine = make_engine(
        f"postgresql+psycopg://u@127.0.0.1:{mute.port}/d?sslmode=disable&gssencmode=disable&connect_timeout=5",
        pool_size=1,
    )
    monkeypatch.setattr(deadlines, "GRACE_S", 0.1)
    install(engine, 0.2, label="the primary database", shared_with_writes=True)
    try:
        with pytest.raises(DatabaseUnresponsiveError, match=r"the primary database did not answer within 0\.3 s"):
            returns(lambda: run_transaction(engine, lambda conn: conn.exec_driver_sql("SELECT 1").scalar()))
    finally:
        engine.dispose()
        mute.close()


def test_a_new_connection_waits_for_an_answer_the_deadline_or_the_shorter_connect_timeout() -> None:
    assert deadlines.connect_bound(11.0, 10) == 10
    assert deadlines.connect_bound(1.5, 10) == 1.5
    assert deadlines.connect_bound(11.0, 1) == 2  # libpq's minimum
    assert deadlines.connect_bound(11.0, "3") == 3
    assert deadlines.connect_bound(11.0, 0) == deadlines.connect_bound(11.0, None) == 11.0
