"""Extraction throughput: shredcat vs DuckDB's parquet_metadata() vs a full-data read.

Generates N small shredded files with DuckDB's own writer (a few shredded paths each), then, in
the same run and on the same files, measures files/s for:

* shredcat's extractor (footer first; data read only where the footer cannot prove a fact),
* DuckDB's ``parquet_metadata()`` (its C++ footer reader; no Variant logic at all),
* a naive bound: reading every file's data with pyarrow.

Usage: ``python bench/extract.py [--files 10000] [--dir /tmp/shredcat-bench-extract]``
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe


def generate(out: Path, n: int) -> list[str]:
    import duckdb

    out.mkdir(parents=True, exist_ok=True)
    existing = sorted(str(p) for p in out.glob("*.parquet"))
    if len(existing) >= n:
        return existing[:n]
    con = duckdb.connect()
    paths = []
    for i in range(n):
        p = out / f"part-{i:06d}.parquet"
        paths.append(str(p))
        if p.exists():
            continue
        # 20 rows per file; ids clustered by file so pruning has something to prune.
        con.execute(
            f"""COPY (SELECT {{'user': {{'id': ({i} * 20 + r)::BIGINT, 'name': 'u' || r}},
                            'score': (r * 1.5)::DOUBLE,
                            'ts': TIMESTAMP '2024-01-01' + INTERVAL ({i}) MINUTE,
                            'kind': CASE WHEN r % 2 = 0 THEN 'a' ELSE 'b' END}}::VARIANT AS v
                    FROM range(20) t(r)) TO '{p}' (FORMAT parquet)"""
        )
    return paths


class Timed:
    """Wall-clock and CPU seconds of a block: CPU of this process (every thread: DuckDB's and
    pyarrow's too) and of the child processes that ended in it. On a shared machine the CPU time
    is the per-core cost, what other load on the machine inflates least."""

    def __enter__(self) -> Timed:
        self._wall, self._cpu, self._children = time.perf_counter(), time.process_time(), _children_cpu()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self._wall
        self.cpu = time.process_time() - self._cpu + _children_cpu() - self._children


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def bench_shredcat(paths: list[str]) -> tuple[Timed, int]:
    from service.stats.extract import extract_file

    rows = 0
    with Timed() as t:
        for p in paths:
            rows += len(extract_file(p).paths)
    return t, rows


def bench_shredcat_parallel(paths: list[str], workers: int) -> Timed:
    from concurrent.futures import ProcessPoolExecutor

    from service.stats.extract import extract_file

    # The results come back to this process (pickled): what a caller of parallel extraction gets.
    with Timed() as t, ProcessPoolExecutor(max_workers=workers) as pool:
        for _ in pool.map(extract_file, paths, chunksize=64):
            pass
    return t


def bench_duckdb_metadata(paths: list[str], glob: str, threads: int | None = None) -> Timed:
    import duckdb

    con = duckdb.connect()
    if threads is not None:
        con.execute(f"SET threads = {threads}")
    with Timed() as t:
        n = con.execute(f"SELECT count(DISTINCT file_name) FROM parquet_metadata('{glob}')").fetchone()
    assert n is not None and n[0] == len(paths), n
    return t


def bench_footer_decode(paths: list[str]) -> tuple[float, float]:
    """µs per footer for the C decoder and for the pure-Python reader, on the same footer bytes."""
    from service.parquet import footer
    from service.parquet.footer import codegen, thrift_tables

    footers = []
    for p in paths[:2000]:
        with open(p, "rb") as f:
            data = f.read()
        offset, length = footer.read_footer_bytes(data[-8:], len(data))
        footers.append(data[offset : offset + length])
    python_reader = codegen.compile_reader(thrift_tables.FILE_META_DATA)
    t0 = time.perf_counter()
    for d in footers:
        footer.parse_file_metadata(d)
    fast = (time.perf_counter() - t0) / len(footers) * 1e6
    t0 = time.perf_counter()
    for d in footers:
        python_reader(d, 0, 0)
    slow = (time.perf_counter() - t0) / len(footers) * 1e6
    return fast, slow


def stage_breakdown(paths: list[str], repeat: int = 3) -> list[tuple[str, float]]:
    """Where one file's extraction time goes: CPU µs per file (process time, so that other load
    on the machine counts less), best of ``repeat``, for growing prefixes of what
    :func:`extract_file` does on these files; each stage is the difference between two prefixes.
    The float page scan is measured by replacing it with a constant answer in the last-but-one
    prefix (measurement only)."""
    from service.limits import FileLimits
    from service.parquet import footer
    from service.parquet.io import open_parquet, read_metadata
    from service.parquet.pages import FloatScan
    from service.stats import extract

    def best(fn: Any) -> float:
        times = []
        for _ in range(repeat):
            t0 = time.process_time()
            fn()
            times.append(time.process_time() - t0)
        return min(times) / len(paths) * 1e6

    def opened() -> None:
        for p in paths:
            with open_parquet(p):
                pass

    def footers() -> None:
        for p in paths:
            with open_parquet(p) as (info, f, _):
                read_metadata(f, info.size)

    def planned() -> None:
        for p in paths:
            with open_parquet(p) as (info, f, _):
                meta, _ = read_metadata(f, info.size)
                plan = extract._schema_plan(meta.schema, FileLimits())
                footer.validate_row_groups(plan.root, meta, plan.leaves)

    def no_scan() -> None:
        # The name extract.py imported from service.parquet.pages, replaced where it is looked up.
        names = vars(extract)
        real = names["scan_float_chunk"]
        names["scan_float_chunk"] = lambda *a: FloatScan(False, 0.0)
        try:
            for p in paths:
                extract.extract_file(p)
        finally:
            names["scan_float_chunk"] = real

    def everything() -> None:
        for p in paths:
            extract.extract_file(p)

    raw = []
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        offset, length = footer.read_footer_bytes(data[-8:], len(data))
        raw.append(data[offset : offset + length])

    def decode() -> None:
        for d in raw:
            footer.parse_file_metadata(d)

    everything()  # warm: imports, caches, page cache
    t_open, t_footer, t_plan, t_noscan, t_all = (best(f) for f in (opened, footers, planned, no_scan, everything))
    t_decode = best(decode)
    return [
        ("open, fstat, close (syscalls and the file object)", t_open),
        ("read the tail (one read of up to 64 KiB) and locate the footer", t_footer - t_open - t_decode),
        ("decode the footer (C Thrift decoder; schema interned)", t_decode),
        ("schema plan lookup and row groups checked against it", t_plan - t_footer),
        ("per-path statistics from the footer, results built", t_noscan - t_plan),
        ("float page scan (NaN, first zero) of the float chunk", t_all - t_noscan),
        ("total extract_file", t_all),
    ]


def bench_full_read(paths: list[str]) -> Timed:
    import pyarrow.parquet as pq

    with Timed() as t:
        for p in paths:
            pq.read_table(p)
    return t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--dir", default="/tmp/shredcat-bench-extract")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--clean", action="store_true", help="regenerate the files")
    ap.add_argument("--stages", action="store_true", help="also print where one file's time goes")
    args = ap.parse_args()
    out = Path(args.dir)
    if args.clean and out.exists():
        shutil.rmtree(out)
    t0 = time.perf_counter()
    paths = generate(out, args.files)
    print(f"generated/verified {len(paths)} files in {time.perf_counter() - t0:.1f}s ({out})")
    glob = str(out / "part-*.parquet") if len(paths) == len(list(out.glob("part-*.parquet"))) else None
    workers = os.cpu_count() or 1
    par = f"shredcat extract ({workers} procs)"
    one, duck1 = "shredcat extract", "duckdb parquet_metadata (1 thread)"
    results: dict[str, list[Timed]] = {
        one: [],
        par: [],
        "duckdb parquet_metadata": [],
        duck1: [],
        "pyarrow full read": [],
    }
    rows = 0
    load = os.getloadavg()
    for _ in range(args.repeat):
        el, rows = bench_shredcat(paths)
        results[one].append(el)
        if workers > 1:
            results[par].append(bench_shredcat_parallel(paths, workers))
        if glob:
            results["duckdb parquet_metadata"].append(bench_duckdb_metadata(paths, glob))
            results[duck1].append(bench_duckdb_metadata(paths, glob, 1))
        results["pyarrow full read"].append(bench_full_read(paths))
    print(f"machine: {describe()}")
    print(f"files: {len(paths)}, stats rows extracted: {rows} ({rows / len(paths):.1f} paths/file)")
    print(f"load average before the runs: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"{'method':<38}{'median s':>10}{'files/s':>12}{'CPU µs/file':>13}{'files/CPU-s':>13}")
    n = len(paths)
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for name, xs in results.items():
        if not xs:
            continue
        wall[name] = statistics.median(t.wall for t in xs)
        cpu[name] = statistics.median(t.cpu for t in xs)
        print(f"{name:<38}{wall[name]:>10.2f}{n / wall[name]:>12.0f}{cpu[name] / n * 1e6:>13.1f}{n / cpu[name]:>13.0f}")
    if duck1 in wall:
        print(
            f"shredcat (1 process) / DuckDB (1 thread): {wall[duck1] / wall[one]:.2f}x wall-clock, "
            f"{cpu[duck1] / cpu[one]:.2f}x per CPU-second"
        )
    from service.parquet.footer import ACCELERATED

    fast, slow = bench_footer_decode(paths)
    print(
        f"footer decode: {fast:.1f} µs ({'C accelerator' if ACCELERATED else 'NOT accelerated'}), "
        f"{slow:.1f} µs pure Python"
    )
    if args.stages:
        print("where one file's time goes (CPU µs per file, best of 3):")
        for name, us in stage_breakdown(paths):
            print(f"  {name:<66}{us:>8.1f}")


if __name__ == "__main__":
    main()
