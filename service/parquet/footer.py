"""A pure reader of the Parquet file footer: ``FileMetaData`` in the Thrift Compact Protocol.

In the style of h11: pure functions over ``bytes``, frozen typed results, and every check next to
the text of the specification that motivates it. Bad input raises
:class:`service.errors.InvalidParquetError`; no ``IndexError``, ``struct.error``,
``UnicodeDecodeError`` or ``RecursionError`` escapes, and every loop is bounded by the input length.

Sources quoted below:

* ``parquet.thrift`` (apache/parquet-format, ``src/main/thrift/parquet.thrift``) for field ids;
* ``thrift-compact-protocol.md`` (apache/thrift, ``doc/specs``) for the wire encoding;
* the Parquet format README for the file layout::

      4-byte magic number "PAR1"
      <Column 1 Chunk 1> ... <Column N Chunk M>
      File Metadata
      4-byte length in bytes of file metadata (little endian)
      4-byte magic number "PAR1"

Each Thrift struct is described once, as data, by a :class:`_Struct` table (field id -> slot,
expected kind, converter) next to the IDL it transcribes. At import time every table is compiled
into a specialised decoding function (see "The decoder" below), so the per-field work is a few
integer comparisons and inline varint arithmetic, and each struct costs one call and one
constructor call. Fields not in a table (unknown ones, and those not modelled: encryption, size
and geospatial statistics, bloom filter offsets, ...) are skipped, as the protocol allows.
"""

from __future__ import annotations

import struct
import types
import typing
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from service.errors import InvalidParquetError

__all__ = [
    "PARQUET_MAGIC",
    "TAIL_READ_SIZE",
    "ColumnChunk",
    "ColumnMetaData",
    "FileMetaData",
    "LogicalType",
    "PageEncodingStats",
    "RowGroup",
    "SchemaElement",
    "SchemaNode",
    "SortingColumn",
    "Statistics",
    "build_schema_tree",
    "iter_leaves",
    "parse_file_metadata",
    "read_file_metadata",
    "read_footer_bytes",
    "validate_row_groups",
]

PARQUET_MAGIC = b"PAR1"
# Files with an encrypted footer end in "PARE" instead (Parquet Modular Encryption spec).
PARQUET_ENCRYPTED_MAGIC = b"PARE"

#: How much of the end of a file :func:`read_file_metadata` fetches in its first read. Most footers
#: fit, so a remote file costs one ranged GET.
TAIL_READ_SIZE = 64 * 1024

#: Nesting limit for Thrift containers. Real footers nest ~7 deep (FileMetaData > row_groups >
#: RowGroup > columns > ColumnChunk > ColumnMetaData > Statistics); the limit only exists so that a
#: hostile footer cannot exhaust the Python stack.
MAX_THRIFT_DEPTH = 64

#: Nesting limit for the schema tree; bounds the memory spent on per-node paths.
MAX_SCHEMA_DEPTH = 256

# "4-byte magic" + "4-byte length" + "4-byte magic": the smallest file that has room for a footer.
_MIN_FILE_SIZE = 12

# --- Result types ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogicalType:
    """``union LogicalType``, flattened: ``kind`` is the union member's name.

    An unknown member (a newer writer) gives ``kind='UNRECOGNIZED'`` instead of an error, as does
    a TIME/TIMESTAMP whose ``TimeUnit`` member is unknown: the column cannot be interpreted, but
    the file is still readable.
    """

    kind: str
    precision: int | None = None
    scale: int | None = None
    is_adjusted_to_utc: bool | None = None
    unit: str | None = None
    bit_width: int | None = None
    is_signed: bool | None = None
    specification_version: int | None = None
    crs: str | None = None
    algorithm: str | None = None


@dataclass(frozen=True, slots=True)
class SchemaElement:
    name: str
    type: str | None
    type_length: int | None
    repetition: str | None
    num_children: int | None
    converted_type: str | None
    scale: int | None
    precision: int | None
    field_id: int | None
    logical_type: LogicalType | None


@dataclass(frozen=True, slots=True)
class Statistics:
    """Column chunk statistics. Absent fields stay ``None``: the spec says
    "Readers MUST distinguish between null_count not being present and null_count == 0"."""

    max: bytes | None = None
    min: bytes | None = None
    null_count: int | None = None
    distinct_count: int | None = None
    max_value: bytes | None = None
    min_value: bytes | None = None
    is_max_value_exact: bool | None = None
    is_min_value_exact: bool | None = None
    nan_count: int | None = None


@dataclass(frozen=True, slots=True)
class PageEncodingStats:
    page_type: str
    encoding: str
    count: int


@dataclass(frozen=True, slots=True)
class ColumnMetaData:
    type: str
    encodings: tuple[str, ...]
    path_in_schema: tuple[str, ...]
    codec: str
    num_values: int
    total_uncompressed_size: int
    total_compressed_size: int
    data_page_offset: int
    index_page_offset: int | None = None
    dictionary_page_offset: int | None = None
    statistics: Statistics | None = None
    encoding_stats: tuple[PageEncodingStats, ...] | None = None


@dataclass(frozen=True, slots=True)
class ColumnChunk:
    file_path: str | None
    file_offset: int
    meta_data: ColumnMetaData | None
    column_index_offset: int | None = None
    column_index_length: int | None = None
    offset_index_offset: int | None = None
    offset_index_length: int | None = None


@dataclass(frozen=True, slots=True)
class SortingColumn:
    column_idx: int
    descending: bool
    nulls_first: bool


@dataclass(frozen=True, slots=True)
class RowGroup:
    columns: tuple[ColumnChunk, ...]
    total_byte_size: int
    num_rows: int
    sorting_columns: tuple[SortingColumn, ...] | None = None
    file_offset: int | None = None
    total_compressed_size: int | None = None
    ordinal: int | None = None


@dataclass(frozen=True, slots=True)
class FileMetaData:
    version: int
    schema: tuple[SchemaElement, ...]
    num_rows: int
    row_groups: tuple[RowGroup, ...]
    key_value_metadata: tuple[tuple[str, str | None], ...]
    created_by: str | None
    #: One entry per leaf, 'TYPE_ORDER' or 'UNKNOWN' (any other ``ColumnOrder`` member); ``None``
    #: when the writer wrote none, in which case min_value/max_value have no defined meaning.
    column_orders: tuple[str, ...] | None
    #: Length in bytes of the Thrift-encoded FileMetaData (the footer length field).
    footer_size: int


# --- Thrift enums (parquet.thrift) ---------------------------------------------------------------


def _enum(*names: str | None) -> dict[int, str]:
    return {i: n for i, n in enumerate(names) if n is not None}


_TYPE = _enum("BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY")
# "3: The field is a fixed-size vector group. See LogicalTypes.md." (VECTOR is experimental.)
_REPETITION = _enum("REQUIRED", "OPTIONAL", "REPEATED", "VECTOR")
_CONVERTED_TYPE = _enum(
    "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS", "TIME_MICROS",
    "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64",
    "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL",
)  # fmt: skip
# "GROUP_VAR_INT = 1; This encoding is deprecated. It was never used." -> left as a gap.
_ENCODING = _enum(
    "PLAIN", None, "PLAIN_DICTIONARY", "RLE", "BIT_PACKED", "DELTA_BINARY_PACKED",
    "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT",
)  # fmt: skip
_CODEC = _enum("UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW")
_PAGE_TYPE = _enum("DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2")
_EDGE_ALGORITHM = _enum("SPHERICAL", "VINCENTY", "THOMAS", "ANDOYER", "KARNEY")

