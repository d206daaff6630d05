"""The read router's pure rules (no PostgreSQL): WAL positions, lag, round robin, settings, and where
standbys are measured (a monitor thread in a server, the read's thread otherwise)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, event

from service.catalog.replicas import ReadRouter, Standby, lag_of, parse_lsn


def test_parse_lsn() -> None:
    assert parse_lsn("0/0") == 0
    assert parse_lsn("16/B374D848") == (0x16 << 32) | 0xB374D848
    assert parse_lsn(None) is None and parse_lsn("") is None


def test_lag_is_zero_once_the_primary_position_is_replayed_else_the_replay_age() -> None:
    assert lag_of(100, 100, 30.0) == (0.0, 0)
    # The primary's position read 2 s before (it has not answered since): it may have committed
    # more in those 2 s; a standby behind even that reading lags its replay age, as before.
    assert lag_of(100, 100, 30.0, 2.0) == (2.0, 0)
    assert lag_of(100, 40, 2.5, 9.0) == (2.5, 60)
    assert lag_of(100, 120, 30.0) == (0.0, 0)  # replayed beyond what the primary had when asked
    assert lag_of(100, 40, 2.5) == (2.5, 60)
    assert lag_of(100, 40, -0.1) == (0.0, 60)  # clocks of one machine, read a moment apart
    # Unknown is never zero: nothing replayed yet, or no replayed transaction to date it.
    assert lag_of(100, None, None) == (None, None)
    assert lag_of(100, 40, None) == (None, 60)


def test_fit_standbys_are_taken_in_turn_and_unfit_ones_skipped() -> None:
    engines = [create_engine("sqlite://") for _ in range(3)]
    router = ReadRouter(engines[0], engines)
    a, b, c = router.standbys
    for s in router.standbys:
        s.state = "ok"
    orders = [[s for s in router._fit()] for _ in range(3)]
    assert [o[0] for o in orders] == [a, b, c]
    assert all(sorted(map(id, o)) == sorted(map(id, [a, b, c])) for o in orders)
    b.state, c.state = "lagging", "down"
    assert [router._fit() for _ in range(2)] == [[a], [a]]
    a.state = "promoted"
    assert router._fit() == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SHREDCAT_READ_DATABASE_URLS": '["sqlite:///x.db"]', "SHREDCAT_DATABASE_URL": "postgresql://h/db"}, "hot standby"),
        ({"SHREDCAT_READ_DATABASE_URLS": '["postgresql://s/db"]'}, "PostgreSQL SHREDCAT_DATABASE_URL"),
        ({"SHREDCAT_READ_MAX_LAG_S": "-1"}, "SHREDCAT_READ_MAX_LAG_S"),
        ({"SHREDCAT_READ_TIMEOUT_S": "0"}, "SHREDCAT_READ_TIMEOUT_S"),
    ],
)
def test_bad_replication_settings_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    from service.errors import SettingsError
    from service.settings import get_settings

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    get_settings.cache_clear()
    try:
        with pytest.raises(SettingsError, match=message):
            get_settings()
    finally:
        get_settings.cache_clear()


def _router_with_a_standby_that_hangs(
    tmp_path: Path, standbys: int = 1, check_interval_s: float = 0.05
) -> tuple[ReadRouter, threading.Event, threading.Event, list[str]]:
    """A router over SQLite files (a primary and ``standbys`` "standbys") whose first standby's
    first measure finds it fit and whose later ones hang until released (the others' are always
    fit); returns (router, hanging, release, the names of the threads that measured, and
    ``check in <name>`` for each call of ``check``)."""
    from service.catalog.db import make_engine

    engines = [make_engine(f"sqlite:///{tmp_path}/{i}.db") for i in range(standbys + 1)]
    router = ReadRouter(engines[0], engines[1:], check_interval_s=check_interval_s)
    hung, measuring, release, threads = router.standbys[0], threading.Event(), threading.Event(), []

    def measure(s: Standby) -> None:
        threads.append(threading.current_thread().name)
        if s is hung and s.state == "ok":
            measuring.set()
            release.wait(30)
            return
        s.state, s.lag_s, s.lag_bytes, s.checked_at = "ok", 0.0, 0, time.monotonic()

    router._measure = measure  # type: ignore[method-assign]
    checking = router.check

    def check(*, force: bool = False) -> None:
        threads.append(f"check in {threading.current_thread().name}")
        checking(force=force)

    router.check = check  # type: ignore[method-assign]
    return router, measuring, release, threads


def _until(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.01)


def _select_one(router: ReadRouter) -> None:
    assert router.read(lambda c: c.exec_driver_sql("SELECT 1").scalar_one()) == 1


def test_with_a_monitor_a_hung_standby_costs_no_read_and_a_stale_measure_is_not_trusted(tmp_path: Path) -> None:
    """The monitor measures in its own thread: while it hangs on the standby, reads neither measure
    nor wait, and once the last measure is older than the check interval they go to the primary
    (a standby not measured lately may have been promoted)."""
    router, measuring, release, threads = _router_with_a_standby_that_hangs(tmp_path)
    router.start_monitor()
    try:
        assert measuring.wait(30)  # the second measure hangs
        time.sleep(0.2)  # well past the check interval: the first measure is stale
        before = router.primary_reads
        for _ in range(5):
            _select_one(router)
        assert router.primary_reads == before + 5 and router.standbys[0].reads == 0
        assert router.standbys[0].state == "ok"  # the stale measure's state: kept, not trusted
        assert router.status()[0].state == "ok"  # status does not measure either
        assert set(threads) == {"shredcat-standby-check-0"}  # reads called no check(), nor measured
    finally:
        release.set()
        router.dispose()
    assert not router.monitored


def test_with_a_monitor_a_hung_standby_delays_no_other_standbys_measure(tmp_path: Path) -> None:
    # The fine standby's reads need its last measure younger than the check interval: 1 s
    # (measured every 0.5 s) leaves a loaded machine's monitor thread room, which 0.05 s did not.
    router, measuring, release, threads = _router_with_a_standby_that_hangs(tmp_path, standbys=2, check_interval_s=1.0)
    router.start_monitor()
    hung, fine = router.standbys
    try:
        assert measuring.wait(30)
        # Until the hung one's first measure is stale, and the fine one measured again meanwhile.
        _until(lambda: time.monotonic() - hung.checked_at > router.check_interval_s)
        _until(lambda: threads.count("shredcat-standby-check-1") > 2)
        for _ in range(4):
            _select_one(router)
        assert (hung.reads, fine.reads) == (0, 4)
        assert threads.count("shredcat-standby-check-1") > threads.count("shredcat-standby-check-0") == 2
    finally:
        release.set()
        router.dispose()


def test_without_a_monitor_the_read_that_finds_the_measure_due_takes_it(tmp_path: Path) -> None:
    router, _, release, threads = _router_with_a_standby_that_hangs(tmp_path)
    release.set()
    try:
        _select_one(router)
        me = threading.current_thread().name
        assert threads == [f"check in {me}", me] and router.standbys[0].reads == 1
    finally:
        router.dispose()


def _answering(engine: Engine, answer: Callable[[], str]) -> None:
    """``engine`` (SQLite) answers each statement with ``SELECT <answer()>``: a stand-in for the
    PostgreSQL functions the router reads."""

    @event.listens_for(engine, "before_cursor_execute", retval=True)
    def _rewrite(_conn: Any, _cursor: Any, _statement: str, parameters: Any, _context: Any, _many: bool) -> Any:
        return f"SELECT {answer()}", parameters


def test_a_standby_is_judged_against_the_primary_reading_taken_before_its_measure(tmp_path: Path) -> None:
    """The primary's thread reads a newer WAL position while a standby answers: the standby, caught
    up with the primary when measured, is judged by the reading before its measure (not by the age
    of its last replayed transaction, 30 s, which would make it 'lagging')."""
    from service.catalog.db import make_engine

    primary, standby = (make_engine(f"sqlite:///{tmp_path}/{name}.db") for name in ("primary", "standby"))
    router = ReadRouter(primary, [standby], max_lag_s=5.0)
    wal = ["'0/100'"]
    _answering(primary, lambda: wal[0])
    _answering(standby, lambda: "1, '0/100', 30.0")  # in recovery, replayed 0/100, last commit 30 s ago

    @event.listens_for(standby, "after_cursor_execute")
    def _primary_reads_meanwhile(*_: Any) -> None:
        wal[0] = "'0/200'"
        router._measure_primary()

    try:
        router._measure_primary()
        router._measure(router.standbys[0])
        assert router._primary_seen is not None and router._primary_seen[0] == 0x200  # read meanwhile
        s = router.standbys[0]
        assert (s.state, s.lag_bytes) == ("ok", 0)
        router._measure(s)  # the next measure: judged against 0/200, which it has not replayed
        assert (s.state, s.lag_s, s.lag_bytes) == ("lagging", 30.0, 0x100)
    finally:
        router.dispose()
