"""Absent fields in the planner's SQL (issue 34): the files a leaf is kept for because they have
no stats row for its path (nothing known) lose those whose fully shredded objects prove the path's
key absent from every row, as :class:`~service.pruning.evaluator.FileEvaluator` decides with
:func:`~service.pruning.absent.absent_key`: the leaf must reject an all-NULL path
(:func:`~service.pruning.absent.rejects_nulls`), and only paths of object keys are decided.

The proof is a shape row (``shredcat_object_shape``) of the object at one of the path's parents
without the key; the few shapes of a path are read once per table state (kept in the catalog's
:class:`~service.catalog.repository.TableCache` by the table's metadata key, which every commit
moves, as the paths' dictionary rows are) and picked in Python, so the SQL is one lookup per file
on ``shredcat_file_object``'s primary key, and nothing at all when no shape lacks the key (today's
queries on tables where every object has the field).
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import Connection

from service.catalog.planner.clauses import PathRow
from service.catalog.planner.shapes import Shape
from service.catalog.planner.sql import Binds
from service.catalog.repository.objects import StepShapes, step_shapes
from service.catalog.repository.tables import TableCache, TableRow
from service.pruning.absent import key_steps, rejects_nulls
from service.pruning.conditions import LeafCondition


class _Planner(Protocol):
    """What is read here of :class:`service.catalog.planner.sets.Planner` (no import: no circle)."""

    conn: Connection
    t: TableRow
    current: bool
    binds: Binds
    cache: TableCache | None
    absent_cache: dict[tuple[str, str | None], tuple[StepShapes, ...]]

    def live(self, alias: str) -> Shape: ...

    def empty(self) -> Shape: ...

    def all_files(self, *more: Shape) -> Shape: ...

    def run(self, shape: Shape) -> Any: ...

    def paths(self, column: str, variant_path: str | None) -> list[PathRow]: ...


def table_steps(
    conn: Connection, t: TableRow, column: str, variant_path: str | None, cache: TableCache | None
) -> tuple[StepShapes, ...]:
    """The shapes of each step of the path (:func:`~service.catalog.repository.objects.step_shapes`),
    from ``cache`` when this state of the table was read before: shapes and their live counts
    change only in a commit or a removal, which moves the metadata key."""
    column_id = t.columns.get(column)
    steps = key_steps(variant_path)
    if column_id is None or not steps:
        return ()

    def read() -> tuple[StepShapes, ...]:
        return tuple(step_shapes(conn, t.table_id, column_id, steps))

    return read() if cache is None else cache.derived("object_shapes", t.metadata_key, (column, variant_path), read)


def _steps(planner: _Planner, c: LeafCondition) -> tuple[StepShapes, ...]:
    """The shapes of each step of ``c``'s path (once per planner and leaf key); none when the leaf
    does not reject an all-NULL path."""
    if c.variant_path is None or not rejects_nulls(c):
        return ()
    key = (c.column, c.variant_path)
    found = planner.absent_cache.get(key)
    if found is None:
        found = planner.absent_cache[key] = table_steps(planner.conn, planner.t, c.column, c.variant_path, planner.cache)
    return found


def absent_shapes(planner: _Planner, c: LeafCondition) -> list[int]:
    """The shapes proving ``c``'s key absent."""
    return sorted(sid for st in _steps(planner, c) for sid in st.lacking)


def _covering(planner: _Planner, c: LeafCondition) -> StepShapes | None:
    """At the current snapshot, when some shape lacks ``c``'s key: the step whose shapes cover every
    live file (each file has one object there) and leave the fewest files having the key."""
    if not planner.current or not absent_shapes(planner, c):
        return None
    covering = [st for st in _steps(planner, c) if st.live_files == planner.t.live_file_count]
    return min(covering, key=lambda s: s.having_files) if covering else None


def maybe_having(planner: _Planner, c: LeafCondition, *more: Shape) -> Shape:
    """A SELECT of the live files ``f`` that may hold ``c``'s key (no shape proves it absent) and
    pass ``more`` (tests of ``f``).

    When one step's shapes cover every live file, they are the files whose object there has the
    key: an index range per shape (none: an empty set), joined to the files in that order
    (``CROSS JOIN`` is SQLite's way to fix the order: with the shape ids bound it estimated a third
    of the objects per shape and walked every live file instead, 54 ms at 20,000 files against
    2 ms); the step's own lacking shapes need no test then (a file has one object per path).
    Otherwise every live file, less those a shape proves lacking the key."""
    st = _covering(planner, c)
    if st is None:
        return planner.all_files(*unless_absent(planner, c, "f"), *more)
    if not st.having:
        return planner.empty()
    ids = tuple(planner.binds(s) for s in st.having)
    tid = planner.binds(planner.t.table_id)
    return ("having", ids, tid, planner.live("f"), *unless_absent(planner, c, "f", skip=st), *more)


def absent_set_size(planner: _Planner, c: LeafCondition) -> int | None:
    """How many files :func:`maybe_having` can give for ``c`` at most, when that is its whole set
    of files: no live file has a stats row for ``c``'s key and one step's shapes cover every live
    file (the files whose object there has the key); None otherwise, or when no file has it (an
    empty set costs nothing to collect)."""
    st = _covering(planner, c)
    if st is None or st.having_files == 0:
        return None
    if any(r.live_file_count for r in planner.paths(c.column, c.variant_path)):
        return None
    return st.having_files


def driver_within_set(planner: _Planner, size: int, driver: Shape) -> bool:
    """Whether an AND's driver (``driver``: the SELECT of its candidates) has no more than
    ``size`` candidates (a leaf's set: :func:`absent_set_size`), so that testing the leaf per
    candidate reads less than collecting it. Counted only up to one past ``size``, so that the
    probe of a wide driver can stop there."""
    cap = planner.binds(size + 1)
    return int(planner.run(("count_upto", driver, cap)).scalar_one()) <= size


def lacked_somewhere(
    conn: Connection, t: TableRow, column: str, variant_path: str | None, cache: TableCache | None = None
) -> bool:
    """Whether some file of the table (live or not) was proven to lack the path's key: then a plan
    prunes on the path there, though no file has statistics for it (what a warning must not deny).
    ``cache``: the plan's (the shapes it read are not read again)."""
    return any(st.lacking for st in table_steps(conn, t, column, variant_path, cache))


def unless_absent(planner: _Planner, c: LeafCondition, outer: str, skip: StepShapes | None = None) -> tuple[Shape, ...]:
    """The test (``NOT EXISTS``) dropping the files of ``outer`` (an alias) whose objects prove
    ``c``'s key absent (but for the shapes of the step ``skip``); none when no shape of the table
    does."""
    shapes = sorted(sid for st in _steps(planner, c) if st is not skip for sid in st.lacking)
    if not shapes:
        return ()
    return (("not_lacking", outer, tuple(planner.binds(s) for s in shapes)),)
