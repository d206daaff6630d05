"""Today's figures: run a short configuration of the bench scripts and rewrite the table that opens
BENCHMARKS.md (between its ``summary:begin`` and ``summary:end`` markers).

    make bench                                       # every step, then BENCHMARKS.md is rewritten
    .venv/bin/python bench/summary.py --dry-run      # print the table, leave BENCHMARKS.md alone
    .venv/bin/python bench/summary.py --only extract,cli --machine-note "quiet machine"

Each step runs one existing script as its own process (its output is echoed as it comes), and its
figures are read from what the script prints (``--json`` where the script has it). A row holds the
question, the command that measured it, shredcat's figure, the peer measured in the same run
(``—`` when the script has none), their ratio, when it ran (UTC) and on what: the machine, its
load average before and after the step, and ``--machine-note`` (say whether other jobs shared it).
A step that fails or prints no figure stops the run before BENCHMARKS.md is touched: the table
only ever holds figures of one complete run. ``--only`` keeps the other rows as they were.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.machine import describe  # noqa: E402

BEGIN = "<!-- summary:begin (bench/summary.py rewrites this table: do not edit by hand) -->"
END = "<!-- summary:end -->"
HEADER = (
    "| question | command | result | peer (same run) | ratio | date (UTC) | machine |\n"
    "| --- | --- | ---: | ---: | ---: | --- | --- |"
)

# The short configuration: minutes on the 2-core project machine, at the scales the history uses.
EXTRACT_FILES = 5_000
COMMIT_FILES = 20_000
PRUNE_FILES = 100_000
CLI_FILES = 10_000
HTTP_FILES = 100_000


class SummaryError(Exception):
    """A step failed or its output did not hold the figure it should have printed."""


@dataclass(frozen=True)
class Row:
    key: str  # the step's name then the figure's: rows of steps not rerun (--only) are kept by it
    question: str
    command: str
    result: str
    peer: str
    ratio: str

    def cells(self, date: str, machine: str) -> str:
        return f"| {self.question} | `{self.command}` | {self.result} | {self.peer} | {self.ratio} | {date} | {machine} |"


def times_faster(ours: float, peer: float) -> str:
    """``ours`` and ``peer`` are times (lower is better) or rates (pass them the other way round)."""
    if ours <= 0 or peer <= 0:
        raise SummaryError(f"a non-positive figure ({ours}, {peer}) cannot be compared")
    r = peer / ours
    return f"{r:.2f}× faster" if r >= 1 else f"{1 / r:.2f}× slower"


def grab(pattern: str, text: str, what: str) -> re.Match[str]:
    m = re.search(pattern, text, re.MULTILINE)
    if m is None:
        raise SummaryError(f"no {what} in the output (pattern {pattern!r})")
    return m


def num(s: str) -> float:
    return float(s.replace(",", ""))


# --- parsers: one per script, each from the text (or JSON) the script itself writes --------------


def parse_extract(out: str, command: str) -> list[Row]:
    row = r"^{}\s+([\d.]+)\s+(\d+)\s+([\d.]+)\s+(\d+)\s*$"
    ours = grab(row.format(re.escape("shredcat extract")), out, "shredcat extract line")
    peer = grab(row.format(re.escape("duckdb parquet_metadata (1 thread)")), out, "DuckDB 1-thread line")
    cpu_ratio = num(ours[4]) / num(peer[4])
    return [
        Row(
            "extract.files_per_s",
            f"Extract: footers to Variant stats, one process ({EXTRACT_FILES:,} small DuckDB-written files)",
            command,
            f"{num(ours[2]):,.0f} files/s ({num(ours[3]):.0f} CPU µs/file)",
            f"DuckDB `parquet_metadata()`, 1 thread: {num(peer[2]):,.0f} files/s ({num(peer[3]):.0f} CPU µs/file)",
            f"{times_faster(num(peer[2]), num(ours[2]))} wall, {cpu_ratio:.2f}× per CPU-second",
        )
    ]


def parse_commit(out: str, command: str) -> list[Row]:
    rows = []
    for backend, label in (("sqlite", "SQLite"), ("postgres", "PostgreSQL")):
        m = grab(
            rf"^{backend}\s+\[.*?\] ([\d,]+) files .*?= ([\d,]+) files/s .*?batch p50 (\d+) ms",
            out,
            f"{backend} commit line",
        )
        rows.append(
            Row(
                f"commit.{backend}",
                f"Commit: pre-extracted stats into the catalog, {label} ({m[1]} files × 10 paths, batches of 1,000)",
                command,
                f"{num(m[2]):,.0f} files/s (batch p50 {m[3]} ms)",
                "— (no peer in `bench/commit.py`)",
                "—",
            )
        )
    return rows


PRUNE_QUERIES = {"point": "one id (1 file kept)", "in20": "IN of 20 ids (20 files kept)"}


def parse_prune(result: dict[str, object], command: str) -> list[Row]:
    rows = []
    runs = result["runs"]
    assert isinstance(runs, dict)
    for backend, label, peer_name in (
        ("sqlite", "SQLite", "ducklake-sqlite"),
        ("postgres", "PostgreSQL", "ducklake-pg"),
    ):
        if backend not in runs:
            raise SummaryError(f"prune.py measured no {backend} run")
        res = runs[backend]["results"]
        for q, what in PRUNE_QUERIES.items():
            try:
                ours = res[q]["shredcat+counts"]["p50_ms"]
                peer = res[q][peer_name]["p50_ms"]
            except KeyError as e:
                raise SummaryError(f"prune.py printed no {q} figure for {backend}: {e}") from None
            rows.append(
                Row(
                    f"prune.{backend}.{q}",
                    f"Prune: plan a Variant predicate, {what}, {label}, {result['files']:,} files × 10 paths",
                    command,
                    f"p50 {ours:.2f} ms (first page + counts)",
                    f"DuckLake-style VARCHAR + cast SQL, same database: p50 {peer:.2f} ms",
                    times_faster(ours, peer),
                )
            )
    return rows


CLI_FLOOR = "floor: import sqlalchemy, sqlglot"


def parse_cli(out: str, command: str) -> list[Row]:
    def median(name: str) -> float:
        return num(grab(rf"^\| {re.escape(name)} \| ([\d.]+) \|", out, f"`{name}` row")[1])

    floor = median(CLI_FLOOR)
    rows = []
    for name in ("shredcat prune (SQL)", "shredcat tables"):
        ours = median(name)
        rows.append(
            Row(
                f"cli.{name.split()[1]}",
                f"CLI: `{name.removesuffix(' (SQL)')}` as its own process, SQLite catalog of {CLI_FILES:,} files",
                command,
                f"median {ours:.3f} s",
                f"`python -c 'import sqlalchemy, sqlalchemy.engine, sqlglot'`: {floor:.3f} s",
                f"{ours / floor:.2f}× the floor",
            )
        )
    return rows


def parse_http(cells: list[dict[str, object]], command: str, in_process_ms: float | None) -> list[Row]:
    by_clients = {c["concurrency"]: c for c in cells if c["code"] == "this" and c["workers"] == 1}
    if 1 not in by_clients or 8 not in by_clients:
        raise SummaryError("http_plan.py measured no 1- and 8-client cells with 1 worker")
    one, eight = by_clients[1], by_clients[8]
    p50 = float(str(one["p50_ms"]))
    peer = "—" if in_process_ms is None else f"`Catalog.plan` in-process (prune row, PostgreSQL point): p50 {in_process_ms:.2f} ms"
    return [
        Row(
            "http.p50",
            f"HTTP: one plan request (point, 1 file kept) to `shredcat serve`, 1 worker, 1 client, PostgreSQL, {HTTP_FILES:,} files",
            command,
            f"p50 {p50:.2f} ms (server's own p50 {one['server_p50_ms']} ms)",
            peer,
            "—" if in_process_ms is None else f"{p50 / in_process_ms:.2f}× the in-process plan",
        ),
        Row(
            "http.rps",
            "HTTP: plan requests/s, 1 worker, 8 keep-alive clients, PostgreSQL",
            command,
            f"{eight['rps']} requests/s (p99 {eight['p99_ms']} ms)",
            "— (no peer in `bench/http_plan.py`)",
            "—",
        ),
    ]


# --- the run ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    name: str
    script: str
    args: tuple[str, ...]  # shown in the table's command column
    private: Callable[[Path], tuple[str, ...]]  # scratch paths under the run's temporary directory
    parse: Callable[[str, Path, str, dict[str, float]], list[Row]]

    def command(self) -> str:
        return " ".join(["python", f"bench/{self.script}", *self.args])


def _prune(out: str, tmp: Path, command: str, shared: dict[str, float]) -> list[Row]:
    result = json.loads((tmp / "prune.json").read_text())
    # The peer of the HTTP row: the same plan without counts, as the REST plan runs it.
    with contextlib.suppress(KeyError):
        shared["plan_ms"] = result["runs"]["postgres"]["results"]["point"]["shredcat"]["p50_ms"]
    return parse_prune(result, command)


def _http(out: str, tmp: Path, command: str, shared: dict[str, float]) -> list[Row]:
    return parse_http(json.loads((tmp / "http.json").read_text()), command, shared.get("plan_ms"))


STEPS = [
    Step(
        "extract",
        "extract.py",
        ("--files", str(EXTRACT_FILES), "--repeat", "3"),
        lambda tmp: ("--dir", str(tmp / "extract")),
        lambda out, tmp, command, shared: parse_extract(out, command),
    ),
    Step(
        "commit",
        "commit.py",
        ("--files", str(COMMIT_FILES), "--backend", "both"),
        lambda tmp: (),
        lambda out, tmp, command, shared: parse_commit(out, command),
    ),
    Step(
        "prune",
        "prune.py",
        ("--files", str(PRUNE_FILES), "--only", ",".join(PRUNE_QUERIES), "--repeat", "15", "--budget", "10",
         "--no-duckdb"),
        lambda tmp: ("--data-dir", str(tmp / "prune"), "--json", str(tmp / "prune.json")),
        _prune,
    ),
    Step(
        "cli",
        "cli.py",
        ("--files", str(CLI_FILES), "--repeat", "10"),
        lambda tmp: ("--data-dir", str(tmp / "cli")),
        lambda out, tmp, command, shared: parse_cli(out, command),
    ),
    Step(
        "http",
        "http_plan.py",
        ("--files", str(HTTP_FILES), "--requests", "1000", "--concurrency", "1,8", "--workers", "1"),
        lambda tmp: ("--json", str(tmp / "http.json")),
        _http,
    ),
]


def run_script(argv: list[str]) -> str:
    """Run one bench script, echoing its output as it comes; its whole stdout."""
    lines = []
    with subprocess.Popen(argv, cwd=REPO, stdout=subprocess.PIPE, text=True, bufsize=1) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            sys.stdout.write(line)
            sys.stdout.flush()
            lines.append(line)
    if proc.returncode != 0:
        raise SummaryError(f"{' '.join(argv[1:])} exited with status {proc.returncode}")
    return "".join(lines)


def load() -> float:
    return os.getloadavg()[0]


def run(steps: list[Step], note: str) -> list[str]:
    """The table rows of ``steps``, measured now, in order."""
    host = describe().replace(" RAM", "")
    shared: dict[str, float] = {}
    lines = []
    with tempfile.TemporaryDirectory(prefix="shredcat-summary-") as d:
        tmp = Path(d)
        for step in steps:
            print(f"\n== {step.command()}", flush=True)
            before, date = load(), time.strftime("%Y-%m-%d %H:%M", time.gmtime())
            out = run_script([sys.executable, str(REPO / "bench" / step.script), *step.args, *step.private(tmp)])
            rows = step.parse(out, tmp, step.command(), shared)
            machine = f"{host}; load average {before:.1f}→{load():.1f}" + (f"; {note}" if note else "")
            lines += [f"{r.cells(date, machine)} <!-- {r.key} -->" for r in rows]
    return lines


def rewrite(doc: str, lines: list[str]) -> str:
    """``doc`` with the table between the markers replaced; rows whose key is not among ``lines``
    (steps left out with ``--only``) are kept where they were."""
    if doc.count(BEGIN) != 1 or doc.count(END) != 1 or doc.index(BEGIN) > doc.index(END):
        raise SummaryError("BENCHMARKS.md must hold the summary markers once each, begin before end")
    head, rest = doc.split(BEGIN)
    old, tail = rest.split(END)
    key = re.compile(r"<!-- (\S+) -->\s*$")
    new = {m[1]: line for line in lines if (m := key.search(line))}
    kept = []
    for line in old.splitlines():
        m = key.search(line)
        if m and m[1] not in new:
            kept.append(line)
    # Rows in the order of STEPS (a stable sort: a step's rows keep their own order).
    order = [s.name for s in STEPS]
    body = sorted(kept + list(new.values()), key=lambda line: order.index(_step(line)))
    return f"{head}{BEGIN}\n{HEADER}\n" + "\n".join(body) + f"\n{END}{tail}"


def _step(line: str) -> str:
    m = re.search(r"<!-- (\w+)\.", line)
    if m is None or m[1] not in {s.name for s in STEPS}:
        raise SummaryError(f"a summary row names no step: {line[:80]!r}")
    return m[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--only", help=f"comma-separated steps ({', '.join(s.name for s in STEPS)})")
    p.add_argument("--machine-note", default="", help="added to the machine column (e.g. who else ran)")
    p.add_argument("--file", type=Path, default=REPO / "BENCHMARKS.md")
    p.add_argument("--dry-run", action="store_true", help="print the rows, leave the file alone")
    args = p.parse_args(argv)
    steps = STEPS
    if args.only:
        wanted = args.only.split(",")
        unknown = set(wanted) - {s.name for s in STEPS}
        if unknown:
            p.error(f"unknown steps: {', '.join(sorted(unknown))}")
        steps = [s for s in STEPS if s.name in wanted]
    try:
        lines = run(steps, args.machine_note)
        print("\n" + HEADER + "\n" + "\n".join(lines))
        if not args.dry_run:
            args.file.write_text(rewrite(args.file.read_text(), lines))
            print(f"\nrewrote the summary table of {args.file}")
    except SummaryError as e:
        print(f"bench/summary.py: {e}; {args.file} left as it was", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
