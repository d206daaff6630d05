"""The load of ``tests/ops/test_load.py`` and ``bench/load.py``: concurrent writers committing batches
of files (client-side statistics) and concurrent pruners planning scans, against a running server,
for a bounded time. Every request is timed per route; any error (including what a client would
retry: the clients here never retry) is recorded."""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from service.client import AsyncShredcatClient, ShredcatAPIError, ShredcatConnectionError
from tests.ops.support import LAKE_ROOT, TOKENS, file_payload

RECORDS = 1000


@dataclass
class LoadResult:
    duration_s: float
    latencies: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    committed: list[str] = field(default_factory=list)
    snapshots: list[int] = field(default_factory=list)
    files_kept: list[int] = field(default_factory=list)

    @property
    def requests(self) -> int:
        return sum(len(v) for v in self.latencies.values())

    def summary(self) -> dict[str, dict[str, float]]:
        """Per route (and ``all``): requests, requests/s, p50 and p99 and max latency (ms)."""
        out: dict[str, dict[str, float]] = {}
        routes = dict(self.latencies)
        routes["all"] = [x for v in self.latencies.values() for x in v]
        for route, xs in routes.items():
            if not xs:
                continue
            qs = statistics.quantiles(xs, n=100, method="inclusive") if len(xs) > 1 else [xs[0]] * 99
            out[route] = {
                "requests": len(xs),
                "rps": len(xs) / self.duration_s,
                "p50_ms": qs[49] * 1000,
                "p99_ms": qs[98] * 1000,
                "max_ms": max(xs) * 1000,
            }
        return out

    def table(self) -> str:
        lines = ["| route | requests | requests/s | p50 ms | p99 ms | max ms |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
        for route, s in self.summary().items():
            lines.append(
                f"| {route} | {s['requests']:.0f} | {s['rps']:.1f} | {s['p50_ms']:.1f} | {s['p99_ms']:.1f} | {s['max_ms']:.1f} |"
            )
        return "\n".join(lines)


def _predicate(rnd: random.Random, max_id: int) -> dict[str, Any]:
    lo = rnd.randrange(0, max(1, max_id))
    hi = lo + rnd.randrange(1, 5 * RECORDS)
    kind = rnd.randrange(3)
    if kind == 0:
        return {"sql": f"variant_get(v, '$.id', 'bigint') BETWEEN {lo} AND {hi}"}
    term = {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}
    if kind == 1:
        return {
            "filter": {
                "type": "and",
                "left": {"type": "gt-eq", "term": term, "value": lo},
                "right": {"type": "lt-eq", "term": term, "value": hi},
            }
        }
    return {"filter": {"type": "in", "term": term, "values": [lo, hi, lo + 7 * RECORDS]}}


async def run_load(
    base_url: str,
    namespace: str,
    table: str,
    *,
    writers: int = 8,
    pruners: int = 16,
    duration: float = 60.0,
    batch: int = 20,
    seed: int = 1,
) -> LoadResult:
    """Run the load on an existing table with Variant column ``v`` (created empty by the caller)."""
    result = LoadResult(duration_s=duration)
    stop_at = time.monotonic() + duration
    batches_done = [0]

    def record(route: str, t0: float) -> None:
        result.latencies.setdefault(route, []).append(time.perf_counter() - t0)

    async def writer(w: int) -> None:
        k = 0
        async with AsyncShredcatClient(base_url, token=TOKENS["writer"], retries=0, timeout=60) as c:
            while time.monotonic() < stop_at:
                first = (k * writers + w) * batch
                files = [
                    file_payload(f"{LAKE_ROOT}load/w{w:02d}/b{k:06d}/part-{j:03d}.parquet", first + j, records=RECORDS)
                    for j in range(batch)
                ]
                t0 = time.perf_counter()
                try:
                    r = await c.commit_files(namespace, table, files)
                except (ShredcatAPIError, ShredcatConnectionError, httpx.HTTPError) as e:
                    result.errors.append(f"commit w{w} b{k}: {type(e).__name__}: {e}")
                else:
                    record("commit", t0)
                    if sorted(r.added) != sorted(f["path"] for f in files) or r.snapshot_id is None:
                        result.errors.append(f"commit w{w} b{k}: unexpected result {r}")
                    result.committed.extend(r.added)
                    if r.snapshot_id is not None:
                        result.snapshots.append(r.snapshot_id)
                    batches_done[0] += 1
                k += 1

    async def pruner(p: int) -> None:
        rnd = random.Random(seed * 1000 + p)
        async with AsyncShredcatClient(base_url, token=TOKENS["reader"], retries=0, timeout=60) as c:
            while time.monotonic() < stop_at:
                pred = _predicate(rnd, max(1, batches_done[0] * batch * RECORDS))
                t0 = time.perf_counter()
                try:
                    plan = await c.plan(namespace, table, page_size=100, **pred)
                except (ShredcatAPIError, ShredcatConnectionError, httpx.HTTPError) as e:
                    result.errors.append(f"plan p{p}: {type(e).__name__}: {e}")
                else:
                    record("plan", t0)
                    result.files_kept.append(plan.files_kept)

    started = time.monotonic()
    await asyncio.gather(*(writer(w) for w in range(writers)), *(pruner(p) for p in range(pruners)))
    result.duration_s = time.monotonic() - started
    return result


def run_load_sync(*args: Any, **kwargs: Any) -> LoadResult:
    return asyncio.run(run_load(*args, **kwargs))
