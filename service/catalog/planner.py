"""Planning in the catalog database: the stats-condition IR translated to SQL.

The rules live in :mod:`service.pruning.conditions` (compiled once from the predicate); this
module only translates each test of that IR into a WHERE clause over the typed key columns of
``ducklake_file_variant_stats`` and combines leaves with set operations, so the same rules
decide in Python (:mod:`service.pruning.evaluator`, used by explain mode and tests) and in SQL.
:meth:`service.catalog.Catalog.plan` is the entry point.

Per leaf ``(column, variant_path)`` the candidate files are

* the files whose stats row for the path passes the leaf's test (one row per path and file,
  whose stored type picks the test), found through the partial indexes on
  ``(path_id, min_*/max_*)``; a point probe becomes the bounded range
  ``min BETWEEN lit - max_width AND lit`` thanks to the per-path maximum width the catalog
  keeps, so a selective predicate reads a handful of index entries, not half the table;
* plus the files with **no** row for the path (not fully shredded there: no facts). At the
  current snapshot the per-path live counters tell when every live file has a row, which is
  the common case and needs no anti-join.

AllOf intersects children, AnyOf unites them. Results are paged by ``data_file_id`` (keyset),
so a 900,000-file answer is never held in memory. Rows with a bound but no typed key (decimals
beyond int64) are treated as unbounded: kept.

That set plan costs in proportion to the whole answer. A page of a dense answer (most files kept)
is instead found by walking the table's live files in id order and testing each one with the same
rules written per file (:class:`_FileFilter`: an index lookup per file and term), stopping when
the page is full; :func:`_first_rows` chooses between the two from the density a short walk sees.
A single leaf on one key every live file has is instead scanned in file order on the key's
file-order index; a range there first reads the key's zone map (``shredcat_stats_zone``: its rows'
stats per 1,024 file ids, taken together), so the scan starts at the first zone that might hold a
passing row and skips the zones that cannot. Counts over a multi-page answer are computed only when
asked for.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from itertools import pairwise
from typing import Any

from sqlalchemy import Connection, TextClause, text

from service import pagetoken
from service.catalog import models
from service.catalog import repository as repo
from service.catalog.models import COLUMN_KEY_PATH, PATH_FILE_COLUMNS
from service.catalog.results import Candidate, FileExplanation, PlannedFile, PlannedFilesPage, PlanResult
from service.errors import BadInputError, LimitExceededError, NotFoundError, ShredcatError
from service.pruning.conditions import (
    AllOf,
    AnyOf,
    AnyPoint,
    Condition,
    ConditionVisitor,
    Constant,
    HasNulls,
    HasValues,
    Keep,
    LeafCondition,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
    TestVisitor,
    condition_paths,
    visit_condition,
    visit_test,
)
from service.pruning.evaluator import ShortReasons, interpret, stats_by_path
from service.values import INT64_MAX, INT64_MIN, Bound, ShreddedType, family, index_key

#: Most SELECT terms one plan may union or intersect. SQLite refuses compound SELECTs of more than
#: 500 terms; past a few hundred the predicate is better rejected with a clear 413 anyway.
MAX_SQL_TERMS = 400
#: Point lists up to this size get one index probe (one UNION branch) each. Longer ones: on
#: PostgreSQL one join of the points with the path's rows (:meth:`_RowClauses.point_join`); on
#: SQLite, whose compound SELECTs end at 500 terms, branches up to :data:`SQLITE_POINT_PROBES`
#: within half the plan's term budget (a VALUES join there builds a Bloom filter over the whole
#: path first on an ANALYZEd catalog), then one OR-ed scan.
MAX_POINT_PROBES = 64
SQLITE_POINT_PROBES = 256
DEFAULT_EXPLAIN_SAMPLE = 50

#: A page's rows (id, path, size, record count), and the sums the counts are made of, over
#: ``ducklake_data_file f``: one spelling for every statement here.
FILE_ROWS = "SELECT f.data_file_id, f.path, f.file_size_bytes, f.record_count FROM ducklake_data_file f"
FILE_SUMS = "SELECT count(*), coalesce(sum(f.record_count), 0), coalesce(sum(f.file_size_bytes), 0)"


#: Statements longer than this are kept by :func:`_text` (a short one costs little to parse).
LONG_STATEMENT = 4_000


def _text(sql: str) -> TextClause:
    """``text(sql)``, a long statement kept for its next run: SQLAlchemy parses a statement's
    bind names into parameter objects on every ``text()``, ~8 ms of CPU for the ~2,500 binds of
    an OR of 200 comparisons, run by the playground's counts and page and again by its buttons.
    Bind names are numbered in order (:class:`_Sql`), so an equal plan gives an equal text;
    values are passed at execution, never kept."""
    return _long_text(sql) if len(sql) > LONG_STATEMENT else text(sql)


@lru_cache(maxsize=16)
def _long_text(sql: str) -> TextClause:
    return text(sql)


class _Sql:
    """Accumulates SQL text with named bind parameters."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self._n = 0

    def bind(self, value: Any) -> str:
        self._n += 1
        name = f"p{self._n}"
        self.params[name] = value
        return f":{name}"


#: Where the stats rows of a key live: Variant paths, and plain or partition columns.
VARIANT_STATS = "ducklake_file_variant_stats"
COLUMN_STATS = "ducklake_file_column_stats"


@dataclass(frozen=True, slots=True)
class _PathRow:
    path_id: int
    shredded_type: ShreddedType
    live_file_count: int
    max_width_num: int | None
    max_width_real: float | None
    #: Live files with NaN (or unknown NaN), and with values but no usable key for a bound.
    nan_files: int
    unkeyed_files: int
    #: The stats table of the key's rows (:data:`VARIANT_STATS` or :data:`COLUMN_STATS`).
    table: str = VARIANT_STATS


def partition_row_usable(stored: ShreddedType, column_type: ShreddedType | None) -> bool:
    """Whether a partition value stored as ``stored`` (inferred per file) may decide a predicate on
    a partition column of type ``column_type`` (declared, or Spark's merge over the live files) by
    its value: the same type, or a narrower signed integer of a wider one (the same number).
    Anything else (int stored, string merged: Spark compares the text) is judged by the leaf's
    type-independent test only (:func:`restrict_partition_leaves`)."""
    if column_type is None:
        return False
    if stored == column_type:
        return True
    ranks = {"int8": 1, "int16": 2, "int32": 3, "int64": 4}
    a, b = ranks.get(stored.name), ranks.get(column_type.name)
    return a is not None and b is not None and a <= b


