"""Read-only catalog queries the dashboard needs and :class:`service.catalog.Catalog` does not offer.

Pure reads (SQLAlchemy Core over :mod:`service.catalog.models`, one read transaction each through
:func:`service.catalog.db.run_transaction`); nothing here writes. Routes and templates never hold
SQL: they call these functions or the catalog library.

* :func:`recent_snapshots`: snapshots newest first (all tables, or one), keyset by snapshot id.
* :func:`list_files_sorted`: live files ordered by size or record count (either direction) or by
  path descending, keyset on ``(key, path)``. No index covers size or record count, so each page
  scans the table's live files (a top-N sort in the database); path ascending is the library's
  :meth:`~service.catalog.Catalog.list_files`.
* :func:`count_files`: live files of a table under a path prefix.
* :func:`path_bounds`: every live file's bounds for one Variant path (at most ``limit``), ordered
  by the typed min key (through the partial ``(path_id, min_*)`` indexes) or by file path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Connection, and_, func, or_, select

from service.catalog import models as m
from service.catalog import repository as repo
from service.catalog.db import run_transaction
from service.catalog.results import DataFileInfo
from service.errors import BadInputError, NotFoundError
from service.values import ShreddedType, family

D = m.DataFile
S = m.FileVariantStats
VP = m.VariantPath

#: Most rows any function here returns at once.
MAX_LIMIT = 10_000


def _read(catalog: Any, fn: Any) -> Any:
    return run_transaction(catalog.engine, fn, write=False)


def _check_limit(limit: int) -> None:
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInputError(f"limit must be between 1 and {MAX_LIMIT}")


def _aware(ts: datetime | None) -> datetime | None:
    return repo._aware(ts)


# --- snapshots --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SnapshotRow:
    snapshot_id: int
    snapshot_time: datetime | None
    #: ``namespace.table`` of the table the snapshot changed (also for a dropped table), or None.
    table: str | None
    #: True when that table is live now (so a page about it exists).
    table_live: bool
    namespace: str | None
    table_name: str | None
    changes_made: str
    added_files: int
    removed_files: int


def recent_snapshots(
    catalog: Any, *, namespace: str | None = None, table: str | None = None, before: int | None = None, limit: int = 20
) -> list[SnapshotRow]:
    """Snapshots newest first: of every table (and namespace changes), or of one live table
    (``namespace`` and ``table``; NotFoundError when it does not exist). ``before``: keyset, the
    last snapshot id of the previous page."""
    _check_limit(limit)
    Sn, T, Sc = m.Snapshot, m.Table, m.Schema

    def op(conn: Connection) -> list[SnapshotRow]:
        stmt = (
            select(
                Sn.snapshot_id,
                Sn.snapshot_time,
                Sc.schema_name,
                T.table_name,
                T.end_snapshot,
                Sn.changes_made,
                Sn.added_files,
                Sn.removed_files,
            )
            .outerjoin(T, T.table_id == Sn.table_id)
            .outerjoin(Sc, Sc.schema_id == T.schema_id)
        )
        if table is not None:
            t = repo.require_table(conn, namespace or "", table)
            stmt = stmt.where(Sn.table_id == t.table_id)
        if before is not None:
            stmt = stmt.where(Sn.snapshot_id < before)
        stmt = stmt.order_by(Sn.snapshot_id.desc()).limit(limit)
        out = []
        for r in conn.execute(stmt):
            name = None if r[3] is None else f"{r[2]}.{r[3]}"
            out.append(
                SnapshotRow(
                    snapshot_id=int(r[0]),
                    snapshot_time=_aware(r[1]),
                    table=name,
                    table_live=r[3] is not None and r[4] is None,
                    namespace=r[2],
                    table_name=r[3],
                    changes_made=r[5],
                    added_files=int(r[6] or 0),
                    removed_files=int(r[7] or 0),
                )
            )
        return out

    return _read(catalog, op)


# --- files ------------------------------------------------------------------------------------

FileSort = Literal["path", "size", "rows"]
_SORT_COLUMNS = {"path": D.path, "size": D.file_size_bytes, "rows": D.record_count}


def _prefix_filter(prefix: str | None) -> list[Any]:
    if not prefix:
        return []
    conds = [D.path >= prefix]
    upper = repo.prefix_upper_bound(prefix)
    if upper is not None:
        conds.append(D.path < upper)
    return conds


def list_files_sorted(
    catalog: Any,
    namespace: str,
    table: str,
    *,
    sort: FileSort = "size",
    descending: bool = True,
    prefix: str | None = None,
    after: tuple[int | str, str] | None = None,
    limit: int = 100,
) -> list[DataFileInfo]:
    """Live files ordered by ``sort`` then path (both in the chosen direction).

    ``after``: keyset, ``(sort value, path)`` of the last file of the previous page (for
    ``sort="path"`` the value is the path itself).
    """
    _check_limit(limit)
    if sort not in _SORT_COLUMNS:
        raise BadInputError(f"cannot sort files by {sort!r}")
    key = _SORT_COLUMNS[sort]

    def op(conn: Connection) -> list[DataFileInfo]:
        t = repo.require_table(conn, namespace, table)
        stmt = select(*repo.FILE_INFO_COLUMNS).where(
            D.table_id == t.table_id, D.end_snapshot.is_(None), *_prefix_filter(prefix)
        )
        if sort == "path":
            if after is not None:
                stmt = stmt.where(D.path < after[1] if descending else D.path > after[1])
            stmt = stmt.order_by(D.path.desc() if descending else D.path)
        else:
            if after is not None:
                value, path = int(after[0]), after[1]
                if descending:
                    stmt = stmt.where(or_(key < value, and_(key == value, D.path < path)))
                else:
                    stmt = stmt.where(or_(key > value, and_(key == value, D.path > path)))
            stmt = stmt.order_by(key.desc(), D.path.desc()) if descending else stmt.order_by(key, D.path)
        return [repo.file_info(r) for r in conn.execute(stmt.limit(limit))]

    return _read(catalog, op)


def count_files(catalog: Any, namespace: str, table: str, *, prefix: str | None = None) -> int:
    """Live files of the table whose path starts with ``prefix`` (all of them without one)."""

    def op(conn: Connection) -> int:
        t = repo.require_table(conn, namespace, table)
        if not prefix:
            return t.live_file_count
        return int(
            conn.execute(
                select(func.count())
                .select_from(D)
                .where(D.table_id == t.table_id, D.end_snapshot.is_(None), *_prefix_filter(prefix))
            ).scalar_one()
        )

    return _read(catalog, op)


def find_file(catalog: Any, namespace: str, table: str, path: str) -> DataFileInfo:
    """The live file at ``path`` (NotFoundError if there is none)."""

    def op(conn: Connection) -> DataFileInfo:
        t = repo.require_table(conn, namespace, table)
        r = conn.execute(
            select(*repo.FILE_INFO_COLUMNS).where(D.table_id == t.table_id, D.path == path, D.end_snapshot.is_(None))
        ).first()
        if r is None:
            raise NotFoundError(f"{path}: not a live file of {t.qualified_name}", details={"path": path})
        return repo.file_info(r)

    return _read(catalog, op)


# --- per-file bounds of one path --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FileBound:
    """One live file's statistics for one path (bounds as DuckLake strings)."""

    path: str
    value_count: int
    null_count: int
    min_value: str | None
    max_value: str | None
    contains_nan: bool | None