# Enums whose unknown values make the file unreadable: without the physical type or the repetition
# nothing can be decoded. Other enums (codecs, encodings, ...) are open: new members are added over
# time ("Codecs added in format version X.Y can be read by readers based on X.Y and later"), so an
# unknown value is kept as 'UNKNOWN_<n>' and left for the consumer to reject if it must.
_CLOSED_ENUMS = (_TYPE, _REPETITION)

# --- Compact protocol wire types (thrift-compact-protocol.md) -----------------------------------
# "BOOLEAN_TRUE, encoded as 1 / BOOLEAN_FALSE, encoded as 2 / I8 3 / I16 4 / I32 5 / I64 6 /
#  DOUBLE 7 / BINARY 8 / LIST 9 / SET 10 / MAP 11 / STRUCT 12 / UUID 13"
_W_TRUE, _W_FALSE, _W_I8, _W_I16, _W_I32, _W_I64, _W_DOUBLE = 1, 2, 3, 4, 5, 6, 7
_W_BINARY, _W_LIST, _W_SET, _W_MAP, _W_STRUCT, _W_UUID = 8, 9, 10, 11, 12, 13
_WIRE_NAMES = {
    1: "bool", 2: "bool", 3: "i8", 4: "i16", 5: "i32", 6: "i64", 7: "double", 8: "binary",
    9: "list", 10: "set", 11: "map", 12: "struct", 13: "uuid",
}  # fmt: skip

# Value kinds a struct field can be declared with (what the decoder turns the wire value into).
_K_BOOL = 0
_K_INT = 1  # i8/i16/i32/i64: any integer wire type is accepted
_K_ENUM = 2  # i32 mapped through a dict
_K_BYTES = 3
_K_STR = 4  # strict UTF-8: names, paths
_K_TEXT = 5  # lenient UTF-8: informational text (created_by, key/value metadata)
_K_STRUCT = 6
_K_LIST = 7
_KIND_NAMES = ("bool", "integer", "enum (i32)", "binary", "string", "string", "struct", "list")


class _Struct:
    """How to decode one Thrift struct: its fields by id and how to build the result."""

    __slots__ = ("defaults", "fields", "make", "name", "read", "required", "source", "spread")

    def __init__(
        self,
        name: str,
        fields: Sequence[tuple[int, str, int, typing.Any, bool]],
        make: Callable[..., typing.Any],
        *,
        spread: bool = True,
        defaults: dict[str, typing.Any] | None = None,
    ) -> None:
        # fields: (thrift field id, name, kind, kind argument, required); slot = position in list.
        self.name = name
        self.fields: dict[int, tuple[int, int, typing.Any, str]] = {
            fid: (slot, kind, arg, fname) for slot, (fid, fname, kind, arg, _) in enumerate(fields)
        }
        self.required = tuple((slot, f[1]) for slot, f in enumerate(fields) if f[4])
        names = [f[1] for f in fields]
        self.defaults: list[typing.Any] = [None] * len(fields)
        for fname, value in (defaults or {}).items():
            self.defaults[names.index(fname)] = value
        self.make = make
        # spread: make(*slots) (dataclass constructors); otherwise make(slots).
        self.spread = spread
        # Filled in by _compile: the generated decoder and its source (for debugging).
        self.read: Callable[[bytes, int, int], tuple[typing.Any, int]] | None = None
        self.source = ""


_REQ, _OPT = True, False

# List element specs: (kind, argument).
_LIST_OF_STR = (_K_STR, None)

# -- Logical types ---------------------------------------------------------------------------

# "Empty structs to use as logical type annotations": StringType, UUIDType, MapType, ListType,
# VectorType, EnumType, DateType, Float16Type, NullType, JsonType, BsonType, MilliSeconds, ...
_EMPTY = _Struct("(empty annotation struct)", (), lambda: True)

# union TimeUnit { 1: MilliSeconds MILLIS  2: MicroSeconds MICROS  3: NanoSeconds NANOS }
_UNITS = ("MILLIS", "MICROS", "NANOS")


def _make_time_unit(slots: list[typing.Any]) -> str:
    set_members = [i for i, v in enumerate(slots) if v is not None]
    if len(set_members) > 1:
        # "A Union is encoded exactly the same as a struct with the additional restriction that
        #  at most 1 field may be encoded."
        raise InvalidParquetError("corrupt Parquet footer: union TimeUnit has more than one member set")
    # No known member: a unit from a newer spec, skipped as an unknown field.
    return _UNITS[set_members[0]] if set_members else "UNRECOGNIZED"


_TIME_UNIT = _Struct(
    "TimeUnit",
    [(1, "MILLIS", _K_STRUCT, _EMPTY, _OPT), (2, "MICROS", _K_STRUCT, _EMPTY, _OPT),
     (3, "NANOS", _K_STRUCT, _EMPTY, _OPT)],
    _make_time_unit,
    spread=False,
)  # fmt: skip

# struct DecimalType { 1: required i32 scale  2: required i32 precision }
_DECIMAL_TYPE = _Struct(
    "DecimalType",
    [(1, "scale", _K_INT, None, _REQ), (2, "precision", _K_INT, None, _REQ)],
    tuple,
    spread=False,
)
# struct TimestampType / TimeType { 1: required bool isAdjustedToUTC  2: required TimeUnit unit }
_TIMESTAMP_TYPE = _Struct(
    "TimestampType",
    [(1, "isAdjustedToUTC", _K_BOOL, None, _REQ), (2, "unit", _K_STRUCT, _TIME_UNIT, _REQ)],
    tuple,
    spread=False,
)
_TIME_TYPE = _Struct(
    "TimeType",
    [(1, "isAdjustedToUTC", _K_BOOL, None, _REQ), (2, "unit", _K_STRUCT, _TIME_UNIT, _REQ)],
    tuple,
    spread=False,
)
# struct IntType { 1: required i8 bitWidth  2: required bool isSigned }
_INT_TYPE = _Struct(
    "IntType",
    [(1, "bitWidth", _K_INT, None, _REQ), (2, "isSigned", _K_BOOL, None, _REQ)],
    tuple,
    spread=False,
)
# struct VariantType { 1: optional i8 specification_version }
_VARIANT_TYPE = _Struct(
    "VariantType", [(1, "specification_version", _K_INT, None, _OPT)], tuple, spread=False
)
# struct GeometryType { 1: optional string crs; }
_GEOMETRY_TYPE = _Struct("GeometryType", [(1, "crs", _K_TEXT, None, _OPT)], tuple, spread=False)
# struct GeographyType { 1: optional string crs; 2: optional EdgeInterpolationAlgorithm algorithm; }
_GEOGRAPHY_TYPE = _Struct(
    "GeographyType",
    [(1, "crs", _K_TEXT, None, _OPT), (2, "algorithm", _K_ENUM, _EDGE_ALGORITHM, _OPT)],
    tuple,
    spread=False,
)

