"""Read your writes on a real hot standby: ``min-snapshot-id`` (a standby holding it answers; else
one is waited for; else the primary), passed by the Python client after its own commits, and the
standby's lag in /metrics and on the dashboard."""

from __future__ import annotations

import re
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from service.catalog.replicas import _NEWEST_SNAPSHOT
from service.errors import NotFoundError
from service.pruning.parse_sql import parse_sql
from tests.replication.conftest import ALL, ReplicatedCatalog, plan_all, standby_catalog, until
from tests.support.standby import Pair

warnings.filterwarnings("ignore", message=".*httpx2.*")

pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("replication")]




def pause(pair: Pair) -> None:
    pair.standby.execute("SELECT pg_wal_replay_pause()")


def resume(pair: Pair) -> None:
    pair.standby.execute("SELECT pg_wal_replay_resume()")


@pytest.fixture
def paused(repl: ReplicatedCatalog) -> Iterator[Pair]:
    """The standby with WAL replay paused for the test (resumed afterwards)."""
    yield repl.pair
    resume(repl.pair)


def test_a_standby_behind_the_snapshot_is_passed_over_for_the_primary(
    repl: ReplicatedCatalog, paused: Pair, events: list[str]
) -> None:
    cat = standby_catalog(repl, max_lag_s=60, wait_s=0.3)
    try:
        first = cat.register("lake", "events", events[:2])
        paused.wait_replayed()
        pause(paused)
        second = cat.register("lake", "events", events[2:])
        # Without min-snapshot-id a (fit) standby answers: its snapshot is the first commit's.
        assert plan_all(cat) == events[:2]
        assert cat.reads.primary_reads == 0
        # With it, the standby cannot answer, the wait runs out, and the primary answers.
        assert plan_all(cat, min_snapshot_id=second.snapshot_id) == events
        assert cat.reads.primary_reads == 1
        files = cat.list_files("lake", "events", min_snapshot_id=second.snapshot_id)
        assert len(files) == 5 and cat.reads.primary_reads == 2
        # A snapshot the standby holds is answered there.
        assert cat.list_files("lake", "events", snapshot=first.snapshot_id, min_snapshot_id=first.snapshot_id)
        assert cat.reads.primary_reads == 2
    finally:
        cat.reads.dispose()
        cat.engine.dispose()


def test_a_read_waits_for_the_standby_to_replay_its_snapshot(
    repl: ReplicatedCatalog, paused: Pair, events: list[str]
) -> None:
    cat = standby_catalog(repl, max_lag_s=60, wait_s=30)
    try:
        cat.register("lake", "events", events[:2])
        paused.wait_replayed()
        pause(paused)
        second = cat.register("lake", "events", events[2:])
        threading.Timer(0.5, resume, args=(paused,)).start()
        assert plan_all(cat, min_snapshot_id=second.snapshot_id) == events
        assert cat.reads.primary_reads == 0
        assert cat.reads.standbys[0].reads == 1
    finally:
        cat.reads.dispose()
        cat.engine.dispose()


def test_a_page_token_pins_the_later_pages_to_a_standby_holding_its_snapshot(
    repl: ReplicatedCatalog, paused: Pair, events: list[str]
) -> None:
    """A later page is read at the first page's snapshot: a standby that has not replayed it (here
    the first page came from the primary) is passed over instead of answering 'no such snapshot'."""
    cat = standby_catalog(repl, max_lag_s=60, wait_s=0.2)
    try:
        cat.register("lake", "events", events[:2])
        paused.wait_replayed()
        pause(paused)
        second = cat.register("lake", "events", events[2:])
        parse = lambda s: parse_sql(ALL, schema=s)  # noqa: E731
        page = cat.plan("lake", "events", parse, page_size=2, min_snapshot_id=second.snapshot_id)
        rest = cat.plan("lake", "events", parse, page_size=10, page_token=page.next_page_token)
        assert [c.path for c in page.candidates + rest.candidates] == events
        assert cat.reads.primary_reads == 2
    finally:
        cat.reads.dispose()
        cat.engine.dispose()


