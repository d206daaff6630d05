"""A pure scanner of FLOAT/DOUBLE column chunks: "is any value NaN?" and "which zero comes first?".

Footers cannot answer either question: statistics never prove NaN absent (``nan_count`` is not
written by the writers we meet), and writers normalise zero bounds (-0.0 min, +0.0 max) while
DuckLake keeps the sign of the first zero seen. :func:`scan_float_chunk` answers both from the
chunk's pages without building a ``pyarrow.parquet.ParquetFile``; when it cannot answer exactly it
returns ``None`` and the caller reads the column through pyarrow, which also reports corruption.

Sources quoted below:

* ``parquet.thrift`` (apache/parquet-format) for the page headers;
* ``Encodings.md`` (apache/parquet-format) for PLAIN, the RLE/bit-packed hybrid, dictionary and
  BYTE_STREAM_SPLIT encodings;
* the Parquet README ("Data Pages", "Nested Encoding") for the page layout.

Like the footer reader (``service.parquet.footer``), whose table vocabulary declares the page
headers here, everything is bounded by the input: each loop consumes input bytes, and no buffer
larger than what the page headers promise (itself bounded by the value counts) is allocated.
"""

from __future__ import annotations

import sys
import typing
from array import array
from dataclasses import dataclass
from functools import lru_cache

from service.errors import InvalidParquetError
from service.parquet.footer import ColumnMetaData, SchemaNode
from service.parquet.footer.accel import fast
from service.parquet.footer.compact import K_BOOL, K_ENUM, K_INT, K_STRUCT, OPT, REQ, Struct
from service.parquet.footer.thrift_tables import ENCODING, PAGE_TYPE, STATISTICS
from service.parquet.io import InHand, ReadBudget, decompress

__all__ = ["FloatScan", "scan_float_chunk"]


@dataclass(frozen=True, slots=True)
class FloatScan:
    #: Exact: True iff at least one non-null value of the chunk is NaN.
    has_nan: bool
    #: The first value equal to zero in row order (-0.0 or 0.0, sign kept); None proves that no
    #: value of the chunk is zero.
    first_zero: float | None


# --- Page headers (parquet.thrift) ---------------------------------------------------------------
# Decoded into tuples (make=tuple): the slot order below is the tuple order.

# struct DataPageHeader {
#   1: required i32 num_values  "Number of values, including NULLs, in this data page. If a OffsetIndex
#      is present, a page must begin at a row boundary (repetition_level = 0)."
#   2: required Encoding encoding  "Encoding used for this data page"
#   3: required Encoding definition_level_encoding;  4: required Encoding repetition_level_encoding;
#   5: optional Statistics statistics; }
_DATA_PAGE_HEADER = Struct(
    "DataPageHeader",
    [
        (1, "num_values", K_INT, None, REQ),
        (2, "encoding", K_ENUM, ENCODING, REQ),
        (3, "definition_level_encoding", K_ENUM, ENCODING, REQ),
        (4, "repetition_level_encoding", K_ENUM, ENCODING, REQ),
        (5, "statistics", K_STRUCT, STATISTICS, OPT),
    ],
    tuple,
    spread=False,
)

# struct DictionaryPageHeader {
#   1: required i32 num_values  "Number of values in the dictionary"
#   2: required Encoding encoding  "Encoding using this dictionary page"
#   3: optional bool is_sorted  "If true, the entries in the dictionary are sorted in ascending order" }
_DICTIONARY_PAGE_HEADER = Struct(
    "DictionaryPageHeader",
    [
        (1, "num_values", K_INT, None, REQ),
        (2, "encoding", K_ENUM, ENCODING, REQ),
        (3, "is_sorted", K_BOOL, None, OPT),
    ],
    tuple,
    spread=False,
)

