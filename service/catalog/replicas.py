"""Which database a catalog read runs on: a PostgreSQL hot standby when one is fit, else the primary.

The rule is simple on purpose: **anything that writes runs on the primary** (commits, removals,
migrations, refresh, and the reads a write depends on); the read-only calls (plans, listings,
table loads, global stats, dashboard reads) run on the standbys given by
``SHREDCAT_READ_DATABASE_URLS``, taken in turn (round robin). A standby is skipped while it

* errors (cannot be reached, stopped mid-request, or any error of its database, such as a
  column a migration it has not replayed yet adds: the read is run again on the next one, as a
  read-only transaction can be; it is tried again after ``read_check_interval_s``),
* does not answer a statement within ``read_timeout_s`` (its ``statement_timeout``), or at all
  (frozen: :mod:`service.catalog.deadlines` closes the connection ``GRACE_S`` later; the read is
  then run elsewhere as after an error),
* is no longer a standby (promoted: its timeline has left the primary's, so its answers are not
  the catalog's), or
* lags the primary by more than ``max_lag_s`` seconds.

Lag is measured every ``read_check_interval_s`` per process (one statement on the primary,
``pg_current_wal_flush_lsn()``, and one on each standby). A server measures in threads of its own
(:meth:`ReadRouter.start_monitor`, one for the primary and one per standby), so a database that
hangs costs no request and delays no other's measure: reads then trust a measure only while it is
younger than ``read_check_interval_s``, and go to the primary when the last one is older (the
monitor waits on a standby that does not answer, at most the read timeout and ``GRACE_S``: then it
marks it down, and measures it again, until it answers). That also bounds how long a promoted
standby can answer: only a measure begun after the promotion is fresh ``read_check_interval_s``
later, and it sees the promotion. Without the monitor (the CLI, a library caller) the read that
finds the measure due takes it, and the others use the last one.

A standby's lag is an upper bound, from the primary's WAL position last read before the standby's
measure began (a newer reading, taken in the primary's thread while the standby answered, could
be ahead of a standby caught up when measured): a standby that has replayed it lags at most the time since that read began (none when it was read just before); one
that has not lags at most the age of the last transaction it replayed. **A primary that does not
answer** (down, or frozen: its reads have the same deadline, :mod:`service.catalog.deadlines`)
leaves its last reading to age, so a standby that had replayed it stays fit until that bound
passes ``max_lag_s`` (nothing newer can have been committed meanwhile that it lacks by more), and
reads it can answer do not wait on the primary; then, or for a read only the primary can answer,
the read fails with :class:`~service.errors.DatabaseUnresponsiveError` at the read timeout.

**Read your writes.** A read may carry the snapshot id its caller needs (``min_snapshot_id``, the id
a commit answered). The read's own transaction first reads the newest snapshot id the standby holds
(the same REPEATABLE READ snapshot the read then uses, so the check and the answer agree); a
standby behind it is passed over. When none has it, the primary is asked once whether it committed
that snapshot (an id it never committed is NotFoundError at once, not a wait), then the standbys
are asked again until ``read_wait_s`` has passed, then the primary answers.

Pure routing and bookkeeping over :mod:`service.catalog.db` (no SQL of the catalog's tables but
the one snapshot probe).
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from service.catalog import deadlines
from service.catalog.db import make_engine, run_transaction, transaction, translated
from service.errors import NotFoundError, ShredcatError, StorageUnavailableError

if TYPE_CHECKING:
    from service.settings import Settings

log = logging.getLogger(__name__)

T = TypeVar("T")

#: Defaults of the settings of the same names.
DEFAULT_MAX_LAG_S = 5.0
DEFAULT_WAIT_S = 2.0
DEFAULT_CHECK_INTERVAL_S = 1.0
DEFAULT_READ_TIMEOUT_S = 10.0
#: Seconds a connection to a standby may take to open (the primary's: 10): a standby is optional,
#: so one that does not answer is given up on quickly and the read goes elsewhere.
STANDBY_CONNECT_TIMEOUT_S = 3
#: How often a read waiting for a snapshot asks the standbys again.
WAIT_POLL_S = 0.02

_NEWEST_SNAPSHOT = "SELECT coalesce(max(snapshot_id), 0) FROM ducklake_snapshot"
_STANDBY_STATE = (
    "SELECT pg_is_in_recovery(), pg_last_wal_replay_lsn()::text, "
    "extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp())::float8"
)


def parse_lsn(text: str | None) -> int | None:
    """A ``pg_lsn`` (``16/B374D848``) as a byte position."""
    if not text:
        return None
    high, _, low = text.partition("/")
    return (int(high, 16) << 32) | int(low, 16)


def lag_of(
    primary_lsn: int, replay_lsn: int | None, replay_age_s: float | None, primary_age_s: float = 0.0
) -> tuple[float | None, int | None]:
    """(seconds, bytes) a standby is at most behind: when it has replayed ``primary_lsn`` (read on
    the primary ``primary_age_s`` before the standby was measured), what the primary may have
    committed since; else the age of the last transaction it replayed; unknown (None) when it has
    replayed nothing yet."""
    if replay_lsn is None:
        return None, None
    behind = max(0, primary_lsn - replay_lsn)
    if behind == 0:
        return max(0.0, primary_age_s), 0
    return (None if replay_age_s is None else max(0.0, replay_age_s)), behind


class _NotReplayed(Exception):
    """The standby's snapshot is older than the read needs."""


