"""Predicate parsing cost per shape: CPU per KiB of ``parse_sql`` (the API's parser) for the
worst texts of issue 32 and the other grammar shapes, each at growing sizes, so that a cost that
is not linear in the text shows as a per-KiB figure that grows with it. A shape the limits refuse
is reported with the CPU the refusal took (it must stay microseconds: the limits fire before
sqlglot tokenizes).

    .venv/bin/python bench/parse_cost.py            # every shape, sizes up to the length limit
    .venv/bin/python bench/parse_cost.py --rounds 5 --shape add

CPU time of this process (``time.process_time``), the median of ``--rounds``; the machine's load is
printed with the figures (on a shared machine they are upper bounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from service.errors import ShredcatError  # noqa: E402
from service.limits import MAX_PREDICATE_LENGTH  # noqa: E402
from service.pruning.parse_sql import parse_sql  # noqa: E402

TERM = "variant_get(v, '$.user.id', 'bigint')"

#: shape -> text of about n bytes.
SHAPES: dict[str, Callable[[int], str]] = {
    "add": lambda n: f"{TERM} = " + "+".join(["1"] * (n // 2)),
    "mul": lambda n: f"{TERM} = " + "*".join(["1"] * (n // 2)),
    "calls": lambda n: f"{TERM} = " + "abs(" * (n // 5) + "1" + ")" * (n // 5),
    "parens": lambda n: f"{TERM} = " + "(" * (n // 2) + "1" + ")" * (n // 2),
    "in": lambda n: f"{TERM} IN (" + ", ".join(str(10**9 + i) for i in range(n // 12)) + ")",
    "or": lambda n: " OR ".join(f"{TERM} = {i}" for i in range(n // 45)),
    "and-or": lambda n: " AND ".join(f"({TERM} = {i} OR {TERM} > {i})" for i in range(n // 95)),
    "string": lambda n: "variant_get(v, '$.name', 'string') = '" + "x" * n + "'",
    "in-strings": lambda n: "variant_get(v, '$.name', 'string') IN (" + ", ".join(
        f"'name-{i:012d}'" for i in range(n // 21)) + ")",
}
SIZES = (4 * 1024, 32 * 1024, 256 * 1024)


def measure(text: str, rounds: int) -> tuple[float, str]:
    times = []
    outcome = "ok"
    for _ in range(rounds):
        t = time.process_time()
        try:
            parse_sql(text, max_length=max(MAX_PREDICATE_LENGTH, len(text)))
        except ShredcatError as e:
            outcome = f"{e.code} {type(e).__name__}"
        except RecursionError:
            outcome = "RecursionError"
        times.append(time.process_time() - t)
    return statistics.median(times), outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shape", choices=sorted(SHAPES), action="append")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; median of {args.rounds} rounds (CPU)")
    print(f"{'shape':11s} {'KiB':>7s} {'ms':>9s} {'ms/KiB':>8s}  outcome")
    for name in args.shape or SHAPES:
        for size in SIZES:
            text = SHAPES[name](size)
            cpu, outcome = measure(text, args.rounds)
            kib = len(text) / 1024
            print(f"{name:11s} {kib:7.1f} {cpu * 1000:9.2f} {cpu * 1000 / kib:8.3f}  {outcome}", flush=True)


if __name__ == "__main__":
    main()
