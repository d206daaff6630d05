"""Per-file statistics in DuckLake's format: every fully shredded Variant path of a Parquet file
(``ducklake_file_variant_stats``) and every plain column (``ducklake_file_column_stats``).

The footer decides whatever it can prove; column data is read only where it cannot:

* **Fully shredded** (DuckLake's definition, seeds/ducklake-pr-750): in every row the field is
  missing, null, or held in ``typed_value`` with that type. Proven by the sibling ``value``
  column being absent, all null (null_count == num_values), or holding only Variant null
  (min == max == ``0x00``). Otherwise the ``value`` chunk is read. A Variant null beside a
  non-null ``typed_value`` in the same entry is invalid shredding (spec: "Writers must not
  produce data where both value and typed_value are non-null"), so that case is read too.
* **Counts**: ``null_count`` is the ``typed_value`` chunk's null count (leaf entries whose
  typed_value is null: missing keys, Variant nulls, rows whose ancestors have another shape,
  empty arrays); ``value_count`` = num_values − null_count; sizes are the compressed sizes of
  the ``typed_value`` chunks only. Absent null counts are read, never assumed zero.
* **Bounds** come from ``min_value``/``max_value`` when the column order and writer make them
  trustworthy and exact (seeds/parquet-statistics-rules.txt); otherwise the column is read.
  Float columns need two facts no footer holds (writers do not fill ``nan_count``, and they
  normalise zero bounds while DuckLake keeps the sign of the first zero seen): their pages are
  scanned for them (:mod:`service.parquet.pages`), and read through pyarrow only when the scan
  cannot answer exactly.
* **Plain columns**: every top-level primitive column and struct leaf (dotted ``a.b``), never
  inside a Variant group, a list, a map or a repeated field, one row each, by the same counts and
  bounds rules (checked against the real DuckLake extension on DuckDB-written files). Types
  beyond the Variant type table: unsigned integers (as Spark reads them: the next wider signed
  type, UBIGINT as DECIMAL(20,0), so bounds above 2^63 are exact), millisecond timestamps and times (as microseconds), INT96 (an
  instant, as Spark reads it; counts only, its order being undefined), nanosecond times (TIME,
  bounds rounded outward to microseconds), DECIMAL wider than 38 digits (DOUBLE, as DuckDB types
  it; footer bounds rounded outward). INTERVAL, TIMETZ and GEOMETRY get exact counts and no
  bounds (``COUNTS_ONLY_KINDS``; DuckLake writes zeros for the first two). No row for types with
  no place in the value model (FLOAT16, BSON...); JSON columns are their text (VARCHAR), as
  DuckLake renders them.
  HUGEINT/UHUGEINT, which DuckDB writes as a DOUBLE without bounds (it drops a real DOUBLE's
  bounds only for a NaN), get counts only, as in DuckLake (NOTES.md §8).
* **Values a type cannot hold** are unknown bounds, never errors: times of day outside 0..24 h
  (fastparquet's timedeltas), timestamps whose unit conversion leaves int64 (DuckDB's infinities,
  the extreme int64 values in any unit, stay infinities), bounds no pyarrow kernel computes.
  Arrow types pyarrow's kernels refuse (dictionaries, views, decimal32/64, durations) are read
  as their plain equivalents. A column whose name the catalog cannot store gets no row.
"""

from __future__ import annotations

import functools
import json
import math
import re
import struct
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple, TypeVar

from service.errors import (
    InvalidParquetError,
    InvalidStatsError,
    LimitExceededError,
    ShredcatError,
    UnsupportedShreddingError,
)
from service.limits import DEFAULT_FILE_LIMITS, FileLimits
from service.parquet.footer import (
    DEFAULT_MAX_FOOTER_BYTES,
    ColumnMetaData,
    FileMetaData,
    SchemaElement,
    SchemaNode,
    SchemaShape,
    Statistics,
    build_schema_tree,
    iter_leaves,
    schema_shape,
    validate_row_groups,
)
from service.parquet.footer.accel import slots_builder
from service.parquet.io import (
    ColumnReader,
    InHand,
    OpenedFile,
    OverBudget,
    ReadBudget,
    first_leaf,
    one_line,
    open_beneath,
    open_parquet,
    read_metadata,
)
from service.parquet.pages import chunk_span, scan_float_chunk
from service.stats import geo
from service.stats.model import ColumnStats, FileStats, PathStats, ShreddedObject
from service.values import (
    INT64_MAX,
    INT64_MIN,
    INTEGER_RANGES,
    MICROS_PER_DAY,
    TIMESTAMP_KINDS,
    TS_INFINITY,
    TS_NEG_INFINITY,
    Bound,
    Kind,
    ShreddedType,
    bound_lt,
    check_bound,
    days_from_civil,
    decimal_from_unscaled,
    needs_truncation,
    nul_free_bounds,
    quantize_to_scale,
    truncate_lower,
    truncate_upper,
)
from service.values.text import unstorable_name
from service.variant.binary import metadata_length
from service.variant.paths import ROOT, quote_field
from service.variant.schema import (
    ShreddedLeaf,
    ShredNode,
    VariantColumn,
    find_variant_columns,
    shredded_leaves,
    shredded_type_of,
)

if TYPE_CHECKING:
    import pyarrow as pa

VARIANT_NULL = b"\x00"


# --- writer guards ----------------------------------------------------------------------------

_CREATED_BY = re.compile(r"^(?P<app>[^ ]+) version (?P<ver>\d+(?:\.\d+)*)")


@functools.lru_cache(maxsize=64)
def _writer(created_by: str | None) -> tuple[str, tuple[int, ...]]:
    if not created_by:
        return ("", ())
    m = _CREATED_BY.match(created_by)
    if not m:
        return (created_by.split(" ")[0].lower(), ())
    return (m.group("app").lower(), tuple(int(x) for x in m.group("ver").split(".")))


#: Spark in LEGACY rebase mode (``spark.sql.parquet.datetimeRebaseModeInWrite=LEGACY``, and every
#: Spark 2.x) stores dates before 1582-10-15 and timestamps before 1900-01-01T00:00:00Z in the
#: Julian calendar (with the old time zone rules) and marks the file with this key, or only with a
#: Spark version before 3.0; Spark's readers rebase such values to the proleptic Gregorian
#: calendar, so their stored bounds are not the values Spark compares (1000-06-15 is stored as
#: 1000-06-21). The values at or after the cutovers are stored as they are.
_SPARK_LEGACY_DATETIME = "org.apache.spark.legacyDateTime"
_SPARK_VERSION = "org.apache.spark.version"
_DATE_CUTOVER = days_from_civil(1582, 10, 15)
_TIMESTAMP_CUTOVER_DAYS = days_from_civil(1900, 1, 1)
#: The first value stored as it is, per kind (days, microseconds or nanoseconds).
_CALENDAR_CUTOVERS = {
    Kind.DATE: _DATE_CUTOVER,
    Kind.TIMESTAMP: _TIMESTAMP_CUTOVER_DAYS * MICROS_PER_DAY,
    Kind.TIMESTAMPTZ: _TIMESTAMP_CUTOVER_DAYS * MICROS_PER_DAY,
    Kind.TIMESTAMP_NS: _TIMESTAMP_CUTOVER_DAYS * MICROS_PER_DAY * 1000,
    Kind.TIMESTAMPTZ_NS: _TIMESTAMP_CUTOVER_DAYS * MICROS_PER_DAY * 1000,
}


def spark_legacy_calendar(meta: FileMetaData) -> bool:
    """Whether Spark reads this file's old dates and timestamps through the Julian calendar
    rebase (see :data:`_CALENDAR_CUTOVERS`)."""
    return legacy_calendar(dict(meta.key_value_metadata or ()))


def legacy_calendar(kv: Mapping[str, str | None]) -> bool:
    """:func:`spark_legacy_calendar` of a footer's key-value metadata."""
    if _SPARK_LEGACY_DATETIME in kv:
        return True
    version = kv.get(_SPARK_VERSION)
    if not version:
        return False
    m = re.match(r"(\d+)\.", version)
    return m is not None and int(m.group(1)) < 3


#: Spark's schema of the rows it wrote; a string field of a collation other than binary
#: (``STRING COLLATE UTF8_LCASE``, ICU locales) names it in ``metadata.__COLLATIONS``.
_SPARK_ROW_METADATA = "org.apache.spark.sql.parquet.row.metadata"
_BINARY_COLLATION = "spark.UTF8_BINARY"


