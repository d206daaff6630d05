"""What building a wide schema's Variant paths costs, against extracting the same file.

Issue 30 asks for paths "built lazily". Every stage of the walk is timed (best of ``--repeat``)
and its allocations measured (tracemalloc peak, a separate run) on a file at the shredded-path
limit (``SHREDCAT_MAX_SHREDDED_PATHS``, 10,000 by default: one Variant column whose object shreds
that many int64 fields, ``--rows`` rows), and compared with a whole extraction of the same file,
plan cache emptied first. Wider schemas are refused from the flat schema before any path is built
(``bench/hostile.py``'s ``paths`` file).

    python bench/schema_walk.py [--fields 10000] [--rows 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.hostile import VARIANT_METADATA
from bench.machine import describe


def write_wide(path: Path, fields: int, rows: int) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ints = pa.array(range(rows), pa.int64())
    nulls = pa.nulls(rows, pa.binary())
    typed = pa.StructArray.from_arrays(
        [pa.StructArray.from_arrays([nulls, ints], ["value", "typed_value"]) for _ in range(fields)],
        [f"f{i}" for i in range(fields)],
    )
    meta = pa.array([VARIANT_METADATA] * rows, pa.binary())
    v = pa.StructArray.from_arrays([meta, pa.nulls(rows, pa.binary()), typed], ["metadata", "value", "typed_value"])
    pq.write_table(pa.table({"v": v}), path)


def best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def peak_mb(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fields", type=int, default=10_000)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    from service.parquet.footer.schema_tree import build_schema_tree, schema_shape
    from service.parquet.io import read_metadata
    from service.stats import extract
    from service.variant.schema import find_variant_columns, shredded_leaves

    path = Path(tempfile.mkdtemp()) / "wide.parquet"
    write_wide(path, args.fields, args.rows)
    with path.open("rb") as f:
        meta = read_metadata(f, path.stat().st_size)[0]
    schema = meta.schema
    root = build_schema_tree(schema)
    (col,) = find_variant_columns(root)

    def uncached() -> None:
        extract._schema_plan_by_value.cache_clear()
        extract._plans_by_identity.clear()
        extract.extract_file(str(path))

    def cached() -> None:
        extract.extract_file(str(path))

    stages: list[tuple[str, Callable[[], Any]]] = [
        ("flat schema shape (the limits check)", lambda: schema_shape(schema)),
        ("schema tree", lambda: build_schema_tree(schema)),
        ("Variant columns (ShredNode tree)", lambda: find_variant_columns(root)),
        ("shredded leaves (the paths)", lambda: shredded_leaves(col)),
        ("whole extraction, plan cache emptied", uncached),
        ("whole extraction, plan cached (next file of the table)", cached),
    ]
    print(f"# {describe()}; load average {os.getloadavg()[0]:.1f}")
    print(f"# {args.fields} shredded paths, {args.rows} rows, {path.stat().st_size} bytes")
    print(f"{'stage':<58}{'best ms':>10}{'peak MB':>10}")
    for name, fn in stages:
        print(f"{name:<58}{best(fn, args.repeat) * 1000:>10.1f}{peak_mb(fn):>10.1f}")


if __name__ == "__main__":
    main()