# union LogicalType { 1: STRING 2: MAP 3: LIST 4: ENUM 5: DECIMAL 6: DATE 7: TIME 8: TIMESTAMP
#   // 9: reserved for INTERVAL
#   10: INTEGER 11: UNKNOWN 12: JSON 13: BSON 14: UUID 15: FLOAT16 16: VARIANT 17: GEOMETRY
#   18: GEOGRAPHY 19: VECTOR }
_LOGICAL_MEMBERS: tuple[tuple[int, str, _Struct], ...] = (
    (1, "STRING", _EMPTY), (2, "MAP", _EMPTY), (3, "LIST", _EMPTY), (4, "ENUM", _EMPTY),
    (5, "DECIMAL", _DECIMAL_TYPE), (6, "DATE", _EMPTY), (7, "TIME", _TIME_TYPE),
    (8, "TIMESTAMP", _TIMESTAMP_TYPE), (10, "INTEGER", _INT_TYPE), (11, "UNKNOWN", _EMPTY),
    (12, "JSON", _EMPTY), (13, "BSON", _EMPTY), (14, "UUID", _EMPTY), (15, "FLOAT16", _EMPTY),
    (16, "VARIANT", _VARIANT_TYPE), (17, "GEOMETRY", _GEOMETRY_TYPE),
    (18, "GEOGRAPHY", _GEOGRAPHY_TYPE), (19, "VECTOR", _EMPTY),
)  # fmt: skip

# Results for the annotation-only members are shared: LogicalType is immutable.
_SIMPLE_LOGICAL = {name: LogicalType(name) for _, name, spec in _LOGICAL_MEMBERS if spec is _EMPTY}
_UNRECOGNIZED_LOGICAL = LogicalType("UNRECOGNIZED")


def _make_logical_type(slots: list[typing.Any]) -> LogicalType:
    found = -1
    for i, v in enumerate(slots):
        if v is not None:
            if found >= 0:
                raise InvalidParquetError(
                    "corrupt Parquet footer: union LogicalType has more than one member set "
                    f"({_LOGICAL_MEMBERS[found][1]} and {_LOGICAL_MEMBERS[i][1]})"
                )
            found = i
    if found < 0:
        # Forward compatibility: a member added after this reader was written was skipped as an
        # unknown field; the column is opaque to us but the file is still readable.
        return _UNRECOGNIZED_LOGICAL
    kind = _LOGICAL_MEMBERS[found][1]
    v = slots[found]
    simple = _SIMPLE_LOGICAL.get(kind)
    if simple is not None:
        return simple
    if kind == "DECIMAL":
        scale, precision = v
        return LogicalType(kind, precision=precision, scale=scale)
    if kind in ("TIME", "TIMESTAMP"):
        adjusted, unit = v
        if unit == "UNRECOGNIZED":
            return _UNRECOGNIZED_LOGICAL
        return LogicalType(kind, is_adjusted_to_utc=adjusted, unit=unit)
    if kind == "INTEGER":
        bit_width, signed = v
        return LogicalType(kind, bit_width=bit_width, is_signed=signed)
    if kind == "VARIANT":
        return LogicalType(kind, specification_version=v[0])
    if kind == "GEOMETRY":
        return LogicalType(kind, crs=v[0])
    # GEOGRAPHY
    return LogicalType(kind, crs=v[0], algorithm=v[1])


_LOGICAL_TYPE = _Struct(
    "LogicalType",
    [(fid, name, _K_STRUCT, spec, _OPT) for fid, name, spec in _LOGICAL_MEMBERS],
    _make_logical_type,
    spread=False,
)

# -- Schema ----------------------------------------------------------------------------------

# struct SchemaElement {
#   1: optional Type type;  2: optional i32 type_length;  3: optional FieldRepetitionType repetition_type;
#   4: required string name;  5: optional i32 num_children;  6: optional ConvertedType converted_type;
#   7: optional i32 scale  8: optional i32 precision  9: optional i32 field_id;
#   10: optional LogicalType logicalType  11: optional i32 vector_length; }
# Slots are in SchemaElement's field order, not in id order.
_SCHEMA_ELEMENT = _Struct(
    "SchemaElement",
    [
        (4, "name", _K_STR, None, _REQ),
        (1, "type", _K_ENUM, _TYPE, _OPT),
        (2, "type_length", _K_INT, None, _OPT),
        (3, "repetition_type", _K_ENUM, _REPETITION, _OPT),
        (5, "num_children", _K_INT, None, _OPT),
        (6, "converted_type", _K_ENUM, _CONVERTED_TYPE, _OPT),
        (7, "scale", _K_INT, None, _OPT),
        (8, "precision", _K_INT, None, _OPT),
        (9, "field_id", _K_INT, None, _OPT),
        (10, "logicalType", _K_STRUCT, _LOGICAL_TYPE, _OPT),
    ],
    SchemaElement,
)

# -- Column chunks ---------------------------------------------------------------------------

# struct Statistics { 1: optional binary max; 2: optional binary min; 3: optional i64 null_count;
#   4: optional i64 distinct_count; 5: optional binary max_value; 6: optional binary min_value;
#   7: optional bool is_max_value_exact; 8: optional bool is_min_value_exact;
#   9: optional i64 nan_count; }  "All fields are optional."
_STATISTICS = _Struct(
    "Statistics",
    [
        (1, "max", _K_BYTES, None, _OPT),
        (2, "min", _K_BYTES, None, _OPT),
        (3, "null_count", _K_INT, None, _OPT),
        (4, "distinct_count", _K_INT, None, _OPT),
        (5, "max_value", _K_BYTES, None, _OPT),
        (6, "min_value", _K_BYTES, None, _OPT),
        (7, "is_max_value_exact", _K_BOOL, None, _OPT),
        (8, "is_min_value_exact", _K_BOOL, None, _OPT),
        (9, "nan_count", _K_INT, None, _OPT),
    ],
    Statistics,
)

# struct PageEncodingStats { 1: required PageType page_type; 2: required Encoding encoding;
#   3: required i32 count; }
_PAGE_ENCODING_STATS = _Struct(
    "PageEncodingStats",
    [
        (1, "page_type", _K_ENUM, _PAGE_TYPE, _REQ),
        (2, "encoding", _K_ENUM, _ENCODING, _REQ),
        (3, "count", _K_INT, None, _REQ),
    ],
    PageEncodingStats,
)

# struct ColumnMetaData { 1: required Type type  2: required list<Encoding> encodings
#   3: required list<string> path_in_schema  4: required CompressionCodec codec
#   5: required i64 num_values  6: required i64 total_uncompressed_size
#   7: required i64 total_compressed_size  8: optional list<KeyValue> key_value_metadata
#   9: required i64 data_page_offset  10: optional i64 index_page_offset
#   11: optional i64 dictionary_page_offset  12: optional Statistics statistics;
#   13: optional list<PageEncodingStats> encoding_stats;  14/15: bloom filter offset/length
#   16: optional SizeStatistics  17: optional GeospatialStatistics }
# Fields 8 and 14-17 are not modelled and are skipped like unknown fields.
_COLUMN_META_DATA = _Struct(
    "ColumnMetaData",
    [
        (1, "type", _K_ENUM, _TYPE, _REQ),
        (2, "encodings", _K_LIST, (_K_ENUM, _ENCODING), _REQ),
        (3, "path_in_schema", _K_LIST, _LIST_OF_STR, _REQ),
        (4, "codec", _K_ENUM, _CODEC, _REQ),
        (5, "num_values", _K_INT, None, _REQ),
        (6, "total_uncompressed_size", _K_INT, None, _REQ),
        (7, "total_compressed_size", _K_INT, None, _REQ),
        (9, "data_page_offset", _K_INT, None, _REQ),
        (10, "index_page_offset", _K_INT, None, _OPT),
        (11, "dictionary_page_offset", _K_INT, None, _OPT),
        (12, "statistics", _K_STRUCT, _STATISTICS, _OPT),
        (13, "encoding_stats", _K_LIST, (_K_STRUCT, _PAGE_ENCODING_STATS), _OPT),
    ],
    ColumnMetaData,
)