def spark_collated_fields(meta: FileMetaData) -> frozenset[str]:
    """The top-level fields holding a string Spark compares by a collation other than its byte
    order (``'ABC' = 'abc'`` under UTF8_LCASE): the footer's byte-order bounds do not bound what
    such a column's predicates select, so the field's plain columns get none."""
    return collated_fields(dict(meta.key_value_metadata or ()).get(_SPARK_ROW_METADATA))


def collated_fields(spark_row_metadata: str | None) -> frozenset[str]:
    """:func:`spark_collated_fields` of the text of Spark's row metadata (its schema as JSON)."""
    raw = spark_row_metadata
    try:
        schema = json.loads(raw) if raw else None
    except ValueError:
        return frozenset()
    fields = schema.get("fields") if isinstance(schema, dict) else None
    if not isinstance(fields, list):
        return frozenset()
    return frozenset(
        f["name"] for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str) and _collated(f)
    )


def _collated(node: object) -> bool:
    """Whether a non-binary collation appears anywhere in ``node`` (a field of Spark's schema JSON,
    its nested fields, array elements and map values included)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            coll = n.get("__COLLATIONS")
            if isinstance(coll, dict) and any(v != _BINARY_COLLATION for v in coll.values()):
                return True
            stack.extend(n.values())
        elif isinstance(n, list):
            stack.extend(n)
    return False


#: The footer keys :func:`spark_footer_facts` reads.
SPARK_FOOTER_KEYS = (_SPARK_ROW_METADATA, _SPARK_LEGACY_DATETIME, _SPARK_VERSION)


def spark_footer_facts(kv: Mapping[str, str | None]) -> tuple[bool, frozenset[str]]:
    """Of a file's footer key-value metadata: whether Spark wrote it in its LEGACY calendar mode,
    and the fields it compares by a collation (readers beside Spark need both)."""
    return legacy_calendar(kv), collated_fields(kv.get(_SPARK_ROW_METADATA))


def _under(column: str, fields: frozenset[str]) -> bool:
    return any(column == f or column.startswith(f + ".") for f in fields)


_Row = TypeVar("_Row", PathStats, ColumnStats)


def _without_rebased_bounds(row: _Row) -> _Row:
    """``row`` of a legacy-calendar file: its bounds kept only when every value is past the
    cutover (the minimum is known and at or after it), else none (unknown, never pruned on)."""
    cutover = _CALENDAR_CUTOVERS.get(row.shredded_type.kind)
    if cutover is None or (row.min_value is None and row.max_value is None):
        return row
    if isinstance(row.min_value, int) and row.min_value >= cutover:
        return row
    return replace(row, min_value=None, max_value=None)


def binary_stats_trusted(created_by: str | None) -> bool:
    """parquet-mr before 1.8.0 wrote corrupt binary statistics (PARQUET-251); Arrow and
    parquet-java ignore them by the same check."""
    app, ver = _writer(created_by)
    return not (app == "parquet-mr" and ver and ver < (1, 8, 0))


# --- decoding footer statistics ---------------------------------------------------------------


_RawBounds = tuple[bytes | None, bytes | None]
_NO_BOUNDS: _RawBounds = (None, None)
_BINARY = frozenset(("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"))


def _usable_raw_bounds(meta: FileMetaData, leaf: SchemaNode, cm: ColumnMetaData) -> _RawBounds:
    """The raw (min, max) a reader may trust for ``leaf``, each None where it may not.

    parquet.thrift: "Without column_orders, the meaning of the min_value and max_value fields
    ... is undefined" and "The obsolete min and max fields ... are always sorted by signed
    comparison regardless of column_orders". Signed order is the type order only for the
    signed numeric and temporal types, so the deprecated fields are never used for byte arrays
    nor unsigned integers.
    """
    st = cm.statistics
    if st is None:
        return _NO_BOUNDS
    is_binary = cm.type in _BINARY
    if is_binary and not binary_stats_trusted(meta.created_by):
        return _NO_BOUNDS
    orders = meta.column_orders
    order_ok = True
    if orders is not None:
        idx = leaf.leaf_index
        order_ok = idx is not None and idx < len(orders) and orders[idx] == "TYPE_ORDER"
    if order_ok and (st.min_value is not None or st.max_value is not None):
        return (
            st.min_value if st.is_min_value_exact is not False else None,
            st.max_value if st.is_max_value_exact is not False else None,
        )
    if (
        not is_binary
        and cm.type != "INT96"
        and not _is_unsigned(leaf.element)
        and _writer(meta.created_by)[0] not in _BAD_DEPRECATED_BOUNDS
    ):
        return st.min, st.max
    return _NO_BOUNDS


def _is_unsigned(el: SchemaElement) -> bool:
    """An unsigned integer column: the deprecated fields' signed order is not its order (2^63
    sorts below 1), whether or not the footer has column orders."""
    lt = el.logical_type
    if lt is not None and lt.kind == "INTEGER":
        return lt.is_signed is False
    return el.converted_type in ("UINT_8", "UINT_16", "UINT_32", "UINT_64")


#: Writers whose deprecated min/max are not the column's bounds: fastparquet (2026.9.0) computes
#: them on pandas' representation, so an int column with nulls gets 8-byte doubles and a millisecond
#: timestamp before 1677 an overflowed nanosecond value (tests/writers/test_zoo.py).
_BAD_DEPRECATED_BOUNDS = frozenset(("fastparquet-python",))


_INT32 = struct.Struct("<i")
_INT64 = struct.Struct("<q")
_DOUBLE = struct.Struct("<d")


#: Turns a PLAIN-encoded statistic into a typed bound; None if malformed (then the data is read).
_Decoder = Callable[[bytes], "Bound | None"]


@functools.cache
def _raw_decoder(t: ShreddedType, pt: str | None, type_length: int | None) -> _Decoder:
    """The decoder of statistics of physical type ``pt`` into bounds of ``t``, specialised once per
    (type, physical type) and kept in the schema plan: statistics of every column chunk of every
    file go through it, so the common integer and temporal cases skip the general dispatch."""
    k = t.kind
    unpack: Callable[[bytes], tuple[Any, ...]] | None = None
    size = 0
    if pt == "INT32" and k is not Kind.DECIMAL:
        unpack, size = _INT32.unpack, 4
    elif pt == "INT64" and k is not Kind.DECIMAL:
        unpack, size = _INT64.unpack, 8
    if unpack is not None and (k in INTEGER_RANGES or k in _PLAIN_INT_KINDS):
        lo, hi = INTEGER_RANGES.get(k, (INT64_MIN, INT64_MAX))

        def decode_int(raw: bytes) -> Bound | None:
            if len(raw) != size:
                return None
            v: int = unpack(raw)[0]
            return v if lo <= v <= hi else None

        return decode_int
    if pt == "BYTE_ARRAY" and k is Kind.VARCHAR:
        return _decode_utf8
    if pt == "DOUBLE" and k is Kind.FLOAT64:
        return _decode_double
    return functools.partial(_decode_general, t, pt, type_length)


# The two other common cases, as _decode_general decodes them.
def _decode_utf8(raw: bytes) -> Bound | None:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _decode_double(raw: bytes) -> Bound | None:
    if len(raw) != 8:
        return None
    v: float = _DOUBLE.unpack(raw)[0]
    return None if math.isnan(v) else v  # NaN bounds are ignored (see _decode_general)


# Integer-coded types whose bound is the stored integer itself.
_PLAIN_INT_KINDS = (Kind.DATE, Kind.TIME, Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS)


def _decoder_of(t: ShreddedType, node: SchemaNode) -> _Decoder:
    el = node.element
    return _raw_decoder(t, el.type, el.type_length)


def _no_bound(raw: bytes) -> None:
    return None


def _decode_general(t: ShreddedType, pt: str | None, type_length: int | None, raw: bytes) -> Bound | None:
    try:
        v: Any
        if pt == "BOOLEAN":
            if len(raw) != 1:
                return None
            v = raw[0] != 0
        elif pt == "INT32":
            if len(raw) != 4:
                return None
            v = struct.unpack("<i", raw)[0]
        elif pt == "INT64":
            if len(raw) != 8:
                return None
            v = struct.unpack("<q", raw)[0]
        elif pt == "FLOAT":
            if len(raw) != 4:
                return None
            v = struct.unpack("<f", raw)[0]
        elif pt == "DOUBLE":
            if len(raw) != 8:
                return None
            v = struct.unpack("<d", raw)[0]
        elif pt in ("BYTE_ARRAY", "FIXED_LEN_BYTE_ARRAY"):
            if pt == "FIXED_LEN_BYTE_ARRAY" and len(raw) != type_length:
                return None
            v = raw
        else:
            return None
    except struct.error:
        return None
    k = t.kind
    if k is Kind.DECIMAL:
        assert t.scale is not None and t.precision is not None
        unscaled = int.from_bytes(v, "big", signed=True) if isinstance(v, bytes) else int(v)
        if isinstance(v, bytes) and not v:
            return None
        if abs(unscaled) >= 10**t.precision:
            return None
        return decimal_from_unscaled(unscaled, t.scale)
    if k in INTEGER_RANGES:
        lo, hi = INTEGER_RANGES[k]
        return v if lo <= v <= hi else None
    if k is Kind.VARCHAR:
        try:
            text: str = v.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return text
    if k is Kind.UUID:
        return uuid.UUID(bytes=v)
    if k in (Kind.FLOAT32, Kind.FLOAT64):
        # parquet.thrift: "If the min is a NaN, it should be ignored. If the max is a NaN, it
        # should be ignored." Zeros come back as written; their sign is settled by the caller.
        if math.isnan(v):
            return None
        return float(v)
    other: Bound = v  # the physical value as decoded above (a bool, bytes, an int of another kind)
    return other


# --- reading column data ----------------------------------------------------------------------


def _kernel_ready(arr: pa.Array) -> pa.Array:
    """``arr`` in a type pyarrow's compute kernels take, same values: writers put types in files
    (through the stored Arrow schema) that ``min_max``/``filter`` refuse when read back
    (NOTES.md §8): dictionaries, view types, decimal32/64, durations."""
    import pyarrow as pa

    if isinstance(arr, pa.ExtensionArray):
        arr = arr.storage
    at = arr.type
    if pa.types.is_dictionary(at):
        return _kernel_ready(arr.dictionary_decode())
    if pa.types.is_string_view(at):
        return arr.cast(pa.large_string())
    if pa.types.is_binary_view(at):
        return arr.cast(pa.large_binary())
    if pa.types.is_decimal32(at) or pa.types.is_decimal64(at):
        return arr.cast(pa.decimal128(at.precision, at.scale))
    if pa.types.is_fixed_size_binary(at):
        return arr.cast(pa.binary())
    if pa.types.is_duration(at):
        # The stored INT64 (no logical type: the model's int64).
        return arr.cast(pa.int64())
    return arr


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}
_NANO_KINDS = (Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS)


def _py_values(t: ShreddedType, arr: pa.Array) -> tuple[pa.Array, int]:
    """An Arrow leaf array in the representation :mod:`service.values` uses, and the factor its
    integers still need to reach the model's unit (1 but for times and timestamps stored in a
    coarser unit, scaled by :func:`scale_stored` so that values past the model's range and
    DuckDB's infinities stay exact)."""
    import pyarrow as pa

    arr = _kernel_ready(arr)
    k = t.kind
    at = arr.type
    if pa.types.is_timestamp(at) or pa.types.is_time(at):
        model = 1_000_000_000 if k in _NANO_KINDS else 1_000_000
        stored = _PER_SECOND[at.unit]
        if model % stored:
            raise InvalidParquetError(f"unexpected Arrow type {at} for {t.name}")
        # time32 casts to int32 only; int64 holds every stored value of each.
        ints = arr.cast(pa.int32()).cast(pa.int64()) if pa.types.is_time32(at) else arr.cast(pa.int64())
        return ints, model // stored
    if pa.types.is_unsigned_integer(at):
        # Values above int64's range cannot be bounds of an int64 column: read as Python ints
        # and let the caller drop them.
        return (arr if pa.types.is_uint64(at) else arr.cast(pa.int64())), 1
    if k is Kind.DATE:
        return arr.cast(pa.int32()), 1
    if k in (Kind.TIME, *TIMESTAMP_KINDS):
        return arr.cast(pa.int64()), 1
    if k is Kind.UUID and pa.types.is_fixed_size_binary(arr.type):
        return arr.cast(pa.binary()), 1
    if k is Kind.DECIMAL and not pa.types.is_decimal(arr.type):
        # Arrow reads DECIMAL-annotated ints as decimal already; anything else is a surprise.
        raise InvalidParquetError(f"unexpected Arrow type {arr.type} for {t.name}")
    return arr, 1


