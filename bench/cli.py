"""Start-up and run time of the read-only ``shredcat`` commands on the embedded SQLite default.

    .venv/bin/python bench/cli.py                    # 10,000 files, 10 runs per command
    .venv/bin/python bench/cli.py --repeat 20 --importtime

Data: the 10,000 synthetic files of ``bench/prune.py`` (10 shredded paths each), committed through
``Catalog.commit`` in batches of 1,000 into a SQLite file under ``--data-dir``; built once and kept
(a later run reuses it). Each command then runs as its own process, as a script calling it in a
loop would: ``python -m service.cli ...`` with stdout to /dev/null, after one warm-up run,
``--repeat`` times; median and p90 of the wall time, median CPU time (user + system).
``--baseline DIR`` also times another source tree's ``service`` (say, the revision before a
change) in the same run, runs interleaved.
Floors in the same run: ``python -c pass`` (the interpreter alone), ``shredcat --help`` (the
argument parser), importing SQLAlchemy and sqlglot (what a command reading the catalog and parsing
a predicate cannot do without) and the ``sqlite3`` shell answering the equivalent query on the
same file.
``--importtime`` also prints each command's slowest imports (``python -X importtime``, cumulative).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe

ROOT = Path(__file__).resolve().parents[1]

NS, TABLE = "bench", "events"
POINT = "variant_get(v, '$.user.id', 'bigint') = 5000500"
POINT_JSON = '{"type": "eq", "term": {"type": "variant", "column": "v", "path": "$.user.id", "as": "bigint"}, "value": 5000500}'


@dataclass(frozen=True)
class Timing:
    median: float
    p90: float
    #: Median CPU time (user + system) of the process: what the wall time approaches on an idle
    #: machine, and steadier than it on a shared one.
    cpu: float


def build(path: Path, n: int) -> None:
    """The catalog file with ``n`` files, unless a complete one is already there."""
    done = path.with_name(path.name + ".complete")
    if done.exists() and path.exists():
        return
    for p in path.parent.glob(path.name + "*"):
        p.unlink()
    from bench.prune import load

    t0 = time.perf_counter()
    load(f"sqlite:///{path}", n, batch=1000, seed=11)
    print(f"built {path} ({n:,} files) in {time.perf_counter() - t0:.1f} s", flush=True)
    done.touch()


def commands(db: Path) -> list[tuple[str, list[str]]]:
    py = [sys.executable]
    cli = [*py, "-m", "service.cli"]
    url = ["--database-url", f"sqlite:///{db}"]
    t = ["--table", f"{NS}.{TABLE}"]
    out: list[tuple[str, list[str]]] = [
        ("python -c pass", [*py, "-c", "pass"]),
        ("shredcat --help", [*cli, "--help"]),
        # What any command reading the catalog must import (issue 33's floor for read commands).
        ("floor: import sqlalchemy, sqlglot", [*py, "-c", "import sqlalchemy, sqlalchemy.engine, sqlglot"]),
    ]
    if shutil.which("sqlite3"):
        out += [
            (
                "sqlite3: count live files",
                ["sqlite3", str(db), "SELECT count(*) FROM ducklake_data_file WHERE end_snapshot IS NULL"],
            ),
            (
                "sqlite3: list live paths",
                [
                    "sqlite3",
                    str(db),
                    "SELECT path FROM ducklake_data_file WHERE end_snapshot IS NULL ORDER BY path",
                ],
            ),
        ]
    out += [
        ("shredcat tables", [*cli, "tables", *url]),
        ("shredcat files", [*cli, "files", *t, *url]),
        ("shredcat global-stats", [*cli, "global-stats", *t, *url]),
        ("shredcat prune (SQL)", [*cli, "prune", *t, POINT, *url]),
        ("shredcat prune (JSON)", [*cli, "prune", *t, POINT_JSON, *url]),
    ]
    return out


def env(source: Path) -> dict[str, str]:
    e = {k: v for k, v in os.environ.items() if not k.upper().startswith("SHREDCAT_")}
    # As installed: the bytecode cache is written (by the warm-up run) and used.
    e.pop("PYTHONDONTWRITEBYTECODE", None)
    e["PYTHONPATH"] = str(source)
    return e


def measure(argv: list[str], sources: list[Path], repeat: int) -> list[Timing]:
    """Timings of ``argv`` run with each source tree's ``service`` package, runs interleaved so
    that a change in the machine's load hits every tree alike."""
    # Run in the tree itself: `python -m`/`-c` put the working directory first on sys.path.
    runs = [
        dict(env=env(s), cwd=s, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        for s in sources
    ]
    for kw in runs:
        subprocess.run(argv, **kw)  # type: ignore[call-overload]
    times: list[list[float]] = [[] for _ in runs]
    cpus: list[list[float]] = [[] for _ in runs]
    for _ in range(repeat):
        for kw, ts, cs in zip(runs, times, cpus, strict=True):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            subprocess.run(argv, **kw)  # type: ignore[call-overload]
            ts.append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            cs.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
    out = []
    for ts, cs in zip(times, cpus, strict=True):
        ts.sort()
        out.append(Timing(statistics.median(ts), ts[round(0.9 * (len(ts) - 1))], statistics.median(cs)))
    return out


def importtime(argv: list[str], top: int) -> list[tuple[int, str]]:
    """The ``top`` slowest top-level imports (cumulative microseconds, module)."""
    r = subprocess.run(
        [argv[0], "-X", "importtime", *argv[1:]],
        env=env(ROOT),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    rows = []
    for line in r.stderr.splitlines():
        if not line.startswith("import time:") or "cumulative" in line:
            continue
        _, cumulative, name = line[len("import time:") :].split("|")
        if not name[1:].startswith(" "):  # a top-level import (nested ones are indented)
            rows.append((int(cumulative), name.strip()))
    return sorted(rows, reverse=True)[:top]


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "shredcat-bench-cli"))
    p.add_argument(
        "--baseline",
        type=Path,
        help="another source tree (e.g. `git archive REV | tar -x -C DIR`) timed in the same run",
    )
    p.add_argument("--importtime", action="store_true", help="print each command's slowest imports")
    args = p.parse_args(argv)

    data = Path(args.data_dir)
    data.mkdir(parents=True, exist_ok=True)
    db = data / f"cli-{args.files}.db"
    build(db, args.files)
    sources = [ROOT] if args.baseline is None else [args.baseline.resolve(), ROOT]
    print(f"machine: {describe()}; load average {_load()}")
    print(f"catalog: {db} ({args.files:,} files), {args.repeat} runs per command after 1 warm-up")
    if args.baseline is not None:
        print(f"baseline: {sources[0]}; this tree: {ROOT}")
        print("\n| command | baseline: median s | p90 s | CPU s | this tree: median s | p90 s | CPU s |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    else:
        print("\n| command | median s | p90 s | CPU s |\n| --- | ---: | ---: | ---: |")
    for name, cmd in commands(db):
        cells = " | ".join(
            f"{t.median:.3f} | {t.p90:.3f} | {t.cpu:.3f}" for t in measure(cmd, sources, args.repeat)
        )
        print(f"| {name} | {cells} |", flush=True)
    print(f"\nload average after: {_load()}")
    if args.importtime:
        for name, cmd in commands(db):
            if cmd[0] != sys.executable or name.startswith("python"):
                continue
            print(f"\n{name}: slowest imports (cumulative ms)")
            for us, mod in importtime(cmd, 8):
                print(f"  {us / 1000:7.1f}  {mod}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
