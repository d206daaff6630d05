"""Hostile files registered by path over REST: the server's peak RSS and the answer's time.

The three files of issue 30 ("bounded memory and time per file"), built here:

* ``residual``: 1,000,000 rows whose Variant residual ``value`` holds the same 1,000-byte string,
  ``typed_value`` null, zstd level 19, no statistics on ``value`` (the footer cannot prove the path
  shredded, so the residuals must be read: 1 GB once decoded, from a file of a few hundred KB);
* ``deep``: a crafted footer, a chain of 250 nested groups over 1,000,000 leaves, no row groups;
* ``paths``: a crafted footer with one Variant column shredding 200,000 fields, no row groups.

Each file is registered into a fresh ``shredcat serve`` (one worker, SQLite), started from
``--repo`` (default: this checkout) with this Python: run it once with the venv of the code
"before" and once with this one. Per file: the server's resident memory before the request, its
peak (``VmHWM``) after, the HTTP status and the wall time of the request.

    python bench/hostile.py [--repo /path/to/checkout] [--only residual,deep,paths] [--warm]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe

VARIANT_METADATA = b"\x01\x00\x00"  # version 1, no dictionary strings


def _long_string(n: int) -> bytes:
    # Variant spec: primitive header (type id 16, "string") then a 4-byte little-endian length.
    return bytes([16 << 2]) + n.to_bytes(4, "little") + b"x" * n


def write_residual(path: Path, rows: int = 1_000_000, width: int = 1000) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    zeros = pa.array([0] * rows, pa.int32())
    metadata = pa.DictionaryArray.from_arrays(zeros, pa.array([VARIANT_METADATA], pa.binary()))
    value = pa.DictionaryArray.from_arrays(zeros, pa.array([_long_string(width)], pa.binary()))
    typed = pa.nulls(rows, pa.int64())
    v = pa.StructArray.from_arrays([metadata, value, typed], ["metadata", "value", "typed_value"])
    table = pa.table({"v": v})
    pq.write_table(
        table,
        path,
        compression="zstd",
        compression_level=19,
        write_statistics=["v.metadata", "v.typed_value"],
        row_group_size=rows,
    )


def _footer_file(path: Path, schema: list[tuple[str, list[tuple[int, tuple[object, ...]]]]]) -> None:
    from tests.support.thrift import encode_struct

    footer = encode_struct([(1, ("i32", 2)), (2, ("list", "struct", schema)), (3, ("i64", 0)), (4, ("list", "struct", []))])
    path.write_bytes(b"PAR1" + footer + len(footer).to_bytes(4, "little") + b"PAR1")


def write_deep(path: Path, depth: int = 250, leaves: int = 1_000_000) -> None:
    from tests.support.thrift import schema_element

    schema = [schema_element("root", num_children=("i32", 1))]
    for d in range(depth - 1):
        schema.append(schema_element(f"g{d}", repetition=("i32", 1), num_children=("i32", 1)))
    schema.append(schema_element(f"g{depth - 1}", repetition=("i32", 1), num_children=("i32", leaves)))
    leaf = schema_element("x", type=("i32", 1), repetition=("i32", 1))
    schema.extend([leaf] * leaves)  # one name for all: the footer stays about 8 MB
    _footer_file(path, schema)



def write_chains(path: Path, chains: int, depth: int) -> None:
    """A crafted footer of ``chains`` chains of ``depth`` single-child groups, each over one leaf,
    no row groups: more groups than leaves, within the leaf limit."""
    from tests.support.thrift import schema_element

    schema = [schema_element("root", num_children=("i32", chains))]
    for c in range(chains):
        schema += [schema_element(f"g{c}_{d}", repetition=("i32", 1), num_children=("i32", 1)) for d in range(depth)]
        schema.append(schema_element("x", type=("i32", 1), repetition=("i32", 1)))
    _footer_file(path, schema)


def write_paths(path: Path, fields: int = 200_000) -> None:
    from tests.support.thrift import schema_element

    binary = {"type": ("i32", 6), "repetition": ("i32", 1)}
    schema = [
        schema_element("root", num_children=("i32", 1)),
        schema_element("v", repetition=("i32", 1), num_children=("i32", 3)),
        schema_element("metadata", type=("i32", 6), repetition=("i32", 0)),
        schema_element("value", **binary),
        schema_element("typed_value", repetition=("i32", 1), num_children=("i32", fields)),
    ]
    for i in range(fields):
        schema.append(schema_element(f"f{i}", repetition=("i32", 0), num_children=("i32", 2)))
        schema.append(schema_element("value", **binary))
        schema.append(schema_element("typed_value", type=("i32", 2), repetition=("i32", 1)))
    _footer_file(path, schema)


WRITERS: dict[str, Callable[[Path], None]] = {"residual": write_residual, "deep": write_deep, "paths": write_paths}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _status_kib(pid: int, key: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def _group_pids(pgid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                if os.getpgid(int(d.name)) == pgid:
                    out.append(int(d.name))
            except (ProcessLookupError, PermissionError):
                pass
    return out


def measure(repo: Path, path: Path, work: Path, timeout: float, warm: Path | None = None) -> dict[str, object]:
    """Register ``path`` into a fresh server started from ``repo``; its memory and the answer.
    With ``warm`` (a small honest file beside it), that file is registered first, so that the
    figures are the hostile file's own and not the worker's first-use imports (pyarrow)."""
    import httpx

    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    env |= {
        "SHREDCAT_DATABASE_URL": f"sqlite:///{work / (path.stem + '.db')}",
        "SHREDCAT_WAREHOUSE_ROOTS": json.dumps([str(path.parent)]),
        "SHREDCAT_AUTH": "off",
    }
    log = (work / (path.stem + ".log")).open("wb")
    subprocess.run([sys.executable, "-m", "service.cli", "migrate"], cwd=repo, env=env, check=True, capture_output=True)
    proc = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        cwd=repo, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(600):
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        with httpx.Client(base_url=base, timeout=timeout) as c:
            c.post("/v1/namespaces", json={"namespace": ["h"]}).raise_for_status()
            c.post("/v1/namespaces/h/tables", json={"name": "t", "variant-columns": ["v"]}).raise_for_status()
            if warm is not None:
                c.post("/v1/namespaces/h/tables/t/commits", json={"paths": [str(warm)]}).raise_for_status()
            pids = _group_pids(proc.pid)
            before = sum(_status_kib(p, "VmRSS") for p in pids)
            t0 = time.perf_counter()
            try:
                r = c.post("/v1/namespaces/h/tables/t/commits", json={"paths": [str(path)]})
                status: int | str = r.status_code
                body = r.text[:160]
            except httpx.TimeoutException:
                status, body = "timeout", f"no answer within {timeout} s"
            seconds = time.perf_counter() - t0
            peak = max(_status_kib(p, "VmHWM") for p in pids)
            after = sum(_status_kib(p, "VmRSS") for p in pids)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        log.close()
    return {
        "file": path.stem,
        "warm": warm is not None,
        "file_bytes": path.stat().st_size,
        "rss_before_mb": round(before / 1024),
        "peak_mb": round(peak / 1024),
        "peak_added_mb": round((peak - before) / 1024),
        "rss_after_mb": round(after / 1024),
        "status": status,
        "seconds": round(seconds, 2),
        "answer": body,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    ap.add_argument("--only", default=",".join(WRITERS))
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--files", type=Path, default=None, help="where the hostile files are kept (built if missing)")
    ap.add_argument("--warm", action="store_true", help="register a small honest file first (first-use imports paid)")
    args = ap.parse_args()
    files = args.files or Path(tempfile.gettempdir()) / "shredcat-hostile"
    files.mkdir(parents=True, exist_ok=True)
    print(f"# {describe()}; load average {os.getloadavg()[0]:.1f}; server from {args.repo}")
    warm = None
    if args.warm:
        warm = files / "warm.parquet"
        if not warm.exists():
            write_residual(warm, rows=100, width=10)
    with tempfile.TemporaryDirectory() as work:
        for name in args.only.split(","):
            path = files / f"{name}.parquet"
            if not path.exists():
                WRITERS[name](path)
            print(json.dumps(measure(args.repo, path, Path(work), args.timeout, warm)), flush=True)


if __name__ == "__main__":
    main()
