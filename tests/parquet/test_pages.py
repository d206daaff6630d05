"""Tests for service.parquet.pages: the NaN / first-zero scan of FLOAT and DOUBLE column chunks.

Every answer is checked against pyarrow's own reading of the same chunk, on files written by
pyarrow (every codec, dictionary on and off with PLAIN fallback, data pages v1 and v2, many pages,
BYTE_STREAM_SPLIT, nested columns) and by DuckDB. The common layouts must take the fast path
(not ``None``); corrupt chunks must give ``None``, never an exception.
"""

from __future__ import annotations

import dataclasses
import io
import math
import random
import struct
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from service.parquet import pages
from service.parquet.footer import (
    ColumnMetaData,
    FileMetaData,
    SchemaNode,
    build_schema_tree,
    iter_leaves,
    read_file_metadata,
)
from service.parquet.io import decompress
from service.parquet.pages import FloatScan, scan_float_chunk
from tests.support.thrift import uvarint

NAN = float("nan")
INF = float("inf")

# --- Helpers -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Chunk:
    row_group: int
    leaf: SchemaNode
    cm: ColumnMetaData


def float_chunks(meta: FileMetaData) -> Iterator[Chunk]:
    root = build_schema_tree(meta.schema)
    leaves = [leaf for leaf in iter_leaves(root) if leaf.element.type in ("FLOAT", "DOUBLE")]
    for rg, group in enumerate(meta.row_groups):
        for leaf in leaves:
            assert leaf.leaf_index is not None
            cm = group.columns[leaf.leaf_index].meta_data
            assert cm is not None
            yield Chunk(rg, leaf, cm)


def leaf_values(path: Path, chunk: Chunk) -> list[float]:
    """The non-null values of ``chunk`` in row order, as pyarrow reads them."""
    names = chunk.leaf.path
    table = pq.ParquetFile(path).read_row_group(chunk.row_group, columns=[names[0]])
    arr: Any = table.column(0).combine_chunks()
    i = 1
    while i < len(names):
        if pa.types.is_list(arr.type) or pa.types.is_large_list(arr.type):
            # A three-level list: <repeated group list> <element>, one Arrow list level.
            arr = arr.flatten()
            i += 2
        else:
            assert pa.types.is_struct(arr.type), arr.type
            # flatten() pushes the struct's nulls down into its fields.
            arr = arr.flatten()[arr.type.get_field_index(names[i])]
            i += 1
    return [float(v) for v in arr.drop_null().to_pylist()]


def truth(values: list[float]) -> FloatScan:
    first_zero = next((v for v in values if v == 0.0), None)
    return FloatScan(any(math.isnan(v) for v in values), first_zero)


def same(a: FloatScan, b: FloatScan) -> bool:
    if a.has_nan != b.has_nan or (a.first_zero is None) != (b.first_zero is None):
        return False
    # -0.0 == 0.0: compare the signs too.
    return a.first_zero is None or math.copysign(1.0, a.first_zero) == math.copysign(1.0, b.first_zero)


def check_file(path: Path) -> list[tuple[Chunk, FloatScan | None]]:
    """Scan every float chunk of ``path``; each answer that is not None must match pyarrow."""
    out = []
    with path.open("rb") as f:
        meta = read_file_metadata(f)
        for chunk in float_chunks(meta):
            got = scan_float_chunk(f, chunk.cm, chunk.leaf)
            if got is not None:
                want = truth(leaf_values(path, chunk))
                assert same(got, want), (path.name, chunk.leaf.path, chunk.row_group, got, want)
            out.append((chunk, got))
    assert out, "no float column in the file"
    return out


def assert_fast(results: list[tuple[Chunk, FloatScan | None]]) -> None:
    slow = [(c.leaf.path, c.row_group, c.cm.codec, c.cm.encodings) for c, r in results if r is None]
    assert not slow, f"fell back to pyarrow for {slow}"


# --- Data ----------------------------------------------------------------------------------------

N = 600


