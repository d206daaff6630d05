"""Tests for service.parquet.footer.read and the Thrift tables and generated readers behind it:
agreement with pyarrow and DuckDB on real files, and robustness against hostile bytes (everything
bad must end as InvalidParquetError, quickly). The C accelerator has its own tests (test_accel.py)."""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import re
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.errors import InvalidParquetError
from service.parquet.footer import (
    PARQUET_MAGIC,
    TAIL_READ_SIZE,
    FileMetaData,
    LogicalType,
    SchemaElement,
    build_schema_tree,
    iter_leaves,
    parse_file_metadata,
    read_file_metadata,
    read_footer_bytes,
    validate_row_groups,
)
from tests.support.conformance import SHREDDED_VARIANT as CONFORMANCE_DIR
from tests.support.thrift import encode_struct, footer_of, s, schema_element, simple_footer, uvarint, zigzag

CONFORMANCE_FILES = sorted(CONFORMANCE_DIR.glob("*.parquet"))


# --- Helpers -------------------------------------------------------------------------------------


def read_path(path: Path) -> FileMetaData:
    with path.open("rb") as f:
        return read_file_metadata(f)


def parse_or_invalid(data: bytes) -> FileMetaData | None:
    """The robustness contract: a result (whose tree also builds or fails cleanly) or
    InvalidParquetError, nothing else."""
    try:
        meta = parse_file_metadata(data)
    except InvalidParquetError:
        return None
    with contextlib.suppress(InvalidParquetError):
        validate_row_groups(build_schema_tree(meta.schema), meta)
    return meta


_PA_UNITS = {"MILLIS": "milliseconds", "MICROS": "microseconds", "NANOS": "nanoseconds"}
_PA_SIMPLE = {
    "STRING": "String", "MAP": "Map", "LIST": "List", "ENUM": "Enum", "DATE": "Date", "UNKNOWN": "Null",
    "JSON": "JSON", "BSON": "BSON", "UUID": "UUID", "FLOAT16": "Float16",
}  # fmt: skip


def pyarrow_logical_json(lt: LogicalType) -> dict[str, Any]:
    """Our LogicalType in the shape of pyarrow's ``LogicalType.to_json()`` (a subset of its keys)."""
    if lt.kind in _PA_SIMPLE:
        return {"Type": _PA_SIMPLE[lt.kind]}
    if lt.kind == "DECIMAL":
        return {"Type": "Decimal", "precision": lt.precision, "scale": lt.scale}
    if lt.kind in ("TIME", "TIMESTAMP"):
        assert lt.unit is not None
        return {
            "Type": lt.kind.title(),
            "isAdjustedToUTC": lt.is_adjusted_to_utc,
            "timeUnit": _PA_UNITS[lt.unit],
        }
    if lt.kind == "INTEGER":
        return {"Type": "Int", "bitWidth": lt.bit_width, "isSigned": lt.is_signed}
    raise AssertionError(f"no pyarrow mapping for {lt}")


# "optional group field_id=2 var (Variant(1)) {" / "required binary field_id=-1 metadata;"
_SCHEMA_LINE = re.compile(
    r"^\s*(?P<rep>required|optional|repeated) (?P<type>group|\S+) field_id=(?P<fid>-?\d+) "
    r"(?P<name>[^ ;{]+)(?: \((?P<ann>.*)\))?\s*(?:\{|;)$"
)


def pyarrow_schema_lines(pa_meta: pq.FileMetaData) -> list[dict[str, str | None]]:
    lines = [m.groupdict() for line in str(pa_meta.schema).splitlines() if (m := _SCHEMA_LINE.match(line))]
    return lines


_STATS_FORMAT = {"INT32": "<i", "INT64": "<q", "FLOAT": "<f", "DOUBLE": "<d"}


def same_stat_value(raw: bytes, physical_type: str, expected: Any) -> bool:
    """Does our raw PLAIN-encoded statistic equal pyarrow's decoded ``min_raw``/``max_raw``?"""
    if physical_type in _STATS_FORMAT:
        fmt = _STATS_FORMAT[physical_type]
        (signed,) = struct.unpack(fmt, raw)
        if signed == expected:
            return True
        # pyarrow decodes unsigned logical types as unsigned.
        return fmt in ("<i", "<q") and struct.unpack(fmt.upper(), raw)[0] == expected
    if physical_type == "BOOLEAN":
        return raw == bytes([bool(expected)])
    return raw == (expected.encode() if isinstance(expected, str) else expected)