class _Planner(ConditionVisitor[str]):
    """Translates a condition into a SELECT of the data_file_ids that might match it."""

    def __init__(
        self, conn: Connection, t: repo.TableRow, snapshot: int, current: bool, cache: repo.TableCache | None = None
    ) -> None:
        self.conn = conn
        self.t = t
        self.snapshot = snapshot
        self.current = current
        self.sql = _Sql()
        self._paths: dict[tuple[str, str | None], list[_PathRow]] = {}
        self._cache = cache
        self.terms = 0

    def count(self, n: int) -> None:
        self.terms += n
        if self.terms > MAX_SQL_TERMS:
            raise LimitExceededError(
                f"the predicate needs more than {MAX_SQL_TERMS} index probes; split it or use IN lists",
                details={"limit": MAX_SQL_TERMS},
            )

    # Live rows at the snapshot. At the current snapshot the literal `end_snapshot IS NULL`
    # matches the partial indexes' predicate, which is what lets the planner use them.
    def live(self, alias: str) -> str:
        if self.current:
            return f"{alias}.end_snapshot IS NULL"
        s = self.sql.bind(self.snapshot)
        return f"({alias}.begin_snapshot <= {s} AND ({alias}.end_snapshot IS NULL OR {alias}.end_snapshot > {s}))"

    def all_files(self) -> str:
        tid = self.sql.bind(self.t.table_id)
        return f"SELECT f.data_file_id FROM ducklake_data_file f WHERE f.table_id = {tid} AND {self.live('f')}"

    def paths(self, column: str, variant_path: str | None) -> list[_PathRow]:
        """The dictionary rows (one per stored type) of a Variant path, or (``variant_path``
        None) of a plain or partition column: the same counters, another stats table."""
        key = (column, variant_path)
        found = self._paths.get(key)
        if found is not None:
            return found
        # A Variant path's dictionary rows change only with a snapshot of the table (a commit or a
        # removal), which moves the metadata key; ``refresh`` changes plain columns' only.
        cache, cached = self._cache, None
        if cache is not None and self.t.metadata_key is not None and variant_path is not None:
            cached = (*self.t.metadata_key, column, variant_path)
            hit = cache.get("variant_path", cached)
            if hit is not None:
                self._paths[key] = found = list(hit)
                return found
        table = VARIANT_STATS
        if variant_path is None:
            plain = self.t.plain.get(column)
            column_id = None if plain is None else plain.column_id
            table = COLUMN_STATS
        else:
            column_id = self.t.columns.get(column)
        rows: list[_PathRow] = []
        # A path holding NUL is never stored (service.values.text), and PostgreSQL cannot compare it.
        if column_id is not None and (variant_path is None or "\x00" not in variant_path):
            for r in self.conn.execute(
                _text(
                    "SELECT path_id, shredded_type, live_file_count, max_width_num, max_width_real, "
                    "live_nan_files + live_nan_unknown_files, "
                    "live_min_unknown_files + live_max_unknown_files + live_min_keyless_files + live_max_keyless_files "
                    "FROM shredcat_variant_path WHERE table_id = :t AND column_id = :c AND variant_path = :p"
                ),
                {"t": self.t.table_id, "c": column_id, "p": COLUMN_KEY_PATH if variant_path is None else variant_path},
            ):
                st = ShreddedType.parse(r[1])
                rows.append(_PathRow(int(r[0]), st, int(r[2]), r[3], r[4], int(r[5]), int(r[6]), table))
        self._paths[key] = rows
        if cache is not None and cached is not None:
            cache.put("variant_path", cached, tuple(rows))
        return rows

    def covers_every_file(self, c: LeafCondition) -> bool:
        """Whether every live file has a stats row for ``c``'s key (current snapshot only: the
        counters are of the live files), so that no file is kept for lacking one."""
        covered = sum(r.live_file_count for r in self.paths(c.column, c.variant_path))
        return self.current and covered == self.t.live_file_count

    def path_rows(self) -> dict[tuple[str, str | None], list[_PathRow]]:
        """Every key read so far, by (column, variant_path) (variant_path None: a plain or
        partition column)."""
        return dict(self._paths)

    def holds_everywhere(self, c: LeafCondition) -> bool:
        """Whether every live file passes ``c``'s one-sided range test (``score > 0`` where every
        file's max is positive): then the leaf is TRUE and a dense answer needs no lookup per file
        (:func:`simplify`). Current snapshot only (the counters and partial indexes describe the
        live files).

        Exactly the rows the leaf's SQL would reject are looked for, so the answer never changes:
        a file without a row for the key is kept anyway; a row without values fails
        (``value_count > 0`` is in every branch; the ``novalues`` index finds one); a row with both
        keys fails when its max (min) is on the wrong side of the bound, or its min is below the
        width floor (an invariant, checked all the same: one probe each on the key indexes); a
        row with values but a key missing passes through the unkeyed branch."""
        if not self.current:
            return False
        probes: list[str] = []
        for row in self.paths(c.column, c.variant_path):
            if row.live_file_count == 0:
                continue
            t = c.test_for(row.shredded_type)
            if isinstance(t, Keep):
                continue
            if not isinstance(t, RangeMayContain) or (t.lo is None) == (t.hi is None):
                return False
            fails = _RowClauses(self, row).one_sided_rejects(t)
            if fails is None:
                return False
            pid = self.sql.bind(row.path_id)
            probes += [
                f"EXISTS (SELECT 1 FROM {row.table} s WHERE s.path_id = {pid} AND s.end_snapshot IS NULL AND {f})"
                for f in fails
            ]
        if not probes:
            return True
        found = self.conn.execute(_text("SELECT " + " OR ".join(probes)), self.sql.params).scalar()
        return not found

    # --- conditions -> sets of data_file_id --------------------------------------------------

    def _leaf_parts(
        self, c: LeafCondition, joins: list[str] | None = None
    ) -> tuple[list[tuple[int, str]], bool, str]:
        """(path_id, WHERE clause) per branch over stats rows, whether files without a stats row
        for the key must be added (they are kept: nothing is known there), and the stats table.
        With ``joins``, a long point list is appended there as one join (:meth:`_RowClauses.point_join`)
        instead of a branch that ORs every point."""
        rows = self.paths(c.column, c.variant_path)
        table = COLUMN_STATS if c.variant_path is None else VARIANT_STATS
        parts = []
        for row in rows:
            test = c.test_for(row.shredded_type)
            clauses = _RowClauses(self, row)
            join = clauses.point_join(test, table) if joins is not None else None
            if join is not None:
                joins.append(join)
                parts += [(row.path_id, clause) for clause in clauses.unkeyed_branches()]
            else:
                parts += [(row.path_id, clause) for clause in visit_test(test, clauses)]
        return parts, not self.covers_every_file(c), table

    def leaf_filter(
        self, c: LeafCondition, outer: str, *, uncovered_ok: bool = False, per_file: bool = False
    ) -> str | None:
        """The leaf as a correlated test of ``outer``'s data_file_id (an index lookup per
        candidate on the stats primary key). When files without a row for the key must be kept:
        None, or with ``uncovered_ok`` a test that also passes the files with no row.

        ``per_file``: keep each test a lookup per outer file. PostgreSQL otherwise turns a
        top-level EXISTS into a semi-join driven from the stats rows, which reads every matching
        row of the path (a million for a predicate that keeps every file) before the first page
        can stop; an OFFSET in the subquery is what stops that rewrite (and means nothing else).
        """
        parts, uncovered, table = self._leaf_parts(c)
        if uncovered and not uncovered_ok:
            return None
        tail = " LIMIT 1 OFFSET 0" if per_file else ""
        tests = []
        for path_id, clause in parts:
            self.count(1)
            tests.append(
                f"EXISTS (SELECT 1 FROM {table} s WHERE s.data_file_id = {outer} "
                f"AND s.path_id = {self.sql.bind(path_id)} AND {self.live('s')} AND ({clause}){tail})"
            )
        if uncovered:
            self.count(1)
            ids = ", ".join(self.sql.bind(r.path_id) for r in self.paths(c.column, c.variant_path))
            if not ids:
                return "1=1"
            tests.append(
                f"NOT EXISTS (SELECT 1 FROM {table} s2 WHERE s2.data_file_id = {outer} AND s2.path_id IN ({ids}){tail})"
            )
        if not tests:
            return "1=0"
        return "(" + " OR ".join(tests) + ")"

    def file_filter(self, c: Condition, outer: str) -> str:
        """``c`` as a test of one file, ``outer`` (its data_file_id): index lookups per file on
        the stats primary key, for plans that walk the live files in id order and stop early."""
        return visit_condition(c, _FileFilter(self, outer))

    def empty(self) -> str:
        return "SELECT f.data_file_id FROM ducklake_data_file f WHERE 1=0"

    def build(self, c: Condition) -> str:
        """A SELECT of the data_file_ids that might match ``c``."""
        return visit_condition(c, self)

    def visit_constant(self, c: Constant) -> str:
        return self.all_files() if c.might_match else self.empty()

    def visit_leaf(self, c: LeafCondition) -> str:
        branches: list[str] = []
        parts, uncovered, table = self._leaf_parts(c, joins=branches)
        self.count(len(branches))
        for path_id, clause in parts:
            self.count(1)
            branches.append(
                f"SELECT s.data_file_id FROM {table} s "
                f"WHERE s.path_id = {self.sql.bind(path_id)} AND {self.live('s')} AND ({clause})"
            )
        if uncovered:
            ids = ", ".join(self.sql.bind(r.path_id) for r in self.paths(c.column, c.variant_path))
            no_row = self.all_files()
            if ids:
                no_row += (
                    f" AND NOT EXISTS (SELECT 1 FROM {table} s2 "
                    f"WHERE s2.data_file_id = f.data_file_id AND s2.path_id IN ({ids}))"
                )
            self.count(1)
            branches.append(no_row)
        if not branches:
            return self.empty()
        return " UNION ".join(f"SELECT data_file_id FROM ({b}) AS q{i}" for i, b in enumerate(branches))

    def visit_any_of(self, c: AnyOf) -> str:
        self.count(len(c.children))
        parts = [self.build(ch) for ch in c.children]
        return " UNION ".join(f"SELECT data_file_id FROM ({p}) AS c{i}" for i, p in enumerate(parts))

    def visit_all_of(self, c: AllOf) -> str:
        """Drive from the most selective-looking child; test the others per candidate.

        An INTERSECT would materialize every child: a low-cardinality string equality matches
        nearly every file, while a bounded range matches a handful. Correlated EXISTS lets the
        database look the few candidates up on the stats primary key instead.
        """
        self.count(len(c.children))
        kids = list(c.children)
        drive = min(range(len(kids)), key=lambda i: visit_condition(kids[i], _SELECTIVITY))
        driver = kids.pop(drive)
        outer = "d.data_file_id"
        conds = []
        for k in kids:
            f = self.leaf_filter(k, outer) if isinstance(k, LeafCondition) else None
            conds.append(f if f is not None else f"{outer} IN ({self.build(k)})")
        return f"SELECT d.data_file_id FROM ({self.build(driver)}) AS d WHERE " + " AND ".join(conds)