# struct DataPageHeaderV2 {
#   1: required i32 num_values  "Number of values, including NULLs, in this data page."
#   2: required i32 num_nulls  "Number of NULL values, in this data page. Number of non-null = num_values
#      - num_nulls which is also the number of values in the data section"
#   3: required i32 num_rows  4: required Encoding encoding
#   5: required i32 definition_levels_byte_length  "Length of the definition levels"
#   6: required i32 repetition_levels_byte_length  "Length of the repetition levels"
#   7: optional bool is_compressed = true  "Whether the values are compressed. Which means the section
#      of the page between definition_levels_byte_length + repetition_levels_byte_length + 1 and
#      compressed_page_size (included) is compressed with the compression_codec. If missing it is
#      considered compressed"
#   8: optional Statistics statistics; }
_DATA_PAGE_HEADER_V2 = Struct(
    "DataPageHeaderV2",
    [
        (1, "num_values", K_INT, None, REQ),
        (2, "num_nulls", K_INT, None, REQ),
        (3, "num_rows", K_INT, None, REQ),
        (4, "encoding", K_ENUM, ENCODING, REQ),
        (5, "definition_levels_byte_length", K_INT, None, REQ),
        (6, "repetition_levels_byte_length", K_INT, None, REQ),
        (7, "is_compressed", K_BOOL, None, OPT),
        (8, "statistics", K_STRUCT, STATISTICS, OPT),
    ],
    tuple,
    spread=False,
    defaults={"is_compressed": True},
)

# struct PageHeader {
#   1: required PageType type  "the type of the page: indicates which of the *_header fields is set"
#   2: required i32 uncompressed_page_size  "Uncompressed page size in bytes (not including this header)"
#   3: required i32 compressed_page_size  "Compressed (and potentially encrypted) page size in bytes,
#      not including this header"
#   4: optional i32 crc  5: optional DataPageHeader data_page_header;
#   6: optional IndexPageHeader index_page_header;  7: optional DictionaryPageHeader dictionary_page_header;
#   8: optional DataPageHeaderV2 data_page_header_v2; }
# IndexPageHeader is an empty struct ("TODO"); it is skipped like an unknown field.
_PAGE_HEADER = Struct(
    "PageHeader",
    [
        (1, "type", K_ENUM, PAGE_TYPE, REQ),
        (2, "uncompressed_page_size", K_INT, None, REQ),
        (3, "compressed_page_size", K_INT, None, REQ),
        (4, "crc", K_INT, None, OPT),
        (5, "data_page_header", K_STRUCT, _DATA_PAGE_HEADER, OPT),
        (7, "dictionary_page_header", K_STRUCT, _DICTIONARY_PAGE_HEADER, OPT),
        (8, "data_page_header_v2", K_STRUCT, _DATA_PAGE_HEADER_V2, OPT),
    ],
    tuple,
    spread=False,
)

_read_page_header: typing.Callable[[bytes, int, int], tuple[tuple[typing.Any, ...], int]] = fast(
    _PAGE_HEADER
)

# --- Limits --------------------------------------------------------------------------------------

#: Codecs whose page bodies can be read: UNCOMPRESSED here, the others by io.decompress.
_CODECS = frozenset(("UNCOMPRESSED", "SNAPPY", "GZIP", "BROTLI", "ZSTD", "LZ4_RAW"))

#: Largest decompressed page accepted; bigger ones (or hostile sizes) are left to pyarrow.
MAX_PAGE_BYTES = 1 << 27

#: Most dictionary entries (NaNs and zeros) whose use is looked up in the indices; each costs a
#: pass over every bit-packed run, so a hostile dictionary full of NaN payloads is left to pyarrow.
_MAX_TARGETS = 16

# The scan reads values with array/memoryview in machine order; Parquet is little-endian
# (Encodings.md: "PLAIN ... FLOAT: IEEE 32-bit floating point values, little endian"). A big-endian
# host always takes the pyarrow path.
_LITTLE_ENDIAN = sys.byteorder == "little"

# "PAR1" opens every file, so no column chunk can start before byte 4.
_FIRST_CHUNK_OFFSET = 4


class _Corrupt(Exception):
    """Internal: the chunk cannot be answered exactly; scan_float_chunk returns None."""


# --- Values --------------------------------------------------------------------------------------

#: The struct/array codes of the two float types (the typed overloads of array and memoryview).
_FloatFormat = typing.Literal["f", "d"]


def _has_nan(values: bytes, fmt: _FloatFormat) -> bool:
    # memoryview equality compares element by element in C with float semantics: NaN != NaN, so a
    # view differs from itself iff it holds a NaN (the docs: "v is w does not imply v == w").
    mv = memoryview(values).cast(fmt)
    return bool(mv != mv)


