"""Load: a real ``shredcat serve --workers 2`` on PostgreSQL; 8 writers committing batches and 16
pruners planning scans at once for a bounded time (10 s here, 60 s in ``bench/load.py``). Zero
errors; afterwards every committed file is live exactly once, one snapshot per commit, and the
stored global stats equal a recomputation."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from service.client import ShredcatClient
from tests.ops.loadgen import run_load_sync
from tests.ops.support import (
    TOKENS,
    check_table_consistent,
    fresh_database,
    live_files,
    run_migrate,
    server_env,
)
from tests.support.server import running_server

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.xdist_group("load")]

DURATION = float(os.environ.get("SHREDCAT_TEST_LOAD_SECONDS", "10"))


def test_writers_and_pruners_under_load(tmp_path: Path) -> None:
    from tests.conftest import PG_ADMIN_URL, require_postgres

    require_postgres()
    with fresh_database(PG_ADMIN_URL, "shredcat_load") as url:
        env = server_env(url)
        m = run_migrate(env)
        assert m.returncode == 0, m.stderr
        with running_server(env, tmp_path / "server.log", workers=2) as server:
            with ShredcatClient(server.base_url, token=TOKENS["admin"]) as admin:
                admin.create_namespace("lake")
                admin.create_table("lake", "events", variant_columns=["v"])
            result = run_load_sync(server.base_url, "lake", "events", writers=8, pruners=16, duration=DURATION)
            print(f"\nload {result.duration_s:.1f} s, 8 writers + 16 pruners, 2 workers:\n{result.table()}")
            assert result.errors == [], result.errors[:10]
            summary = result.summary()
            assert summary["commit"]["requests"] >= 8 and summary["plan"]["requests"] >= 16
            # Every worker's counters are summed (multiprocess mode): any worker answering on a
            # fresh connection reports the commits.
            seen = False
            for _ in range(20):
                with ShredcatClient(server.base_url, token=TOKENS["reader"]) as reader:
                    if 'shredcat_commits_total{mode="stats",outcome="ok"}' in reader.metrics():
                        seen = True
                        table = reader.load_table("lake", "events")
                        break
            assert seen, "no worker reported its commits in /metrics"
            lines = server.log_lines()
        assert not any("Traceback" in line for line in lines)
        # Every committed file live exactly once; one snapshot per commit, all distinct.
        committed = Counter(result.committed)
        assert all(n == 1 for n in committed.values())
        live = live_files(url, "lake", "events")
        assert Counter(f.path for f in live) == committed
        assert len(set(result.snapshots)) == len(result.snapshots) == summary["commit"]["requests"]
        by_snapshot = Counter(f.begin_snapshot for f in live)
        assert set(by_snapshot) == set(result.snapshots) and set(by_snapshot.values()) == {20}
        info = check_table_consistent(url, "lake", "events")
        assert info.live_file_count == table.live_file_count == len(committed)
        assert info.snapshot_count == 1 + len(result.snapshots)
