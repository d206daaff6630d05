"""Remote extraction: shredcat vs DuckDB and the trees before it, over object-store servers with a fixed round trip.

≥ 1,000 small shredded files (``bench/extract.py``'s generator) are put in each store's server on
loopback (``--stores``: ``s3``, moto's S3 server as the tests run it, ``tests/storage/s3server.py``;
``gcs``, gcp-storage-emulator behind the tests' XML-API proxy; ``azure``, Azurite behind the tests'
recording proxy, ``tests/storage/proxy.py``). That server (for S3) or proxy delays every request
by 0, 5 or 20 ms, a sleep in the request's thread (no CPU, no extra hop: a byte-copying proxy in
front of moto cost 15–20 % of the server CPU per file on this 2-core machine, where the servers
and the client share the cores), and counts requests and response bytes. In the same run and on
the same URI list (no listing for anyone), it measures files/s of:

* ``shredcat``: :func:`service.stats.batch.extract_many` at ``SHREDCAT_OBJECT_STORE_CONCURRENCY``
  1, 8, 32 and 64 (one ranged GET per file when the footer fits the 64 KiB tail);
* ``duckdb``: ``parquet_metadata([...])``, ``SET threads`` to the same number, a fresh connection
  each time (no cache carried over): S3 through the httpfs extension, Azure through the azure
  extension (``az://`` URIs, a ``CONNECTION_STRING`` secret), GCS through httpfs with an HMAC key
  (a ``gcs`` secret: SigV4 over GCS's XML API, what GCS's HMAC interoperability serves). The GCS
  proxy is told the bench's HMAC key id and accepts SigV4 requests naming it **without checking
  their signature** (as moto does not check S3's): the row measures DuckDB's requests and their
  cost, not GCS's verification of them;
* ``before``: the tree of ``--before-rev`` at the same concurrencies, its ``extract_many`` in a
  subprocess: by default the hand-written stores (httpx, own SigV4 and credential chains) of the
  tree before obstore. Any revisions, comma-separated: ``--before-rev main,HEAD --skip shredcat``
  measures a change with both trees run alike, one after the other at each concurrency (this
  process's own ``shredcat`` run has its caches and imports warm from the runs before it, a
  subprocess pays them inside its clock);
* ``old``: the sequential path before the object-store module (``--old-rev``: a HEAD and a GET per
  file through pyarrow.fs; S3 only).

``before`` and ``old`` are extracted from git history with ``git archive`` and run with this
virtualenv (the hand-written stores need ``httpx`` and ``cryptography``).

Beside the client's CPU per file it prints the servers' (the store and, for GCS and Azure, the
tests' proxy in front of it, from ``/proc``): on two cores shared with them, what bounds files/s.

Requires ``duckdb-extension-httpfs==1.5.5`` and, for ``--stores azure``,
``duckdb-extension-azure==1.5.5`` (``pip install``; ``--extension-dir`` if installed with
``--target``). Usage::

    python bench/remote.py [--stores s3,gcs,azure] [--files 2000] [--delays 0,5,20] [--concurrency 1,8,32,64]
"""

from __future__ import annotations

import argparse
import importlib
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
#: The HMAC key id DuckDB signs its GCS requests with (the proxy checks the id, not the signature).
GCS_HMAC_KEY_ID = "GOOGBENCH"
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


@dataclass(frozen=True)
class DuckPeer:
    """How DuckDB reads a store: its extension (PyPI ``duckdb-extension-<name>``), the secret that
    points it at the delaying proxy, and its spelling of shredcat's URIs."""

    extension: str
    secret: Callable[[str], str]
    uri: Callable[[str], str] = str


