"""``parquet.thrift`` transcribed as data: the enums and the :class:`~.compact.Struct` tables of
``FileMetaData`` and everything it contains, each next to the IDL it transcribes.

Field ids come from ``parquet.thrift`` (apache/parquet-format, ``src/main/thrift/parquet.thrift``).
Fields not in a table (unknown ones, and those not modelled: encryption, size and geospatial
statistics, bloom filter offsets, ...) are skipped, as the protocol allows. Unions are decoded as
structs whose ``make`` function checks that at most one member is set and flattens the result.
"""

from __future__ import annotations

import typing

from service.errors import InvalidParquetError
from service.parquet.footer.compact import (
    K_BOOL,
    K_BYTES,
    K_ENUM,
    K_INT,
    K_LIST,
    K_STR,
    K_STRUCT,
    K_TEXT,
    OPT,
    REQ,
    Struct,
    enum_table,
)
from service.parquet.footer.metadata import (
    ColumnChunk,
    ColumnMetaData,
    LogicalType,
    PageEncodingStats,
    RowGroup,
    SchemaElement,
    SortingColumn,
    Statistics,
)

# --- Thrift enums (parquet.thrift) ---------------------------------------------------------------

# TYPE and REPETITION are closed: without the physical type or the repetition nothing can be
# decoded, so an unknown value makes the file unreadable. The other enums (codecs, encodings, ...)
# are open: new members are added over time ("Codecs added in format version X.Y can be read by
# readers based on X.Y and later"), so an unknown value is kept as 'UNKNOWN_<n>' and left for the
# consumer to reject if it must.
TYPE = enum_table(
    "BOOLEAN", "INT32", "INT64", "INT96", "FLOAT", "DOUBLE", "BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY",
    closed=True,
)  # fmt: skip
# "3: The field is a fixed-size vector group. See LogicalTypes.md." (VECTOR is experimental.)
REPETITION = enum_table("REQUIRED", "OPTIONAL", "REPEATED", "VECTOR", closed=True)
CONVERTED_TYPE = enum_table(
    "UTF8", "MAP", "MAP_KEY_VALUE", "LIST", "ENUM", "DECIMAL", "DATE", "TIME_MILLIS", "TIME_MICROS",
    "TIMESTAMP_MILLIS", "TIMESTAMP_MICROS", "UINT_8", "UINT_16", "UINT_32", "UINT_64",
    "INT_8", "INT_16", "INT_32", "INT_64", "JSON", "BSON", "INTERVAL",
)  # fmt: skip
# "GROUP_VAR_INT = 1; This encoding is deprecated. It was never used." -> left as a gap.
ENCODING = enum_table(
    "PLAIN", None, "PLAIN_DICTIONARY", "RLE", "BIT_PACKED", "DELTA_BINARY_PACKED",
    "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY", "RLE_DICTIONARY", "BYTE_STREAM_SPLIT",
)  # fmt: skip
CODEC = enum_table("UNCOMPRESSED", "SNAPPY", "GZIP", "LZO", "BROTLI", "LZ4", "ZSTD", "LZ4_RAW")
PAGE_TYPE = enum_table("DATA_PAGE", "INDEX_PAGE", "DICTIONARY_PAGE", "DATA_PAGE_V2")
EDGE_ALGORITHM = enum_table("SPHERICAL", "VINCENTY", "THOMAS", "ANDOYER", "KARNEY")

# --- Struct tables -------------------------------------------------------------------------------

# List element specs: (kind, argument).
_LIST_OF_STR = (K_STR, None)

# -- Logical types ---------------------------------------------------------------------------

# "Empty structs to use as logical type annotations": StringType, UUIDType, MapType, ListType,
# VectorType, EnumType, DateType, Float16Type, NullType, JsonType, BsonType, MilliSeconds, ...
EMPTY = Struct("(empty annotation struct)", (), lambda: True)

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


