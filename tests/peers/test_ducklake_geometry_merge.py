"""A GEOMETRY column's table-wide box over several files: the real DuckLake extension writes a
table in several inserts (points, Z points, a line string, a file of NULLs), shredcat registers
the very same files and exports the table; the exported ``ducklake_table_column_stats.extra_stats``
of the column is DuckLake's own, string for string. The pure merge rules are in
``tests/stats/test_geometry_merge.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.catalog import Catalog
from service.duckdb import engine
from service.duckdb.ducklake import export_table

from .ducklake import ducklake_available, ducklake_connection, unavailable_reason

_META = "__ducklake_metadata_dl"
_INSERTS = (
    "SELECT ('POINT(' || i || ' ' || (-i) || ')')::GEOMETRY, i FROM range(1, 4) r(i)",
    "SELECT ('POINT Z(' || i || ' ' || (i * 2) || ' 5.25)')::GEOMETRY, i FROM range(10, 12) r(i)",
    "SELECT NULL::GEOMETRY, 1",
    "SELECT 'LINESTRING(-100.125 0, 0 100.0000004)'::GEOMETRY, 1",
)


def _ducklake_table(workdir: Path) -> tuple[str, list[str]]:
    """DuckLake's table-wide ``extra_stats`` of ``g`` and the table's data files."""
    with ducklake_connection(workdir, pre_sql=["SET threads = 1"]) as con:
        con.execute("CREATE TABLE dl.t (g GEOMETRY, i INTEGER)")
        for sql in _INSERTS:
            con.execute(f"INSERT INTO dl.t {sql}")
        (doc,) = con.execute(
            f"SELECT s.extra_stats FROM {_META}.ducklake_table_column_stats s "
            f"JOIN {_META}.ducklake_column c USING (column_id) WHERE c.column_name = 'g'"
        ).fetchone() or (None,)
        files = [r[0] for r in con.execute(f"SELECT path FROM {_META}.ducklake_data_file ORDER BY data_file_id").fetchall()]
    return doc, [str((workdir / "data" / "main" / "t" / f).resolve()) if not f.startswith("/") else f for f in files]


def test_table_box_over_several_files_is_ducklakes(tmp_path: Path, sqlite_url: str) -> None:
    if not ducklake_available():
        pytest.skip(unavailable_reason())
    theirs, files = _ducklake_table(tmp_path / "lake")
    assert len(files) == len(_INSERTS) and all(Path(f).exists() for f in files)
    assert theirs is not None and '"types": ["linestring", "point", "point_z"]' in theirs
    with Catalog(sqlite_url) as cat:
        cat.register("lake", "t", files)
        result = export_table(cat, "lake", "t", str(tmp_path / "out.ducklake"))
    assert (result.files, result.skipped_columns) == (len(_INSERTS), ())
    con = engine.connect()
    con.execute(f"LOAD '{engine.ducklake_extension()}'")
    con.execute(result.attach)
    meta = "__ducklake_metadata_lake"
    ours = engine.fetch(
        con,
        f"SELECT s.extra_stats FROM {meta}.ducklake_table_column_stats s "
        f"JOIN {meta}.ducklake_column c USING (column_id) WHERE c.column_name = 'g'",
    )
    assert ours == [(theirs,)]
    # The exported catalog reads the geometries back (the column is exported as GEOMETRY).
    assert engine.fetch(con, "SELECT count(g) FROM lake.lake.t") == [(6,)]