def _zero_candidate(values: bytes, width: int) -> int:
    """An index at or before the first zero element; -1 proves there is none."""
    # IEEE 754: a zero has all exponent and fraction bits clear, so the last (little-endian) byte
    # of a zero, sign and high exponent bits, is 0x00 or 0x80. Only zeros, subnormals and values
    # of magnitude below 2^-1007 (2^-125 for FLOAT) share it: one strided slice and two memchr
    # searches prove the common "no zero" case at C speed, and tell where a search must start.
    top = values[width - 1 :: width]
    pos = top.find(b"\x00")
    neg = top.find(b"\x80")
    return min(pos, neg) if pos >= 0 and neg >= 0 else max(pos, neg)


def _first_zero(values: bytes, fmt: _FloatFormat, width: int) -> float | None:
    """The first element equal to zero (either sign), or None."""
    start = _zero_candidate(values, width)
    if start < 0:
        return None
    a = array(fmt, values)
    try:
        # array.index compares with ==, and -0.0 == 0.0: the first zero of either sign.
        return a[a.index(0.0, start)]
    except ValueError:
        return None


def _byte_stream_split(values: bytes, width: int) -> bytes:
    # Encodings.md, BYTE_STREAM_SPLIT: "The encoding creates K byte-streams of length N where K is
    # the size in bytes of the data type and N is the number of elements in the data sequence.
    # ... the bytes of each value are scattered to the corresponding streams": byte k of value i is
    # at k * N + i.
    n = len(values) // width
    out = bytearray(len(values))
    for k in range(width):
        out[k::width] = values[k * n : (k + 1) * n]
    return bytes(out)


# --- RLE / bit-packed hybrid (Encodings.md) -------------------------------------------------------
#
#   rle-bit-packed-hybrid: <length> <encoded-data>
#   encoded-data := <run>*
#   run := <bit-packed-run> | <rle-run>
#   bit-packed-header := varint-encode(<bit-pack-scaled-run-len> << 1 | 1)
#   bit-pack-scaled-run-len := (bit-packed-run-len) / 8
#   rle-header := varint-encode( (rle-run-len) << 1)
#   repeated-value := value that is repeated, using a fixed-width of round-up-to-next-byte(bit-width)
#
# "The bit-packing here is done from the LSB": read as one little-endian integer, field i of a
# bit-packed run occupies bits [i * w, (i + 1) * w). The fields are then tested all at once with
# SWAR arithmetic on Python integers (C speed, no per-value loop).

_Run = tuple[int, bool, int]  # (number of values, is bit-packed, repeated value or packed fields)


def _read_runs(buf: bytes, pos: int, end: int, width: int, count: int) -> list[_Run]:
    """The runs holding the first ``count`` values of the hybrid data in ``buf[pos:end]``."""
    runs: list[_Run] = []
    byte_width = (width + 7) // 8
    seen = 0
    # Each pass consumes at least the run header's byte, so the loop is bounded by end - pos.
    while seen < count:
        header = shift = 0
        while True:
            if pos >= end or shift > 28:
                # Out of data before `count` values, or a header longer than a 32-bit varint.
                raise _Corrupt
            b = buf[pos]
            pos += 1
            header |= (b & 0x7F) << shift
            if b < 0x80:
                break
            shift += 7
        if header & 1:
            groups = header >> 1
            take = min(groups * 8, count - seen)
            need = (take * width + 7) // 8
            if need > end - pos:
                raise _Corrupt
            fields = int.from_bytes(buf[pos : pos + need], "little") & ((1 << (take * width)) - 1)
            # A short final run is read as far as the values go (the padding is never looked at).
            pos += groups * width
            if take:
                runs.append((take, True, fields))
        else:
            if byte_width > end - pos:
                raise _Corrupt
            value = int.from_bytes(buf[pos : pos + byte_width], "little")
            pos += byte_width
            if value >> width:
                raise _Corrupt  # wider than the bit width
            take = min(header >> 1, count - seen)
            if take:
                runs.append((take, False, value))
        seen += take
    return runs


def _ones(width: int, n: int) -> int:
    """n fields of ``width`` bits, each holding 1."""
    # Writers cut bit-packed runs short (Arrow: at most 512 values), so those are cached; a long
    # run is computed each time rather than kept alive by the cache.
    return _ones_cached(width, n) if n <= 1024 else ((1 << (width * n)) - 1) // ((1 << width) - 1)


@lru_cache(maxsize=256)
def _ones_cached(width: int, n: int) -> int:
    return ((1 << (width * n)) - 1) // ((1 << width) - 1)