TIME_UNIT = Struct(
    "TimeUnit",
    [(1, "MILLIS", K_STRUCT, EMPTY, OPT), (2, "MICROS", K_STRUCT, EMPTY, OPT),
     (3, "NANOS", K_STRUCT, EMPTY, OPT)],
    _make_time_unit,
    spread=False,
)  # fmt: skip

# struct DecimalType { 1: required i32 scale  2: required i32 precision }
DECIMAL_TYPE = Struct(
    "DecimalType",
    [(1, "scale", K_INT, None, REQ), (2, "precision", K_INT, None, REQ)],
    tuple,
    spread=False,
)
# struct TimestampType / TimeType { 1: required bool isAdjustedToUTC  2: required TimeUnit unit }
TIMESTAMP_TYPE = Struct(
    "TimestampType",
    [(1, "isAdjustedToUTC", K_BOOL, None, REQ), (2, "unit", K_STRUCT, TIME_UNIT, REQ)],
    tuple,
    spread=False,
)
TIME_TYPE = Struct(
    "TimeType",
    [(1, "isAdjustedToUTC", K_BOOL, None, REQ), (2, "unit", K_STRUCT, TIME_UNIT, REQ)],
    tuple,
    spread=False,
)
# struct IntType { 1: required i8 bitWidth  2: required bool isSigned }
INT_TYPE = Struct(
    "IntType",
    [(1, "bitWidth", K_INT, None, REQ), (2, "isSigned", K_BOOL, None, REQ)],
    tuple,
    spread=False,
)
# struct VariantType { 1: optional i8 specification_version }
VARIANT_TYPE = Struct("VariantType", [(1, "specification_version", K_INT, None, OPT)], tuple, spread=False)
# struct GeometryType { 1: optional string crs; }
GEOMETRY_TYPE = Struct("GeometryType", [(1, "crs", K_TEXT, None, OPT)], tuple, spread=False)
# struct GeographyType { 1: optional string crs; 2: optional EdgeInterpolationAlgorithm algorithm; }
GEOGRAPHY_TYPE = Struct(
    "GeographyType",
    [(1, "crs", K_TEXT, None, OPT), (2, "algorithm", K_ENUM, EDGE_ALGORITHM, OPT)],
    tuple,
    spread=False,
)

# union LogicalType { 1: STRING 2: MAP 3: LIST 4: ENUM 5: DECIMAL 6: DATE 7: TIME 8: TIMESTAMP
#   // 9: reserved for INTERVAL
#   10: INTEGER 11: UNKNOWN 12: JSON 13: BSON 14: UUID 15: FLOAT16 16: VARIANT 17: GEOMETRY
#   18: GEOGRAPHY 19: VECTOR }
_LOGICAL_MEMBERS: tuple[tuple[int, str, Struct], ...] = (
    (1, "STRING", EMPTY), (2, "MAP", EMPTY), (3, "LIST", EMPTY), (4, "ENUM", EMPTY),
    (5, "DECIMAL", DECIMAL_TYPE), (6, "DATE", EMPTY), (7, "TIME", TIME_TYPE),
    (8, "TIMESTAMP", TIMESTAMP_TYPE), (10, "INTEGER", INT_TYPE), (11, "UNKNOWN", EMPTY),
    (12, "JSON", EMPTY), (13, "BSON", EMPTY), (14, "UUID", EMPTY), (15, "FLOAT16", EMPTY),
    (16, "VARIANT", VARIANT_TYPE), (17, "GEOMETRY", GEOMETRY_TYPE),
    (18, "GEOGRAPHY", GEOGRAPHY_TYPE), (19, "VECTOR", EMPTY),
)  # fmt: skip

# Results for the annotation-only members are shared: LogicalType is immutable.
_SIMPLE_LOGICAL = {name: LogicalType(name) for _, name, spec in _LOGICAL_MEMBERS if spec is EMPTY}
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