# struct ColumnChunk { 1: optional string file_path  2: required i64 file_offset = 0
#   3: optional ColumnMetaData meta_data  4: optional i64 offset_index_offset
#   5: optional i32 offset_index_length  6: optional i64 column_index_offset
#   7: optional i32 column_index_length  8: crypto_metadata  9: encrypted_column_metadata }
# file_offset is "DEPRECATED" and declared with a default of 0, so a footer that omits it is
# read as 0 rather than rejected. meta_data stays optional: encrypted columns have none here.
_COLUMN_CHUNK = _Struct(
    "ColumnChunk",
    [
        (1, "file_path", _K_STR, None, _OPT),
        (2, "file_offset", _K_INT, None, _OPT),
        (3, "meta_data", _K_STRUCT, _COLUMN_META_DATA, _OPT),
        (6, "column_index_offset", _K_INT, None, _OPT),
        (7, "column_index_length", _K_INT, None, _OPT),
        (4, "offset_index_offset", _K_INT, None, _OPT),
        (5, "offset_index_length", _K_INT, None, _OPT),
    ],
    ColumnChunk,
    defaults={"file_offset": 0},
)

# struct SortingColumn { 1: required i32 column_idx  2: required bool descending
#   3: required bool nulls_first }
_SORTING_COLUMN = _Struct(
    "SortingColumn",
    [
        (1, "column_idx", _K_INT, None, _REQ),
        (2, "descending", _K_BOOL, None, _REQ),
        (3, "nulls_first", _K_BOOL, None, _REQ),
    ],
    SortingColumn,
)

# struct RowGroup { 1: required list<ColumnChunk> columns  2: required i64 total_byte_size
#   3: required i64 num_rows  4: optional list<SortingColumn> sorting_columns
#   5: optional i64 file_offset  6: optional i64 total_compressed_size  7: optional i16 ordinal }
_ROW_GROUP = _Struct(
    "RowGroup",
    [
        (1, "columns", _K_LIST, (_K_STRUCT, _COLUMN_CHUNK), _REQ),
        (2, "total_byte_size", _K_INT, None, _REQ),
        (3, "num_rows", _K_INT, None, _REQ),
        (4, "sorting_columns", _K_LIST, (_K_STRUCT, _SORTING_COLUMN), _OPT),
        (5, "file_offset", _K_INT, None, _OPT),
        (6, "total_compressed_size", _K_INT, None, _OPT),
        (7, "ordinal", _K_INT, None, _OPT),
    ],
    RowGroup,
)

# -- File ------------------------------------------------------------------------------------

# struct KeyValue { 1: required string key  2: optional string value }
_KEY_VALUE = _Struct(
    "KeyValue", [(1, "key", _K_TEXT, None, _REQ), (2, "value", _K_TEXT, None, _OPT)], tuple, spread=False
)


def _make_column_order(slots: list[typing.Any]) -> str:
    # union ColumnOrder { 1: TypeDefinedOrder TYPE_ORDER; 2: IEEE754TotalOrder IEEE_754_TOTAL_ORDER;
    #   3: Int96TimestampOrder INT96_TIMESTAMP_ORDER }
    # "If the reader does not support the value of this union, min and max stats for this column
    #  should be ignored." -> everything but TYPE_ORDER is reported as 'UNKNOWN'.
    return "TYPE_ORDER" if slots[0] is not None else "UNKNOWN"


_COLUMN_ORDER = _Struct(
    "ColumnOrder", [(1, "TYPE_ORDER", _K_STRUCT, _EMPTY, _OPT)], _make_column_order, spread=False
)

# struct FileMetaData { 1: required i32 version  2: required list<SchemaElement> schema;
#   3: required i64 num_rows  4: required list<RowGroup> row_groups
#   5: optional list<KeyValue> key_value_metadata  6: optional string created_by
#   7: optional list<ColumnOrder> column_orders;  8: encryption_algorithm
#   9: footer_signing_key_metadata }
_FILE_META_DATA = _Struct(
    "FileMetaData",
    [
        (1, "version", _K_INT, None, _REQ),
        (2, "schema", _K_LIST, (_K_STRUCT, _SCHEMA_ELEMENT), _REQ),
        (3, "num_rows", _K_INT, None, _REQ),
        (4, "row_groups", _K_LIST, (_K_STRUCT, _ROW_GROUP), _REQ),
        (5, "key_value_metadata", _K_LIST, (_K_STRUCT, _KEY_VALUE), _OPT),
        (6, "created_by", _K_TEXT, None, _OPT),
        (7, "column_orders", _K_LIST, (_K_STRUCT, _COLUMN_ORDER), _OPT),
    ],
    list,  # finished by parse_file_metadata, which knows footer_size
    spread=False,
    defaults={"key_value_metadata": ()},
)


# --- The decoder ---------------------------------------------------------------------------------
#
# Each _Struct is compiled at import time into a specialised Python function
# ``read(buf, pos, depth) -> (value, pos)`` (the technique dataclasses uses for ``__init__``): field
# slots become local variables, field ids are dispatched through a balanced if-tree of literals,
# and varints are decoded inline. That keeps the hot path free of per-field dict look-ups, tuple
# unpacking and per-byte calls. Reading past the end of ``buf`` raises IndexError, which
# parse_file_metadata turns into InvalidParquetError; explicit checks cover the reads that
# slicing or skipping would otherwise let run past the end silently.


def _corrupt(message: str) -> InvalidParquetError:
    return InvalidParquetError(f"corrupt Parquet footer: {message}")


def _too_deep() -> InvalidParquetError:
    return _corrupt(f"structures nested more than {MAX_THRIFT_DEPTH} deep")


def _unknown_enum(table: dict[int, str], value: int, struct_name: str, field_name: str) -> str:
    if any(table is closed for closed in _CLOSED_ENUMS):
        raise _corrupt(f"{struct_name}.{field_name} has unknown value {value}")
    return f"UNKNOWN_{value}"


def _mismatch(struct_name: str, field_name: str, kind: int, wire: int) -> InvalidParquetError:
    # The spec leaves this open ("Other implementation may perform this check and then either
    # ignore the field, or return a protocol exception"); a field whose type changed is corruption.
    return _corrupt(
        f"{struct_name}.{field_name} should be {_KIND_NAMES[kind]} but is encoded as {_WIRE_NAMES.get(wire, wire)}"
    )


def _uvarint(buf: bytes, pos: int, max_bytes: int, what: str) -> tuple[int, int]:
    """Unsigned LEB128 at ``pos``; the slow path for everything but hot single-byte values."""
    b = buf[pos]
    pos += 1
    v = b & 0x7F
    shift = 7
    limit = 7 * max_bytes
    while b & 0x80:
        if shift >= limit:
            # "Var ints take 1 to 5 bytes (int32) or 1 to 10 bytes (int64)."
            raise _corrupt(f"varint longer than {max_bytes} bytes in {what}")
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
    if v >> 64:
        raise _corrupt(f"varint overflows 64 bits in {what}")
    return v, pos


