"""The planner's SQL, byte for byte, over a recorded predicate set, on both backends.

Every statement the planner sends (its SQL as the driver receives it, compiled from the
statement's shape by SQLAlchemy Core, and every parameter in the driver's form) while planning a
large set of predicates, and each plan's answer. A refactoring that keeps the behaviour keeps
these; a change of the SQL on purpose re-records them (``SHREDCAT_RECORD_PLANNER_SQL=1``, then
review the diff of ``tests/catalog/planner_sql/``, gzipped JSON: ``zcat`` reads it), and proves the
change with ``bench/planner_sql_explain.py`` (the answers, the statements per case, and the
databases' plans of each statement, old recording against new).

The set: the soundness test's random predicates and long IN lists over its real files (first
pages, every page of small pages, counts, a past snapshot, explain, the playground's listing),
the paging test's predicates over its 600 files with its shrunken windows (every route: walk,
scan, zones, set), and predicates on plain and partition columns. Only the planner's statements
are recorded: those whose SQL the planner's one execute helper compiled
(:func:`service.catalog.planner.sql.compiled`, hooked here), seen at the cursor
(``before_cursor_execute``: the helper runs them with ``exec_driver_sql``, which fires no
``before_execute``). The recording of 2026-11-28 (the planner's text builder) was replaced by
the Core build's in issue 33 item 3: same answers, same statements per case, same plans
(docs/benchmarks-history.md). Point lists padded to powers of two (:func:`service.catalog.planner.sql.padded`)
re-recorded it: same answers and statements per case, each plan the same or the same with the
padding's repeated probes (the comparison's ``plans_padded_only``).
"""

from __future__ import annotations

import gzip
import json
import os
import random
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event

from service.catalog import Catalog, models
from service.catalog import planner as P
from service.catalog.admin import admin_reads
from service.catalog.planner import access, zones
from service.catalog.planner import sql as planner_sql
from service.pruning import expressions as E
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from tests.catalog import test_planner_pages as pages
from tests.catalog.factories import INT64, VARCHAR, cs, fs, ps, with_columns
from tests.catalog.test_planner_soundness import _predicates, _random_leaf, corpus  # noqa: F401

RECORD = os.environ.get("SHREDCAT_RECORD_PLANNER_SQL") == "1"
RECORDED = Path(__file__).parent / "planner_sql"


def _param(v: Any) -> Any:
    """A bind parameter as JSON, its type kept (a float's exact repr, bytes in hex)."""
    if isinstance(v, bool) or v is None or isinstance(v, int | str):
        return v
    if isinstance(v, float):
        return {"float": repr(v)}
    if isinstance(v, bytes):
        return {"bytes": v.hex()}
    if isinstance(v, Decimal):
        return {"decimal": str(v)}
    if isinstance(v, list):  # an array parameter (a long point list's keys)
        return [_param(x) for x in v]
    raise AssertionError(f"unexpected parameter type {type(v).__name__}")


#: The SQL of every statement the planner's execute helper compiled (see the module's docstring).
_PLANNER_SQL: set[str] = set()


class _Recorder:
    """Every planner statement executed on ``engine``, with its parameters."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.statements: list[tuple[str, Any]] = []

    def __enter__(self) -> _Recorder:
        event.listen(self.engine, "before_cursor_execute", self._seen)
        return self

    def __exit__(self, *exc: object) -> None:
        event.remove(self.engine, "before_cursor_execute", self._seen)

    def _seen(self, conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:
        if statement not in _PLANNER_SQL:
            return
        if isinstance(params, dict):
            self.statements.append((statement, {k: _param(v) for k, v in sorted(params.items())}))
        else:
            self.statements.append((statement, [_param(v) for v in params]))


class _Log:
    """Cases in order: each one's statements and answer."""

    def __init__(self, cat: Catalog, base: str = "") -> None:
        self.cat = cat
        self.base = base
        self.cases: list[dict[str, Any]] = []

    def run(self, label: str, call: Callable[..., list[str]], *args: Any, **kw: Any) -> None:
        with _Recorder(self.cat.engine) as rec:
            answer = call(self.cat, *args, **kw)
        short = [a.replace(self.base, "") for a in answer]
        self.cases.append({"case": label, "answer": short, "statements": rec.statements})


