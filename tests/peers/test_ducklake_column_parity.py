"""Plain-column statistics: shredcat's rows against the real DuckLake 1.5.5 extension.

DuckDB writes each table through DuckLake; :func:`extract_file` then reads the very same files
and its ``ColumnStats.ducklake_row()`` must equal the ``ducklake_file_column_stats`` row DuckLake
stored for that file and column, string for string.

Where shredcat deliberately writes no row or another value (documented in
``service/stats/extract.py`` and the README's deviations table): TIMETZ and INTERVAL get exact
counts where DuckLake writes a row of zeros, lists and maps no rows here (DuckLake addresses their
children). HUGEINT/UHUGEINT (DuckDB writes them as DOUBLE without bounds) get counts only, as in
DuckLake (NOTES.md §8); UBIGINT bounds are exact over its whole range.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from service.stats.extract import extract_file

from .ducklake import (
    ducklake_available,
    ducklake_connection,
    read_file_column_stats,
    unavailable_reason,
)

pytestmark = [pytest.mark.xdist_group("ducklake")]


@pytest.fixture(autouse=True)
def _need_ducklake() -> None:
    if not ducklake_available():
        pytest.skip(unavailable_reason())


def _write(
    workdir: Path, create: str, inserts: Sequence[str], options: dict[str, object] | None = None
) -> dict[str, dict[str, dict[str, Any]]]:
    with ducklake_connection(workdir, ducklake_options=options, pre_sql=["SET threads = 1"]) as con:
        con.execute(f"CREATE TABLE dl.t {create}")
        for sql in inserts:
            con.execute(f"INSERT INTO dl.t {sql}")
        return read_file_column_stats(con)


def _ours(path: str) -> dict[str, dict[str, Any]]:
    return {c.column: c.ducklake_row() for c in extract_file(path).columns}


def _truth(path: str, column: str) -> dict[str, Any]:
    """min/max (NaN left out) and contains_nan of one column, computed by DuckDB from the data."""
    import duckdb

    col = f'"{column}"'
    numeric = duckdb.sql(f"SELECT typeof({col}) IN ('DOUBLE', 'FLOAT') FROM read_parquet(?) LIMIT 1", params=[path])
    is_float = bool(numeric.fetchone()[0])  # type: ignore[index]
    keep = f"WHERE NOT isnan({col})" if is_float else ""
    lo, hi = duckdb.sql(
        f"SELECT min({col})::VARCHAR, max({col})::VARCHAR FROM read_parquet(?) {keep}", params=[path]
    ).fetchone()  # type: ignore[misc]
    nan = duckdb.sql(f"SELECT bool_or(isnan({col})) FROM read_parquet(?)", params=[path]).fetchone()[0] if is_float else None  # type: ignore[index]
    return {"min_value": lo, "max_value": hi, "contains_nan": nan}


_NO_BOUNDS = {"min_value": None, "max_value": None, "contains_nan": None, "extra_stats": None}


def _counts(path: str, column: str) -> tuple[int, int]:
    """Non-null and null values of a column, counted by DuckDB in the data."""
    import duckdb

    got = duckdb.sql(f'SELECT count("{column}"), count(*) - count("{column}") FROM read_parquet(?)', params=[path]).fetchone()
    assert got is not None
    return int(got[0]), int(got[1])


def _compare(
    theirs: dict[str, dict[str, dict[str, Any]]],
    *,
    ours_absent: Sequence[str] = (),
    ducklake_defects: Sequence[str] = (),
    ducklake_zeros: Sequence[str] = (),
) -> Iterator[str]:
    """Yield each file after checking it. ``ducklake_defects``: columns where DuckLake's
    several-row-group unification is wrong (docs/ducklake-format.md: a row group without min/max
    drops the file's bounds; contains_nan is the last row group's); there the truth decides.
    ``ducklake_zeros``: columns DuckLake gives a row of zeros (TIMETZ, INTERVAL); ours has the
    counts DuckDB counts in the data, and no bounds."""
    assert theirs, "DuckLake wrote no data file"
    for path, rows in theirs.items():
        ours = _ours(path)
        for col in ducklake_zeros:
            assert rows[col] == {**_NO_BOUNDS, "column_size_bytes": 0, "value_count": 0, "null_count": 0}, col
            assert {k: ours[col][k] for k in _NO_BOUNDS} == _NO_BOUNDS and ours[col]["column_size_bytes"] > 0
            assert (ours[col]["value_count"], ours[col]["null_count"]) == _counts(path, col)
            rows[col] = ours[col]
        for col in ours_absent:
            assert col in rows, f"DuckLake has no row for {col}: the exception is stale"
            assert col not in ours
            del rows[col]
        for col in ducklake_defects:
            if ours.get(col) != rows.get(col):
                assert {k: ours[col][k] for k in ("min_value", "max_value", "contains_nan")} == _truth(path, col)
                assert {k: v for k, v in ours[col].items() if k not in ("min_value", "max_value", "contains_nan")} == {
                    k: v for k, v in rows[col].items() if k not in ("min_value", "max_value", "contains_nan")
                }
                rows[col] = ours[col]
        assert ours == rows
        yield path


ALL_TYPES = """(
  b BOOLEAN, i8 TINYINT, i16 SMALLINT, i32 INTEGER, i64 BIGINT,
  u8 UTINYINT, u16 USMALLINT, u32 UINTEGER, u64 UBIGINT,
  f FLOAT, d DOUBLE, dnan DOUBLE, fnan FLOAT, dzero DOUBLE, fzero FLOAT, dinf DOUBLE,
  d1 DECIMAL(4,2), d2 DECIMAL(9,3), d3 DECIMAL(18,5), d4 DECIMAL(38,10), d5 DECIMAL(3,3), d6 DECIMAL(1,0),
  dt DATE, tm TIME, ts TIMESTAMP, tstz TIMESTAMPTZ, tsns TIMESTAMP_NS, tsms TIMESTAMP_MS, tss TIMESTAMP_S,
  s VARCHAR, s_long VARCHAR, s_multi VARCHAR, s_undroppable VARCHAR, bl BLOB, bl_long BLOB, u UUID,
  only_null INTEGER, only_nan DOUBLE,
  st STRUCT(a INTEGER, b STRUCT(c VARCHAR, d DOUBLE)),
  li INTEGER[], m MAP(VARCHAR, INTEGER), ttz TIMETZ, iv INTERVAL
)"""

ALL_TYPES_ROWS = r"""SELECT
  CASE WHEN i % 5 = 4 THEN NULL ELSE i % 2 = 0 END,
  (i % 100 - 50)::TINYINT, (i * 37 % 30000 - 15000)::SMALLINT, i * 7919 - 4000, i * 1000000000007 - 3,
  (i % 250)::UTINYINT, (i * 3)::USMALLINT, (i * 4000000)::UINTEGER, (i * 100000000000)::UBIGINT,
  (i / 3)::FLOAT, i / 7, CASE WHEN i = 3 THEN 'nan'::DOUBLE WHEN i % 4 = 0 THEN NULL ELSE i * 1.5 END,
  CASE WHEN i = 0 THEN 'nan'::FLOAT ELSE -(i::FLOAT) END,
  CASE WHEN i % 3 = 0 THEN '-0.0'::DOUBLE WHEN i % 3 = 1 THEN '0.0'::DOUBLE ELSE i END,
  CASE WHEN i = 1 THEN '0.0'::FLOAT WHEN i = 2 THEN '-0.0'::FLOAT ELSE -i END,
  CASE WHEN i = 5 THEN 'inf'::DOUBLE WHEN i = 6 THEN '-inf'::DOUBLE ELSE i END,
  (i / 100)::DECIMAL(4,2), (i / 1000 - 0.5)::DECIMAL(9,3), (i / 7)::DECIMAL(18,5),
  (i / 3 - 10)::DECIMAL(38,10), (-i / 1000)::DECIMAL(3,3), (i % 10)::DECIMAL(1,0),
  CASE WHEN i = 9 THEN 'infinity'::DATE ELSE DATE '1969-12-25' + (i * 3)::INTEGER END,
  TIME '00:00:01.5' + INTERVAL (i) MINUTE,
  TIMESTAMP '1969-12-31 23:59:59.999999' + INTERVAL (i) HOUR,
  TIMESTAMPTZ '2024-06-01 10:00:00.25+00' + INTERVAL (i) DAY,
  TIMESTAMP_NS '2024-01-01 10:00:00.123456789' + INTERVAL (i) SECOND,
  TIMESTAMP_MS '2024-01-01 10:00:00.123' + INTERVAL (i) SECOND,
  TIMESTAMP_S '2024-01-01 10:00:00' + INTERVAL (i) SECOND,
  CASE WHEN i % 6 = 0 THEN NULL ELSE 'v' || i END,
  repeat('k', 250 + i) || i,
  repeat('é', 100 + i),
  CASE WHEN i = 0 THEN repeat(chr(128512), 80) ELSE 'a' END,
  ('\x00\x01' || i)::BLOB,
  CASE WHEN i = 2 THEN repeat('\xFF', 300)::BLOB ELSE repeat('\x10', 260 + i)::BLOB END,
  ('00000000-0000-4000-8000-' || lpad(i::VARCHAR, 12, '0'))::UUID,
  NULL, 'nan'::DOUBLE,
  CASE WHEN i = 7 THEN NULL ELSE {'a': i, 'b': CASE WHEN i = 8 THEN NULL ELSE {'c': 'c' || i, 'd': -i} END} END,
  [i, i + 1], MAP {'k': i}, TIMETZ '10:00:00+01', INTERVAL (i) DAY