class _FileFilter(ConditionVisitor[str]):
    """A condition as a boolean over one file's id (see :meth:`_Planner.file_filter`)."""

    def __init__(self, planner: _Planner, outer: str) -> None:
        self.planner = planner
        self.outer = outer

    def visit_constant(self, c: Constant) -> str:
        return "1=1" if c.might_match else "1=0"

    def visit_leaf(self, c: LeafCondition) -> str:
        f = self.planner.leaf_filter(c, self.outer, uncovered_ok=True, per_file=True)
        assert f is not None  # uncovered_ok: never None
        return f

    def visit_all_of(self, c: AllOf) -> str:
        self.planner.count(len(c.children))
        return "(" + " AND ".join(visit_condition(k, self) for k in c.children) + ")"

    def visit_any_of(self, c: AnyOf) -> str:
        self.planner.count(len(c.children))
        return "(" + " OR ".join(visit_condition(k, self) for k in c.children) + ")"


# --- tests -> WHERE clauses over one stats row `s` ------------------------------------------


class _RowClauses(TestVisitor[list[str]]):
    """A test as WHERE conjunctions over one stats row ``s`` of one path, unioned: TRUE for the
    rows that MIGHT match ([] = none can).

    Range branches compare key columns with plain operators at the top level, which implies
    ``key IS NOT NULL`` and lets PostgreSQL and SQLite use the partial indexes; rows whose keys
    are NULL (no bound, or a decimal beyond int64) get their own branch, added only when the
    path's counters say such rows exist (or always, at a past snapshot).
    """

    def __init__(self, planner: _Planner, row: _PathRow, *, zones: bool = False) -> None:
        self.planner = planner
        self.sql = planner.sql
        self.current = planner.current
        self.row = row
        #: Over a zone's summary (``shredcat_stats_zone s``) instead of a stats row: the union of
        #: rows, some of them no longer live, so neither the live counters (which drop the
        #: branches for rows without keys or with NaN) nor the per-file width floor apply.
        self.zones = zones

    def _key(self, v: Bound) -> Any:
        t = self.row.shredded_type
        k = index_key(t, v)
        return {"num": k.num, "real": k.real, "bin": k.bin}[family(t)]

    def _maybe(self, count: int) -> bool:
        return self.zones or not self.current or count > 0

    def _nan_branches(self) -> list[str]:
        if not self._maybe(self.row.nan_files):
            return []
        return ["s.value_count > 0 AND (s.contains_nan IS NULL OR s.contains_nan)"]

    def unkeyed_branches(self) -> list[str]:
        if not self._maybe(self.row.unkeyed_files):
            return []
        fam = family(self.row.shredded_type)
        return [f"s.value_count > 0 AND (s.min_{fam} IS NULL OR s.max_{fam} IS NULL)"]

    def _range(self, lo: Bound | None, hi: Bound | None, lo_inc: bool, hi_inc: bool) -> list[str]:
        """Branches for the rows whose [min, max] meets lo..hi."""
        fam = family(self.row.shredded_type)
        mn, mx = f"s.min_{fam}", f"s.max_{fam}"
        lo_k = self._key(lo) if lo is not None else None
        hi_k = self._key(hi) if hi is not None else None
        if (lo is not None and lo_k is None) or (hi is not None and hi_k is None):
            # A literal without a typed key (a decimal beyond int64): no SQL test, keep the rows.
            return ["s.value_count > 0"]
        parts = ["s.value_count > 0"]
        if hi_k is not None:
            parts.append(f"{mn} {'<=' if hi_inc else '<'} {self.sql.bind(hi_k)}")
        else:
            parts.append(f"{mn} IS NOT NULL")
        if lo_k is not None:
            parts.append(f"{mx} {'>=' if lo_inc else '>'} {self.sql.bind(lo_k)}")
            # The width trick: max - min <= width for every file, so min >= lo - width, which
            # turns a point probe into a short index range on (path_id, min).
            floor = self._min_floor(fam, lo_k)
            if floor is not None:
                parts.append(f"{mn} >= {self.sql.bind(floor)}")
        else:
            parts.append(f"{mx} IS NOT NULL")
        return [" AND ".join(parts), *self.unkeyed_branches()]

    def one_sided_rejects(self, t: RangeMayContain) -> list[str] | None:
        """For a range bounded on one side only: conditions over a row ``s`` that together find
        every row :meth:`_range` rejects (the complement of its keyed branch, each an index probe;
        rows with values but a key missing pass through the unkeyed branch); None when the bound
        has no typed key (then :meth:`_range` keeps every row with values, and there is nothing to
        probe by key)."""
        fam = family(self.row.shredded_type)
        key = self._key(t.lo if t.lo is not None else t.hi)
        if key is None:
            return None
        fails = ["s.value_count = 0"]
        if t.lo is not None:
            fails.append(f"s.max_{fam} {'<' if t.lo_inclusive else '<='} {self.sql.bind(key)}")
            floor = self._min_floor(fam, key)
            if floor is not None:
                fails.append(f"s.min_{fam} < {self.sql.bind(floor)}")
        else:
            fails.append(f"s.min_{fam} {'>' if t.hi_inclusive else '>='} {self.sql.bind(key)}")
        return fails

    def _min_floor(self, fam: str, lo_k: Any) -> Any:
        row = self.row
        if lo_k is None or self.zones:
            return None
        if fam == "num" and row.max_width_num is not None:
            v = int(lo_k) - int(row.max_width_num)
            return v if v >= INT64_MIN else None
        if fam == "real" and row.max_width_real is not None and math.isfinite(lo_k):
            v = float(lo_k) - float(row.max_width_real)
            if not math.isfinite(v):
                return None
            # Step a few ulps down: the subtraction rounds, and a floor must never rise.
            for _ in range(4):
                v = math.nextafter(v, -math.inf)
            return v
        return None

    def visit_keep(self, t: Keep) -> list[str]:
        return ["1=1"]

    def visit_never(self, t: Never) -> list[str]:
        return []

    def visit_has_values(self, t: HasValues) -> list[str]:
        return ["s.value_count > 0"]

    def visit_has_nulls(self, t: HasNulls) -> list[str]:
        return ["s.null_count > 0"]

    def visit_may_have_nan(self, t: MayHaveNaN) -> list[str]:
        return self._nan_branches()

    def visit_range(self, t: RangeMayContain) -> list[str]:
        out = self._range(t.lo, t.hi, t.lo_inclusive, t.hi_inclusive)
        return out + (self._nan_branches() if t.nan_matches else [])

    def visit_any_point(self, t: AnyPoint) -> list[str]:
        out: list[str] = []
        if len(t.points) <= MAX_POINT_PROBES or self._sqlite_branches(len(t.points)):
            for p in t.points:
                for b in self._range(p, p, True, True):
                    if b not in out:
                        out.append(b)
            return out
        # Many points: one branch whose OR the database evaluates row by row.
        ranges = []
        for p in t.points:
            first, *rest = self._range(p, p, True, True)
            ranges.append(f"({first})")
            out.extend(b for b in rest if b not in out)
        return [" OR ".join(ranges), *out]

    def _sqlite_branches(self, n: int) -> bool:
        """Whether SQLite answers ``n`` points with a branch each: up to
        :data:`SQLITE_POINT_PROBES`, while the plan stays within half its term budget (SQLite's
        compound SELECTs end at 500 terms); the OR-ed branch scans every row of the path."""
        planner = self.planner
        return (
            planner.conn.dialect.name == "sqlite"
            and n <= SQLITE_POINT_PROBES
            and planner.terms + n <= MAX_SQL_TERMS // 2
        )

    def point_join(self, t: Test, table: str) -> str | None:
        """On PostgreSQL, a long point list (more than :data:`MAX_POINT_PROBES`) as one SELECT
        joining a VALUES list of ``(key, key - max width)`` to the path's rows: one short index
        range per point, where an OR of the points costs tens of ms of planning. The rows come
        from a LATERAL subquery PostgreSQL cannot flatten (OFFSET 0); flattened, it drives the
        join from the stats rows (seconds). None (branches or the OR-ed scan then) elsewhere, or
        when a point has no typed key or the path no width; the rows without keys are
        :meth:`unkeyed_branches`."""
        if not isinstance(t, AnyPoint) or len(t.points) <= MAX_POINT_PROBES:
            return None
        if self.planner.conn.dialect.name != "postgresql":
            return None
        fam = family(self.row.shredded_type)
        pairs = []
        for p in t.points:
            k = self._key(p)
            floor = None if k is None else self._min_floor(fam, k)
            if floor is None:
                return None
            pairs.append((k, floor))
        bind = self.sql.bind
        values = ", ".join(f"({bind(k)}, {bind(f)})" for k, f in pairs)
        mn, mx = f"s.min_{fam}", f"s.max_{fam}"
        where = (
            f"s.path_id = {bind(self.row.path_id)} AND {self.planner.live('s')} AND s.value_count > 0 "
            f"AND {mn} <= pt.column1 AND {mn} >= pt.column2 AND {mx} >= pt.column1"
        )
        return (
            f"SELECT x.data_file_id FROM (VALUES {values}) AS pt CROSS JOIN LATERAL "
            f"(SELECT s.data_file_id FROM {table} s WHERE {where} OFFSET 0) AS x"
        )

    def visit_not_all_in(self, t: NotAllIn) -> list[str]:
        fam = family(self.row.shredded_type)
        keys = [self._key(v) for v in t.values]
        if not keys or any(k is None for k in keys):
            return ["s.value_count > 0"]
        mn, mx = f"s.min_{fam}", f"s.max_{fam}"
        inlist = ", ".join(self.sql.bind(k) for k in keys)
        out = [f"s.value_count > 0 AND ({mn} IS NULL OR {mx} IS NULL OR {mn} <> {mx} OR {mn} NOT IN ({inlist}))"]
        return out + (self._nan_branches() if t.nan_matches else [])