def _patterns() -> dict[str, list[float | None]]:
    rng = random.Random(7)
    randoms: list[float | None] = [rng.uniform(-1e6, 1e6) if i % 9 else None for i in range(N)]
    late_zeros = list(randoms)
    # Distinct values first (so a small dictionary falls back to PLAIN), zeros only at the end.
    late_zeros[N - 40] = -0.0
    late_zeros[N - 20] = 0.0
    late_nan = list(randoms)
    late_nan[N - 30] = NAN
    few = [1.5, None, -2.25, 3.0, INF, -INF]
    return {
        "clean": [few[i % len(few)] for i in range(N)],
        "neg_zero_first": [[7.0, None, -0.0, 2.0, 0.0, NAN][i % 6] for i in range(N)],
        "pos_zero_first": [[None, 0.0, 1.0, -0.0][i % 4] for i in range(N)],
        "only_neg_zero": [[None, -0.0, 5.0][i % 3] for i in range(N)],
        "zero_in_middle": [1.0 + (i % 5) if i != N // 2 else -0.0 for i in range(N)],
        "all_null": [None] * N,
        "nan_only": [NAN if i % 2 else None for i in range(N)],
        "random": randoms,
        "random_late_zeros": late_zeros,
        "random_late_nan": late_nan,
        # Subnormals and tiny values share a zero's top byte (0x00 / 0x80) without being zero.
        "tiny_then_zero": [[5e-324, None, -1e-310, 1e-300, -2e-320][i % 5] if i < N - 10 else -0.0 for i in range(N)],
        "tiny_only": [[5e-324, -1e-310, 1e-300, None][i % 4] for i in range(N)],
    }


def pyarrow_table() -> pa.Table:
    cols: dict[str, pa.Array] = {}
    for name, values in _patterns().items():
        cols[f"{name}_d"] = pa.array(values, pa.float64())
        cols[f"{name}_f"] = pa.array(values, pa.float32())
    base = _patterns()["neg_zero_first"]
    # Required (no definition levels), a struct field and a list element (repetition levels).
    cols["required_d"] = pa.array([v if v is not None else 4.0 for v in base], pa.float64())
    cols["struct"] = pa.StructArray.from_arrays(
        [pa.array(base, pa.float64()), pa.array(base, pa.float32())],
        names=["x", "y"],
        mask=pa.array([i % 10 == 3 for i in range(N)]),
    )
    cols["list"] = pa.array(
        [None if i % 13 == 0 else [] if i % 7 == 0 else [base[i], base[(i + 1) % N], -0.0] for i in range(N)],
        pa.list_(pa.float64()),
    )
    schema = pa.schema(
        [pa.field(k, v.type, nullable=(k != "required_d")) for k, v in cols.items()]
    )
    return pa.table(cols, schema=schema)


@pytest.fixture(scope="module")
def table() -> pa.Table:
    return pyarrow_table()


# --- Files written by pyarrow --------------------------------------------------------------------

CODECS = ["NONE", "SNAPPY", "GZIP", "BROTLI", "ZSTD", "LZ4"]


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("dictionary", [True, False], ids=["dict", "plain"])
@pytest.mark.parametrize("codec", CODECS)
def test_pyarrow_files(tmp_path: Path, table: pa.Table, codec: str, dictionary: bool, version: str) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(
        table,
        path,
        compression=codec,
        use_dictionary=dictionary,
        data_page_version=version,
        # Many pages per chunk, two row groups, and a dictionary small enough that the
        # high-cardinality columns fall back to PLAIN pages after a few dictionary pages.
        data_page_size=512,
        row_group_size=N // 2,
        dictionary_pagesize_limit=1024,
    )
    results = check_file(path)
    assert_fast(results)
    encodings = {e for c, _ in results for e in c.cm.encodings}
    assert ("RLE_DICTIONARY" in encodings) == dictionary
    pages_per_chunk = max(c.cm.total_uncompressed_size for c, _ in results) // 512
    assert pages_per_chunk > 2


@pytest.mark.parametrize("version", ["1.0", "2.0"])
@pytest.mark.parametrize("codec", ["NONE", "SNAPPY", "ZSTD"])
def test_pyarrow_byte_stream_split(tmp_path: Path, table: pa.Table, codec: str, version: str) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(
        table,
        path,
        compression=codec,
        use_dictionary=False,
        use_byte_stream_split=True,
        data_page_version=version,
        data_page_size=1024,
    )
    results = check_file(path)
    assert_fast(results)
    assert all("BYTE_STREAM_SPLIT" in c.cm.encodings for c, _ in results)


def test_answers_on_known_data(tmp_path: Path, table: pa.Table) -> None:
    """Not only agreement with pyarrow: the expected answers, spelled out."""
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    got = {(".".join(c.leaf.path), c.row_group): r for c, r in check_file(path)}
    assert got[("clean_d", 0)] == FloatScan(False, None)
    assert got[("all_null_f", 0)] == FloatScan(False, None)
    assert got[("nan_only_d", 0)] == FloatScan(True, None)
    for name in ("neg_zero_first_d", "neg_zero_first_f", "only_neg_zero_d", "zero_in_middle_f", "list.list.element"):
        r = got[(name, 0)]
        assert r is not None and r.first_zero == 0.0 and math.copysign(1, r.first_zero) == -1, name
    r = got[("pos_zero_first_d", 0)]
    assert r is not None and r.first_zero == 0.0 and math.copysign(1, r.first_zero) == 1
    assert got[("random_late_nan_f", 0)] == FloatScan(True, None)
    r = got[("random_late_zeros_d", 0)]
    assert r is not None and not r.has_nan and r.first_zero is not None
    assert math.copysign(1, r.first_zero) == -1


@pytest.mark.parametrize("payloads", [1, 5, 40])
def test_dictionary_of_many_nans(payloads: int) -> None:
    """NaNs with distinct payloads are distinct dictionary entries; the indices are searched for
    all of them, up to a bound past which the scan leaves the chunk to pyarrow."""
    nans = b"".join(struct.pack("<Q", 0x7FF8000000000000 | p) for p in range(1, payloads + 1))
    raw = struct.pack("<d", 1.0) * 30 + nans + struct.pack("<d", -0.0) * 3
    n = len(raw) // 8
    arr = pa.Array.from_buffers(pa.float64(), n, [None, pa.py_buffer(raw)])
    buf = io.BytesIO()
    pq.write_table(pa.table({"d": arr}), buf, data_page_size=64)
    meta = read_file_metadata(buf)
    (chunk,) = float_chunks(meta)
    assert "RLE_DICTIONARY" in chunk.cm.encodings
    got = scan_float_chunk(buf, chunk.cm, chunk.leaf)
    if payloads > 16:
        assert got is None
    else:
        assert got is not None and got.has_nan and got.first_zero == 0.0
        assert math.copysign(1, got.first_zero) == -1


def test_native_and_in_memory_files(tmp_path: Path, table: pa.Table) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    expected = [r for _, r in check_file(path)]
    data = path.read_bytes()
    meta = read_file_metadata(io.BytesIO(data))
    for f in (pa.OSFile(str(path)), pa.memory_map(str(path)), pa.BufferReader(data), io.BytesIO(data)):
        try:
            assert [scan_float_chunk(f, c.cm, c.leaf) for c in float_chunks(meta)] == expected
        finally:
            f.close()


def test_bytes_in_hand_are_used_instead_of_reads(tmp_path: Path, table: pa.Table) -> None:
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    expected = [r for _, r in check_file(path)]
    data = path.read_bytes()
    meta = read_file_metadata(io.BytesIO(data))

    class NoReads(io.BytesIO):
        def read(self, size: int | None = -1) -> bytes:
            raise AssertionError("read although the bytes were in hand")

    # The whole file in hand (what a small file's footer read brings): no read at all.
    f = NoReads(data)
    assert [scan_float_chunk(f, c.cm, c.leaf, (0, data)) for c in float_chunks(meta)] == expected
    # Only the tail in hand: chunks outside it are read from the file, with the same answers.
    cut = len(data) // 2
    f2 = io.BytesIO(data)
    assert [scan_float_chunk(f2, c.cm, c.leaf, (cut, data[cut:])) for c in float_chunks(meta)] == expected


# --- Files written by DuckDB ---------------------------------------------------------------------

DUCKDB_QUERY = """
SELECT
    CASE WHEN i % 7 = 0 THEN NULL WHEN i = 500 THEN 'nan'::DOUBLE WHEN i = 800 THEN '-0.0'::DOUBLE
         WHEN i = 900 THEN 0.0::DOUBLE ELSE random() END AS d,
    (CASE WHEN i % 7 = 0 THEN NULL ELSE random() END)::FLOAT AS fl,
    ((i % 4) - 1.5)::DOUBLE AS low_card,
    {'x': CASE WHEN i % 5 = 0 THEN NULL WHEN i % 3 = 0 THEN '-0.0'::DOUBLE ELSE (i % 3)::DOUBLE END,
     'y': CASE WHEN i = 1234 THEN 'nan'::FLOAT ELSE (i % 4)::FLOAT END} AS s,
    CASE WHEN i % 11 = 0 THEN NULL WHEN i % 13 = 0 THEN []
         ELSE [i::DOUBLE, '-0.0'::DOUBLE, NULL, CASE WHEN i > 2000 THEN 'nan'::DOUBLE ELSE 1.0 END] END AS l,
    [{'z': (i % 2)::DOUBLE}, NULL] AS ls
FROM range(3000) t(i)
"""


@pytest.mark.parametrize(
    "options",
    [
        "COMPRESSION zstd",
        "COMPRESSION snappy",
        "COMPRESSION uncompressed",
        "COMPRESSION gzip",
        "COMPRESSION brotli",
        "COMPRESSION lz4",
        "COMPRESSION zstd, PARQUET_VERSION v2",
        "COMPRESSION snappy, PARQUET_VERSION v2",
        "COMPRESSION snappy, ROW_GROUP_SIZE 1000",
    ],
)
def test_duckdb_files(tmp_path: Path, options: str) -> None:
    path = tmp_path / "d.parquet"
    con = duckdb.connect()
    try:
        con.execute(f"COPY ({DUCKDB_QUERY}) TO '{path}' (FORMAT parquet, {options})")
    finally:
        con.close()
    results = check_file(path)
    assert_fast(results)
    paths = {".".join(c.leaf.path) for c, _ in results}
    assert {"s.x", "l.list.element", "ls.list.element.z"} <= paths


# --- Corrupt and inconsistent chunks -------------------------------------------------------------


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory, table: pa.Table) -> tuple[bytes, list[Chunk]]:
    path = tmp_path_factory.mktemp("pages") / "s.parquet"
    small = table.select(["neg_zero_first_d", "random_d", "struct", "clean_f"])
    pq.write_table(small, path, dictionary_pagesize_limit=1024, data_page_size=512)
    data = path.read_bytes()
    return data, list(float_chunks(read_file_metadata(io.BytesIO(data))))


