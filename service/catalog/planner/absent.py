"""Absent fields in the planner's SQL (issue 34): the files a leaf is kept for because they have
no stats row for its path (nothing known) lose those whose fully shredded objects prove the path's
key absent from every row, as :class:`~service.pruning.evaluator.FileEvaluator` decides with
:func:`~service.pruning.absent.absent_key`: the leaf must reject an all-NULL path
(:func:`~service.pruning.absent.rejects_nulls`), and only paths of object keys are decided.

The proof is a shape row (``shredcat_object_shape``) of the object at one of the path's parents
without the key; the few shapes of a path are read once per leaf and picked in Python, so the SQL
is one lookup per file on ``shredcat_file_object``'s primary key, and nothing at all when no shape
lacks the key (today's queries on tables where every object has the field).
"""

from __future__ import annotations

from typing import Protocol

from sqlalchemy import Connection

from service.catalog.planner.sql import Sql
from service.catalog.repository.objects import StepShapes, shapes_lacking, step_shapes
from service.catalog.repository.tables import TableRow
from service.pruning.absent import key_steps, rejects_nulls
from service.pruning.conditions import LeafCondition


class _Planner(Protocol):
    """What is read here of :class:`service.catalog.planner.sets.Planner` (no import: no circle)."""

    conn: Connection
    t: TableRow
    current: bool
    sql: Sql
    absent_cache: dict[tuple[str, str | None], list[StepShapes]]

    def live(self, alias: str) -> str: ...

    def empty(self) -> str: ...


def _steps(planner: _Planner, c: LeafCondition) -> list[StepShapes]:
    """The shapes of each step of ``c``'s path (cached per planner and leaf key); none when the
    leaf does not reject an all-NULL path."""
    if c.variant_path is None or not rejects_nulls(c):
        return []
    column_id = planner.t.columns.get(c.column)
    steps = key_steps(c.variant_path)
    if column_id is None or not steps:
        return []
    cache = planner.absent_cache
    key = (c.column, c.variant_path)
    if key not in cache:
        cache[key] = step_shapes(planner.conn, planner.t.table_id, column_id, steps)
    return cache[key]


def absent_shapes(planner: _Planner, c: LeafCondition) -> list[int]:
    """The shapes proving ``c``'s key absent."""
    return sorted(sid for st in _steps(planner, c) for sid in st.lacking)


def uncovered_files(planner: _Planner, c: LeafCondition) -> str | None:
    """A SELECT of the live files ``f`` that may hold ``c``'s key, found by shape: at the current
    snapshot, when the shapes at one step's object path cover every live file (each file has one
    object there), the files whose object there has the key (an index range per shape; none: an
    empty set). None otherwise (then every live file is the start, :func:`unless_absent` the filter)."""
    if not planner.current or not absent_shapes(planner, c):
        return None
    covering = [st for st in _steps(planner, c) if st.live_files == planner.t.live_file_count]
    if covering:
        st = min(covering, key=lambda s: s.having_files)  # the step leaving the fewest files
        if not st.having:
            return planner.empty()
        ids = ", ".join(planner.sql.bind(s) for s in st.having)
        tid = planner.sql.bind(planner.t.table_id)
        return (
            "SELECT f.data_file_id FROM shredcat_file_object o "
            "JOIN ducklake_data_file f ON f.data_file_id = o.data_file_id "
            f"WHERE o.shape_id IN ({ids}) AND f.table_id = {tid} AND {planner.live('f')}"
        )
    return None


def lacked_somewhere(conn: Connection, t: TableRow, column: str, variant_path: str | None) -> bool:
    """Whether some file of the table (live or not) was proven to lack the path's key: then a plan
    prunes on the path there, though no file has statistics for it (what a warning must not deny)."""
    column_id = t.columns.get(column)
    steps = key_steps(variant_path)
    return column_id is not None and bool(steps) and bool(shapes_lacking(conn, t.table_id, column_id, steps))


def unless_absent(planner: _Planner, c: LeafCondition, outer: str) -> str:
    """`` AND NOT EXISTS (...)`` dropping the files ``outer`` whose objects prove ``c``'s key
    absent, or "" when no shape of the table does."""
    shapes = absent_shapes(planner, c)
    if not shapes:
        return ""
    ids = ", ".join(planner.sql.bind(s) for s in shapes)
    return (
        f" AND NOT EXISTS (SELECT 1 FROM shredcat_file_object o "
        f"WHERE o.data_file_id = {outer} AND o.shape_id IN ({ids}))"
    )