@dataclass
class Target:
    """One store's server, set up for a run: where clients go (``endpoint``, which also answers
    the tests' ``/_test/`` routes: delay, reset, requests), its environment for shredcat, its
    server processes (for their CPU)."""

    name: str
    endpoint: str
    env: dict[str, str]
    upload: Callable[[list[str]], list[str]]
    pids: list[int]
    stop: Callable[[], None]
    duckdb: DuckPeer | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def control(self, route: str, method: str = "POST") -> Any:
        req = urllib.request.Request(self.endpoint + "/_test/" + route, method=method)
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())


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

    def secret(url: str) -> str:
        return (
            f"CREATE SECRET (TYPE s3, KEY_ID 'bench', SECRET 'bench', REGION 'us-east-1', ENDPOINT '{url.split('://', 1)[1]}', "
            "URL_STYLE 'path', USE_SSL false)"
        )

    peer = DuckPeer("httpfs", secret)
    env = {**ENV, "AWS_ENDPOINT_URL": endpoint}
    return Target("s3", endpoint, env, upload, [moto.pid], moto.kill, duckdb=peer, extra={"moto": _moto_version()})


def emulator_target(name: str) -> Target:
    """GCS (gcp-storage-emulator behind the tests' XML-API proxy) or Azure (Azurite behind the
    tests' recording proxy), as the storage tests start them, and their environment."""
    from tests.storage.emulators import start_azurite, start_gcs

    server: Any = start_gcs(hmac_key_id=GCS_HMAC_KEY_ID) if name == "gcs" else start_azurite()

    def upload(paths: list[str]) -> list[str]:
        _parallel(lambda pk: server.put(pk[1], Path(pk[0]).read_bytes()), _keys(paths))
        return [server.uri(k) for _, k in _keys(paths)]

    if name == "gcs":
        # gs://lake/... as shredcat names it; path style, plain http, the proxy as the endpoint.
        peer = DuckPeer(
            "httpfs",
            lambda url: f"CREATE SECRET (TYPE gcs, KEY_ID '{GCS_HMAC_KEY_ID}', SECRET 'bench', "
            f"ENDPOINT '{url.split('://', 1)[1]}', URL_STYLE 'path', USE_SSL false)",
        )
    else:
        # DuckDB's azure extension reads az://container/path; the account and its endpoint come
        # from the connection string (Azurite's, with the recording proxy as BlobEndpoint).
        peer = DuckPeer(
            "azure",
            lambda url: f"CREATE SECRET (TYPE azure, CONNECTION_STRING '{server.connection_string(endpoint=url)}')",
            lambda uri: "az://" + uri.split("://", 1)[1],
        )
    pids = [server.process.pid, server.proxy.pid]
    return Target(name, server.endpoint, dict(server.env()), upload, pids, server.stop, duckdb=peer)


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
    from service.storage.objects import STORES, close_stores

    for module in set(STORES.values()):  # imported before the clock starts, as in run_old
        importlib.import_module(module)

    os.environ["SHREDCAT_OBJECT_STORE_CONCURRENCY"] = str(concurrency)
    get_settings.cache_clear()
    close_stores()
    t0, c0 = time.perf_counter(), time.process_time()
    for uri, fs in extract_many(uris):
        if not hasattr(fs, "paths"):
            raise SystemExit(f"{uri}: {fs}")
    return time.perf_counter() - t0, time.process_time() - c0


#: Run in an old tree: concurrency 0, the sequential extract_file loop (before the object-store
#: module); otherwise that tree's extract_many at that concurrency (its stores' own pool).
OLD = """
import json, os, sys, time
uris, concurrency = json.load(open(sys.argv[1])), int(sys.argv[2])
os.environ["SHREDCAT_OBJECT_STORE_CONCURRENCY"] = str(max(concurrency, 1))
from service.stats.extract import extract_file
try:  # the store modules, imported before the clock starts as in this process (run_shredcat)
    import importlib
    from service.storage.objects import STORES
    for module in set(STORES.values()):
        importlib.import_module(module)
except ImportError:  # the tree before the object-store module
    pass
t0, c0 = time.perf_counter(), time.process_time()
if concurrency == 0:
    for u in uris:
        extract_file(u)
else:
    from service.stats.batch import extract_many
    for u, fs in extract_many(uris):
        if not hasattr(fs, "paths"):
            raise SystemExit(f"{u}: {fs}")
print(time.perf_counter() - t0, time.process_time() - c0)
"""


