"""The writer zoo: one table of trap values (NaN, ±0.0, multibyte, NUL and > 256-byte strings,
empty strings, NULL-only columns, min = max, extreme integers, every Arrow type a writer puts in a
file), written during the test run by pyarrow under a matrix of options, by polars (its own Rust
writer), fastparquet (old-style statistics), pandas and DuckDB; and the truth about each column,
computed from the data read back, never from the footer."""

from __future__ import annotations

import datetime as dt
import math
import uuid
from collections.abc import Callable
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

ROWS = 40


def _cycle(values: list[Any], n: int = ROWS) -> list[Any]:
    return [values[i % len(values)] for i in range(n)]


def zoo_table() -> Any:
    import pyarrow as pa

    long_a = "a" * 300
    long_z = "z" * 255 + "é" * 3  # past 256 bytes in its multibyte tail
    strings = ["", "b", "é", "a\x00b", long_a, long_z, "日本", None, "m"]
    # The longest max can be rounded up to 256 bytes (an all-0xFF one cannot: DuckLake then records
    # no bounds, as the peer tests check).
    blobs = [b"", b"\x00", b"\xfe" * 300, b"\x10" * 260, b"k", None]
    i64 = [-(2**63), 2**63 - 1, 0, -1, None, 7]
    cols: dict[str, Any] = {
        "b": pa.array(_cycle([True, None, False])),
        "i8": pa.array(_cycle([-128, 127, None, 0]), pa.int8()),
        "i16": pa.array(_cycle([-(2**15), 2**15 - 1, 3]), pa.int16()),
        "i32": pa.array(_cycle([-(2**31), 2**31 - 1, None]), pa.int32()),
        "i64": pa.array(_cycle(i64), pa.int64()),
        "u8": pa.array(_cycle([0, 255, None]), pa.uint8()),
        "u32": pa.array(_cycle([0, 2**32 - 1]), pa.uint32()),
        "u64_low": pa.array(_cycle([0, 2**63 - 1, None]), pa.uint64()),
        "u64_high": pa.array(_cycle([2**63, 2**64 - 1, 3]), pa.uint64()),
        "f32": pa.array(_cycle([-0.0, 0.0, 1.5, None, -2.25]), pa.float32()),
        "f64": pa.array(_cycle([0.0, -0.0, math.inf, -math.inf, 1e308, None]), pa.float64()),
        "f64_nan": pa.array(_cycle([float("nan"), 2.5, None, -1.0]), pa.float64()),
        "f64_only_nan": pa.array(_cycle([float("nan"), None]), pa.float64()),
        "dec9": pa.array(_cycle([Decimal("-9999999.99"), Decimal("0.01"), None]), pa.decimal128(9, 2)),
        "dec38": pa.array(_cycle([Decimal("1" * 28 + ".5"), Decimal("-3.0"), None]), pa.decimal128(38, 10)),
        "dec32": pa.array(_cycle([Decimal("1.00"), None, Decimal("-3.25")]), pa.decimal32(5, 2)),
        "dec64": pa.array(_cycle([Decimal("12345678.25"), Decimal("-1")]), pa.decimal64(12, 2)),
        "dec40": pa.array(_cycle([Decimal("9" * 40), Decimal("-1"), None]), pa.decimal256(40, 0)),
        "date": pa.array(_cycle([-800_000, 0, 2_932_896, None]), pa.date32()),
        "t_ms": pa.array(_cycle([0, 86_399_999, None]), pa.time32("ms")),
        "t_us": pa.array(_cycle([1, 86_399_999_999]), pa.time64("us")),
        "ts_s": pa.array(_cycle([-(10**10), 10**10, None]), pa.timestamp("s")),
        "ts_ms": pa.array(_cycle([-(10**14), 10**14]), pa.timestamp("ms", "UTC")),
        "ts_us": pa.array(_cycle([-(2**62), 2**62, None]), pa.timestamp("us")),
        "ts_ns": pa.array(_cycle([-(2**63) + 1, 2**63 - 1, 5]), pa.timestamp("ns", "UTC")),
        "s": pa.array(_cycle(strings)),
        "ls": pa.array(_cycle(strings), pa.large_string()),
        "sv": pa.array(_cycle(strings), pa.string_view()),
        "sd": pa.array(_cycle(strings)).dictionary_encode(),
        "bl": pa.array(_cycle(blobs), pa.binary()),
        "bv": pa.array(_cycle(blobs), pa.binary_view()),
        "fsb": pa.array(_cycle([b"ab\x00d", b"\xff\xff\xff\xff", None]), pa.binary(4)),
        "uuid": pa.array(_cycle([uuid.UUID(int=5).bytes, uuid.UUID(int=2**127).bytes, None]), pa.uuid()),
        "dur": pa.array(_cycle([1, -5, None]), pa.duration("ms")),
        "null_only": pa.nulls(ROWS, pa.int64()),
        "same": pa.array(_cycle([42])),
        "st": pa.array(_cycle([{"x": 1, "y": "q"}, None, {"x": None, "y": "r" * 300}])),
        "lst": pa.array(_cycle([[1, 2], None, []])),
    }
    return pa.table(cols)