# --- simplification by what every live file's stats say -------------------------------------

_EVERY_FILE = Constant(True, "every live file's statistics pass this test")


class _Simplify(ConditionVisitor[Condition]):
    """The condition with each leaf every live file passes replaced by TRUE, folded up."""

    def __init__(self, planner: _Planner) -> None:
        self.planner = planner

    def visit_leaf(self, c: LeafCondition) -> Condition:
        return _EVERY_FILE if self.planner.holds_everywhere(c) else c

    def visit_all_of(self, c: AllOf) -> Condition:
        kids = [visit_condition(k, self) for k in c.children]
        rest = [k for k in kids if not (isinstance(k, Constant) and k.might_match)]
        if not rest:
            return _EVERY_FILE
        return rest[0] if len(rest) == 1 else AllOf(tuple(rest))

    def visit_any_of(self, c: AnyOf) -> Condition:
        kids = [visit_condition(k, self) for k in c.children]
        if any(isinstance(k, Constant) and k.might_match for k in kids):
            return _EVERY_FILE
        return AnyOf(tuple(kids))

    def visit_constant(self, c: Constant) -> Condition:
        return c


def simplify(planner: _Planner, condition: Condition) -> Condition:
    """``condition`` with what holds for every live file folded away (:meth:`_Planner.holds_everywhere`):
    the same answer, found without testing each file. At a past snapshot, unchanged."""
    if not planner.current:
        return condition
    return visit_condition(condition, _Simplify(planner))


def _keeps_every_file(c: Condition) -> bool:
    return isinstance(c, Constant) and c.might_match


# --- which child of an AllOf drives -----------------------------------------------------------

_Narrow = tuple[bool, bool]


class _Narrowness(TestVisitor[_Narrow]):
    """(whether the test matches few rows, whether it compares bounds) for a leaf's test."""

    def visit_keep(self, t: Keep) -> _Narrow:
        return False, False

    def visit_never(self, t: Never) -> _Narrow:
        return True, False

    def visit_has_values(self, t: HasValues) -> _Narrow:
        return False, False

    def visit_has_nulls(self, t: HasNulls) -> _Narrow:
        return False, False

    def visit_may_have_nan(self, t: MayHaveNaN) -> _Narrow:
        return False, False

    def visit_range(self, t: RangeMayContain) -> _Narrow:
        return t.lo is not None and t.hi is not None, True

    def visit_any_point(self, t: AnyPoint) -> _Narrow:
        return True, True

    def visit_not_all_in(self, t: NotAllIn) -> _Narrow:
        return False, False


class _SelectivityRank(ConditionVisitor[int]):
    """0 for leaves whose usable tests are bounded ranges or points (few files), higher else."""

    def visit_leaf(self, c: LeafCondition) -> int:
        kinds = [visit_test(case.test, _NARROWNESS) for case in c.cases]
        if kinds and all(narrow for narrow, _ in kinds):
            return 0
        return 1 if any(ranged for _, ranged in kinds) else 2

    def visit_all_of(self, c: AllOf) -> int:
        return 3

    def visit_any_of(self, c: AnyOf) -> int:
        return 3

    def visit_constant(self, c: Constant) -> int:
        return 3


class _LooksSelective(ConditionVisitor[bool]):
    """Whether every file the condition keeps must pass a point or bounded-range leaf: then the
    set plan reads few rows, and a page goes to it without probing the density first."""

    def visit_leaf(self, c: LeafCondition) -> bool:
        return visit_condition(c, _SELECTIVITY) == 0

    def visit_all_of(self, c: AllOf) -> bool:
        return any(visit_condition(k, self) for k in c.children)

    def visit_any_of(self, c: AnyOf) -> bool:
        return all(visit_condition(k, self) for k in c.children)

    def visit_constant(self, c: Constant) -> bool:
        return not c.might_match


_NARROWNESS = _Narrowness()
_SELECTIVITY = _SelectivityRank()
_LOOKS_SELECTIVE = _LooksSelective()


# --- page tokens --------------------------------------------------------------------------


def _fingerprint(condition: Condition, table_id: int) -> str:
    return hashlib.sha256(f"{table_id}:{condition!r}".encode()).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class PlanToken:
    """What a page token pins: the last file of the page before, the snapshot, the predicate's
    fingerprint, and the partition column types the first page was planned with (None: the token
    carries none). Later pages read the predicate with those types, so that a commit between pages
    (which may change an undeclared partition column's inferred type) cannot change its tree."""

    after: int
    snapshot: int
    fingerprint: str
    partition_types: Mapping[str, ShreddedType | None] | None