def _zero_fields(x: int, width: int, ones: int) -> int:
    """Bit ``i * width + width - 1`` is set iff field i of ``x`` is zero."""
    high = ones << (width - 1)
    low = high - ones  # 2^(w-1) - 1 per field: no borrow crosses a field
    # (x & low) + low sets a field's top bit iff its low bits are not all zero, without carrying
    # out of the field; OR-ing x adds the field's own top bit.
    return high & ~(((x & low) + low) | x)


def _ge_fields(x: int, width: int, ones: int, d: int) -> int:
    """Non-zero iff some field of ``x`` is >= d (0 < d < 2^width)."""
    h = 1 << (width - 1)
    high = ones * h
    low = high - ones
    # Low bits: (x_low | H) - d_low keeps H set iff x_low >= d_low, and never borrows out of the
    # field since x_low | H >= H > d_low.
    low_ge = (((x & low) | high) - (d & (h - 1)) * ones) & high
    top = x & high
    return (top & low_ge) if d & h else (top | low_ge)


def _count_level(runs: list[_Run], width: int, level: int) -> int:
    """How many of the levels equal ``level`` (the maximum); a larger level is corruption."""
    total = 0
    limit = level + 1
    for n, packed, v in runs:
        if not packed:
            if v > level:
                raise _Corrupt
            if v == level:
                total += n
        elif width == 1:
            total += v.bit_count()  # level is 1, the only value above 0
        else:
            ones = _ones(width, n)
            if limit < 1 << width and _ge_fields(v, width, ones, limit):
                raise _Corrupt
            total += _zero_fields(v ^ (level * ones), width, ones).bit_count()
    return total


def _first_hit(runs: list[_Run], width: int, targets: tuple[int, ...], size: int) -> int:
    """The first index in ``targets``, or -1; every index must be below ``size``."""
    found = -1
    for n, packed, v in runs:
        if not packed:
            if v >= size:
                raise _Corrupt
            if found < 0 and v in targets:
                found = v
            continue
        if width == 0:
            # Zero-width fields are all index 0.
            if found < 0 and 0 in targets:
                found = 0
            continue
        ones = _ones(width, n)
        if size < 1 << width and _ge_fields(v, width, ones, size):
            # "dictionary indices" beyond the dictionary: pyarrow rejects the page.
            raise _Corrupt
        if found >= 0:
            continue
        best = -1
        for t in targets:
            hits = _zero_fields(v ^ (t * ones), width, ones)
            if hits:
                # The lowest set bit marks the first matching field.
                at = (hits & -hits).bit_length()
                if best < 0 or at < best:
                    best, found = at, t
    return found


# --- Dictionary ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Dictionary:
    values: array[float]
    #: Indices of NaN entries and of zero entries.
    nans: tuple[int, ...]
    zeros: tuple[int, ...]


def _dictionary(values: bytes, fmt: _FloatFormat, width: int) -> _Dictionary:
    entries = array(fmt, values)
    nans: tuple[int, ...] = ()
    zeros: list[int] = []
    if _has_nan(values, fmt):
        # A Python loop, but only for dictionaries that do hold a NaN.
        nans = tuple(i for i, x in enumerate(entries) if x != x)
    i = _zero_candidate(values, width) - 1
    if i >= -1:
        while len(zeros) <= _MAX_TARGETS:
            try:
                i = entries.index(0.0, i + 1)
            except ValueError:
                break
            zeros.append(i)
    if len(nans) + len(zeros) > _MAX_TARGETS:
        raise _Corrupt
    return _Dictionary(entries, nans, tuple(zeros))


# --- The scan ------------------------------------------------------------------------------------


def _uncompressed(codec: str, data: bytes, size: int, budget: int, spend: ReadBudget | None) -> bytes:
    if size > budget:
        raise _Corrupt  # more than the page's values can take: hostile, or left to pyarrow
    if codec == "UNCOMPRESSED":
        # "uncompressed_page_size ... compressed_page_size": equal when nothing is compressed.
        if len(data) != size:
            raise _Corrupt
        return data
    if spend is not None:
        # The file's budget, before allocating: a small chunk of highly compressed pages must not
        # decompress to gigabytes (OverBudget leaves the scan: the caller must not read instead).
        spend.take(size)
    out = decompress(codec, data, size)
    if out is None:
        raise _Corrupt
    return out