Writer = Callable[[Any, Path], None]


def _pyarrow(**kw: Any) -> Writer:
    def write(table: Any, path: Path) -> None:
        import pyarrow.parquet as pq

        pq.write_table(table, path, **kw)

    return write


def _polars(statistics: bool) -> Writer:
    def write(table: Any, path: Path) -> None:
        import polars as pl

        keep = [n for n in table.column_names if n not in ("uuid", "dec32", "dec64", "dec40", "sv", "bv", "sd")]
        pl.from_arrow(table.select(keep)).write_parquet(path, statistics=statistics)  # type: ignore[union-attr]

    return write


def _fastparquet(table: Any, path: Path) -> None:
    import fastparquet

    keep = ["b", "i8", "i16", "i32", "u8", "u32", "f32", "f64", "f64_nan", "s", "bl", "ts_ms", "same"]
    frame = table.select(keep).to_pandas()
    fastparquet.write(str(path), frame, row_group_offsets=[0, 17], stats=True)


def _pandas(table: Any, path: Path) -> None:
    keep = ["b", "i64", "f64", "f64_nan", "s", "bl", "dec9", "null_only", "same"]
    table.select(keep).to_pandas().to_parquet(path, engine="pyarrow", row_group_size=11)


def _duckdb(table: Any, path: Path) -> None:
    import duckdb

    keep = [n for n in table.column_names if n not in ("uuid", "sv", "bv", "sd", "dec32", "dec64", "dec40", "dur", "fsb")]
    con = duckdb.connect()
    try:
        con.register("zoo", table.select(keep))
        con.execute(f"COPY zoo TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 16)")
    finally:
        con.close()


def _deltalake(table: Any, path: Path) -> None:
    """arrow-rs's Parquet writer, through delta-rs: the one data file of a fresh Delta table."""
    import shutil

    from deltalake import write_deltalake

    refused = {"u8", "u32", "u64_high", "dec32", "dec64", "dec40", "t_ms", "t_us", "dur"}  # not Delta types
    keep = [n for n in table.column_names if n not in refused]
    out = path.with_suffix(".delta")
    write_deltalake(str(out), table.select(keep))
    (data,) = out.glob("*.parquet")
    shutil.move(data, path)
    shutil.rmtree(out)


WRITERS: dict[str, Writer] = {
    "pyarrow_default": _pyarrow(),
    "pyarrow_nostats_v2": _pyarrow(write_statistics=False, use_dictionary=False, data_page_version="2.0", row_group_size=7),
    "pyarrow_some_stats": _pyarrow(write_statistics=["i64", "s", "f64"], compression="zstd", row_group_size=13),
    "pyarrow_int96_ms": _pyarrow(use_deprecated_int96_timestamps=True, data_page_size=64, row_group_size=9),
    "pyarrow_coerce_ms": _pyarrow(coerce_timestamps="ms", allow_truncated_timestamps=True, compression="gzip"),
    "polars_stats": _polars(True),
    "polars_nostats": _polars(False),
    "fastparquet": _fastparquet,
    "pandas": _pandas,
    "duckdb": _duckdb,
    "deltalake": _deltalake,
}


def write_zoo(directory: Path) -> dict[str, Path]:
    directory.mkdir(parents=True, exist_ok=True)
    table = zoo_table()
    out = {}
    for name, write in WRITERS.items():
        path = directory / f"{name}.parquet"
        write(table, path)
        out[name] = path
    return out


# --- the truth, from the data -----------------------------------------------------------------------

