"""Predicate parsing cost per shape: CPU per KiB of ``parse_sql`` (the API's parser, against a table
schema as the plan route passes it) for the worst texts of issue 32 and every other grammar shape,
each at growing sizes and at the largest size the limits accept, so that a cost that is not linear
in the text shows as a per-KiB figure that grows with it. Beside the CPU, the work counted:
Python and C function calls per KiB (:func:`parse_calls`, the same on any machine; the figure
``tests/pruning/test_parse_cost.py`` bounds). A shape the limits refuse is reported with what the
refusal took (the limits fire on the raw text, before sqlglot tokenizes, where they can).

    .venv/bin/python bench/parse_cost.py            # every shape
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
from types import MappingProxyType
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from service.errors import ShredcatError  # noqa: E402
from service.limits import MAX_PREDICATE_LENGTH  # noqa: E402
from service.pruning.parse_sql import parse_sql  # noqa: E402
from service.pruning.schema import ColumnInfo, TableSchema  # noqa: E402
from service.values import ShreddedType  # noqa: E402

TERM = "variant_get(v, '$.user.id', 'bigint')"
NAME = "variant_get(v, '$.name', 'string')"

#: The table the texts are parsed against: a Variant column and two plain ones.
SCHEMA = TableSchema(
    ("v",),
    MappingProxyType({
        "id": ColumnInfo("id", ShreddedType.parse("int64")),
        "name": ColumnInfo("name", ShreddedType.parse("varchar")),
    }),
)

#: shape -> text of about n bytes.
SHAPES: dict[str, Callable[[int], str]] = {
    "add": lambda n: f"{TERM} = " + "+".join(["1"] * (n // 2)),
    "mul": lambda n: f"{TERM} = " + "*".join(["1"] * (n // 2)),
    "calls": lambda n: f"{TERM} = " + "abs(" * (n // 5) + "1" + ")" * (n // 5),
    "parens": lambda n: f"{TERM} = " + "(" * (n // 2) + "1" + ")" * (n // 2),
    "nots": lambda n: "NOT " * (n // 4) + f"{TERM} = 1",
    "in": lambda n: f"{TERM} IN (" + ", ".join(str(10**9 + i) for i in range(n // 12)) + ")",
    "in-strings": lambda n: f"{NAME} IN (" + ", ".join(f"'name-{i:012d}'" for i in range(n // 21)) + ")",
    "in-signed": lambda n: f"{TERM} IN (" + ", ".join(str(-(10**9) - i) for i in range(n // 13)) + ")",
    "or": lambda n: " OR ".join(f"{TERM} = {i}" for i in range(n // 45)),
    "and-or": lambda n: " AND ".join(f"({TERM} = {i} OR {TERM} > {i})" for i in range(n // 95)),
    "paths": lambda n: " OR ".join(f"variant_get(v, '$.p{i}.q{i}', 'bigint') = {i}" for i in range(n // 48)),
    "string": lambda n: f"{NAME} = '" + "x" * n + "'",
    "escapes": lambda n: f"{NAME} = '" + "\\n" * (n // 2) + "'",
    "like": lambda n: "name LIKE '" + "a" * n + "%'",
    "like-wild": lambda n: "name LIKE '" + "%a_" * (n // 3) + "'",
    "case": lambda n: "CASE " + " ".join(f"WHEN id = {i} THEN {i}" for i in range(n // 25)) + " END = 1",
    "coalesce": lambda n: "coalesce(" + ", ".join([TERM] * (n // 39)) + ") = 1",
    "shorthand": lambda n: "v:" + ".".join(f"k{i}" for i in range(n // 6)) + "::int = 1",
    "subscripts": lambda n: "v:a" + "[0]" * (n // 3) + "::int = 1",
    "struct-path": lambda n: "id." + ".".join(f"k{i}" for i in range(n // 6)) + " = 1",
    "many-paths": lambda n: " OR ".join("v:" + ".".join(f"k{j}" for j in range(60)) + f"::int = {i}" for i in range(n // 300)),
}
SIZES = (4 * 1024, 32 * 1024, 256 * 1024)


def attempt(text: str) -> str:
    """``ok``, or the error code and class that refused ``text``."""
    try:
        parse_sql(text, schema=SCHEMA, max_length=max(MAX_PREDICATE_LENGTH, len(text)))
    except ShredcatError as e:
        return f"{e.code} {type(e).__name__}"
    except RecursionError:
        return "RecursionError"
    return "ok"


def parse_calls(text: str) -> int:
    """Python and C function calls made while parsing ``text`` (``sys.setprofile``): the work
    of the parse, counted rather than timed."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    sys.setprofile(count)
    try:
        attempt(text)
    finally:
        sys.setprofile(None)
    return calls


def largest_accepted(shape: Callable[[int], str], top: int = MAX_PREDICATE_LENGTH) -> int:
    """The largest n (a multiple of 64 up to ``top``) whose text the limits accept, by bisection
    (0 when none is; outcomes are monotone in n for every shape here)."""
    if attempt(shape(64)) != "ok":
        return 0
    lo, hi = 64, top
    if len(shape(hi)) <= top and attempt(shape(hi)) == "ok":
        return hi
    while hi - lo > 64:
        mid = (lo + hi) // 2 // 64 * 64
        if len(shape(mid)) <= top and attempt(shape(mid)) == "ok":
            lo = mid
        else:
            hi = mid
    return lo


def measure(text: str, rounds: int) -> tuple[float, str]:
    times = []
    outcome = "ok"
    for _ in range(rounds):
        t = time.process_time()
        outcome = attempt(text)
        times.append(time.process_time() - t)
    return statistics.median(times), outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shape", choices=sorted(SHAPES), action="append")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; median of {args.rounds} rounds (CPU)")
    print(f"{'shape':11s} {'KiB':>7s} {'ms':>9s} {'ms/KiB':>8s} {'calls/KiB':>10s}  outcome")
    for name in args.shape or SHAPES:
        shape = SHAPES[name]
        best = largest_accepted(shape)
        for size, label in [(s, "") for s in SIZES] + ([(best, " (largest accepted)")] if best else []):
            text = shape(size)
            cpu, outcome = measure(text, args.rounds)
            kib = len(text) / 1024
            calls = parse_calls(text) / kib
            print(
                f"{name:11s} {kib:7.1f} {cpu * 1000:9.2f} {cpu * 1000 / kib:8.3f} {calls:10.0f}  {outcome}{label}",
                flush=True,
            )


if __name__ == "__main__":
    main()
