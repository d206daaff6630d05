"""Pruning latency: shredcat's typed-key SQL vs the DuckLake-style VARCHAR + cast SQL, same data.

    .venv/bin/python bench/prune.py                        # 100,000 files x 10 paths, SQLite and PostgreSQL
    .venv/bin/python bench/prune.py --large --backend postgres --keep   # 1,000,000 files, keep the data
    .venv/bin/python bench/prune.py --files 10000 --repeat 10 --explain  # small, with query plans
    .venv/bin/python bench/prune.py --files 10000000 --mixed --bulk 500000 --backend postgres --keep  # 10 M

Data: N synthetic files x 10 shredded paths of column ``v`` (ids clustered by file, timestamps
clustered by time, a date, a low-cardinality string, a free string, a double, a decimal, unclustered
ints), committed through ``Catalog.commit`` in batches of 1,000 (what users do; timed separately
as "load", never part of a latency), then ANALYZEd. The data is a pure function of (N, seed), so
``--keep`` keeps the PostgreSQL database ``shredcat_bench_prune_v<V>_<N>``, the SQLite file and
the DuckDB file under ``--data-dir`` and a later run with ``--keep`` reuses them, migrated to the
current schema first (default: build fresh, drop at the end).

For each query, each system, after ``--warmup`` runs: ``--repeat`` timed runs (fewer if one
system's runs exceed ``--budget`` seconds for the query, at least 5), p50/p95 reported:

* ``shredcat``: ``Catalog.plan(...)`` end to end, first page of 1,000 (what a driver waits for;
  counts over a multi-page answer are not computed), predicate text parsed once beforehand
  (parse time printed separately); ``shredcat+counts``: the same with ``counts=True`` (the first
  page and the counts over the whole answer, what the peers compute; left out by ``--no-counts``);
  with ``--whole``, ``shredcat-all``: every page of the answer of the non-selective queries
  (pages of 10,000), against the peers' query returning the whole answer (``*-all``).
* ``ducklake-pg`` (PostgreSQL runs) / ``ducklake-sqlite`` (SQLite runs): the way DuckLake prunes
  ordinary columns, on DuckLake's own columns of the same ``ducklake_file_variant_stats`` rows in
  the same database: the live files LEFT JOINed to one stats row per referenced path, kept when
  ``(no row OR no values-or-bounds OR min/max cast to the type meet the literal) IS NOT FALSE``.
  PostgreSQL has no TRY_CAST: a regex-guarded ``CASE WHEN s ~ '^..$' THEN s::type END``; SQLite's
  CAST never fails. A path tested by several leaves (OR, IN) is cast once per row in a
  MATERIALIZED CTE. The same two queries as shredcat: first page (ORDER BY data_file_id LIMIT
  1001) and count/sum over all candidates.
* ``ducklake-duckdb``: DuckLake's columns of the same rows copied into an in-process DuckDB
  database (``TRY_CAST``), same two queries.

Everything is timed in a process whose garbage collector is settled as ``shredcat serve``'s
workers settle theirs (``service.api.app.settle_collector``, after the data is loaded): the
figures are the server's, and the peers' fetches get the same collector.

``--runs R`` repeats every query R times (rounds) and reports the median of the rounds' p50
with each round's load average.

``--mixed``: every file also has 8 plain columns (``ducklake_file_column_stats``: ``uid``,
``ts``, ``event``, ``score``, ``price``, ``qty``, ``device``, ``status``, the same values as the
paths) and 2 Hive partition columns from its path (``dt=YYYY-MM-DD/hr=H``, 60 files per hour), and
the queries mix them with Variant paths (partition equality AND a Variant point; a plain range
OR a Variant range...). ``--variant-queries`` adds the Variant-only queries on that data. The DuckLake-style peer reads the plain and partition columns'
VARCHAR min/max from ``ducklake_file_column_stats`` with the same casts.

``--bulk [FILES]``: load through ``Catalog.bulk_load`` instead, FILES per load (each load one
transaction and one snapshot; default all in one), so that a run stopped mid-way keeps the loads
that ended. ``--drop-indexes`` (an experiment, with ``--bulk``): the stats tables' secondary
indexes dropped before the load and built again after it, timed apart. ``--commit-probe K``:
after the queries, K commits of new files into the loaded table against K into an empty table of
the same catalog (alternating), median files/s of each; the files are then removed again.

The kept-file counts of all systems are compared (they must agree on this data); a mismatch is
printed. ``--explain`` prints the plans of shredcat's statements (EXPLAIN ANALYZE on PostgreSQL,
EXPLAIN QUERY PLAN on SQLite). ``--json PATH`` writes every number (after each query, so an
interrupted run keeps what it measured), with a hash of the planner's source.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import event, text

from bench.machine import cpu_model
from service.api.app import settle_collector
from service.catalog import Catalog
from service.catalog.db import upgrade_to_head
from service.pruning.parse_sql import parse_sql
from service.stats.model import ColumnStats, FileStats, PathStats, ShreddedObject
from service.values import ShreddedType

DEFAULT_PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
#: Bump when the generated data changes: kept databases of another version are rebuilt.
DATA_VERSION = 3  # 2: the catalog reads the day=NNNNN directories as a partition column; 3: objects


def _tag() -> str:
    """The data version, ``m`` for the --mixed data."""
    return f"v{DATA_VERSION}{'m' if MIXED['on'] else ''}"

NS, TABLE, COLUMN = "bench", "events", "v"
PAGE_SIZE = 1000

T0_US = 1_735_689_600_000_000  # 2025-01-01 00:00:00 UTC, microseconds
DAY0 = 20089  # 2025-01-01, days since the epoch
EVENTS = sorted(["add_to_cart", "click", "login", "logout", "purchase", "search", "signup", "view"])
ALPHA = "abcdefghijklmnopqrstuvwxyz"

# (DuckLake path, shredded type) of the ten paths, in the order of the generated rows.
PATHS = [
    ('"user"."id"', "int64"),  # clustered by file: file i holds ids ~[1000 i, 1000 i + 999]
    ('"ts"', "timestamptz"),  # clustered by time: file i ~[T0 + 60 i s, T0 + 60 (i+1) s]
    ('"day"', "date"),  # clustered: 1,440 files per day
    ('"event"', "varchar"),  # low cardinality: 1-3 of 8 event names per file
    ('"name"', "varchar"),  # free strings, wide random ranges
    ('"score"', "float64"),  # random, always > 0
    ('"price"', "decimal(18,2)"),  # random
    ('"qty"', "int32"),  # unclustered small ints
    ('"device"', "int64"),  # unclustered wide ints
    ('"http"."status"', "int16"),  # 200 .. {200, 304, 404, 500}
]
TYPES = {p: ShreddedType.parse(t) for p, t in PATHS}
#: The fully shredded objects every file is proven to have (issue 34: absent fields): the root with
#: the ten paths' keys, and ``http``. One file in COUPON_EVERY also has a ``coupon`` key (not
#: fully shredded: no stats row), so a predicate on ``$.coupon`` keeps 1 % of the files.
ROOT_KEYS = ("day", "device", "event", "http", "name", "price", "qty", "score", "ts", "user")
COUPON_EVERY = 100


def _objects(i: int) -> tuple[ShreddedObject, ...]:
    keys = ROOT_KEYS if i % COUPON_EVERY else (*ROOT_KEYS, "coupon")
    return (ShreddedObject(COLUMN, "root", keys), ShreddedObject(COLUMN, '"http"', ("status",)))


# --- data -------------------------------------------------------------------------------------


def _word(rnd: random.Random) -> str:
    return "".join(rnd.choice(ALPHA) for _ in range(8))


#: --mixed: the plain columns (name, the path whose values they repeat) and partition columns.
PLAIN = [
    ("uid", '"user"."id"'),
    ("ts", '"ts"'),
    ("event", '"event"'),
    ("score", '"score"'),
    ("price", '"price"'),
    ("qty", '"qty"'),
    ("device", '"device"'),
    ("status", '"http"."status"'),
]
PLAIN_TYPES = {name: TYPES[path] for name, path in PLAIN}
PARTITION_TYPES = {"dt": ShreddedType.parse("date"), "hr": ShreddedType.parse("int32")}
MIXED = {"on": False}


def _day_text(i: int) -> str:
    from datetime import date, timedelta

    return (date(2025, 1, 1) + timedelta(days=i // 1440)).isoformat()


def make_batch(start: int, stop: int, seed: int) -> list[FileStats]:
    """Files ``start..stop-1``; a pure function of (start, stop, seed) for a fixed batch size."""
    rnd = random.Random(seed * 1_000_003 + start)
    out = []
    for i in range(start, stop):
        ev = sorted(rnd.sample(EVENTS, rnd.randint(1, 3)))
        n1, n2 = sorted((_word(rnd), _word(rnd)))
        s_lo = rnd.uniform(0.001, 10.0)
        p_lo = Decimal(rnd.randrange(100, 10_000)) / 100
        p_hi = p_lo + Decimal(rnd.randrange(100, 1_000_000)) / 100
        d_lo = rnd.randrange(1 << 40)
        bounds: dict[str, tuple[Any, Any]] = {
            '"user"."id"': (i * 1000 - rnd.randrange(200), i * 1000 + 999 + rnd.randrange(200)),
            '"ts"': (
                T0_US + (i * 60 - rnd.randrange(30)) * 1_000_000,
                T0_US + (i * 60 + 60 + rnd.randrange(30)) * 1_000_000,
            ),
            '"day"': (DAY0 + i // 1440, DAY0 + (i + 1) // 1440),
            '"event"': (ev[0], ev[-1]),
            '"name"': (n1, n2),
            '"score"': (s_lo, s_lo + rnd.uniform(50.0, 100.0)),
            '"price"': (p_lo.quantize(Decimal("0.01")), p_hi.quantize(Decimal("0.01"))),
            '"qty"': (rnd.randrange(10), 100 + rnd.randrange(10_000)),
            '"device"': (d_lo, d_lo + rnd.randrange(1 << 40)),
            '"http"."status"': (200, rnd.choice((200, 304, 404, 500))),
        }
        paths = []
        for p, _ in PATHS:
            t = TYPES[p]
            lo, hi = bounds[p]
            nulls = rnd.randrange(50)
            paths.append(
                PathStats(
                    column=COLUMN,
                    variant_path=p,
                    shredded_type=t,
                    column_size_bytes=1000 + rnd.randrange(20_000),
                    value_count=10_000 - nulls,
                    null_count=nulls,
                    min_value=lo,
                    max_value=hi,
                    contains_nan=False if t.is_float else None,
                )
            )
        columns: tuple[ColumnStats, ...] = ()
        where = f"day={i // 1440:05d}"
        if MIXED["on"]:
            by_path = {ps.variant_path: ps for ps in paths}
            columns = tuple(
                ColumnStats(
                    name,
                    by_path[path].shredded_type,
                    by_path[path].column_size_bytes,
                    by_path[path].value_count,
                    by_path[path].null_count,
                    by_path[path].min_value,
                    by_path[path].max_value,
                    by_path[path].contains_nan,
                )
                for name, path in PLAIN
            )
            where = f"dt={_day_text(i)}/hr={(i % 1440) // 60}"
        out.append(
            FileStats(
                path=f"s3://bench-bucket/events/{where}/part-{i:08d}.parquet",
                file_size_bytes=64_000_000 + rnd.randrange(1_000_000),
                record_count=10_000,
                footer_size=20_000,
                content_id=f"etag-{i:08x}",
                variant_columns=(COLUMN,),
                paths=tuple(paths),
                columns=columns,
                objects=_objects(i),
            )
        )
    return out


# --- queries ----------------------------------------------------------------------------------


def ts_text(us: int) -> str:
    """A UTC timestamp literal (whole seconds) as both SQL dialects and DuckLake print it."""
    from datetime import UTC, datetime

    return datetime.fromtimestamp(us // 1_000_000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")


@dataclass(frozen=True)
class Leaf:
    """``lo <= value <= hi`` (None = open) on one path (or, with ``column``, on a plain or
    partition column: ``path`` is then its name), for the DuckLake-style SQL."""

    path: str
    lo: Any
    hi: Any
    lo_strict: bool = False
    column: bool = False

    @property
    def type(self) -> ShreddedType:
        if not self.column:
            return TYPES[self.path]
        return PLAIN_TYPES.get(self.path) or PARTITION_TYPES[self.path]


@dataclass(frozen=True)
class Query:
    name: str
    sql: str
    #: DNF-free tree for the peer: ("and"|"or", [Leaf|tree...]) or a Leaf.
    peer: Any


def queries(n: int) -> list[Query]:
    mid = n // 2
    a = mid * 1000 + 500
    b = (n // 4) * 1000 + 250
    ids20 = [(n * (2 * k + 1) // 40) * 1000 + 321 for k in range(20)]
    # Longer than the planner's MAX_POINT_PROBES: joined as a VALUES list of points.
    ids200 = [(n * (2 * k + 1) // 400) * 1000 + 321 for k in range(200)]
    ts_lo = T0_US + (mid * 60 + 17) * 1_000_000
    ts_hi = ts_lo + 10 * 60 * 1_000_000
    uid = "variant_get(v, '$.user.id', 'bigint')"
    ev = "variant_get(v, '$.event', 'string')"
    ts = "variant_get(v, '$.ts', 'timestamp')"
    U, E, T, S = '"user"."id"', '"event"', '"ts"', '"score"'
    return [
        Query("point", f"{uid} = {a}", Leaf(U, a, a)),
        Query("range", f"{uid} BETWEEN {a} AND {a + 10_000}", Leaf(U, a, a + 10_000)),
        Query(
            "and",
            f"{uid} BETWEEN {a} AND {a + 100_000} AND {ev} = 'purchase'",
            ("and", [Leaf(U, a, a + 100_000), Leaf(E, "purchase", "purchase")]),
        ),
        Query("or", f"{uid} = {a} OR {uid} = {b}", ("or", [Leaf(U, a, a), Leaf(U, b, b)])),
        Query(
            "in20",
            f"{uid} IN ({', '.join(map(str, ids20))})",
            ("or", [Leaf(U, x, x) for x in ids20]),
        ),
        Query(
            "in200",
            f"{uid} IN ({', '.join(map(str, ids200))})",
            ("or", [Leaf(U, x, x) for x in ids200]),
        ),
        Query(
            "ts_range",
            f"{ts} BETWEEN TIMESTAMP '{ts_text(ts_lo)}' AND TIMESTAMP '{ts_text(ts_hi)}'",
            Leaf(T, ts_lo, ts_hi),
        ),
        Query("score>0", "variant_get(v, '$.score', 'double') > 0", Leaf(S, 0.0, None, lo_strict=True)),
        # Mid selectivity. `score` is unclustered (max = U(0, 10) + U(50, 100), so P(max > x) =
        # (110 - x)^2 / 1000 above 100): the kept files are spread over the whole id range.
        *(
            Query(f"score{pct}", f"variant_get(v, '$.score', 'double') > {x}", Leaf(S, x, None, lo_strict=True))
            for pct, x in (("1%", 106.84), ("10%", 100.0), ("50%", 80.0))
        ),
        # `user.id` is clustered by file: a range keeps one contiguous run of files, mid-table.
        *(
            Query(f"uid{pct}", f"{uid} BETWEEN {lo} AND {hi}", Leaf(U, lo, hi))
            for pct, lo, hi in (
                ("1%", mid * 1000, mid * 1000 + n * 10),
                ("10%", mid * 1000, mid * 1000 + n * 100),
                ("50%", n * 250, n * 750),
            )
        ),
        # Through a cast of variant_get (the int64 path asked as int / double) and a LIKE prefix:
        # the same files as the exact request (ids < 2**31 up to 2,000,000 files).
        Query("int_range", f"variant_get(v, '$.user.id', 'int') BETWEEN {a} AND {a + 10_000}", Leaf(U, a, a + 10_000)),
        Query("double_point", f"variant_get(v, '$.user.id', 'double') = {a}.0", Leaf(U, a, a)),
        Query("like_prefix", f"{ev} LIKE 'purch%'", Leaf(E, "purchase", "purchase")),
        # The range the prefix implies, and the one name it holds here: strings have no width
        # floor, so the planner probes their density before the set plan (issue 34, h51).
        Query("prefix_range", f"{ev} >= 'purch' AND {ev} < 'purci'", Leaf(E, "purchase", "purchase")),
        Query("event_eq", f"{ev} = 'purchase'", Leaf(E, "purchase", "purchase")),
        # A name no file holds, below almost every file's range: min <= p is a handful of rows,
        # max >= p nearly all of them (issue 34, h54: SQLite cannot tell the sides apart).
        Query(
            "rare_string_point",
            "variant_get(v, '$.name', 'string') = 'aaaaaaab'",
            Leaf('"name"', "aaaaaaab", "aaaaaaab"),
        ),
        # Absent fields (no peer: DuckLake has no fact to prune these on, it keeps every file).
        Query("absent_eq", "variant_get(v, '$.coupon', 'string') = 'SPRING'", None),
        Query("absent_and", f"{uid} BETWEEN {a} AND {a + 100_000} AND variant_get(v, '$.coupon', 'string') IS NOT NULL", None),
        Query("absent_nested", "variant_get(v, '$.http.method', 'string') = 'GET'", None),
    ]


#: Queries whose whole answer is also paged through (``--whole``): the non-selective ones (a tenth
#: of the files kept or more: spread, clustered, strings).
WHOLE = ("score>0", "score10%", "score50%", "uid50%", "like_prefix", "prefix_range", "event_eq")


def mixed_queries(n: int) -> list[Query]:
    """Predicates mixing partition columns, plain columns and Variant paths (``--mixed``)."""
    mid = n // 2
    a = mid * 1000 + 500
    day = _day_text(mid)
    day_num = DAY0 + mid // 1440
    hr = (mid % 1440) // 60
    ts_lo = T0_US + ((mid // 3) * 60 + 17) * 1_000_000
    ts_hi = ts_lo + 10 * 60 * 1_000_000
    uid = "variant_get(v, '$.user.id', 'bigint')"
    ts = "variant_get(v, '$.ts', 'timestamp')"
    U, T = '"user"."id"', '"ts"'
    return [
        Query(
            "part_and_point",
            f"dt = DATE '{day}' AND {uid} = {a}",
            ("and", [Leaf("dt", day_num, day_num, column=True), Leaf(U, a, a)]),
        ),
        Query(
            "plain_or_range",
            f"uid BETWEEN {a} AND {a + 5000} OR {ts} BETWEEN TIMESTAMP '{ts_text(ts_lo)}' AND TIMESTAMP '{ts_text(ts_hi)}'",
            ("or", [Leaf("uid", a, a + 5000, column=True), Leaf(T, ts_lo, ts_hi)]),
        ),
        Query(
            "part_hour",
            f"dt = DATE '{day}' AND hr = {hr}",
            ("and", [Leaf("dt", day_num, day_num, column=True), Leaf("hr", hr, hr, column=True)]),
        ),
        Query("plain_point", f"uid = {a}", Leaf("uid", a, a, column=True)),
        Query(
            "mixed_and3",
            f"dt = DATE '{day}' AND uid BETWEEN {a} AND {a + 100_000} AND variant_get(v, '$.event', 'string') = 'purchase'",
            (
                "and",
                [
                    Leaf("dt", day_num, day_num, column=True),
                    Leaf("uid", a, a + 100_000, column=True),
                    Leaf('"event"', "purchase", "purchase"),
                ],
            ),
        ),
    ]


# --- DuckLake-style SQL -----------------------------------------------------------------------

_PG_GUARD = {
    "date": r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "num": r"^-?[0-9]{1,18}$",
    "ts": r"^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?\+00$",
    "real": r"^-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?$",
}


def _cast(dialect: str, kind: str, col: str) -> str:
    """DuckLake's min/max VARCHAR cast to the path's type (NULL when it does not parse)."""
    if kind == "varchar":
        return f'{col} COLLATE "C"' if dialect == "postgresql" else col
    if kind in ("int32", "int16"):
        kind = "int64"
    if dialect == "duckdb":
        typ = {"int64": "BIGINT", "timestamptz": "TIMESTAMPTZ", "float64": "DOUBLE", "date": "DATE"}[kind]
        return f"TRY_CAST({col} AS {typ})"
    if dialect == "postgresql":
        guard, typ = {
            "int64": ("num", "bigint"),
            "timestamptz": ("ts", "timestamptz"),
            "float64": ("real", "double precision"),
            "date": ("date", "date"),
        }[kind]
        return f"(CASE WHEN {col} ~ '{_PG_GUARD[guard]}' THEN {col}::{typ} END)"
    # SQLite: CAST never fails; DuckLake's timestamp and date texts are fixed-width, so text order
    # is time order.
    if kind in ("timestamptz", "date"):
        return col
    return f"CAST({col} AS {'INTEGER' if kind == 'int64' else 'REAL'})"


def _literal(dialect: str, kind: str, v: Any) -> str:
    if kind == "varchar":
        return "'" + str(v).replace("'", "''") + "'"
    if kind == "date":
        from datetime import date, timedelta

        s = (date(1970, 1, 1) + timedelta(days=v)).isoformat()
        return f"'{s}'" if dialect == "sqlite" else f"DATE '{s}'"
    if kind == "timestamptz":
        s = ts_text(v) + "+00"
        return f"'{s}'" if dialect == "sqlite" else f"TIMESTAMPTZ '{s}'"
    return repr(v)


class PeerSql:
    """The DuckLake-style candidate query of one predicate, for one dialect.

    A path tested by several leaves (OR, IN list) is read through a MATERIALIZED CTE that casts
    its min/max once per row (PostgreSQL and DuckDB would otherwise cast once per leaf); a path
    tested once is LEFT JOINed directly."""

    def __init__(
        self, dialect: str, table_id: int, column_id: int, tree: Any, column_ids: dict[str, int] | None = None
    ) -> None:
        self.dialect = dialect
        self.uses: dict[str, int] = {}
        self.leaves: dict[str, Leaf] = {}
        self._count(tree)
        self.aliases = {p: f"s{i}" for i, p in enumerate(self.uses)}
        cond = self._render(tree)
        ctes, joins = [], []
        for p, al in self.aliases.items():
            leaf = self.leaves[p]
            if leaf.column:
                # A plain or partition column: DuckLake's one row per (file, column).
                assert column_ids is not None
                stats = "ducklake_file_column_stats"
                match = f"table_id = {table_id} AND column_id = {column_ids[p]}"
            else:
                stats = "ducklake_file_variant_stats"
                match = (
                    f"table_id = {table_id} AND column_id = {column_id} AND variant_path = '{p}' "
                    f"AND shredded_type = '{TYPES[p].name}'"
                )
            if self.uses[p] > 1:
                kind = leaf.type.kind.value
                ctes.append(
                    f"{al} AS MATERIALIZED (SELECT data_file_id, value_count, min_value, max_value, contains_nan, "
                    f"{_cast(dialect, kind, 'min_value')} AS min_t, {_cast(dialect, kind, 'max_value')} AS max_t "
                    f"FROM {stats} WHERE {match})"
                )
                joins.append(f" LEFT JOIN {al} ON {al}.data_file_id = f.data_file_id")
            else:
                joins.append(
                    f" LEFT JOIN {stats} {al} ON {al}.data_file_id = f.data_file_id AND "
                    + " AND ".join(f"{al}.{c}" for c in match.split(" AND "))
                )
        with_ = f"WITH {', '.join(ctes)} " if ctes else ""
        from_where = (
            f"FROM ducklake_data_file f{''.join(joins)} WHERE f.table_id = {table_id} AND f.end_snapshot IS NULL"
            f" AND ({cond}) IS NOT FALSE"
        )
        self.page = (
            f"{with_}SELECT f.data_file_id, f.path, f.file_size_bytes, f.record_count {from_where} "
            f"ORDER BY f.data_file_id LIMIT {PAGE_SIZE + 1}"
        )
        self.counts = (
            f"{with_}SELECT count(*), coalesce(sum(f.record_count), 0), coalesce(sum(f.file_size_bytes), 0) "
            + from_where
        )
        #: The whole answer, as a client reading every candidate receives it.
        self.all = f"{with_}SELECT f.data_file_id, f.path, f.file_size_bytes, f.record_count {from_where} ORDER BY f.data_file_id"

    def _count(self, tree: Any) -> None:
        if isinstance(tree, Leaf):
            self.uses[tree.path] = self.uses.get(tree.path, 0) + 1
            self.leaves[tree.path] = tree
        else:
            for k in tree[1]:
                self._count(k)

    def _render(self, tree: Any) -> str:
        if isinstance(tree, Leaf):
            return self._leaf(tree)
        op, kids = tree
        return "(" + f" {op.upper()} ".join(self._render(k) for k in kids) + ")"

    def _leaf(self, leaf: Leaf) -> str:
        al = self.aliases[leaf.path]
        kind = leaf.type.kind.value
        if self.uses[leaf.path] > 1:
            mn, mx = f"{al}.min_t", f"{al}.max_t"
        else:
            mn = _cast(self.dialect, kind, f"{al}.min_value")
            mx = _cast(self.dialect, kind, f"{al}.max_value")
        tests = []
        if leaf.hi is not None:
            tests.append(f"{mn} <= {_literal(self.dialect, kind, leaf.hi)}")
        if leaf.lo is not None:
            tests.append(f"{mx} {'>' if leaf.lo_strict else '>='} {_literal(self.dialect, kind, leaf.lo)}")
        meets = " AND ".join(tests)
        if kind == "float64":  # NaN sorts above every number in Spark: files that may hold one stay
            meets = f"({meets}) OR {al}.contains_nan IS NOT FALSE"
        return (
            f"({al}.data_file_id IS NULL OR ({al}.value_count > 0 AND "
            f"({al}.min_value IS NULL OR {al}.max_value IS NULL OR ({meets}))))"
        )


# --- databases --------------------------------------------------------------------------------


def _pg_dsn(admin_url: str) -> tuple[str, Any]:
    from sqlalchemy import make_url

    admin = make_url(admin_url)
    dsn = f"host={admin.host} port={admin.port or 5432} user={admin.username} dbname={admin.database}"
    if admin.password:
        dsn += f" password={admin.password}"
    return dsn, admin


def _marker(n: int) -> str:
    return f"shredcat prune bench {_tag()} files={n} complete"


@contextmanager
def postgres_db(admin_url: str, n: int, keep: bool) -> Iterator[tuple[str, bool]]:
    """(url, loaded): a kept complete database is reused; otherwise a fresh one."""
    import psycopg

    dsn, admin = _pg_dsn(admin_url)
    name = f"shredcat_bench_prune_{_tag()}_{n}" if keep else f"shredcat_bench_prune_{os.getpid()}"
    loaded = False
    with psycopg.connect(dsn, autocommit=True) as c:
        row = c.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", (name,)
        ).fetchone()
        if row is not None and row[0] == _marker(n):
            loaded = True
        else:
            c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            c.execute(f'CREATE DATABASE "{name}"')
    url = admin.set(drivername="postgresql+psycopg", database=name).render_as_string(hide_password=False)
    try:
        yield url, loaded
        if keep:  # only a complete load is marked for reuse
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute(f"COMMENT ON DATABASE \"{name}\" IS '{_marker(n)}'")
    finally:
        if not keep:
            with psycopg.connect(dsn, autocommit=True) as c:
                c.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def sqlite_db(data_dir: Path, n: int, keep: bool) -> Iterator[tuple[str, bool]]:
    if keep:
        data_dir.mkdir(parents=True, exist_ok=True)
        f = data_dir / f"prune-{_tag()}-{n}.db"
        done = data_dir / f"prune-{_tag()}-{n}.db.complete"
        if not done.exists():
            for p in data_dir.glob(f"prune-{_tag()}-{n}.db*"):
                p.unlink()
        yield f"sqlite:///{f}", done.exists()
        done.touch()
        return
    d = Path(tempfile.mkdtemp(prefix="shredcat-bench-prune-"))
    try:
        yield f"sqlite:///{d}/bench.db", False
    finally:
        for p in d.iterdir():
            p.unlink()
        d.rmdir()


def analyze_catalog(cat: Catalog) -> None:
    """Planner statistics after a bulk change, as a scheduled maintenance job would leave them."""
    with cat.engine.connect() as c:
        if cat.backend == "postgresql":
            c.execution_options(isolation_level="AUTOCOMMIT").exec_driver_sql("VACUUM ANALYZE")
        else:
            c.exec_driver_sql("ANALYZE")
            c.commit()


def load(url: str, n: int, batch: int, seed: int, bulk: int = 0, drop_indexes: bool = False) -> dict[str, float]:
    """Load the files through ``Catalog.commit`` (one per batch) or, with ``bulk`` files per load,
    through ``Catalog.bulk_load`` (each load one transaction, so an interrupted run keeps the loads
    that ended; generation is then inside the load's time). ``drop_indexes``: the experiment the
    bulk path's rule about indexes rests on (README): the stats tables' secondary indexes dropped
    before the load and built again after it (timed apart)."""
    upgrade_to_head(url)
    gen = commit = reindex = 0.0
    t_all = time.perf_counter()
    with Catalog(url) as cat:
        cat.create_table(NS, TABLE, [COLUMN])
        if drop_indexes:
            _stats_indexes(cat, create=False)
        if bulk:
            commit = _bulk_load(cat, n, batch, seed, bulk)
        if drop_indexes:
            r0 = time.perf_counter()
            _stats_indexes(cat, create=True)
            reindex = time.perf_counter() - r0
            print(f"  stats tables' indexes built again in {reindex:.1f}s", flush=True)
        for k, start in enumerate(range(0, 0 if bulk else n, batch)):
            g0 = time.perf_counter()
            files = make_batch(start, min(n, start + batch), seed)
            c0 = time.perf_counter()
            cat.commit(NS, TABLE, files)
            c1 = time.perf_counter()
            gen += c0 - g0
            commit += c1 - c0
            if (k + 1) % 100 == 0:
                done = min(n, start + batch)
                print(
                    f"  loaded {done:,}/{n:,} files ({commit:.0f}s in commits, {done / commit:,.0f} files/s)",
                    flush=True,
                )
        a0 = time.perf_counter()
        analyze_catalog(cat)
        analyze = time.perf_counter() - a0
        assert cat.get_table(NS, TABLE).live_file_count == n
    return {
        "generate_s": gen,
        "commit_s": commit,
        "analyze_s": analyze,
        "reindex_s": reindex,
        "total_s": time.perf_counter() - t_all,
    }


def commit_probe(cat: Catalog, n: int, batch: int, seed: int, k: int) -> dict[str, float]:
    """Commit throughput into the loaded table against an empty table of the same catalog: ``k``
    batches of new files (those after the ``n`` loaded) committed to each, alternating which goes
    first; afterwards the files are removed again and the empty table dropped, so a kept
    database keeps its ``n`` live files (the removed rows stay, ended, as history)."""
    empty = f"{TABLE}_probe_empty"
    cat.create_table(NS, empty, [COLUMN])
    secs: dict[str, list[float]] = {TABLE: [], empty: []}
    added: list[str] = []
    try:
        for j in range(k):
            files = make_batch(n + j * batch, n + (j + 1) * batch, seed)
            for name in (TABLE, empty) if j % 2 == 0 else (empty, TABLE):
                t0 = time.perf_counter()
                cat.commit(NS, name, files)
                secs[name].append(time.perf_counter() - t0)
            added += [f.path for f in files]
    finally:
        for lo in range(0, len(added), batch):
            cat.remove(NS, TABLE, added[lo : lo + batch])
        cat.drop_table(NS, empty)
    out = {
        "loaded_files_per_s": batch / statistics.median(secs[TABLE]),
        "empty_files_per_s": batch / statistics.median(secs[empty]),
        "batches": k,
    }
    print(
        f"  commit throughput, median of {k} batches of {batch:,}: into the {n:,}-file table "
        f"{out['loaded_files_per_s']:,.0f} files/s, into an empty table {out['empty_files_per_s']:,.0f} files/s "
        f"({out['loaded_files_per_s'] / out['empty_files_per_s']:.2f}x)",
        flush=True,
    )
    return out


def _stats_indexes(cat: Catalog, *, create: bool) -> None:
    """Drop (or create again, from the models) the secondary indexes of the two stats tables."""
    from service.catalog import models

    tables = ("ducklake_file_variant_stats", "ducklake_file_column_stats")
    with cat.engine.begin() as c:
        for t in models.schema().sorted_tables:
            for idx in t.indexes if t.name in tables else ():
                if create:
                    idx.create(c)
                else:
                    c.exec_driver_sql(f"DROP INDEX {idx.name}")


def _bulk_load(cat: Catalog, n: int, batch: int, seed: int, per_load: int) -> float:
    """``Catalog.bulk_load`` of ``per_load`` files at a time (batches of ``batch``); its seconds."""
    t0 = time.perf_counter()

    def batches(lo: int, hi: int) -> Iterator[list[FileStats]]:
        for k, start in enumerate(range(lo, hi, batch)):
            if k and k % 100 == 0:
                secs = time.perf_counter() - t0
                print(f"  generated {start:,}/{n:,} files ({secs:.0f}s, {start / secs:,.0f} files/s)", flush=True)
            yield make_batch(start, min(hi, start + batch), seed)

    for lo in range(0, n, per_load):
        hi = min(n, lo + per_load)
        l0 = time.perf_counter()
        res = cat.bulk_load(NS, TABLE, batches(lo, hi))
        secs = time.perf_counter() - l0
        print(
            f"  bulk load of files {lo:,}..{hi - 1:,}: snapshot {res.snapshot_id}, {res.added:,} added in "
            f"{secs:.0f}s ({res.added / secs:,.0f} files/s; {hi / (time.perf_counter() - t0):,.0f} files/s overall)",
            flush=True,
        )
    return time.perf_counter() - t0


DUCK_DATA_FILE = (
    "data_file_id BIGINT, table_id BIGINT, begin_snapshot BIGINT, end_snapshot BIGINT, path VARCHAR, "
    "record_count BIGINT, file_size_bytes BIGINT"
)
DUCK_STATS = (
    "data_file_id BIGINT, table_id BIGINT, column_id BIGINT, variant_path VARCHAR, shredded_type VARCHAR, "
    "column_size_bytes BIGINT, value_count BIGINT, null_count BIGINT, min_value VARCHAR, max_value VARCHAR, "
    "contains_nan BOOLEAN, extra_stats VARCHAR"
)


DUCK_COLUMN_STATS = (
    "data_file_id BIGINT, table_id BIGINT, column_id BIGINT, column_size_bytes BIGINT, value_count BIGINT, "
    "null_count BIGINT, min_value VARCHAR, max_value VARCHAR, contains_nan BOOLEAN, extra_stats VARCHAR"
)


def _names(decl: str) -> str:
    return ", ".join(c.strip().split()[0] for c in decl.split(","))


def build_duckdb(source_url: str, backend: str, path: Path, n: int) -> tuple[Any, float, bool]:
    """A DuckDB database with DuckLake's columns of the catalog's rows (reused when complete)."""
    import duckdb

    marker = path.with_name(path.name + ".complete")
    if path.exists() and marker.exists():
        return duckdb.connect(str(path), read_only=True), 0.0, True
    for p in (path, marker, path.with_name(path.name + ".wal")):
        if p.exists():
            p.unlink()
    t0 = time.perf_counter()
    con = duckdb.connect(str(path))
    tables = [("ducklake_data_file", DUCK_DATA_FILE), ("ducklake_file_variant_stats", DUCK_STATS)]
    if MIXED["on"]:
        tables.append(("ducklake_file_column_stats", DUCK_COLUMN_STATS))
    for table, decl in tables:
        con.execute(f"CREATE TABLE {table} ({decl})")
        select = f"SELECT {_names(decl)} FROM {table} ORDER BY data_file_id"
        if backend == "postgresql":
            import psycopg
            from sqlalchemy import make_url

            u = make_url(source_url)
            dsn = f"host={u.host} port={u.port or 5432} user={u.username} dbname={u.database}"
            with tempfile.NamedTemporaryFile(suffix=".csv", dir=path.parent) as tmp:
                with (
                    psycopg.connect(dsn) as pg,
                    pg.cursor() as cur,
                    cur.copy(f"COPY ({select}) TO STDOUT (FORMAT csv)") as cp,
                ):
                    for block in cp:
                        tmp.write(block)
                tmp.flush()
                cols = ", ".join(f"'{c.split()[0]}': '{' '.join(c.split()[1:])}'" for c in decl.split(", "))
                con.execute(
                    f"INSERT INTO {table} SELECT * FROM read_csv('{tmp.name}', header=false, "
                    f"columns={{{cols}}}, quote='\"', escape='\"', nullstr='')"
                )
        else:
            import sqlite3

            import pyarrow as pa

            src = sqlite3.connect(source_url.removeprefix("sqlite:///"))
            rows_of = src.execute(select)
            names = [d[0] for d in rows_of.description]
            while rows := rows_of.fetchmany(200_000):
                batch = pa.table({nm: [r[i] for r in rows] for i, nm in enumerate(names)})  # noqa: F841
                con.execute(f"INSERT INTO {table} SELECT * FROM batch")
            src.close()
    con.execute("CHECKPOINT")
    count = con.execute("SELECT count(*) FROM ducklake_data_file WHERE end_snapshot IS NULL").fetchone()
    assert count is not None and count[0] == n, count
    con.close()
    marker.touch()
    return duckdb.connect(str(path), read_only=True), time.perf_counter() - t0, False


# --- measuring --------------------------------------------------------------------------------


@dataclass
class Timing:
    runs: list[float] = field(default_factory=list)
    kept: int | None = None

    @property
    def p50(self) -> float:
        return statistics.median(self.runs) * 1000

    @property
    def p95(self) -> float:
        xs = sorted(self.runs)
        return xs[min(len(xs) - 1, max(0, round(0.95 * len(xs) + 0.5) - 1))] * 1000


#: Fewest timed runs per query and system, whatever the budget (``--min-runs``).
MIN_RUNS = {"n": 5}


def measure(fn: Callable[[], int], warmup: int, repeat: int, budget: float) -> Timing:
    t = Timing()
    w0 = time.perf_counter()
    for _ in range(warmup):
        t.kept = fn()
        if time.perf_counter() - w0 > budget / 4:  # slow system: one or two warm-ups are enough
            break
    spent = 0.0
    for i in range(repeat):
        t0 = time.perf_counter()
        kept = fn()
        dt = time.perf_counter() - t0
        t.runs.append(dt)
        spent += dt
        if t.kept is not None and kept != t.kept:
            print(f"    WARNING: kept count changed between runs ({t.kept} -> {kept})")
        t.kept = kept
        if spent > budget and i + 1 >= MIN_RUNS["n"]:
            break
    return t


def run_queries(
    cat: Catalog,
    duck: Any,
    qs: list[Query],
    args: argparse.Namespace,
    on_result: Callable[[str, dict[str, Timing]], None],
) -> None:
    backend = cat.backend
    with cat.engine.connect() as c:
        t_id, c_id = c.execute(
            text(
                "SELECT t.table_id, c.column_id FROM ducklake_table t JOIN ducklake_column c "
                "ON c.table_id = t.table_id AND c.end_snapshot IS NULL "
                "WHERE t.table_name = :t AND t.end_snapshot IS NULL AND c.column_name = :c"
            ),
            {"t": TABLE, "c": COLUMN},
        ).one()
        column_ids = {
            r[0]: int(r[1])
            for r in c.execute(
                text(
                    "SELECT column_name, column_id FROM ducklake_column WHERE table_id = :t AND end_snapshot IS NULL"
                ),
                {"t": t_id},
            )
        }
    peer_name = "ducklake-pg" if backend == "postgresql" else "ducklake-sqlite"
    # The peer runs with the server's own settings: the catalog's sessions switch JIT and
    # parallel workers off (catalog.db.make_engine), which the peer's casts and scans would miss.
    peer_engine = cat.engine
    if backend == "postgresql":
        from sqlalchemy import create_engine

        peer_engine = create_engine(cat.engine.url.set(query={}), pool_size=1)
    schema = cat.table_schema(NS, TABLE)
    for q in qs:
        p0 = time.perf_counter()
        expr = parse_sql(q.sql, schema=schema)
        parse_ms = (time.perf_counter() - p0) * 1000
        res: dict[str, Timing] = {}

        def shredcat(expr: Any = expr) -> int:
            r = cat.plan(NS, TABLE, expr, page_size=PAGE_SIZE)
            return r.files_kept if r.files_kept is not None else -1  # not counted: a later page exists

        def shredcat_counts(expr: Any = expr) -> int:
            r = cat.plan(NS, TABLE, expr, page_size=PAGE_SIZE, counts=True)
            assert r.files_kept is not None
            return r.files_kept

        res["shredcat"] = measure(shredcat, args.warmup, args.repeat, args.budget)
        if not args.no_counts:
            res["shredcat+counts"] = measure(shredcat_counts, args.warmup, args.repeat, args.budget)
        whole = args.whole and q.name in WHOLE
        if whole:

            def shredcat_all(expr: Any = expr) -> int:
                n, token = 0, None
                while True:
                    r = cat.plan(NS, TABLE, expr, page_size=cat.limits.max_page_size, page_token=token)
                    n += len(r.candidates)
                    token = r.next_page_token
                    if token is None:
                        return n

            res["shredcat-all"] = measure(shredcat_all, min(args.warmup, 1), args.repeat, args.budget)

        if not args.no_peers and q.peer is not None:
            ps = PeerSql(backend, t_id, c_id, q.peer, column_ids)

            def peer_db(ps: PeerSql = ps) -> int:
                with peer_engine.connect() as c:
                    c.execute(text(ps.page)).all()
                    n = c.execute(text(ps.counts)).one()[0]
                    c.rollback()
                return int(n)

            res[peer_name] = measure(peer_db, args.warmup, args.repeat, args.budget)
            if whole:

                def peer_all(ps: PeerSql = ps) -> int:
                    with peer_engine.connect() as c:
                        n = len(c.execute(text(ps.all)).all())
                        c.rollback()
                    return n

                res[f"{peer_name}-all"] = measure(peer_all, min(args.warmup, 1), args.repeat, args.budget)
            if duck is not None:
                pd = PeerSql("duckdb", t_id, c_id, q.peer, column_ids)

                def peer_duck(pd: PeerSql = pd) -> int:
                    duck.execute(pd.page).fetchall()
                    row = duck.execute(pd.counts).fetchone()
                    return int(row[0])

                res["ducklake-duckdb"] = measure(peer_duck, args.warmup, args.repeat, args.budget)
                if whole:

                    def duck_all(pd: PeerSql = pd) -> int:
                        return len(duck.execute(pd.all).fetchall())

                    res["ducklake-duckdb-all"] = measure(duck_all, min(args.warmup, 1), args.repeat, args.budget)
        kept = {k: v.kept for k, v in res.items() if k != "shredcat" or v.kept != -1}
        agree = len(set(kept.values())) <= 1  # none: first pages only, a later page exists
        line = "  ".join(
            f"{k} p50 {v.p50:8.2f} ms p95 {v.p95:8.2f} ms (n={len(v.runs)})" for k, v in res.items()
        )
        print(
            f"  {q.name:9s} kept {_kept_of(res)}  load avg {os.getloadavg()[0]:.1f}  parse {parse_ms:5.1f} ms  {line}",
            flush=True,
        )
        if not agree:
            print(f"    WARNING: kept counts differ: {kept}")
        if args.explain:
            explain(cat, expr)
        on_result(q.name, res)


def _kept_of(res: dict[str, Timing]) -> str:
    """The kept count printed for a query: the counted one, else the first page's when it is the
    whole answer ("-" when a later page exists and counts were not asked for)."""
    t = res.get("shredcat+counts") or res["shredcat"]
    return f"{t.kept:>9,}" if t.kept is not None and t.kept >= 0 else f"{'-':>9s}"


def explain(cat: Catalog, expr: Any) -> None:
    """Run plan() once capturing its statements, then print the plan of each pruning statement."""
    captured: list[tuple[str, Any]] = []

    def grab(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        if "ducklake_file_variant_stats" in statement or "ducklake_file_column_stats" in statement:
            captured.append((statement, parameters))

    event.listen(cat.engine, "before_cursor_execute", grab)
    try:
        cat.plan(NS, TABLE, expr, page_size=PAGE_SIZE)
    finally:
        event.remove(cat.engine, "before_cursor_execute", grab)
    pg = cat.backend == "postgresql"
    prefix = "EXPLAIN (ANALYZE, BUFFERS) " if pg else "EXPLAIN QUERY PLAN "
    with cat.engine.connect() as c:
        for stmt, params in captured:
            print("    --- " + " ".join(stmt.split())[:2000])
            print(f"    --- params {params}")
            for row in c.exec_driver_sql(prefix + stmt, params):
                print("    " + (row[0] if pg else " | ".join(map(str, row))))
        c.rollback()


def summarize(rounds: list[dict[str, Any]]) -> dict[str, Any]:
    """Per query and system: the median over rounds of each round's p50, and the load averages."""
    out: dict[str, Any] = {}
    for name in rounds[0]:
        out[name] = {}
        for system in rounds[0][name]:
            xs = [r[name][system] for r in rounds if name in r and system in r[name]]
            out[name][system] = {
                "p50_ms": statistics.median(x["p50_ms"] for x in xs),
                "p50_ms_rounds": [x["p50_ms"] for x in xs],
                "load_avg": [x["load_avg"] for x in xs],
                "kept": xs[-1]["kept"],
            }
    return out


def print_summary(summary: dict[str, Any], rounds: int) -> None:
    print(f"  median of {rounds} rounds' p50 (ms):", flush=True)
    for name, systems in summary.items():
        cells = "  ".join(
            f"{system} {v['p50_ms']:9.2f} ({'/'.join(f'{x:.1f}' for x in v['p50_ms_rounds'])}; load {'/'.join(f'{x:.1f}' for x in v['load_avg'])})"
            for system, v in systems.items()
        )
        print(f"    {name:10s} {cells}", flush=True)


def machine() -> dict[str, str]:
    cpu = cpu_model()
    try:
        mem = subprocess.run(["free", "-h"], capture_output=True, text=True, check=False).stdout.splitlines()[
            1
        ]
    except (OSError, IndexError):
        mem = "?"
    import hashlib
    import sqlite3

    import duckdb

    root = Path(__file__).resolve().parents[1] / "service"
    sources = [*sorted((root / "catalog" / "planner").glob("*.py")), *sorted((root / "pruning" / "conditions").glob("*.py"))]
    code = hashlib.sha256(b"".join(f.read_bytes() for f in sources)).hexdigest()
    return {
        "engine": code[:12],  # which planner/ + pruning/conditions/ the numbers belong to
        "cpus": str(os.cpu_count()),
        "cpu": cpu,
        "memory": " ".join(mem.split()),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "duckdb": duckdb.__version__,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--large", action="store_true", help="1,000,000 files (same as --files 1000000)")
    p.add_argument("--batch", type=int, default=1_000, help="files per Catalog.commit")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--backend", choices=["sqlite", "postgres", "both"], default="both")
    p.add_argument("--pg-admin-url", default=os.environ.get("SHREDCAT_BENCH_PG_ADMIN_URL", DEFAULT_PG_ADMIN))
    p.add_argument("--keep", action="store_true", help="keep (and reuse) the generated databases")
    p.add_argument("--data-dir", default=str(Path(tempfile.gettempdir()) / "shredcat-bench-prune"))
    p.add_argument("--repeat", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--budget", type=float, default=30.0, help="seconds of timed runs per query and system")
    p.add_argument("--no-peers", action="store_true", help="shredcat only")
    p.add_argument("--no-duckdb", action="store_true")
    p.add_argument("--no-counts", action="store_true", help="first pages only (no shredcat+counts)")
    p.add_argument("--only", help="comma-separated query names")
    p.add_argument("--explain", action="store_true")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--mixed", action="store_true", help="8 plain + 2 partition columns, mixed predicates")
    p.add_argument("--variant-queries", action="store_true", help="with --mixed: the Variant-only queries too")
    p.add_argument("--whole", action="store_true", help=f"also page through the whole answer of {', '.join(WHOLE)}".replace("%", "%%"))
    p.add_argument("--runs", type=int, default=1, help="repeat every query this many times; report the median p50")
    p.add_argument(
        "--bulk",
        type=int,
        nargs="?",
        const=-1,
        default=0,
        metavar="FILES",
        help="load through Catalog.bulk_load, FILES per load (default: all in one)",
    )
    p.add_argument(
        "--commit-probe",
        type=int,
        default=0,
        metavar="K",
        help="after the queries: K commits into the loaded table vs an empty one (then removed)",
    )
    p.add_argument(
        "--drop-indexes", action="store_true", help="experiment: drop the stats tables' indexes for the load"
    )
    p.add_argument("--min-runs", type=int, default=5, help="fewest timed runs per query and system")
    args = p.parse_args(argv)
    MIN_RUNS["n"] = args.min_runs
    n = 1_000_000 if args.large else args.files
    MIXED["on"] = args.mixed
    if n % args.batch:
        p.error("--files must be a multiple of --batch")

    info = machine()
    print(f"machine: {info}")
    qs = queries(n)
    if args.mixed:
        # The mixed data has the same paths: the Variant queries run on it too when asked (--whole:
        # the whole answers are theirs).
        qs = mixed_queries(n) + [q for q in qs if args.variant_queries or (args.whole and q.name in WHOLE)]
    if args.only:
        wanted = set(args.only.split(","))
        qs = [q for q in qs if q.name in wanted]
    for q in qs:
        print(f"  {q.name:9s} {q.sql if len(q.sql) < 150 else q.sql[:150] + '...'}")
    data_dir = Path(args.data_dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "files": n,
        "machine": info,
        "queries": {q.name: q.sql for q in qs},
        "runs": {},
    }
    duck = None
    duck_path = data_dir / f"prune-{_tag()}-{n}.duckdb"
    backends = ["postgres", "sqlite"] if args.backend == "both" else [args.backend]
    try:
        for b in backends:
            ctx = (
                postgres_db(args.pg_admin_url, n, args.keep)
                if b == "postgres"
                else sqlite_db(data_dir, n, args.keep)
            )
            with ctx as (url, loaded):
                print(
                    f"{b}: {n:,} files x {len(PATHS)} paths ({'reused' if loaded else 'loading'})", flush=True
                )
                entry: dict[str, Any] = {}
                if loaded:
                    # A kept catalog follows the schema: later revisions' migrations run on it (timed).
                    m0 = time.perf_counter()
                    upgrade_to_head(url)
                    print(f"  migrated to head in {time.perf_counter() - m0:.1f}s", flush=True)
                else:
                    ld = load(url, n, args.batch, args.seed, n if args.bulk < 0 else args.bulk, args.drop_indexes)
                    entry["load"] = ld
                    print(
                        f"  load: commits {ld['commit_s']:.0f}s ({n / ld['commit_s']:,.0f} files/s), "
                        f"generation {ld['generate_s']:.0f}s, ANALYZE {ld['analyze_s']:.1f}s",
                        flush=True,
                    )
                with Catalog(url) as cat:
                    # Timed in a process settled as `shredcat serve`'s workers are (peers included).
                    settle_collector()
                    if cat.backend == "postgresql":
                        with cat.engine.connect() as c:
                            entry["server"] = c.exec_driver_sql("SELECT version()").scalar()
                            entry["db_size"] = c.exec_driver_sql(
                                "SELECT pg_size_pretty(pg_database_size(current_database()))"
                            ).scalar()
                    if duck is None and not args.no_peers and not args.no_duckdb:
                        if not args.keep and duck_path.exists():
                            duck_path.unlink()
                        duck, secs, reused = build_duckdb(url, cat.backend, duck_path, n)
                        print(
                            f"  duckdb copy of DuckLake's columns: {'reused' if reused else f'{secs:.0f}s'}",
                            flush=True,
                        )
                    entry["rounds"] = []
                    results["runs"][b] = entry
                    for k in range(args.runs):
                        if args.runs > 1:
                            print(f"  round {k + 1} of {args.runs}", flush=True)
                        entry["rounds"].append({})

                        def record(name: str, r: dict[str, Timing], entry: dict[str, Any] = entry) -> None:
                            entry["rounds"][-1][name] = {
                                s: {
                                    "p50_ms": t.p50,
                                    "p95_ms": t.p95,
                                    "runs": len(t.runs),
                                    "kept": t.kept,
                                    "load_avg": os.getloadavg()[0],
                                }
                                for s, t in r.items()
                            }
                            entry["results"] = summarize(entry["rounds"])
                            if args.json:  # after every query: a run cut short keeps what it measured
                                Path(args.json).write_text(json.dumps(results, indent=2))

                        run_queries(cat, duck if b == backends[0] else None, qs, args, record)
                    if args.commit_probe:
                        entry["commit_probe"] = commit_probe(cat, n, args.batch, args.seed, args.commit_probe)
                        if args.json:
                            Path(args.json).write_text(json.dumps(results, indent=2))
                    if args.runs > 1:
                        print_summary(entry["results"], args.runs)
    finally:
        if duck is not None:
            duck.close()
        if not args.keep:
            for suffix in ("", ".wal", ".complete"):
                f = duck_path.with_name(duck_path.name + suffix)
                if f.exists():
                    f.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