def _long_field_id(buf: bytes, pos: int, struct_name: str) -> tuple[int, int]:
    # "field id the field id, a signed 16 bit integer encoded as zigzag int."
    v, pos = _uvarint(buf, pos, 3, f"a field id of {struct_name}")
    return (v >> 1) ^ -(v & 1), pos


def _list_header(buf: bytes, pos: int, depth: int, what: str) -> tuple[int, int, int]:
    """Returns ``(size, element_type, pos)``."""
    if depth > MAX_THRIFT_DEPTH:
        raise _too_deep()
    header = buf[pos]
    pos += 1
    # "ssss is the size, 4 bit unsigned int, values 0 - 14"; 15 means "size is the size, a var
    #  int (int32), positive values 15 or higher".
    size = header >> 4
    if size == 15:
        size, pos = _uvarint(buf, pos, 5, what)
    # Every element takes at least one byte on the wire, so a larger count cannot be honest;
    # checking up front bounds the work a hostile size can cause.
    if size > len(buf) - pos:
        raise _corrupt(f"{what} claims {size} elements but only {len(buf) - pos} bytes are left")
    return size, header & 0x0F, pos


def _skip(buf: bytes, pos: int, wire: int, depth: int) -> int:
    """Step over one value of wire type ``wire`` without building it; returns the new position."""
    # "Therefore is also possible to handle unknown fields while decoding; these are simply ignored."
    # Writers put fields we do not model (SizeStatistics histograms, bloom filter offsets, ...) in
    # every column chunk, so varints are stepped over inline rather than decoded.
    if depth > MAX_THRIFT_DEPTH:
        raise _too_deep()
    if _W_I16 <= wire <= _W_I64:
        start = pos
        while buf[pos] & 0x80:
            pos += 1
        pos += 1
        if pos - start > 10:
            raise _corrupt("varint longer than 10 bytes in a skipped field")
        return pos
    if wire in (_W_TRUE, _W_FALSE):
        return pos
    if wire == _W_BINARY:
        n, pos = _uvarint(buf, pos, 5, "a skipped binary")
        pos += n
    elif wire == _W_STRUCT:
        while True:
            header = buf[pos]
            pos += 1
            if header == 0:
                break
            if not header >> 4:
                _, pos = _long_field_id(buf, pos, "a skipped struct")
            wire = header & 0x0F
            if _W_I16 <= wire <= _W_I64:
                # Inline: skipped structs (SizeStatistics, ...) are mostly integers.
                start = pos
                while buf[pos] & 0x80:
                    pos += 1
                pos += 1
                if pos - start > 10:
                    raise _corrupt("varint longer than 10 bytes in a skipped field")
            elif wire != _W_TRUE and wire != _W_FALSE:
                pos = _skip(buf, pos, wire, depth + 1)
    elif wire in (_W_LIST, _W_SET):
        size, element, pos = _list_header(buf, pos, depth + 1, "a skipped list")
        if element in (_W_TRUE, _W_FALSE):
            # "Element values of type bool are sent as an int8". The element-type table says BOOL
            # is 2, some writers use 1 (the field-type code): both are one byte per element.
            pos += size
        elif _W_I16 <= element <= _W_I64:
            # Histograms (list<i64>) are the bulk of what gets skipped.
            for _ in range(size):
                start = pos
                while buf[pos] & 0x80:
                    pos += 1
                pos += 1
                if pos - start > 10:
                    raise _corrupt("varint longer than 10 bytes in a skipped list")
        else:
            for _ in range(size):
                pos = _skip(buf, pos, element, depth + 1)
    elif wire == _W_I8:
        pos += 1
    elif wire == _W_DOUBLE:
        pos += 8  # "the compact protocol encodes it in little endian order": 8 bytes
    elif wire == _W_UUID:
        pos += 16  # "the field is always 16 bytes long"
    elif wire == _W_MAP:
        # "empty-map ::= 0 ; non-empty-map ::= size key-element-type value-element-type (key value)+"
        size, pos = _uvarint(buf, pos, 5, "a skipped map")
        if size:
            if 2 * size > len(buf) - pos:
                raise _corrupt(f"a map claims {size} entries but only {len(buf) - pos} bytes are left")
            types = buf[pos]
            pos += 1
            key, value = types >> 4, types & 0x0F
            for _ in range(size):
                for element in (key, value):
                    if element in (_W_TRUE, _W_FALSE):
                        pos += 1
                    else:
                        pos = _skip(buf, pos, element, depth + 1)
    else:
        raise _corrupt(f"unknown compact protocol type {wire}")
    if pos > len(buf):
        raise _corrupt("a value runs past the end of the footer")
    return pos


_ListReader = Callable[[bytes, int, int], tuple[tuple[typing.Any, ...], int]]


def _list_reader(element: tuple[int, typing.Any], owner: str, fname: str) -> _ListReader:
    """A reader for ``list<...>`` field ``owner.fname`` whose elements are ``element``."""
    kind, arg = element
    what = f"{owner}.{fname}"

    if kind == _K_STRUCT:
        read = _compile(arg)

        def read_structs(buf: bytes, pos: int, depth: int) -> tuple[tuple[typing.Any, ...], int]:
            size, wire, pos = _list_header(buf, pos, depth, what)
            if size == 0:
                return (), pos
            if wire != _W_STRUCT:
                raise _corrupt(f"{what} should hold structs but holds {_WIRE_NAMES.get(wire, wire)}")
            out = []
            append = out.append
            for _ in range(size):
                value, pos = read(buf, pos, depth)
                append(value)
            return tuple(out), pos

        return read_structs

    if kind in (_K_ENUM, _K_INT):
        table: dict[int, str] | None = arg if kind == _K_ENUM else None

        def read_ints(buf: bytes, pos: int, depth: int) -> tuple[tuple[typing.Any, ...], int]:
            size, wire, pos = _list_header(buf, pos, depth, what)
            if size == 0:
                return (), pos
            if not _W_I16 <= wire <= _W_I64:
                raise _corrupt(f"{what} should hold integers but holds {_WIRE_NAMES.get(wire, wire)}")
            out = []
            append = out.append
            for _ in range(size):
                b = buf[pos]
                if b < 0x80:
                    pos += 1
                    v = (b >> 1) ^ -(b & 1)
                else:
                    v, pos = _uvarint(buf, pos, 10, what)
                    v = (v >> 1) ^ -(v & 1)
                if table is None:
                    append(v)
                else:
                    name = table.get(v)
                    append(name if name is not None else _unknown_enum(table, v, owner, fname))
            return tuple(out), pos

        return read_ints

    strict = kind == _K_STR

    def read_strings(buf: bytes, pos: int, depth: int) -> tuple[tuple[typing.Any, ...], int]:
        size, wire, pos = _list_header(buf, pos, depth, what)
        if size == 0:
            return (), pos
        if wire != _W_BINARY:
            raise _corrupt(f"{what} should hold strings but holds {_WIRE_NAMES.get(wire, wire)}")
        end = len(buf)
        out = []
        append = out.append
        for _ in range(size):
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = _uvarint(buf, pos, 5, what)
            stop = pos + n
            if stop > end:
                raise _corrupt(f"an element of {what} runs past the end of the footer")
            raw = buf[pos:stop]
            pos = stop
            if kind == _K_BYTES:
                append(raw)
            elif strict:
                try:
                    append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    raise _corrupt(f"{what} holds invalid UTF-8: {raw[:64]!r}") from None
            else:
                append(raw.decode("utf-8", "replace"))
        return tuple(out), pos

    return read_strings


