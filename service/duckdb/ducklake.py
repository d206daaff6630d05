"""``shredcat ducklake export``: a table of the catalog as a DuckLake catalog that DuckDB attaches.

DuckLake's own function for foreign files, ``ducklake_add_data_files``, refuses Spark-written
Variant files ("Expected VARIANT, found type STRUCT") although DuckDB reads them as VARIANT. So the
export lets the real extension (the pinned ``duckdb-extension-ducklake``) create the catalog, the
schema, the table with its field ids and its partitioning, in the layout the installed version
expects, and then writes the rows ``ducklake_add_data_files`` would have written for each file
itself, in one transaction, from the statistics shredcat already holds:

* one snapshot (``inserted_into_table``), a by-name column mapping (``map_by_name``: the files
  carry no DuckLake field ids; partition columns marked ``is_partition``, read from the paths);
* ``ducklake_data_file`` (absolute paths, row id ranges), ``ducklake_file_partition_value``;
* ``ducklake_file_column_stats``: plain columns as stored, partition columns from their values,
  each Variant column with its per-file JSON (``extra_stats``); ``ducklake_file_variant_stats``;
* ``ducklake_table_stats`` and ``ducklake_table_column_stats`` recomputed from the live files
  (bounds merged only when every file has one; the Variant columns' JSON from
  :func:`service.stats.merge.recompute`, a GEOMETRY column's box from
  :func:`service.stats.merge.merge_geometry_extra`).

A file DuckDB cannot read as the table describes it (a Variant column it reads as a STRUCT: a
writer that does not annotate the group; a plain column of another type than the table's, which
DuckLake would read cast) is left out, and the result says which and why. Struct
leaves (``a.b``) and types DuckDB has no name for are left out of the DuckLake table the same way.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.duckdb import engine
from service.errors import BadInputError, QueryError, ShredcatError

if TYPE_CHECKING:
    import duckdb

    from service.catalog import Catalog
    from service.stats.model import FileStats
    from service.values import ShreddedType

__all__ = ["ExportResult", "attach_sql", "export_table"]

_META = "shredcat_ducklake_meta"


@dataclass(frozen=True, slots=True)
class ExportResult:
    catalog_path: str
    data_path: str
    table: str
    files: int
    rows: int
    #: Files left out, with why.
    skipped_files: tuple[tuple[str, str], ...] = ()
    #: Columns left out of the DuckLake table, with why.
    skipped_columns: tuple[tuple[str, str], ...] = ()

    @property
    def attach(self) -> str:
        return attach_sql(self.catalog_path, self.data_path)


def attach_sql(catalog_path: str, data_path: str, alias: str = "lake") -> str:
    return f"ATTACH {_s('ducklake:' + catalog_path)} AS {alias} (DATA_PATH {_s(data_path)}, READ_ONLY)"


def _s(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _duckdb_type(ducklake_type: str) -> str | None:
    from service.errors import ShredcatError
    from service.pruning.render_duckdb import duckdb_type
    from service.values import ShreddedType

    if ducklake_type in ("variant", "geometry"):
        return ducklake_type.upper()
    try:
        return duckdb_type(ShreddedType.parse(ducklake_type))
    except ShredcatError:
        return None


@dataclass(frozen=True, slots=True)
class _Column:
    name: str
    ducklake_type: str
    duckdb_type: str
    kind: str  # variant | plain | partition


def _columns(catalog: Catalog, ns: str, table: str) -> tuple[list[_Column], list[tuple[str, str]]]:
    cols: list[_Column] = []
    skipped: list[tuple[str, str]] = []
    for c in catalog.get_table(ns, table).columns:
        d = _duckdb_type(c.type)
        if "." in c.name:
            skipped.append((c.name, "a struct leaf (only top-level columns are exported)"))
        elif d is None:
            skipped.append((c.name, f"DuckDB has no type for {c.type}"))
        else:
            cols.append(_Column(c.name, c.type, d, c.kind))
    return cols, skipped


def _readable(con: duckdb.DuckDBPyConnection, fs: FileStats, cols: list[_Column]) -> str | None:
    """Why DuckDB cannot read ``fs`` as the table describes it (None: it can)."""
    try:
        why = engine.not_variant(con, fs.path, [c.name for c in cols if c.kind == "variant"])
    except ShredcatError as e:
        return e.message
    if why is not None:
        return why
    from service.values import ShreddedType

    mine = {s.column: s.column_type for s in fs.columns}
    for c in cols:
        t = mine.get(c.name)
        if c.kind == "plain" and t is not None and not _held_by(t, ShreddedType.parse(c.ducklake_type)):
            # DuckLake casts the file's values to the column's type (10.5 reads as 11, a timestamp
            # as its date) and compares its bounds as that type ('9' < '10' fails as VARCHAR).
            return (
                f"column {c.name} is {t.name} in this file, {c.ducklake_type} in the table (the type of the "
                "first file that had it): DuckLake would read its values cast"
            )
    return None


def _held_by(t: ShreddedType, column: ShreddedType) -> bool:
    """Whether a column of type ``column`` holds every value of type ``t`` unchanged (the same
    type, or a narrower integer), bounds included."""
    from service.values import INTEGER_KINDS

    if t == column:
        return True
    return t.is_integer and column.is_integer and INTEGER_KINDS.index(t.kind) < INTEGER_KINDS.index(column.kind)


def _create(con: duckdb.DuckDBPyConnection, to: str, data_path: str, ns: str, table: str, cols: list[_Column]) -> None:
    """The catalog, schema and table, created by the extension itself (its version, its layout)."""
    with engine.translated("creating the DuckLake catalog"):
        con.execute(f"LOAD {_s(engine.ducklake_extension())}")
        con.execute(f"ATTACH {_s('ducklake:' + to)} AS dl (DATA_PATH {_s(data_path)})")
        # The extension makes schema ``main`` itself: a namespace of that name is that schema.
        con.execute(f"CREATE SCHEMA IF NOT EXISTS dl.{_q(ns)}")
        body = ", ".join(f"{_q(c.name)} {c.duckdb_type}" for c in cols)
        con.execute(f"CREATE TABLE dl.{_q(ns)}.{_q(table)} ({body})")
        parts = [c.name for c in cols if c.kind == "partition"]
        if parts:
            con.execute(f"ALTER TABLE dl.{_q(ns)}.{_q(table)} SET PARTITIONED BY ({', '.join(map(_q, parts))})")
        con.execute("DETACH dl")


def export_table(catalog: Catalog, namespace: str, table: str, to: str, *, data_path: str | None = None) -> ExportResult:
    """Write ``namespace.table``'s live files as a new DuckLake catalog at ``to`` (a DuckDB file;
    refused if it exists). ``data_path``: DuckLake's DATA_PATH (new files DuckLake would write go
    there; the exported files keep their absolute paths). See the module docstring."""
    to = os.path.abspath(to)
    if os.path.exists(to):
        raise BadInputError(f"{to} exists: the export writes a new DuckLake catalog", details={"field": "to"})
    if not os.path.isdir(os.path.dirname(to)):
        # Else DuckDB's own error names the temporary file the catalog is built in.
        raise BadInputError(f"{os.path.dirname(to)} is no directory: the export writes {to} into it", details={"field": "to"})
    data_path = os.path.abspath(data_path or os.path.splitext(to)[0] + ".files") + "/"
    from service.duckdb.verify import live_paths

    cols, skipped_cols = _columns(catalog, namespace, table)
    snap, paths = live_paths(catalog, namespace, table)
    # Built beside ``to`` and moved there complete: an export that fails or is interrupted leaves
    # no catalog whose table lacks its files (which a rerun would also refuse as existing).
    partial = f"{to}.{uuid.uuid4().hex[:12]}.partial"
    con = engine.connect()
    try:
        kept, skipped = [], []
        for f in paths:
            fs = catalog.file_stats(namespace, table, f, snapshot=snap)
            why = _readable(con, fs, cols)
            if why is None:
                kept.append(fs)
            else:
                skipped.append((f, why))
        _create(con, partial, data_path, namespace, table, cols)
        with engine.translated("writing DuckLake's metadata"):
            con.execute(f"ATTACH {_s(partial)} AS {_META}")
            con.execute("BEGIN")
            _write_files(con, namespace, table, cols, kept)
            con.execute("COMMIT")
            con.execute(f"DETACH {_META}")
        con.close()
        _publish(partial, to)
    finally:
        con.close()
        for leftover in (partial, partial + ".wal"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(leftover)
    return ExportResult(
        to, data_path, f"{namespace}.{table}", len(kept), sum(f.record_count for f in kept), tuple(skipped), tuple(skipped_cols)
    )


def _publish(partial: str, to: str) -> None:
    """``partial`` renamed to ``to``, unless ``to`` was created meanwhile (a hard link fails
    then, where a rename would replace it)."""
    exists = BadInputError(f"{to} exists: the export writes a new DuckLake catalog", details={"field": "to"})
    try:
        os.link(partial, to)
    except FileExistsError:
        raise exists from None
    except OSError:  # a file system without hard links: the same check, then a rename
        if os.path.exists(to):
            raise exists from None
        os.rename(partial, to)


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> tuple[Any, ...]:
    rows = con.execute(sql, params or []).fetchall()
    if len(rows) != 1:
        raise QueryError(f"unexpected DuckLake metadata: {sql} gave {len(rows)} rows")
    return tuple(rows[0])


def _bound(t: Any, v: Any) -> str | None:
    from service.values import format_bound

    return None if v is None else format_bound(t, v)


def _file_rows(
    fs: FileStats, file_id: int, table_id: int, cols: list[_Column], ids: dict[str, int], keys: dict[int, int]
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """``ducklake_file_column_stats``, ``ducklake_file_partition_value`` and
    ``ducklake_file_variant_stats`` rows of one file."""
    from service.stats.merge import recompute

    plain = {c.column: c for c in fs.columns}
    parts = {p.column: p for p in fs.partitions}
    stats: list[tuple[Any, ...]] = []
    values: list[tuple[Any, ...]] = []
    variant: list[tuple[Any, ...]] = []
    for c in cols:
        cid = ids[c.name]
        if c.kind == "plain" and c.name in plain:
            s = plain[c.name]
            t = s.column_type
            stats.append((file_id, table_id, cid, s.column_size_bytes, s.value_count, s.null_count,
                          _bound(t, s.min_value), _bound(t, s.max_value), s.contains_nan, s.extra_stats))  # fmt: skip
        elif c.kind == "partition" and c.name in parts:
            pv = parts[c.name]
            same = pv.value is not None and pv.value_type.name == c.ducklake_type
            bound = _bound(pv.value_type, pv.value) if same else None
            present = pv.value is not None
            stats.append((file_id, table_id, cid, 0, fs.record_count if present else 0, 0 if present else fs.record_count,
                          bound, bound, None, None))  # fmt: skip
            values.append((file_id, table_id, keys[cid], pv.raw))
        elif c.kind == "variant":
            mine = [p for p in fs.paths if p.column == c.name]
            doc = recompute([mine]).column_json([c.name])[c.name]
            stats.append((file_id, table_id, cid, None, None, None, None, None, None, doc))
            for p in mine:
                t = p.shredded_type
                variant.append((file_id, table_id, cid, p.variant_path, t.name, p.column_size_bytes, p.value_count,
                                p.null_count, _bound(t, p.min_value), _bound(t, p.max_value), p.contains_nan, p.extra_stats))  # fmt: skip
    return stats, values, variant


def _table_column_rows(
    files: list[FileStats], table_id: int, cols: list[_Column], ids: dict[str, int], stats: list[tuple[Any, ...]]
) -> list[tuple[Any, ...]]:
    """``ducklake_table_column_stats``: each column merged over every exported file (a bound only
    when every file has one; the Variant columns' JSON recomputed from the files' paths)."""
    from service.stats.merge import merge_geometry_extra, recompute
    from service.values import Kind, ShreddedType, parse_bound

    by_column: dict[int, list[tuple[Any, ...]]] = {}
    for row in stats:
        by_column.setdefault(row[2], []).append(row)
    out: list[tuple[Any, ...]] = []
    for c in cols:
        cid = ids[c.name]
        if c.kind == "variant":
            doc = recompute([[p for p in f.paths if p.column == c.name] for f in files]).column_json([c.name])[c.name]
            out.append((table_id, cid, None, None, None, None, doc))
            continue
        rows = by_column.get(cid, [])
        complete = len(rows) == len(files)
        t = ShreddedType.parse(c.ducklake_type)
        lows = [parse_bound(t, r[6]) for r in rows if r[6] is not None]
        highs = [parse_bound(t, r[7]) for r in rows if r[7] is not None]
        has_null = True if any(r[5] for r in rows) else (False if complete else None)
        nan = (any(bool(r[8]) for r in rows) if all(r[8] is not None for r in rows) else None) if t.is_float else None
        low = _bound(t, min(lows)) if complete and len(lows) == len(files) and files else None
        high = _bound(t, max(highs)) if complete and len(highs) == len(files) and files else None
        extra = merge_geometry_extra((r[4], r[9]) for r in rows) if t.kind is Kind.GEOMETRY and complete else None
        out.append((table_id, cid, has_null, nan, low, high, extra))
    return out


def _write_files(con: duckdb.DuckDBPyConnection, ns: str, table: str, cols: list[_Column], files: list[FileStats]) -> None:
    """One DuckLake snapshot adding ``files`` (see the module docstring)."""
    m = f"{_META}.main"
    snap, schema_version, next_catalog, next_file = _one(
        con, f"SELECT snapshot_id, schema_version, next_catalog_id, next_file_id FROM {m}.ducklake_snapshot ORDER BY snapshot_id DESC LIMIT 1"
    )
    (table_id,) = _one(
        con,
        f"SELECT t.table_id FROM {m}.ducklake_table t JOIN {m}.ducklake_schema s ON s.schema_id = t.schema_id "
        "WHERE s.schema_name = ? AND t.table_name = ? AND t.end_snapshot IS NULL",
        [ns, table],
    )
    ids = dict(con.execute(
        f"SELECT column_name, column_id FROM {m}.ducklake_column WHERE table_id = ? AND end_snapshot IS NULL AND parent_column IS NULL",
        [table_id],
    ).fetchall())  # fmt: skip
    partition = con.execute(f"SELECT partition_id FROM {m}.ducklake_partition_info WHERE table_id = ? AND end_snapshot IS NULL", [table_id]).fetchall()
    partition_id = partition[0][0] if partition else None
    keys = dict(con.execute(f"SELECT column_id, partition_key_index FROM {m}.ducklake_partition_column WHERE partition_id = ?", [partition_id]).fetchall())
    new = snap + 1
    con.execute(f"INSERT INTO {m}.ducklake_snapshot VALUES (?, now(), ?, ?, ?)", [new, schema_version, next_catalog, next_file + len(files)])
    con.execute(f"INSERT INTO {m}.ducklake_snapshot_changes VALUES (?, ?, 'shredcat', 'shredcat ducklake export', NULL)", [new, f"inserted_into_table:{table_id}"])
    (mapping,) = _one(con, f"SELECT coalesce(max(mapping_id) + 1, 0) FROM {m}.ducklake_column_mapping")
    con.execute(f"INSERT INTO {m}.ducklake_column_mapping VALUES (?, ?, 'map_by_name')", [mapping, table_id])
    con.executemany(
        f"INSERT INTO {m}.ducklake_name_mapping VALUES (?, ?, ?, ?, NULL, ?)",
        [[mapping, i, c.name, ids[c.name], c.kind == "partition"] for i, c in enumerate(cols)],
    )
    data, stats, values, variant = [], [], [], []
    row_id = 0
    for i, fs in enumerate(files):
        fid = next_file + i
        data.append([fid, table_id, new, None, None, fs.path, False, "parquet", fs.record_count, fs.file_size_bytes,
                     fs.footer_size, row_id, partition_id, None, mapping, None])  # fmt: skip
        row_id += fs.record_count
        s, v, vs = _file_rows(fs, fid, table_id, cols, ids, keys)
        stats += s
        values += v
        variant += vs
    for name, rows in (("data_file", data), ("file_column_stats", stats), ("file_partition_value", values), ("file_variant_stats", variant)):
        if rows:
            marks = ", ".join("?" * len(rows[0]))
            con.executemany(f"INSERT INTO {m}.ducklake_{name} VALUES ({marks})", [list(r) for r in rows])
    con.execute(f"DELETE FROM {m}.ducklake_table_stats WHERE table_id = ?", [table_id])
    con.execute(f"INSERT INTO {m}.ducklake_table_stats VALUES (?, ?, ?, ?)", [table_id, row_id, row_id, sum(f.file_size_bytes for f in files)])
    con.execute(f"DELETE FROM {m}.ducklake_table_column_stats WHERE table_id = ?", [table_id])
    rows = _table_column_rows(files, table_id, cols, ids, stats)
    if rows:
        con.executemany(f"INSERT INTO {m}.ducklake_table_column_stats VALUES (?, ?, ?, ?, ?, ?, ?)", [list(r) for r in rows])