def decode_plan_token(token: str) -> PlanToken:
    """The contents of a page token (a :class:`~service.errors.BadInputError` if it is not one)."""
    doc = _token_doc(token)
    try:
        after, snapshot, fp = doc["a"], doc["s"], doc["f"]
    except (KeyError, TypeError):
        raise _invalid_token() from None
    if not (_is_int(after) and _is_int(snapshot) and isinstance(fp, str)):
        raise _invalid_token()
    raw = doc.get("pt")
    if raw is None:
        return PlanToken(after, snapshot, fp, None)
    if not isinstance(raw, dict):
        raise _invalid_token()
    types: dict[str, ShreddedType | None] = {}
    for name, tname in raw.items():
        if tname is not None and not isinstance(tname, str):
            raise _invalid_token()
        try:
            types[str(name)] = None if tname is None else ShreddedType.parse(tname)
        except ShredcatError:
            raise _invalid_token() from None
    return PlanToken(after, snapshot, fp, types)


def _invalid_token() -> BadInputError:
    return BadInputError("invalid page token", details={"field": "page-token"})


def _token_doc(token: str) -> dict[str, Any]:
    doc = pagetoken.decode(token, _invalid_token())
    if not isinstance(doc, dict):
        raise _invalid_token()
    return doc


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# --- entry points -------------------------------------------------------------------------


def _resolve_snapshot(conn: Connection, t: repo.TableRow, snapshot_id: int | None) -> tuple[int, bool]:
    if snapshot_id is None or snapshot_id >= t.current_snapshot_id:
        if snapshot_id is not None and not repo.snapshot_exists(conn, snapshot_id):
            raise NotFoundError(f"snapshot {snapshot_id} does not exist", details={"snapshot_id": snapshot_id})
        return t.current_snapshot_id, True
    if snapshot_id < t.begin_snapshot:
        raise NotFoundError(
            f"table {t.qualified_name} did not exist at snapshot {snapshot_id}",
            details={"snapshot_id": snapshot_id},
        )
    if not repo.snapshot_exists(conn, snapshot_id):
        raise NotFoundError(f"snapshot {snapshot_id} does not exist", details={"snapshot_id": snapshot_id})
    return snapshot_id, False


def plan_in(
    conn: Connection,
    t: repo.TableRow,
    condition: Condition,
    *,
    snapshot_id: int | None = None,
    explain: bool = False,
    page_size: int = 1000,
    page_token: str | None = None,
    explain_sample: int = DEFAULT_EXPLAIN_SAMPLE,
    path_facts: dict[tuple[str, str | None], list[tuple[ShreddedType, int]]] | None = None,
    partition_types: Mapping[str, ShreddedType | None] | None = None,
    counts: bool = False,
    cache: repo.TableCache | None = None,
) -> PlanResult:
    """One page of the candidates of ``condition`` (already compiled and merged), inside an open
    transaction, on the table row ``t`` read in it; see :meth:`service.catalog.Catalog.plan`.

    ``path_facts``, if given, receives what planning read of each leaf's path: ``(column,
    variant_path) -> [(stored type, live files)]`` (every type ever stored), so the plan's
    warnings need no second look at the same rows. ``partition_types``: the type of each partition
    column as the predicate reads it (declared, or merged over the live files): a file whose value
    is stored as another type is judged by type-independent facts only
    (:func:`restrict_partition_leaves`).

    The first page's counts over the whole answer are given when the answer fits in the page or
    when ``counts`` asks for them; otherwise ``files_kept``, ``files_pruned``, ``rows_skipped`` and
    ``bytes_skipped`` are None (counting a million candidates costs seconds; a driver paging
    through them does not need it). ``cache``: keeps the Variant paths' dictionary rows by the
    table's metadata key (given when ``t`` was read with one), for the next plans to reuse."""
    fp = _fingerprint(condition, t.table_id)
    after = 0
    if page_token is not None:
        token = decode_plan_token(page_token)
        after, snapshot_id = token.after, token.snapshot
        if token.fingerprint != fp:
            raise BadInputError("the page token belongs to another predicate or table", details={"field": "page-token"})
    snapshot, current = _resolve_snapshot(conn, t, snapshot_id)
    if partition_types is not None:
        condition = restrict_partition_leaves(condition, t, partition_types)
    planner = _Planner(conn, t, snapshot, current, cache)
    as_asked = condition  # explain gives each file's reasons for the condition as asked
    condition = simplify(planner, condition)
    page = _first_rows(planner, condition, after, page_size)
    if path_facts is not None:
        for key, prows in planner.path_rows().items():
            path_facts[key] = [(r.shredded_type, r.live_file_count) for r in prows]
    rows = page.rows
    more = len(rows) > page_size
    rows = rows[:page_size]
    candidates = tuple([Candidate(r[1], r[2], r[3], r[0]) for r in rows])
    next_token = None
    if more:
        doc: dict[str, Any] = {"a": candidates[-1].data_file_id, "s": snapshot, "f": fp}
        if partition_types:
            doc["pt"] = {n: None if pt is None else pt.name for n, pt in partition_types.items()}
        next_token = pagetoken.encode(doc)

    considered = pruned = kept = rows_skipped = bytes_skipped = None
    if page_token is None:
        if current:
            total_n, total_rows, total_bytes = t.live_file_count, t.live_record_count, t.live_bytes
        elif counts or not more:
            total_n, total_rows, total_bytes = conn.execute(
                _text(
                    f"{FILE_SUMS} "
                    f"FROM ({planner.all_files()}) a JOIN ducklake_data_file f ON f.data_file_id = a.data_file_id"
                ),
                planner.sql.params,
            ).one()
        else:
            total_n = total_rows = total_bytes = None
        if total_n is not None:
            considered = int(total_n)
        if not more:
            # The whole answer is this page.
            kept_n = len(candidates)
            kept_rows = sum(c.record_count for c in candidates)
            kept_bytes = sum(c.file_size_bytes for c in candidates)
        elif _keeps_every_file(condition) and total_n is not None:
            kept_n, kept_rows, kept_bytes = total_n, total_rows, total_bytes
        elif counts:
            kept_n, kept_rows, kept_bytes = conn.execute(
                _text(
                    f"{FILE_SUMS} "
                    f"FROM ducklake_data_file f WHERE f.data_file_id IN ({page.candidate_sql()})"
                ),
                planner.sql.params,
            ).one()
        else:
            kept_n = None
        if kept_n is not None and total_n is not None:
            kept = int(kept_n)
            pruned = int(total_n) - kept
            rows_skipped = int(total_rows) - int(kept_rows)
            bytes_skipped = int(total_bytes) - int(kept_bytes)

    explanation = None
    if explain:
        explanation = _explain(conn, planner, t, as_asked, page.candidate_sql(), candidates, explain_sample)
    return PlanResult(
        snapshot_id=snapshot,
        candidates=candidates,
        next_page_token=next_token,
        files_considered=considered,
        files_pruned=pruned,
        files_kept=kept,
        rows_skipped=rows_skipped,
        bytes_skipped=bytes_skipped,
        explain=explanation,
    )


#: A page that may hold many candidates first walks this many live files in id order, testing
#: each one (an index lookup per file and term on the stats primary key); what it finds tells how
#: dense the candidates are, hence whether walking on or collecting them as a set reads less.
PROBE_WINDOW = 2_000
#: The most files one walk tests before the rest of the page comes from the set plan (the
#: density seen in the probe can be wrong further on).
MAX_WALK = 50_000


@dataclass
class _Page:
    """The rows of one page (``page_size + 1`` at most, the extra one meaning "more")."""

    planner: _Planner
    condition: Condition
    rows: list[Any]
    _cand_sql: str | None = None

    def candidate_sql(self) -> str:
        """The set plan's SELECT of every candidate (built on first use)."""
        if self._cand_sql is None:
            self.planner.terms = 0
            self._cand_sql = self.planner.build(self.condition)
        return self._cand_sql