def scale_stored(t: ShreddedType, v: int, factor: int) -> int | None:
    """A time or timestamp stored in a coarser unit (``factor`` model units each) in the model's
    unit; None where that leaves int64 (no bound), but DuckDB's infinities (the extreme int64
    values in any unit, NOTES.md §8) stay the model's infinities."""
    if factor == 1:
        return v
    if t.kind in TIMESTAMP_KINDS and (v in (TS_INFINITY, TS_NEG_INFINITY)):
        return v
    v *= factor
    return v if INT64_MIN <= v <= INT64_MAX else None


def _to_bound(t: ShreddedType, v: Any) -> Bound:
    if t.kind is Kind.UUID:
        return uuid.UUID(bytes=bytes(v))
    if t.kind is Kind.DECIMAL:
        assert t.scale is not None
        return quantize_to_scale(Decimal(v), t.scale)
    if t.kind in (Kind.FLOAT32, Kind.FLOAT64):
        return float(v)
    as_read: Bound = v  # pyarrow's Python value is already the type's representation
    return as_read


@dataclass(slots=True)
class _DataSummary:
    non_null: int = 0
    min: Bound | None = None
    max: Bound | None = None
    has_nan: bool = False


def _summarize(t: ShreddedType, arr: pa.Array) -> _DataSummary:
    """Non-null count, bounds and NaN of one leaf array; a bound pyarrow cannot compute for the
    array's type is unknown (None), never an error."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = _DataSummary(non_null=len(arr) - arr.null_count)
    if not out.non_null:
        return out
    try:
        vals, factor = _py_values(t, arr)
        vals = vals.drop_null()
        if t.is_float:
            nan = pc.is_nan(vals)
            out.has_nan = bool(pc.any(nan).as_py())
            if out.has_nan:
                vals = vals.filter(pc.invert(nan))
            if not len(vals):
                return out
        mm = pc.min_max(vals)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        # -0.0 and 0.0 compare equal; DuckDB keeps the first one seen.
        if t.is_float and (lo == 0.0 or hi == 0.0):
            first_zero = vals[pc.index(vals, 0.0).as_py()].as_py()
            lo = first_zero if lo == 0.0 else lo
            hi = first_zero if hi == 0.0 else hi
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError, UnicodeDecodeError):
        # A type no kernel takes, or strings that are not UTF-8 (pyarrow does not check them on
        # reading): counts only. (A float column always has kernels, so has_nan is never left
        # False for want of one.)
        return out
    if factor != 1:
        lo, hi = scale_stored(t, lo, factor), scale_stored(t, hi, factor)
    out.min = None if lo is None else _to_bound(t, lo)
    out.max = None if hi is None else _to_bound(t, hi)
    return out


# --- per-path extraction ----------------------------------------------------------------------


class _Ctx:
    """One file's extraction: its footer, the open file and what was learnt on the way."""

    __slots__ = ("_reader", "ancestor_ok", "budget", "f", "in_hand", "meta", "reads", "root")

    def __init__(
        self, meta: FileMetaData, root: SchemaNode, f: Any, in_hand: InHand | None, budget: ReadBudget
    ) -> None:
        self.meta = meta
        self.root = root
        self.f = f
        #: Bytes of the file already read (the footer's read): the page scans use them when they can.
        self.in_hand = in_hand
        self._reader: ColumnReader | None = None
        self.reads = 0
        #: Verdicts of ancestor checks, by id() of the ShredNode.
        self.ancestor_ok: dict[int, bool] = {}
        #: Column data this file may still decompress (SHREDCAT_MAX_DECOMPRESSED_BYTES).
        self.budget = budget

    def reader(self) -> ColumnReader:
        """The file opened by pyarrow (once, on first use)."""
        if self._reader is None:
            self._reader = ColumnReader(self.f, self.root)
        return self._reader

    def batches(self, rg: int, nodes: list[SchemaNode]) -> Iterator[list[pa.Array]]:
        """Aligned arrays of ``nodes`` in row group ``rg``, batch by batch; :class:`OverBudget`
        when the file's budget cannot pay for them (their footer size first)."""
        reader = self.reader()
        self.reads += 1
        leaves = {id(leaf): leaf for leaf in map(first_leaf, nodes)}.values()
        claim = sum(max(_chunk(self.meta, rg, leaf).total_uncompressed_size, 0) for leaf in leaves)
        return reader.batches(rg, nodes, self.budget, claim)


