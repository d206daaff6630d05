"""A client-side deadline on every round trip of a read to a catalog database (a hot standby, or
the primary), so one that stops answering hangs no thread.

A standby frozen with its TCP connections up (its processes stopped, a paused VM, a black hole
after the handshake) answers nothing, yet the kernel still acknowledges what is sent: TCP
keepalives and ``tcp_user_timeout`` never fire, a server-side ``statement_timeout`` cannot run in a
stopped server, and a cancel request goes to its stopped postmaster. ``connect_timeout`` bounds
connecting only. So the client keeps the clock: each wait of a standby connection on its server
(a statement, a fetch of a streamed result, a commit or rollback: everything psycopg does goes
through ``Connection.wait``) is armed with a deadline, and **one** watchdog thread for the process
shuts the socket down (``shutdown(SHUT_RDWR)``, which wakes the blocked wait at once) of any wait
still under way at its deadline. psycopg then raises, the connection is broken (SQLAlchemy
invalidates it rather than pool it), and the caller sees an ``OperationalError`` naming the database
and the deadline (:func:`no_answer_error`; :func:`service.catalog.db.translate_error` makes it a
:class:`~service.errors.DatabaseUnresponsiveError`).

**Opening a connection** goes through psycopg's own wait, bounded by ``connect_timeout`` only: a
server that accepts TCP but never answers the start-up (frozen) would hold it that long, then fail
as if unreachable. So while a connection waits for the server's answer (its TCP connection up),
it is given up on at the same deadline (or ``connect_timeout``, when shorter) with the same
error; one still connecting TCP (a host down) is left to ``connect_timeout``. Nothing is sent
before the connection opens, so this holds for writes' connections too.

Its server-side complement: standby sessions start with ``statement_timeout`` at the read timeout
(libpq ``options``), so a standby that is slow but alive cancels the statement itself and keeps the
connection; the client deadline is :data:`GRACE_S` later, for one that does not even do that.

**The primary** (``shared_with_writes``): its sessions also write, so only its read transactions
(:func:`service.catalog.db.transaction` with ``write=False``, :func:`arm_read`) are armed, with the
standbys' client deadline (the read timeout and :data:`GRACE_S`: one bound for a read on any
database, and a loaded primary is not given up on sooner than a standby; a new connection's first
queries, reads too, are armed). Its sessions get no ``statement_timeout`` (writes share them), but
each armed read transaction does, at the read timeout (``SET LOCAL``, sent in the same message as
its ``BEGIN``: no round trip of its own), so a primary that is slow but alive stops a read the
client would give up on, rather than run it on for nobody while it is struggling; the read then
fails as unresponsive (a ``QueryCanceled`` that :func:`gave_up` knows: the connection is rolled
back and kept). Writes (commits,
removals, migrations, ``ANALYZE``) keep no client deadline, on purpose: a socket shut while a
COMMIT is under way leaves its outcome unknown to the client (a write without an idempotency key,
such as a removal or the CLI's, could not be replayed safely), a migration or a 10,000-file commit
may rightly take longer than any read, and nothing but the primary can take a write anyway, so a
deadline would trade a hang for an unknown outcome and the primary's work for nothing. A frozen
primary holds those writes (and their pooled connections) until it answers again, as before; the
caller's own HTTP timeout bounds its wait, and an idempotency key makes its retry safe.

Arming costs two lock round trips and a heap push per wait on the server (two per read: the
statement, the commit; ``bench/deadlines.py``); no thread is started per statement.
"""

from __future__ import annotations

import contextlib
import contextvars
import heapq
import itertools
import os
import socket
import threading
import time
import weakref
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

from sqlalchemy import event
from sqlalchemy.engine import Connection, Engine

if TYPE_CHECKING:
    import psycopg
    from psycopg.abc import PQGen

#: Seconds the client waits past the server's own ``statement_timeout`` before it closes the
#: connection: the server's cancel (the connection kept) comes first from a standby that runs.
GRACE_S = 1.0


class Armed:
    """One wait's deadline (:meth:`Watchdog.arm`)."""

    __slots__ = ("deadline", "done", "fileno", "fired")

    def __init__(self, deadline: float, fileno: Callable[[], int]) -> None:
        self.deadline = deadline
        self.fileno = fileno
        #: Disarmed or fired: the watchdog has nothing more to do with it.
        self.done = False
        #: The deadline passed and the socket was shut down.
        self.fired = False


