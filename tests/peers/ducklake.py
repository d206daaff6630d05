"""Peer harness: the real DuckLake extension as the reference for shredcat's variant stats.

DuckLake 1.5.5 (PR duckdb/ducklake#750) writes one ``ducklake_file_variant_stats`` row per fully
shredded Variant path of each data file, and a JSON summary in
``ducklake_table_column_stats.extra_stats``. The test-suite writes a table through the real
extension, then compares what shredcat extracts from the very same Parquet files with what
DuckLake stored. See ``docs/ducklake-format.md`` for the formats this harness returns.

The extension is loaded from the ``duckdb-extension-ducklake`` wheel in site-packages: no
INSTALL and no network, so the tests run offline.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

# The extension binary is built for one DuckDB version only: loading it into another fails.
DUCKLAKE_VERSION = "v1.5.5"

# Alias of the attached catalog; DuckLake exposes its metadata tables as `__ducklake_metadata_<alias>`.
_ALIAS = "dl"
_META = f"__ducklake_metadata_{_ALIAS}"

# ducklake_file_variant_stats columns returned per row, in the table's own order.
VARIANT_STATS_KEYS: tuple[str, ...] = (
    "variant_path",
    "shredded_type",
    "column_size_bytes",
    "value_count",
    "null_count",
    "min_value",
    "max_value",
    "contains_nan",
    "extra_stats",
)


@dataclass(frozen=True)
class DuckLakeFileStats:
    """One live data file and the variant stats DuckLake stored for it."""

    path: str
    """Absolute local path of the Parquet data file."""
    record_count: int
    rows: list[dict[str, Any]]
    """``ducklake_file_variant_stats`` rows of this file, values exactly as stored (strings for
    min/max, None for NULL). Keys: ``column_name`` (top-level column name) and
    :data:`VARIANT_STATS_KEYS`; plus ``column_path`` (dotted names from the top-level column to
    the Variant column, equal to ``column_name`` unless the Variant sits inside a STRUCT).
    Sorted by (column_path, variant_path) so that comparisons do not depend on insertion order."""
    data_file_id: int = -1
    column_extra_stats: dict[str, Any] = field(default_factory=dict)
    """column_path -> parsed ``ducklake_file_column_stats.extra_stats`` of this file for Variant
    columns (the per-file JSON in the same shape as the global one; None when NULL)."""


@dataclass(frozen=True)
class DuckLakeTable:
    """What DuckLake's catalog holds for one table after the inserts."""

    files: list[DuckLakeFileStats]
    """Live data files (end_snapshot IS NULL), ordered by data_file_id, i.e. insertion order."""
    global_stats: dict[str, object | None]
    """Variant column path -> parsed JSON of ``ducklake_table_column_stats.extra_stats`` (None when
    NULL). Keyed by ``column_path``: the top-level name unless the Variant is nested."""
    catalog_path: str = ""
    data_path: str = ""


def ducklake_extension_path() -> Path | None:
    """Path of the ducklake extension binary shipped in the wheel, or None if it is not installed."""
    try:
        import duckdb_extension_ducklake  # type: ignore[import-untyped]
    except ImportError:
        return None
    path = (
        Path(os.path.dirname(duckdb_extension_ducklake.__file__))
        / "extensions"
        / DUCKLAKE_VERSION
        / "ducklake.duckdb_extension"
    )
    return path if path.is_file() else None


@functools.cache
def ducklake_available() -> bool:
    """True when duckdb and the matching ducklake extension load here (checked once per process).

    A real LOAD is tried because a version mismatch between duckdb and the wheel only shows then.
    """
    ext = ducklake_extension_path()
    if ext is None:
        return False
    try:
        import duckdb

        con = duckdb.connect()
        try:
            con.execute(f"LOAD '{_sql_str(str(ext))}'")
        finally:
            con.close()
    except Exception:
        return False
    return True


