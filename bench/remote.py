"""Remote extraction: shredcat vs DuckDB httpfs over object-store servers with a fixed round trip.

≥ 1,000 small shredded files (``bench/extract.py``'s generator) are put in each store's server on
loopback (``--stores``: ``s3``, moto's S3 server; ``gcs``, gcp-storage-emulator behind the tests'
XML-API proxy; ``azure``, Azurite), behind a loopback proxy (``tests/support/delay_proxy.py``, in
its own process) that delays every request by 0, 5 or 20 ms and counts requests and response
bytes. In the same run and on the same URI list (no listing for anyone), it measures files/s of:

* ``shredcat``: :func:`service.stats.batch.extract_many` at ``SHREDCAT_OBJECT_STORE_CONCURRENCY``
  1, 8, 32 and 64 (one ranged GET per file when the footer fits the 64 KiB tail);
* ``duckdb``: ``parquet_metadata([...])`` through the httpfs extension, ``SET threads`` to the same
  number, a fresh connection each time (no cache carried over); S3 only (httpfs reads GCS with
  HMAC keys, which the GCS emulator's proxy does not check, and Azure needs another extension);
* ``old``: the sequential path before the object-store module (``--old-rev``, extracted with
  ``git archive`` and run in a subprocess: a HEAD and a GET per file through pyarrow.fs).

Beside the client's CPU per file it prints the servers' (the store, the GCS XML-API proxy and the
delaying proxy, from ``/proc``): on two cores shared with them, what bounds files/s.

Requires ``duckdb-extension-httpfs==1.5.5`` (``pip install``; ``--httpfs-dir`` if installed with
``--target``). Usage::

    python bench/remote.py [--stores s3,gcs,azure] [--files 2000] [--delays 0,5,20] [--concurrency 1,8,32,64]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.extract import generate  # noqa: E402
from bench.machine import describe  # noqa: E402

BUCKET = "bench"
ENV = {
    "AWS_ACCESS_KEY_ID": "bench",
    "AWS_SECRET_ACCESS_KEY": "bench",
    "AWS_REGION": "us-east-1",
    "AWS_EC2_METADATA_DISABLED": "true",
}


def _start(args: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    p = subprocess.Popen(
        [sys.executable, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO), **(env or {})},
    )
    assert p.stdout is not None
    return p, p.stdout.readline().strip()


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Proxy:
    def __init__(self, upstream: str) -> None:
        self.process, line = _start(["-m", "tests.support.delay_proxy", upstream, "0"])
        self.url = f"http://127.0.0.1:{line.split()[1]}"

    def call(self, route: str, method: str = "POST") -> dict[str, Any]:
        req = urllib.request.Request(self.url + route, method=method)
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())  # type: ignore[no-any-return]


@dataclass
class Target:
    """One store's server, set up for a run: where clients go (``upstream``, put behind the
    delaying proxy), its environment for shredcat, its server processes (for their CPU)."""

    name: str
    upstream: str
    env: Callable[[str], dict[str, str]]
    upload: Callable[[list[str]], list[str]]
    pids: list[int]
    stop: Callable[[], None]
    duckdb: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def _keys(paths: list[str]) -> list[tuple[str, str]]:
    return [(p, f"events/{Path(p).name}") for p in paths]


def _parallel(fn: Callable[[tuple[str, str]], Any], items: list[tuple[str, str]]) -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(fn, items))


def s3_target() -> Target:
    import boto3

    port = _free_port()
    moto, ready = _start(["-m", "tests.storage.s3server", str(port)])
    assert ready == "ready", ready
    endpoint = f"http://127.0.0.1:{port}"

    def upload(paths: list[str]) -> list[str]:
        s3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="bench", aws_secret_access_key="bench")
        s3.create_bucket(Bucket=BUCKET)
        _parallel(lambda pk: s3.upload_file(pk[0], BUCKET, pk[1]), _keys(paths))
        return [f"s3://{BUCKET}/{k}" for _, k in _keys(paths)]

    def env(url: str) -> dict[str, str]:
        return {**ENV, "AWS_ENDPOINT_URL": url}

    return Target("s3", endpoint, env, upload, [moto.pid], moto.kill, duckdb=True, extra={"moto": _moto_version()})


def emulator_target(name: str) -> Target:
    """GCS (gcp-storage-emulator behind the tests' XML-API proxy) or Azure (Azurite), as the
    storage tests start them; the environment points the client at the delaying proxy."""
    from tests.storage.emulators import start_azurite, start_gcs

    server: Any = start_gcs() if name == "gcs" else start_azurite()

    def upload(paths: list[str]) -> list[str]:
        _parallel(lambda pk: server.put(pk[1], Path(pk[0]).read_bytes()), _keys(paths))
        return [server.uri(k) for _, k in _keys(paths)]

    def env(url: str) -> dict[str, str]:
        if name == "gcs":
            return dict(server.env(STORAGE_EMULATOR_HOST=url))
        return dict(server.env(AZURE_STORAGE_CONNECTION_STRING=server.connection_string(endpoint=url)))

    return Target(name, server.endpoint, env, upload, [server.process.pid, server.proxy.pid], server.stop)


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU of the processes so far (Linux ``/proc``; 0 elsewhere)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def run_shredcat(uris: list[str], concurrency: int) -> tuple[float, float]:
    from service.settings import get_settings
    from service.stats.batch import extract_many
    from service.storage.objects import close_stores

    os.environ["SHREDCAT_OBJECT_STORE_CONCURRENCY"] = str(concurrency)
    get_settings.cache_clear()
    close_stores()
    t0, c0 = time.perf_counter(), time.process_time()
    for uri, fs in extract_many(uris):
        if not hasattr(fs, "paths"):
            raise SystemExit(f"{uri}: {fs}")
    return time.perf_counter() - t0, time.process_time() - c0


OLD = """
import json, sys, time
from service.stats.extract import extract_file
uris = json.load(open(sys.argv[1]))
t0, c0 = time.perf_counter(), time.process_time()
for u in uris:
    extract_file(u)
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def old_tree(rev: str) -> Path:
    d = Path(tempfile.gettempdir()) / f"shredcat-old-{rev}"
    if not (d / "service").is_dir():
        d.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "service"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(d)], input=archive, check=True)
        for so in (REPO / "service" / "parquet").glob("_compact*.so"):
            (d / "service" / "parquet" / so.name).write_bytes(so.read_bytes())
    return d


