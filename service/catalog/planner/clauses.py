"""A leaf's test of one stats row ``s`` of one key, as WHERE conjunctions (the branches of a
UNION), over the typed key columns of ``ducklake_file_variant_stats`` (or
``ducklake_file_column_stats`` for plain and partition columns). Rows with a bound but no typed
key (decimals beyond int64) are treated as unbounded: kept."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from sqlalchemy import Connection

from service.catalog.planner.shapes import Shape
from service.catalog.planner.sql import (
    MAX_PAD_TERMS,
    MAX_POINT_PROBES,
    MAX_SQL_TERMS,
    SQLITE_POINT_PROBES,
    VARIANT_STATS,
    Binds,
    padded,
    padded_length,
    run,
)
from service.pruning.conditions import (
    AnyPoint,
    HasNulls,
    HasValues,
    Keep,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
    TestVisitor,
)
from service.values import INT64_MIN, Bound, ShreddedType, family, index_key


@dataclass(frozen=True, slots=True)
class PathRow:
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
    #: Values in the live files (0: the key holds only nulls wherever it is stored as this type).
    live_value_count: int = 0



#: On SQLite, a bounded string range is counted on each of its two key indexes up to this many
#: rows before its clause is written, and up to the next limit while both sides reach it
#: (:meth:`RowClauses.narrow_side`): a set plan whose narrow side holds more rows than a limit
#: reads at least that many rows anyway, each dearer than an index entry counted.
SIDE_PROBES = (1_000, 10_000, 100_000)


class StatementContext(Protocol):
    """What a row's clauses need of the plan they are part of (:class:`~.sets.Planner`)."""

    conn: Connection
    binds: Binds
    current: bool
    terms: int
    #: UNION terms the statement's point lists were padded with (:meth:`RowClauses.visit_any_point`).
    padded: int
    #: :meth:`RowClauses.narrow_side`'s answers, by (stats table, path_id, lo key, hi key).
    side_probes: dict[tuple[str, int, Any, Any], str | None]

    def live(self, alias: str) -> Shape: ...


#: A row holds values (``value_count > 0``, as the partial indexes' predicates are written), or
#: none (NULLs only: the ``novalues`` index's ``value_count = 0``).
VALUES: Shape = ("count", "s", "value_count", ">")
NO_VALUES: Shape = ("count", "s", "value_count", "=")