# Source snippets per value kind. {v} is the slot's local, {q} the quoted "Struct.field" name,
# {s}/{f} the quoted struct/field names for error helpers, {k} the kind number. Wire type numbers
# are literals here ("I8 3, I16 4, I32 5, I64 6, BINARY 8, LIST 9, SET 10, STRUCT 12") because
# this is the hot path.

# "Values of type int32 and int64 are first transformed to a zigzag int ... then encoded as a var
#  int"; "Var ints take 1 to 5 bytes (int32) or 1 to 10 bytes (int64)."
_INLINE_VARINT = """\
b = buf[pos]
pos += 1
if b < 128:
    x = (b >> 1) ^ -(b & 1)
else:
    x = b & 127
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        x |= (b & 127) << shift
        if b < 128:
            break
        shift += 7
        if shift > 63:
            raise _corrupt("varint longer than 10 bytes in " + {q})
    if x >> 64:
        raise _corrupt("varint overflows 64 bits in " + {q})
    x = (x >> 1) ^ -(x & 1)
"""
# "byte length is the length of the byte array, using var int encoding (must be >= 0)."
_READ_BINARY = """\
if w != 8:
    raise _mismatch({s}, {f}, {k}, w)
n = buf[pos]
if n < 128:
    pos += 1
else:
    n, pos = _uvarint(buf, pos, 5, {q})
stop = pos + n
if stop > len(buf):
    raise _corrupt({q} + " runs past the end of the footer")
"""
_SNIPPETS = {
    _K_INT: """\
if 4 <= w <= 6:
{varint}    {v} = x
elif w == 3:
    b = buf[pos]
    pos += 1
    {v} = b - 256 if b > 127 else b
else:
    raise _mismatch({s}, {f}, {k}, w)
""",
    # "The generated code encodes Enums by taking the ordinal value and then encoding that as an int32."
    _K_ENUM: """\
if 4 <= w <= 6:
{varint}    {v} = {table}.get(x)
    if {v} is None:
        {v} = _unknown_enum({table}, x, {s}, {f})
else:
    raise _mismatch({s}, {f}, {k}, w)
""",
    # "Field values are encoded directly in the field header." (BOOLEAN_TRUE 1, BOOLEAN_FALSE 2)
    _K_BOOL: """\
if w == 1:
    {v} = True
elif w == 2:
    {v} = False
else:
    raise _mismatch({s}, {f}, {k}, w)
""",
    _K_BYTES: _READ_BINARY + "{v} = buf[pos:stop]\npos = stop\n",
    # "Strings are first encoded to UTF-8, and then send as binary."
    _K_STR: _READ_BINARY
    + """\
try:
    {v} = buf[pos:stop].decode("utf-8")
except UnicodeDecodeError:
    raise _corrupt({q} + " is not valid UTF-8: " + repr(buf[pos:stop][:64])) from None
pos = stop
""",
    # Informational text (created_by, key/value metadata): a stray byte should not make the data
    # unreadable, so it is replaced rather than rejected.
    _K_TEXT: _READ_BINARY + '{v} = buf[pos:stop].decode("utf-8", "replace")\npos = stop\n',
    _K_STRUCT: """\
if w != 12:
    raise _mismatch({s}, {f}, {k}, w)
{v}, pos = {reader}(buf, pos, depth + 1)
""",
    _K_LIST: """\
if w != 9 and w != 10:
    raise _mismatch({s}, {f}, {k}, w)
{v}, pos = {reader}(buf, pos, depth + 1)
""",
}


def _indent(text: str, level: int) -> str:
    pad = "    " * level
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def _compile(spec: _Struct) -> typing.Any:
    """Generate, compile and cache ``spec.read``."""
    if spec.read is not None:
        return spec.read
    namespace: dict[str, typing.Any] = {
        "MAX_THRIFT_DEPTH": MAX_THRIFT_DEPTH,
        "MAKE": spec.make,
        "_corrupt": _corrupt,
        "_too_deep": _too_deep,
        "_mismatch": _mismatch,
        "_unknown_enum": _unknown_enum,
        "_uvarint": _uvarint,
        "_long_field_id": _long_field_id,
        "_skip": _skip,
    }
    branches: dict[int, str] = {}
    for fid, (slot, kind, arg, fname) in sorted(spec.fields.items()):
        names = {
            "v": f"v{slot}",
            "q": repr(f"{spec.name}.{fname}"),
            "s": repr(spec.name),
            "f": repr(fname),
            "k": str(kind),
            "table": f"T{slot}",
            "reader": f"R{slot}",
        }
        names["varint"] = _indent(_INLINE_VARINT.format(**names), 1)
        if kind == _K_ENUM:
            namespace[f"T{slot}"] = arg
        elif kind == _K_STRUCT:
            namespace[f"R{slot}"] = _compile(arg)
        elif kind == _K_LIST:
            namespace[f"R{slot}"] = _list_reader(arg, spec.name, fname)
        branches[fid] = _SNIPPETS[kind].format(**names)

    def dispatch(fids: list[int], level: int) -> str:
        # A balanced tree of comparisons: ~log2(n) tests per field instead of a linear chain.
        if len(fids) <= 3:
            out = ""
            for i, fid in enumerate(fids):
                out += _indent(f"{'if' if i == 0 else 'elif'} fid == {fid}:\n", level)
                out += _indent(branches[fid], level + 1)
            skip = "pos = _skip(buf, pos, w, depth + 1)\n"
            if fids:
                return out + _indent("else:\n", level) + _indent(skip, level + 1)
            return _indent(skip, level)
        mid = len(fids) // 2
        return (
            _indent(f"if fid < {fids[mid]}:\n", level)
            + dispatch(fids[:mid], level + 1)
            + _indent("else:\n", level)
            + dispatch(fids[mid:], level + 1)
        )

    nslots = len(spec.defaults)
    locals_ = ", ".join(f"v{i}" for i in range(nslots))
    source = "def read(buf, pos, depth):\n"
    source += "    if depth > MAX_THRIFT_DEPTH:\n        raise _too_deep()\n"
    for slot, default in enumerate(spec.defaults):
        # Defaults are None, 0 or (): literals, so no global look-up per slot.
        source += f"    v{slot} = {default!r}\n"
    source += "    last = 0\n    while True:\n"
    source += _indent(
        f"""\
h = buf[pos]
pos += 1
if h == 0:
    break
w = h & 15
if h > 15:
    fid = last + (h >> 4)
else:
    fid, pos = _long_field_id(buf, pos, {spec.name!r})
last = fid
""",
        2,
    )
    source += dispatch(sorted(branches), 2)
    for slot, fname in spec.required:
        source += f"    if v{slot} is None:\n"
        source += f"        raise _corrupt('required field {spec.name}.{fname} is missing')\n"
    if spec.spread:
        source += f"    return MAKE({locals_}), pos\n"
    else:
        source += f"    return MAKE([{locals_}]), pos\n"
    exec(compile(source, f"<parquet footer reader: {spec.name}>", "exec"), namespace)
    spec.read = namespace["read"]
    spec.source = source
    return spec.read


