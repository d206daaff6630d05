"""How the planner runs its statements: each one a shape (:mod:`.shapes`) and the plan's values,
its SQLAlchemy Core built and compiled once per shape and dialect, then run by the driver with
the values in the compiled statement's order; and the limits every statement shares.

Why not Core executed the usual way (``conn.execute(select(...))``): a plan's statements are
built per plan, and SQLAlchemy computes the cache key of a Core statement and extracts its
parameters on every execution; over the many branches of a long point list that cost 2.5-5x the
text's CPU (docs/benchmarks-history.md: h55). Here a statement's shape holds no values (their
positions only), so a plan whose shape was seen before builds no Core object at all: its compiled
string is looked up by the shape and run with ``Connection.exec_driver_sql`` (which fires
``before_cursor_execute`` but not ``before_execute``). A shape is a nested tuple, hashed in C.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, TypeVar

from sqlalchemy import Connection, CursorResult
from sqlalchemy.engine import Dialect
from sqlalchemy.util.typing import TupleAny

from service.catalog.planner.shapes import Shape, build

T = TypeVar("T")

#: Most SELECT terms one plan may union or intersect. SQLite refuses compound SELECTs of more than
#: 500 terms; past a few hundred the predicate is better rejected with a clear 413 anyway.
MAX_SQL_TERMS = 400
#: Point lists up to this size get one index probe (one UNION branch) each. Longer ones: on
#: PostgreSQL one join of the points with the path's rows (:meth:`RowClauses.point_join`); on
#: SQLite, whose compound SELECTs end at 500 terms, branches up to :data:`SQLITE_POINT_PROBES`
#: within half the plan's term budget (a VALUES join there builds a Bloom filter over the whole
#: path first on an ANALYZEd catalog), then one OR-ed scan.
MAX_POINT_PROBES = 64
SQLITE_POINT_PROBES = 256

#: Extra UNION terms the padding of point lists (:func:`padded`) may add to one statement, each a
#: repeated index probe: they bound the work padding adds (they are not counted against
#: :data:`MAX_SQL_TERMS`; a leaf's union stays within SQLite's 500 compound terms anyway, its
#: point branches at most :data:`SQLITE_POINT_PROBES`, a power of two).
MAX_PAD_TERMS = 100


def padded_length(n: int) -> int:
    """The length a list of ``n`` points is padded to: the next power of two (so that lengths
    1..N make O(log N) statement shapes, each compiled once: a new IN-list length was a new
    shape, a Core build and compile of 6-13 ms, ~300 ms for a 200-branch page)."""
    return 1 << (n - 1).bit_length() if n > 1 else n


def padded(values: Sequence[T]) -> list[T]:
    """``values`` repeated at the end to :func:`padded_length`: an IN list or a union of point
    probes answers the same with its last value twice. (PostgreSQL's long point lists are bound
    as two arrays, :meth:`~.clauses.RowClauses.point_join`: their length is not in the shape, so
    they are not padded.)"""
    if not values:
        return []
    return [*values, *[values[-1]] * (padded_length(len(values)) - len(values))]


#: Where the stats rows of a key live: Variant paths, and plain or partition columns.
VARIANT_STATS = "ducklake_file_variant_stats"
COLUMN_STATS = "ducklake_file_column_stats"


class Binds:
    """The values of one plan's statements, in binding order: :meth:`__call__` gives a value its
    position, which a shape names (``:p{i}``); every statement of the plan runs with the values
    its shape names."""

    __slots__ = ("values",)

    def __init__(self) -> None:
        self.values: list[Any] = []

    def __call__(self, value: Any) -> int:
        self.values.append(value)
        return len(self.values) - 1


#: Compiled statements kept, by (dialect, paramstyle, shape): a server's predicates repeat (the
#: pages of one predicate, dashboards); about 700 shapes cover the planner's recorded test set.
#: Also at most :data:`KEPT_CHARS` characters of SQL: a long point list's shape and SQL weigh
#: ~0.1 MB and ~40 kB (200 branches), a short plan's a few kB.
KEPT_SHAPES = 1024
KEPT_CHARS = 8_000_000
_kept: OrderedDict[tuple[str, str, Shape], tuple[str, tuple[int, ...], bool]] = OrderedDict()
_kept_chars = 0
_lock = threading.Lock()


def compiled(dialect: Dialect, shape: Shape) -> tuple[str, tuple[int, ...], bool]:
    """The SQL of ``shape`` for ``dialect``, the positions of the values it takes in order (with
    repeats, for positional parameters) or by name, and whether they are positional."""
    key = (dialect.name, dialect.paramstyle, shape)
    with _lock:
        hit = _kept.get(key)
        if hit is not None:
            _kept.move_to_end(key)
            return hit
    c = build(shape).compile(dialect=dialect)
    if c.positiontup is not None:
        order = tuple(int(name[1:]) for name in c.positiontup)
        made = (c.string, order, True)
    else:
        made = (c.string, tuple(sorted({int(name[1:]) for name in c.binds})), False)
    _keep(key, made)
    return made


def _keep(key: tuple[str, str, Shape], made: tuple[str, tuple[int, ...], bool]) -> None:
    """Keeps a compiled statement, dropping the least recently used past either bound."""
    global _kept_chars
    with _lock:
        if key in _kept:  # compiled by another thread meanwhile
            return
        _kept[key] = made
        _kept_chars += len(made[0])
        while len(_kept) > 1 and (len(_kept) > KEPT_SHAPES or _kept_chars > KEPT_CHARS):
            _, (sql, _, _) = _kept.popitem(last=False)
            _kept_chars -= len(sql)


def run(conn: Connection, shape: Shape, values: list[Any] | None = None) -> CursorResult[*TupleAny]:
    """Runs the statement of ``shape`` with ``values`` (the plan's, by position)."""
    sql, order, positional = compiled(conn.dialect, shape)
    vals = values or []
    if positional:
        return conn.exec_driver_sql(sql, tuple([vals[i] for i in order]))
    return conn.exec_driver_sql(sql, {f"p{i}": vals[i] for i in order})
