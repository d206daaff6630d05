"""The path dictionary (``ducklake_variant_path``) and the global stats. Each row carries the
per-path counters (:class:`~service.stats.merge.PathCounters`) of the live files and the largest
``max - min`` of any file (the planner's probe width); commits add to them, removals subtract (:func:`_removed_counters`, the counters
as SQL aggregates), and :func:`rebuild_global` rebuilds the global stats from them after a removal.
The global stats themselves are DuckLake's JSON per column (read by
:func:`service.catalog.repository.reads.read_global_json`, written by :func:`write_global_json`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, Connection, and_, bindparam, case, func, insert, or_, select, update

from service.catalog import models as m
from service.catalog.repository.common import _STATS_READ, VP, S, _path_stats, chunks
from service.catalog.repository.tables import TableRow
from service.stats.merge import COUNTER_NAMES, GlobalStats, PathAccumulator, PathCounters, complete_paths
from service.values import Bound, ShreddedType, family, format_bound, parse_bound

if TYPE_CHECKING:
    from service.catalog.encode import Width

#: The path dictionary's counter columns: ``live_<field>`` for each field of PathCounters.
COUNTER_COLUMNS = tuple(f"live_{n}" for n in COUNTER_NAMES)

_FLOAT64 = ShreddedType.parse("float64")
#: -0.0 and 0.0 as DuckLake renders them (float32 the same). The typed key column ``*_real`` holds
#: both as equal zeros (SQLite stores a whole REAL as an integer, dropping the sign), so in SQL the
#: stored text is the only way to tell them apart; Python checks the typed value
#: (:func:`service.values.is_negative_zero`).
_NEG_ZERO_TEXT = format_bound(_FLOAT64, -0.0)
_POS_ZERO_TEXT = format_bound(_FLOAT64, 0.0)


def _removed_counters(S: Any = S) -> list[Any]:
    """SQL aggregates giving the :class:`PathCounters` of a set of stats rows, in field order.

    A projection of :meth:`service.stats.merge.PathAccumulator.add_row` (same definitions, with a
    bound "keyless" when its row has no typed key), kept in SQL so that a removal reads one row per
    path instead of every removed stats row."""

    def flag(cond: Any) -> Any:
        return func.sum(case((cond, 1), else_=0))

    has = S.value_count > 0
    return [
        func.count(),
        func.sum(S.value_count),
        func.sum(S.null_count),
        func.sum(S.column_size_bytes),
        flag(S.contains_nan.is_(True)),
        flag(S.contains_nan.is_(None)),
        flag(and_(has, S.min_value.is_(None))),
        flag(and_(has, S.max_value.is_(None))),
        flag(
            and_(
                has, S.min_value.is_not(None), S.min_num.is_(None), S.min_real.is_(None), S.min_bin.is_(None)
            )
        ),
        flag(
            and_(
                has, S.max_value.is_not(None), S.max_num.is_(None), S.max_real.is_(None), S.max_bin.is_(None)
            )
        ),
        flag(and_(has, S.min_real == 0, S.min_value == _NEG_ZERO_TEXT)),
        flag(and_(has, S.max_real == 0, S.max_value == _POS_ZERO_TEXT)),
    ]


@dataclass(slots=True)
class _PathRow:
    path_id: int
    width: Width


def ensure_paths(
    conn: Connection, table_id: int, keys: set[tuple[int, str, str]]
) -> dict[tuple[int, str, str], _PathRow]:
    """Get or create the dictionary rows of ``(column_id, variant_path, shredded_type)``."""
    out: dict[tuple[int, str, str], _PathRow] = {}
    vps = sorted({k[1] for k in keys})
    for chunk in chunks(vps):
        rows = conn.execute(
            select(
                VP.path_id,
                VP.column_id,
                VP.variant_path,
                VP.shredded_type,
                VP.max_width_num,
                VP.max_width_real,
            ).where(VP.table_id == table_id, VP.variant_path.in_(chunk))
        )
        for pid, cid, vp, tname, wn, wr in rows:
            k = (int(cid), vp, tname)
            if k in keys:
                out[k] = _PathRow(
                    int(pid), (None if wn is None else int(wn), None if wr is None else float(wr))
                )
    missing = sorted(keys - out.keys())
    if missing:
        params = [
            {
                "table_id": table_id,
                "column_id": cid,
                "variant_path": vp,
                "shredded_type": tname,
                **dict.fromkeys(COUNTER_COLUMNS, 0),
                "had_values": False,
                "max_width_num": 0,
                "max_width_real": 0.0,
            }
            for cid, vp, tname in missing
        ]
        ids = (
            conn.execute(insert(VP).returning(VP.path_id, sort_by_parameter_order=True), params)
            .scalars()
            .all()
        )
        for k, pid in zip(missing, ids, strict=True):
            out[k] = _PathRow(int(pid), (0, 0.0))
    return out


#: Once a commit adds a value that is not NULL under a key, it had values (removals leave it).
_HAD_VALUES = or_(VP.had_values, bindparam("d_live_value_count") > 0)
_FIRST = bindparam("p_first", type_=BigInteger)
_END = bindparam("p_end", type_=BigInteger)
_ADD_COUNTERS = (
    update(VP)
    .where(VP.path_id == bindparam("p_path_id"))
    .values(
        {
            **{name: getattr(VP, name) + bindparam(f"d_{name}") for name in COUNTER_COLUMNS},
            "had_values": _HAD_VALUES,
            "max_width_num": bindparam("p_width_num", type_=VP.max_width_num.type),
            "max_width_real": bindparam("p_width_real", type_=VP.max_width_real.type),
            "files_ever": VP.files_ever + bindparam("d_live_file_count"),
            # The least: ``shredcat refresh`` adds rows beginning at their older files' snapshots.
            "first_snapshot": case((or_(VP.first_snapshot.is_(None), VP.first_snapshot > _FIRST), _FIRST), else_=VP.first_snapshot),
        }
    )
)
_REMOVE_COUNTERS = (
    update(VP)
    .where(VP.path_id == bindparam("p_path_id"))
    .values(
        {
            **{name: getattr(VP, name) - bindparam(f"d_{name}") for name in COUNTER_COLUMNS},
            "last_end_snapshot": case((or_(VP.last_end_snapshot.is_(None), VP.last_end_snapshot < _END), _END), else_=VP.last_end_snapshot),
        }
    )
)


def _counter_params(pid: int, c: PathCounters) -> dict[str, Any]:
    return {"p_path_id": pid, **{f"d_{name}": v for name, v in zip(COUNTER_COLUMNS, c.values(), strict=True)}}


def add_counters(
    conn: Connection, counters: Mapping[int, PathCounters], widths: Mapping[int, Width], firsts: Mapping[int, int]
) -> None:
    """Add the counters of new stats rows to their keys', with the keys' new widths and the least
    snapshot the rows begin at (``firsts``)."""
    params = []
    for pid, c in sorted(counters.items()):
        p = _counter_params(pid, c)
        p["p_width_num"], p["p_width_real"] = widths[pid]
        p["p_first"] = firsts[pid]
        params.append(p)
    if params:
        conn.execute(_ADD_COUNTERS, params)


def remove_counters(conn: Connection, counters: Mapping[int, PathCounters], snap: int) -> None:
    """Subtract the counters of stats rows ended at ``snap`` from their keys'."""
    params = [{**_counter_params(pid, c), "p_end": snap} for pid, c in sorted(counters.items())]
    if params:
        conn.execute(_REMOVE_COUNTERS, params)