def _first_rows(planner: _Planner, condition: Condition, after: int, page_size: int) -> _Page:
    """The rows of the page after ``after``, by whichever plan reads fewer rows.

    A condition every live file passes reads the next files. The set plan reads the candidates
    through the stats indexes: by key, then sorted (cost ~ candidates K), or, for one key's rows,
    in file order from the key's file-order index, stopping when the page is full (cost ~ index
    entries up to the page's last candidate); the database picks. A walk over the live files in
    id order tests each file until the page is full (cost ~ page / density, a lookup per file
    and term): right when candidates are dense and come from several keys, where the set plan
    would build a million-row answer to return its first thousand.

    A range (not a point) on a key every live file has reads the key's zones first: none that
    might pass means an empty page; a selective range whose estimated answer is cheaper to collect
    than to scan for goes to the set plan; otherwise the zones' runs of ids are scanned
    (:func:`_scan_rows`). Other trees whose every candidate must pass a point or bounded range go
    to the set plan directly, other single leaves on such a key are scanned from the start.
    Anything else is probed on :data:`PROBE_WINDOW` files; the density seen there predicts both
    costs (walking on: need / density; the set: density x files), and the cheaper one finishes
    the page."""
    want = page_size + 1
    page = _Page(planner, condition, [])
    if isinstance(condition, Constant):
        page.rows = _every_row(planner, after, want) if condition.might_match else []
        return page
    selective = visit_condition(condition, _LOOKS_SELECTIVE)
    scan = _key_scan(planner, condition)
    runs = None if scan is None else _zones(planner, scan, after, estimate=selective)
    if runs is not None:
        if not runs:
            return page  # no zone holds a row that might pass
        if not (selective and _set_is_cheaper(planner, runs, want)):
            page.rows = _scan_rows(page, scan, after, want, runs)
            return page
    if selective:
        page.rows = _set_rows(page, after, want)
        return page
    if scan is not None:
        page.rows = _scan_rows(page, scan, after, want, [_Run(after + 1, INT64_MAX, planner.t.live_file_count, 0.0)])
        return page
    planner.terms = 0
    test = planner.file_filter(condition, "f.data_file_id")
    rows, walked, last = _walk(planner, test, after, PROBE_WINDOW, want)
    if len(rows) >= want or walked < PROBE_WINDOW:
        page.rows = rows  # full, or every live file after `after` was tested
        return page
    need = want - len(rows)
    density = len(rows) / walked
    remaining = max(planner.t.live_file_count - walked, 0)
    if density > 0 and need / density < density * remaining:
        window = min(MAX_WALK, math.ceil(3 * need / density))
        more, walked, last = _walk(planner, test, last, window, need)
        rows += more
        if len(rows) >= want or walked < window:
            page.rows = rows
            return page
        need = want - len(rows)
    page.rows = rows + _set_rows(page, last, need)
    return page


#: A leaf on one key that every live file has is scanned in file order on the key's file-order
#: index (index-only): first this many entries, whose density decides between scanning on and the
#: set plan. What a scanned entry costs against a candidate of the set plan (key index, row, sort),
#: measured at 1,000,000 files: ~1/25 on PostgreSQL, ~1/3 on SQLite.
SCAN_PROBE = 20_000
SCAN_VS_SET = {"postgresql": 25, "sqlite": 3}
MAX_SCAN = 1_000_000


@dataclass(frozen=True, slots=True)
class _KeyScan:
    """One key's live rows in file order, and the leaf's test of one row ``s``."""

    row: _PathRow
    test: Test
    clause: str


def _key_scan(planner: _Planner, condition: Condition) -> _KeyScan | None:
    """The scan for a single leaf whose key every live file has, with one stored type (so one
    index range in file order holds every file) whose keys the index holds; None otherwise."""
    if not isinstance(condition, LeafCondition) or not planner.covers_every_file(condition):
        return None
    rows = planner.paths(condition.column, condition.variant_path)
    if len(rows) != 1 or family(rows[0].shredded_type) == "bin":
        # Strings' keys (up to 256 bytes each) are not in the file-order index: a scan would read
        # a row per entry, so strings keep the walk.
        return None
    test = condition.test_for(rows[0].shredded_type)
    branches = visit_test(test, _RowClauses(planner, rows[0]))
    clause = " OR ".join(f"({b})" for b in branches) if branches else "1=0"
    if not set(_ROW_COLUMN.findall(clause)) <= _SCANNED_COLUMNS:
        # The scan reads the file-order index's columns only (IS NULL needs null_count).
        return None
    planner.count(1)
    return _KeyScan(rows[0], test, clause)


#: The columns a key scan's rows carry, and how a row clause names a column of ``s``.
_SCANNED_COLUMNS = frozenset(PATH_FILE_COLUMNS)
_ROW_COLUMN = re.compile(r"\bs\.([a-z_]+)")


#: At most this many id runs per scan: runs closer together than the gaps left are scanned as one.
MAX_RUNS = 16


@dataclass(frozen=True, slots=True)
class _Run:
    """Consecutive data file ids whose zones might hold rows passing a scan's test (the gaps between
    runs hold none): the rows there, and how many of them might pass, estimated from where the
    range falls between each zone's bounds (values taken as evenly spread)."""

    lo: int
    hi: int
    files: int
    estimate: float


def _zones(planner: _Planner, scan: _KeyScan, after: int, *, estimate: bool) -> list[_Run] | None:
    """The runs of zones after ``after`` that might hold rows passing ``scan``'s range, in file
    order (at most :data:`MAX_RUNS`: the smallest gaps are read through); None when the test is not
    a range wider than one value, which the set plan's key index answers without help (a point:
    a short index range; a point list: one per point). The zones are grouped into runs in the
    database (consecutive zones share ``zone - row_number()``), which returns a row per run; with
    ``estimate``, each run's rows that might pass are estimated there too."""
    t = scan.test
    if not isinstance(t, RangeMayContain) or (t.lo is not None and t.lo == t.hi):
        return None
    clauses = _RowClauses(planner, scan.row, zones=True)
    branches = visit_test(t, clauses)
    if not branches:
        return []
    sql = planner.sql
    size = models.ZONE_FILES
    share = "0"
    if estimate:
        fam = family(scan.row.shredded_type)
        step = 1 if fam == "num" else 0
        # In double precision: a difference of two int64 keys may not fit an int64.
        zmin, zmax = (f"CAST(s.{k}_{fam} AS DOUBLE PRECISION)" for k in ("min", "max"))

        def within(edge: str, beyond: str, bound: Bound | None) -> str:
            """The zone's ``edge``, or the range's ``bound`` where the edge lies ``beyond`` it."""
            key = None if bound is None else clauses._key(bound)
            if key is None:
                return edge
            k = sql.bind(float(key))
            return f"CASE WHEN {edge} {beyond} {k} THEN {edge} ELSE {k} END"

        lo, hi = within(zmin, ">", t.lo), within(zmax, "<", t.hi)
        part = f"({hi} - {lo} + {step}) / ({zmax} - {zmin} + {step})"
        share = (
            f"CASE WHEN s.min_{fam} IS NULL OR s.max_{fam} IS NULL OR s.max_{fam} <= s.min_{fam} THEN 1.0 "
            f"WHEN {part} < 0 THEN 0.0 WHEN {part} > 1 THEN 1.0 ELSE {part} END"
        )
    where = " OR ".join(f"({b})" for b in branches)
    found = planner.conn.execute(
        _text(
            "SELECT min(q.zone), max(q.zone), sum(q.files), sum(q.files * q.share) FROM ("
            f"SELECT s.zone, s.files, {share} AS share, s.zone - row_number() OVER (ORDER BY s.zone) AS run "
            f"FROM shredcat_stats_zone s WHERE s.path_id = {sql.bind(scan.row.path_id)} "
            f"AND s.zone >= {sql.bind(after // size)} AND ({where})"
            ") AS q GROUP BY q.run ORDER BY 1"
        ),
        sql.params,
    ).all()
    runs = [
        _Run(max(int(first) * size, after + 1), int(last) * size + size - 1, int(files), _finite(est, files))
        for first, last, files, est in found
    ]
    if len(runs) > MAX_RUNS:
        gaps = sorted(range(1, len(runs)), key=lambda i: runs[i].lo - runs[i - 1].hi, reverse=True)
        bounds = [0, *sorted(gaps[: MAX_RUNS - 1]), len(runs)]
        runs = [
            _Run(
                runs[a].lo,
                runs[b - 1].hi,
                sum(r.files for r in runs[a:b]),
                sum(r.estimate for r in runs[a:b]),
            )
            for a, b in pairwise(bounds)
        ]
    return runs