def assert_matches_pyarrow(meta: FileMetaData, pa_meta: pq.FileMetaData) -> None:
    assert meta.num_rows == pa_meta.num_rows
    assert len(meta.row_groups) == pa_meta.num_row_groups
    assert meta.created_by == pa_meta.created_by
    assert meta.footer_size == pa_meta.serialized_size
    expected_kv = {k.decode(): v.decode() for k, v in (pa_meta.metadata or {}).items()}
    assert {k: v for k, v in meta.key_value_metadata} == expected_kv

    # Schema, every element (groups included), in order.
    lines = pyarrow_schema_lines(pa_meta)
    assert [line["name"] for line in lines] == [e.name for e in meta.schema]
    for element, line in zip(meta.schema[1:], lines[1:], strict=True):
        assert element.repetition == str(line["rep"]).upper()
        assert (element.field_id if element.field_id is not None else -1) == int(str(line["fid"]))
        if line["type"] == "group":
            assert element.type is None
            assert element.num_children is not None
        lt = element.logical_type
        if lt is not None and element.type is None:
            assert line["ann"] is not None
            # Groups carry LIST / MAP / VARIANT annotations: "(List)", "(Map)", "(Variant(1))".
            expected = {"LIST": "List", "MAP": "Map"}.get(lt.kind) or f"Variant({lt.specification_version})"
            assert line["ann"] == expected

    # Leaves: physical type, levels, path, logical type.
    root = build_schema_tree(meta.schema)
    validate_row_groups(root, meta)
    leaves = list(iter_leaves(root))
    assert len(leaves) == pa_meta.num_columns
    for leaf in leaves:
        assert leaf.leaf_index is not None
        column = pa_meta.schema.column(leaf.leaf_index)
        assert ".".join(leaf.path) == column.path
        assert leaf.element.type == column.physical_type
        assert leaf.max_definition_level == column.max_definition_level
        assert leaf.max_repetition_level == column.max_repetition_level
        if leaf.element.type == "FIXED_LEN_BYTE_ARRAY":
            assert leaf.element.type_length == column.length
        lt = leaf.element.logical_type
        if lt is not None and lt.kind != "UNRECOGNIZED":
            actual = json.loads(column.logical_type.to_json())
            expected = pyarrow_logical_json(lt)
            assert {k: actual.get(k) for k in expected} == expected, leaf.path

    # Column chunks and statistics.
    for g, rg in enumerate(meta.row_groups):
        pa_rg = pa_meta.row_group(g)
        assert rg.num_rows == pa_rg.num_rows
        assert rg.total_byte_size == pa_rg.total_byte_size
        assert len(rg.columns) == pa_rg.num_columns
        for c, chunk in enumerate(rg.columns):
            pa_chunk = pa_rg.column(c)
            md = chunk.meta_data
            assert md is not None
            assert (chunk.file_path or "") == pa_chunk.file_path
            assert chunk.file_offset == pa_chunk.file_offset
            assert ".".join(md.path_in_schema) == pa_chunk.path_in_schema
            assert md.type == pa_chunk.physical_type
            assert md.num_values == pa_chunk.num_values
            assert md.total_compressed_size == pa_chunk.total_compressed_size
            assert md.total_uncompressed_size == pa_chunk.total_uncompressed_size
            assert md.data_page_offset == pa_chunk.data_page_offset
            assert md.dictionary_page_offset == pa_chunk.dictionary_page_offset
            # pyarrow names LZ4_RAW "LZ4" and the deprecated Hadoop LZ4 "LZ4_HADOOP".
            assert {"LZ4_RAW": "LZ4", "LZ4": "LZ4_HADOOP"}.get(md.codec, md.codec) == pa_chunk.compression
            assert set(md.encodings) == set(pa_chunk.encodings)
            assert (chunk.column_index_offset is not None) == pa_chunk.has_column_index
            assert (chunk.offset_index_offset is not None) == pa_chunk.has_offset_index
            stats, pa_stats = md.statistics, pa_chunk.statistics
            if pa_stats is None:
                continue
            assert stats is not None
            # "Readers MUST distinguish between null_count not being present and null_count == 0."
            assert stats.null_count == (pa_stats.null_count if pa_stats.has_null_count else None)
            assert stats.distinct_count == (pa_stats.distinct_count if pa_stats.has_distinct_count else None)
            if pa_stats.has_min_max:
                low = stats.min_value if stats.min_value is not None else stats.min
                high = stats.max_value if stats.max_value is not None else stats.max
                assert low is not None
                assert high is not None
                assert same_stat_value(low, md.type, pa_stats.min_raw), (
                    md.path_in_schema,
                    low,
                    pa_stats.min_raw,
                )
                assert same_stat_value(high, md.type, pa_stats.max_raw), (
                    md.path_in_schema,
                    high,
                    pa_stats.max_raw,
                )