def _length_prefixed(body: bytes, pos: int) -> tuple[int, int]:
    # "length := length of the <encoded-data> in bytes stored as 4 bytes little endian (unsigned int32)"
    if pos + 4 > len(body):
        raise _Corrupt
    n = int.from_bytes(body[pos : pos + 4], "little")
    if n > len(body) - pos - 4:
        raise _Corrupt
    return pos + 4, pos + 4 + n


class _State:
    __slots__ = ("dictionary", "first_zero", "fmt", "has_nan", "width")

    def __init__(self, fmt: _FloatFormat, width: int) -> None:
        self.fmt = fmt
        self.width = width
        self.has_nan = False
        self.first_zero: float | None = None
        self.dictionary: _Dictionary | None = None

    def settled(self, encoding: str) -> bool:
        """Whether a data page of ``encoding`` cannot change the answer, so that its body need
        not even be decompressed."""
        if self.has_nan and self.first_zero is not None:
            return True  # both answers are final
        if encoding != "RLE_DICTIONARY" and encoding != "PLAIN_DICTIONARY":
            return False
        d = self.dictionary
        if d is None:
            # Encodings.md: "the dictionary page is written first, before the data pages of the
            # column chunk"; indices without one cannot be read.
            raise _Corrupt
        # The page's values are dictionary entries: a dictionary without NaN (or zero) entries
        # proves the page has none.
        return (self.has_nan or not d.nans) and (self.first_zero is not None or not d.zeros)

    def plain(self, values: bytes, present: int) -> None:
        # Encodings.md, PLAIN: "FLOAT: IEEE 32-bit floating point values, little endian; DOUBLE:
        # IEEE 64-bit ..." -- only the non-null values are stored.
        if len(values) != present * self.width:
            raise _Corrupt
        if not self.has_nan:
            self.has_nan = _has_nan(values, self.fmt)
        if self.first_zero is None:
            self.first_zero = _first_zero(values, self.fmt, self.width)

    def indices(self, values: bytes, present: int) -> None:
        # Encodings.md, RLE_DICTIONARY: "Data page format: the bit width used to encode the entry
        # ids stored as 1 byte (max bit width = 32), followed by the values encoded using RLE/Bit
        # packed described above (with the given bit width)."
        # Only called when settled() is False, so the dictionary exists and matters.
        d = self.dictionary
        assert d is not None
        if present == 0:
            return
        look_nan = not self.has_nan and bool(d.nans)
        look_zero = self.first_zero is None and bool(d.zeros)
        if not values or values[0] > 32:
            raise _Corrupt
        width = values[0]
        runs = _read_runs(values, 1, len(values), width, present)
        if look_nan and _first_hit(runs, width, d.nans, len(d.values)) >= 0:
            self.has_nan = True
        if look_zero:
            at = _first_hit(runs, width, d.zeros, len(d.values))
            if at >= 0:
                self.first_zero = d.values[at]


def _page_budget(num_values: int, width: int) -> int:
    # Values take `width` bytes each; each level stream at most a few bytes per value (an RLE run
    # of one: header byte + value byte), plus the 4-byte length prefixes.
    return min(MAX_PAGE_BYTES, num_values * (width + 16) + 64)


def chunk_span(cm: ColumnMetaData) -> tuple[int, int] | None:
    """``(offset, length)`` of the bytes of a column chunk (dictionary page included), or None when
    the footer's offsets cannot be right. What :func:`scan_float_chunk` reads, so that a remote
    file can fetch the chunks of several scans ahead in one request."""
    # The chunk starts with its dictionary page, if any. Some writers leave dictionary_page_offset
    # out (the dictionary then sits at data_page_offset) or set it to 0 wrongly.
    start = cm.data_page_offset
    dpo = cm.dictionary_page_offset
    if dpo is not None and _FIRST_CHUNK_OFFSET <= dpo < start:
        start = dpo
    size = cm.total_compressed_size
    if start < _FIRST_CHUNK_OFFSET or size <= 0:
        return None
    return start, size


