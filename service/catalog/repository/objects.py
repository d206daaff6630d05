"""Fully shredded objects of each file (:class:`~service.stats.model.ShreddedObject`): written with
the files, read back with a file's stats, and the shapes the planner asks about (issue 34).

A shape is one (column, object path, field set) of a table (``shredcat_object_shape``); a file's
rows in ``shredcat_file_object`` name its shapes. A file without a row for an object path proves
nothing there (files committed before migration 0010, objects the footer could not prove): it is
never treated as lacking a field.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, func, insert, select, update

from service.catalog import models as m
from service.catalog.repository.common import chunks, in_values
from service.catalog.repository.tables import TableRow
from service.stats.model import FileStats, ShreddedObject
from service.values.text import unstorable_name

SH = m.ObjectShape
FO = m.FileObject

#: (column_id, object path, fields as stored).
_ShapeKey = tuple[int, str, str]


def _encoded(fields: Sequence[str]) -> str:
    return json.dumps(list(fields), ensure_ascii=False)


def _storable(o: ShreddedObject) -> bool:
    # A record is all its fields or nothing: one left out would read as absent.
    return "\x00" not in o.variant_path and not any(unstorable_name(f) for f in o.fields)


def _ensure_shapes(conn: Connection, table_id: int, keys: set[_ShapeKey]) -> dict[_ShapeKey, int]:
    """Get or create the shapes (commits hold the table's writer lock: no race on a new shape)."""
    out: dict[_ShapeKey, int] = {}
    paths = sorted({k[1] for k in keys})
    for chunk in chunks(paths):
        rows = conn.execute(
            select(SH.shape_id, SH.column_id, SH.object_path, SH.fields).where(
                SH.table_id == table_id, SH.object_path.in_(chunk)
            )
        )
        for sid, cid, path, fields in rows:
            out[(int(cid), path, fields)] = int(sid)
    missing = sorted(keys - out.keys())
    if missing:
        params = [
            {
                "table_id": table_id,
                "column_id": cid,
                "object_path": path,
                "fields": fields,
                "fields_digest": hashlib.sha256(fields.encode()).hexdigest(),
                "live_file_count": 0,
            }
            for cid, path, fields in missing
        ]
        ids = conn.execute(insert(SH).returning(SH.shape_id, sort_by_parameter_order=True), params).scalars()
        out.update(zip(missing, (int(i) for i in ids), strict=True))
    return out


def _one_per_path(keys: list[_ShapeKey]) -> list[_ShapeKey]:
    """Each object path once: an object a file was sent twice with different fields (a client's
    body; extraction gives one) proves nothing, and a path's shapes must count each file once."""
    by_path: dict[tuple[int, str], set[str]] = {}
    for cid, path, fields in keys:
        by_path.setdefault((cid, path), set()).add(fields)
    return list(dict.fromkeys(k for k in keys if len(by_path[(k[0], k[1])]) == 1))


def add_objects(conn: Connection, t: TableRow, ids: Sequence[int], files: Sequence[FileStats]) -> None:
    """Record the proven objects of the files just inserted as ``ids``."""
    per_file: list[list[_ShapeKey]] = []
    for f in files:
        keys = [
            (t.columns[o.column], o.variant_path, _encoded(o.fields))
            for o in f.objects
            if o.column in t.columns and _storable(o)
        ]
        per_file.append(_one_per_path(keys))
    wanted = {k for keys in per_file for k in keys}
    if not wanted:
        return
    shape_of = _ensure_shapes(conn, t.table_id, wanted)
    rows = [
        {"data_file_id": fid, "shape_id": shape_of[k], "ordinal": i}
        for fid, keys in zip(ids, per_file, strict=True)
        for i, k in enumerate(keys)
    ]
    for chunk in chunks(rows, 5_000):
        conn.execute(insert(FO), list(chunk))
    _add_counts(conn, Counter(int(r["shape_id"]) for r in rows), 1)


def _add_counts(conn: Connection, counts: Counter[int], sign: int) -> None:
    if counts:
        stmt = (
            update(SH)
            .where(SH.shape_id == bindparam("sid"))
            .values(live_file_count=SH.live_file_count + bindparam("delta"))
        )
        conn.execute(stmt, [{"sid": sid, "delta": sign * n} for sid, n in sorted(counts.items())])


def end_objects(conn: Connection, ids: Sequence[int]) -> None:
    """The files ``ids`` end: their shapes' live counts drop (their rows stay, facts of the files)."""
    counts: Counter[int] = Counter()
    for chunk in chunks(list(ids)):
        rows = conn.execute(
            select(FO.shape_id, func.count())
            .where(in_values(conn, FO.data_file_id, chunk))
            .group_by(FO.shape_id)
        )
        for sid, n in rows:
            counts[int(sid)] += int(n)
    _add_counts(conn, counts, -1)


def objects_for_files(
    conn: Connection, t: TableRow, ids: Iterable[int]
) -> dict[int, dict[tuple[str, str], frozenset[str]]]:
    """Per data file: its proven objects as :func:`service.pruning.absent.objects_by_path` indexes
    them (what the evaluator reads); files without any are left out."""
    names = t.column_names
    out: dict[int, dict[tuple[str, str], frozenset[str]]] = {}
    for chunk in chunks(sorted(set(ids))):
        rows = conn.execute(
            select(FO.data_file_id, SH.column_id, SH.object_path, SH.fields)
            .join(SH, SH.shape_id == FO.shape_id)
            .where(in_values(conn, FO.data_file_id, chunk))
        )
        for fid, cid, path, fields in rows:
            name = names.get(int(cid))
            if name is not None:
                out.setdefault(int(fid), {})[(name, path)] = frozenset(json.loads(fields))
    return out


def file_objects(conn: Connection, t: TableRow, data_file_id: int) -> tuple[ShreddedObject, ...]:
    """One file's proven objects, as extraction gave them (in its order)."""
    names = t.column_names
    rows = conn.execute(
        select(SH.column_id, SH.object_path, SH.fields)
        .join(FO, FO.shape_id == SH.shape_id)
        .where(FO.data_file_id == data_file_id)
        .order_by(FO.ordinal)
    )
    return tuple(
        ShreddedObject(names[int(cid)], path, tuple(json.loads(fields)))
        for cid, path, fields in rows
        if int(cid) in names
    )


@dataclass(frozen=True, slots=True)
class StepShapes:
    """The shapes of one step ``(object path, key)`` of a leaf's path."""

    path: str
    #: Shapes whose object lacks the key (it is absent from every row of their files).
    lacking: tuple[int, ...]
    #: Shapes whose object has it.
    having: tuple[int, ...]
    #: Live files with any shape at the path, and with one that has the key.
    live_files: int
    having_files: int


def step_shapes(
    conn: Connection, table_id: int, column_id: int, steps: Sequence[tuple[str, str]]
) -> list[StepShapes]:
    """The shapes of ``column_id`` at each step's object path (``steps``: ``(object path, key)``
    pairs, :func:`service.pruning.absent.key_steps`), split by whether they have the key."""
    want = {path: key for path, key in steps if "\x00" not in path}  # PostgreSQL cannot compare NUL
    if not want:
        return []
    found: dict[str, tuple[list[int], list[int], list[int], list[int]]] = {p: ([], [], [], []) for p in want}
    rows = conn.execute(
        select(SH.shape_id, SH.object_path, SH.fields, SH.live_file_count).where(
            SH.table_id == table_id, SH.column_id == column_id, SH.object_path.in_(list(want))
        )
    )
    for sid, path, fields, live in rows:
        lacking, having, counts, having_counts = found[path]
        has = want[path] in json.loads(fields)
        (having if has else lacking).append(int(sid))
        counts.append(int(live))
        if has:
            having_counts.append(int(live))
    return [
        StepShapes(p, tuple(sorted(lk)), tuple(sorted(hv)), sum(n), sum(hn))
        for p, (lk, hv, n, hn) in found.items()
    ]