class Watchdog:
    """Shuts down the socket of each armed wait still under way at its deadline, from one daemon
    thread (started on first use, again in a forked child) that sleeps until the earliest one."""

    def __init__(self) -> None:
        self._reset()
        os.register_at_fork(after_in_child=self._reset)  # the parent's thread is not the child's

    def _reset(self) -> None:
        # Taken as the plain lock by arm and disarm (a C-level enter, unlike the condition's).
        self._lock = threading.Lock()
        self._cond = threading.Condition(self._lock)
        self._heap: list[tuple[float, int, Armed]] = []
        self._seq = itertools.count()
        self._thread: threading.Thread | None = None
        #: When the thread wakes next (monotonic; inf: when notified).
        self._wake_at = float("inf")

    def arm(self, fileno: Callable[[], int], timeout_s: float) -> Armed:
        """A deadline ``timeout_s`` from now for the socket ``fileno()`` gives (asked only when it
        fires, under the lock :meth:`disarm` takes: a socket disarmed and closed is never shut)."""
        armed = Armed(time.monotonic() + timeout_s, fileno)
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="shredcat-deadlines", daemon=True)
                self._thread.start()
            heapq.heappush(self._heap, (armed.deadline, next(self._seq), armed))
            # Only a deadline before the thread's next wake needs it now; with one timeout for all,
            # that is the first after an idle spell (a wake per arm cost more than the rest).
            if armed.deadline < self._wake_at:
                self._wake_at = armed.deadline
                self._cond.notify()
        return armed

    def disarm(self, armed: Armed) -> bool:
        """End ``armed``'s deadline; whether it had fired (the socket is then shut down)."""
        with self._lock:
            armed.done = True
            heap = self._heap
            # Deadlines are mostly armed in the order they end, so the heap stays as small as the
            # waits under way rather than growing with every wait of the last timeout.
            while heap and heap[0][2].done:
                heapq.heappop(heap)
            return armed.fired

    def pending(self) -> int:
        """How many deadlines the heap holds (waits under way, and some already ended)."""
        with self._cond:
            return len(self._heap)

    def _run(self) -> None:
        with self._cond:
            while True:
                now = time.monotonic()
                heap = self._heap
                while heap and (heap[0][2].done or heap[0][0] <= now):
                    armed = heapq.heappop(heap)[2]
                    if not armed.done:
                        armed.done = armed.fired = True
                        _shut_down(armed.fileno)
                self._wake_at = heap[0][0] if heap else float("inf")
                self._cond.wait(self._wake_at - now if heap else None)


def _shut_down(fileno: Callable[[], int]) -> None:
    """Shut the socket down both ways: a wait blocked on it wakes and reads its end. The
    descriptor is duplicated, so closing the ``socket`` object leaves the connection's own."""
    try:
        fd = os.dup(fileno())
    except Exception:  # the connection closed already: nothing waits on it
        return
    try:
        sock = socket.socket(fileno=fd)
    except OSError:  # not a socket
        os.close(fd)
        return
    with sock, contextlib.suppress(OSError):  # OSError: not connected any more
        sock.shutdown(socket.SHUT_RDWR)


#: The process's watchdog.
WATCHDOG = Watchdog()


def with_statement_timeout(options: str | None, timeout_s: float) -> str:
    """libpq ``options`` that set ``statement_timeout`` to ``timeout_s``, before ``options`` (so
    that a ``statement_timeout`` the URL sets itself wins)."""
    mine = f"-c statement_timeout={_ms(timeout_s)}"
    return f"{mine} {options}" if options else mine


def _ms(timeout_s: float) -> int:
    """``timeout_s`` as a ``statement_timeout`` (milliseconds; 0 would mean none)."""
    return max(1, round(timeout_s * 1000))


#: The engines :func:`install` has given a deadline (a second install is a no-op).
_installed: weakref.WeakSet[Engine] = weakref.WeakSet()


def install(engine: Engine, timeout_s: float, *, label: str, shared_with_writes: bool = False) -> None:
    """Give ``engine``'s connections (PostgreSQL only; others are left as they are) a
    ``statement_timeout`` of ``timeout_s`` and a client deadline :data:`GRACE_S` later on each
    wait. ``shared_with_writes`` (the primary's engine): both in read transactions only
    (:func:`arm_read`; the ``statement_timeout`` set local to each; see the module docstring). Call it before the engine connects (connections opened before keep no deadline);
    once per engine: the first call's settings stay."""
    if engine.dialect.name != "postgresql" or engine in _installed:
        return
    _installed.add(engine)
    cls = _deadline_connection_class()

    @event.listens_for(engine, "do_connect")
    def _connect(_dialect: Any, _record: Any, cargs: Any, cparams: dict[str, Any]) -> Any:
        # A copy: the engine passes the same dict to every connect.
        params = {**cparams}
        if not shared_with_writes:
            params["options"] = with_statement_timeout(_text(cparams.get("options")), timeout_s)
        with _connecting(connect_bound(timeout_s + GRACE_S, cparams.get("connect_timeout")), label):
            conn: Any = cls.connect(*cargs, **params)
        conn.deadline_s = timeout_s + GRACE_S
        if shared_with_writes:
            # Armed until the dialect's first queries on it (reads) are done: see _connected.
            conn.read_deadline_s = conn.deadline_s
            conn.read_timeout_ms = _ms(timeout_s)
        conn.label = label
        return conn

    if shared_with_writes:

        @event.listens_for(engine, "connect")
        def _connected(dbapi: Any, _record: Any) -> None:
            # Run after the dialect's own connect listener (registered by create_engine, so first).
            dbapi.deadline_s = None