def assert_matches_duckdb(path: Path, meta: FileMetaData) -> None:
    con = duckdb.connect()
    rows = con.execute(
        "SELECT name, type, type_length, repetition_type, num_children, converted_type, scale, precision, "
        "field_id FROM parquet_schema(?) ORDER BY column_id",
        [str(path)],
    ).fetchall()
    assert len(rows) == len(meta.schema)
    for element, row in zip(meta.schema, rows, strict=True):
        name, type_, type_length, repetition, num_children, converted, scale, precision, field_id = row
        assert element.name == name
        assert element.type == type_
        assert element.type_length == (int(type_length) if type_length is not None else None)
        if element.repetition is not None:
            assert element.repetition == repetition
        assert element.num_children == num_children
        assert element.converted_type == converted
        assert (element.scale, element.precision, element.field_id) == (scale, precision, field_id)

    chunks = con.execute(
        "SELECT row_group_id, column_id, num_values, stats_null_count, min_is_exact, max_is_exact, "
        "total_compressed_size FROM parquet_metadata(?) ORDER BY row_group_id, column_id",
        [str(path)],
    ).fetchall()
    ours = [
        (g, c, chunk.meta_data, chunk.meta_data.statistics if chunk.meta_data else None)
        for g, rg in enumerate(meta.row_groups)
        for c, chunk in enumerate(rg.columns)
    ]
    assert len(chunks) == len(ours)
    for (g, c, md, stats), row in zip(ours, chunks, strict=True):
        assert md is not None
        assert row[:3] == (g, c, md.num_values)
        assert row[6] == md.total_compressed_size
        if stats is not None:
            assert (stats.null_count, stats.is_min_value_exact, stats.is_max_value_exact) == row[3:6]

    (orders,) = con.execute("SELECT column_orders FROM parquet_file_metadata(?)", [str(path)]).fetchone() or (
        None,
    )
    if meta.column_orders is None:
        assert not orders
    else:
        assert [o.startswith("ColumnOrder(TYPE_ORDER=") for o in orders] == [
            o == "TYPE_ORDER" for o in meta.column_orders
        ]


# --- Files to compare on -------------------------------------------------------------------------
# pyarrow's files (pyarrow_files, small_file) are in conftest.py: the schema tree tests use them too.


@pytest.fixture(scope="module")
def duckdb_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    tmp = tmp_path_factory.mktemp("duckdb")
    con = duckdb.connect()
    queries = {
        "variant": "SELECT {'a': i}::VARIANT AS v FROM range(10) t(i)",
        "mixed": """
            SELECT (i % 100)::TINYINT a, (i % 200)::UTINYINT b, i::USMALLINT c, i::UBIGINT d, i::HUGEINT e,
                   i::FLOAT f, (i / 3)::DECIMAL(4, 1) g, (i / 3)::DECIMAL(18, 3) h, (i / 3)::DECIMAL(30, 5) k,
                   DATE '2020-01-01' + i::INT l, TIMESTAMP '2020-01-01' + INTERVAL (i) SECOND m,
                   TIMESTAMPTZ '2020-01-01' + INTERVAL (i) SECOND n, TIMESTAMP_NS '2020-01-01' o, TIME '01:02:03' p,
                   uuid() q, [i, i + 1] r, {'x': i, 'y': 'a' || i} s, MAP {'k': i} t, INTERVAL (i) DAY u,
                   'blob'::BLOB w, i % 2 = 0 x, '{"a":1}'::JSON y, CASE WHEN i % 2 = 0 THEN NULL ELSE 'v' END z,
                   {'a': i, 'b': [1, 2], 'c': 'x' || i}::VARIANT var
            FROM range(2500) t(i)""",
    }
    paths = []
    for name, query in queries.items():
        path = tmp / f"{name}.parquet"
        con.execute(f"COPY ({query}) TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 1000)")
        paths.append(path)
    return paths


# --- Agreement with pyarrow and DuckDB -----------------------------------------------------------


def test_conformance_files_exist() -> None:
    assert len(CONFORMANCE_FILES) > 100


def test_conformance_shredded_variant_files_match_pyarrow() -> None:
    for path in CONFORMANCE_FILES:
        meta = read_path(path)
        assert_matches_pyarrow(meta, pq.read_metadata(path))


def test_conformance_files_match_duckdb_sample() -> None:
    # DuckDB's table functions are slower to call; a spread of files covers the same writer.
    for path in CONFORMANCE_FILES[::10]:
        assert_matches_duckdb(path, read_path(path))


