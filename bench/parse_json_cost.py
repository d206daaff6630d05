"""Filter JSON parsing cost against nesting: CPU of ``parse_json`` on a left-deep AND/OR chain (how
clients write many conjuncts: each operand one level deeper than the last) at growing lengths,
beside its peer measured in the same run, the same terms as a balanced tree (``to_json``'s form,
whose nesting is logarithmic). A cost per term that grows with the chain's length is work that is
not linear in the depth. Each length is parsed twice: with ``max_terms`` raised to accept it (every
leaf built) and at the default limits (refused by the term count: what a hostile client costs).

    .venv/bin/python bench/parse_json_cost.py
    .venv/bin/python bench/parse_json_cost.py --rounds 5 --terms 22000

CPU time of this process (``time.process_time``), the median of ``--rounds``; the machine's load is
printed with the figures (on a shared machine they are upper bounds).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from service.errors import ShredcatError  # noqa: E402
from service.pruning.parse_json import parse_json  # noqa: E402

TERM = {"type": "variant", "column": "v", "path": "$.user.id", "as": "bigint"}


def leaf(i: int) -> dict[str, Any]:
    return {"type": "eq", "term": TERM, "value": i}


def left_deep(n: int, kind: str = "or") -> Any:
    doc: Any = leaf(0)
    for i in range(1, n):
        doc = {"type": kind, "left": doc, "right": leaf(i)}
    return doc


def balanced(n: int, kind: str = "or", start: int = 0) -> Any:
    if n == 1:
        return leaf(start)
    half = n // 2
    return {"type": kind, "left": balanced(half, kind, start), "right": balanced(n - half, kind, start + half)}


def attempt(doc: Any, max_terms: int | None) -> str:
    """``ok``, or the class of the error that refused ``doc``."""
    try:
        parse_json(doc) if max_terms is None else parse_json(doc, max_terms=max_terms)
    except ShredcatError as e:
        return type(e).__name__
    return "ok"


def measure(doc: Any, max_terms: int | None, rounds: int) -> tuple[float, str]:
    times = []
    outcome = "ok"
    for _ in range(rounds):
        t = time.process_time()
        outcome = attempt(doc, max_terms)
        times.append(time.process_time() - t)
    return statistics.median(times), outcome


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--terms", type=int, action="append", help="chain lengths (default 2750 5500 11000 22000)")
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; median of {args.rounds} rounds (CPU)")
    print(f"{'shape':9s} {'terms':>7s} {'limits':>8s} {'ms':>9s} {'µs/term':>8s}  outcome")
    for n in args.terms or (2750, 5500, 11_000, 22_000):
        for name, doc in (("left-deep", left_deep(n)), ("balanced", balanced(n))):
            for label, max_terms in (("raised", n), ("default", None)):
                cpu, outcome = measure(doc, max_terms, args.rounds)
                print(
                    f"{name:9s} {n:7d} {label:>8s} {cpu * 1000:9.2f} {cpu * 1e6 / n:8.2f}  {outcome}",
                    flush=True,
                )
    print(f"load average {os.getloadavg()[0]:.1f} after")


if __name__ == "__main__":
    main()