def run_old(uris: list[str], tree: Path, endpoint: str) -> tuple[float, float]:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(uris, f)
    env = {**os.environ, **ENV, "AWS_ENDPOINT_URL": endpoint, "PYTHONPATH": str(tree)}
    # cwd = the old tree: "python -c" puts the working directory first on sys.path.
    out = subprocess.run([sys.executable, "-c", OLD, f.name], env=env, cwd=tree, capture_output=True, text=True, check=True)
    os.unlink(f.name)
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def run_duckdb(uris: list[str], threads: int, endpoint: str, httpfs: str) -> tuple[float, float]:
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"LOAD '{httpfs}'")
        con.execute(f"SET threads = {threads}")
        host = endpoint.split("://", 1)[1]
        con.execute(
            f"CREATE SECRET (TYPE s3, KEY_ID 'bench', SECRET 'bench', REGION 'us-east-1', ENDPOINT '{host}', "
            "URL_STYLE 'path', USE_SSL false)"
        )
        listing = "[" + ", ".join(f"'{u}'" for u in uris) + "]"
        t0, c0 = time.perf_counter(), time.process_time()
        n = con.execute(f"SELECT count(DISTINCT file_name) FROM parquet_metadata({listing})").fetchone()
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        con.close()
    if n is None or n[0] != len(uris):
        raise SystemExit(f"duckdb read {n} files of {len(uris)}")
    return elapsed, cpu


