"""What a plan is of: the snapshot it reads (the current one, or a past one the table existed at)
and the condition as the table's partition column types read it."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Connection

from service.catalog import repository as repo
from service.errors import NotFoundError
from service.pruning.conditions import Condition
from service.pruning.rewrites import restrict_partition_leaves
from service.values import ShreddedType


def resolve_snapshot(conn: Connection, t: repo.TableRow, snapshot_id: int | None) -> tuple[int, bool]:
    """The snapshot to plan at, and whether it is the table's current one (``snapshot_id`` None or
    past the current one: the current one); a snapshot that does not exist, or at which the table
    did not, is a :class:`~service.errors.NotFoundError`."""
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



def restrict_partitions(
    condition: Condition, t: repo.TableRow, partition_types: Mapping[str, ShreddedType | None]
) -> Condition:
    """``condition`` with the leaves on ``t``'s partition columns judging a file's value by its
    bounds only when it is stored as a type that reads as the column's type: ``partition_types``,
    else the declared one (:func:`~service.pruning.rewrites.restrict_partition_leaves`). The SQL
    planner and the evaluator (explain, tests) read the same restricted condition."""
    wanted = {
        name: partition_types.get(name, None if c.type_name is None else ShreddedType.parse(c.type_name))
        for name, c in t.plain.items()
        if c.partition
    }
    return restrict_partition_leaves(condition, wanted)
