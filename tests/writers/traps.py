"""Files the writers of the issue-30 survey produce, written during the test run by the writers
themselves (pyarrow, polars, fastparquet, DuckDB), each with the rows the data proves.

Every trap is a file a real writer made from real values (NOTES.md §8, "Traps the writers set"):
types pyarrow's own kernels refuse when read back, timedeltas stored as times of day, DuckDB's
infinities in every unit, HUGEINT written as DOUBLE, a column named ''. ``EXPECTED`` gives, per
file and column, (value_count, null_count, min_value, max_value, contains_nan) as DuckLake renders
them; a column absent from a file's entry must get no row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

Row = tuple[int, int, str | None, str | None, bool | None]


def _pyarrow(path: Path, columns: dict[str, object], **kw: object) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path, **kw)  # type: ignore[arg-type]


def _no_stats_types(path: Path) -> None:
    import pyarrow as pa

    _pyarrow(
        path,
        {
            "dec32": pa.array([Decimal("1.00"), None, Decimal("-3.25")], pa.decimal32(5, 2)),
            "dec64": pa.array([Decimal("1.00"), Decimal("12345678.25"), None], pa.decimal64(12, 2)),
            "dur": pa.array([1, -5, None], pa.duration("ms")),
            "dict": pa.array(["b", "a", None]).dictionary_encode(),
            "bview": pa.array([b"x", b"\xff", None], pa.binary_view()),
            "sview": pa.array(["é", "a", None], pa.string_view()),
            "ts_ms_far": pa.array([-(2**62), None, 2**62], pa.timestamp("ms")),
            "days": pa.array([-800_000, None, 3_000_000], pa.date32()),
            "json": pa.array(['{"b":1}', None, "[1,2]"], pa.json_()),
        },
        write_statistics=False,
    )


def _with_stats_far(path: Path) -> None:
    import pyarrow as pa

    _pyarrow(
        path,
        {
            "ts_ms_far": pa.array([-(2**62), None, 2**62], pa.timestamp("ms")),
            "ts_ms_half": pa.array([0, None, 2**62], pa.timestamp("ms")),
            "days": pa.array([-800_000, None, 3_000_000], pa.date32()),
        },
    )


def _int96_far(path: Path) -> None:
    import pyarrow as pa

    _pyarrow(
        path,
        {"t96": pa.array([dt.datetime(5000, 1, 1), None, dt.datetime(1, 1, 1)], pa.timestamp("ms"))},
        use_deprecated_int96_timestamps=True,
        write_statistics=False,
    )


def _empty_name(path: Path) -> None:
    import pyarrow as pa

    _pyarrow(path, {"": pa.array([1, 2, 3]), "x": pa.array([4, 5, 6])})


def _polars_duration(path: Path) -> None:
    import polars as pl

    pl.DataFrame({"td": [dt.timedelta(seconds=5), dt.timedelta(days=-1), None]}).write_parquet(path, statistics=False)


def _fastparquet_timedelta(path: Path) -> None:
    import fastparquet
    import pandas as pd

    frame = pd.DataFrame(
        {
            "td": pd.to_timedelta([-5, 1_000_000, 3], unit="s"),
            "tod": pd.to_timedelta([1, 7200, 60], unit="s"),
        }
    )
    fastparquet.write(str(path), frame)


def _duckdb(sql: str) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        import duckdb

        con = duckdb.connect()
        try:
            con.execute(f"COPY ({sql}) TO '{path}' (FORMAT parquet)")
        finally:
            con.close()

    return write


_INF_UNITS = ("TIMESTAMP_MS", "TIMESTAMP", "TIMESTAMP_NS", "TIMESTAMPTZ", "DATE")
_INF_SQL = ", ".join(
    f"CASE WHEN i = 0 THEN '-infinity'::{u} WHEN i = 1 THEN 'infinity'::{u} ELSE '2020-01-01'::{u} END AS {u.lower()}"
    for u in _INF_UNITS
)

WRITERS: dict[str, Callable[[Path], None]] = {
    "pyarrow_no_stats_types": _no_stats_types,
    "pyarrow_far_values": _with_stats_far,
    "pyarrow_int96_far": _int96_far,
    "pyarrow_empty_name": _empty_name,
    "polars_duration": _polars_duration,
    "fastparquet_timedelta": _fastparquet_timedelta,
    "duckdb_infinity": _duckdb(f"SELECT {_INF_SQL} FROM range(3) r(i)"),
    "duckdb_hugeint": _duckdb(
        "SELECT CASE WHEN i = 0 THEN 170141183460469231731687303715884105727::HUGEINT ELSE i END AS h, "
        "i::UHUGEINT AS uh, CASE WHEN i = 1 THEN 'nan'::DOUBLE ELSE i END AS d FROM range(3) r(i)"
    ),
}

_FAR = (2, 1, None, None, None)
EXPECTED: dict[str, dict[str, Row]] = {
    "pyarrow_no_stats_types": {
        "dec32": (2, 1, "-3.25", "1.00", None),
        "dec64": (2, 1, "1.00", "12345678.25", None),
        # pyarrow's duration is a bare INT64 in the file (the Arrow type rides in its metadata).
        "dur": (2, 1, "-5", "1", None),
        "dict": (2, 1, "a", "b", None),
        "bview": (2, 1, "78", "FF", None),
        "sview": (2, 1, "a", "é", None),
        # Milliseconds past the microsecond range: no bound is a true timestamp (unknown).
        "ts_ms_far": _FAR,
        "days": (2, 1, "0222-09-04 (BC)", "10183-09-21", None),
        # JSON: its text, as DuckLake renders it.
        "json": (2, 1, "[1,2]", '{"b":1}', None),
    },
    "pyarrow_far_values": {
        "ts_ms_far": _FAR,
        "ts_ms_half": (2, 1, "1970-01-01 00:00:00", None, None),
        "days": (2, 1, "0222-09-04 (BC)", "10183-09-21", None),
    },
    # INT96: counts only (its order is undefined), even for instants nanoseconds cannot hold.
    "pyarrow_int96_far": {"t96": (2, 1, None, None, None)},
    # '' is no name the catalog stores: no row, and register takes the file.
    "pyarrow_empty_name": {"x": (3, 0, "4", "6", None)},
    "polars_duration": {"td": (2, 1, "-86400000000", "5000000", None)},
    # TIME_MICROS holding -5 s and 277 h: not times of day, so no bound is a true TIME.
    "fastparquet_timedelta": {
        "td": (3, 0, None, None, None),
        "tod": (3, 0, "00:00:01", "02:00:00", None),
    },
    "duckdb_infinity": {u.lower(): (3, 0, "-infinity", "infinity", None) for u in _INF_UNITS},
    # NOTES.md §8: HUGEINT/UHUGEINT counts only, as DuckLake; a DOUBLE with NaN keeps its bounds.
    "duckdb_hugeint": {
        "h": (3, 0, None, None, None),
        "uh": (3, 0, None, None, None),
        "d": (3, 0, "0.0", "2.0", True),
    },
}


def write_traps(directory: Path) -> dict[str, Path]:
    """Every trap file under ``directory``, by name."""
    directory.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, write in WRITERS.items():
        path = directory / f"{name}.parquet"
        write(path)
        out[name] = path
    return out