# --- The C accelerator ---------------------------------------------------------------------------
#
# service/parquet/_compact.c interprets the same _Struct tables in C and builds the same values.
# It never raises for bad input: it returns None and the Python reader above decodes the bytes
# again, so error messages and every forward-compatibility rule live in one place (this file).
# Without a C compiler at install time the extension is absent and the Python reader does all the
# work, about ten times slower.

_MODE_SLOTS, _MODE_SPREAD, _MODE_LIST = 0, 1, 2

try:
    from service.parquet import _compact  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - built by `pip install` wherever a C compiler exists
    _compact = None

#: True when footers are decoded by the C accelerator.
ACCELERATED = _compact is not None

_programs: list[tuple[typing.Any, ...]] = []
_program_index: dict[int, int] = {}
_decoder: typing.Any = None


def _slot_members(spec: _Struct) -> tuple[typing.Any, ...] | None:
    """The member descriptors of a slots dataclass built positionally from ``spec``'s slots."""
    import dataclasses

    cls = spec.make
    if not (spec.spread and isinstance(cls, type) and dataclasses.is_dataclass(cls)):
        return None
    names = [f.name for f in dataclasses.fields(cls)]
    if len(names) != len(spec.defaults) or "__slots__" not in cls.__dict__:
        return None
    members = tuple(cls.__dict__.get(n) for n in names)
    if not all(isinstance(m, types.MemberDescriptorType) for m in members):
        return None
    return members


def _register(spec: _Struct) -> int:
    """Give ``spec`` (and every struct it contains) a program number in the C decoder."""
    key = id(spec)
    if key in _program_index:
        return _program_index[key]
    index = len(_programs)
    _program_index[key] = index
    _programs.append(())  # placeholder: nested structs may refer back to this index
    fields = []
    for fid, (slot, kind, arg, _name) in spec.fields.items():
        elem_kind, sub, table = -1, -1, None
        if kind == _K_ENUM:
            table = arg
        elif kind == _K_STRUCT:
            sub = _register(arg)
        elif kind == _K_LIST:
            elem_kind, elem_arg = arg
            if elem_kind == _K_STRUCT:
                sub = _register(elem_arg)
            elif elem_kind == _K_ENUM:
                table = elem_arg
        fields.append((fid, slot, kind, elem_kind, sub, table))
    members = _slot_members(spec)
    mode = _MODE_SLOTS if members is not None else _MODE_SPREAD if spec.spread else _MODE_LIST
    _programs[index] = (
        len(spec.defaults),
        mode,
        spec.make,
        members,
        tuple(spec.defaults),
        tuple(slot for slot, _ in spec.required),
        tuple(fields),
    )
    return index


def _fast(spec: _Struct) -> Callable[[bytes, int, int], tuple[typing.Any, int]]:
    """A reader for ``spec`` with the signature of the generated ones, accelerated when it can be."""
    slow = _compile(spec)
    if _compact is None:
        return slow
    global _decoder
    if id(spec) not in _program_index:
        _register(spec)
        _decoder = _compact.Decoder(tuple(_programs), MAX_THRIFT_DEPTH)
    index = _program_index[id(spec)]

    def read(buf: bytes, pos: int, depth: int) -> tuple[typing.Any, int]:
        out = _decoder.decode(index, buf, pos, depth)
        # None: the C decoder met something it leaves to the specification's reader.
        return out if out is not None else slow(buf, pos, depth)

    return read


_read_file_meta_data = _fast(_FILE_META_DATA)


# --- Public functions ----------------------------------------------------------------------------


def parse_file_metadata(data: bytes) -> FileMetaData:
    """Decode the Thrift-encoded ``FileMetaData`` (the footer without length and magic)."""
    if not isinstance(data, bytes):
        data = bytes(data)
    try:
        v, _ = _read_file_meta_data(data, 0, 0)
    except IndexError:
        # Every byte read indexes the buffer; running off its end is how truncation shows up.
        raise _corrupt(f"truncated: {len(data)} bytes end in the middle of a value") from None
    except RecursionError:  # pragma: no cover - MAX_THRIFT_DEPTH keeps well below the limit
        raise _corrupt("structures nested too deep") from None
    return FileMetaData(v[0], v[1], v[2], v[3], v[4], v[5], v[6], len(data))


def read_footer_bytes(tail: bytes, file_size: int) -> tuple[int, int]:
    """Check the end of a file and locate its footer.

    ``tail`` is the last ``len(tail)`` (at least 8) bytes of a file of ``file_size`` bytes.
    Returns ``(footer_offset, footer_length)``: the footer is ``file[footer_offset:footer_offset +
    footer_length]``.
    """
    if file_size < _MIN_FILE_SIZE:
        raise InvalidParquetError(
            f"not a Parquet file: {file_size} bytes is smaller than the minimum of {_MIN_FILE_SIZE}"
        )
    if len(tail) < 8:
        raise InvalidParquetError("not a Parquet file: fewer than 8 bytes at the end of the file")
    magic = tail[-4:]
    if magic == PARQUET_ENCRYPTED_MAGIC:
        # Encrypted-footer files end in "PARE"; reading them needs keys and the crypto layer.
        raise InvalidParquetError("encrypted footer not supported")
    if magic != PARQUET_MAGIC:
        # "4-byte magic number "PAR1"" closes every file.
        raise InvalidParquetError(f"not a Parquet file: trailing magic is {bytes(magic)!r}, expected b'PAR1'")
    # "4-byte length in bytes of file metadata (little endian)"
    (length,) = struct.unpack("<I", tail[-8:-4])
    # The footer sits between the leading magic and the length field.
    if length > file_size - _MIN_FILE_SIZE:
        raise InvalidParquetError(
            f"corrupt Parquet file: footer length {length} does not fit in a file of {file_size} bytes"
        )
    return file_size - 8 - length, length


def _read_exactly(f: typing.BinaryIO, n: int) -> bytes:
    # Raw and network streams may return short reads; only an empty read means end of file.
    chunks: list[bytes] = []
    remaining = n
    while remaining > 0:
        chunk = f.read(remaining)
        if not chunk:
            break
        chunks.append(chunk)
        remaining -= len(chunk)
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) != n:
        raise InvalidParquetError(
            f"corrupt Parquet file: expected {n} bytes but the file ended after {len(data)}"
        )
    return bytes(data)


def read_file_metadata(f: typing.BinaryIO, file_size: int | None = None) -> FileMetaData:
    """Read and decode the footer of the Parquet file open as ``f`` (seekable, binary).

    The last 64 KiB are fetched in one read; a second read is made only for a larger footer.
    """
    if file_size is None:
        end = f.seek(0, 2)
        file_size = end if end is not None else f.tell()
    if file_size < _MIN_FILE_SIZE:
        raise InvalidParquetError(
            f"not a Parquet file: {file_size} bytes is smaller than the minimum of {_MIN_FILE_SIZE}"
        )
    tail_size = min(file_size, TAIL_READ_SIZE)
    tail_start = file_size - tail_size
    f.seek(tail_start)
    tail = _read_exactly(f, tail_size)
    offset, length = read_footer_bytes(tail, file_size)
    if offset >= tail_start:
        data = tail[offset - tail_start : offset - tail_start + length]
    else:
        f.seek(offset)
        data = _read_exactly(f, tail_start - offset) + tail[: tail_size - 8]
    if tail_start == 0 and tail[:4] != PARQUET_MAGIC:
        # "4-byte magic number "PAR1"" also opens the file; checked only when already in hand, so
        # that a remote file still costs a single read.
        raise InvalidParquetError(f"not a Parquet file: leading magic is {tail[:4]!r}, expected b'PAR1'")
    return parse_file_metadata(data)