def _chunk_bytes(f: typing.Any, start: int, size: int, in_hand: InHand | None) -> bytes | None:
    """The ``size`` bytes at ``start``: from the bytes in hand when they hold them, else read (None
    when the file is shorter or the read fails: pyarrow then reports it)."""
    if in_hand is not None:
        at, data = in_hand
        if at <= start and start + size <= at + len(data):
            return data[start - at : start - at + size]
    try:
        end = f.seek(0, 2)
        if end is None:
            end = f.tell()
        if start + size > end:
            return None  # also keeps a hostile size from allocating
        f.seek(start)
        chunk = f.read(size)
    except (OSError, ValueError):
        return None
    if not isinstance(chunk, bytes):
        chunk = bytes(chunk)
    return chunk if len(chunk) == size else None


def _scan(
    f: typing.Any, cm: ColumnMetaData, leaf: SchemaNode, in_hand: InHand | None, spend: ReadBudget | None
) -> FloatScan | None:
    physical = leaf.element.type
    fmt: _FloatFormat
    if physical == "DOUBLE":
        fmt, width = "d", 8
    elif physical == "FLOAT":
        fmt, width = "f", 4
    else:
        return None
    if cm.type != physical or cm.codec not in _CODECS or not _LITTLE_ENDIAN:
        return None
    span = chunk_span(cm)
    if span is None or cm.num_values < 0:
        return None
    start, size = span
    chunk = _chunk_bytes(f, start, size, in_hand)
    if chunk is None:
        return None
    pages = _Pages(cm, leaf, _State(fmt, width), spend)
    pos = 0
    # Each page consumes its header (at least one byte) and its body: bounded by the chunk size.
    while pos < size:
        header, pos = _read_page_header(chunk, pos, 0)
        ptype, usize, csize, _crc, v1, dictionary, v2 = header
        if csize < 0 or usize < 0 or csize > size - pos:
            return None
        body = chunk[pos : pos + csize]
        pos += csize
        if ptype == "DATA_PAGE":
            page = pages.data_v1(v1, body, usize)
        elif ptype == "DATA_PAGE_V2":
            page = pages.data_v2(v2, body, csize, usize)
        elif ptype == "DICTIONARY_PAGE":
            pages.dictionary(dictionary, body, usize)
            continue
        elif ptype == "INDEX_PAGE":
            continue
        else:
            return None  # a page type from a newer format
        if page is not None:
            pages.values(*page)
    if pages.remaining:
        return None
    return FloatScan(pages.state.has_nan, pages.state.first_zero)


#: A data page's values to look at: (encoding, the encoded non-null values, their count).
_PageValues = tuple[str, bytes, int]


