"""What a large commit does to the other requests of its server.

A real ``shredcat serve`` (1 worker, SQLite catalog in a temporary directory). One writer posts
commits of N files with client-side statistics (10 paths each, ``tests/ops/support.file_payload``),
one after the other; meanwhile one reader sends a cheap request (``loadTable``) back to back. The
reader's latencies are reported while the commits run and, as the peer measured in the same run,
with no commit running. ``--baseline DIR`` repeats the run with the server's code from another
checkout (e.g. one that parsed commit bodies on the event loop).

    .venv/bin/python bench/commit_stall.py                          # 3 commits of 10,000 files
    .venv/bin/python bench/commit_stall.py --files 5000 --commits 5
    .venv/bin/python bench/commit_stall.py --baseline /tmp/old-checkout
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.machine import describe  # noqa: E402
from tests.ops.support import LAKE_ROOT, TOKENS, file_payload, run_migrate, server_env  # noqa: E402
from tests.support.server import running_server  # noqa: E402

TABLE = "/v1/namespaces/bench/tables/events"


def _auth(role: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKENS[role]}"}


def _quantiles(xs: list[float]) -> str:
    xs = sorted(xs)
    if not xs:
        return "no requests"
    p99 = xs[min(len(xs) - 1, int(len(xs) * 0.99))]
    return (
        f"{len(xs):5d} requests: p50 {statistics.median(xs) * 1000:7.1f} ms, p99 {p99 * 1000:7.1f} ms, "
        f"max {xs[-1] * 1000:7.1f} ms"
    )


def run(code: Path, bodies: list[bytes], quiet_s: float) -> tuple[list[float], list[float], list[float]]:
    """(reader latencies with no commit, reader latencies during the commits, commit latencies)."""
    import httpx

    with tempfile.TemporaryDirectory(prefix="shredcat-stall-") as tmp:
        url = f"sqlite:///{tmp}/catalog.db"
        env = server_env(url, PYTHONPATH=str(code))
        done = run_migrate(env)
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        with running_server(env, Path(tmp) / "server.log") as server, httpx.Client(base_url=server.base_url) as admin:
            admin.post("/v1/namespaces", json={"namespace": ["bench"]}, headers=_auth("admin")).raise_for_status()
            admin.post(
                "/v1/namespaces/bench/tables", json={"name": "events", "variant-columns": ["v"]}, headers=_auth("admin")
            ).raise_for_status()
            stop = threading.Event()
            during = threading.Event()
            quiet: list[float] = []
            busy: list[float] = []

            def reader() -> None:
                with httpx.Client(base_url=server.base_url, timeout=60) as c:
                    while not stop.is_set():
                        t0 = time.perf_counter()
                        c.get(TABLE, headers=_auth("reader")).raise_for_status()
                        (busy if during.is_set() else quiet).append(time.perf_counter() - t0)

            t = threading.Thread(target=reader)
            t.start()
            time.sleep(quiet_s)
            commits = []
            with httpx.Client(base_url=server.base_url, timeout=600) as w:
                during.set()
                for body in bodies:
                    t0 = time.perf_counter()
                    r = w.post(
                        TABLE + "/commits",
                        content=body,
                        headers={**_auth("writer"), "content-type": "application/json"},
                    )
                    commits.append(time.perf_counter() - t0)
                    if r.status_code != 200:
                        raise RuntimeError(f"commit answered {r.status_code}: {r.text[:2000]}")
                during.clear()
            stop.set()
            t.join()
            return quiet, busy, commits


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=10_000, help="files per commit (default 10,000)")
    p.add_argument("--commits", type=int, default=3)
    p.add_argument("--quiet-seconds", type=float, default=3.0, help="reader alone before the commits")
    p.add_argument("--baseline", type=Path, help="also run with the server's code from this checkout")
    args = p.parse_args(argv)
    bodies = []
    for k in range(args.commits):
        files = [
            file_payload(f"{LAKE_ROOT}stall/part-{i:07d}.parquet", i, paths=10)
            for i in range(k * args.files, (k + 1) * args.files)
        ]
        bodies.append(json.dumps({"files": files}).encode())
    print(f"machine: {describe()}")
    print(f"{args.commits} commits of {args.files:,} files ({len(bodies[0]) / 1e6:.1f} MB each), one reader (loadTable)")
    for name, code in [("this", REPO)] + ([("baseline", args.baseline.resolve())] if args.baseline else []):
        quiet, busy, commits = run(code, bodies, args.quiet_seconds)
        print(f"[{name}] reader, no commit:     {_quantiles(quiet)}")
        print(f"[{name}] reader, during commits: {_quantiles(busy)}")
        print(f"[{name}] commits: {', '.join(f'{c:.2f} s' for c in commits)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