def test_the_client_passes_its_own_commits_snapshot(
    repl: ReplicatedCatalog, paused: Pair, events: list[str]
) -> None:
    from fastapi.testclient import TestClient

    from service.api import create_app
    from service.client import ShredcatClient
    from tests.api.conftest import TOKENS, make_settings

    settings = make_settings(
        repl.primary_url,
        [str(Path(events[0]).parent.parent)],
        read_database_urls=[repl.standby_url],
        read_max_lag_s=60,
        read_wait_s=0.2,
        # The reader's plans must find the standby fit: a monitored one is only while its last
        # measure is younger than the check interval, which 1 s (measured every 0.5 s) does not
        # leave a loaded machine (a stale measure sends the plan to the primary, and its answer
        # holds the writer's commit).
        read_check_interval_s=3.0,
    )
    with TestClient(create_app(settings)) as http:
        reads = http.app.state.ctx.catalog.reads  # type: ignore[attr-defined]
        until(lambda: reads.standbys[0].state == "ok", "measured ok")  # the first measure is the monitor's
        writer = ShredcatClient(http=http, token=TOKENS["admin"])
        other = ShredcatClient(http=http, token=TOKENS["reader"])
        first = writer.commit("lake", "events", paths=events[:2], create_if_missing=True)
        assert writer.last_snapshot_id == first.snapshot_id
        paused.wait_replayed()
        pause(paused)
        second = writer.commit("lake", "events", paths=events[2:])
        assert writer.last_snapshot_id == second.snapshot_id
        # The writer sees its commit (the primary answered); a reader that committed nothing is
        # answered by the standby, as of the first commit.
        assert sorted(writer.plan_all("lake", "events", sql=ALL).paths) == events
        assert writer.load_table("lake", "events").live_file_count == 5
        assert len(list(writer.iter_files("lake", "events"))) == 5
        assert sorted(other.plan_all("lake", "events", sql=ALL).paths) == events[:2]
        assert other.load_table("lake", "events").live_file_count == 2
        # ...unless told the snapshot.
        told = other.plan("lake", "events", sql=ALL, min_snapshot_id=second.snapshot_id)
        assert sorted(told.paths) == events
        text = writer.metrics()
        standby = f"127.0.0.1:{paused.standby.port}/{repl.database}"
        assert f'shredcat_catalog_reads_total{{database="{standby}"}}' in text
        assert 'shredcat_catalog_reads_total{database="primary"}' in text
        assert f'shredcat_standby_lag_seconds{{standby="{standby}"}}' in text
        assert f'shredcat_standby_state{{standby="{standby}",state="ok"}} 1.0' in text


def test_the_dashboard_shows_each_standbys_lag(repl: ReplicatedCatalog, events: list[str]) -> None:
    from fastapi.testclient import TestClient

    from service.api import create_app
    from tests.api.conftest import ADMIN, make_settings

    settings = make_settings(repl.primary_url, [], read_database_urls=[repl.standby_url])
    with TestClient(create_app(settings)) as http:
        # The page shows the server's monitor's last measure (it measures nothing itself): the
        # first one is taken in the background as the server starts.
        reads = http.app.state.ctx.catalog.reads  # type: ignore[attr-defined]
        until(lambda: reads.standbys[0].state == "ok", "measured ok")
        html = http.get("/admin", headers={**ADMIN, "Accept": "text/html"}).text
    # The lag is an upper bound from the primary's last reading (its age when the standby was
    # measured), so its value depends on the machine's timing: the page must show it, whatever it is.
    shown = f"Read replicas: 127.0.0.1:{repl.pair.standby.port}/{repl.database} ok, lag "
    assert re.search(re.escape(shown) + r"\d+\.\d s", html), html


def test_a_signed_out_session_is_refused_while_the_standby_is_behind(repl: ReplicatedCatalog, paused: Pair) -> None:
    """Revocation is read on the primary: a standby that has not replayed a sign-out would
    accept the session for as long as it lags (issue 32's sign-out, served with issue 37's reads)."""
    from datetime import UTC, datetime, timedelta

    cat = standby_catalog(repl, max_lag_s=60, wait_s=0.3)
    try:
        paused.wait_replayed()
        pause(paused)
        digest = "ab" * 32
        cat.revoke_session(digest, datetime.now(UTC) + timedelta(hours=1))
        assert cat.session_revoked(digest)
        # The standby itself does not hold it yet: reading it there would have answered False.
        assert not cat.reads.read(lambda conn: _revoked_here(conn, digest))
    finally:
        cat.reads.dispose()