def _httpfs_path(extra: str | None) -> str:
    if extra:
        sys.path.insert(0, extra)
    import duckdb_extension_httpfs  # type: ignore[import-not-found]

    return os.path.join(os.path.dirname(duckdb_extension_httpfs.__file__), "extensions", "v1.5.5", "httpfs.duckdb_extension")


TARGETS: dict[str, Callable[[], Target]] = {
    "s3": s3_target,
    "gcs": lambda: emulator_target("gcs"),
    "azure": lambda: emulator_target("azure"),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--stores", default="s3", help="comma-separated: s3,gcs,azure")
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "shredcat-bench-remote"))
    ap.add_argument("--delays", default="0,5,20", help="ms added per request by the proxy")
    ap.add_argument("--concurrency", default="1,8,32,64")
    ap.add_argument("--old-rev", default="1e01841", help="the commit before the object-store module")
    ap.add_argument("--old-delays", default="0", help="delays at which the old sequential path runs (S3)")
    ap.add_argument("--httpfs-dir", default=None, help="a --target directory holding duckdb_extension_httpfs")
    ap.add_argument("--skip", default="", help="comma-separated: shredcat,duckdb,old")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    httpfs = _httpfs_path(a.httpfs_dir)
    paths = generate(Path(a.dir), a.files)
    size = sum(os.path.getsize(p) for p in paths) / len(paths)
    print(f"# {describe()}; {len(paths)} files of {size / 1024:.1f} KiB average; load average {os.getloadavg()[0]:.1f} at the start")
    print("| store | delay | reader | concurrency | files/s | requests/file | KiB/file | s | client CPU ms/file | server CPU ms/file |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    tree = old_tree(a.old_rev) if "old" not in skip else None
    for name in a.stores.split(","):
        target = TARGETS[name]()
        proxy = Proxy(target.upstream)
        try:
            uris = target.upload(paths)
            os.environ.update(target.env(proxy.url))
            for delay in [float(x) for x in a.delays.split(",")]:
                proxy.call(f"/_proxy/delay/{delay:g}")
                runs: list[tuple[str, int]] = []
                if tree is not None and name == "s3" and f"{delay:g}" in a.old_delays.split(","):
                    runs.append(("old (pyarrow.fs, sequential)", 1))
                for c in [int(x) for x in a.concurrency.split(",")]:
                    if "shredcat" not in skip:
                        runs.append(("shredcat", c))
                    if "duckdb" not in skip and target.duckdb:
                        runs.append(("duckdb httpfs", c))
                for reader, c in runs:
                    _measure(target, proxy, uris, reader, c, delay, tree, httpfs)
        finally:
            proxy.process.kill()
            target.stop()
    print(f"# load average {os.getloadavg()[0]:.1f} at the end")


def _measure(target: Target, proxy: Proxy, uris: list[str], reader: str, c: int, delay: float, tree: Path | None, httpfs: str) -> None:
    proxy.call("/_proxy/reset")
    pids = [*target.pids, proxy.process.pid]
    s0 = cpu_seconds(pids)
    if reader == "shredcat":
        try:
            t, cpu = run_shredcat(uris, c)
        except SystemExit as e:  # a file failed: say so in the table, go on with the next run
            print(f"| {target.name} | {delay:g} ms | {reader} | {c} | failed: {e} | | | | | |", flush=True)
            return
    elif reader.startswith("old"):
        assert tree is not None
        t, cpu = run_old(uris, tree, proxy.url)
    else:
        t, cpu = run_duckdb(uris, c, proxy.url, httpfs)
    server = cpu_seconds(pids) - s0
    st = proxy.call("/_proxy/stats", "GET")
    n = len(uris)
    print(
        f"| {target.name} | {delay:g} ms | {reader} | {c} | {n / t:,.0f} | {st['requests'] / n:.2f} | "
        f"{st['body_bytes'] / n / 1024:.1f} | {t:.2f} | {cpu / n * 1000:.2f} | {server / n * 1000:.2f} |",
        flush=True,
    )


def _moto_version() -> str:
    import moto

    return str(moto.__version__)


if __name__ == "__main__":
    main()