class RowClauses(TestVisitor[list[Shape]]):
    """A test as WHERE conditions over one stats row ``s`` of one path (shapes: :mod:`.shapes`),
    unioned: TRUE for the rows that MIGHT match ([] = none can).

    Range branches compare key columns with plain operators at the top level, which implies
    ``key IS NOT NULL`` and lets PostgreSQL and SQLite use the partial indexes; rows whose keys
    are NULL (no bound, or a decimal beyond int64) get their own branch, added only when the
    path's counters say such rows exist (or always, at a past snapshot).
    """

    def __init__(self, planner: StatementContext, row: PathRow, *, zones: bool = False, steer: bool = False) -> None:
        self.planner = planner
        self.binds = planner.binds
        self.current = planner.current
        self.row = row
        #: Over a zone's summary (``shredcat_stats_zone s``) instead of a stats row: the union of
        #: rows, some of them no longer live, so neither the live counters (which drop the
        #: branches for rows without keys or with NaN) nor the per-file width floor apply.
        self.zones = zones
        #: Rows read by key (the set plan's branches), not looked up per file on the primary
        #: key: a string range's index side is then chosen (:meth:`narrow_side`).
        self.steer = steer
        #: Branches these clauses added to pad point lists: not counted as the plan's terms.
        self.padding = 0

    def key(self, v: Bound) -> Any:
        t = self.row.shredded_type
        k = index_key(t, v)
        return {"num": k.num, "real": k.real, "bin": k.bin}[family(t)]

    def _maybe(self, count: int) -> bool:
        return self.zones or not self.current or count > 0

    def _nan_branches(self) -> list[Shape]:
        if not self._maybe(self.row.nan_files):
            return []
        return [("and", VALUES, ("nan", "s"))]

    def unkeyed_branches(self) -> list[Shape]:
        if not self._maybe(self.row.unkeyed_files):
            return []
        return [("and", VALUES, ("unkeyed", "s", family(self.row.shredded_type)))]

    def _range(
        self, lo: Bound | None, hi: Bound | None, lo_inc: bool, hi_inc: bool, *, steer: bool = True
    ) -> list[Shape]:
        """Branches for the rows whose [min, max] meets lo..hi (``steer``: a string range's index
        side may be chosen, :meth:`narrow_side`)."""
        fam = family(self.row.shredded_type)
        mn, mx = f"min_{fam}", f"max_{fam}"
        lo_k = self.key(lo) if lo is not None else None
        hi_k = self.key(hi) if hi is not None else None
        if (lo is not None and lo_k is None) or (hi is not None and hi_k is None):
            # A literal without a typed key (a decimal beyond int64): no SQL test, keep the rows.
            return [VALUES]
        parts: list[Shape] = [VALUES]
        # A unary + keeps a column out of SQLite's index choice (and changes no comparison).
        side = self.narrow_side(lo_k, hi_k) if fam == "bin" and steer else None
        mn_plus, mx_plus = side == "max", side == "min"
        if hi_k is not None:
            parts.append(("cmp", "s", mn, mn_plus, "<=" if hi_inc else "<", self.binds(hi_k)))
        else:
            parts.append(("nn", "s", mn, mn_plus))
        if lo_k is not None:
            parts.append(("cmp", "s", mx, mx_plus, ">=" if lo_inc else ">", self.binds(lo_k)))
            # The width trick: max - min <= width for every file, so min >= lo - width, which
            # turns a point probe into a short index range on (path_id, min).
            floor = self._min_floor(fam, lo_k)
            if floor is not None:
                parts.append(("cmp", "s", mn, mn_plus, ">=", self.binds(floor)))
        else:
            parts.append(("nn", "s", mx, mx_plus))
        return [("and", *parts), *self.unkeyed_branches()]

    def narrow_side(self, lo_k: Any, hi_k: Any) -> str | None:
        """Which key index reads fewer rows for a bounded string range on SQLite: ``"min"``
        (``min <= hi``) or ``"max"`` (``max >= lo``), or None (not SQLite, not read by key, a
        bound missing, a past snapshot, a zone summary, or no clear winner). A number's range is
        bounded on both sides by the width floor; a string's is read on the side of one bound,
        and SQLite, without range statistics, picked ``max_bin >= 'aaaaaaab'`` for a name no file
        holds: every row of the path (2.6-3.4 s at 1,000,000 files) where ``min_bin <=
        'aaaaaaab'`` reads a handful. Each side is counted on its partial index, up to each of
        :data:`SIDE_PROBES` in turn while both sides reach it (then neither reads fewer than the
        limit)."""
        planner, row = self.planner, self.row
        if not self.steer or lo_k is None or hi_k is None or self.zones or not planner.current:
            return None
        if planner.conn.dialect.name != "sqlite":
            return None
        key = (row.table, row.path_id, lo_k, hi_k)
        if key in planner.side_probes:
            return planner.side_probes[key]

        side = None
        values = [row.path_id, lo_k, hi_k]
        for limit in SIDE_PROBES:
            lows, highs = run(planner.conn, ("side_counts", row.table, 0, 1, 2, limit), values).one()
            side = "min" if lows < highs else "max" if highs < lows else None
            if side is not None or lows < limit:
                break
        planner.side_probes[key] = side
        return side

    def one_sided_rejects(self, t: RangeMayContain) -> list[Shape] | None:
        """For a range bounded on one side only: conditions over a row ``s`` that together find
        every row :meth:`_range` rejects (the complement of its keyed branch, each an index probe;
        rows with values but a key missing pass through the unkeyed branch); None when the bound
        has no typed key (then :meth:`_range` keeps every row with values, and there is nothing to
        probe by key)."""
        fam = family(self.row.shredded_type)
        bound = t.lo if t.lo is not None else t.hi
        key = None if bound is None else self.key(bound)
        if key is None:
            return None
        fails: list[Shape] = [NO_VALUES]
        if t.lo is not None:
            fails.append(("cmp", "s", f"max_{fam}", False, "<" if t.lo_inclusive else "<=", self.binds(key)))
            floor = self._min_floor(fam, key)
            if floor is not None:
                fails.append(("cmp", "s", f"min_{fam}", False, "<", self.binds(floor)))
        else:
            fails.append(("cmp", "s", f"min_{fam}", False, ">" if t.hi_inclusive else ">=", self.binds(key)))
        return fails

    def _min_floor(self, fam: str, lo_k: Any) -> Any:
        row = self.row
        if lo_k is None or self.zones:
            return None
        if fam == "num" and row.max_width_num is not None:
            n = int(lo_k) - int(row.max_width_num)
            return n if n >= INT64_MIN else None
        if fam == "real" and row.max_width_real is not None and math.isfinite(lo_k):
            v = float(lo_k) - float(row.max_width_real)
            if not math.isfinite(v):
                return None
            # Step a few ulps down: the subtraction rounds, and a floor must never rise.
            for _ in range(4):
                v = math.nextafter(v, -math.inf)
            return v
        return None

    def visit_keep(self, t: Keep) -> list[Shape]:
        return [("constant", True)]

    def visit_never(self, t: Never) -> list[Shape]:
        return []

    def visit_has_values(self, t: HasValues) -> list[Shape]:
        return [VALUES]

    def visit_has_nulls(self, t: HasNulls) -> list[Shape]:
        return [("count", "s", "null_count", ">")]

    def visit_may_have_nan(self, t: MayHaveNaN) -> list[Shape]:
        return self._nan_branches()

    def visit_range(self, t: RangeMayContain) -> list[Shape]:
        out = self._range(t.lo, t.hi, t.lo_inclusive, t.hi_inclusive)
        return out + (self._nan_branches() if t.nan_matches else [])

    def visit_any_point(self, t: AnyPoint) -> list[Shape]:
        # Each branch once, in order of first appearance (a dict: comparing nested tuples one by
        # one cost ~6 ms of CPU for 200 points).
        # What is chosen (a branch per point or not, the term budget) is by the points themselves;
        # only the branches written are padded to a power of two (sql.padded: fewer shapes to
        # compile).
        out: dict[Shape, None] = {}
        if len(t.points) <= MAX_POINT_PROBES or self._sqlite_branches(len(t.points)):
            for p in t.points:
                out.update(dict.fromkeys(self._range(p, p, True, True)))
            self._pad_branches(t.points, out)
            return list(out)
        # Many points: one branch whose OR the database evaluates row by row (no index side to
        # choose, so no probe per point). Not padded: SQLite's expression depth (1,000) ends an
        # OR of 450 points padded to 512.
        ranges = []
        for p in t.points:
            first, *rest = self._range(p, p, True, True, steer=False)
            ranges.append(first)
            out.update(dict.fromkeys(rest))
        return [("or", *ranges), *out]

    def _pad_branches(self, points: tuple[Bound, ...], out: dict[Shape, None]) -> None:
        """Adds to ``out`` the branches of the last point again, up to :func:`padded_length`
        points (each with its own bind positions: a shape names positions, and a length's
        shape must not depend on which values repeat), within the statement's
        :data:`MAX_PAD_TERMS`. A point without a typed key adds no branch (its branch is the
        constant one already there)."""
        extra = padded_length(len(points)) - len(points)
        planner = self.planner
        if not extra or planner.padded + extra > MAX_PAD_TERMS:
            return
        before, last = len(out), points[-1]
        for _ in range(extra):
            out.update(dict.fromkeys(self._range(last, last, True, True)))
        added = len(out) - before
        planner.padded += added
        self.padding += added

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

    def point_join(self, t: Test, table: str) -> Shape | None:
        """On PostgreSQL, a long point list (more than :data:`MAX_POINT_PROBES`) as one SELECT
        joining the points' ``(key, key - max width)`` pairs to the path's rows: one short index
        range per point, where an OR of the points costs tens of ms of planning. The rows come
        from a LATERAL subquery PostgreSQL cannot flatten (OFFSET 0); flattened, it drives the
        join from the stats rows (seconds). The pairs come as two array parameters, unnested
        together: a VALUES list took two binds per point, and 200 points' 400 binds cost more
        client CPU (SQLAlchemy's and psycopg's handling of each bind, a statement too long for
        psycopg's cache) than the database's whole answer (bench/prune.py's ``in200``). None
        (branches or the OR-ed scan then) elsewhere, or when a point has no typed key or the
        path no width; the rows without keys are :meth:`unkeyed_branches`."""
        if not isinstance(t, AnyPoint) or len(t.points) <= MAX_POINT_PROBES:
            return None
        if self.planner.conn.dialect.name != "postgresql":
            return None
        fam = family(self.row.shredded_type)
        pairs = []
        for p in t.points:
            k = self.key(p)
            floor = None if k is None else self._min_floor(fam, k)
            if floor is None:
                return None
            pairs.append((k, floor))
        bind = self.binds
        keys, floors = bind([k for k, _ in pairs]), bind([f for _, f in pairs])
        return ("point_join", table, fam, keys, floors, bind(self.row.path_id), self.planner.live("s"))

    def visit_not_all_in(self, t: NotAllIn) -> list[Shape]:
        fam = family(self.row.shredded_type)
        keys = [self.key(v) for v in t.values]
        if not keys or any(k is None for k in keys):
            return [VALUES]
        # Padded as a point list (fresh positions: see _pad_branches); a longer list is left as it
        # is, far from the drivers' bind limits (SQLite's 32,766, PostgreSQL's 65,535).
        ids = tuple(self.binds(k) for k in (padded(keys) if len(keys) <= MAX_POINT_PROBES else keys))
        out: list[Shape] = [("and", VALUES, ("notall", "s", fam, ids))]
        return out + (self._nan_branches() if t.nan_matches else [])