def _chunk(meta: FileMetaData, rg: int, leaf: SchemaNode) -> ColumnMetaData:
    assert leaf.leaf_index is not None
    cm = meta.row_groups[rg].columns[leaf.leaf_index].meta_data
    if cm is None:
        raise InvalidParquetError(f"row group {rg}: column {'.'.join(leaf.path)} has no metadata")
    return cm


def _is_null_residual(b: bytes, concatenated: bool) -> bool:
    if not concatenated:
        return b == VARIANT_NULL
    # Early Spark layout: untyped_value = metadata || value.
    try:
        n = metadata_length(b)
    except Exception:
        return False
    return b[n:] == VARIANT_NULL


def _all_null(cm: ColumnMetaData) -> bool:
    """The footer proves every entry of the chunk null (an absent null_count proves nothing)."""
    st = cm.statistics
    return st is not None and st.null_count is not None and st.null_count == cm.num_values


def _value_chunk_state(ctx: _Ctx, rg: int, value: SchemaNode, concatenated: bool) -> str:
    """'all_null', 'nulls_only' (only Variant nulls, conflicts unchecked), 'values', 'unknown'."""
    cm = _chunk(ctx.meta, rg, value)
    if _all_null(cm):
        return "all_null"
    lo, hi = _usable_raw_bounds(ctx.meta, value, cm)
    if lo is not None and hi is not None:
        if lo == hi and _is_null_residual(lo, concatenated):
            return "nulls_only"
        return "values"
    return "unknown"


def _only_objects(meta: FileMetaData, value: SchemaNode, cm: ColumnMetaData) -> bool:
    """Whether the footer proves that every non-null residual of the chunk is a Variant object.

    Binary statistics are ordered byte-wise, unsigned; when the exact min and max start with the
    same byte, so does every value between them. Variant spec: the first byte of a value is its
    header, whose low 2 bits are the basic_type, "2: Object". Partially shredded objects (Spark
    writes one per row with unshredded fields) all start with the same header byte, so the
    residuals need not be read to check them.
    """
    lo, hi = _usable_raw_bounds(meta, value, cm)
    if not lo or not hi:
        return False
    return lo[0] == hi[0] and lo[0] & 0x03 == 2


def _ancestor_valid(ctx: _Ctx, node: ShredNode) -> bool:
    """Spec: "If the value is not an object, typed_value must be null" and "If the value is an
    array, value must be null". A residual beside a non-null shredded object must be an object
    (partially shredded); beside a shredded array it must be null. Files breaking this are
    invalid (conformance cases 87 and 128): the paths below get no stats row.
    """
    key = id(node)
    if key in ctx.ancestor_ok:
        return ctx.ancestor_ok[key]
    ok = True
    if node.value is not None and node.typed is not None:
        for rg in range(len(ctx.meta.row_groups)):
            cm = _chunk(ctx.meta, rg, node.value)
            if _all_null(cm):
                continue
            if node.kind == "object" and not node.concatenated and _only_objects(ctx.meta, node.value, cm):
                continue
            try:  # only when the footer could not decide
                ok = all(_residuals_beside_ok(node, res, grp) for res, grp in ctx.batches(rg, [node.value, node.typed]))
            except OverBudget:
                ok = False  # unknown: no row below is confident
            if not ok:
                break
    ctx.ancestor_ok[key] = ok
    return ok


def _residuals_beside_ok(node: ShredNode, residual: pa.Array, group: pa.Array) -> bool:
    """Whether each residual beside a non-null shredded ``group`` is allowed there (see
    :func:`_ancestor_valid`), for one batch."""
    import pyarrow.compute as pc

    clash = residual.filter(pc.and_(residual.is_valid(), group.is_valid()))
    if not len(clash):
        return True
    if node.kind == "array":
        return False
    for b in clash.to_pylist():
        body = b
        if node.concatenated:
            try:
                body = b[metadata_length(b) :]
            except Exception:
                body = b""
        # Variant value header: basic_type is the low 2 bits; 2 means object.
        if not body or body[0] & 0x03 != 2:
            return False
    return True


def _only_null_residuals(node: ShredNode, residual: pa.Array, typed: pa.Array) -> bool:
    """Whether every residual of one batch is null or a Variant null, and none of those sits beside
    a typed value (invalid shredding)."""
    import pyarrow.compute as pc

    if residual.null_count == len(residual):
        return True
    valid = residual.is_valid()
    present = residual.filter(valid)
    if node.concatenated:
        if not all(_is_null_residual(b, True) for b in present.to_pylist()):
            return False
    else:
        # Every residual is b"\x00" exactly when the least and the greatest are. (Comparing with
        # a scalar made from Python bytes would make pyarrow import pandas on its first such
        # conversion: seconds, for a file whose residuals are read.)
        mm = pc.min_max(_kernel_ready(present))
        if not mm["min"].as_py() == mm["max"].as_py() == VARIANT_NULL:
            return False
    # A Variant null beside a typed value: invalid shredding; never a confident row.
    return not pc.any(pc.and_(valid, typed.is_valid())).as_py()


def _float_facts(
    ctx: _Ctx, cm: ColumnMetaData, typed: SchemaNode, st: Statistics | None, zero_bound: bool
) -> tuple[bool, float | None] | None:
    """(has NaN, the first zero) of a float chunk whose footer bounds are usable, or None when
    only reading the column through pyarrow can tell; :class:`OverBudget` past the file's budget."""
    nan_count = st.nan_count if st is not None else None
    if nan_count is not None and nan_count >= 0 and not zero_bound:
        return nan_count > 0, None
    scan = scan_float_chunk(ctx.f, cm, typed, ctx.in_hand, ctx.budget)
    if scan is None or (zero_bound and scan.first_zero is None):
        # The second case contradicts the footer (a zero bound, no zero in the data): let the
        # full read decide.
        return None
    return scan.has_nan, scan.first_zero


def _leaf_stats(ctx: _Ctx, col: VariantColumn, leaf: ShreddedLeaf, decode: _Decoder) -> PathStats | None:
    node = leaf.node
    typed = node.typed
    t = node.shredded_type
    assert typed is not None and t is not None
    meta = ctx.meta
    n_rg = len(meta.row_groups)
    chunks = [_chunk(meta, rg, typed) for rg in range(n_rg)]

    # 0. Enclosing objects and arrays must be validly shredded, or no row is confident.
    for anc in leaf.ancestors:
        if not _ancestor_valid(ctx, anc):
            return None

    # 1. Is the path fully shredded? Decide per row group, reading only where needed.
    for rg in range(n_rg):
        if node.value is None:
            break
        state = _value_chunk_state(ctx, rg, node.value, node.concatenated)
        if state == "all_null":
            continue
        if state == "values":
            return None
        try:
            if not all(_only_null_residuals(node, res, ty) for res, ty in ctx.batches(rg, [node.value, typed])):
                return None
        except OverBudget:
            return None  # not proven fully shredded within the budget: unknown, no row

    # 2. Counts and bounds, per row group.
    c = _chunk_stats(ctx, typed, t, chunks, decode)
    if c is None:
        return None
    # column, variant_path, shredded_type, column_size_bytes, value_count, null_count,
    # min_value, max_value, contains_nan, extra_stats
    return _new_path_stats(col.name, leaf.variant_path, t, *c, None)


# The result objects, built field by field in C (one PathStats per path and file: the generated
# __init__ of a frozen dataclass costs as much as decoding the path's statistics).
_new_path_stats = slots_builder(PathStats)
_new_column_stats = slots_builder(ColumnStats)
_new_file_stats = slots_builder(FileStats)


