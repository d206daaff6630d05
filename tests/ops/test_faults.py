"""Faults under a real ``shredcat serve``:

* the service's PostgreSQL connections are killed (``pg_terminate_backend``, only those of the
  test's own database) again and again while writers commit;
* the PostgreSQL server itself is restarted mid-run (a private server made with ``initdb`` on a free
  port, so the shared server of the other tests is never disturbed);
* the shredcat process is SIGKILLed while a large commit is inside its transaction.

In every case a commit in flight either fails cleanly (503/connection error) or succeeds; a retry
with the same idempotency key applies each commit exactly once; the server recovers by itself (same
process, no restart); no reader ever sees part of a commit; and at the end every file is live
exactly once and the stored global stats equal a recomputation.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.client import ClientError, ServerError, ShredcatClient, ShredcatConnectionError
from tests.ops.support import (
    LAKE_ROOT,
    TOKENS,
    PrivatePostgres,
    check_table_consistent,
    file_payload,
    fresh_database,
    live_files,
    run_migrate,
    server_env,
    service_backends,
    terminate_backends,
)
from tests.support.server import Server, running_server, start_server

pytestmark = [pytest.mark.slow, pytest.mark.postgres]

BATCH = 10
WRITERS = 4
COMMIT_500 = (
    'shredcat_http_request_duration_seconds_count{method="POST",'
    'route="/v1/namespaces/{namespace}/tables/{table}/commits",status="500"}'
)


def _setup_table(server: Server) -> None:
    with ShredcatClient(server.base_url, token=TOKENS["admin"], retries=5) as admin:
        admin.create_namespace("lake")
        admin.create_table("lake", "events", variant_columns=["v"])


def _metric(text: str, name: str) -> float:
    total = 0.0
    for line in text.splitlines():
        if line.startswith(name):
            total += float(line.rsplit(" ", 1)[1])
    return total


class _Writers:
    """``WRITERS`` threads committing batches (each logical commit with one idempotency key,
    retried with it until it succeeds), a checker thread asserting that every snapshot it sees
    holds a whole batch, until ``stop`` is set."""

    def __init__(self, server: Server, url: str) -> None:
        self.server = server
        self.url = url
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.results: dict[str, Any] = {}  # idempotency key -> CommitResult of its success
        self.batches: dict[str, list[dict[str, Any]]] = {}  # key -> the files it commits
        self.failed_attempts = 0  # whole client calls (each with its own retries) that failed
        self.unexpected: list[str] = []
        self.partial: list[str] = []
        self.checks = 0
        self.threads = [threading.Thread(target=self._writer, args=(w,), daemon=True) for w in range(WRITERS)]
        self.threads.append(threading.Thread(target=self._checker, daemon=True))

    def __enter__(self) -> _Writers:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in self.threads), "a writer hung"

    def _commit_until_applied(self, c: ShredcatClient, key: str, files: list[dict[str, Any]]) -> None:
        deadline = time.monotonic() + 90
        while True:
            try:
                r = c.commit_files("lake", "events", files, idempotency_key=key)
            except (ServerError, ShredcatConnectionError) as e:  # failed cleanly: retry with the same key
                with self.lock:
                    self.failed_attempts += 1
                if time.monotonic() > deadline:
                    self.unexpected.append(f"{key}: never applied: {e}")
                    return
                time.sleep(0.1)
                continue
            except ClientError as e:
                self.unexpected.append(f"{key}: {e}")
                return
            with self.lock:
                self.results[key] = r
            return

    def _writer(self, w: int) -> None:
        k = 0
        with ShredcatClient(self.server.base_url, token=TOKENS["writer"], retries=4, backoff=0.05, timeout=30) as c:
            while not self.stop.is_set():
                key = uuid.uuid4().hex
                first = (k * WRITERS + w) * BATCH
                files = [
                    file_payload(f"{LAKE_ROOT}faults/w{w}/b{k:05d}/part-{j}.parquet", first + j, records=100)
                    for j in range(BATCH)
                ]
                with self.lock:
                    self.batches[key] = files
                self._commit_until_applied(c, key, files)
                k += 1

    def _checker(self) -> None:
        """Reads through the library on a connection the fault injection spares: every snapshot
        that added files shows all of its batch, never part of it."""
        from service.catalog import Catalog
        from service.catalog.db import make_engine
        from service.errors import StorageUnavailableError

        engine = make_engine(self.url, connect_args={"application_name": "shredcat-checker"}, pool_size=1)
        try:
            with Catalog(engine) as cat:
                while not self.stop.is_set():
                    try:
                        files = cat.list_files("lake", "events", limit=10_000)
                    except StorageUnavailableError:  # the private server is restarting
                        time.sleep(0.1)
                        continue
                    sizes = Counter(f.begin_snapshot for f in files)
                    bad = {s: n for s, n in sizes.items() if n != BATCH}
                    if bad:
                        self.partial.append(f"snapshots with part of a batch: {bad}")
                    self.checks += 1
                    time.sleep(0.05)
        finally:
            engine.dispose()

    def verify(self, url: str) -> None:
        assert self.unexpected == [], self.unexpected[:5]
        assert self.partial == [], self.partial[:5]
        assert self.checks > 0
        keys = set(self.results)
        assert keys == set(self.batches), "a logical commit was never applied"
        # Each commit applied exactly once: one snapshot per key, each file of it live exactly once.
        snaps = [r.snapshot_id for r in self.results.values()]
        assert None not in snaps and len(set(snaps)) == len(snaps)
        live = live_files(url, "lake", "events")
        counts = Counter(f.path for f in live)
        assert set(counts.values()) == {1}
        assert set(counts) == {f["path"] for files in self.batches.values() for f in files}
        by_snap = Counter(f.begin_snapshot for f in live)
        assert by_snap == {s: BATCH for s in snaps}
        info = check_table_consistent(url, "lake", "events")
        assert info.snapshot_count == 1 + len(snaps)
        # A replay of any key answers its first result and changes nothing.
        with ShredcatClient(self.server.base_url, token=TOKENS["writer"]) as c:
            for key in list(keys)[:5]:
                again = c.commit_files("lake", "events", self.batches[key], idempotency_key=key)
                assert again.replayed and again.snapshot_id == self.results[key].snapshot_id


def _run_with_faults(
    server: Server, url: str, inject: Callable[[], None], seconds: float, enough: Callable[[], bool] = lambda: True
) -> _Writers:
    """Writers run while ``inject`` is called again and again for ``seconds``, and past them until
    ``enough()`` (the faults the test counts on: on a loaded machine fewer fit in the time)."""
    pid = server.proc.pid
    with _Writers(server, url) as writers:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline or not enough():
            inject()
        time.sleep(1.0)  # a quiet second: the writers catch up
    # Recovered by itself: the same process answers, healthy, and commits go through.
    assert server.proc.poll() is None and server.proc.pid == pid
    assert httpx.get(server.base_url + "/health", timeout=10).status_code == 200
    writers.verify(url)
    return writers


def test_connections_killed_mid_commit(tmp_path: Path) -> None:
    from tests.conftest import PG_ADMIN_URL, require_postgres

    require_postgres()
    kills = [0]

    with fresh_database(PG_ADMIN_URL, "shredcat_faults") as url:
        env = server_env(url)
        assert run_migrate(env).returncode == 0
        with running_server(env, tmp_path / "server.log", workers=1) as server:
            _setup_table(server)

            def inject() -> None:
                kills[0] += terminate_backends(url)
                time.sleep(0.25)

            writers = _run_with_faults(server, url, inject, seconds=6)
            with ShredcatClient(server.base_url, token=TOKENS["reader"]) as reader:
                metrics = reader.metrics()
            lines = server.log_lines()
    unavailable = _metric(metrics, 'shredcat_commits_total{mode="stats",outcome="storage_unavailable"}')
    replayed = _metric(metrics, 'shredcat_commits_total{mode="stats",outcome="replayed"}')
    print(
        f"\n{kills[0]} backends terminated; {len(writers.results)} commits applied once; "
        f"{writers.failed_attempts} client calls failed cleanly and were retried with their key; "
        f"{unavailable:.0f} commit attempts answered 503, {replayed:.0f} replayed"
    )
    assert kills[0] > 0
    assert len(writers.results) >= WRITERS
    # The faults did hit commits in flight (answered 503, never 500).
    assert unavailable > 0
    assert _metric(metrics, COMMIT_500) == 0
    assert not any("Traceback" in line for line in lines)


def test_postgres_server_restarted_mid_run(tmp_path: Path) -> None:
    why = PrivatePostgres.available()
    if why is not None:
        pytest.skip(f"cannot run a private PostgreSQL server here: {why}")
    restarts = [0]
    with PrivatePostgres() as pg, fresh_database(pg.admin_url, "shredcat_restart") as url:
        env = server_env(url)
        assert run_migrate(env).returncode == 0
        with running_server(env, tmp_path / "server.log", workers=1) as server:
            _setup_table(server)

            def inject() -> None:
                time.sleep(1.5)
                pg.restart()
                restarts[0] += 1

            # Two restarts even when one takes longer than the 3 s a second needs to start in time.
            writers = _run_with_faults(server, url, inject, seconds=4.5, enough=lambda: restarts[0] >= 2)
            with ShredcatClient(server.base_url, token=TOKENS["reader"]) as reader:
                metrics = reader.metrics()
    unavailable = _metric(metrics, 'shredcat_commits_total{mode="stats",outcome="storage_unavailable"}')
    print(
        f"\n{restarts[0]} PostgreSQL restarts; {len(writers.results)} commits applied once; "
        f"{unavailable:.0f} commit attempts answered 503; "
        f"{writers.failed_attempts} client calls failed cleanly and were retried with their key"
    )
    assert restarts[0] >= 2
    assert len(writers.results) >= WRITERS
    assert unavailable > 0  # the restarts did hit commits in flight
    assert _metric(metrics, COMMIT_500) == 0


def _kill_during_inserts(server: Any, url: str, files: list[dict[str, Any]], key: str) -> dict[str, Any] | None:
    """Send one commit and SIGKILL the server once its transaction is inserting rows. Returns the
    client's outcome, or None when the commit completed before that moment was seen (a lost race:
    the caller tries again with a bigger commit)."""
    import psycopg
    from sqlalchemy import make_url

    from tests.ops.support import with_database
    from tests.support.pg import psycopg_dsn

    outcome: dict[str, Any] = {}

    def send() -> None:
        try:
            outcome["status"] = httpx.post(
                f"{server.base_url}/v1/namespaces/lake/tables/events/commits",
                json={"files": files},
                headers={"Authorization": f"Bearer {TOKENS['writer']}", "Idempotency-Key": key},
                timeout=120,
            ).status_code
        except httpx.TransportError as e:
            outcome["error"] = type(e).__name__

    # One monitoring connection, polled every few ms: opening a connection per poll took longer
    # than a whole commit on a busy machine.
    db = make_url(url).database
    with psycopg.connect(psycopg_dsn(with_database(url, "postgres")), autocommit=True) as mon:
        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        deadline = time.monotonic() + 60
        while True:
            (inserting,) = mon.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND application_name = 'shredcat' "
                "AND xact_start IS NOT NULL AND upper(query) LIKE 'INSERT%%'",
                (db,),
            ).fetchone()  # type: ignore[misc]
            if inserting:
                break
            if not sender.is_alive():
                return None if outcome.get("status") == 200 else outcome
            assert time.monotonic() < deadline, f"the commit never reached the database {outcome}"
            time.sleep(0.002)
    server.kill()
    sender.join(timeout=30)
    return outcome


def test_shredcat_killed_mid_commit_leaves_nothing_partial(tmp_path: Path) -> None:
    from tests.conftest import PG_ADMIN_URL, require_postgres

    require_postgres()
    with fresh_database(PG_ADMIN_URL, "shredcat_kill") as url:
        env = server_env(url)
        assert run_migrate(env).returncode == 0
        # Bigger commits until one is caught mid-transaction (the first almost always is); a
        # commit that won the race is simply part of the table the next attempt starts from.
        for attempt, n in enumerate((3000, 10_000, 30_000)):
            files = [file_payload(f"{LAKE_ROOT}big{attempt}/part-{i:05d}.parquet", i, records=100) for i in range(n)]
            key = uuid.uuid4().hex
            server = start_server(env, tmp_path / f"server{attempt}.log", workers=1)
            try:
                if attempt == 0:
                    _setup_table(server)
                before = check_table_consistent(url, "lake", "events")
                before_live = sorted(f.path for f in live_files(url, "lake", "events"))
                outcome = _kill_during_inserts(server, url, files, key)
            finally:
                server.stop()
            if outcome is not None:
                break
        else:
            pytest.fail("no commit was ever caught in its transaction")
        assert outcome.get("status") in (None, 200), outcome  # normally the answer never came
        # PostgreSQL rolls the dead client's transaction back once it notices.
        deadline = time.monotonic() + 30
        while service_backends(url):
            assert time.monotonic() < deadline, "the dead server's backend lingers"
            time.sleep(0.05)
        after = check_table_consistent(url, "lake", "events")
        added = after.live_file_count - before.live_file_count
        print(f"\nserver killed mid-commit: {added} of {n} files visible afterwards")
        assert added in (0, n)  # all or nothing
        if added == 0:
            assert after.snapshot_count == before.snapshot_count
            assert sorted(f.path for f in live_files(url, "lake", "events")) == before_live
        else:
            assert after.snapshot_count == before.snapshot_count + 1
        if outcome.get("status") == 200:
            assert added == n
        # A new server; the client retries the same commit with the same key: applied exactly once.
        with (
            running_server(env, tmp_path / "server-retry.log", workers=1) as server2,
            ShredcatClient(server2.base_url, token=TOKENS["writer"], timeout=120) as c,
        ):
            r = c.commit_files("lake", "events", files, idempotency_key=key)
            again = c.commit_files("lake", "events", files, idempotency_key=key)
        assert again.replayed and again.snapshot_id == r.snapshot_id
        assert len(r.added) == n or r.replayed
        live = live_files(url, "lake", "events")
        assert len(live) == len({f.path for f in live}) == before.live_file_count + n
        info = check_table_consistent(url, "lake", "events")
        assert info.snapshot_count == before.snapshot_count + 1