def old_tree(rev: str) -> Path:
    # Kept by commit, not by name: "main" or "HEAD" name another commit tomorrow.
    git = ["git", "-C", str(REPO)]
    rev = subprocess.run([*git, "rev-parse", "--short=12", rev], check=True, capture_output=True, text=True).stdout.strip()
    d = Path(tempfile.gettempdir()) / f"shredcat-old-{rev}"
    if not (d / "service").is_dir():
        d.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run([*git, "archive", rev, "service"], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(d)], input=archive, check=True)
        _build_accelerator(d / "service" / "parquet")
    return d


def _build_accelerator(parquet: Path) -> None:
    """The old tree's own C footer decoder (its ``_compact.c``: this tree's module may take other
    arguments), compiled as ``pip install`` would; without a compiler the tree runs without it."""
    import sysconfig

    target = parquet / f"_compact{sysconfig.get_config_var('EXT_SUFFIX')}"
    cmd = ["cc", "-shared", "-fPIC", "-O2", f"-I{sysconfig.get_paths()['include']}", str(parquet / "_compact.c"), "-o", str(target)]
    if (parquet / "_compact.c").exists() and subprocess.run(cmd, capture_output=True).returncode != 0:
        print(f"# {parquet}: the C accelerator did not build; that tree runs without it", flush=True)


