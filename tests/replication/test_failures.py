"""A hot standby that fails: stopped mid-request, promoted, lagging past the setting. Reads go on
(on the primary), nothing is answered from a database that is not the catalog's current state,
and the standby is used again once it is fit."""

from __future__ import annotations

import threading
import time
import warnings
from pathlib import Path
from typing import Any

import pytest

from service.catalog import Catalog
from service.catalog import repository as repo
from tests.replication.conftest import (
    ALL,
    ReplicatedCatalog,
    close_catalog,
    plan_all,
    replicated_catalog,
    standby_catalog,
    until,
)
from tests.support.standby import Pair

warnings.filterwarnings("ignore", message=".*httpx2.*")

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("replication")]




def _wait_state(cat: Catalog, state: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cat.reads.check(force=True)
        if cat.reads.standbys[0].state == state:
            return
        time.sleep(0.1)
    raise AssertionError(f"the standby is {cat.reads.standbys[0].state}, not {state}")


def _stop_once_sleeping(pair: Pair) -> None:
    """Stop ``pair``'s standby (immediate) as soon as a ``pg_sleep`` runs on it."""
    until(
        lambda: pair.standby.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE state = 'active' AND query LIKE 'SELECT pg_sleep(60)%'"
        )[0][0],
        "the read's pg_sleep running on the standby",
    )
    pair.standby.stop(mode="immediate")


def test_a_standby_stopped_mid_request_is_skipped_and_the_read_answered_by_the_primary(
    own_pair: Pair, events: list[str]
) -> None:
    rc = replicated_catalog(own_pair)
    cat = standby_catalog(rc, check_interval_s=0.2)
    try:
        cat.register("lake", "events", events)
        own_pair.wait_replayed()
        assert plan_all(cat) == events and cat.reads.standbys[0].reads == 1
        answered_on: list[str] = []

        def slow_read(conn: Any) -> int:
            # On the standby the transaction is still open (sleeping) when the standby stops.
            answered_on.append(str(conn.engine.url.port))
            if conn.engine.url.port == own_pair.standby.port:
                conn.exec_driver_sql("SELECT pg_sleep(60)")
            return repo.table_infos(conn, "lake", "events")[0].live_file_count

        # Stopped once its pg_sleep is seen running there (a timer could fire before the read
        # reached the standby on a loaded machine, and the read would never meet the stop).
        stopper = threading.Thread(target=_stop_once_sleeping, args=(own_pair,), daemon=True)
        stopper.start()
        assert cat.reads.read(slow_read) == 5
        stopper.join(60)
        assert answered_on == [str(own_pair.standby.port), str(own_pair.primary.port)]
        assert cat.reads.standbys[0].state == "down"
        # Later reads go straight to the primary while the standby is down...
        before = cat.reads.primary_reads
        assert plan_all(cat) == events
        assert cat.reads.primary_reads == before + 1
        assert cat.reads.status()[0].lag_s is None  # unknown, not 0
        # ...and to the standby again once it is back and has caught up.
        own_pair.standby.start()
        own_pair.wait_replayed()
        time.sleep(0.25)
        _wait_state(cat, "ok")
        standby_reads = cat.reads.standbys[0].reads
        assert plan_all(cat) == events
        assert cat.reads.standbys[0].reads == standby_reads + 1
    finally:
        close_catalog(cat)


def test_a_promoted_standby_is_never_read_again(own_pair: Pair, events: list[str]) -> None:
    rc = replicated_catalog(own_pair)
    cat = standby_catalog(rc, check_interval_s=0.1)
    try:
        cat.register("lake", "events", events[:2])
        own_pair.wait_replayed()
        assert plan_all(cat) == events[:2] and cat.reads.standbys[0].reads == 1
        own_pair.standby.promote()
        # The primary moves on; the promoted server's own timeline no longer follows it.
        cat.register("lake", "events", events[2:])
        time.sleep(0.15)
        assert plan_all(cat) == events
        assert cat.reads.standbys[0].state == "promoted"
        assert cat.reads.standbys[0].reads == 1
        for _ in range(3):
            assert plan_all(cat) == events
        assert cat.reads.standbys[0].reads == 1
    finally:
        close_catalog(cat)


def test_a_promoted_standby_is_never_read_again_when_a_monitor_measures(own_pair: Pair, events: list[str]) -> None:
    """As a server runs: the standbys measured in a thread of their own (reads do not measure). A
    read one check interval after the promotion trusts only a measure begun after it, so the
    promoted server does not answer it whether or not the monitor has measured since."""
    rc = replicated_catalog(own_pair)
    cat = standby_catalog(rc, check_interval_s=0.1)
    cat.reads.start_monitor()
    try:
        cat.register("lake", "events", events[:2])
        own_pair.wait_replayed()
        # Until the standby answers one (a measure fresh at the read's start): polled for as long
        # as until() allows, not a count of tries a loaded machine's monitor may not meet.
        until(lambda: plan_all(cat) == events[:2] and cat.reads.standbys[0].reads, "a plan answered by the standby")
        assert cat.reads.standbys[0].reads == 1
        own_pair.standby.promote()
        cat.register("lake", "events", events[2:])
        time.sleep(0.15)
        assert plan_all(cat) == events
        assert cat.reads.standbys[0].reads == 1
        _wait_state(cat, "promoted")
        for _ in range(3):
            assert plan_all(cat) == events
        assert cat.reads.standbys[0].reads == 1
    finally:
        close_catalog(cat)


