"""The one module that calls DuckDB: connections, the DuckLake extension, running SQL, and the
translation of DuckDB's exceptions into :mod:`service.errors`.

``duckdb`` is imported inside the functions: the CLI and the service start without it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from service.errors import FileAccessError, QueryError, ShredcatError

if TYPE_CHECKING:
    import duckdb

__all__ = [
    "connect", "describe", "ducklake_extension", "exact_glob", "fetch", "not_variant", "not_variant_files", "parquet_source", "relation",
    "translated", "usable",
]  # fmt: skip

#: The DuckDB version the pinned DuckLake extension is built for (pyproject pins both).
DUCKDB_VERSION = "1.5.5"


@contextmanager
def translated(what: str) -> Iterator[None]:
    """DuckDB's exceptions as :class:`~service.errors.QueryError` (a file it cannot open as
    :class:`~service.errors.FileAccessError`), with ``what`` saying which step failed."""
    import duckdb

    try:
        yield
    except ShredcatError:
        raise
    except duckdb.IOException as e:
        raise FileAccessError(f"{what}: {_first_line(e)}", details={"duckdb": type(e).__name__}) from None
    except duckdb.Error as e:
        raise QueryError(f"{what}: {_first_line(e)}", details={"duckdb": type(e).__name__}) from None
    except RuntimeError as e:
        # Ctrl-C during a statement: DuckDB stops it and raises "Query interrupted" from the
        # KeyboardInterrupt, which callers (the CLI's exit 130) expect as such.
        if isinstance(e.__cause__, KeyboardInterrupt):
            raise KeyboardInterrupt from None
        raise


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def connect(database: str = ":memory:", *, utc: bool = True) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in memory by default); ``utc``: its ``TimeZone`` is UTC, as Spark's
    session in the service is (the rendered SQL does not depend on it; printed timestamps do)."""
    import duckdb

    with translated("opening DuckDB"):
        con = duckdb.connect(database)
        if utc:
            con.execute("SET TimeZone = 'UTC'")
    return con


def _sql_string(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def parquet_source(paths: Sequence[str], hive_types: Sequence[tuple[str, str]] = (), *, hive: bool = True) -> str:
    """``read_parquet([...], hive_partitioning = true, union_by_name = true[, hive_types = {...}])``:
    exactly these files (see :func:`exact_glob`), with the partition columns typed as the catalog
    types them (``hive=False``: the files' own columns only)."""
    files = ", ".join(_sql_string(exact_glob(p)) for p in paths)
    args = [f"[{files}]", f"hive_partitioning = {'true' if hive else 'false'}", "union_by_name = true"]
    if hive_types:
        args.append("hive_types = {" + ", ".join(f"{_sql_string(n)}: {_sql_string(t)}" for n, t in hive_types) + "}")
    return f"read_parquet({', '.join(args)})"


def exact_glob(path: str) -> str:
    """The DuckDB glob matching exactly the file ``path``: DuckDB globs every path it reads
    (``/lake/b[1]/f.parquet`` reads ``/lake/b1/f.parquet``) and has no escape character, but a
    class of one character matches only that character (``[[]``, ``[*]``, ``[?]``). Checked on
    local files; an object-store path holding one is refused rather than guessed at."""
    if not any(c in path for c in "*?["):
        return path
    if not path.startswith("/"):
        raise QueryError(f"DuckDB would read {path!r} as a glob pattern; such an object-store path cannot be read exactly")
    return "".join(f"[{c}]" if c in "*?[" else c for c in path)


def describe(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, str]:
    """Column name → DuckDB type of what ``source`` (a table function call) reads."""
    with translated("reading the files' schema"):
        rows = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
    return {str(r[0]): str(r[1]) for r in rows}


def not_variant(con: duckdb.DuckDBPyConnection, path: str, columns: Sequence[str]) -> str | None:
    """Why DuckDB does not read ``columns`` of the file ``path`` as VARIANT (a writer that does
    not annotate the group: DuckDB reads a STRUCT), or None. Read file by file: in a
    ``union_by_name`` read such a STRUCT is cast to a VARIANT object of its three fields."""
    misread = not_variant_files(con, [path], columns)
    return misread[0][1] if misread else None


#: Files whose schemas one statement of :func:`not_variant_files` describes.
_DESCRIBED_AT_ONCE = 100


def not_variant_files(con: duckdb.DuckDBPyConnection, paths: Sequence[str], columns: Sequence[str]) -> list[tuple[str, str]]:
    """``(file, why)`` for each of ``paths`` where :func:`not_variant` has a reason, in their order.
    Each file is still described alone, but many in one statement: a statement per file was most
    of the time ``read_pruned`` took to plan a table of a few dozen files."""
    out: list[tuple[str, str]] = []
    for at in range(0, len(paths), _DESCRIBED_AT_ONCE):
        chunk = paths[at : at + _DESCRIBED_AT_ONCE]
        sql = " UNION ALL ".join(
            f"SELECT {i} AS i, column_name, column_type FROM (DESCRIBE SELECT * FROM {parquet_source([p], hive=False)})"
            for i, p in enumerate(chunk)
        )
        with translated("reading the files' schema"):
            rows = con.execute(sql).fetchall()
        types: list[dict[str, str]] = [{} for _ in chunk]
        for i, name, type_ in rows:
            types[i][str(name)] = str(type_)
        for path, read in zip(chunk, types, strict=True):
            misread = next((c for c in columns if c in read and read[c] != "VARIANT"), None)
            if misread is not None:
                out.append((path, f"DuckDB reads column {misread} as {read[misread].split('(')[0]}, not as VARIANT"))
    return out


def footer_keys(con: duckdb.DuckDBPyConnection, paths: Sequence[str], keys: Sequence[str]) -> list[tuple[str, str, str]]:
    """``(file, key, value)`` of each of ``keys`` in the files' footer key-value metadata."""
    sql = (
        "SELECT file_name, decode(key), decode(value) FROM parquet_kv_metadata(?) "
        "WHERE decode(key) IN (SELECT unnest(?))"
    )
    with translated("reading the files' footer metadata"):
        return [(str(f), str(k), str(v)) for f, k, v in con.execute(sql, [[exact_glob(p) for p in paths], list(keys)]).fetchall()]


def relation(con: duckdb.DuckDBPyConnection, sql: str) -> duckdb.DuckDBPyRelation:
    """A lazy relation over ``sql`` (DuckDB checks names and types now, reads rows later)."""
    with translated("preparing the DuckDB query"):
        return con.sql(sql)


def fetch(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] | None = None) -> list[tuple[Any, ...]]:
    """Run ``sql`` and return every row."""
    with translated("running the DuckDB query"):
        return con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()


def usable(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``con`` still answers (an internal error in DuckDB invalidates its database)."""
    import duckdb

    try:
        con.execute("SELECT 1").fetchall()
    except duckdb.Error:
        return False
    return True


def ducklake_extension() -> str:
    """The DuckLake extension binary of the ``duckdb-extension-ducklake`` wheel (loaded from
    site-packages: no INSTALL, no network)."""
    try:
        import duckdb_extension_ducklake
    except ImportError:
        raise QueryError("the DuckLake extension is not installed (pip install duckdb-extension-ducklake==1.5.5)") from None
    path = os.path.join(os.path.dirname(duckdb_extension_ducklake.__file__), "extensions", f"v{DUCKDB_VERSION}", "ducklake.duckdb_extension")
    if not os.path.exists(path):
        raise QueryError(f"the DuckLake extension for DuckDB {DUCKDB_VERSION} is not at {path}")
    return path
