"""A pure reader of the Parquet file footer: ``FileMetaData`` in the Thrift Compact Protocol.

In the style of h11: pure functions over ``bytes``, frozen typed results, and every check next to
the text of the specification that motivates it. Bad input raises
:class:`service.errors.InvalidParquetError`; no ``IndexError``, ``struct.error``,
``UnicodeDecodeError`` or ``RecursionError`` escapes, and every loop is bounded by the input length.

The modules, from the wire up:

* :mod:`.compact`: the Thrift Compact Protocol (wire types, varints, skipping unknown fields) and
  the ``Struct`` table that describes one struct as data;
* :mod:`.metadata`: the results, ``FileMetaData`` and its parts as frozen dataclasses;
* :mod:`.thrift_tables`: ``parquet.thrift`` transcribed as ``Struct`` tables and enums;
* :mod:`.codegen`: compiles each table into a specialised Python reader, the specification;
* :mod:`.accel`: hands the same tables to the C accelerator ``service.parquet._compact``, which
  falls back to the Python reader on anything unusual;
* :mod:`.read`: locating and decoding a file's footer (the entry points);
* :mod:`.schema_tree`: the flat schema rebuilt as a tree, and row groups checked against it.

``service.parquet.pages`` declares its page-header tables with the same ``compact`` vocabulary.
"""

from service.parquet.footer.accel import ACCELERATED
from service.parquet.footer.compact import MAX_THRIFT_DEPTH
from service.parquet.footer.metadata import (
    ColumnChunk,
    ColumnMetaData,
    FileMetaData,
    LogicalType,
    PageEncodingStats,
    RowGroup,
    SchemaElement,
    SortingColumn,
    Statistics,
)
from service.parquet.footer.read import (
    DEFAULT_MAX_FOOTER_BYTES,
    PARQUET_MAGIC,
    TAIL_READ_SIZE,
    parse_file_metadata,
    read_file_metadata,
    read_file_tail,
    read_footer_bytes,
)
from service.parquet.footer.schema_tree import (
    SchemaNode,
    SchemaShape,
    build_schema_tree,
    iter_leaves,
    schema_shape,
    validate_row_groups,
)

__all__ = [
    "ACCELERATED",
    "DEFAULT_MAX_FOOTER_BYTES",
    "MAX_THRIFT_DEPTH",
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
    "SchemaShape",
    "SortingColumn",
    "Statistics",
    "build_schema_tree",
    "iter_leaves",
    "parse_file_metadata",
    "read_file_metadata",
    "read_file_tail",
    "read_footer_bytes",
    "schema_shape",
    "validate_row_groups",
]