def _finite(estimate: Any, files: Any) -> float:
    """A run's estimate, or its row count where the bounds made it meaningless (infinities)."""
    v = float(estimate or 0)
    return v if math.isfinite(v) else float(files)


def _set_is_cheaper(planner: _Planner, runs: list[_Run], want: int) -> bool:
    """Whether the set plan should answer a selective range: scanning the runs would read about
    ``want / density`` entries, the set plan reads its estimated candidates, each
    :data:`SCAN_VS_SET` times dearer."""
    estimate = sum(r.estimate for r in runs)
    files = sum(r.files for r in runs)
    if estimate <= 0 or files <= 0:
        return True
    return want * files / estimate >= SCAN_VS_SET.get(planner.conn.dialect.name, 3) * estimate


def _scan(
    planner: _Planner, scan: _KeyScan, after: int, window: int, limit: int, upto: int
) -> tuple[list[Any], int, int]:
    """The files after ``after`` (up to ``upto``) that pass the leaf (at most ``limit``) among the
    key's next ``window`` rows in file order; how many rows that window held, and its last file id.
    The rows come from a subquery PostgreSQL and SQLite keep apart (OFFSET 0), so the test cannot
    pull the key indexes in: it reads only the file-order index, in order, and stops early."""
    sql = planner.sql
    cols = ", ".join(f"s.{c}" for c in PATH_FILE_COLUMNS)
    rows_sql = (
        f"SELECT {cols} FROM {scan.row.table} s WHERE s.path_id = {sql.bind(scan.row.path_id)} "
        f"AND {planner.live('s')} AND s.data_file_id > {sql.bind(after)} AND s.data_file_id <= {sql.bind(upto)} "
        f"ORDER BY s.data_file_id LIMIT {sql.bind(window)} OFFSET 0"
    )
    ids = f"SELECT s.data_file_id FROM ({rows_sql}) AS s WHERE {scan.clause} ORDER BY s.data_file_id LIMIT {sql.bind(limit)}"
    found = _files_of(planner, ids)
    if len(found) >= limit:
        return found, window, int(found[-1][0])
    n, last = planner.conn.execute(
        _text(f"SELECT count(*), max(s.data_file_id) FROM ({rows_sql}) AS s"), sql.params
    ).one()
    return found, int(n), int(last) if last is not None else after


def _scan_runs(
    planner: _Planner, scan: _KeyScan, runs: list[_Run], after: int, window: int, limit: int
) -> tuple[list[Any], int, int, bool]:
    """:func:`_scan` over runs of ids: the passing files after ``after`` (at most ``limit``) among
    the next ``window`` rows; the rows read, the last id read, and whether nothing is left to
    read."""
    found: list[Any] = []
    read = 0
    last = after
    for run in runs:
        if run.hi <= last:
            continue
        got, n, end = _scan(planner, scan, max(last, run.lo - 1), window - read, limit - len(found), run.hi)
        found += got
        read += n
        if len(found) >= limit or read >= window:
            return found, read, end, False
        last = run.hi  # the run is read to its end
    return found, read, last, True


def _scan_rows(page: _Page, scan: _KeyScan, after: int, want: int, runs: list[_Run]) -> list[Any]:
    """A page of a single-key leaf: scanned in file order within ``runs`` (the ids whose zones might
    hold a passing row, or one run of every id) while the candidates are dense enough, by the set
    plan (the key indexes, then a sort) when they are too sparse for that."""
    planner = page.planner
    rows, scanned, last, done = _scan_runs(planner, scan, runs, after, SCAN_PROBE, want)
    if len(rows) >= want or done:
        return rows
    need = want - len(rows)
    density = len(rows) / scanned
    remaining = max(sum(r.files for r in runs) - scanned, 0)
    if density > 0 and need / density < SCAN_VS_SET.get(planner.conn.dialect.name, 3) * density * remaining:
        window = min(MAX_SCAN, math.ceil(3 * need / density))
        more, scanned, last, done = _scan_runs(planner, scan, runs, last, window, need)
        rows += more
        if len(rows) >= want or done:
            return rows
        need = want - len(rows)
    return rows + _set_rows(page, last, need)


def _walk(planner: _Planner, test: str, after: int, window: int, limit: int) -> tuple[list[Any], int, int]:
    """The live files after ``after`` that pass ``test`` (at most ``limit``) among the next
    ``window`` live files in id order; how many files that window held, and its last id.

    The window is a bound on the id (its last id, one uncorrelated subquery on the table's live
    files index), not a subquery the files are read from: an ORDER BY over a subquery's rows is
    a sort to SQLite, which would test every file of the window before returning the first."""
    sql = planner.sql
    tid, start = sql.bind(planner.t.table_id), sql.bind(after)
    span = (
        f"SELECT f2.data_file_id FROM ducklake_data_file f2 WHERE f2.table_id = {tid} AND {planner.live('f2')} "
        f"AND f2.data_file_id > {start} ORDER BY f2.data_file_id LIMIT {sql.bind(window)}"
    )
    rows = list(
        planner.conn.execute(
            _text(
                f"{FILE_ROWS} "
                f"WHERE f.table_id = {tid} AND {planner.live('f')} AND f.data_file_id > {start} "
                f"AND f.data_file_id <= (SELECT max(w.data_file_id) FROM ({span}) AS w) AND {test} "
                f"ORDER BY f.data_file_id LIMIT {sql.bind(limit)}"
            ),
            sql.params,
        ).all()
    )
    if len(rows) >= limit:
        return rows, window, int(rows[-1][0])  # stopped early: the span's end is not needed
    walked, last = planner.conn.execute(_text(f"SELECT count(*), max(w.data_file_id) FROM ({span}) AS w"), sql.params).one()
    return rows, int(walked), int(last) if last is not None else after


def _every_row(planner: _Planner, after: int, limit: int) -> list[Any]:
    """The next ``limit`` live files after ``after``: the page of a condition every file passes."""
    sql = planner.sql
    return list(
        planner.conn.execute(
            _text(
                f"{FILE_ROWS} WHERE f.table_id = {sql.bind(planner.t.table_id)} AND {planner.live('f')} "
                f"AND f.data_file_id > {sql.bind(after)} ORDER BY f.data_file_id LIMIT {sql.bind(limit)}"
            ),
            sql.params,
        ).all()
    )


def _set_rows(page: _Page, after: int, limit: int) -> list[Any]:
    """The next ``limit`` candidates of the set plan. Their ids are ordered and cut first, and only
    those files are then read: joined the other way round, PostgreSQL read a file row for each of
    10,000 candidates to return 1,001. With a single key's rows behind it, the first step is one
    range scan of the key's file-order index that stops when the page is full, or the key index
    and a sort of what it finds, whichever the database estimates cheaper. On PostgreSQL the ids
    come as an array (an index lookup each); a join there chose to hash the whole file table."""
    sql = page.planner.sql
    # SQLite does not weigh the file-order index against the key indexes: offered the id range
    # and order, it scanned a key's rows in file order for a point lookup (0.6 -> 80 ms at
    # 1,000,000 files). A unary + keeps the id out of its index choice; file-order scans are
    # _scan's, chosen by density.
    fid = "+c.data_file_id" if page.planner.conn.dialect.name == "sqlite" else "c.data_file_id"
    ids = (
        f"SELECT DISTINCT c.data_file_id FROM ({page.candidate_sql()}) AS c "
        f"WHERE {fid} > {sql.bind(after)} ORDER BY {fid} LIMIT {sql.bind(limit)}"
    )
    return _files_of(page.planner, ids)