def connect_bound(deadline_s: float, connect_timeout: Any) -> float:
    """Seconds a new connection may wait for the server's answer once its TCP connection is up:
    the deadline of a wait on an open connection, or the connect timeout when shorter (libpq's
    rules: at least 2 s; 0 or none, no timeout)."""
    try:
        limit = int(float(connect_timeout))
    except (TypeError, ValueError):
        return deadline_s
    return deadline_s if limit <= 0 else min(deadline_s, max(2, limit))


#: The bound and label of the connection the thread is opening (:func:`_connecting`).
_CONNECTING: contextvars.ContextVar[tuple[float, float, str] | None] = contextvars.ContextVar(
    "shredcat_connecting", default=None
)


@contextlib.contextmanager
def _connecting(bound_s: float, label: str) -> Iterator[None]:
    """Within the block, a connection being opened gives up after ``bound_s`` seconds waiting on
    the server's answer (from now: before psycopg starts its own connect timeout's clock, so that
    at an equal bound this one, the typed error, fires first)."""
    token = _CONNECTING.set((time.monotonic() + bound_s, bound_s, label))
    try:
        yield
    finally:
        _CONNECTING.reset(token)


def arm_read(conn: Connection) -> Any:
    """Arm the waits of the read transaction about to run on ``conn`` when its engine's deadline
    is for reads only (``install(shared_with_writes=True)``); what to pass to :func:`disarm_read`
    when it ends (None: nothing was armed). Set per transaction, not per connection event: a
    ``begin`` listener cost each read of every engine 25 µs of CPU (``bench/deadlines.py``)."""
    dbapi = conn.connection.dbapi_connection
    deadline_s = getattr(dbapi, "read_deadline_s", None)
    if deadline_s is None:
        return None
    # Also what makes its BEGIN set the statement timeout (DeadlineConnection._start_query).
    dbapi.deadline_s = deadline_s  # type: ignore[union-attr]  # not None: it held read_deadline_s (above)
    return dbapi


def disarm_read(dbapi: Any) -> None:
    """End what :func:`arm_read` armed: the connection goes back to the pool unarmed, for writes."""
    if dbapi is not None:
        dbapi.deadline_s = None


def _text(value: Any) -> str | None:
    """A URL query value (a tuple when repeated) as one string."""
    if isinstance(value, (tuple, list)):
        return " ".join(value)
    return None if value is None else str(value)


_classes: dict[str, Any] = {}


def _deadline_connection_class() -> type[psycopg.Connection[Any]]:
    """The psycopg connection class whose waits are armed (built on first use, so that importing
    this module imports no driver)."""
    if "connection" not in _classes:
        _classes["connection"], _classes["error"], _classes["timed_out"] = _build_classes()
    return _classes["connection"]


def no_answer_error() -> type[Exception]:
    """The error a wait past its deadline raises (a ``psycopg.OperationalError``)."""
    _deadline_connection_class()
    return _classes["error"]


def gave_up(error: BaseException | None) -> bool:
    """Whether ``error`` (a driver error) is a wait that passed its deadline, or a read the
    primary cancelled at its read timeout (without importing the driver: before any deadline is
    installed, none can have)."""
    cls = _classes.get("error")
    return cls is not None and isinstance(error, (cls, _classes["timed_out"]))


