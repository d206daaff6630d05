"""What the standby deadline (:mod:`service.catalog.deadlines`) costs a read.

Two figures:

* the watchdog alone: one ``arm`` + ``disarm`` pair (what each psycopg wait of a standby connection
  adds), in one thread and in ``--threads`` threads at once (they share its lock);
* a small read through :func:`service.catalog.db.run_transaction` on a PostgreSQL engine with and
  without the deadline installed (``--url``, default the local cluster's ``postgres`` database;
  the read is ``SELECT 1`` in a read transaction, the cheapest read there is, so the overhead is
  at its largest share): process CPU and wall time per read, and the waits per read.

    .venv/bin/python bench/deadlines.py [--url postgresql://postgres@127.0.0.1:5432/postgres]

Medians of ``--rounds`` interleaved rounds; the load average is printed with the figures (on a
shared machine they are upper bounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.machine import describe  # noqa: E402
from service.catalog import deadlines  # noqa: E402
from service.catalog.db import make_engine, run_transaction  # noqa: E402


def pair_ns(n: int, threads: int) -> float:
    """Wall nanoseconds per arm + disarm pair, ``threads`` threads each doing ``n``."""
    dog = deadlines.Watchdog()

    def work() -> None:
        for _ in range(n):
            dog.disarm(dog.arm(int, 60.0))

    workers = [threading.Thread(target=work) for _ in range(threads)]
    t = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return (time.perf_counter() - t) / (n * threads) * 1e9


def read_costs(url: str, reads: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """((CPU µs, wall µs) without, (CPU µs, wall µs) with the deadline) per read of ``SELECT 1``
    in a read transaction: two engines, their reads taken in turn so that the machine's load
    drifts alike on both (process CPU: the watchdog thread's included)."""
    plain = make_engine(url, pool_size=1, max_overflow=0)
    armed = make_engine(url, pool_size=1, max_overflow=0)
    deadlines.install(armed, 10.0, label="bench")
    one: Callable[..., object] = lambda conn: conn.exec_driver_sql("SELECT 1").scalar()  # noqa: E731
    spent = {plain: [0.0, 0.0], armed: [0.0, 0.0]}
    try:
        for engine in (plain, armed):
            for _ in range(50):  # connect, warm the statement cache
                run_transaction(engine, one, write=False)
        for _ in range(reads):
            for engine, total in spent.items():
                cpu, wall = time.process_time(), time.perf_counter()
                run_transaction(engine, one, write=False)
                total[0] += time.process_time() - cpu
                total[1] += time.perf_counter() - wall
        (c0, w0), (c1, w1) = spent[plain], spent[armed]
        return (c0 / reads * 1e6, w0 / reads * 1e6), (c1 / reads * 1e6, w1 / reads * 1e6)
    finally:
        plain.dispose()
        armed.dispose()


def waits_per_read(url: str) -> float:
    """How many psycopg waits of a read are armed (those that wait on the server)."""
    engine = make_engine(url, pool_size=1, max_overflow=0)
    deadlines.install(engine, 10.0, label="bench")
    counted = [0]
    arm = deadlines.WATCHDOG.arm

    def counting(*args: object, **kwargs: object) -> deadlines.Armed:
        counted[0] += 1
        return arm(*args, **kwargs)  # type: ignore[arg-type]

    try:
        run_transaction(engine, lambda conn: conn.exec_driver_sql("SELECT 1").scalar(), write=False)
        deadlines.WATCHDOG.arm = counting  # type: ignore[method-assign]
        for _ in range(100):
            run_transaction(engine, lambda conn: conn.exec_driver_sql("SELECT 1").scalar(), write=False)
        return counted[0] / 100
    finally:
        deadlines.WATCHDOG.arm = arm  # type: ignore[method-assign]
        engine.dispose()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/postgres")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--reads", type=int, default=5000)
    p.add_argument("--threads", type=int, default=8)
    args = p.parse_args()
    print(f"{describe()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    single = statistics.median(pair_ns(200_000, 1) for _ in range(args.rounds))
    shared = statistics.median(pair_ns(50_000, args.threads) for _ in range(args.rounds))
    print(f"arm + disarm: {single:.0f} ns (1 thread), {shared:.0f} ns per pair ({args.threads} threads at once)")
    print(f"armed waits per read: {waits_per_read(args.url):g}")
    rounds = [read_costs(args.url, args.reads) for _ in range(args.rounds)]
    for i, name in enumerate(("without", "with")):
        cpu = statistics.median(r[i][0] for r in rounds)
        wall = statistics.median(r[i][1] for r in rounds)
        print(f"read {name} deadline: {cpu:.1f} µs CPU, {wall:.1f} µs wall per read (medians of {args.rounds} rounds)")
    extra = sorted(r[1][0] - r[0][0] for r in rounds)
    print(f"CPU added per read: {statistics.median(extra):+.1f} µs (rounds: {', '.join(f'{x:+.1f}' for x in extra)})")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