def _files_of(planner: _Planner, ids: str) -> list[Any]:
    """The page rows of the files ``ids`` (a SELECT of at most a page of ids), in id order."""
    match = f"= ANY(ARRAY({ids}))" if planner.conn.dialect.name == "postgresql" else f"IN ({ids})"
    return list(
        planner.conn.execute(
            _text(f"{FILE_ROWS} WHERE f.data_file_id {match} ORDER BY f.data_file_id"), planner.sql.params
        ).all()
    )


def _not_a_candidate(cand_sql: str) -> str:
    """``f`` is not among the candidates: an anti-join, not ``NOT IN (...)``, which PostgreSQL
    runs as a subplan rescanned for every file once it misjudges the candidates too many to hash
    in ``work_mem`` (at a past snapshot its estimate was 11 million rows for a 50,000-file table:
    47 s for an explained plan instead of 1 s)."""
    return f"NOT EXISTS (SELECT 1 FROM ({cand_sql}) c WHERE c.data_file_id = f.data_file_id)"


def _explain(
    conn: Connection,
    planner: _Planner,
    t: repo.TableRow,
    condition: Condition,
    cand_sql: str,
    candidates: tuple[Candidate, ...],
    sample: int,
) -> tuple[FileExplanation, ...]:
    """Reasons from the Python evaluator, for the kept files of this page (up to ``sample``) and
    a sample of pruned files. Both layers interpret the same IR; should they ever disagree, the
    file is reported kept (the SQL answer), never silently pruned."""
    sql = planner.sql
    pruned_rows = conn.execute(
        _text(
            f"SELECT f.data_file_id, f.path FROM ducklake_data_file f WHERE f.data_file_id IN ({planner.all_files()}) "
            f"AND {_not_a_candidate(cand_sql)} ORDER BY f.data_file_id LIMIT {sql.bind(sample)}"
        ),
        sql.params,
    ).all()
    kept_files = [(c.data_file_id, c.path, True) for c in candidates[:sample]]
    files = kept_files + [(int(r[0]), r[1], False) for r in pruned_rows]
    stats = repo.stats_for_files(conn, t, [f[0] for f in files])
    out = []
    for fid, path, kept in files:
        verdict = interpret(condition, stats_by_path(stats.get(fid, [])))  # type: ignore[arg-type]
        if kept:
            reason = verdict.reason if verdict.might_match else f"kept by the SQL layer ({verdict.reason})"
        else:
            reason = verdict.reason
        out.append(FileExplanation(path=path, kept=kept, reason=reason))
    return tuple(out)


def plan_files_in(
    conn: Connection,
    t: repo.TableRow,
    condition: Condition,
    *,
    snapshot_id: int | None = None,
    decision: str = "all",
    offset: int = 0,
    limit: int = 100,
    partition_types: Mapping[str, ShreddedType | None] | None = None,
) -> PlannedFilesPage:
    """A page of the live files (``decision``: all, kept or skipped ones), in ``data_file_id``
    order from ``offset``, each with the SQL layer's decision and the evaluator's short reason.
    Should the two layers ever disagree, the file is reported kept (the SQL answer)."""
    snapshot, current = _resolve_snapshot(conn, t, snapshot_id)
    if partition_types is not None:
        condition = restrict_partition_leaves(condition, t, partition_types)
    planner = _Planner(conn, t, snapshot, current)
    cand_sql = planner.build(simplify(planner, condition))
    sql = planner.sql
    where = f"f.data_file_id IN ({planner.all_files()})"
    if decision == "kept":
        where += f" AND f.data_file_id IN ({cand_sql})"
    elif decision == "skipped":
        where += f" AND {_not_a_candidate(cand_sql)}"
    rows = conn.execute(
        _text(
            f"{FILE_ROWS} "
            f"WHERE {where} ORDER BY f.data_file_id LIMIT {sql.bind(limit + 1)} OFFSET {sql.bind(offset)}"
        ),
        sql.params,
    ).all()
    more = len(rows) > limit
    rows = rows[:limit]
    if decision == "all" and rows:
        # The decision for this page's files only: the candidate set is read once, as a set,
        # rather than probed per row of the whole table.
        ids = ", ".join(sql.bind(int(r[0])) for r in rows)
        kept_ids = {
            int(x)
            for (x,) in conn.execute(
                _text(
                    f"SELECT f.data_file_id FROM ducklake_data_file f WHERE f.data_file_id IN ({ids}) "
                    f"AND f.data_file_id IN ({cand_sql})"
                ),
                sql.params,
            )
        }
    else:
        kept_ids = {int(r[0]) for r in rows} if decision == "kept" else set()
    rows = [(*r, int(r[0]) in kept_ids) for r in rows]
    stats = repo.stats_for_files(conn, t, [int(r[0]) for r in rows], condition_paths(condition))
    files = []
    reasons = ShortReasons(condition)  # what the page's files share, worked out once
    for r in rows:
        fid, kept = int(r[0]), bool(r[4])
        verdict = reasons.of(stats_by_path(stats.get(fid, [])))
        reason = f"kept by the SQL layer ({verdict.short})" if kept and not verdict.might_match else verdict.short
        files.append(PlannedFile(r[1], int(r[2]), int(r[3]), fid, kept, reason))
    return PlannedFilesPage(snapshot, tuple(files), offset, more)


class _RestrictPartitions(ConditionVisitor[Condition]):
    """The condition with every partition leaf's cases limited to the stored types that read as
    the column's type (:func:`partition_row_usable`)."""

    def __init__(self, partition: Mapping[str, ShreddedType | None]) -> None:
        self.partition = partition

    def visit_leaf(self, c: LeafCondition) -> Condition:
        if c.variant_path is not None or c.column not in self.partition:
            return c
        want = self.partition[c.column]
        cases = []
        for case in c.cases:
            types = tuple(st for st in case.types if partition_row_usable(st, want))
            if types:
                cases.append(case if len(types) == len(case.types) else replace(case, types=types))
        return c if len(cases) == len(c.cases) and all(a is b for a, b in zip(cases, c.cases, strict=True)) else replace(c, cases=tuple(cases))

    def visit_all_of(self, c: AllOf) -> Condition:
        return AllOf(tuple(visit_condition(k, self) for k in c.children))

    def visit_any_of(self, c: AnyOf) -> Condition:
        return AnyOf(tuple(visit_condition(k, self) for k in c.children))

    def visit_constant(self, c: Constant) -> Condition:
        return c


def restrict_partition_leaves(
    condition: Condition, t: repo.TableRow, partition_types: Mapping[str, ShreddedType | None]
) -> Condition:
    """``condition`` with the leaves on partition columns judging a file's value by its bounds only
    when it is stored as a type that reads as the column's type (declared, or Spark's merge over
    the live files); a value stored as another type (``n=1`` inferred int, the column a string)
    meets the leaf's ``otherwise`` test: type-independent facts (NULL counts) only. The SQL
    planner and the evaluator (explain, tests) read the same restricted condition."""
    wanted = {
        name: partition_types.get(name, None if c.type_name is None else ShreddedType.parse(c.type_name))
        for name, c in t.plain.items()
        if c.partition
    }
    if not wanted:
        return condition
    return visit_condition(condition, _RestrictPartitions(wanted))


__all__ = [
    "COLUMN_STATS",
    "DEFAULT_EXPLAIN_SAMPLE",
    "MAX_POINT_PROBES",
    "MAX_SQL_TERMS",
    "SQLITE_POINT_PROBES",
    "VARIANT_STATS",
    "PlanToken",
    "decode_plan_token",
    "partition_row_usable",
    "plan_files_in",
    "plan_in",
    "restrict_partition_leaves",
]