def _build_classes() -> tuple[type[psycopg.Connection[Any]], type[Exception], type[Exception]]:
    import psycopg
    from psycopg.abc import PQGenConn

    class NoAnswer(psycopg.OperationalError):
        """The server did not answer a wait within the connection's deadline: it was closed."""

    class TimedOut(psycopg.errors.QueryCanceled):
        """The primary cancelled a read at the statement timeout its transaction set: its
        SQLSTATE (57014) is kept, so the transaction is rolled back and the connection pooled."""

    class DeadlineConnection(psycopg.Connection[Any]):
        #: Seconds each wait may take (set by :func:`install`'s connect).
        deadline_s: float | None = None
        #: The primary's: the ``statement_timeout`` set local to each armed read transaction.
        read_timeout_ms: int | None = None
        label = "the database"

        def _start_query(self) -> PQGen[None]:
            timeout_ms = self.read_timeout_ms
            if timeout_ms is None or self.deadline_s is None or self._autocommit:
                return (yield from super()._start_query())
            if self.pgconn.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                return None  # in a transaction already: nothing to start
            begin = self._get_tx_start_command()
            set_local = b"SET LOCAL statement_timeout = %d" % timeout_ms
            if self._pipeline:  # both queued: sent together with what follows
                yield from self._exec_command(begin)
                yield from self._exec_command(set_local)
                yield from self._pipeline._sync_gen()
                return None
            # One message of two statements (the simple query protocol): one round trip for both.
            return (yield from _commands(self, begin + b"; " + set_local))

        @classmethod
        def _connect_gen(cls, *args: Any, **kwargs: Any) -> PQGenConn[Any]:
            # Connecting goes through psycopg's wait_conn, not wait: a server that accepts TCP
            # but never answers (frozen) would hold it the whole connect timeout, then fail as
            # unreachable rather than as a read on an open connection does. (A private method:
            # its arguments are passed through untouched, whatever a later psycopg adds.)
            gen = super()._connect_gen(*args, **kwargs)
            connecting = _CONNECTING.get()
            return gen if connecting is None else _answered_by(gen, *connecting, NoAnswer)

        def wait(self, gen: PQGen[Any], *args: Any, **kwargs: Any) -> Any:
            if self.deadline_s is None:
                return super().wait(gen, *args, **kwargs)
            # Before the generator's first step, which sends the statement: the server's timeout
            # cannot have started earlier (the thread may be descheduled before it arms).
            began = time.monotonic() if self.read_timeout_ms is not None else 0.0
            try:
                first = next(gen)
            except StopIteration as done:
                # Nothing to wait for (5 of a read's 7 waits: setting the isolation level or
                # autocommit, a rollback with no transaction open): no deadline to arm.
                return done.value
            armed = WATCHDOG.arm(self.fileno, self.deadline_s)
            try:
                result = super().wait(_resumed(first, gen), *args, **kwargs)
            except BaseException as e:
                if WATCHDOG.disarm(armed) and isinstance(e, psycopg.OperationalError):
                    raise NoAnswer(f"{self.label} did not answer within {self.deadline_s:g} s: connection closed") from e
                timeout_s = self._timed_out(began) if isinstance(e, psycopg.errors.QueryCanceled) else None
                if timeout_s is not None:
                    raise TimedOut(f"{self.label} did not answer within {timeout_s:g} s: it cancelled the read") from e
                raise
            if WATCHDOG.disarm(armed):  # it answered just as the deadline passed: its socket is shut
                self.close()
            return result

        def _timed_out(self, began: float) -> float | None:
            """The statement timeout (seconds) when a cancel of a read ending now, its wait begun
            at ``began``, is its doing (the wait has lasted that long; an administrator's cancel
            before it is left as it is)."""
            if self.read_timeout_ms is None:
                return None
            timeout_s = self.read_timeout_ms / 1000
            return timeout_s if time.monotonic() - began >= timeout_s else None

    return DeadlineConnection, NoAnswer, TimedOut


def _commands(conn: psycopg.Connection[Any], commands: bytes) -> PQGen[None]:
    """Send ``commands`` (statements without results, such as ``BEGIN``) in one simple-query
    message and check each one's result (psycopg's own ``_exec_command`` takes one statement)."""
    from psycopg import errors, generators, pq

    conn.pgconn.send_query(commands)
    results = yield from generators.execute(conn.pgconn)
    for result in results:
        if result.status == pq.ExecStatus.FATAL_ERROR:
            raise errors.error_from_result(result, encoding=conn.pgconn._encoding)
        if result.status != pq.ExecStatus.COMMAND_OK:
            raise errors.InterfaceError(f"unexpected result {pq.ExecStatus(result.status).name} from {commands!r}")
    return None


def _answered_by(
    gen: Generator[Any, Any, Any], deadline: float, bound_s: float, label: str, no_answer: type[Exception]
) -> Generator[Any, Any, Any]:
    """``gen`` (psycopg's connection generator), given up with ``no_answer`` when, at ``deadline``
    (monotonic), it still waits to read the server's answer: its TCP connection is up, so the
    server is there but silent (while it waits to write, TCP is still connecting: an unreachable
    host is left to the connect timeout)."""
    from psycopg.waiting import Wait

    step = next(gen)
    while True:
        ready = yield step
        if step[1] == Wait.R and time.monotonic() >= deadline:
            gen.close()  # the half-open libpq connection is finished with the generator
            raise no_answer(f"{label} did not answer within {bound_s:g} s: connection closed")
        try:
            step = gen.send(ready)
        except StopIteration as done:
            return done.value


def _resumed(first: Any, gen: Generator[Any, Any, Any]) -> Generator[Any, Any, Any]:
    """``gen`` again, its first step (``first``) already taken."""
    sent = yield first
    try:
        while True:
            sent = yield gen.send(sent)
    except StopIteration as done:
        return done.value