def _pages(cat: Catalog, ns: str, table: str, expr: Any, page_size: int, **kw: Any) -> list[str]:
    out: list[str] = []
    token = None
    while True:
        r = cat.plan(ns, table, expr, page_size=page_size, page_token=token, **kw)
        out += [c.path for c in r.candidates]
        counts = [r.files_considered, r.files_kept, r.files_pruned, r.rows_skipped, r.bytes_skipped]
        if token is None:
            out += [f"counts {counts}", *(f"explain {e.path} {e.kept} {e.reason}" for e in r.explain or ())]
        token = r.next_page_token
        if token is None:
            return out


def _listing(cat: Catalog, ns: str, table: str, expr: Any, decision: str) -> list[str]:
    page = admin_reads(cat).plan_files(ns, table, expr, decision=decision, offset=2, limit=9)  # type: ignore[arg-type]
    return [f"{f.path} {f.kept} {f.reason}" for f in page.files] + [f"more {page.has_more}"]


def _drawn_leaf(rng: random.Random) -> E.BooleanExpression:
    """A random leaf of the soundness test, drawn again while its literal is out of the target's
    range (as the soundness test's own predicates are)."""
    while True:
        try:
            return _random_leaf(rng)
        except Exception:
            continue


def _soundness_cases(cat: Catalog, files: list[str], log: _Log) -> None:
    stats = [extract_file(p) for p in files]
    cat.create_table("lake", "events", ["v"])
    past = cat.commit("lake", "events", stats[: len(stats) // 2]).snapshot_id
    cat.commit("lake", "events", stats[len(stats) // 2 :])
    rng = random.Random(11)
    longs = []
    while len(longs) < 30:
        try:
            longs.append(
                _random_leaf(rng, long_in=rng.randint(P.MAX_POINT_PROBES + 1, P.MAX_POINT_PROBES + 80))
            )
        except Exception:  # a literal out of the target's range: draw again
            continue
    exprs = _predicates() + longs + [E.and_(_drawn_leaf(rng), leaf) for leaf in longs[:10]]
    for i, expr in enumerate(exprs):
        log.run(f"events #{i} first page", _pages, "lake", "events", expr, 1000)
        if i % 3 == 0:
            log.run(f"events #{i} pages of 7", _pages, "lake", "events", expr, 7)
        if i % 5 == 0:
            log.run(f"events #{i} counts", _pages, "lake", "events", expr, 4, counts=True)
        if i % 4 == 0:
            log.run(f"events #{i} past", _pages, "lake", "events", expr, 6, snapshot_id=past)
        if i % 13 == 0:
            log.run(f"events #{i} explain", _pages, "lake", "events", expr, 1000, explain=True)
        if i % 20 == 0:
            for decision in ("all", "kept", "skipped"):
                log.run(f"events #{i} {decision}", _listing, "lake", "events", expr, decision)


def _routes_cases(cat: Catalog, log: _Log) -> None:
    cat.create_table(pages.NS, pages.T, ["v"])
    cat.commit(pages.NS, pages.T, pages._files())
    for i, sql in enumerate(pages.PREDICATES):
        expr = parse_sql(sql)
        for size in (7, 25, 1000):
            log.run(f"routes #{i} pages of {size}", _pages, pages.NS, pages.T, expr, size)
        log.run(f"routes #{i} counts", _pages, pages.NS, pages.T, expr, 10, counts=True)


PARTITION_PREDICATES = [
    "day = '2024-03-02'",
    "day >= DATE '2024-03-03' AND region = 'eu'",
    "region IN ('us', 'ap')",
    "region IS NULL OR x > 40",
    "n = 1",
    "n = '2'",
    "n > 1 AND variant_get(v, '$.a', 'bigint') < 30",
    "x BETWEEN 10 AND 25",
    "name = 'n00012'",
    "NOT (x < 20) OR day < '2024-03-02'",
    "variant_get(v, '$.a', 'bigint') = 12 OR region = 'us'",
]


def _partition_cases(cat: Catalog, log: _Log) -> None:
    cat.create_table("ns", "p", ["v"])
    files = []
    for i in range(30):
        region = ("eu", "us", "ap")[i % 3]
        n = "x" if i == 29 else str(i % 4)  # one string value: n merges to a string
        path = f"s3://b/p/day=2024-03-0{1 + i % 5}/region={region}/n={n}/f{i:03d}.parquet"
        lo = 2 * i
        files.append(
            with_columns(
                fs(path, ps('"a"', INT64, lo, lo + 3)),
                cs("x", INT64, lo, lo + 3),
                cs("name", VARCHAR, f"n{lo:05d}", f"n{lo + 3:05d}"),
            )
        )
    cat.commit("ns", "p", files[:20])
    cat.commit("ns", "p", files[20:])
    for i, sql in enumerate(PARTITION_PREDICATES):

        def parse(schema: Any, sql: str = sql) -> Any:
            return parse_sql(sql, schema=schema)

        log.run(f"partitions #{i} pages of 4", _pages, "ns", "p", parse, 4)
        log.run(f"partitions #{i} explain", _pages, "ns", "p", parse, 1000, explain=True)
        log.run(f"partitions #{i} skipped", _listing, "ns", "p", parse, "skipped")


def _shrink(monkeypatch: pytest.MonkeyPatch) -> None:
    """The paging test's thresholds, so that its 600 files take every route."""
    monkeypatch.setattr(models, "ZONE_FILES", pages.ZONE)
    monkeypatch.setattr(access, "PROBE_WINDOW", 40)
    monkeypatch.setattr(access, "MAX_WALK", 120)
    monkeypatch.setattr(access, "SCAN_PROBE", 40)
    monkeypatch.setattr(access, "MAX_SCAN", 120)
    monkeypatch.setattr(zones, "MAX_RUNS", 2)


@pytest.fixture
def recorded_run(
    catalog_url: str,
    corpus: list[tuple[str, Any]],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[str, dict[str, Any]]]:
    backend = "postgres" if catalog_url.startswith("postgresql") else "sqlite"
    files = [p for p, _ in corpus]
    base = str(Path(files[0]).parent) + "/"
    _shrink(monkeypatch)
    compile_sql = planner_sql.compiled

    def compiled(dialect: Any, shape: Any) -> Any:
        made = compile_sql(dialect, shape)
        _PLANNER_SQL.add(made[0])
        return made

    monkeypatch.setattr(planner_sql, "compiled", compiled)
    cat = Catalog(catalog_url)
    try:
        log = _Log(cat, base)
        _soundness_cases(cat, files, log)
        _routes_cases(cat, log)
        _partition_cases(cat, log)
        texts: dict[str, int] = {}
        cases = []
        for c in log.cases:
            stmts = [[texts.setdefault(sql, len(texts)), params] for sql, params in c["statements"]]
            cases.append({**c, "statements": stmts})
        got = {"texts": list(texts), "cases": cases}
        if EXPLAIN_AGAINST:
            _explain_against(cat, backend, got)
    finally:
        cat.close()
    yield backend, got


#: A directory of older recordings to compare this run's plans with (bench/planner_sql_explain.py).
EXPLAIN_AGAINST = os.environ.get("SHREDCAT_PLANNER_SQL_EXPLAIN")


def _explain_against(cat: Catalog, backend: str, got: dict[str, Any]) -> None:
    from bench.planner_sql_explain import compare

    folder = Path(str(EXPLAIN_AGAINST))
    old = json.loads(gzip.decompress((folder / f"{backend}.json.gz").read_bytes()).decode("utf-8"))
    report = compare(cat.engine, backend, old, got)
    (folder / f"{backend}.report.json").write_text(json.dumps(report, indent=1) + "\n")


def test_the_planner_sends_the_recorded_sql(recorded_run: tuple[str, dict[str, Any]]) -> None:
    backend, got = recorded_run
    path = RECORDED / f"{backend}.json.gz"
    if RECORD:
        RECORDED.mkdir(exist_ok=True)
        doc = json.dumps(got, indent=0, ensure_ascii=False, sort_keys=True) + "\n"
        path.write_bytes(gzip.compress(doc.encode("utf-8"), mtime=0))
    want = json.loads(gzip.decompress(path.read_bytes()).decode("utf-8"))
    assert len(got["cases"]) == len(want["cases"]) > 400
    assert sum(len(c["statements"]) for c in want["cases"]) > 2000
    for g, w in zip(got["cases"], want["cases"], strict=True):
        assert g["case"] == w["case"]
        assert g["answer"] == w["answer"], f"{g['case']}: another answer"
        sent = [(got["texts"][i], p) for i, p in g["statements"]]
        expected = [(want["texts"][i], p) for i, p in w["statements"]]
        assert sent == expected, f"{g['case']}: other SQL"