def unavailable_reason() -> str:
    """A human-readable reason for skipping, for pytest.skip()."""
    try:
        import duckdb
    except ImportError:
        return "duckdb is not installed (pip install duckdb==1.5.5)"
    if ducklake_extension_path() is None:
        return (
            f"duckdb-extension-ducklake with extensions/{DUCKLAKE_VERSION}/ducklake.duckdb_extension "
            "is not installed (pip install duckdb-extension-ducklake==1.5.5)"
        )
    return f"the ducklake extension {DUCKLAKE_VERSION} does not load into duckdb {duckdb.__version__}"


@contextmanager
def ducklake_connection(
    workdir: Path,
    *,
    ducklake_options: Mapping[str, object] | None = None,
    pre_sql: Sequence[str] = (),
    catalog_name: str = "cat.ducklake",
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A fresh in-memory DuckDB connection with a DuckLake catalog attached as ``dl``.

    The catalog file and ``data/`` live in ``workdir``. ``DATA_INLINING_ROW_LIMIT 0`` makes every
    insert write a Parquet file (otherwise small inserts stay in the catalog and no variant stats
    are written). ``ducklake_options`` are persisted with ``CALL dl.set_option(name, value)``
    (1.5.5 knows e.g. parquet_row_group_size, parquet_row_group_size_bytes ('64KB'),
    target_file_size ('1MB'), parquet_compression, parquet_version, per_thread_output).
    Row groups never go below 2048 rows (DuckDB's vector size), and parquet_row_group_size_bytes
    needs ``SET preserve_insertion_order = false`` or the insert fails. ``pre_sql`` runs after
    the options (e.g. ``SET threads = 1`` for a deterministic row group layout).
    """
    import duckdb

    ext = ducklake_extension_path()
    if ext is None:
        raise RuntimeError(unavailable_reason())
    workdir = Path(workdir).resolve()
    data_dir = workdir / "data"
    data_dir.mkdir(parents=True, exist_ok=True)
    catalog = workdir / catalog_name
    con = duckdb.connect()
    try:
        con.execute(f"LOAD '{_sql_str(str(ext))}'")
        con.execute(
            f"ATTACH 'ducklake:{_sql_str(str(catalog))}' AS {_ALIAS} "
            f"(DATA_PATH '{_sql_str(str(data_dir))}/', DATA_INLINING_ROW_LIMIT 0)"
        )
        for name, value in (ducklake_options or {}).items():
            con.execute(f"CALL {_ALIAS}.set_option(?, ?)", [name, _option_value(value)])
        for sql in pre_sql:
            con.execute(sql)
        yield con
    finally:
        con.close()


def write_ducklake_table(
    workdir: Path,
    create_sql: str,
    insert_sqls: Sequence[str],
    *,
    table: str = "t",
    ducklake_options: Mapping[str, object] | None = None,
    pre_sql: Sequence[str] = (),
) -> DuckLakeTable:
    """Create ``dl.<table> <create_sql>`` in a fresh catalog in ``workdir``, run
    ``INSERT INTO dl.<table> <insert_sql>`` for each insert (one commit, normally one data file,
    each) and return the stats DuckLake stored.

    ``workdir`` must not already hold a catalog: stats from an earlier call would mix in.
    Several threads may split one large insert into several files; pass
    ``pre_sql=["SET threads = 1"]`` to avoid that.
    """
    workdir = Path(workdir).resolve()
    if (workdir / "cat.ducklake").exists():
        raise FileExistsError(f"{workdir} already holds a DuckLake catalog; use a fresh directory")
    with ducklake_connection(workdir, ducklake_options=ducklake_options, pre_sql=pre_sql) as con:
        con.execute(f"CREATE TABLE {_ALIAS}.{table} {create_sql}")
        for insert_sql in insert_sqls:
            con.execute(f"INSERT INTO {_ALIAS}.{table} {insert_sql}")
        return read_ducklake_table(con, table)


def read_ducklake_table(con: duckdb.DuckDBPyConnection, table: str = "t") -> DuckLakeTable:
    """Read the catalog tables of ``dl.<table>`` (main schema) on a connection from
    :func:`ducklake_connection`. Useful after deletes, compaction or several sessions."""
    data_path = _fetch_one(con, f"SELECT value FROM {_META}.ducklake_metadata WHERE key = 'data_path'")
    data_root = Path(str(data_path))
    table_id, table_dir = _table_dir(con, table, data_root)
    column_paths = _column_paths(con, table_id)

    file_rows = _dicts(
        con,
        f"SELECT data_file_id, path, path_is_relative, record_count FROM {_META}.ducklake_data_file "
        "WHERE table_id = ? AND end_snapshot IS NULL ORDER BY data_file_id",
        [table_id],
    )
    stats_rows = _dicts(
        con,
        f"SELECT data_file_id, column_id, {', '.join(VARIANT_STATS_KEYS)} "
        f"FROM {_META}.ducklake_file_variant_stats WHERE table_id = ?",
        [table_id],
    )
    per_file: dict[int, list[dict[str, Any]]] = {}
    for r in stats_rows:
        path = column_paths[r["column_id"]]
        row = {"column_name": path[0], "column_path": ".".join(path)}
        row.update({k: r[k] for k in VARIANT_STATS_KEYS})
        per_file.setdefault(r["data_file_id"], []).append(row)

    variant_ids = {cid for cid, _ in _variant_columns(con, table_id)}
    file_col_stats = _dicts(
        con,
        f"SELECT data_file_id, column_id, extra_stats FROM {_META}.ducklake_file_column_stats WHERE table_id = ?",
        [table_id],
    )
    per_file_extra: dict[int, dict[str, Any]] = {}
    for r in file_col_stats:
        if r["column_id"] in variant_ids:
            per_file_extra.setdefault(r["data_file_id"], {})[".".join(column_paths[r["column_id"]])] = (
                _parse_json(r["extra_stats"])
            )

    files = []
    for f in file_rows:
        p = Path(f["path"])
        # Relative data file paths are relative to the table's directory, which is itself
        # relative to the schema's directory and DATA_PATH.
        abs_path = table_dir / p if f["path_is_relative"] else p
        rows = sorted(
            per_file.get(f["data_file_id"], []), key=lambda r: (r["column_path"], r["variant_path"])
        )
        files.append(
            DuckLakeFileStats(
                path=str(abs_path),
                record_count=int(f["record_count"]),
                rows=rows,
                data_file_id=int(f["data_file_id"]),
                column_extra_stats=per_file_extra.get(f["data_file_id"], {}),
            )
        )

    global_stats: dict[str, object | None] = {}
    for column_id, _ in _variant_columns(con, table_id):
        extra = _fetch_one(
            con,
            f"SELECT extra_stats FROM {_META}.ducklake_table_column_stats WHERE table_id = ? AND column_id = ?",
            [table_id, column_id],
        )
        global_stats[".".join(column_paths[column_id])] = _parse_json(extra)

    catalog = _fetch_one(con, "SELECT path FROM duckdb_databases() WHERE database_name = ?", [_ALIAS])
    return DuckLakeTable(
        files=files, global_stats=global_stats, catalog_path=str(catalog), data_path=str(data_root)
    )


def _table_dir(con: duckdb.DuckDBPyConnection, table: str, data_root: Path) -> tuple[int, Path]:
    row = _dicts(
        con,
        f"SELECT t.table_id, t.path AS tpath, t.path_is_relative AS trel, s.path AS spath, "
        f"s.path_is_relative AS srel FROM {_META}.ducklake_table t JOIN {_META}.ducklake_schema s "
        "USING (schema_id) WHERE t.table_name = ? AND s.schema_name = 'main' "
        "AND t.end_snapshot IS NULL AND s.end_snapshot IS NULL",
        [table],
    )
    if len(row) != 1:
        raise LookupError(f"table main.{table} not found in the DuckLake catalog")
    r = row[0]
    schema_dir = data_root / r["spath"] if r["srel"] else Path(r["spath"])
    table_dir = schema_dir / r["tpath"] if r["trel"] else Path(r["tpath"])
    return int(r["table_id"]), table_dir


def _column_paths(con: duckdb.DuckDBPyConnection, table_id: int) -> dict[int, tuple[str, ...]]:
    """column_id -> names from the top-level column down (nested STRUCT fields have a parent)."""
    cols = _dicts(
        con,
        f"SELECT column_id, column_name, parent_column FROM {_META}.ducklake_column "
        "WHERE table_id = ? AND end_snapshot IS NULL",
        [table_id],
    )
    by_id = {c["column_id"]: c for c in cols}

    def path(cid: int) -> tuple[str, ...]:
        c = by_id[cid]
        parent = c["parent_column"]
        return (*path(parent), c["column_name"]) if parent is not None else (c["column_name"],)

    return {cid: path(cid) for cid in by_id}


def _variant_columns(con: duckdb.DuckDBPyConnection, table_id: int) -> list[tuple[int, str]]:
    return [
        (int(r["column_id"]), str(r["column_name"]))
        for r in _dicts(
            con,
            f"SELECT column_id, column_name FROM {_META}.ducklake_column WHERE table_id = ? "
            "AND end_snapshot IS NULL AND lower(column_type) = 'variant' ORDER BY column_id",
            [table_id],
        )
    ]


def _dicts(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> list[dict[str, Any]]:
    cur = con.execute(sql, list(params))
    names = [d[0] for d in cur.description or []]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _fetch_one(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[object] = ()) -> object | None:
    row = con.execute(sql, list(params)).fetchone()
    return None if row is None else row[0]


def _parse_json(text: object | None) -> object | None:
    return None if text is None else json.loads(str(text))


def _option_value(value: object) -> str:
    # set_option takes text; booleans must read as SQL booleans, not Python's "True".
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _sql_str(text: str) -> str:
    return text.replace("'", "''")


# ducklake_file_column_stats columns compared with shredcat's plain-column rows.
COLUMN_STATS_KEYS: tuple[str, ...] = (
    "column_size_bytes",
    "value_count",
    "null_count",
    "min_value",
    "max_value",
    "contains_nan",
    "extra_stats",
)


def read_file_column_stats(con: duckdb.DuckDBPyConnection, table: str = "t") -> dict[str, dict[str, dict[str, Any]]]:
    """``ducklake_file_column_stats`` of the live files of ``dl.<table>``: absolute file path ->
    dotted column path (``a``, ``s.b.c``) -> the row's :data:`COLUMN_STATS_KEYS`, as stored.
    Rows of columns inside lists and maps are left out (their dotted paths would name the
    LIST/MAP's own ``element``/``key``/``value`` children), and so are Variant columns."""
    data_root = Path(str(_fetch_one(con, f"SELECT value FROM {_META}.ducklake_metadata WHERE key = 'data_path'")))
    table_id, table_dir = _table_dir(con, table, data_root)
    column_paths = _column_paths(con, table_id)
    types = {
        int(r["column_id"]): (str(r["column_type"]).lower(), r["parent_column"])
        for r in _dicts(
            con,
            f"SELECT column_id, column_type, parent_column FROM {_META}.ducklake_column "
            "WHERE table_id = ? AND end_snapshot IS NULL",
            [table_id],
        )
    }

    def inside_nested(cid: int) -> bool:
        t, parent = types[cid]
        if t == "variant":
            return True
        while parent is not None:
            pt, parent2 = types[int(parent)]
            if pt in ("list", "map", "variant"):
                return True
            parent = parent2
        return False

    files = {
        int(f["data_file_id"]): str(table_dir / f["path"] if f["path_is_relative"] else Path(f["path"]))
        for f in _dicts(
            con,
            f"SELECT data_file_id, path, path_is_relative FROM {_META}.ducklake_data_file "
            "WHERE table_id = ? AND end_snapshot IS NULL",
            [table_id],
        )
    }
    out: dict[str, dict[str, dict[str, Any]]] = {p: {} for p in files.values()}
    for r in _dicts(
        con,
        f"SELECT data_file_id, column_id, {', '.join(COLUMN_STATS_KEYS)} FROM {_META}.ducklake_file_column_stats "
        "WHERE table_id = ?",
        [table_id],
    ):
        cid = int(r["column_id"])
        if r["data_file_id"] not in files or inside_nested(cid):
            continue
        out[files[r["data_file_id"]]][".".join(column_paths[cid])] = {k: r[k] for k in COLUMN_STATS_KEYS}
    return out
