"""Load on a real server: ``shredcat serve --workers 2`` on PostgreSQL, 8 writers committing batches of
20 files (client-side statistics, 3 Variant paths each) and 16 pruners planning scans (SQL and JSON
predicates on ``$.id``), all at once, for a bounded time.

    .venv/bin/python bench/load.py                       # 60 s, 8 writers, 16 pruners, 2 workers
    .venv/bin/python bench/load.py --duration 15 --workers 4 --json

A fresh database ``shredcat_load_<random>`` is created on the server of ``--pg-admin-url``, migrated
with ``shredcat migrate``, and dropped afterwards. The clients never retry, so every failed request
counts as an error. Reports requests/s and p50/p99 latency per route (client-side, including the
HTTP round trip), then checks that there were no errors, that every committed file is live
exactly once (one snapshot per commit) and that the stored global stats equal a recomputation.
Exit status 1 when any check fails. Only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe
from service.client import ShredcatClient
from tests.ops.loadgen import run_load_sync
from tests.ops.support import (
    DEFAULT_PG_ADMIN,
    TOKENS,
    check_table_consistent,
    fresh_database,
    live_files,
    run_migrate,
    server_env,
)
from tests.support.server import running_server


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    p.add_argument("--writers", type=int, default=8)
    p.add_argument("--pruners", type=int, default=16)
    p.add_argument("--workers", type=int, default=2, help="uvicorn worker processes (default 2)")
    p.add_argument("--batch", type=int, default=20, help="files per commit (default 20)")
    p.add_argument("--pg-admin-url", default=DEFAULT_PG_ADMIN)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = p.parse_args(argv)
    if not (0 < args.duration <= 3600):
        p.error("--duration must be in (0, 3600]")

    with tempfile.TemporaryDirectory() as tmp, fresh_database(args.pg_admin_url, "shredcat_load") as url:
        env = server_env(url)
        m = run_migrate(env)
        if m.returncode != 0:
            print(m.stderr, file=sys.stderr)
            return 1
        with running_server(env, Path(tmp) / "server.log", workers=args.workers) as server:
            with ShredcatClient(server.base_url, token=TOKENS["admin"]) as admin:
                admin.create_namespace("lake")
                admin.create_table("lake", "events", variant_columns=["v"])
            result = run_load_sync(
                server.base_url, "lake", "events",
                writers=args.writers, pruners=args.pruners, duration=args.duration, batch=args.batch,
            )
            server_errors = [line for line in server.log_lines() if '"level": "ERROR"' in line or "Traceback" in line]
        v0 = time.perf_counter()
        problems = [f"request error: {e}" for e in result.errors[:20]]
        problems += [f"server log: {line[:300]}" for line in server_errors[:5]]
        committed = Counter(result.committed)
        live = live_files(url, "lake", "events")
        if Counter(f.path for f in live) != committed or any(n != 1 for n in committed.values()):
            problems.append("the live files are not exactly the committed ones, once each")
        if len(set(result.snapshots)) != len(result.snapshots):
            problems.append("two commits share a snapshot")
        try:
            info = check_table_consistent(url, "lake", "events")
            if info.snapshot_count != 1 + len(result.snapshots):
                problems.append(f"{info.snapshot_count} snapshots for {len(result.snapshots)} commits")
        except AssertionError as e:
            problems.append(f"global stats differ from a recomputation: {e}")
        verify_s = time.perf_counter() - v0

    summary = result.summary()
    if args.json:
        print(json.dumps({
            "machine": describe(), "duration_s": result.duration_s, "workers": args.workers,
            "writers": args.writers, "pruners": args.pruners, "batch": args.batch, "routes": summary,
            "files_committed": len(committed), "errors": len(result.errors), "problems": problems,
        }, indent=2))
    else:
        print(f"machine: {describe()}")
        print(
            f"{result.duration_s:.1f} s, {args.workers} workers, {args.writers} writers x {args.batch} files/commit, "
            f"{args.pruners} pruners; PostgreSQL on loopback\n"
        )
        print(result.table())
        print(
            f"\n{len(committed)} files committed in {len(result.snapshots)} commits "
            f"({len(committed) / result.duration_s:.0f} files/s); {len(result.errors)} errors; "
            f"plans kept {sum(result.files_kept) / max(1, len(result.files_kept)):.1f} files on average; "
            f"verification {verify_s:.1f} s: {'OK' if not problems else 'FAILED'}"
        )
        for problem in problems:
            print(f"  {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