class _ChunkStats(NamedTuple):
    """In PathStats' field order, from ``column_size_bytes`` to ``contains_nan``."""

    column_size_bytes: int
    value_count: int
    null_count: int
    min: Bound | None
    max: Bound | None
    contains_nan: bool | None


def _chunk_stats(
    ctx: _Ctx,
    typed: SchemaNode,
    t: ShreddedType,
    chunks: list[ColumnMetaData],
    decode: _Decoder,
    *,
    bounds: bool = True,
) -> _ChunkStats | None:
    """One leaf column's counts and bounds over all row groups, DuckLake's way: the footer where
    it proves them, the float page scan for NaN and the sign of zeros, the column's data where
    neither can answer. Shared by Variant paths and plain columns so both follow one rule.

    ``decode`` turns a raw statistic into a bound (from the schema plan); ``bounds`` False (a
    column whose order no footer defines, e.g. INT96) counts only. Past the file's budget
    (:class:`OverBudget`) the bounds (and NaN) are unknown, and with the counts unknown too, no
    row at all (None)."""
    meta = ctx.meta
    is_float = t.is_float
    null_count = num_values = size = 0
    lo: Bound | None = None
    hi: Bound | None = None
    has_nan = unknown = False
    for rg, cm in enumerate(chunks):
        num_values += cm.num_values
        size += cm.total_compressed_size
        st = cm.statistics
        rg_nulls = st.null_count if st is not None else None
        lo_rg = hi_rg = None
        counts_known = rg_nulls is not None and 0 <= rg_nulls <= cm.num_values
        need_read = not counts_known
        if rg_nulls is not None and counts_known and rg_nulls < cm.num_values and bounds and not unknown:
            raw_lo, raw_hi = _usable_raw_bounds(meta, typed, cm)
            lo_rg = decode(raw_lo) if raw_lo is not None else None
            hi_rg = decode(raw_hi) if raw_hi is not None else None
            need_read = lo_rg is None or hi_rg is None or bound_lt(hi_rg, lo_rg)
            if is_float and not need_read:
                try:
                    facts = _float_facts(ctx, cm, typed, st, lo_rg == 0.0 or hi_rg == 0.0)
                except OverBudget:
                    facts, unknown = None, True
                if facts is None:
                    need_read = not unknown
                else:
                    rg_nan, zero = facts
                    has_nan = has_nan or rg_nan
                    # "If the min is +0, the row group may contain -0 values as well" (and the
                    # reverse for max): the first zero in the data decides, as in DuckLake.
                    lo_rg = zero if lo_rg == 0.0 else lo_rg
                    hi_rg = zero if hi_rg == 0.0 else hi_rg
        if need_read:
            try:
                s = _read_summary(ctx, rg, typed, t, bounds and not unknown)
            except OverBudget:
                if not counts_known:
                    return None  # even the counts are unknown: no row
                unknown = True
            else:
                lo_rg, hi_rg, has_nan = s.min, s.max, has_nan or s.has_nan
                rg_nulls = cm.num_values - s.non_null
                if rg_nulls < 0:
                    raise InvalidParquetError(f"row group {rg}: {'.'.join(typed.path)} has more values than num_values")
        assert rg_nulls is not None
        null_count += rg_nulls
        lo, hi = _widen(lo, hi, lo_rg, hi_rg)
    value_count = num_values - null_count
    if value_count == 0 or unknown:
        lo = hi = None
    lo, hi = _stored_bounds(t, lo, hi)
    nan = None if not is_float or (unknown and value_count) else has_nan
    return _ChunkStats(size, value_count, null_count, lo, hi, nan)


def _stored_bounds(t: ShreddedType, lo: Bound | None, hi: Bound | None) -> tuple[Bound | None, Bound | None]:
    """A column's bounds as a row states them: without NUL in strings, None outside the type,
    and DuckLake's 256-byte rule, applied whatever the writer so rows match across tools."""
    if t.kind is Kind.VARCHAR:
        assert (lo is None or isinstance(lo, str)) and (hi is None or isinstance(hi, str))  # varchar
        lo, hi = nul_free_bounds(lo, hi)
    elif t.kind in _NARROW_KINDS:
        lo, hi = _model_value(t, lo), _model_value(t, hi)
    if t.is_string_like:
        if lo is not None and needs_truncation(t, lo):
            lo = truncate_lower(t, lo)
        if hi is not None and needs_truncation(t, hi):
            hi = truncate_upper(t, hi)
            if hi is None:
                lo = None
    return lo, hi


def _widen(lo: Bound | None, hi: Bound | None, lo_part: Bound | None, hi_part: Bound | None) -> tuple[Bound | None, Bound | None]:
    """Bounds of a whole from those of its parts in order (row groups, batches). Strict
    comparisons keep the first of equal values (DuckDB's -0.0 / 0.0 behaviour)."""
    if lo_part is not None and (lo is None or bound_lt(lo_part, lo)):
        lo = lo_part
    if hi_part is not None and (hi is None or bound_lt(hi, hi_part)):
        hi = hi_part
    return lo, hi


def _read_summary(ctx: _Ctx, rg: int, typed: SchemaNode, t: ShreddedType, bounds: bool) -> _DataSummary:
    """:func:`_summarize` of one row group's column, read batch by batch (counts only without
    ``bounds``); :class:`OverBudget` past the file's budget."""
    out = _DataSummary()
    for (arr,) in ctx.batches(rg, [typed]):
        if not bounds:
            out.non_null += len(arr) - arr.null_count
            continue
        part = _summarize(t, arr)
        out.non_null += part.non_null
        out.has_nan = out.has_nan or part.has_nan
        out.min, out.max = _widen(out.min, out.max, part.min, part.max)
    return out


#: Kinds whose values are a part of what their physical type holds: a time of day (fastparquet
#: writes pandas timedeltas, negative or past 24 h, as TIME_MICROS), a date within DuckDB's
#: infinities.
_NARROW_KINDS = (Kind.TIME, Kind.DATE)


def _model_value(t: ShreddedType, v: Bound | None) -> Bound | None:
    """``v`` if it is a value of ``t``, else None: a bound outside the type is unknown (the data
    holds values the type cannot, so no bound of the type is true)."""
    if v is None:
        return None
    try:
        return check_bound(t, v)
    except InvalidStatsError:
        return None


# --- plain columns ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _PlainLeaf:
    """A primitive column outside any Variant, list or map, and how its values enter the value
    model: ``unit`` multiplies a stored integer into the model's unit (milliseconds to
    microseconds), ``unsigned`` reads the stored integer as unsigned, ``bounds`` False when no
    footer defines the column's order (INT96: counts only)."""

    name: str
    node: SchemaNode
    type: ShreddedType
    unit: int = 1
    unsigned: bool = False
    bounds: bool = True
    #: The type the statistics are computed in when the stored values are finer than the model's
    #: (TIME NANOS: exact nanosecond integers), then rounded outward into ``type`` (:func:`_outward`).
    via: ShreddedType | None = None
    #: The scale of a DECIMAL wider than the model's 38 digits (typed as DuckDB reads it, DOUBLE):
    #: bounds from the footer alone, rounded outward (:func:`_wide_decimal_bounds`).
    wide_scale: int | None = None


#: Unsigned integers as Spark reads them (ParquetSchemaConverter): UINT8 as SMALLINT, UINT16 as
#: INT, UINT32 as BIGINT, UINT64 as DECIMAL(20,0), so every value, above 2^63 too, is exact.
_UNSIGNED_AS = {
    8: ShreddedType(Kind.INT16),
    16: ShreddedType(Kind.INT32),
    32: ShreddedType(Kind.INT64),
    64: ShreddedType(Kind.DECIMAL, 20, 0),
}