class _Pages:
    """The pages of one chunk, read in order: each method takes one page (raising _Corrupt where
    the chunk cannot be answered exactly) and keeps the count of values still to come."""

    __slots__ = ("codec", "def_width", "max_def", "max_rep", "num_values", "remaining", "seen_data", "spend", "state")

    def __init__(self, cm: ColumnMetaData, leaf: SchemaNode, state: _State, spend: ReadBudget | None) -> None:
        self.codec = cm.codec
        self.num_values = cm.num_values
        self.max_def = leaf.max_definition_level
        self.max_rep = leaf.max_repetition_level
        self.def_width = self.max_def.bit_length()  # "the bit width ... is ceil(log2(max_level + 1))"
        self.state = state
        self.spend = spend
        self.remaining = cm.num_values  # data pages' num_values must add up to the chunk's
        self.seen_data = False

    def _count(self, num_values: int, encoding: str) -> bool:
        """Count a data page's values; whether the page can still change the answer."""
        if not 0 <= num_values <= self.remaining:
            raise _Corrupt
        self.remaining -= num_values
        self.seen_data = True
        return not self.state.settled(encoding)

    def data_v1(self, v1: typing.Any, body: bytes, usize: int) -> _PageValues | None:
        if v1 is None:
            raise _Corrupt
        num_values, encoding, def_encoding, rep_encoding, _stats = v1
        if not self._count(num_values, encoding):
            return None
        width = self.state.width
        body = _uncompressed(self.codec, body, usize, _page_budget(num_values, width), self.spend)
        # README, "Data Pages": "repetition levels data, definition levels data, encoded values.
        # The value of uncompressed_page_size specified in the header is for all the 3 pieces
        # combined." Levels are absent when their maximum is 0.
        p = 0
        if self.max_rep > 0:
            if rep_encoding != "RLE":
                raise _Corrupt  # BIT_PACKED levels: deprecated, left to pyarrow
            _, p = _length_prefixed(body, p)
        if self.max_def > 0:
            if def_encoding != "RLE":
                raise _Corrupt
            lo, p = _length_prefixed(body, p)
            runs = _read_runs(body, lo, p, self.def_width, num_values)
            present = _count_level(runs, self.def_width, self.max_def)
        else:
            present = num_values
        return encoding, body[p:], present

    def data_v2(self, v2: typing.Any, body: bytes, csize: int, usize: int) -> _PageValues | None:
        if v2 is None:
            raise _Corrupt
        num_values, num_nulls, _rows, encoding, def_len, rep_len, compressed, _stats = v2
        if not 0 <= num_values <= self.remaining or not 0 <= num_nulls <= num_values:
            raise _Corrupt
        if def_len < 0 or rep_len < 0 or def_len + rep_len > min(csize, usize):
            raise _Corrupt
        if not self._count(num_values, encoding):
            return None
        # "Number of non-null = num_values - num_nulls which is also the number of values in
        # the data section"
        present = num_values - num_nulls
        if self.max_def > 0:
            # The levels come first, never compressed, "encoded with the RLE/bit-packed hybrid"
            # without the 4-byte length prefix of v1.
            runs = _read_runs(body, rep_len, rep_len + def_len, self.def_width, num_values)
            if _count_level(runs, self.def_width, self.max_def) != present:
                raise _Corrupt
        elif num_nulls:
            raise _Corrupt
        values = body[rep_len + def_len :]
        values_size = usize - rep_len - def_len
        if compressed:
            budget = _page_budget(num_values, self.state.width)
            values = _uncompressed(self.codec, values, values_size, budget, self.spend)
        elif len(values) != values_size:
            raise _Corrupt
        return encoding, values, present

    def dictionary(self, dictionary: typing.Any, body: bytes, usize: int) -> None:
        state, width = self.state, self.state.width
        # parquet.thrift, ColumnMetaData.dictionary_page_offset: the dictionary page comes
        # first; there is at most one per chunk.
        if dictionary is None or self.seen_data or state.dictionary is not None:
            raise _Corrupt
        num_entries, encoding, _sorted = dictionary
        # Encodings.md: "Dictionary page format: the entries in the dictionary using the plain
        # encoding." (PLAIN_DICTIONARY is the deprecated name for the same.)
        if encoding not in ("PLAIN", "PLAIN_DICTIONARY") or num_entries < 0:
            raise _Corrupt
        if usize != num_entries * width:
            raise _Corrupt
        body = _uncompressed(self.codec, body, usize, min(MAX_PAGE_BYTES, self.num_values * width), self.spend)
        state.dictionary = _dictionary(body, state.fmt, width)

    def values(self, encoding: str, values: bytes, present: int) -> None:
        state = self.state
        if encoding == "PLAIN":
            state.plain(values, present)
        elif encoding in ("RLE_DICTIONARY", "PLAIN_DICTIONARY"):
            state.indices(values, present)
        elif encoding == "BYTE_STREAM_SPLIT":
            if len(values) != present * state.width:
                raise _Corrupt
            state.plain(_byte_stream_split(values, state.width), present)
        else:
            raise _Corrupt  # no other encoding applies to FLOAT/DOUBLE


def scan_float_chunk(
    f: typing.Any,
    cm: ColumnMetaData,
    leaf: SchemaNode,
    in_hand: InHand | None = None,
    spend: ReadBudget | None = None,
) -> FloatScan | None:
    """Whether the FLOAT/DOUBLE column chunk ``cm`` of ``leaf`` holds a NaN, and its first zero.

    ``f`` is the seekable binary file (a Python file or a pyarrow NativeFile); ``in_hand``, bytes
    of it already read (``(offset, bytes)``), serves the chunk without I/O when it holds it. Returns ``None``
    whenever the answer cannot be exact: an unsupported codec or encoding, or anything corrupt or
    inconsistent in the pages. The caller then reads the column with pyarrow. Each page
    decompressed is taken from ``spend`` first (the file's budget): :class:`OverBudget` when it
    is spent, and then the answer is unknown (reading the column instead would cost more).
    """
    try:
        return _scan(f, cm, leaf, in_hand, spend)
    except (_Corrupt, InvalidParquetError, IndexError, ValueError, OverflowError, RecursionError):
        # InvalidParquetError / IndexError: the Thrift readers on a corrupt or truncated header.
        return None
