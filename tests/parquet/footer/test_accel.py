"""The C footer decoder (service/parquet/_compact.c, glued in by service.parquet.footer.accel)
against the Python reader it accelerates.

The contract: on any input, the C decoder either gives up (None, and the Python reader decides)
or returns exactly what the Python reader returns. It must never accept bytes the Python reader
rejects, nor read outside the buffer. Checked on real footers (where it must not give up), on
hundreds of thousands of mutations of them, and on crafted edge cases at every limit.
"""

from __future__ import annotations

import random
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.errors import InvalidParquetError
from service.parquet import footer
from service.parquet.footer import MAX_THRIFT_DEPTH, accel, codegen, thrift_tables
from tests.support.conformance import SHREDDED_VARIANT as CONFORMANCE_DIR
from tests.support.thrift import footer_of, uvarint, zigzag

_PY_READ = codegen.compile_reader(thrift_tables.FILE_META_DATA)
_INDEX = accel._program_index[id(thrift_tables.FILE_META_DATA)]


def c_decode(data: bytes) -> Any:
    return accel._decoder.decode(_INDEX, data, 0, 0)


def py_decode(data: bytes) -> Any:
    """The Python reader's answer: the value, or the InvalidParquetError class."""
    try:
        value, _ = _PY_READ(data, 0, 0)
    except (InvalidParquetError, IndexError):
        return InvalidParquetError
    return value


def assert_agree(data: bytes) -> bool:
    """True when the C decoder answered itself (False: it left the input to Python)."""
    fast = c_decode(data)
    if fast is None:
        return False
    slow = py_decode(data)
    assert slow is not InvalidParquetError, f"C accepted a footer Python rejects: {data[:80]!r}"
    assert fast[0] == slow
    return True