def test_conformance_variant_annotation() -> None:
    meta = read_path(CONFORMANCE_FILES[0])
    root = build_schema_tree(meta.schema)
    var = root.child("var")
    assert var is not None
    assert var.element.logical_type == LogicalType("VARIANT", specification_version=1)
    assert [c.name for c in var.children][:2] == ["metadata", "value"]
    assert meta.column_orders is not None
    assert set(meta.column_orders) == {"TYPE_ORDER"}


def test_pyarrow_written_files(pyarrow_files: list[Path]) -> None:
    for path in pyarrow_files:
        meta = read_path(path)
        assert_matches_pyarrow(meta, pq.read_metadata(path))
        assert_matches_duckdb(path, meta)


def test_pyarrow_details(pyarrow_files: list[Path]) -> None:
    by_name = {p.stem: read_path(p) for p in pyarrow_files}
    default = by_name["default"]
    assert len(default.row_groups) == 3
    schema: dict[str, SchemaElement] = {}
    for e in default.schema:
        schema.setdefault(e.name, e)  # top-level columns come before same-named nested ones
    assert schema["dec_flba"].type == "FIXED_LEN_BYTE_ARRAY"
    assert schema["dec_flba"].logical_type == LogicalType("DECIMAL", precision=30, scale=1)
    assert (schema["dec_flba"].precision, schema["dec_flba"].scale) == (30, 1)
    assert schema["ts_us_utc"].logical_type == LogicalType(
        "TIMESTAMP", is_adjusted_to_utc=True, unit="MICROS"
    )
    assert schema["ts_ns"].logical_type == LogicalType("TIMESTAMP", is_adjusted_to_utc=False, unit="NANOS")
    assert schema["u64"].logical_type == LogicalType("INTEGER", bit_width=64, is_signed=False)
    assert schema["u64"].converted_type == "UINT_64"
    assert schema["uuid"].logical_type == LogicalType("UUID")
    assert schema["null"].logical_type == LogicalType("UNKNOWN")
    assert schema["f16"].logical_type == LogicalType("FLOAT16")
    assert schema["list"].logical_type == LogicalType("LIST")
    assert schema["map"].converted_type == "MAP"
    assert all(kv[0] == "ARROW:schema" for kv in default.key_value_metadata)

    int96 = {e.name: e for e in by_name["int96_gzip_v2"].schema}
    assert int96["ts_ms"].type == "INT96"
    assert int96["dec32"].type == "INT32"
    assert {c.meta_data.codec for c in by_name["int96_gzip_v2"].row_groups[0].columns if c.meta_data} == {
        "GZIP"
    }

    # write_statistics=False: no Statistics struct at all, which is not the same as zero nulls.
    no_stats = by_name["no_stats_no_dict"]
    assert all(
        c.meta_data and c.meta_data.statistics is None for rg in no_stats.row_groups for c in rg.columns
    )
    assert all(
        c.meta_data and c.meta_data.dictionary_page_offset is None for c in no_stats.row_groups[0].columns
    )

    mixed = by_name["mixed"]
    rg0 = mixed.row_groups[0]
    assert rg0.sorting_columns is not None
    assert rg0.sorting_columns[0].column_idx == 3
    assert rg0.sorting_columns[0].descending
    codecs = {c.meta_data.path_in_schema: c.meta_data.codec for c in rg0.columns if c.meta_data}
    assert codecs[("str",)] == "ZSTD"
    assert codecs[("i32",)] == "BROTLI"
    assert codecs[("bin",)] == "LZ4_RAW"
    encodings = {c.meta_data.path_in_schema: c.meta_data.encodings for c in rg0.columns if c.meta_data}
    assert "DELTA_BINARY_PACKED" in encodings[("i64",)]
    assert "BYTE_STREAM_SPLIT" in encodings[("f64",)]
    assert all(
        c.column_index_offset is not None for c in rg0.columns if c.meta_data and c.meta_data.statistics
    )
    stats_on = {c.meta_data.path_in_schema for c in rg0.columns if c.meta_data and c.meta_data.statistics}
    assert ("i32",) in stats_on
    assert ("i64",) not in stats_on
    dict_chunk = next(c for c in rg0.columns if c.meta_data and c.meta_data.path_in_schema == ("str",))
    assert dict_chunk.meta_data is not None
    assert dict_chunk.meta_data.dictionary_page_offset is not None
    assert dict_chunk.meta_data.encoding_stats is not None
    assert {s.page_type for s in dict_chunk.meta_data.encoding_stats} == {"DICTIONARY_PAGE", "DATA_PAGE"}

    ids = by_name["field_ids"]
    assert ids.schema[1].field_id == 7
    assert ("k", "v") in ids.key_value_metadata

    empty = by_name["empty"]
    assert empty.num_rows == 0
    assert all(rg.num_rows == 0 for rg in empty.row_groups)  # pyarrow writes one empty row group
    assert len(empty.schema) > 1