# --- global stats -----------------------------------------------------------------------------


def write_global_json(
    conn: Connection, t: TableRow, new: Mapping[str, str | None], old: Mapping[str, str | None]
) -> None:
    for col, doc in new.items():
        if old.get(col) != doc:
            conn.execute(
                update(m.TableColumnStats)
                .where(
                    m.TableColumnStats.table_id == t.table_id, m.TableColumnStats.column_id == t.columns[col]
                )
                .values(extra_stats=doc)
            )


def _probe_bound(conn: Connection, path_id: int, t: ShreddedType, *, want_min: bool) -> Bound | None:
    """The extreme known bound among live rows with values, through the partial index."""
    fam = family(t)
    key = getattr(S, f"{'min' if want_min else 'max'}_{fam}")
    value = S.min_value if want_min else S.max_value
    s = conn.execute(
        select(value)
        .where(S.path_id == path_id, S.end_snapshot.is_(None), key.is_not(None), S.value_count > 0)
        .order_by(key.asc() if want_min else key.desc())
        .limit(1)
    ).scalar()
    return None if s is None else parse_bound(t, s)


def _scan_path(conn: Connection, names: Mapping[int, str], path_id: int, t: ShreddedType) -> PathAccumulator:
    """The merge of a path's live rows, read one by one: for bounds without a typed key, which the
    index cannot order."""
    stmt = select(*_STATS_READ).where(S.path_id == path_id, S.end_snapshot.is_(None))
    acc: PathAccumulator | None = None
    for r in conn.execute(stmt.execution_options(yield_per=10_000)):
        ps = _path_stats(names, r)
        if acc is None:
            acc = PathAccumulator(ps.column, ps.variant_path, t)
        acc.add(ps)
    assert acc is not None, "a path with keyless bounds has live rows"
    return acc


def rebuild_global(conn: Connection, t: TableRow, live_file_count: int) -> GlobalStats:
    """Global stats of the live files from the dictionary counters plus one index probe per kept
    bound: O(paths), not O(stats rows). Used after removals (where an incremental merge is
    impossible)."""
    if live_file_count == 0:
        return GlobalStats(0, {})
    names = t.column_names
    # Only the paths every live file has (complete_paths keeps no other).
    rows = conn.execute(
        select(
            VP.path_id, VP.column_id, VP.variant_path, VP.shredded_type, *(getattr(VP, c) for c in COUNTER_COLUMNS)
        ).where(
            VP.table_id == t.table_id, VP.live_file_count == live_file_count, VP.variant_path != m.COLUMN_KEY_PATH
        )
    ).all()
    paths: list[PathAccumulator] = []
    for r in rows:
        pid, cid, vp, tname = int(r[0]), int(r[1]), r[2], r[3]
        if cid not in names:
            continue
        c = PathCounters(*(int(v) for v in r[4:]))
        st = ShreddedType.parse(tname)
        if c.min_keyless_files or c.max_keyless_files:
            paths.append(_scan_path(conn, names, pid, st))
            continue
        lo = _probe_bound(conn, pid, st, want_min=True) if c.min_is_known else None
        hi = _probe_bound(conn, pid, st, want_min=False) if c.max_is_known else None
        paths.append(PathAccumulator.restore(names[cid], vp, st, c, lo, hi))
    return complete_paths(live_file_count, paths)