@pytest.fixture(scope="module")
def real_footers(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    footers = [footer_of(p.read_bytes()) for p in sorted(CONFORMANCE_DIR.glob("*.parquet"))]
    tmp = tmp_path_factory.mktemp("accel")
    table = pa.table(
        {
            "i": pa.array([1, None, 3], pa.int64()),
            "s": pa.array(["a", "b", None]),
            "d": pa.array([1.5, float("nan"), -0.0]),
            "l": pa.array([[1], [], None], pa.list_(pa.int32())),
            "m": pa.array([{"k": 1}, None, {"k": 2}], pa.struct([("k", pa.int8())])),
            "ts": pa.array([1, 2, 3], pa.timestamp("ns", tz="UTC")),
            "dec": pa.array([1, 2, 3], pa.decimal128(20, 3)),
        }
    )
    for i, kwargs in enumerate(
        [
            {},
            {"write_statistics": False},
            {"data_page_version": "2.0", "compression": "zstd"},
            {"store_schema": False, "write_page_index": True, "sorting_columns": [pq.SortingColumn(0)]},
        ]
    ):
        p = tmp / f"pa{i}.parquet"
        pq.write_table(table, p, row_group_size=2, **kwargs)
        footers.append(footer_of(p.read_bytes()))
    p = tmp / "duck.parquet"
    duckdb.sql(
        f"COPY (SELECT {{'a': range, 'b': 'x' || range}}::VARIANT AS v, range::DOUBLE AS d FROM range(5)) "
        f"TO '{p}' (FORMAT parquet)"
    )
    footers.append(footer_of(p.read_bytes()))
    return footers


def test_accelerator_is_built() -> None:
    # The throughput in BENCHMARKS.md depends on it: `pip install` must have compiled it here.
    assert footer.ACCELERATED


def test_real_footers_decode_in_c_and_match(real_footers: list[bytes]) -> None:
    assert len(real_footers) > 130
    for data in real_footers:
        assert assert_agree(data), "the C decoder gave up on a valid footer"
        # And through the public function, with footer_size filled in.
        assert footer.parse_file_metadata(data).footer_size == len(data)


def test_results_are_the_same_types(real_footers: list[bytes]) -> None:
    meta = footer.parse_file_metadata(real_footers[-1])
    chunk = meta.row_groups[0].columns[0]
    assert type(chunk) is footer.ColumnChunk
    assert type(chunk.meta_data) is footer.ColumnMetaData
    assert type(chunk.meta_data.statistics) is footer.Statistics
    assert type(meta.schema[1]) is footer.SchemaElement
    # Frozen dataclasses built in C behave like ones built by __init__.
    assert hash(meta.schema[1]) == hash(
        footer.SchemaElement(*[getattr(meta.schema[1], f) for f in meta.schema[1].__slots__])
    )
    with pytest.raises(AttributeError):
        meta.schema[1].name = "x"  # type: ignore[misc]


def _mutations(data: bytes, rng: random.Random, n: int) -> list[bytes]:
    out = []
    for _ in range(n):
        b = bytearray(data)
        op = rng.randrange(5)
        if op == 0:  # flip bits
            for _ in range(rng.randint(1, 3)):
                b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        elif op == 1:  # overwrite one byte
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 2:  # truncate
            del b[rng.randrange(len(b)) :]
        elif op == 3:  # delete a range
            i = rng.randrange(len(b))
            del b[i : i + rng.randint(1, 8)]
        else:  # insert random bytes
            i = rng.randrange(len(b) + 1)
            b[i:i] = rng.randbytes(rng.randint(1, 4))
        out.append(bytes(b))
    return out


def test_mutated_footers_never_disagree(real_footers: list[bytes]) -> None:
    rng = random.Random(20261122)
    answered = 0
    total = 0
    for data in real_footers[::8] + real_footers[-5:]:
        for mutated in _mutations(data, rng, 1500):
            total += 1
            answered += assert_agree(mutated)
    # Most mutations land in values the C decoder reads itself (a different min, a longer name).
    assert answered > total // 4


def test_every_byte_value_at_every_position_of_a_small_footer(real_footers: list[bytes]) -> None:
    data = min(real_footers, key=len)
    for i in range(len(data)):
        for v in (0x00, 0x01, 0x0F, 0x15, 0x19, 0x1C, 0x7F, 0x80, 0xF9, 0xFF):
            assert_agree(data[:i] + bytes([v]) + data[i + 1 :])


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_never_disagree(data: bytes) -> None:
    assert_agree(data)


# --- crafted limits --------------------------------------------------------------------------------


def zz(n: int) -> bytes:
    return uvarint(zigzag(n))


def minimal(extra: bytes = b"") -> bytes:
    """FileMetaData{version=1, schema=[root with 0 children], num_rows=0, row_groups=[]} + extra
    fields (field ids >= 8, written in long form) before the stop byte."""
    root = b"\x48" + uvarint(4) + b"root" + b"\x15" + zz(0) + b"\x00"  # name (id 4), num_children (id 5)
    return (
        b"\x15" + zz(1)  # 1: version
        + b"\x19" + b"\x1c" + root  # 2: schema, list of 1 struct
        + b"\x16" + zz(0)  # 3: num_rows
        + b"\x19" + b"\x0c"  # 4: row_groups, empty list of structs
        + extra
        + b"\x00"
    )  # fmt: skip


def long_field(fid: int, wire: int) -> bytes:
    return bytes([wire]) + zz(fid)


def nested_unknown(levels: int, innermost: bytes) -> bytes:
    """An unknown field 99 holding ``levels`` structs nested in one another."""
    body = innermost
    for _ in range(levels - 1):
        body = long_field(1, 12) + body + b"\x00"
    return long_field(99, 12) + body + b"\x00"


def test_crafted_cases_agree() -> None:
    cases = [
        minimal(),
        minimal(long_field(6, 8) + uvarint(3) + b"abc"),  # created_by
        minimal(long_field(6, 8) + uvarint(3) + b"a\xffc"),  # created_by with a bad byte: replaced
        minimal(long_field(6, 8) + uvarint(30) + b"abc"),  # runs past the end
        minimal(long_field(99, 7) + b"\x00" * 8),  # unknown double
        minimal(long_field(99, 13) + b"\x00" * 16),  # unknown uuid
        minimal(long_field(99, 13) + b"\x00" * 15),
        minimal(long_field(99, 11) + uvarint(1) + b"\x55" + zz(1) + zz(2)),  # unknown map<i32,i32>
        minimal(long_field(99, 11) + uvarint(2**34) + b"\x55"),  # hostile map size
        minimal(long_field(99, 9) + b"\xf5" + uvarint(2**31) + b"\x00"),  # hostile list size
        minimal(long_field(99, 9) + b"\x31\x01\x02\x01"),  # list<bool>
        minimal(long_field(99, 14)),  # unknown wire type
        minimal(long_field(99, 0)),
        minimal(long_field(99, 6) + b"\xff" * 10 + b"\x01"),  # 11-byte varint
        minimal(long_field(99, 6) + b"\xff" * 9 + b"\x01"),  # 10-byte varint
        minimal(long_field(99, 3) + b"\x80"),  # unknown i8
        # A known i64 (num_rows) at the limits of the varint: 2**64 - 1 zigzagged fits, 2**64 does not.
        minimal().replace(b"\x16" + zz(0), b"\x16" + b"\xff" * 9 + b"\x01"),
        minimal().replace(b"\x16" + zz(0), b"\x16" + b"\xff" * 9 + b"\x02"),
        minimal().replace(b"\x16" + zz(0), b"\x13\x85"),  # num_rows as an i8
        minimal().replace(b"\x16" + zz(0), b"\x17" + b"\x00" * 8),  # num_rows as a double
        minimal().replace(b"\x15" + zz(1), b"\x15" + zz(1) + b"\x15" + zz(7)),  # repeated field id
        minimal().replace(b"\x16" + zz(0), b""),  # a required field missing
    ]
    # Nesting right at and past MAX_THRIFT_DEPTH, with every kind of innermost value (a boolean
    # is skipped without reading a byte, but the Python reader still checks the depth).
    for depth in range(MAX_THRIFT_DEPTH - 3, MAX_THRIFT_DEPTH + 3):
        for inner in (b"", long_field(2, 1), long_field(2, 5) + zz(1), long_field(2, 9) + b"\x00"):
            cases.append(minimal(nested_unknown(depth, inner)))
    answered = [assert_agree(c) for c in cases]
    assert answered[0] and answered[1] and answered[2]


def test_unknown_enum_is_left_to_python() -> None:
    # SchemaElement.repetition_type = 7 is unknown: a closed enum, so Python rejects the file. The C
    # decoder must not guess; it gives up and the public function raises the Python message.
    root = b"\x48" + uvarint(4) + b"root" + b"\x15" + zz(1) + b"\x00"
    leaf = b"\x15" + zz(2) + b"\x25" + zz(7) + b"\x18" + uvarint(1) + b"x" + b"\x00"
    data = b"\x15" + zz(1) + b"\x19\x2c" + root + leaf + b"\x16" + zz(0) + b"\x19\x0c\x00"
    assert c_decode(data) is None
    with pytest.raises(InvalidParquetError, match="unknown value 7"):
        footer.parse_file_metadata(data)


def test_interned_schema_is_one_object_for_the_same_bytes(real_footers: list[bytes]) -> None:
    # FILE_META_DATA interns its schema: the same bytes give the same (equal) tuple, which the
    # extractor's per-schema plan cache finds by identity; different bytes never share it.
    seen: dict[int, tuple[Any, Any]] = {}  # id -> (the object, kept alive; Python's schema)
    shared = 0
    for data in real_footers:
        first, second = c_decode(data), c_decode(data)
        assert first[0][1] is second[0][1]
        expected = py_decode(data)
        assert first[0] == expected
        hit = seen.get(id(first[0][1]))
        if hit is not None:
            shared += 1
            assert hit[1] == expected[1], "footers with different schemas got one object"
        seen[id(first[0][1])] = (first[0][1], expected[1])
    assert shared > 0  # the conformance files share schemas


def test_a_changed_byte_in_an_interned_schema_is_decoded_afresh(real_footers: list[bytes]) -> None:
    data = real_footers[-1]  # DuckDB's: its root is named duckdb_schema
    assert b"duckdb_schema" in data
    cached = c_decode(data)[0][1]
    changed = data.replace(b"duckdb_schema", b"duckdb_schemb")
    assert assert_agree(changed)
    schema = c_decode(changed)[0][1]
    assert schema is not cached and schema[0].name == "duckdb_schemb"
    assert schema[1:] == cached[1:]
    # Cut inside the schema, right after a cached decode: never a stale answer.
    for end in range(1, 80):
        assert c_decode(data[:end]) is None or assert_agree(data[:end])


def test_only_list_fields_can_be_interned() -> None:
    from service.parquet.footer.compact import K_INT, OPT, Struct

    with pytest.raises(ValueError, match="only list fields"):
        Struct("X", [(1, "a", K_INT, None, OPT)], tuple, interned=("a",))


def test_slots_builder_builds_what_the_class_builds() -> None:
    from service.stats.model import PathStats
    from service.values import Kind, ShreddedType

    build = accel.slots_builder(PathStats)
    assert build is not PathStats  # the accelerator is built (test_accelerator_is_built)
    values = ("v", '"a"', ShreddedType(Kind.INT64), 10, 3, 1, -5, 7, None, None)
    got, expected = build(*values), PathStats(*values)
    assert type(got) is PathStats and got == expected and hash(got) == hash(expected)
    assert repr(got) == repr(expected)
    with pytest.raises(AttributeError):
        got.null_count = 2  # type: ignore[misc]  # still frozen
    with pytest.raises(TypeError, match="exactly 10 positional"):
        build(*values[:-1])
    with pytest.raises(TypeError, match="exactly 10 positional"):
        build(*values[:-1], extra_stats=None)


def test_slots_builder_leaves_classes_with_more_to_do_to_their_init() -> None:
    import dataclasses

    @dataclasses.dataclass(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

    @dataclasses.dataclass(frozen=True)
    class NoSlots:
        a: int

    assert accel.slots_builder(Checked) is Checked
    assert accel.slots_builder(NoSlots) is NoSlots
