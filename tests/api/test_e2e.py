"""End to end: a real ``shredcat serve`` (uvicorn subprocess on a free loopback port) on a fresh
PostgreSQL database migrated by ``shredcat migrate``; real shredded files written by DuckDB are
registered (by path and with client-side statistics), pruned, and the server is stopped."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from service.api.auth import hash_token
from service.client import NotFound, ShredcatClient, Unauthorized
from tests.api.conftest import write_variant_file
from tests.support.server import running_server, shredcat_cmd

pytestmark = [pytest.mark.slow, pytest.mark.postgres, pytest.mark.xdist_group("e2e")]


@pytest.fixture
def pg_fresh_url() -> Iterator[str]:
    """An empty PostgreSQL database (not migrated: ``shredcat migrate`` does it)."""
    from tests.conftest import _db_url, create_pg_database, drop_pg_database, require_postgres

    require_postgres()
    name = create_pg_database("shredcat_e2e")
    try:
        yield _db_url(name)
    finally:
        drop_pg_database(name)


@pytest.fixture
def server(pg_fresh_url: str, tmp_path: Path) -> Iterator[tuple[str, Path, str]]:
    lake = tmp_path / "lake"
    lake.mkdir()
    env = {
        **os.environ,
        "SHREDCAT_DATABASE_URL": pg_fresh_url,
        "SHREDCAT_TOKENS": json.dumps({hash_token("e2e-admin"): "admin", hash_token("e2e-reader"): "reader"}),
        "SHREDCAT_WAREHOUSE_ROOTS": json.dumps([str(lake)]),
        "SHREDCAT_AUTH": "on",
    }
    m = subprocess.run([*shredcat_cmd(), "migrate"], env=env, capture_output=True, text=True, timeout=120)
    assert m.returncode == 0, m.stderr
    assert "revision" in m.stdout
    with running_server(env, tmp_path / "server.log") as srv:
        yield srv.base_url, lake, str(tmp_path / "server.log")


def test_serve_register_prune_stop(server) -> None:
    base, lake, log_path = server
    paths = [str(write_variant_file(lake / "events" / f"part-{i}.parquet", 200, i * 200)) for i in range(4)]
    with ShredcatClient(base, token="e2e-admin") as c:
        assert c.health()["backend"] == "postgresql"
        c.create_namespace("lake")
        t = c.create_table("lake", "events", infer_from=paths[0])
        assert t.variant_columns == ("v",)
        # Two files by path, two with statistics extracted here (as a Spark executor would).
        r1 = c.commit_paths("lake", "events", paths[:2])
        assert sorted(r1.added) == sorted(os.path.realpath(p) for p in paths[:2])
        r2 = c.extract_and_commit("lake", "events", paths[2:])
        assert sorted(r2.added) == sorted(paths[2:]) and r2.snapshot_id > r1.snapshot_id
        # A replayed commit (same idempotency key) is applied once.
        again = c.commit_paths("lake", "events", paths[:2], idempotency_key=r1.idempotency_key)
        assert again.replayed and again.snapshot_id == r1.snapshot_id
        table = c.load_table("lake", "events")
        assert table.live_file_count == 4 and table.live_record_count == 800
        assert [f.record_count for f in c.iter_files("lake", "events", page_size=3)] == [200] * 4
        stats = c.table_stats("lake", "events")
        ids = next(o for o in stats["columns"]["v"] if o["field_name"] == '"id"')
        assert (ids["min"], ids["max"]) == ("0", "799")
        plan = c.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') BETWEEN 250 AND 260", explain=True)
        assert [os.path.basename(p) for p in plan.paths] == ["part-1.parquet"]
        assert plan.files_pruned == 3 and plan.rows_skipped == 600
        with pytest.raises(NotFound):
            c.load_table("lake", "nope")
        assert "shredcat_commits_total" in c.metrics()
    with ShredcatClient(base, token="wrong") as bad, pytest.raises(Unauthorized):
        bad.list_namespaces()
    with ShredcatClient(base, token="e2e-reader") as reader:
        assert reader.list_tables("lake") == ["events"]
    assert "Traceback" not in Path(log_path).read_text()