@dataclass(frozen=True, slots=True)
class PathBounds:
    column: str
    variant_path: str
    #: The type whose files are in ``files``; None when the path is shredded in no live file.
    shredded_type: ShreddedType | None
    #: ``(type name, live files)`` for every type the path is shredded as, most files first.
    types: tuple[tuple[str, int], ...]
    #: Live files of the table.
    live_files: int
    #: Live files with a stats row of ``shredded_type`` for the path (may exceed ``len(files)``).
    total: int
    files: tuple[FileBound, ...]
    order: str


def path_bounds(
    catalog: Any,
    namespace: str,
    table: str,
    column: str,
    variant_path: str,
    *,
    shredded_type: str | None = None,
    order: Literal["min", "path"] = "min",
    limit: int = 2000,
) -> PathBounds:
    """The bounds of ``column``/``variant_path`` in each live file where it is fully shredded as
    ``shredded_type`` (default: the type with most files), at most ``limit`` files.

    ``order="min"``: by the typed min key, files whose min has no key (unknown bound, no values,
    decimals beyond int64) last; ``order="path"``: by file path.
    """
    _check_limit(limit)
    if order not in ("min", "path"):
        raise BadInputError(f"cannot order by {order!r}")

    def op(conn: Connection) -> PathBounds:
        t = repo.require_table(conn, namespace, table)
        cid = t.columns.get(column)
        if cid is None:
            raise NotFoundError(f"{t.qualified_name} has no Variant column {column!r}", details={"column": column})
        rows = conn.execute(
            select(VP.path_id, VP.shredded_type, VP.live_file_count)
            .where(VP.table_id == t.table_id, VP.column_id == cid, VP.variant_path == variant_path)
            .where(VP.live_file_count > 0)
        ).all()
        types = tuple(sorted(((r[1], int(r[2])) for r in rows), key=lambda kv: (-kv[1], kv[0])))
        by_type = {r[1]: (int(r[0]), int(r[2])) for r in rows}
        if not rows:
            return PathBounds(column, variant_path, None, (), t.live_file_count, 0, (), order)
        chosen = shredded_type if shredded_type is not None else types[0][0]
        if chosen not in by_type:
            raise NotFoundError(
                f"{column} {variant_path} is not shredded as {chosen} in any live file",
                details={"shredded_type": chosen},
            )
        path_id, total = by_type[chosen]
        st = ShreddedType.parse(chosen)
        files = _bounds(conn, path_id, st, order, limit)
        return PathBounds(column, variant_path, st, types, t.live_file_count, total, tuple(files), order)

    return _read(catalog, op)


def _bounds(conn: Connection, path_id: int, st: ShreddedType, order: str, limit: int) -> list[FileBound]:
    cols = (D.path, S.value_count, S.null_count, S.min_value, S.max_value, S.contains_nan)
    base = (
        select(*cols)
        .join(D, D.data_file_id == S.data_file_id)
        .where(S.path_id == path_id, S.end_snapshot.is_(None))
    )
    if order == "path":
        rows: Sequence[Any] = conn.execute(base.order_by(D.path).limit(limit)).all()
    else:
        key = getattr(S, f"min_{family(st)}")
        # Two probes so the keyed part walks the partial (path_id, min_*) index in order.
        rows = list(conn.execute(base.where(key.is_not(None)).order_by(key, S.data_file_id).limit(limit)))
        if len(rows) < limit:
            rows += conn.execute(
                base.where(key.is_(None)).order_by(D.path).limit(limit - len(rows))
            ).all()
    return [FileBound(r[0], int(r[1]), int(r[2]), r[3], r[4], r[5]) for r in rows]


__all__ = [
    "FileBound",
    "PathBounds",
    "SnapshotRow",
    "count_files",
    "find_file",
    "list_files_sorted",
    "path_bounds",
    "recent_snapshots",
]