def _start(cm: ColumnMetaData) -> int:
    dpo = cm.dictionary_page_offset
    return dpo if dpo is not None and 4 <= dpo < cm.data_page_offset else cm.data_page_offset


def test_corrupt_metadata_gives_none(sample: tuple[bytes, list[Chunk]]) -> None:
    data, chunks = sample
    f = io.BytesIO(data)
    first, second = chunks[0], chunks[1]
    assert scan_float_chunk(f, first.cm, first.leaf) is not None
    cm, leaf = first.cm, first.leaf
    bad = [
        # Truncated chunk: the last page's body does not fit.
        dataclasses.replace(cm, total_compressed_size=cm.total_compressed_size - 1),
        # Past the chunk: the next chunk's pages make num_values disagree.
        dataclasses.replace(cm, total_compressed_size=cm.total_compressed_size + second.cm.total_compressed_size),
        dataclasses.replace(cm, total_compressed_size=0),
        dataclasses.replace(cm, total_compressed_size=10**15),
        dataclasses.replace(cm, num_values=cm.num_values + 1),
        dataclasses.replace(cm, num_values=cm.num_values - 1),
        dataclasses.replace(cm, data_page_offset=len(data) + 10, dictionary_page_offset=None),
        # Starting at the data pages skips the dictionary its indices need.
        dataclasses.replace(cm, dictionary_page_offset=None, total_compressed_size=cm.total_compressed_size - 30),
        dataclasses.replace(cm, codec="LZO"),
        dataclasses.replace(cm, codec="LZ4"),
        dataclasses.replace(cm, codec="UNCOMPRESSED"),
        dataclasses.replace(cm, codec="ZSTD"),
        dataclasses.replace(cm, type="INT64"),
    ]
    for i, c in enumerate(bad):
        assert scan_float_chunk(f, c, leaf) is None, i
    # A leaf of another physical type, or the wrong nesting for the levels.
    int_leaf = dataclasses.replace(leaf, element=dataclasses.replace(leaf.element, type="INT64"))
    assert scan_float_chunk(f, cm, int_leaf) is None
    assert scan_float_chunk(f, cm, dataclasses.replace(leaf, max_repetition_level=1)) is None


