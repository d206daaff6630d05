"""What the read deadline (:mod:`service.catalog.deadlines`) costs a read, on a standby's engine and
on the primary's (armed per read transaction).

Two figures:

* the watchdog alone: one ``arm`` + ``disarm`` pair (what each psycopg wait of a standby connection
  adds), in one thread and in ``--threads`` threads at once (they share its lock);
* a small read through :func:`service.catalog.db.run_transaction` on a PostgreSQL engine without
  the deadline, with a standby's, and with the primary's (``shared_with_writes``: each read
  transaction armed and disarmed) (``--url``, default the local cluster's ``postgres`` database;
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

#: The engines compared, as installed: none, a standby's, the primary's.
KINDS = ("without deadline", "standby deadline", "primary deadline")


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


def read_costs(url: str, reads: int) -> list[tuple[float, float]]:
    """(CPU µs, wall µs) per read of ``SELECT 1`` in a read transaction on each engine of
    :data:`KINDS`, their reads taken in turn so that the machine's load drifts alike on all
    (process CPU: the watchdog thread's included)."""
    engines = [make_engine(url, pool_size=1, max_overflow=0) for _ in KINDS]
    deadlines.install(engines[1], 10.0, label="bench standby")
    deadlines.install(engines[2], 10.0, label="bench primary", shared_with_writes=True)
    one: Callable[..., object] = lambda conn: conn.exec_driver_sql("SELECT 1").scalar()  # noqa: E731
    spent = [[0.0, 0.0] for _ in engines]
    try:
        for engine in engines:
            for _ in range(50):  # connect, warm the statement cache
                run_transaction(engine, one, write=False)
        for _ in range(reads):
            for engine, total in zip(engines, spent, strict=True):
                cpu, wall = time.process_time(), time.perf_counter()
                run_transaction(engine, one, write=False)
                total[0] += time.process_time() - cpu
                total[1] += time.perf_counter() - wall
        return [(c / reads * 1e6, w / reads * 1e6) for c, w in spent]
    finally:
        for engine in engines:
            engine.dispose()


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
    for i, name in enumerate(KINDS):
        cpu = statistics.median(r[i][0] for r in rounds)
        wall = statistics.median(r[i][1] for r in rounds)
        print(f"read {name}: {cpu:.1f} µs CPU, {wall:.1f} µs wall per read (medians of {args.rounds} rounds)")
    for i, name in enumerate(KINDS[1:], 1):
        extra = sorted(r[i][0] - r[0][0] for r in rounds)
        print(f"CPU added per read, {name}: {statistics.median(extra):+.1f} µs (rounds: {', '.join(f'{x:+.1f}' for x in extra)})")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
