"""The set plan: a compiled condition as one SELECT of the ``data_file_id``s that might match it.

Per leaf ``(column, variant_path)`` the candidate files are

* the files whose stats row for the path passes the leaf's test (one row per path and file,
  whose stored type picks the test), found through the partial indexes on
  ``(path_id, min_*/max_*)``; a point probe becomes the bounded range
  ``min BETWEEN lit - max_width AND lit`` thanks to the per-path maximum width the catalog
  keeps, so a selective predicate reads a handful of index entries, not half the table;
* plus the files with **no** row for the path (not fully shredded there: no facts). At the
  current snapshot the per-path live counters tell when every live file has a row, which is
  the common case and needs no anti-join.

AllOf drives from its most selective-looking child and tests the others per candidate, AnyOf
unites its children (its leaves on one key first merged into one point set, as an IN list's:
:mod:`service.pruning.disjunctions`). Each leaf's test of one stats row is :class:`~.clauses.RowClauses`'.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import Connection

from service.catalog import repository as repo
from service.catalog.models import COLUMN_KEY_PATH
from service.catalog.planner.absent import (
    absent_set_size,
    absent_shapes,
    driver_within_set,
    maybe_having,
    unless_absent,
)
from service.catalog.planner.clauses import NO_VALUES, PathRow, RowClauses
from service.catalog.planner.shapes import Shape
from service.catalog.planner.sql import COLUMN_STATS, MAX_SQL_TERMS, VARIANT_STATS, Binds, run
from service.catalog.repository.objects import StepShapes
from service.errors import LimitExceededError
from service.pruning.conditions import (
    AllOf,
    AnyOf,
    Condition,
    ConditionVisitor,
    Constant,
    HasValues,
    Keep,
    LeafCondition,
    RangeMayContain,
    visit_condition,
    visit_test,
)
from service.pruning.disjunctions import merge_points
from service.pruning.rewrites import fold_true_leaves
from service.pruning.selectivity import selectivity_rank
from service.values import ShreddedType

TRUE: Shape = ("constant", True)
FALSE: Shape = ("constant", False)
#: A SELECT of no file.
EMPTY: Shape = ("empty",)


class Planner(ConditionVisitor[Shape]):
    """Translates a condition into a SELECT of the data_file_ids that might match it (its shape:
    :mod:`.shapes`), and runs the plan's statements with the values they name."""

    def __init__(
        self, conn: Connection, t: repo.TableRow, snapshot: int, current: bool, cache: repo.TableCache | None = None
    ) -> None:
        self.conn = conn
        self.t = t
        self.snapshot = snapshot
        self.current = current
        self.binds = Binds()
        self._paths: dict[tuple[str, str | None], list[PathRow]] = {}
        #: The catalog's metadata cache (paths' dictionary rows, object shapes), if any.
        self.cache = cache
        self.terms = 0
        #: The terms point lists were padded with (:meth:`RowClauses.visit_any_point`), not counted.
        self.padded = 0
        #: Per leaf key: the object shapes at each step of its path (planner.absent).
        self.absent_cache: dict[tuple[str, str | None], tuple[StepShapes, ...]] = {}
        #: Which key index a bounded string range reads on SQLite (:meth:`RowClauses.narrow_side`).
        self.side_probes: dict[tuple[str, int, Any, Any], str | None] = {}

    def restart_terms(self) -> None:
        """A new statement: its terms and padding are counted from none."""
        self.terms = self.padded = 0

    def count(self, n: int) -> None:
        self.terms += n
        if self.terms > MAX_SQL_TERMS:
            raise LimitExceededError(
                f"the predicate needs more than {MAX_SQL_TERMS} index probes; split it or use IN lists",
                details={"limit": MAX_SQL_TERMS},
            )

    # Live rows at the snapshot. At the current snapshot the literal `end_snapshot IS NULL`
    # matches the partial indexes' predicate, which is what lets the planner use them.
    def live(self, alias: str) -> Shape:
        if self.current:
            return ("live", alias)
        return ("live", alias, self.binds(self.snapshot))

    def all_files(self, *more: Shape) -> Shape:
        """A SELECT of the table's live files ``f`` (passing ``more``, tests of ``f``)."""
        return ("all_files", self.binds(self.t.table_id), self.live("f"), *more)

    def run(self, shape: Shape) -> Any:
        """Runs a statement of this plan (:func:`~.sql.run`)."""
        return run(self.conn, shape, self.binds.values)

    def paths(self, column: str, variant_path: str | None) -> list[PathRow]:
        """The dictionary rows (one per stored type) of a Variant path, or (``variant_path``
        None) of a plain or partition column: the same counters, another stats table."""
        key = (column, variant_path)
        found = self._paths.get(key)
        if found is not None:
            return found
        # A Variant path's dictionary rows change only with a snapshot of the table (a commit or a
        # removal), which moves the metadata key; ``refresh`` changes plain columns' only.
        cache, cached = self.cache, None
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
        rows: list[PathRow] = []
        # A path holding NUL is never stored (service.values.text), and PostgreSQL cannot compare it.
        if column_id is not None and (variant_path is None or "\x00" not in variant_path):
            values = [self.t.table_id, column_id, COLUMN_KEY_PATH if variant_path is None else variant_path]
            for r in run(self.conn, ("path_rows", 0, 1, 2), values):
                st = ShreddedType.parse(r[1])
                rows.append(PathRow(int(r[0]), st, int(r[2]), r[3], r[4], int(r[5]), int(r[6]), table, int(r[7])))
        self._paths[key] = rows
        if cache is not None and cached is not None:
            cache.put("variant_path", cached, tuple(rows))
        return rows

    def covers_every_file(self, c: LeafCondition) -> bool:
        """Whether every live file has a stats row for ``c``'s key (current snapshot only: the
        counters are of the live files), so that no file is kept for lacking one."""
        covered = sum(r.live_file_count for r in self.paths(c.column, c.variant_path))
        return self.current and covered == self.t.live_file_count

    def path_rows(self) -> dict[tuple[str, str | None], list[PathRow]]:
        """Every key read so far, by (column, variant_path) (variant_path None: a plain or
        partition column)."""
        return dict(self._paths)

    def holds_everywhere(self, c: LeafCondition) -> bool:
        """Whether every live file passes ``c``'s one-sided range test (``score > 0`` where every
        file's max is positive) or its test of values alone (a type the term cannot compare, where
        every row holds values): then the leaf is TRUE and a dense answer needs no lookup per file
        (:func:`simplify`). Current snapshot only (the counters and partial indexes describe the
        live files).

        Exactly the rows the leaf's SQL would reject are looked for, so the answer never changes:
        a file without a row for the key is kept anyway; a row without values fails
        (``value_count > 0`` is in every branch; the ``novalues`` index finds one); a row with both
        keys fails when its max (min) is on the wrong side of the bound, or its min is below the
        width floor (an invariant, checked all the same: one probe each on the key indexes); a
        row with values but a key missing passes through the unkeyed branch."""
        if not self.current or (not self.covers_every_file(c) and absent_shapes(self, c)):
            return False  # (files lacking the key are not kept: planner.absent)
        probes: list[Shape] = []
        for row in self.paths(c.column, c.variant_path):
            if row.live_file_count == 0:
                continue
            t = c.test_for(row.shredded_type)
            if isinstance(t, Keep):
                continue
            fails: list[Shape] | None
            if isinstance(t, HasValues):  # a type the term cannot compare: it rejects no other row
                fails = [NO_VALUES]
            elif not isinstance(t, RangeMayContain) or (t.lo is None) == (t.hi is None):
                return False
            else:
                fails = RowClauses(self, row).one_sided_rejects(t)
            if fails is None:
                return False
            pid = self.binds(row.path_id)
            probes += [("path_exists", row.table, pid, f) for f in fails]
        if not probes:
            return True
        return not self.run(("any_row", *probes)).scalar()

    # --- conditions -> sets of data_file_id --------------------------------------------------

    def _leaf_parts(
        self, c: LeafCondition, joins: list[Shape] | None = None
    ) -> tuple[list[tuple[int, Shape]], bool, str, int]:
        """(path_id, WHERE clause) per branch over stats rows, whether files without a stats row
        for the key must be added (they are kept: nothing is known there), the stats table, and
        how many of the branches only pad point lists (not counted as terms).
        With ``joins``, a long point list is appended there as one join (:meth:`RowClauses.point_join`)
        instead of a branch that ORs every point."""
        rows = self.paths(c.column, c.variant_path)
        table = COLUMN_STATS if c.variant_path is None else VARIANT_STATS
        parts = []
        padding = 0
        for row in rows:
            test = c.test_for(row.shredded_type)
            clauses = RowClauses(self, row, steer=joins is not None)
            join = clauses.point_join(test, table) if joins is not None else None
            if join is not None and joins is not None:
                joins.append(join)
                parts += [(row.path_id, clause) for clause in clauses.unkeyed_branches()]
            else:
                parts += [(row.path_id, clause) for clause in visit_test(test, clauses)]
            padding += clauses.padding
        return parts, not self.covers_every_file(c), table, padding

    def leaf_filter(
        self, c: LeafCondition, outer: str, *, uncovered_ok: bool = False, per_file: bool = False
    ) -> Shape | None:
        """The leaf as a correlated test of the data_file_id of ``outer`` (an alias: ``f`` or ``d``;
        an index lookup per
        candidate on the stats primary key). When files without a row for the key must be kept:
        None, or with ``uncovered_ok`` a test that also passes the files with no row.

        ``per_file``: keep each test a lookup per outer file. PostgreSQL otherwise turns a
        top-level EXISTS into a semi-join driven from the stats rows, which reads every matching
        row of the path (a million for a predicate that keeps every file) before the first page
        can stop; an OFFSET in the subquery is what stops that rewrite (and means nothing else).
        """
        parts, uncovered, table, padding = self._leaf_parts(c)
        if uncovered and not uncovered_ok:
            return None
        tests: list[Shape] = []
        self.count(len(parts) - padding)
        for path_id, clause in parts:
            pid = self.binds(path_id)
            tests.append(("row_exists", table, outer, pid, self.live("s"), clause, per_file))
        if uncovered:
            self.count(1)
            ids = tuple(self.binds(r.path_id) for r in self.paths(c.column, c.variant_path))
            if not ids:
                return ("and", TRUE, *unless_absent(self, c, outer))
            no_row: Shape = ("no_row", table, outer, ids, per_file)
            tests.append(("and", no_row, *unless_absent(self, c, outer)))
        if not tests:
            return FALSE
        return ("or", *tests)

    def file_filter(self, c: Condition, outer: str) -> Shape:
        """``c`` as a test of one file, ``outer`` (its data_file_id): index lookups per file on
        the stats primary key, for plans that walk the live files in id order and stop early."""
        return visit_condition(c, _FileFilter(self, outer))

    def empty(self) -> Shape:
        return EMPTY

    def build(self, c: Condition) -> Shape:
        """A SELECT of the data_file_ids that might match ``c``."""
        return visit_condition(c, self)

    def visit_constant(self, c: Constant) -> Shape:
        return self.all_files() if c.might_match else self.empty()

    def visit_leaf(self, c: LeafCondition) -> Shape:
        branches: list[Shape] = []
        parts, uncovered, table, padding = self._leaf_parts(c, joins=branches)
        self.count(len(branches) + len(parts) - padding)
        for path_id, clause in parts:
            pid = self.binds(path_id)
            branches.append(("branch", table, pid, self.live("s"), clause))
        if uncovered:
            ids = tuple(self.binds(r.path_id) for r in self.paths(c.column, c.variant_path))
            no_row = maybe_having(self, c, *([("no_row", table, "f", ids, False)] if ids else []))
            self.count(1)
            branches.append(no_row)
        if not branches:
            return self.empty()
        return ("union", "q", *branches)

    def disjuncts(self, c: AnyOf) -> list[Condition]:
        """``c``'s children with the leaves on one key merged into one point set (an OR of one
        id's values: :mod:`service.pruning.disjunctions`), for the stored types of the key's rows."""
        return merge_points(c.children, lambda column, path: [r.shredded_type for r in self.paths(column, path)])

    def visit_any_of(self, c: AnyOf) -> Shape:
        kids = self.disjuncts(c)
        if len(kids) == 1:
            return self.build(kids[0])
        self.count(len(kids))
        return ("union", "c", *(self.build(ch) for ch in kids))

    def visit_all_of(self, c: AllOf) -> Shape:
        """Drive from the most selective-looking child; test the others per candidate.

        An INTERSECT would materialize every child: a low-cardinality string equality matches
        nearly every file, while a bounded range matches a handful. Correlated EXISTS lets the
        database look the few candidates up on the stats primary key instead.

        A leaf no file has a stats row for, whose key object shapes prove absent, is otherwise the
        set of files whose object has the key (:func:`~.absent.maybe_having`), which SQLite
        collects and then drives the whole AND from, probing each of those files for the driver's
        row (1 % of the files in bench/prune.py's ``absent_and``: 18 ms at 100,000 files, against
        0.5 ms tested per candidate). Tested per candidate when the driver looks narrow and has no
        more candidates than that set (:func:`~.absent.driver_within_set`); a wider driver keeps the set (per
        candidate, ranges over a fifth to half of 100,000 files took 10-30x the set's time).
        """
        self.count(len(c.children))
        kids = list(c.children)
        drive = min(range(len(kids)), key=lambda i: selectivity_rank(kids[i]))
        driver = kids.pop(drive)
        # Only a driver that looks narrow is counted: a one-sided range's probe read 10,000 rows
        # (30 ms at 1,000,000 files) to keep the set anyway.
        narrow = selectivity_rank(driver) == 0
        driver_sql: Shape | None = None
        outer = "d"
        conds: list[Shape] = []
        for k in kids:
            f = None
            if isinstance(k, LeafCondition):
                per_candidate = False
                size = absent_set_size(self, k) if narrow else None
                if size is not None:
                    driver_sql = driver_sql or self.build(driver)
                    per_candidate = driver_within_set(self, size, driver_sql)
                f = self.leaf_filter(k, outer, uncovered_ok=per_candidate)
            conds.append(f if f is not None else ("in", outer, self.build(k)))
        driver_sql = driver_sql or self.build(driver)
        return ("drive", driver_sql, *conds)