def _plain_leaf(name: str, node: SchemaNode) -> _PlainLeaf | None:
    """The value-model type of a plain primitive column, or None when its values have no place
    there (FLOAT16, BSON/ENUM annotations...): such a column gets no row, as nothing about its
    order could be proven. JSON is its text; INTERVAL, TIMETZ and GEOMETRY are counts only."""
    try:
        return _PlainLeaf(name, node, shredded_type_of(node))
    except UnsupportedShreddingError:
        pass
    el = node.element
    pt, lt, ct = el.type, el.logical_type, el.converted_type
    lk = lt.kind if lt is not None else None
    if lk == "INTEGER" and lt is not None and lt.is_signed is False and pt in ("INT32", "INT64"):
        width = lt.bit_width or 0
        if width in _UNSIGNED_AS and (width < 64) == (pt == "INT32"):
            return _PlainLeaf(name, node, _UNSIGNED_AS[width], unsigned=True)
        return None
    if lk is None and ct in ("UINT_8", "UINT_16", "UINT_32", "UINT_64"):
        width = int(ct[5:])
        if (width < 64) == (pt == "INT32"):
            return _PlainLeaf(name, node, _UNSIGNED_AS[width], unsigned=True)
        return None
    if pt == "INT64" and lk == "TIMESTAMP" and lt is not None and lt.unit == "MILLIS":
        kind = Kind.TIMESTAMPTZ if lt.is_adjusted_to_utc else Kind.TIMESTAMP
        return _PlainLeaf(name, node, ShreddedType(kind), unit=1000)
    if pt == "INT64" and lk is None and ct == "TIMESTAMP_MILLIS":
        return _PlainLeaf(name, node, ShreddedType(Kind.TIMESTAMPTZ), unit=1000)
    if pt == "INT32" and ((lk == "TIME" and lt is not None and lt.unit == "MILLIS") or (lk is None and ct == "TIME_MILLIS")):
        return _PlainLeaf(name, node, ShreddedType(Kind.TIME), unit=1000)
    if pt == "INT64" and lk == "TIME" and lt is not None and lt.unit == "NANOS" and not lt.is_adjusted_to_utc:
        # A time of day in nanoseconds (pyarrow's time64[ns]); DuckDB reads it as TIME,
        # truncated to microseconds. Bounds in whole microseconds, rounded outward.
        return _PlainLeaf(name, node, ShreddedType(Kind.TIME), via=ShreddedType(Kind.TIMESTAMP_NS))
    if pt == "FIXED_LEN_BYTE_ARRAY" and lk is None and ct is None:
        # Bytes of one length, ordered byte-wise (TYPE_ORDER of an unannotated FLBA): a blob.
        return _PlainLeaf(name, node, ShreddedType(Kind.BLOB))
    if pt == "BYTE_ARRAY" and (lk == "JSON" or (lk is None and ct == "JSON")):
        # JSON text (UTF-8, ordered byte-wise as its strings): a string, as Spark reads it and as
        # DuckLake renders its bounds.
        return _PlainLeaf(name, node, ShreddedType(Kind.VARCHAR))
    if lk == "DECIMAL" or (lk is None and ct == "DECIMAL"):
        p = lt.precision if lt is not None and lt.precision is not None else el.precision
        sc = lt.scale if lt is not None and lt.scale is not None else el.scale
        if pt in _BINARY and p is not None and sc is not None and p > 38 and 0 <= sc <= p:
            # Wider than the model's DECIMAL(38): DuckDB's type for it is DOUBLE (DuckLake refuses
            # the file). Counts, no NaN (a decimal is never one), bounds as _wide_decimal_bounds says.
            return _PlainLeaf(name, node, ShreddedType(Kind.FLOAT64), bounds=False, wide_scale=sc)
        return None
    # Counts only (COUNTS_ONLY_KINDS), as DuckLake's column types: DuckDB's INTERVAL (12 bytes,
    # order undefined), TIMETZ (a UTC time; DuckDB writes no statistics), GEOMETRY (WKB).
    if pt == "FIXED_LEN_BYTE_ARRAY" and el.type_length == 12 and ct == "INTERVAL":
        return _PlainLeaf(name, node, ShreddedType(Kind.INTERVAL), bounds=False)
    if pt == "INT64" and lk == "TIME" and lt is not None and lt.is_adjusted_to_utc:
        return _PlainLeaf(name, node, ShreddedType(Kind.TIMETZ), bounds=False)
    if pt == "BYTE_ARRAY" and lk == "GEOMETRY":
        return _PlainLeaf(name, node, ShreddedType(Kind.GEOMETRY), bounds=False)
    if pt == "INT96" and lk is None and ct is None:
        # Spark's legacy timestamps (an instant). parquet.thrift leaves INT96's order undefined,
        # so no footer bound is ever trusted: counts only.
        return _PlainLeaf(name, node, ShreddedType(Kind.TIMESTAMPTZ), bounds=False)
    return None


def _plain_leaves(root: SchemaNode, variants: tuple[VariantColumn, ...]) -> tuple[_PlainLeaf, ...]:
    """Top-level primitive columns and struct leaves (dotted names), in schema order; never
    inside a Variant group, a list, a map or a repeated field."""
    variant_groups = {id(c.group) for c in variants}
    out: list[_PlainLeaf] = []
    stack: list[tuple[SchemaNode, tuple[str, ...]]] = [(root, ())]
    while stack:
        n, names = stack.pop()
        children = []
        for c in n.children:
            if c.element.repetition == "REPEATED" or id(c) in variant_groups:
                continue
            if c.is_leaf:
                leaf = _plain_leaf(".".join((*names, c.name)), c)
                if leaf is not None:
                    out.append(leaf)
            elif not (_is_list_or_map(c)):
                children.append((c, (*names, c.name)))
        stack.extend(reversed(children))
    # Depth-first with leaves first within a group would reorder: sort by leaf index instead.
    out.sort(key=lambda p: p.node.leaf_index or 0)
    # A top-level column named "a.b" and field b of a struct a have one dotted name: statistics
    # under it could be either column's, so neither gets any (unknown, never pruned on).
    seen = Counter(p.name for p in out)
    return tuple(p for p in out if seen[p.name] == 1)


def _is_list_or_map(n: SchemaNode) -> bool:
    el = n.element
    k = el.logical_type.kind if el.logical_type is not None else None
    return k in ("LIST", "MAP") or el.converted_type in ("LIST", "MAP", "MAP_KEY_VALUE")


def _plain_decoder(leaf: _PlainLeaf) -> _Decoder:
    """The leaf's statistics decoder (kept in the schema plan); see :func:`_plain_stats` for
    unsigned columns of footers without column orders."""
    t = leaf.type
    if leaf.unit == 1 and not leaf.unsigned:
        return _decoder_of(leaf.via or t, leaf.node)
    bits = 64 if leaf.node.element.type == "INT64" else 32
    physical = _decoder_of(ShreddedType(Kind.INT64 if bits == 64 else Kind.INT32), leaf.node)
    lo, hi = INTEGER_RANGES.get(t.kind, (INT64_MIN, INT64_MAX))

    def decode(raw: bytes) -> Bound | None:
        v = physical(raw)
        if not isinstance(v, int):
            return None
        if leaf.unsigned:
            v &= (1 << bits) - 1
            if t.kind is Kind.DECIMAL:  # UINT64
                return decimal_from_unscaled(v, 0)
        scaled = scale_stored(t, v, leaf.unit)
        return scaled if scaled is not None and lo <= scaled <= hi else None

    return decode


def _plain_stats(ctx: _Ctx, leaf: _PlainLeaf, decode: _Decoder) -> ColumnStats | None:
    t = leaf.type
    if leaf.unsigned and ctx.meta.column_orders is None:
        # Only the deprecated min/max can be there, and they are in signed order: not bounds of
        # unsigned values (the data is read instead).
        decode = _no_bound
    meta = ctx.meta
    chunks = [_chunk(meta, rg, leaf.node) for rg in range(len(meta.row_groups))]
    c = _chunk_stats(ctx, leaf.node, leaf.via or t, chunks, decode, bounds=leaf.bounds)
    if c is None:
        return None
    lo, hi = c.min, c.max
    if leaf.via is not None:
        lo, hi = _outward(t, lo, hi)
    if leaf.wide_scale is not None and c.value_count:
        lo, hi = _wide_decimal_bounds(meta, leaf.node, chunks, leaf.wide_scale)
    nan = c.contains_nan
    if nan is False and _duckdb_hugeint(meta, leaf, chunks):
        lo = hi = nan = None  # NOTES.md §8: counts only, as DuckLake records
    extra = _geometry_extra(ctx, leaf.node, chunks) if t.kind is Kind.GEOMETRY and c.value_count else None
    # column, column_type, column_size_bytes, value_count, null_count, min_value, max_value,
    # contains_nan, extra_stats
    return _new_column_stats(
        leaf.name, t, c.column_size_bytes, c.value_count, c.null_count, lo, hi, nan, extra
    )