def test_dictionary_offset_zero_is_ignored(sample: tuple[bytes, list[Chunk]]) -> None:
    data, chunks = sample
    f = io.BytesIO(data)
    for c in chunks:
        expected = scan_float_chunk(f, c.cm, c.leaf)
        if c.cm.dictionary_page_offset is None:
            # "dictionary_page_offset = 0" from writers that mean "none".
            assert scan_float_chunk(f, dataclasses.replace(c.cm, dictionary_page_offset=0), c.leaf) == expected
        else:
            # With the (wrong) 0 the dictionary is looked for at data_page_offset.
            moved = dataclasses.replace(c.cm, dictionary_page_offset=0)
            assert scan_float_chunk(f, moved, c.leaf) in (None, expected)


def test_corrupt_pages_give_none(sample: tuple[bytes, list[Chunk]]) -> None:
    data, chunks = sample
    for c in chunks:
        start = _start(c.cm)
        end = start + c.cm.total_compressed_size
        cases = [
            data[:start] + b"\xff" * 16 + data[start + 16 :],  # garbage page header
            data[:start] + b"\x15\x00" + data[start + 2 :],  # header cut short (type only)
            data[: start + c.cm.total_compressed_size // 2],  # file ends inside the chunk
            data[: end - 3] + b"\x00\x00\x00" + data[end:],  # last page's body damaged
        ]
        for i, bad in enumerate(cases):
            r = scan_float_chunk(io.BytesIO(bad), c.cm, c.leaf)
            if i < 3:
                assert r is None, (c.leaf.path, i)
            else:
                assert r is None or isinstance(r, FloatScan)


def test_random_damage_never_raises(sample: tuple[bytes, list[Chunk]]) -> None:
    """Byte flips, overwrites and cuts anywhere in each chunk: None or an answer, quickly."""
    data, chunks = sample
    rng = random.Random(11)
    t0 = time.process_time()
    for n in range(600):
        c = chunks[n % len(chunks)]
        start = _start(c.cm)
        buf = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 8))):
            at = start + rng.randrange(c.cm.total_compressed_size)
            buf[at] = rng.choice((0, 0xFF, 0x80, 0x7F, rng.randrange(256), buf[at] ^ (1 << rng.randrange(8))))
        if rng.random() < 0.1:
            cut = start + rng.randrange(c.cm.total_compressed_size)
            buf = buf[:cut] + buf[cut + rng.randrange(1, 8) :]
        r = scan_float_chunk(io.BytesIO(bytes(buf)), c.cm, c.leaf)
        assert r is None or isinstance(r, FloatScan)
    assert time.process_time() - t0 < 5.0


