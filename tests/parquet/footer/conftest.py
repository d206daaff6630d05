"""Real Parquet files for the footer tests, written by pyarrow: every physical and logical type
under several writer options, and one small file for the tests that mutate it."""

from __future__ import annotations

import datetime
import decimal
import io
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest


def _all_types_table(n: int) -> pa.Table:
    base = datetime.datetime(2024, 1, 1, tzinfo=datetime.UTC)
    return pa.table(
        {
            "bool": pa.array([i % 3 == 0 if i % 7 else None for i in range(n)]),
            "i8": pa.array([i % 100 - 50 for i in range(n)], pa.int8()),
            "u16": pa.array([i * 7 % 60000 for i in range(n)], pa.uint16()),
            "i32": pa.array([i - n // 2 for i in range(n)], pa.int32()),
            "u32": pa.array([4_000_000_000 - i for i in range(n)], pa.uint32()),
            "i64": pa.array([i * 1_000_000_007 for i in range(n)], pa.int64()),
            "u64": pa.array([2**64 - 1 - i for i in range(n)], pa.uint64()),
            "f32": pa.array([i / 3 for i in range(n)], pa.float32()),
            "f64": pa.array([-i / 7 if i % 5 else None for i in range(n)], pa.float64()),
            "f16": pa.array([float(i % 50) for i in range(n)], pa.float16()),
            "str": pa.array([f"s{i:05d}" if i % 4 else None for i in range(n)]),
            "bin": pa.array([bytes([i % 256, 255 - i % 256]) for i in range(n)], pa.binary()),
            "fixed": pa.array([i.to_bytes(4, "big") for i in range(n)], pa.binary(4)),
            "dec32": pa.array([decimal.Decimal(i) / 100 for i in range(n)], pa.decimal128(7, 2)),
            "dec64": pa.array([decimal.Decimal(i * 1000) / 1000 for i in range(n)], pa.decimal128(15, 3)),
            "dec_flba": pa.array([decimal.Decimal(-i) / 10 for i in range(n)], pa.decimal128(30, 1)),
            "date": pa.array([datetime.date(2020, 1, 1) + datetime.timedelta(days=i) for i in range(n)]),
            "t_ms": pa.array([i * 1000 for i in range(n)], pa.time32("ms")),
            "t_us": pa.array([i * 1000 for i in range(n)], pa.time64("us")),
            "ts_ms": pa.array([base + datetime.timedelta(seconds=i) for i in range(n)], pa.timestamp("ms")),
            "ts_us_utc": pa.array(
                [base + datetime.timedelta(seconds=i) for i in range(n)], pa.timestamp("us", "UTC")
            ),
            "ts_ns": pa.array([i for i in range(n)], pa.timestamp("ns")),
            "json": pa.array([json.dumps({"a": i}) for i in range(n)], pa.json_()),
            "uuid": pa.array([i.to_bytes(16, "big") for i in range(n)], pa.uuid()),
            "null": pa.nulls(n),
            "list": pa.array([[i, i + 1] if i % 3 else [] for i in range(n)], pa.list_(pa.int32())),
            "struct": pa.array(
                [{"x": i, "y": None if i % 2 else f"y{i}", "z": [{"q": float(i)}]} for i in range(n)],
                pa.struct(
                    [("x", pa.int64()), ("y", pa.string()), ("z", pa.list_(pa.struct([("q", pa.float64())])))]
                ),
            ),
            "map": pa.array([[("k", i), ("l", -i)] for i in range(n)], pa.map_(pa.string(), pa.int64())),
        }
    )


@pytest.fixture(scope="module")
def pyarrow_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("pyarrow")
    table = _all_types_table(300)
    variants: dict[str, dict[str, Any]] = {
        "default": {"row_group_size": 100},
        "int96_gzip_v2": {
            "row_group_size": 128,
            "use_deprecated_int96_timestamps": True,
            "compression": "gzip",
            "data_page_version": "2.0",
            "store_decimal_as_integer": True,
        },
        "no_stats_no_dict": {"write_statistics": False, "use_dictionary": False, "compression": "none"},
        "mixed": {
            "compression": {"str": "zstd", "bin": "lz4", "i32": "brotli"},
            "column_encoding": {"i64": "DELTA_BINARY_PACKED", "f64": "BYTE_STREAM_SPLIT"},
            "use_dictionary": ["str"],
            "write_page_index": True,
            "write_statistics": ["i32", "str", "struct.x"],
            "sorting_columns": [pq.SortingColumn(3, descending=True, nulls_first=True)],
            "row_group_size": 50,
        },
    }
    paths = []
    for name, kwargs in variants.items():
        path = tmp / f"{name}.parquet"
        pq.write_table(table, path, **kwargs)
        paths.append(path)
    # Field ids and an empty file (no row groups).
    with_ids = pa.schema(
        [pa.field("a", pa.int32(), metadata={b"PARQUET:field_id": b"7"})], metadata={b"k": b"v"}
    )
    path = tmp / "field_ids.parquet"
    pq.write_table(pa.table({"a": [1, 2]}, schema=with_ids), path)
    paths.append(path)
    path = tmp / "empty.parquet"
    pq.write_table(table.slice(0, 0), path)
    paths.append(path)
    return paths


@pytest.fixture(scope="module")
def small_file() -> bytes:
    buf = io.BytesIO()
    table = _all_types_table(20).select(["i32", "str", "list", "struct", "dec_flba"])
    pq.write_table(table, buf, store_schema=False)  # no ARROW:schema: a small footer keeps tests fast
    return buf.getvalue()