@dataclass
class Standby:
    """One read database and what was last measured of it."""

    name: str
    engine: Engine
    #: ``ok``, ``down`` (errored, or did not answer in time), ``promoted``, ``lagging``, or
    #: ``unknown`` (never measured).
    state: str = "unknown"
    lag_s: float | None = None
    lag_bytes: int | None = None
    #: When the measure that set ``state`` began (monotonic seconds).
    checked_at: float = float("-inf")
    reads: int = 0


@dataclass(frozen=True)
class StandbyStatus:
    """What ``/metrics`` and the dashboard show of a standby."""

    name: str
    state: str
    lag_s: float | None
    lag_bytes: int | None
    reads: int
    #: Seconds since it was last measured (None: never).
    measured_s_ago: float | None = None


def describe(engine: Engine) -> str:
    """A standby's name in metrics and logs: host, port and database, never credentials."""
    u = engine.url
    return f"{u.host or 'localhost'}:{u.port or 5432}/{u.database or ''}"


class ReadRouter:
    """Runs read transactions on the standbys (see the module docstring), writes on the primary.

    The standbys' engines become the router's: it gives their connections the read timeout
    (:func:`service.catalog.deadlines.install`, before they first connect) and disposes of them."""

    def __init__(
        self,
        primary: Engine,
        standbys: Sequence[Engine] = (),
        *,
        max_lag_s: float = DEFAULT_MAX_LAG_S,
        wait_s: float = DEFAULT_WAIT_S,
        check_interval_s: float = DEFAULT_CHECK_INTERVAL_S,
        read_timeout_s: float = DEFAULT_READ_TIMEOUT_S,
    ) -> None:
        self.primary = primary
        # Its reads get the deadline too (its writes none: see deadlines' docstring). Once per
        # engine: a catalog's default router and a CLI's router from the settings share one.
        deadlines.install(primary, read_timeout_s, label="the primary database", shared_with_writes=True)
        self.standbys = [Standby(describe(e), e) for e in standbys]
        for s in self.standbys:
            deadlines.install(s.engine, read_timeout_s, label=f"read database {s.name}")
        self.max_lag_s = max_lag_s
        self.wait_s = wait_s
        self.check_interval_s = check_interval_s
        self.primary_reads = 0
        #: Called with ``"primary"`` or the standby's name after each read it answered (the API
        #: counts them in ``/metrics``).
        self.on_read: Callable[[str], None] | None = None
        self._turn = itertools.count()
        self._checking = threading.Lock()
        self._counting = threading.Lock()
        self._monitors: list[threading.Thread] = []
        self._stopping = threading.Event()
        #: The primary's WAL position last read, and when that read began (monotonic); None: never.
        self._primary_seen: tuple[int, float] | None = None

    @classmethod
    def from_settings(cls, primary: Engine, settings: Settings, *, concurrency: int | None = None) -> ReadRouter:
        """The router of ``settings``' standbys (``SHREDCAT_READ_*``), each engine pooled like the
        primary's (``concurrency`` connections)."""
        engines = [
            make_engine(url, concurrency=concurrency, connect_args={"connect_timeout": STANDBY_CONNECT_TIMEOUT_S})
            for url in settings.read_database_urls
        ]
        return cls(
            primary,
            engines,
            max_lag_s=settings.read_max_lag_s,
            wait_s=settings.read_wait_s,
            check_interval_s=settings.read_check_interval_s,
            read_timeout_s=settings.read_timeout_s,
        )

    def dispose(self) -> None:
        """Stop the monitor and close the standbys' engines (the primary's belongs to the catalog)."""
        self.stop_monitor()
        for s in self.standbys:
            s.engine.dispose()

    # --- measuring ------------------------------------------------------------------------

    @property
    def monitored(self) -> bool:
        """Whether monitor threads measure the standbys (:meth:`start_monitor`)."""
        return bool(self._monitors)

    def start_monitor(self) -> None:
        """Measure the standbys from now on in daemon threads, one for the primary's WAL position
        and one per standby (a hung database delays no other's measure), every half check interval
        (so that the last measure stays fresh while a standby answers), instead of in the reads'
        threads."""
        if not self.standbys or self._monitors:
            return
        self._stopping.clear()
        loops: list[tuple[str, Callable[[], None]]] = [("shredcat-primary-check", self._measure_primary)]
        loops += [(f"shredcat-standby-check-{i}", functools.partial(self._measure, s)) for i, s in enumerate(self.standbys)]
        self._monitors = [
            threading.Thread(target=self._monitor_loop, args=(measure,), name=name, daemon=True) for name, measure in loops
        ]
        for t in self._monitors:
            t.start()

    def stop_monitor(self, timeout: float = STANDBY_CONNECT_TIMEOUT_S + 1) -> None:
        """Stop the monitor threads; waits for a measure under way at most ``timeout`` seconds in
        all (a hung standby's: its daemon thread is then left to end with the process)."""
        monitors, self._monitors = self._monitors, []
        self._stopping.set()
        deadline = time.monotonic() + timeout
        for t in monitors:
            t.join(max(0.0, deadline - time.monotonic()))

    def _monitor_loop(self, measure: Callable[[], None]) -> None:
        while not self._stopping.is_set():
            try:
                measure()
            except Exception:  # the thread must outlive any one measure; reads then use the primary
                log.exception("measuring a catalog database's state failed (%s)", threading.current_thread().name)
            self._stopping.wait(self.check_interval_s / 2)

    def check(self, *, force: bool = False) -> None:
        """Measure every standby's state and lag when due (``force``: now). One thread measures;
        the others go on with the last measure, except before the first, which they wait for."""
        if not self.standbys:
            return
        now = time.monotonic()
        if not force and all(now - s.checked_at < self.check_interval_s for s in self.standbys):
            return
        first = all(s.state == "unknown" for s in self.standbys)
        if not self._checking.acquire(blocking=first or force):
            return
        try:
            self._measure_primary()
            for s in self.standbys:
                if force or time.monotonic() - s.checked_at >= self.check_interval_s:
                    self._measure(s)
        finally:
            self._checking.release()

    def _measure_primary(self) -> None:
        """Read the primary's WAL position; one that cannot be read (unreachable, no answer within
        the read timeout, not a PostgreSQL primary) leaves the last reading to age."""
        started = time.monotonic()
        try:
            with translated(), transaction(self.primary, write=False) as conn:
                lsn = parse_lsn(conn.exec_driver_sql("SELECT pg_current_wal_flush_lsn()::text").scalar())
        except ShredcatError as e:
            log.warning("could not read the primary's WAL position to measure standby lag: %s", e)
            return
        if lsn is not None:
            self._primary_seen = (lsn, started)

    def _measure(self, s: Standby) -> None:
        if self._primary_seen is None:
            # The primary's own thread may not have read it yet (they start together): a standby
            # measured first would be 'unknown' until its next measure, half an interval later.
            self._measure_primary()
        # The reading taken before this measure begins, not the one current when it ends: the
        # primary's thread may read a newer position meanwhile, which a standby caught up when
        # measured has not replayed yet (it would be judged by its last transaction's age).
        seen = self._primary_seen
        started = time.monotonic()
        try:
            with s.engine.connect() as conn:
                recovering, replay, age = conn.exec_driver_sql(_STANDBY_STATE).one()
        except SQLAlchemyError as e:
            self._mark_down(s, e)
            return
        # Dated from its start, set with its result: a measure still under way leaves the previous
        # one to age (and, with a monitor, go stale) rather than look fresh.
        s.checked_at = started
        if not recovering:
            if s.state != "promoted":
                log.error("read database %s is no longer a standby (promoted?): reads skip it", s.name)
            s.state, s.lag_s, s.lag_bytes = "promoted", None, None
            return
        if seen is None:  # the primary never answered: the lag cannot be known
            s.state, s.lag_s, s.lag_bytes = "unknown", None, None
            return
        s.lag_s, s.lag_bytes = lag_of(seen[0], parse_lsn(replay), age, started - seen[1])
        fit = s.lag_s is not None and s.lag_s <= self.max_lag_s
        s.state = "ok" if fit else "lagging"

    def _mark_down(self, s: Standby, e: BaseException) -> None:
        if s.state != "down":
            log.warning("read database %s skipped after an error: %s", s.name, str(e).splitlines()[0] if str(e) else type(e).__name__)
        s.state, s.lag_s, s.lag_bytes, s.checked_at = "down", None, None, time.monotonic()

    def status(self, *, measure: bool = True) -> list[StandbyStatus]:
        """Each standby's state, measured first when due unless a monitor measures (``measure=False``:
        the last measure, so a readiness probe never waits on a standby that does not answer)."""
        if measure and not self.monitored:
            self.check()
        now = time.monotonic()
        return [
            StandbyStatus(
                s.name, s.state, s.lag_s, s.lag_bytes, s.reads, None if s.checked_at == float("-inf") else now - s.checked_at
            )
            for s in self.standbys
        ]

    # --- reading --------------------------------------------------------------------------

    def _fit(self) -> list[Standby]:
        """The standbys to try, in round-robin order: measured fit, and with a monitor, measured
        within the check interval (see the module docstring)."""
        fresh_after = time.monotonic() - self.check_interval_s if self.monitored else float("-inf")
        fit = [s for s in self.standbys if s.state == "ok" and s.checked_at >= fresh_after]
        if not fit:
            return []
        start = next(self._turn) % len(fit)
        return fit[start:] + fit[:start]

    def read(self, fn: Callable[[Connection], T], *, min_snapshot_id: int | None = None, primary: bool = False) -> T:
        """``fn(conn)`` in a read transaction on a fit standby that holds ``min_snapshot_id`` (if
        given), else on the primary (``primary``: on the primary only)."""
        if not primary and self.standbys:
            if not self.monitored:
                self.check()
            fn_checked = fn if min_snapshot_id is None else _holding(fn, min_snapshot_id, _not_replayed)
            deadline = time.monotonic() + (self.wait_s if min_snapshot_id is not None else 0.0)
            asked = False
            while True:
                behind = False
                for s in self._fit():
                    try:
                        result = run_transaction(s.engine, fn_checked, write=False)
                    except _NotReplayed:
                        behind = True
                        continue
                    except ShredcatError as e:
                        if not _database_error(e):
                            raise  # the request's own error (no such table...): the same anywhere
                        self._mark_down(s, e)
                        continue
                    self._answered(s)
                    return result
                if not behind or time.monotonic() >= deadline:
                    break
                if not asked:
                    asked = True
                    self._check_committed(min_snapshot_id)
                time.sleep(WAIT_POLL_S)
        on_primary = fn if min_snapshot_id is None else _holding(fn, min_snapshot_id, _never_committed)
        result = run_transaction(self.primary, on_primary, write=False)
        self._answered(None)
        return result

    def _check_committed(self, snapshot_id: int | None) -> None:
        """The primary's NotFoundError when it never committed ``snapshot_id``: asked once before
        waiting for a standby to replay it (a made-up id would hold every such read for the whole
        wait), and final (the primary's newest snapshot is not read a second time to say so)."""
        if snapshot_id is None:
            return
        newest = run_transaction(self.primary, lambda c: c.exec_driver_sql(_NEWEST_SNAPSHOT).scalar_one(), write=False)
        if newest < snapshot_id:
            raise _never_committed(snapshot_id, newest)

    def _answered(self, s: Standby | None) -> None:
        with self._counting:
            if s is None:
                self.primary_reads += 1
            else:
                s.reads += 1
        if self.on_read is not None:
            self.on_read("primary" if s is None else s.name)


