"""The decoded footer: ``FileMetaData`` and its parts as frozen, slotted dataclasses.

Field names and optionality follow ``parquet.thrift``; fields the reader does not model
(encryption, size and geospatial statistics, bloom filter offsets, ...) are absent. The C
decoder fills these classes' slots directly (see :mod:`.accel`), so they stay plain
``slots=True`` dataclasses without ``__post_init__``.
"""

from __future__ import annotations

from dataclasses import dataclass


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