def test_a_standby_lagging_past_the_setting_is_skipped_until_it_catches_up(
    repl: ReplicatedCatalog, events: list[str]
) -> None:
    pair = repl.pair
    cat = standby_catalog(repl, max_lag_s=0.5, check_interval_s=0.1)
    try:
        cat.register("lake", "events", events[:2])
        pair.wait_replayed()
        assert plan_all(cat) == events[:2]
        pair.standby.execute("SELECT pg_wal_replay_pause()")
        try:
            cat.register("lake", "events", events[2:])
            time.sleep(0.8)  # the last replayed commit is now older than max_lag_s
            _wait_state(cat, "lagging")
            assert cat.reads.standbys[0].lag_s > 0.5
            assert cat.reads.standbys[0].lag_bytes > 0
            before = cat.reads.primary_reads
            assert plan_all(cat) == events  # the primary's answer, not the standby's stale one
            assert cat.reads.primary_reads == before + 1
        finally:
            pair.standby.execute("SELECT pg_wal_replay_resume()")
        pair.wait_replayed()
        _wait_state(cat, "ok")
        standby_reads = cat.reads.standbys[0].reads
        assert plan_all(cat) == events
        assert cat.reads.standbys[0].reads == standby_reads + 1
    finally:
        close_catalog(cat)


def test_the_server_keeps_answering_while_its_standby_stops_and_comes_back(
    own_pair: Pair, events: list[str], tmp_path: Path
) -> None:
    from fastapi.testclient import TestClient

    from service.api import create_app
    from tests.api.conftest import READER, make_settings

    rc = replicated_catalog(own_pair)
    with Catalog(rc.primary_url) as c:
        c.register("lake", "events", events)
    own_pair.wait_replayed()
    settings = make_settings(
        rc.primary_url, [], read_database_urls=[rc.standby_url], read_check_interval_s=0.2
    )
    T = "/v1/namespaces/lake/tables/events"
    with TestClient(create_app(settings)) as http:
        def plan_ok() -> None:
            r = http.post(T + "/plan", json={"sql": ALL}, headers=READER)
            assert r.status_code == 200, r.text
            assert len(r.json()["files"]) == 5

        def standby_health() -> dict[str, Any]:
            r = http.get("/health")  # readiness: the primary's; a standby's state is only reported
            assert r.status_code == 200, r.text
            (standby,) = r.json()["standbys"]
            assert standby["name"] == f"127.0.0.1:{own_pair.standby.port}/{rc.database}"
            return dict(standby)

        for _ in range(3):
            plan_ok()  # the pool now holds connections to the standby
        # The monitor's first measure is taken in the background as the server starts: on a
        # loaded machine it may come after the plans (the state is 'unknown' until then).
        until(lambda: standby_health()["state"] == "ok", "measured ok")
        healthy = standby_health()
        assert healthy["state"] == "ok" and healthy["lag-seconds"] is not None and healthy["measured-seconds-ago"] >= 0
        own_pair.standby.stop("immediate")
        for _ in range(3):
            plan_ok()
        # Marked down by a plan that tried it, or else by the monitor's next measure (reads skip a
        # measure older than the check interval, which a loaded machine's monitor may leave).
        until(lambda: standby_health()["state"] == "down", "marked down")
        down = standby_health()
        assert down["state"] == "down" and down["lag-seconds"] is None
        text = http.get("/metrics", headers=READER).text
        assert "state=\"down\"} 1.0" in text and "shredcat_standby_lag_seconds" in text and "NaN" in text
        own_pair.standby.start()
        own_pair.wait_replayed()
        deadline = time.monotonic() + 30
        while 'state="ok"} 1.0' not in http.get("/metrics", headers=READER).text:
            assert time.monotonic() < deadline, "the standby never came back"
            time.sleep(0.2)
        plan_ok()
        assert standby_health()["state"] == "ok"


def test_an_error_of_the_standbys_database_sends_the_read_elsewhere_but_a_request_error_does_not(
    repl: ReplicatedCatalog,
) -> None:
    """A statement the standby refuses (here one that needs a transaction id, as a read that wrote
    would, or a column a migration it has not replayed yet would) is run on the primary; an error
    of the request itself (no such table) is answered as it is, from the standby."""
    from service.errors import NotFoundError

    cat = standby_catalog(repl, check_interval_s=60)
    try:
        assert cat.reads.read(lambda conn: conn.exec_driver_sql("SELECT txid_current() > 0").scalar()) is True
        assert cat.reads.standbys[0].state == "down" and cat.reads.primary_reads == 1
        cat.reads.check(force=True)
        assert cat.reads.standbys[0].state == "ok"
        with pytest.raises(NotFoundError):
            cat.list_files("lake", "nope")  # raised inside the read transaction
        assert cat.reads.standbys[0].state == "ok" and cat.reads.primary_reads == 1
    finally:
        close_catalog(cat)