def _database_error(e: ShredcatError) -> bool:
    """Whether ``e`` is the standby database's failure rather than the request's: unreachable or
    stopped (:class:`StorageUnavailableError`), or any error of its own that
    :func:`service.catalog.db.run_transaction` translated (a standby still replaying a migration
    lacks a column; a read that tried to write is refused). The read is then run elsewhere, as
    a read-only transaction can be; an error the primary shares comes from the primary."""
    return isinstance(e, StorageUnavailableError) or isinstance(e.__cause__, SQLAlchemyError)


def _holding(
    fn: Callable[[Connection], T], min_snapshot_id: int, missing: Callable[[int, int], Exception]
) -> Callable[[Connection], T]:
    """``fn``, run once the database is seen to hold ``min_snapshot_id``; else the error
    ``missing(min_snapshot_id, newest)`` is raised instead, before ``fn`` reads anything."""

    def checked(conn: Connection) -> T:
        newest = conn.exec_driver_sql(_NEWEST_SNAPSHOT).scalar_one()
        if newest < min_snapshot_id:
            raise missing(min_snapshot_id, newest)
        return fn(conn)

    return checked


def _not_replayed(min_snapshot_id: int, newest: int) -> Exception:
    """On a standby: not replayed yet (the read goes to another, waits, or goes to the primary)."""
    return _NotReplayed()


def _never_committed(min_snapshot_id: int, newest: int) -> Exception:
    """On the primary, which has every committed snapshot: a newer id was never committed (a
    made-up or another catalog's id), and answering at an older snapshot would pass for reading
    one's writes."""
    return NotFoundError(
        f"snapshot {min_snapshot_id} does not exist (the newest is {newest})",
        details={"snapshot": min_snapshot_id, "newest_snapshot": newest},
    )