LOGICAL_TYPE = Struct(
    "LogicalType",
    [(fid, name, K_STRUCT, spec, OPT) for fid, name, spec in _LOGICAL_MEMBERS],
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
SCHEMA_ELEMENT = Struct(
    "SchemaElement",
    [
        (4, "name", K_STR, None, REQ),
        (1, "type", K_ENUM, TYPE, OPT),
        (2, "type_length", K_INT, None, OPT),
        (3, "repetition_type", K_ENUM, REPETITION, OPT),
        (5, "num_children", K_INT, None, OPT),
        (6, "converted_type", K_ENUM, CONVERTED_TYPE, OPT),
        (7, "scale", K_INT, None, OPT),
        (8, "precision", K_INT, None, OPT),
        (9, "field_id", K_INT, None, OPT),
        (10, "logicalType", K_STRUCT, LOGICAL_TYPE, OPT),
    ],
    SchemaElement,
)

# -- Column chunks ---------------------------------------------------------------------------

# struct Statistics { 1: optional binary max; 2: optional binary min; 3: optional i64 null_count;
#   4: optional i64 distinct_count; 5: optional binary max_value; 6: optional binary min_value;
#   7: optional bool is_max_value_exact; 8: optional bool is_min_value_exact;
#   9: optional i64 nan_count; }  "All fields are optional."
STATISTICS = Struct(
    "Statistics",
    [
        (1, "max", K_BYTES, None, OPT),
        (2, "min", K_BYTES, None, OPT),
        (3, "null_count", K_INT, None, OPT),
        (4, "distinct_count", K_INT, None, OPT),
        (5, "max_value", K_BYTES, None, OPT),
        (6, "min_value", K_BYTES, None, OPT),
        (7, "is_max_value_exact", K_BOOL, None, OPT),
        (8, "is_min_value_exact", K_BOOL, None, OPT),
        (9, "nan_count", K_INT, None, OPT),
    ],
    Statistics,
)

# struct PageEncodingStats { 1: required PageType page_type; 2: required Encoding encoding;
#   3: required i32 count; }
PAGE_ENCODING_STATS = Struct(
    "PageEncodingStats",
    [
        (1, "page_type", K_ENUM, PAGE_TYPE, REQ),
        (2, "encoding", K_ENUM, ENCODING, REQ),
        (3, "count", K_INT, None, REQ),
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
COLUMN_META_DATA = Struct(
    "ColumnMetaData",
    [
        (1, "type", K_ENUM, TYPE, REQ),
        (2, "encodings", K_LIST, (K_ENUM, ENCODING), REQ),
        (3, "path_in_schema", K_LIST, _LIST_OF_STR, REQ),
        (4, "codec", K_ENUM, CODEC, REQ),
        (5, "num_values", K_INT, None, REQ),
        (6, "total_uncompressed_size", K_INT, None, REQ),
        (7, "total_compressed_size", K_INT, None, REQ),
        (9, "data_page_offset", K_INT, None, REQ),
        (10, "index_page_offset", K_INT, None, OPT),
        (11, "dictionary_page_offset", K_INT, None, OPT),
        (12, "statistics", K_STRUCT, STATISTICS, OPT),
        (13, "encoding_stats", K_LIST, (K_STRUCT, PAGE_ENCODING_STATS), OPT),
    ],
    ColumnMetaData,
)

# struct ColumnChunk { 1: optional string file_path  2: required i64 file_offset = 0
#   3: optional ColumnMetaData meta_data  4: optional i64 offset_index_offset
#   5: optional i32 offset_index_length  6: optional i64 column_index_offset
#   7: optional i32 column_index_length  8: crypto_metadata  9: encrypted_column_metadata }
# file_offset is "DEPRECATED" and declared with a default of 0, so a footer that omits it is
# read as 0 rather than rejected. meta_data stays optional: encrypted columns have none here.
COLUMN_CHUNK = Struct(
    "ColumnChunk",
    [
        (1, "file_path", K_STR, None, OPT),
        (2, "file_offset", K_INT, None, OPT),
        (3, "meta_data", K_STRUCT, COLUMN_META_DATA, OPT),
        (6, "column_index_offset", K_INT, None, OPT),
        (7, "column_index_length", K_INT, None, OPT),
        (4, "offset_index_offset", K_INT, None, OPT),
        (5, "offset_index_length", K_INT, None, OPT),
    ],
    ColumnChunk,
    defaults={"file_offset": 0},
)

# struct SortingColumn { 1: required i32 column_idx  2: required bool descending
#   3: required bool nulls_first }
SORTING_COLUMN = Struct(
    "SortingColumn",
    [
        (1, "column_idx", K_INT, None, REQ),
        (2, "descending", K_BOOL, None, REQ),
        (3, "nulls_first", K_BOOL, None, REQ),
    ],
    SortingColumn,
)

# struct RowGroup { 1: required list<ColumnChunk> columns  2: required i64 total_byte_size
#   3: required i64 num_rows  4: optional list<SortingColumn> sorting_columns
#   5: optional i64 file_offset  6: optional i64 total_compressed_size  7: optional i16 ordinal }
ROW_GROUP = Struct(
    "RowGroup",
    [
        (1, "columns", K_LIST, (K_STRUCT, COLUMN_CHUNK), REQ),
        (2, "total_byte_size", K_INT, None, REQ),
        (3, "num_rows", K_INT, None, REQ),
        (4, "sorting_columns", K_LIST, (K_STRUCT, SORTING_COLUMN), OPT),
        (5, "file_offset", K_INT, None, OPT),
        (6, "total_compressed_size", K_INT, None, OPT),
        (7, "ordinal", K_INT, None, OPT),
    ],
    RowGroup,
)

# -- File ------------------------------------------------------------------------------------

# struct KeyValue { 1: required string key  2: optional string value }
KEY_VALUE = Struct(
    "KeyValue", [(1, "key", K_TEXT, None, REQ), (2, "value", K_TEXT, None, OPT)], tuple, spread=False
)


def _make_column_order(slots: list[typing.Any]) -> str:
    # union ColumnOrder { 1: TypeDefinedOrder TYPE_ORDER; 2: IEEE754TotalOrder IEEE_754_TOTAL_ORDER;
    #   3: Int96TimestampOrder INT96_TIMESTAMP_ORDER }
    # "If the reader does not support the value of this union, min and max stats for this column
    #  should be ignored." -> everything but TYPE_ORDER is reported as 'UNKNOWN'.
    return "TYPE_ORDER" if slots[0] is not None else "UNKNOWN"


COLUMN_ORDER = Struct(
    "ColumnOrder", [(1, "TYPE_ORDER", K_STRUCT, EMPTY, OPT)], _make_column_order, spread=False
)

# struct FileMetaData { 1: required i32 version  2: required list<SchemaElement> schema;
#   3: required i64 num_rows  4: required list<RowGroup> row_groups
#   5: optional list<KeyValue> key_value_metadata  6: optional string created_by
#   7: optional list<ColumnOrder> column_orders;  8: encryption_algorithm
#   9: footer_signing_key_metadata }
FILE_META_DATA = Struct(
    "FileMetaData",
    [
        (1, "version", K_INT, None, REQ),
        (2, "schema", K_LIST, (K_STRUCT, SCHEMA_ELEMENT), REQ),
        (3, "num_rows", K_INT, None, REQ),
        (4, "row_groups", K_LIST, (K_STRUCT, ROW_GROUP), REQ),
        (5, "key_value_metadata", K_LIST, (K_STRUCT, KEY_VALUE), OPT),
        (6, "created_by", K_TEXT, None, OPT),
        (7, "column_orders", K_LIST, (K_STRUCT, COLUMN_ORDER), OPT),
    ],
    list,  # finished by parse_file_metadata, which knows footer_size
    spread=False,
    defaults={"key_value_metadata": ()},
    # The files of one table share their schema and column orders: decoded once, and the same
    # tuple each time, so the extractor's per-schema plan is found by identity
    # (service.stats.extract) and no ColumnOrder union is rebuilt per column and file.
    interned=("schema", "column_orders"),
)