def test_hostile_sizes_do_not_allocate(sample: tuple[bytes, list[Chunk]]) -> None:
    data, chunks = sample
    c = chunks[0]
    start = _start(c.cm)
    # PageHeader{type, uncompressed_page_size = 2**31 - 1, compressed_page_size = 8, ...}: refused
    # before anything is allocated, for a dictionary page and for a data page of one value.
    huge = b"\x15\xfe\xff\xff\xff\x0f\x15\x10"
    dictionary = b"\x15\x04" + huge + b"\x4c\x15\x02\x15\x00\x00\x00"
    data_page = b"\x15\x00" + huge + b"\x2c\x15\x02\x15\x00\x15\x06\x15\x06\x00\x00"
    for header in (dictionary, data_page):
        bad = data[:start] + header + b"\x00" * 8 + data[start + len(header) + 8 :]
        t0 = time.process_time()
        assert scan_float_chunk(io.BytesIO(bad), c.cm, c.leaf) is None
        assert time.process_time() - t0 < 0.5


# --- The RLE / bit-packed hybrid ------------------------------------------------------------------


def encode_hybrid(values: list[int], width: int, rng: random.Random) -> bytes:
    """A naive encoder mixing RLE runs and bit-packed runs (padded to groups of 8)."""

    out = bytearray()
    i = 0
    while i < len(values):
        if rng.random() < 0.4:
            j = i
            while j < len(values) and values[j] == values[i]:
                j += 1
            out += uvarint((j - i) << 1) + values[i].to_bytes((width + 7) // 8, "little")
            i = j
        else:
            groups = rng.randint(1, 4)
            chunk = values[i : i + groups * 8]
            padded = chunk + [rng.randrange(1 << width) if width else 0 for _ in range(groups * 8 - len(chunk))]
            acc = sum(v << (k * width) for k, v in enumerate(padded))
            out += uvarint(groups << 1 | 1) + acc.to_bytes(groups * width, "little")
            i += len(chunk)
    return bytes(out)


@pytest.mark.parametrize("width", [0, 1, 2, 3, 5, 7, 8, 9, 13, 16, 20, 32])
def test_hybrid_decoding_matches_a_naive_decoder(width: int) -> None:
    rng = random.Random(width)
    for _ in range(40):
        size = rng.randint(1, 1 << width) if width < 20 else rng.randint(1, 10**6)
        n = rng.randint(0, 300)
        # Long repeats (RLE) and noise (bit-packed), mostly inside the dictionary.
        values = []
        while len(values) < n:
            v = rng.randrange(min(size + 1, 1 << width) if rng.random() < 0.05 else size)
            values += [v] * rng.choice((1, 1, 3, 9, 20))
        values = values[:n]
        data = encode_hybrid(values, width, rng)
        runs = pages._read_runs(data, 0, len(data), width, n)
        targets = tuple(rng.sample(range(size), min(size, 2)))
        want = next((v for v in values if v in targets), -1)
        if any(v >= size for v in values):
            with pytest.raises(pages._Corrupt):
                pages._first_hit(runs, width, targets, size)
        else:
            assert pages._first_hit(runs, width, targets, size) == want
        if width:
            level = rng.randint(max(1, 1 << (width - 1)), (1 << width) - 1) if width > 1 else 1
            if any(v > level for v in values):
                with pytest.raises(pages._Corrupt):
                    pages._count_level(runs, width, level)
            else:
                assert pages._count_level(runs, width, level) == values.count(level)
        if n:
            with pytest.raises(pages._Corrupt):
                pages._read_runs(data, 0, len(data), width, n + 32)


# --- io.decompress -------------------------------------------------------------------------------


@pytest.mark.parametrize("codec", ["SNAPPY", "GZIP", "BROTLI", "ZSTD", "LZ4_RAW"])
def test_decompress(codec: str) -> None:
    raw = bytes(range(256)) * 8 + b"\x00" * 100
    name = {"LZ4_RAW": "lz4_raw"}.get(codec, codec.lower())
    packed = pa.Codec(name).compress(raw, asbytes=True)
    assert decompress(codec, packed, len(raw)) == raw
    # The size must be exact, either way.
    assert decompress(codec, packed, len(raw) + 1) is None
    assert decompress(codec, packed, len(raw) - 1) is None
    assert decompress(codec, packed, -1) is None
    assert decompress(codec, packed[: len(packed) // 2], len(raw)) is None
    assert decompress(codec, b"\xff" * 40, len(raw)) is None
    empty = pa.Codec(name).compress(b"", asbytes=True)
    assert decompress(codec, empty, 0) == b""


def test_decompress_unsupported() -> None:
    for codec in ("LZ4", "LZO", "UNKNOWN_9", "UNCOMPRESSED"):
        assert decompress(codec, b"abc", 3) is None