def _revoked_here(conn: Any, digest: str) -> bool:
    from service.catalog import repository as repo

    return bool(repo.session_revoked(conn, digest))


def test_a_commit_into_a_table_created_a_moment_ago_checks_it_on_the_primary(
    repl: ReplicatedCatalog, paused: Pair, events: list[str]
) -> None:
    """The commit's early "does the table exist" read is one a write depends on: on a standby that
    has not replayed the creation it answered 404 (a writer's create-if-missing: 403)."""
    from fastapi.testclient import TestClient

    from service.api import create_app
    from tests.api.conftest import ADMIN, WRITER, make_settings

    settings = make_settings(repl.primary_url, [str(Path(events[0]).parent.parent)])
    settings = settings.model_copy(update={"read_database_urls": [repl.standby_url], "read_max_lag_s": 3600.0})
    with TestClient(create_app(settings), raise_server_exceptions=False) as c:
        paused.wait_replayed()
        pause(paused)
        r = c.post("/v1/namespaces", json={"namespace": ["fresh"]}, headers=ADMIN)
        assert r.status_code == 200, r.text
        r = c.post("/v1/namespaces/fresh/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN)
        assert r.status_code == 200, r.text
        for body in ({"paths": events[:1]}, {"paths": events[1:2], "create-if-missing": {}}):
            r = c.post("/v1/namespaces/fresh/tables/t/commits", json=body, headers=WRITER)
            assert r.status_code == 200, r.text


def test_a_snapshot_the_primary_never_committed_is_not_waited_for(repl: ReplicatedCatalog, events: list[str]) -> None:
    """A made-up min-snapshot-id (beyond the primary's newest) goes to the primary at once instead
    of polling the standbys for the whole wait (any reader could hold a worker thread that way),
    and is refused there: answered at an older snapshot, it would pass for the caller's writes."""
    cat = standby_catalog(repl, max_lag_s=60, wait_s=30)
    try:
        cat.register("lake", "events", events[:1])
        repl.pair.wait_replayed()
        polls = 0
        real = cat.reads._fit

        def counted() -> Any:
            nonlocal polls
            polls += 1
            return real()

        cat.reads._fit = counted  # type: ignore[method-assign]
        newest_reads = 0

        def executed(conn: object, cursor: object, statement: str, *_: object) -> None:
            nonlocal newest_reads
            newest_reads += statement == _NEWEST_SNAPSHOT

        event.listen(cat.engine, "before_cursor_execute", executed)
        with pytest.raises(NotFoundError, match="does not exist"):
            cat.list_files("lake", "events", min_snapshot_id=9_000_000_000_000_000_000)
        assert polls == 1
        assert newest_reads == 1  # the primary's newest snapshot, read once to refuse the id
    finally:
        cat.reads.dispose()


def test_stats_and_snapshots_read_a_callers_own_commit(repl: ReplicatedCatalog, paused: Pair, events: list[str]) -> None:
    """Global stats, a file's stats and the snapshot list take min-snapshot-id too: after a commit
    the standby has not replayed, they answer from the primary instead of going back."""
    cat = standby_catalog(repl, max_lag_s=60, wait_s=0.3)
    try:
        cat.register("lake", "events", events[:1])
        paused.wait_replayed()
        pause(paused)
        second = cat.register("lake", "events", events[1:2])
        s = second.snapshot_id
        assert cat.global_stats("lake", "events").snapshot_id < s  # the standby's
        assert cat.global_stats("lake", "events", min_snapshot_id=s).snapshot_id == s
        assert cat.file_stats("lake", "events", events[1], min_snapshot_id=s).path == events[1]
        assert cat.list_snapshots("lake", "events", min_snapshot_id=s)[-1].snapshot_id == s
    finally:
        cat.reads.dispose()
