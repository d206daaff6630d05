"""Failed sign-in limits counted in the catalog (issue 37 item 3), on both backends: the limits per
address and overall with their ``Retry-After``, the pure wait rule, the bounded table of digests,
and concurrent attempts checked exactly up to a limit (the check and the count are one
transaction). Through the dashboard: ``tests/api/test_hardening.py``; across two servers:
``tests/ops/test_login_throttle.py``."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select

from service.catalog import Catalog
from service.catalog import models as m
from service.catalog.logins import LoginLimits, Throttled, address_digest, retry_after

T0 = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)
LIMITS = LoginLimits(per_address=3, total=5, window_s=60)


def at(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def _fail() -> tuple[str, bool]:
    return "wrong", True


def _fine() -> tuple[str, bool]:
    return "fine", False


def _wait(cat: Catalog, address: str, s: float) -> int | None:
    """Seconds ``address`` must wait at ``s`` (an attempt that fails nothing, so counts nothing)."""
    r = cat.login_attempt(address, LIMITS, _fine, now=at(s))
    return r.retry_after if isinstance(r, Throttled) else None


def _rows(cat: Catalog) -> list[tuple[str, datetime]]:
    with cat.engine.connect() as c:
        return [(str(d), t) for d, t in c.execute(select(m.LoginFailure.address_digest, m.LoginFailure.failed_at))]


def test_the_wait_is_until_fewer_than_the_limit_are_in_the_window() -> None:
    assert retry_after([], [], LIMITS, at(0)) is None
    assert retry_after([at(10), at(5)], [at(10), at(5)], LIMITS, at(11)) is None  # 2 of 3
    assert retry_after([at(10), at(5), at(1)], [at(10), at(5), at(1)], LIMITS, at(11)) == 50  # the oldest leaves
    # More than the limit in the window (another server counted with higher limits): the address
    # may try once all but limit - 1 have left, when the limit-th newest (10) leaves.
    assert retry_after([at(30), at(20), at(10), at(5)], [], LIMITS, at(31)) == 39
    assert retry_after([], [at(9), at(8), at(7), at(6), at(5)], LIMITS, at(64.5)) == 1  # rounded up, at least 1


def test_login_limits_per_address_and_overall(catalog_url: str) -> None:
    with Catalog(catalog_url) as cat:
        for _ in range(3):
            assert _wait(cat, "a", 100) is None
            assert cat.login_attempt("a", LIMITS, _fail, now=at(100)) == "wrong"
        assert _wait(cat, "a", 101) == 59
        assert _wait(cat, "b", 101) is None
        for addr in ("b", "c"):
            assert cat.login_attempt(addr, LIMITS, _fail, now=at(120)) == "wrong"
        # 5 failures in the last minute from all addresses: everyone waits, even a new address.
        assert _wait(cat, "new", 121) == 39
        assert _wait(cat, "new", 161) is None
        assert _wait(cat, "a", 161) is None  # the window has passed
        # Nothing was counted by the checks that failed nothing.
        assert len(_rows(cat)) == 5


def test_a_throttled_attempt_is_not_run_nor_counted(catalog_url: str) -> None:
    ran: list[int] = []

    def attempt() -> tuple[str, bool]:
        ran.append(1)
        return "wrong", True

    with Catalog(catalog_url) as cat:
        for _ in range(3):
            cat.login_attempt("a", LIMITS, attempt, now=at(0))
        throttled = cat.login_attempt("a", LIMITS, attempt, now=at(1))
        assert throttled == Throttled(59) and len(ran) == 3 and len(_rows(cat)) == 3


def test_the_table_keeps_digests_of_one_window_only(catalog_url: str) -> None:
    with Catalog(catalog_url) as cat:
        for minute in range(10):
            for i in range(5):
                assert cat.login_attempt(f"10.0.{minute}.{i}", LIMITS, _fail, now=at(60 * minute + i)) == "wrong"
            rows = _rows(cat)
            # The failures of earlier minutes were deleted by this minute's: at most `total` rows.
            assert len(rows) == LIMITS.total
        assert {d for d, _ in rows} == {address_digest(f"10.0.9.{i}") for i in range(5)}
        assert all(len(d) == 64 and "10.0." not in d for d, _ in rows)
        with cat.engine.connect() as c:
            assert c.execute(select(func.count()).select_from(m.LoginFailure)).scalar_one() == 5


def test_concurrent_attempts_are_checked_exactly_up_to_the_limit(catalog_url: str) -> None:
    """40 wrong sign-ins from one address started together: exactly the limit are run (and
    counted), the others throttled; then 40 from 40 addresses against the overall limit."""
    limits = LoginLimits(per_address=7, total=12)
    with Catalog(catalog_url) as cat:

        def together(addresses: list[str]) -> Counter[str]:
            ready = threading.Barrier(len(addresses))
            out: list[str] = []

            def one(address: str) -> None:
                ready.wait(60)
                r = cat.login_attempt(address, limits, _fail)
                out.append("throttled" if isinstance(r, Throttled) else r)

            threads = [threading.Thread(target=one, args=(a,)) for a in addresses]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert len(out) == len(addresses)
            return Counter(out)

        assert together(["192.0.2.1"] * 40) == {"wrong": 7, "throttled": 33}
        assert together([f"198.51.100.{i}" for i in range(40)]) == {"wrong": 12 - 7, "throttled": 35}


def test_a_throttled_address_is_answered_without_waiting_for_the_lock(catalog_url: str) -> None:
    """While another attempt holds the sign-in lock (PostgreSQL's table lock, SQLite's write lock),
    an address already throttled is still answered: its refusal is a plain read."""
    from sqlalchemy import text

    from service.catalog.db import make_engine

    with Catalog(catalog_url) as cat:
        for _ in range(3):
            cat.login_attempt("a", LIMITS, _fail, now=at(0))
        holder = make_engine(catalog_url)
        answered: list[object] = []
        try:
            with holder.connect() as c:
                held = c.begin()  # BEGIN IMMEDIATE on SQLite (the engine's writers' begin)
                if c.dialect.name == "postgresql":
                    c.execute(text("LOCK TABLE shredcat_login_failure IN SHARE ROW EXCLUSIVE MODE"))
                t = threading.Thread(target=lambda: answered.append(cat.login_attempt("a", LIMITS, _fail, now=at(1))))
                t.start()
                t.join(20)  # a guard against hanging, not a timing: the lock is held until after it
                assert answered, "the throttled attempt waited for the lock"
                held.rollback()
        finally:
            holder.dispose()
        t.join(60)
        assert answered[0] == Throttled(59)
        assert cat.login_attempt("b", LIMITS, _fail, now=at(2)) == "wrong"  # the lock is free again