_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def read_column(path: Path, top: str) -> Any:
    """A top-level column's data as pyarrow reads it; for a file whose stored Arrow schema pyarrow
    refuses (delta-rs' UUID), from the Parquet types alone, as the extractor reads it."""
    import pyarrow.parquet as pq

    from service.parquet.io import _WithoutArrowSchema

    try:
        return pq.read_table(path, columns=[top]).column(top).combine_chunks()
    except Exception:
        with open(path, "rb") as f:
            return pq.ParquetFile(_WithoutArrowSchema(f)).read(columns=[top]).column(top).combine_chunks()


def column_values(path: Path, column: str, kind: str) -> list[Any]:
    """Every value of a plain column (dotted for a struct leaf) in the model's representation of
    ``kind`` (the row's type name), read back from the file with pyarrow; None for NULL."""
    import pyarrow as pa
    import pyarrow.compute as pc

    top, *rest = column.split(".")
    arr = read_column(path, top)
    for name in rest:
        arr = arr.flatten()[arr.type.get_field_index(name)]
    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    t = arr.type
    if pa.types.is_string_view(t) or pa.types.is_large_string(t):
        arr = arr.cast(pa.string())
    elif pa.types.is_binary_view(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        arr = arr.cast(pa.binary())
    elif pa.types.is_decimal(t):
        arr = arr.cast(pa.decimal128(t.precision, t.scale)) if t.precision <= 38 else arr
    if pa.types.is_timestamp(t) or pa.types.is_time(t) or pa.types.is_duration(t):
        model = 1_000_000_000 if kind.endswith("_ns") else 1_000_000
        ints = (arr.cast(pa.int32()) if pa.types.is_time32(t) else arr).cast(pa.int64()).to_pylist()
        if kind == "int64":  # a duration, as the bare INT64 the file holds
            return ints
        # In the model's unit, exactly: a finer stored unit (polars' nanosecond times, read as
        # microsecond TIME) gives fractions, which the row's bounds must still enclose.
        per = _PER_SECOND[t.unit]
        return [None if v is None else (v * (model // per) if model >= per else Fraction(v * model, per)) for v in ints]
    if pa.types.is_date(t):
        return arr.cast(pa.int32()).to_pylist()
    if kind == "uuid":
        return [None if v is None else uuid.UUID(bytes=v) for v in arr.to_pylist()]
    if pa.types.is_boolean(t) or pa.types.is_integer(t) or pa.types.is_floating(t):
        return arr.to_pylist()
    del pc
    return arr.to_pylist()


def check_row(values: list[Any], row: Any) -> list[str]:
    """What is untrue in a stats row about these values (empty when every claim holds)."""
    problems = []
    present = [v for v in values if v is not None]
    if row.value_count != len(present) or row.null_count != len(values) - len(present):
        problems.append(f"counts {row.value_count}/{row.null_count}, data {len(present)}/{len(values) - len(present)}")
    is_nan = [isinstance(v, float) and math.isnan(v) for v in present]
    if row.contains_nan is not None and row.contains_nan != any(is_nan):
        problems.append(f"contains_nan {row.contains_nan}, data {any(is_nan)}")
    if row.contains_nan is None and any(is_nan) and (row.min_value is not None or row.max_value is not None):
        problems.append("NaN in the data but not flagged")
    numbers = [v for v, nan in zip(present, is_nan, strict=True) if not nan]
    lo, hi = row.min_value, row.max_value
    if isinstance(lo, dt.date | Decimal | float | int | str | bytes | uuid.UUID) or lo is None:
        bad_lo = [v for v in numbers if lo is not None and v < lo]
        bad_hi = [v for v in numbers if hi is not None and v > hi]
        if bad_lo or bad_hi:
            problems.append(f"bounds {lo!r}..{hi!r} exclude {(bad_lo + bad_hi)[:2]!r}")
    return problems


def leaf_columns_with_values(path: Path) -> list[str]:
    """The file's plain leaves (dotted; none inside a list) whose data holds a non-null value."""
    import pyarrow.parquet as pq

    from service.parquet.io import _WithoutArrowSchema

    with path.open("rb") as f:
        md = pq.read_metadata(_WithoutArrowSchema(f))
    out = []
    for i in range(md.num_columns):
        name = md.schema.column(i).path
        top, *rest = name.split(".")
        if rest and rest[0] in ("list", "element", "key_value", "bag", "array"):
            continue
        arr = read_column(path, top)
        if not hasattr(arr, "flatten") and rest:
            continue
        try:
            for part in rest:
                arr = arr.flatten()[arr.type.get_field_index(part)]
        except (AttributeError, KeyError):
            continue
        if len(arr) - arr.null_count:
            out.append(name)
    return out
