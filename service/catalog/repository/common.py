"""What every module of the repository shares: the table aliases ``D``, ``S``, ``VP``, ``CS``, ``PV``, IN-list and
batch chunking (:data:`CHUNK`, :func:`chunks`), :func:`aware` for SQLite's naive timestamps, the
"live at a snapshot" filter, the decoding of a stats row into a PathStats, and :func:`keyset_page`,
the one keyset pager every page of files and snapshots goes through.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import ColumnElement, Connection, Select, and_, any_, bindparam, or_

from service.catalog import models as m
from service.stats.model import ColumnStats, PathStats
from service.values import ShreddedType, parse_bound

#: Size of IN-lists and of row batches sent at once.
CHUNK = 500

D = m.DataFile
S = m.FileVariantStats
VP = m.VariantPath
CS = m.FileColumnStats
PV = m.FilePartitionValue


def in_values(conn: Connection, col: Any, values: Sequence[Any]) -> Any:
    """``col IN values``: one array parameter on PostgreSQL (``= ANY``), a plain IN-list on SQLite.
    (Hundreds of expanded parameters cost more Python to render and send than the probes cost.)"""
    if conn.dialect.name == "postgresql":
        # Imported here: a command reading a SQLite catalog never loads the PostgreSQL dialect.
        from sqlalchemy.dialects.postgresql import ARRAY

        return col == any_(bindparam(None, list(values), type_=ARRAY(col.type)))
    return col.in_(values)


def utcnow() -> datetime:
    return datetime.now(UTC)


def chunks(seq: Sequence[Any], n: int = CHUNK) -> Iterator[Sequence[Any]]:
    for i in range(0, len(seq), n):
        yield seq[i : i + n]


def aware(ts: datetime | None) -> datetime | None:
    """SQLite returns naive datetimes (stored in UTC)."""
    if ts is not None and ts.tzinfo is None:
        return ts.replace(tzinfo=UTC)
    return ts


def _live_at(model: Any, snapshot: int | None) -> Any:
    if snapshot is None:
        return model.end_snapshot.is_(None)
    return and_(
        model.begin_snapshot <= snapshot, or_(model.end_snapshot.is_(None), model.end_snapshot > snapshot)
    )


def _path_stats(names: Mapping[int, str], r: Any) -> PathStats:
    st = ShreddedType.parse(r.shredded_type)
    return PathStats(
        column=names.get(int(r.column_id), f"#{r.column_id}"),
        variant_path=r.variant_path,
        shredded_type=st,
        column_size_bytes=int(r.column_size_bytes),
        value_count=int(r.value_count),
        null_count=int(r.null_count),
        min_value=None if r.min_value is None else parse_bound(st, r.min_value),
        max_value=None if r.max_value is None else parse_bound(st, r.max_value),
        contains_nan=r.contains_nan,
        extra_stats=r.extra_stats,
    )


def _column_stats(names: Mapping[int, str], r: Any) -> ColumnStats:
    st = ShreddedType.parse(r.column_type)
    return ColumnStats(
        column=names.get(int(r.column_id), f"#{r.column_id}"),
        column_type=st,
        column_size_bytes=int(r.column_size_bytes),
        value_count=int(r.value_count),
        null_count=int(r.null_count),
        min_value=None if r.min_value is None else parse_bound(st, r.min_value),
        max_value=None if r.max_value is None else parse_bound(st, r.max_value),
        contains_nan=r.contains_nan,
        extra_stats=r.extra_stats,
    )


_COLUMN_STATS_READ = (
    CS.data_file_id,
    CS.column_id,
    CS.column_type,
    CS.column_size_bytes,
    CS.value_count,
    CS.null_count,
    CS.min_value,
    CS.max_value,
    CS.contains_nan,
    CS.extra_stats,
)

_STATS_READ = (
    S.data_file_id,
    S.column_id,
    S.variant_path,
    S.shredded_type,
    S.column_size_bytes,
    S.value_count,
    S.null_count,
    S.min_value,
    S.max_value,
    S.contains_nan,
    S.extra_stats,
)


def keyset_page(
    stmt: Select[Any],
    keys: Sequence[ColumnElement[Any]],
    after: Sequence[Any] | None,
    *,
    limit: int,
    descending: bool = False,
) -> Select[Any]:
    """``stmt`` ordered by ``keys`` (all ascending, or all descending), from the first row past
    the one whose keys are ``after`` (the last row of the previous page; None: from the start), at
    most ``limit`` rows. Later keys break ties of earlier ones, so the key tuple must be unique."""
    if after is not None:
        stmt = stmt.where(_past(keys, after, descending))
    return stmt.order_by(*(k.desc() if descending else k for k in keys)).limit(limit)


def _past(keys: Sequence[ColumnElement[Any]], after: Sequence[Any], descending: bool) -> ColumnElement[bool]:
    # (k1, k2) > (v1, v2) as k1 > v1 OR (k1 = v1 AND k2 > v2): row values are not portable, and
    # the leading plain comparison keeps an index on k1 usable.
    (key, *more_keys), (value, *more_values) = keys, after
    beyond = key < value if descending else key > value
    if not more_keys:
        return beyond
    return or_(beyond, and_(key == value, _past(more_keys, more_values, descending)))