def test_duckdb_written_files(duckdb_files: list[Path]) -> None:
    for path in duckdb_files:
        meta = read_path(path)
        assert_matches_pyarrow(meta, pq.read_metadata(path))
        assert_matches_duckdb(path, meta)


def test_duckdb_variant_group_annotation(duckdb_files: list[Path]) -> None:
    meta = read_path(duckdb_files[0])
    root = build_schema_tree(meta.schema)
    v = root.child("v")
    assert v is not None
    # DuckDB annotates the group with VariantType(specification_version=1) and no ConvertedType.
    assert v.element.logical_type == LogicalType("VARIANT", specification_version=1)
    assert v.element.converted_type is None
    typed = v.child("typed_value")
    assert typed is not None
    a = typed.child("a")
    assert a is not None
    value = a.child("value")
    assert value is not None
    assert value.path == ("v", "typed_value", "a", "value")
    assert value.is_leaf
    assert meta.created_by is not None
    assert meta.created_by.startswith("DuckDB")
    stats = meta.row_groups[0].columns[0].meta_data.statistics  # type: ignore[union-attr]
    assert stats is not None
    assert stats.is_min_value_exact is True


# --- read_file_metadata I/O behaviour ------------------------------------------------------------


class CountingReader(io.RawIOBase):
    """A seekable file that records reads and may return short reads, like a network stream."""

    def __init__(self, data: bytes, max_chunk: int | None = None) -> None:
        self._data = data
        self._pos = 0
        self.max_chunk = max_chunk
        self.reads: list[tuple[int, int]] = []

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = {0: offset, 1: self._pos + offset, 2: len(self._data) + offset}[whence]
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, size: int = -1) -> bytes:
        if size < 0:
            size = len(self._data) - self._pos
        if self.max_chunk is not None:
            size = min(size, self.max_chunk)
        self.reads.append((self._pos, size))
        chunk = self._data[self._pos : self._pos + size]
        self._pos += len(chunk)
        return chunk