def _geometry_extra(ctx: _Ctx, node: SchemaNode, chunks: list[ColumnMetaData]) -> str | None:
    """DuckLake's bounding box of a GEOMETRY column (:mod:`service.stats.geo`), when every row
    group that may hold a geometry has geospatial statistics; else None (not proven)."""
    assert node.leaf_index is not None
    parts = []
    for rg, cm in enumerate(chunks):
        st = cm.statistics
        if st is not None and st.null_count is not None and st.null_count >= cm.num_values:
            continue  # only NULLs: nothing to bound
        try:
            raw = ctx.reader().geo_statistics(rg, node.leaf_index)
        except ShredcatError:
            return None  # pyarrow cannot open the file: the box is unknown, the counts stand
        g = None if raw is None else geo.from_values(*raw)
        if g is None:
            return None
        parts.append(g)
    box = geo.union(parts)
    return None if box is None else geo.render(box)


def _outward(t: ShreddedType, lo: Bound | None, hi: Bound | None) -> tuple[Bound | None, Bound | None]:
    """Nanosecond bounds as microseconds of ``t`` (TIME), rounded outward: true bounds of the
    values both as nanoseconds and as DuckDB reads them (truncated); None outside a day."""
    lo = None if not isinstance(lo, int) else _model_value(t, lo // 1000)
    hi = None if not isinstance(hi, int) else _model_value(t, -(-hi // 1000))
    return (lo, hi) if lo is not None and hi is not None else (None, None)


def _wide_decimal_bounds(
    meta: FileMetaData, node: SchemaNode, chunks: list[ColumnMetaData], scale: int
) -> tuple[float | None, float | None]:
    """Bounds of a DECIMAL wider than 38 digits as doubles rounded outward (the nearest double
    at or below the least value, at or above the greatest): true of the exact values. (DuckDB
    1.5.5 declares the column DOUBLE but misreads values longer than 16 bytes.) From the footer
    only (every chunk with values must state both); else unknown."""
    lo: int | None = None
    hi: int | None = None
    for cm in chunks:
        st = cm.statistics
        if st is None or st.null_count is None:
            return None, None
        if st.null_count >= cm.num_values:
            continue
        raw_lo, raw_hi = _usable_raw_bounds(meta, node, cm)
        if not raw_lo or not raw_hi:
            return None, None
        a, b = int.from_bytes(raw_lo, "big", signed=True), int.from_bytes(raw_hi, "big", signed=True)
        if a > b:
            return None, None
        lo, hi = (a, b) if lo is None or hi is None else (min(lo, a), max(hi, b))
    if lo is None or hi is None:
        return None, None
    return _double_toward(decimal_from_unscaled(lo, scale), -math.inf), _double_toward(decimal_from_unscaled(hi, scale), math.inf)


def _double_toward(d: Decimal, direction: float) -> float:
    """The double nearest ``d`` on the side of ``direction`` (or equal to it)."""
    f = float(d)  # correctly rounded, to infinity past the double range
    if (Decimal(f) > d) if direction < 0 else (Decimal(f) < d):
        f = math.nextafter(f, direction)
    return f + 0.0  # -0.0 as 0.0


def _duckdb_hugeint(meta: FileMetaData, leaf: _PlainLeaf, chunks: list[ColumnMetaData]) -> bool:
    """Whether a DOUBLE column without NaN is DuckDB's HUGEINT/UHUGEINT: DuckDB writes those as
    DOUBLE without min/max, and drops a real DOUBLE's min/max only for a NaN in the chunk (checked
    on DuckDB 1.5.5: infinities, -0.0 and extremes keep theirs). Such bounds can exceed
    HUGEINT's range, so no DuckLake reader could cast them back."""
    el = leaf.node.element
    if el.type != "DOUBLE" or el.logical_type is not None or el.converted_type is not None:
        return False
    if _writer(meta.created_by)[0] != "duckdb":
        return False
    for cm in chunks:
        st = cm.statistics
        has_values = st is None or st.null_count is None or st.null_count < cm.num_values
        if has_values and (st is None or (st.min_value is None and st.max_value is None)):
            return True
    return False


@dataclass(frozen=True, slots=True)
class _SchemaPlan:
    """What a schema alone decides: its tree, leaves, Variant columns and shredded paths."""

    shape: SchemaShape
    root: SchemaNode
    leaves: tuple[SchemaNode, ...]
    columns: tuple[VariantColumn, ...]
    #: Each fully shredded candidate path with its statistics decoder.
    paths: tuple[tuple[VariantColumn, ShreddedLeaf, _Decoder], ...]
    plain: tuple[tuple[_PlainLeaf, _Decoder], ...]


#: Plans by the identity of the schema tuple (kept alive in the entry, so the id stays its own).
#: The C footer decoder hands out the same tuple for the same schema bytes (``interned`` in
#: footer/thrift_tables.py): found here without hashing 20-odd dataclasses, which cost as much
#: as the rest of the footer decode.
_plans_by_identity: dict[int, tuple[tuple[SchemaElement, ...], _SchemaPlan]] = {}


def _schema_plan(schema: tuple[SchemaElement, ...], limits: FileLimits) -> _SchemaPlan:
    hit = _plans_by_identity.get(id(schema))
    if hit is not None and hit[0] is schema:
        _check_shape(hit[1].shape, limits)
        return hit[1]
    _check_shape(schema_shape(schema, limits.max_schema_depth), limits)  # before anything is built
    plan = _schema_plan_by_value(schema)
    if len(_plans_by_identity) >= 256:
        _plans_by_identity.clear()
    _plans_by_identity[id(schema)] = (schema, plan)
    return plan


@functools.lru_cache(maxsize=256)
def _schema_plan_by_value(schema: tuple[SchemaElement, ...]) -> _SchemaPlan:
    # Cached because the files of one table share their schema: registering a batch then costs
    # one schema walk instead of one per file (a third of a small file's extraction time).
    shape = schema_shape(schema)
    root = build_schema_tree(schema)
    found = tuple(find_variant_columns(root))
    # A Variant column whose name the catalog cannot store ('' and the like) is no Variant
    # column of the file, nor are its leaves plain columns: no rows, as register would refuse them.
    columns = tuple(c for c in found if not unstorable_name(c.name))
    paths = []
    for col in columns:
        for leaf in shredded_leaves(col):
            if "\x00" in leaf.variant_path:
                continue  # a field name holding NUL: no row (the catalog cannot store it), unknown
            typed, t = leaf.node.typed, leaf.node.shredded_type
            assert typed is not None and t is not None
            paths.append((col, leaf, _decoder_of(t, typed)))
    return _SchemaPlan(
        shape=shape,
        root=root,
        leaves=tuple(iter_leaves(root)),
        columns=columns,
        paths=tuple(paths),
        # A name the catalog cannot store (empty, NUL...): no row, unknown (register agrees).
        plain=tuple((pl, _plain_decoder(pl)) for pl in _plain_leaves(root, found) if not unstorable_name(pl.name)),
    )


def _check_shape(shape: SchemaShape, limits: FileLimits) -> None:
    """Refuse a schema over the per-file limits (413), naming the numbers: checked on the flat
    schema, before the tree, its paths and the Variant columns' shredded paths are built."""
    checks = (
        # (the count, the limit, its setting, the message)
        (shape.depth, limits.max_schema_depth, "SHREDCAT_MAX_SCHEMA_DEPTH", "the schema nests groups more than {cap} levels deep"),
        (shape.leaves, limits.max_schema_leaves, "SHREDCAT_MAX_SCHEMA_LEAVES", "the schema has {n} leaf columns, more than {cap}"),
        (
            shape.typed_value_leaves,
            limits.max_shredded_paths,
            "SHREDCAT_MAX_SHREDDED_PATHS",
            "the schema has {n} typed_value leaves (shredded paths), more than {cap}",
        ),
    )
    for n, cap, name, message in checks:
        if n > cap:
            raise LimitExceededError(
                f"{message.format(n=n, cap=cap)} (the limit {name})",
                details={"limit": name.removeprefix("SHREDCAT_").lower(), "value": n, "maximum": cap},
            )


def _float_scan_spans(ctx: _Ctx, plan: _SchemaPlan) -> list[tuple[int, int]]:
    """The float chunks :func:`_float_facts` will likely scan (the footer does not rule the path
    out, nor give a NaN count with non-zero bounds): fetched ahead for a remote file."""
    spans = []
    for _, leaf, _ in plan.paths:
        node = leaf.node
        if node.typed is None or node.shredded_type is None or not node.shredded_type.is_float:
            continue
        for rg in range(len(ctx.meta.row_groups)):
            if node.value is not None and _value_chunk_state(ctx, rg, node.value, node.concatenated) == "values":
                break
            cm = _chunk(ctx.meta, rg, node.typed)
            st = cm.statistics
            if st is not None and st.nan_count is not None and st.nan_count >= 0:
                raw = _usable_raw_bounds(ctx.meta, node.typed, cm)
                if not any(b is not None and b.strip(b"\x00\x80") == b"" for b in raw):
                    continue  # neither bound is a zero: the footer answers
            span = chunk_span(cm)
            if span is not None:
                spans.append(span)
    for pl, _ in plan.plain:  # plain float columns take the same page scan
        if not (pl.bounds and pl.type.is_float):
            continue
        for rg in range(len(ctx.meta.row_groups)):
            cm = _chunk(ctx.meta, rg, pl.node)
            st = cm.statistics
            if st is not None and st.nan_count is not None and st.nan_count >= 0:
                raw = _usable_raw_bounds(ctx.meta, pl.node, cm)
                if not any(b is not None and b.strip(b"\x00\x80") == b"" for b in raw):
                    continue
            span = chunk_span(cm)
            if span is not None:
                spans.append(span)
    return spans


def extract_metadata_stats(
    meta: FileMetaData, f: Any, in_hand: InHand | None = None, limits: FileLimits = DEFAULT_FILE_LIMITS
) -> tuple[list[VariantColumn], list[PathStats], list[ColumnStats]]:
    """Stats of every fully shredded path and of every plain column, given a parsed footer and
    the open file (and bytes of it already read, see :func:`service.parquet.io.read_metadata`),
    within the per-file ``limits`` (:class:`~service.errors.LimitExceededError` for a schema over
    them; facts needing more data than their budget are unknown)."""
    plan = _schema_plan(meta.schema, limits)
    validate_row_groups(plan.root, meta, plan.leaves)
    ctx = _Ctx(meta, plan.root, f, in_hand, ReadBudget(limits.max_decompressed_bytes))
    prefetch = getattr(f, "prefetch", None)
    if prefetch is not None:  # a remote file: the page scans' chunks in as few requests as possible
        prefetch(_float_scan_spans(ctx, plan))
    rows: list[PathStats] = []
    for col, leaf, decode in plan.paths:
        ps = _leaf_stats(ctx, col, leaf, decode)
        if ps is not None:
            rows.append(ps)
    plain: list[ColumnStats] = []
    for pl, decode in plan.plain:
        cs = _plain_stats(ctx, pl, decode)
        if cs is not None:
            plain.append(cs)
    if meta.key_value_metadata and spark_legacy_calendar(meta):
        rows = [_without_rebased_bounds(r) for r in rows]
        plain = [_without_rebased_bounds(c) for c in plain]
    collated = spark_collated_fields(meta) if meta.key_value_metadata else frozenset()
    if collated:
        plain = [replace(c, min_value=None, max_value=None) if _under(c.column, collated) else c for c in plain]
    return list(plan.columns), rows, plain


def extract_file(
    uri: str, *, max_footer_bytes: int = DEFAULT_MAX_FOOTER_BYTES, limits: FileLimits = DEFAULT_FILE_LIMITS
) -> FileStats:
    """Extract the Variant statistics of one Parquet file (local path or object-store URI: one
    ranged request in the common case, see :func:`service.parquet.io.open_parquet`).

    Raises :class:`~service.errors.InvalidParquetError` (also for a footer longer than
    ``max_footer_bytes``), :class:`~service.errors.UnsupportedShreddingError`,
    :class:`~service.errors.LimitExceededError` (a schema over ``limits``) or
    :class:`~service.errors.FileAccessError` with a message naming the file.
    """
    try:
        with open_parquet(uri) as (info, f, _):
            return _extract_open(uri, info, f, max_footer_bytes, limits)
    except ShredcatError as e:
        _name_file(e, uri)
        raise
    except Exception as e:
        raise _unforeseen(uri, e) from e


def extract_file_beneath(
    root: str, path: str, *, max_footer_bytes: int = DEFAULT_MAX_FOOTER_BYTES, limits: FileLimits = DEFAULT_FILE_LIMITS
) -> FileStats:
    """:func:`extract_file` of the local file ``path``, opened without leaving the directory
    ``root`` (:func:`service.parquet.io.open_beneath`): what registration by path uses, so that
    what is read is what was checked."""
    try:
        with open_beneath(root, path) as (info, f, _):
            return _extract_open(path, info, f, max_footer_bytes, limits)
    except ShredcatError as e:
        _name_file(e, path)
        raise
    except Exception as e:
        raise _unforeseen(path, e) from e


def _unforeseen(uri: str, e: Exception) -> InvalidParquetError:
    """One file's error for what no translation foresaw (a library's exception on a file unlike
    any seen, or a defect here): that file fails alone, with a message, never a traceback that
    takes the command's other files with it."""
    err = InvalidParquetError(f"{uri}: cannot be read: {type(e).__name__}: {one_line(e)}")
    err.details.setdefault("file", uri)
    return err


def _name_file(e: ShredcatError, uri: str) -> None:
    # (A try block, not a context manager: one of those costs a few % of a small file's time.)
    if not e.message.startswith(uri):
        e.message = f"{uri}: {e.message}"
    e.args = (e.message,)
    e.details.setdefault("file", uri)


def _extract_open(uri: str, info: OpenedFile, f: BinaryIO, max_footer_bytes: int, limits: FileLimits) -> FileStats:
    meta, in_hand = read_metadata(f, info.size, max_footer_bytes, limits.max_schema_elements)
    columns, rows, plain = extract_metadata_stats(meta, f, in_hand, limits)
    # path, file_size_bytes, record_count, footer_size, content_id, variant_columns, paths,
    # columns, partitions, objects
    return _new_file_stats(
        uri,
        info.size,
        meta.num_rows,
        meta.footer_size,
        info.content_id,
        tuple(c.name for c in columns),
        tuple(rows),
        tuple(plain),
        (),
        proven_objects(meta, columns, limits),
    )


# --- fully shredded objects (service.stats.objects) ---------------------------------------------


def _proven(meta: FileMetaData, node: ShredNode) -> bool:
    if node.value is None:
        return True
    for rg in range(len(meta.row_groups)):
        cm = _chunk(meta, rg, node.value)
        if _all_null(cm):
            continue
        lo, hi = _usable_raw_bounds(meta, node.value, cm)
        if lo is None or lo != hi or not _is_null_residual(lo, node.concatenated):
            return False
    return True


def proven_objects(
    meta: FileMetaData, columns: Sequence[VariantColumn] | None = None, limits: FileLimits = DEFAULT_FILE_LIMITS
) -> tuple[ShreddedObject, ...]:
    """The objects the footer proves fully shredded (:mod:`service.stats.objects` says why), from
    each column's root down through object fields (each one on the way proven too); objects inside
    arrays are not recorded. ``columns``: the footer's Variant columns, found from its schema when
    not given."""
    if columns is None:
        columns = _schema_plan(meta.schema, limits).columns
    out: list[ShreddedObject] = []
    for col in columns:
        _walk_proven(meta, col.name, col.root, (), out)
    return tuple(out)


def _walk_proven(meta: FileMetaData, col: str, node: ShredNode, segs: tuple[str, ...], out: list[ShreddedObject]) -> None:
    # A module-level function, not a closure calling itself: such a closure is a reference cycle
    # holding the whole footer, freed only by the garbage collector (whose passes over ~85 objects
    # a file cost 3-5 % of a small remote file's client CPU), not when the extraction returns.
    if node.kind != "object" or not _proven(meta, node):
        return
    path = ".".join(quote_field(s) for s in segs) if segs else ROOT
    out.append(ShreddedObject(col, path, tuple(name for name, _ in node.fields)))
    for name, child in node.fields:
        _walk_proven(meta, col, child, (*segs, name), out)