class _FileFilter(ConditionVisitor[Shape]):
    """A condition as a boolean over one file's id (see :meth:`Planner.file_filter`)."""

    def __init__(self, planner: Planner, outer: str) -> None:
        self.planner = planner
        self.outer = outer

    def visit_constant(self, c: Constant) -> Shape:
        return TRUE if c.might_match else FALSE

    def visit_leaf(self, c: LeafCondition) -> Shape:
        f = self.planner.leaf_filter(c, self.outer, uncovered_ok=True, per_file=True)
        assert f is not None  # uncovered_ok: never None
        return f

    def visit_all_of(self, c: AllOf) -> Shape:
        self.planner.count(len(c.children))
        return ("and", *(visit_condition(k, self) for k in c.children))

    def visit_any_of(self, c: AnyOf) -> Shape:
        kids = self.planner.disjuncts(c)
        self.planner.count(len(kids))
        return ("or", *(visit_condition(k, self) for k in kids))


def simplify(planner: Planner, condition: Condition) -> Condition:
    """``condition`` with what holds for every live file folded away (:meth:`Planner.holds_everywhere`):
    the same answer, found without testing each file. At a past snapshot, unchanged."""
    if not planner.current:
        return condition
    return fold_true_leaves(condition, planner.holds_everywhere)