def _big_footer_file() -> bytes:
    table = pa.table({f"column_with_a_long_name_{i:04d}": pa.array([i, i + 1]) for i in range(700)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def test_small_footer_is_one_read(pyarrow_files: list[Path]) -> None:
    data = pyarrow_files[0].read_bytes()
    reader = CountingReader(data)
    meta = read_file_metadata(reader)  # type: ignore[arg-type]
    assert len(reader.reads) == 1
    assert reader.reads[0] == (max(0, len(data) - TAIL_READ_SIZE), min(len(data), TAIL_READ_SIZE))
    assert meta == read_file_metadata(io.BytesIO(data), len(data))


def test_large_footer_takes_a_second_read() -> None:
    data = _big_footer_file()
    offset, length = read_footer_bytes(data[-8:], len(data))
    assert length > TAIL_READ_SIZE
    reader = CountingReader(data)
    meta = read_file_metadata(reader)  # type: ignore[arg-type]
    assert len(reader.reads) == 2
    assert reader.reads[1][0] == offset
    assert meta.footer_size == length
    assert len(meta.schema) == 701
    assert meta == parse_file_metadata(data[offset : offset + length])
    assert meta.num_rows == pq.read_metadata(io.BytesIO(data)).num_rows


def test_short_reads_are_retried(pyarrow_files: list[Path]) -> None:
    data = pyarrow_files[0].read_bytes()
    reader = CountingReader(data, max_chunk=1000)
    assert read_file_metadata(reader) == read_file_metadata(io.BytesIO(data))  # type: ignore[arg-type]


# --- Bad input -----------------------------------------------------------------------------------


def test_empty_and_tiny_files() -> None:
    for data in (b"", b"PAR1", b"PAR1PAR1", b"PAR1\x00\x00\x00\x00PAR"):
        with pytest.raises(InvalidParquetError, match="not a Parquet file"):
            read_file_metadata(io.BytesIO(data))


def test_wrong_trailing_magic(small_file: bytes) -> None:
    with pytest.raises(InvalidParquetError, match="trailing magic"):
        read_file_metadata(io.BytesIO(small_file[:-4] + b"PAR2"))


def test_wrong_leading_magic(small_file: bytes) -> None:
    with pytest.raises(InvalidParquetError, match="leading magic"):
        read_file_metadata(io.BytesIO(b"XXXX" + small_file[4:]))


def test_encrypted_footer(small_file: bytes) -> None:
    with pytest.raises(InvalidParquetError, match="encrypted footer not supported"):
        read_file_metadata(io.BytesIO(small_file[:-4] + b"PARE"))


def test_footer_length_larger_than_file(small_file: bytes) -> None:
    for length in (len(small_file) - 11, len(small_file), 2**32 - 1):
        data = small_file[:-8] + struct.pack("<I", length) + PARQUET_MAGIC
        with pytest.raises(InvalidParquetError, match="footer length"):
            read_file_metadata(io.BytesIO(data))


def test_file_shorter_than_stated_size(small_file: bytes) -> None:
    with pytest.raises(InvalidParquetError):
        read_file_metadata(io.BytesIO(small_file), file_size=len(small_file) + 100)


def test_every_truncation_of_a_footer_is_rejected(small_file: bytes) -> None:
    footer = footer_of(small_file)
    # The outer struct's stop byte is the footer's last byte, so no proper prefix is complete.
    for end in range(len(footer)):
        with pytest.raises(InvalidParquetError):
            parse_file_metadata(footer[:end])


def test_truncated_file_is_rejected(small_file: bytes) -> None:
    footer = footer_of(small_file)
    # Keep the length and magic but drop bytes before them: the length then overshoots or the
    # footer starts in the wrong place.
    for cut in (1, 10, len(footer) // 2):
        data = small_file[: -8 - cut] + small_file[-8:]
        with pytest.raises(InvalidParquetError):
            read_file_metadata(io.BytesIO(data))


@settings(max_examples=150, deadline=None, database=None)
@given(st.binary(max_size=600))
def test_random_bytes(data: bytes) -> None:
    parse_or_invalid(data)


@settings(max_examples=50, deadline=None, database=None)
@given(st.binary(max_size=300))
def test_random_files(body: bytes) -> None:
    data = PARQUET_MAGIC + body + struct.pack("<I", len(body)) + PARQUET_MAGIC
    with contextlib.suppress(InvalidParquetError):
        read_file_metadata(io.BytesIO(data))


@pytest.fixture(scope="module")
def real_footer() -> bytes:
    return footer_of(CONFORMANCE_FILES[0].read_bytes())


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(st.data())
def test_bit_flips_of_a_real_footer(real_footer: bytes, data: st.DataObject) -> None:
    flips = data.draw(
        st.lists(st.tuples(st.integers(0, len(real_footer) - 1), st.integers(0, 7)), min_size=1, max_size=4)
    )
    mutated = bytearray(real_footer)
    for index, bit in flips:
        mutated[index] ^= 1 << bit
    start = time.process_time()
    parse_or_invalid(bytes(mutated))
    assert time.process_time() - start < 0.5


def test_every_single_byte_change_of_a_footer(small_file: bytes) -> None:
    # Deterministic companion to the hypothesis test: each byte replaced by a few nasty values.
    footer = footer_of(small_file)
    for i in range(len(footer)):
        for value in (0x00, 0xFF, 0x0C, 0x19, footer[i] ^ 0x80):
            parse_or_invalid(footer[:i] + bytes([value]) + footer[i + 1 :])


# --- Synthetic footers (tests.support.thrift) ---------------------------------------------------


def test_synthetic_footer_roundtrip() -> None:
    meta = parse_file_metadata(simple_footer())
    assert meta.version == 1
    assert meta.num_rows == 3
    assert meta.schema[1] == SchemaElement("x", "INT64", None, "REQUIRED", None, None, None, None, None, None)
    chunk = meta.row_groups[0].columns[0]
    assert chunk.meta_data is not None
    assert chunk.meta_data.path_in_schema == ("x",)
    assert chunk.meta_data.statistics is None
    assert meta.key_value_metadata == ()
    assert meta.created_by is None
    assert meta.column_orders is None
    validate_row_groups(build_schema_tree(meta.schema), meta)
    # Long-form field headers ("0000tttt" + zigzag field id) decode the same.
    long_form = parse_file_metadata(simple_footer(long_form=True))
    assert dataclasses.replace(long_form, footer_size=meta.footer_size) == meta


def test_unknown_fields_of_every_type_are_skipped() -> None:
    unknown = [
        (20, ("bool", True)),
        (21, ("i8", -3)),
        (22, ("i16", 300)),
        (23, ("double", 1.5)),
        (24, ("uuid", bytes(16))),
        (25, ("map", "bin", "list", [(s("k"), ("list", "bool", [("bool", True), ("bool", False)]))])),
        (26, ("map", "i32", "i32", [])),
        (27, ("set", "i64", [("i64", 2**40)])),
        (28, ("struct", [(1, ("struct", [(1, ("list", "double", [("double", 2.0)]))]))])),
        (300, ("list", "struct", [("struct", [(5, ("bin", b"\xff\xfe"))])])),
    ]
    base = parse_file_metadata(simple_footer())
    meta = parse_file_metadata(simple_footer(meta_extra=unknown, chunk_md_extra=[(16, unknown[7][1])]))
    assert dataclasses.replace(meta, footer_size=base.footer_size) == base


def test_statistics_absent_fields_stay_none() -> None:
    stats = ("struct", [(3, ("i64", 0)), (5, ("bin", b"\x09")), (8, ("bool", False))])
    meta = parse_file_metadata(simple_footer(chunk_md_extra=[(12, stats)]))
    md = meta.row_groups[0].columns[0].meta_data
    assert md is not None
    assert md.statistics is not None
    assert md.statistics.null_count == 0
    assert md.statistics.max_value == b"\x09"
    assert md.statistics.is_min_value_exact is False
    assert md.statistics.min is None
    assert md.statistics.min_value is None
    assert md.statistics.distinct_count is None
    assert md.statistics.is_max_value_exact is None


def test_logical_types() -> None:
    def logical(member: int, body: list[tuple[int, tuple[Any, ...]]]) -> LogicalType | None:
        lt = ("struct", [(member, ("struct", body))])
        return parse_file_metadata(simple_footer(leaf_extra={"logical_type": lt})).schema[1].logical_type

    micros = ("struct", [(2, ("struct", []))])
    assert logical(8, [(1, ("bool", True)), (2, micros)]) == LogicalType(
        "TIMESTAMP", is_adjusted_to_utc=True, unit="MICROS"
    )
    assert logical(10, [(1, ("i8", 16)), (2, ("bool", False))]) == LogicalType(
        "INTEGER", bit_width=16, is_signed=False
    )
    assert logical(5, [(1, ("i32", 2)), (2, ("i32", 9))]) == LogicalType("DECIMAL", precision=9, scale=2)
    assert logical(16, []) == LogicalType("VARIANT")
    assert logical(16, [(1, ("i8", 1))]) == LogicalType("VARIANT", specification_version=1)
    assert logical(18, [(1, s("OGC:CRS84")), (2, ("i32", 1))]) == LogicalType(
        "GEOGRAPHY", crs="OGC:CRS84", algorithm="VINCENTY"
    )
    # Forward compatibility: an unknown member (and its unknown contents) is skipped.
    assert logical(40, [(1, ("list", "i32", [("i32", 1)]))]) == LogicalType("UNRECOGNIZED")
    # ... and so is an unknown TimeUnit.
    assert logical(7, [(1, ("bool", False)), (2, ("struct", [(9, ("struct", []))]))]) == LogicalType(
        "UNRECOGNIZED"
    )
    with pytest.raises(InvalidParquetError, match=r"DecimalType\.precision"):
        logical(5, [(1, ("i32", 2))])
    with pytest.raises(InvalidParquetError, match="more than one member"):
        parse_file_metadata(
            simple_footer(leaf_extra={"logical_type": ("struct", [(1, ("struct", [])), (3, ("struct", []))])})
        )


def test_column_orders() -> None:
    type_order = ("struct", [(1, ("struct", []))])
    other = ("struct", [(2, ("struct", []))])
    meta = parse_file_metadata(simple_footer(meta_extra=[(7, ("list", "struct", [type_order]))]))
    assert meta.column_orders == ("TYPE_ORDER",)
    meta = parse_file_metadata(simple_footer(meta_extra=[(7, ("list", "struct", [other]))]))
    assert meta.column_orders == ("UNKNOWN",)
    meta = parse_file_metadata(simple_footer(meta_extra=[(7, ("list", "struct", [type_order, other]))]))
    with pytest.raises(InvalidParquetError, match="column orders"):
        validate_row_groups(build_schema_tree(meta.schema), meta)


def test_unknown_enum_values() -> None:
    meta = parse_file_metadata(simple_footer(chunk_md_extra=[]))
    assert meta.row_groups[0].columns[0].meta_data is not None
    # Open enums (codecs, encodings) keep unknown values visible; closed ones (physical type) fail.
    footer = simple_footer().replace(b"\x19\x15\x00", b"\x19\x15\x62")  # encodings: [49]
    md = parse_file_metadata(footer).row_groups[0].columns[0].meta_data
    assert md is not None
    assert md.encodings == ("UNKNOWN_49",)
    with pytest.raises(InvalidParquetError, match=r"SchemaElement\.type has unknown value 9"):
        parse_file_metadata(simple_footer(leaf_extra={"type": ("i32", 9)}))


def test_missing_required_fields_are_named() -> None:
    full = simple_footer()
    meta_fields = [(1, ("i32", 1)), (3, ("i64", 3)), (4, ("list", "struct", []))]
    with pytest.raises(InvalidParquetError, match=r"required field FileMetaData\.schema is missing"):
        parse_file_metadata(encode_struct(meta_fields))
    bad_leaf = schema_element("x", type=("i32", 2))[1]
    nameless = ("struct", [f for f in bad_leaf if f[0] != 4])
    with pytest.raises(InvalidParquetError, match=r"SchemaElement\.name"):
        parse_file_metadata(encode_struct([(1, ("i32", 1)), (2, ("list", "struct", [nameless]))]))
    assert parse_file_metadata(full).num_rows == 3


def test_type_mismatch_is_rejected() -> None:
    with pytest.raises(
        InvalidParquetError, match=r"FileMetaData\.num_rows should be integer but is encoded as binary"
    ):
        parse_file_metadata(encode_struct([(1, ("i32", 1)), (3, s("three"))]))


def test_invalid_utf8_name() -> None:
    footer = simple_footer(leaf_name=b"\xff")
    with pytest.raises(InvalidParquetError, match="UTF-8"):
        parse_file_metadata(footer)
    # created_by is informational: decoded with replacement characters rather than rejected.
    meta = parse_file_metadata(simple_footer(meta_extra=[(6, ("bin", b"writer \xff"))]))
    assert meta.created_by == "writer \ufffd"


def test_overlong_varint() -> None:
    with pytest.raises(InvalidParquetError, match="varint longer than 10 bytes"):
        parse_file_metadata(b"\x15" + b"\xff" * 11 + b"\x01\x00")
    with pytest.raises(InvalidParquetError, match="varint"):
        parse_file_metadata(b"\x16" + b"\xff" * 9 + b"\x7f\x00")  # 10 bytes but > 64 bits


def test_huge_list_size_fails_fast() -> None:
    data = b"\x15\x02\x19\xfc" + uvarint(2**31 - 1) + b"\x00" * 10
    start = time.process_time()
    with pytest.raises(InvalidParquetError, match="claims 2147483647 elements"):
        parse_file_metadata(data)
    assert time.process_time() - start < 0.1


def test_negative_lengths_are_impossible() -> None:
    # Lengths are unsigned varints; a 5-byte one with all bits set is just huge, not negative.
    with pytest.raises(InvalidParquetError, match="past the end"):
        parse_file_metadata(b"\x15\x02\x58" + b"\xff\xff\xff\xff\x0f" + b"abc\x00")  # created_by


def test_deep_nesting_bombs() -> None:
    depth = 5000
    # Unknown field 20 holding struct{1: struct{1: ...}}.
    struct_bomb = b"\x0c" + uvarint(zigzag(20)) + b"\x1c" * depth + b"\x00" * (depth + 2)
    # Unknown field 20 holding list<list<list<...>>> with one element each.
    list_bomb = b"\x09" + uvarint(zigzag(20)) + b"\x19" * depth + b"\x00" * 3
    # A known field: nested LogicalType members are unknown structs.
    logical_bomb = (
        b"\x29\x1c"  # field 2 (schema): list of 1 struct
        + b"\x48\x01x"  # SchemaElement field 4 (name) = "x"
        + b"\x6c"  # field 10 (logicalType): a struct
        + b"\x0c"
        + uvarint(zigzag(40))  # LogicalType member 40: unknown, holding nested structs
        + b"\x1c" * depth
        + b"\x00" * (depth + 4)
    )
    for data in (struct_bomb, list_bomb, logical_bomb):
        start = time.process_time()
        with pytest.raises(InvalidParquetError, match="nested more than"):
            parse_file_metadata(data)
        assert time.process_time() - start < 0.1


def test_results_are_frozen() -> None:
    meta = parse_file_metadata(simple_footer())
    with pytest.raises(dataclasses.FrozenInstanceError):
        meta.num_rows = 5  # type: ignore[misc]
    assert not hasattr(meta, "__dict__")


def _iter_all_footers(paths: list[Path]) -> Iterator[bytes]:
    for path in paths:
        yield footer_of(path.read_bytes())


def test_reparse_is_deterministic(pyarrow_files: list[Path]) -> None:
    for footer in _iter_all_footers(pyarrow_files):
        assert parse_file_metadata(footer) == parse_file_metadata(bytearray(footer))  # type: ignore[arg-type]