# --- Schema tree ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SchemaNode:
    element: SchemaElement
    children: tuple[SchemaNode, ...]
    #: Names from below the root, e.g. ('v', 'typed_value', 'a', 'value'); () for the root.
    path: tuple[str, ...]
    max_definition_level: int
    max_repetition_level: int
    #: Position among all leaves (= index of its ColumnChunk in every row group); None for groups.
    leaf_index: int | None

    @property
    def name(self) -> str:
        return self.element.name

    @property
    def is_leaf(self) -> bool:
        return self.leaf_index is not None

    def child(self, name: str) -> SchemaNode | None:
        for c in self.children:
            if c.element.name == name:
                return c
        return None


def build_schema_tree(schema: Sequence[SchemaElement]) -> SchemaNode:
    """Rebuild the tree that ``FileMetaData.schema`` lists flat.

    "The nodes of the tree are flattened to a list by doing a depth-first traversal. The first
    element is the root." Built without recursion, so deep schemas cannot exhaust the stack.
    """
    n = len(schema)
    if n == 0:
        raise InvalidParquetError(
            "corrupt Parquet footer: the schema is empty (it must at least have a root)"
        )
    root = schema[0]
    if root.num_children is None or root.num_children < 0:
        raise InvalidParquetError(
            f"corrupt Parquet footer: schema root {root.name!r} is not a group (num_children={root.num_children})"
        )
    children: list[list[int]] = [[] for _ in range(n)]
    paths: list[tuple[str, ...]] = [()] * n
    def_levels = [0] * n
    rep_levels = [0] * n
    leaf_indexes: list[int | None] = [None] * n
    leaves = 0
    # Stack of [element index, children still to attach].
    stack: list[list[int]] = [[0, root.num_children]]
    i = 1
    while stack:
        top = stack[-1]
        if top[1] == 0:
            stack.pop()
            continue
        if i >= n:
            raise InvalidParquetError(
                f"corrupt Parquet footer: schema element {schema[top[0]].name!r} declares more children "
                f"than the schema's {n} elements hold"
            )
        top[1] -= 1
        parent = top[0]
        el = schema[i]
        children[parent].append(i)
        paths[i] = (*paths[parent], el.name)
        # "The root of the schema does not have a repetition_type. All other nodes must have one"
        rep = el.repetition
        if rep is None:
            raise InvalidParquetError(
                f"corrupt Parquet footer: schema element {el.name!r} has no repetition_type"
            )
        if rep == "VECTOR":
            raise InvalidParquetError(
                f"schema element {el.name!r} uses VECTOR repetition, which is not supported"
            )
        # Each optional or repeated ancestor adds a definition level; each repeated one a
        # repetition level (Dremel encoding, Parquet README "Nested Encoding").
        def_levels[i] = def_levels[parent] + (rep != "REQUIRED")
        rep_levels[i] = rep_levels[parent] + (rep == "REPEATED")
        # "if it is a group (inner node) then type is undefined and num_children is defined
        #  - if it is a primitive type (leaf) then type is defined and num_children is undefined"
        nc = el.num_children
        if nc is not None and nc < 0:
            raise InvalidParquetError(
                f"corrupt Parquet footer: schema element {el.name!r} has num_children={nc}"
            )
        if nc is None or (nc == 0 and el.type is not None):
            if el.type is None:
                raise InvalidParquetError(
                    f"corrupt Parquet footer: schema element {el.name!r} has neither a type nor children"
                )
            leaf_indexes[i] = leaves
            leaves += 1
        else:
            if len(stack) >= MAX_SCHEMA_DEPTH:
                raise InvalidParquetError(f"schema nested more than {MAX_SCHEMA_DEPTH} levels deep")
            stack.append([i, nc])
        i += 1
    if i != n:
        raise InvalidParquetError(
            f"corrupt Parquet footer: the schema root's num_children account for {i} elements but the schema has {n}"
        )
    # Pre-order puts children after their parent, so building back to front has them ready.
    nodes: list[SchemaNode | None] = [None] * n
    for j in range(n - 1, -1, -1):
        nodes[j] = SchemaNode(
            schema[j],
            tuple(typing.cast(SchemaNode, nodes[c]) for c in children[j]),
            paths[j],
            def_levels[j],
            rep_levels[j],
            leaf_indexes[j],
        )
    return typing.cast(SchemaNode, nodes[0])


def iter_leaves(root: SchemaNode) -> Iterator[SchemaNode]:
    """Leaves in column order (depth first), without recursion."""
    stack = [root]
    while stack:
        node = stack.pop()
        if node.leaf_index is not None:
            yield node
        else:
            stack.extend(reversed(node.children))


def validate_row_groups(root: SchemaNode, meta: FileMetaData, leaves: Sequence[SchemaNode] | None = None) -> None:
    """Check the footer against its own schema; raise InvalidParquetError where they disagree.
    ``leaves`` (the root's leaves in order) saves walking the tree when the caller has them.

    * every row group has one chunk per leaf, in leaf order, with the leaf's path and physical
      type: "RowGroup.columns: Metadata for each column chunk in this row group. This list must
      have the same order as the SchemaElement list in FileMetaData.";
    * ``column_orders``, when present, has one entry per leaf (otherwise which order applies to
      which column is undefined, and min/max statistics could be misread).
    """
    if leaves is None:
        leaves = list(iter_leaves(root))
    for g, rg in enumerate(meta.row_groups):
        if len(rg.columns) != len(leaves):
            raise InvalidParquetError(
                f"corrupt Parquet footer: row group {g} has {len(rg.columns)} column chunks "
                f"but the schema has {len(leaves)} leaf columns"
            )
        for leaf, chunk in zip(leaves, rg.columns, strict=True):
            md = chunk.meta_data
            if md is None:
                continue  # encrypted column: its metadata is not in the plaintext footer
            if md.path_in_schema != leaf.path:
                raise InvalidParquetError(
                    f"corrupt Parquet footer: row group {g} column {leaf.leaf_index} has path "
                    f"{'.'.join(md.path_in_schema)!r} but the schema leaf is {'.'.join(leaf.path)!r}"
                )
            if md.type != leaf.element.type:
                raise InvalidParquetError(
                    f"corrupt Parquet footer: row group {g} column {'.'.join(leaf.path)!r} is {md.type} "
                    f"in its chunk but {leaf.element.type} in the schema"
                )
    if meta.column_orders is not None and len(meta.column_orders) != len(leaves):
        # "Sort orders are listed in the order matching the columns in the schema ... only leaf
        #  nodes of the schema are represented in the list of sort orders."
        raise InvalidParquetError(
            f"corrupt Parquet footer: {len(meta.column_orders)} column orders for {len(leaves)} leaf columns"
        )