FROM range(12) r(i)"""


def test_every_primitive_type_as_ducklake(tmp_path: Path) -> None:
    theirs = _write(tmp_path, ALL_TYPES, [ALL_TYPES_ROWS])
    (path,) = _compare(theirs, ducklake_zeros=("ttz", "iv"))
    ours = _ours(path)
    # The rows the comparison covers, so that a silently missing row cannot pass.
    assert {"st.a", "st.b.c", "st.b.d", "only_null", "only_nan", "u64", "tsns"} <= set(ours)
    assert not any(c.startswith(("li", "m.")) or c == "m" for c in ours)


def test_several_files_and_row_groups(tmp_path: Path) -> None:
    rows = r"""SELECT
      i, CASE WHEN i % 1000 = 0 THEN NULL ELSE (i * 0.5)::DOUBLE END,
      CASE WHEN i = 3000 THEN 'nan'::DOUBLE ELSE i END,
      CASE WHEN i < 2048 THEN NULL ELSE 's' || i END,
      CASE WHEN i = 4000 THEN repeat('z', 400) ELSE repeat('m', i % 300) END,
      (i / 100)::DECIMAL(10,2)
    FROM range({lo}, {hi}) r(i)"""
    theirs = _write(
        tmp_path,
        "(i BIGINT, d DOUBLE, n DOUBLE, s VARCHAR, l VARCHAR, dec DECIMAL(10,2))",
        [rows.format(lo=0, hi=5000), rows.format(lo=5000, hi=5100)],
        {"parquet_row_group_size": 2048},
    )
    # s: its first row group is all NULL (DuckLake: no bounds); n: NaN in a middle row group
    # (DuckLake: contains_nan false).
    assert len(list(_compare(theirs, ducklake_defects=("s", "n")))) == 2


def test_all_null_and_nan_only_files(tmp_path: Path) -> None:
    theirs = _write(
        tmp_path,
        "(a INTEGER, f DOUBLE, g FLOAT, s VARCHAR, st STRUCT(x INTEGER))",
        [
            "SELECT NULL, NULL, NULL, NULL, NULL FROM range(3)",
            "SELECT 1, 'nan'::DOUBLE, 'nan'::FLOAT, '', {'x': NULL} FROM range(2)",
            "SELECT -1, '-0.0'::DOUBLE, '-0.0'::FLOAT, 'ü', {'x': 0} FROM range(2)",
        ],
    )
    assert len(list(_compare(theirs))) == 3


def test_hugeint_counts_only_and_ubigint_exact(tmp_path: Path) -> None:
    """HUGEINT and UHUGEINT (DOUBLE without bounds in the file): counts only, as DuckLake
    (NOTES.md §8), while a DuckDB DOUBLE whose NaN dropped its bounds keeps data bounds; UBIGINT
    above 2^63 exact (shredcat's type is Spark's, DECIMAL(20,0))."""
    theirs = _write(
        tmp_path,
        "(h HUGEINT, uh UHUGEINT, d DOUBLE, u UBIGINT, u_low UBIGINT)",
        [
            "SELECT i::HUGEINT * 3 - 170141183460469231731687303715884105727, i::UHUGEINT, "
            "CASE WHEN i = 1 THEN 'nan'::DOUBLE ELSE i END, "
            "CASE WHEN i = 2 THEN 18446744073709551615 ELSE 9223372036854775808 + i END, i FROM range(4) r(i)"
        ],
    )
    ((path, rows),) = theirs.items()
    ours = _ours(path)
    for col in ("h", "uh", "u", "u_low"):
        assert ours[col] == rows[col], col
    for col in ("h", "uh"):
        assert (rows[col]["min_value"], rows[col]["max_value"], rows[col]["contains_nan"]) == (None, None, None)
        assert rows[col]["value_count"] == 4
    assert (ours["u"]["min_value"], ours["u"]["max_value"]) == ("9223372036854775808", "18446744073709551615")
    assert (ours["d"]["min_value"], ours["d"]["max_value"], ours["d"]["contains_nan"]) == ("0.0", "3.0", True)
    for k in ("column_size_bytes", "value_count", "null_count", "extra_stats"):
        assert ours["d"][k] == rows["d"][k]


def test_json_columns_as_ducklake(tmp_path: Path) -> None:
    """JSON: DuckLake records its text as the bounds (256-byte rule included); shredcat's row is
    the same, for short, long, multibyte and NULL values."""
    theirs = _write(
        tmp_path,
        "(j JSON, k JSON)",
        [
            "SELECT CASE WHEN i = 0 THEN NULL ELSE ('{\"a\":' || i || '}')::JSON END, "
            "('{\"s\":\"' || repeat('é', 150 + i) || '\"}')::JSON FROM range(5) r(i)"
        ],
    )
    (path,) = _compare(theirs)
    ours = _ours(path)
    assert (ours["j"]["min_value"], ours["j"]["max_value"], ours["j"]["value_count"]) == ('{"a":1}', '{"a":4}', 4)
    assert ours["k"]["value_count"] == 5 and ours["k"]["min_value"] is not None


def test_timetz_interval_and_geometry_get_counts(tmp_path: Path) -> None:
    """TIMETZ and INTERVAL (DuckDB writes no statistics for them): exact counts, read from the
    data, where DuckLake writes zeros; GEOMETRY: DuckLake's row, no bounds, its bounding box."""
    theirs = _write(
        tmp_path,
        "(ttz TIMETZ, iv INTERVAL, g GEOMETRY)",
        [
            "SELECT CASE WHEN i % 3 = 2 THEN NULL ELSE TIMETZ '10:00:00+01' + INTERVAL (i) MINUTE END, "
            "CASE WHEN i = 1 THEN NULL ELSE INTERVAL (i) DAY + INTERVAL (i) MONTH END, "
            "CASE WHEN i = 0 THEN NULL ELSE ('POINT(' || i || ' ' || (-i) || ')')::GEOMETRY END FROM range(7) r(i)"
        ],
    )
    ((path, rows),) = theirs.items()
    ours = _ours(path)
    types = {c.column: c.column_type.name for c in extract_file(path).columns}
    assert types == {"ttz": "timetz", "iv": "interval", "g": "geometry"}
    # GEOMETRY: DuckLake's row, its bounding box included (DuckDB writes the footer's
    # geospatial statistics for a GEOMETRY column).
    bbox = json.loads(rows["g"]["extra_stats"])["bbox"]
    assert (bbox["xmin"], bbox["xmax"], bbox["ymin"], bbox["ymax"]) == (1.0, 6.0, -6.0, -1.0)
    assert list(_compare({path: rows}, ducklake_zeros=("ttz", "iv"))) == [path]
    assert (ours["ttz"]["value_count"], ours["ttz"]["null_count"]) == (5, 2)
    assert (ours["iv"]["value_count"], ours["iv"]["null_count"]) == (6, 1)
    assert (ours["g"]["value_count"], ours["g"]["null_count"]) == (6, 1)