def run_old(uris: list[str], tree: Path, concurrency: int) -> tuple[float, float]:
    """The old tree's reading of ``uris`` in a subprocess whose environment is this one's (the
    store's)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(uris, f)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    # cwd = the old tree: "python -c" puts the working directory first on sys.path.
    out = subprocess.run([sys.executable, "-c", OLD, f.name, str(concurrency)], env=env, cwd=tree, capture_output=True, text=True)
    os.unlink(f.name)
    if out.returncode != 0:
        raise SystemExit(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}")
    wall, cpu = out.stdout.strip().splitlines()[-1].split()
    return float(wall), float(cpu)


def run_duckdb(uris: list[str], threads: int, endpoint: str, peer: DuckPeer, extension: str) -> tuple[float, float]:
    import duckdb

    con = duckdb.connect()
    try:
        con.execute(f"LOAD '{extension}'")
        con.execute(f"SET threads = {threads}")
        con.execute(peer.secret(endpoint))
        listing = "[" + ", ".join(f"'{peer.uri(u)}'" for u in uris) + "]"
        t0, c0 = time.perf_counter(), time.process_time()
        n = con.execute(f"SELECT count(DISTINCT file_name) FROM parquet_metadata({listing})").fetchone()
        elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    finally:
        con.close()
    if n is None or n[0] != len(uris):
        raise SystemExit(f"duckdb read {n} files of {len(uris)}")
    return elapsed, cpu


def _extension_path(name: str) -> str:
    """The extension file of PyPI's ``duckdb-extension-<name>`` (``--extension-dir`` is on sys.path)."""
    module = importlib.import_module(f"duckdb_extension_{name}")
    return os.path.join(os.path.dirname(str(module.__file__)), "extensions", "v1.5.5", f"{name}.duckdb_extension")


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
    ap.add_argument(
        "--before-rev",
        default="f217a4f",
        help="comma-separated trees to compare with (default: before obstore, the hand-written stores; e.g. main,HEAD)",
    )
    ap.add_argument("--old-rev", default="1e01841", help="the commit before the object-store module")
    ap.add_argument("--old-delays", default="0", help="delays at which the old sequential path runs (S3)")
    ap.add_argument(
        "--extension-dir", "--httpfs-dir", default=None, help="a pip --target directory holding duckdb_extension_httpfs/_azure"
    )
    ap.add_argument("--skip", default="", help="comma-separated: shredcat,before,duckdb,old")
    a = ap.parse_args()
    skip = set(filter(None, a.skip.split(",")))
    if a.extension_dir:
        sys.path.insert(0, a.extension_dir)
    paths = generate(Path(a.dir), a.files)
    size = sum(os.path.getsize(p) for p in paths) / len(paths)
    print(f"# {describe()}; {len(paths)} files of {size / 1024:.1f} KiB average; load average {_load()} at the start")
    print("| store | delay | reader | concurrency | files/s | requests/file | KiB/file | s | client CPU ms/file | server CPU ms/file |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    # Reader name -> its tree: "old", and "before (REV)" for each revision of --before-rev.
    trees: dict[str, Path] = {}
    if "old" not in skip:
        trees["old"] = old_tree(a.old_rev)
    if "before" not in skip:
        trees.update({f"before ({rev})": old_tree(rev) for rev in a.before_rev.split(",")})
    for name in a.stores.split(","):
        target = TARGETS[name]()
        try:
            uris = target.upload(paths)
            os.environ.update(target.env)
            print(f"# {name}: load average {_load()} before", flush=True)
            for delay in [float(x) for x in a.delays.split(",")]:
                target.control(f"delay/{delay:g}")
                for reader, c in _runs(name, target, delay, a, skip, trees):
                    _measure(target, uris, reader, c, delay, trees)
            print(f"# {name}: load average {_load()} after", flush=True)
        finally:
            target.stop()
    print(f"# load average {_load()} at the end")


def _load() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def _runs(
    name: str, target: Target, delay: float, a: argparse.Namespace, skip: set[str], trees: dict[str, Path]
) -> list[tuple[str, int]]:
    """The readers at one delay, in the order they run: each concurrency's before, after and
    DuckDB one after the other, so that they share the machine's state of that moment."""
    runs: list[tuple[str, int]] = []
    if "old" in trees and name == "s3" and f"{delay:g}" in a.old_delays.split(","):
        runs.append(("old (pyarrow.fs, sequential)", 0))
    for c in [int(x) for x in a.concurrency.split(",")]:
        runs.extend((reader, c) for reader in trees if reader.startswith("before"))
        if "shredcat" not in skip:
            runs.append(("shredcat", c))
        if "duckdb" not in skip and target.duckdb is not None:
            runs.append((f"duckdb {target.duckdb.extension}", c))
    return runs


def _measure(target: Target, uris: list[str], reader: str, c: int, delay: float, trees: dict[str, Path]) -> None:
    target.control("reset")
    pids = target.pids
    s0 = cpu_seconds(pids)
    try:
        if reader == "shredcat":
            t, cpu = run_shredcat(uris, c)
        elif reader.startswith(("old", "before")):
            t, cpu = run_old(uris, trees["old" if reader.startswith("old") else reader], c)
        else:
            assert target.duckdb is not None
            t, cpu = run_duckdb(uris, c, target.endpoint, target.duckdb, _extension_path(target.duckdb.extension))
    except SystemExit as e:  # a file failed: say so in the table, go on with the next run
        print(f"| {target.name} | {delay:g} ms | {reader} | {c} | failed: {e} | | | | | |", flush=True)
        return
    server = cpu_seconds(pids) - s0
    served = target.control("requests", "GET")
    n = len(uris)
    print(
        f"| {target.name} | {delay:g} ms | {reader} | {c} | {n / t:,.0f} | {len(served) / n:.2f} | "
        f"{sum(r['bytes'] for r in served) / n / 1024:.1f} | {t:.2f} | {cpu / n * 1000:.2f} | {server / n * 1000:.2f} |",
        flush=True,
    )


def _moto_version() -> str:
    import moto

    return str(moto.__version__)


if __name__ == "__main__":
    main()