def _wkb_point(x: float, y: float, z: float | None = None) -> bytes:
    import struct

    if z is None:
        return struct.pack("<BIdd", 1, 1, x, y)
    return struct.pack("<BIddd", 1, 1001, x, y, z)


def test_geometry_bbox_from_the_footers_geospatial_statistics(tmp_path: Path) -> None:
    """A GEOMETRY column pyarrow writes (a ``geoarrow.wkb`` extension column) carries Parquet
    geospatial statistics per row group: shredcat's ``extra_stats`` is DuckLake's, string for
    string, as ``ducklake_add_data_files`` records it for the same file (its counts there are
    NULL; shredcat's are the footer's)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    class Wkb(pa.ExtensionType):
        def __init__(self) -> None:
            super().__init__(pa.binary(), "geoarrow.wkb")

        def __arrow_ext_serialize__(self) -> bytes:
            return b"{}"

        @classmethod
        def __arrow_ext_deserialize__(cls, storage_type: pa.DataType, serialized: bytes) -> Wkb:
            return cls()

    values = [_wkb_point(1.5, -2), None, _wkb_point(-3, 4.25), _wkb_point(0.1234567, 9, 7.5), None]
    storage = pa.array(values, pa.binary())
    path = tmp_path / "geo.parquet"
    pa.register_extension_type(Wkb())  # for this write only (unregistered below)
    try:
        column = pa.ExtensionArray.from_storage(Wkb(), storage)
        pq.write_table(pa.table({"g": column}), path, row_group_size=2)
    finally:
        pa.unregister_extension_type("geoarrow.wkb")
    assert pq.ParquetFile(path).metadata.row_group(0).column(0).is_geo_stats_set
    with ducklake_connection(tmp_path / "lake", pre_sql=["SET threads = 1"]) as con:
        con.execute("CREATE TABLE dl.t (g GEOMETRY)")
        con.execute("CALL ducklake_add_data_files('dl', 't', ?)", [str(path)])
        ((_, rows),) = read_file_column_stats(con).items()
    ours = _ours(str(path))["g"]
    assert ours["extra_stats"] == rows["g"]["extra_stats"]
    assert json.loads(ours["extra_stats"]) == {
        "bbox": {"xmin": -3.0, "xmax": 1.5, "ymin": -2.0, "ymax": 9.0, "zmin": 7.5, "zmax": 7.5, "mmin": None, "mmax": None},
        "types": ["point", "point_z"],
    }
    assert (ours["value_count"], ours["null_count"], ours["min_value"], ours["max_value"]) == (3, 2, None, None)
