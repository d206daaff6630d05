"""Locating and decoding the footer of a Parquet file: the package's public entry points.

The Parquet format README gives the file layout::

      4-byte magic number "PAR1"
      <Column 1 Chunk 1> ... <Column N Chunk M>
      File Metadata
      4-byte length in bytes of file metadata (little endian)
      4-byte magic number "PAR1"

:func:`read_footer_bytes` checks the end of a file and locates the footer,
:func:`parse_file_metadata` decodes it (with the C accelerator when it is built) and
:func:`read_file_metadata` does both on an open file in one read for most footers.
"""

from __future__ import annotations

import operator
import struct
import typing

from service import limits
from service.errors import InvalidParquetError, LimitExceededError
from service.parquet.footer.accel import fast, slots_builder
from service.parquet.footer.compact import K_INT, K_LIST, K_STRUCT, OPT, REQ, Struct, corrupt, uvarint
from service.parquet.footer.metadata import FileMetaData
from service.parquet.footer.thrift_tables import FILE_META_DATA

PARQUET_MAGIC = b"PAR1"
# Files with an encrypted footer end in "PARE" instead (Parquet Modular Encryption spec).
PARQUET_ENCRYPTED_MAGIC = b"PARE"

#: Largest footer read by default (16 MiB). Real footers are far smaller (kilobytes; megabytes for
#: thousands of columns times hundreds of row groups), and the length is checked from the last 8
#: bytes before anything else is read, so a file claiming a huge footer costs nothing.
DEFAULT_MAX_FOOTER_BYTES = limits.MAX_FOOTER_BYTES

#: How much of the end of a file :func:`read_file_metadata` fetches in its first read. Most footers
#: fit, so a remote file costs one ranged GET.
TAIL_READ_SIZE = 64 * 1024

# "4-byte magic" + "4-byte length" + "4-byte magic": the smallest file that has room for a footer.
_MIN_FILE_SIZE = 12

_read_file_meta_data = fast(FILE_META_DATA)
_new_file_metadata = slots_builder(FileMetaData)


def schema_elements_stated(data: bytes) -> int | None:
    """How many schema elements a footer's schema list header states, read before anything is
    decoded; None when the footer does not open with ``version`` then ``schema`` as writers put
    them (Thrift compact writes fields in id order), and then only the full decode can tell."""
    # Field 1 (delta 1, i32: 0x15) and its zigzag varint, then field 2 (delta 1, list: 0x19) and
    # the list header: "ssss is the size, 4 bit unsigned int, values 0 - 14"; 15: a varint follows.
    # Inline (once per file registered): a few hundred nanoseconds.
    try:
        if data[0] != 0x15:
            return None
        pos = 1
        while data[pos] & 0x80:
            pos += 1
            if pos > 5:
                return None
        if data[pos + 1] != 0x19:
            return None
        header = data[pos + 2]
        if header & 0x0F != 12:  # a list of structs
            return None
        if header >> 4 != 15:
            return header >> 4
        return uvarint(data, pos + 3, 5, "the schema list's size")[0]
    except (IndexError, InvalidParquetError):
        return None  # the full decode names what is wrong


# Only what the element-count check needs: each schema element's num_children (its other fields
# are skipped, never built), one list entry per element. Measured on an 8 MB footer of 1,000,001
# elements (25,000 chains of 39 single-child groups over a leaf, bench/hostile.py's builder): 0.18 s
# and 8 MB, where the full decode takes 1.9 s and 122 MB.
_CHILDREN = Struct("SchemaElement (children)", [(5, "num_children", K_INT, None, OPT)], operator.itemgetter(0), spread=False)
_SCHEMA_SHAPE = Struct(
    "FileMetaData (schema shape)",
    [
        (1, "version", K_INT, None, REQ),
        (2, "schema", K_LIST, (K_STRUCT, _CHILDREN), REQ),
    ],
    list,
    spread=False,
)
_read_schema_shape = fast(_SCHEMA_SHAPE)


def count_schema_leaves(data: bytes) -> tuple[int, int] | None:
    """``(leaves, groups)`` of a footer's schema (the root not counted), from the elements'
    ``num_children`` alone; None when the footer does not decode so far (the full decode names
    what is wrong). An element with ``num_children`` 0 counts as a leaf, as writers mark leaves so;
    an empty group (0 children, no type) is counted with them."""
    try:
        (_, children), _ = _read_schema_shape(data, 0, 0)
    except (IndexError, InvalidParquetError, RecursionError):
        return None
    leaves = children.count(None) + children.count(0) - (children[:1].count(None) + children[:1].count(0))
    return leaves, len(children) - 1 - leaves


def check_schema_elements(data: bytes, max_elements: int | None) -> None:
    """Refuse a footer whose schema list states more than ``max_elements`` elements, before it is
    decoded (a footer of a million schema elements takes seconds and a gigabyte to decode).

    The refusal names the exact reason: the leaves and groups are counted first from the elements'
    ``num_children`` alone (:func:`count_schema_leaves`, a tenth of the full decode's time and
    nothing of its memory). More leaves than the leaf limit is that limit; within it, the schema
    still has more groups than leaves, and its decode would cost what twice the leaf limit's worth
    of elements costs: that budget stands, because a 16 MiB footer within the leaf and depth limits
    can state about four million elements (chains of 64 single-child groups over 60,000 leaves),
    about 500 MB and 8 s to decode (measured at 122 MB and 1.9 s per million).
    """
    if max_elements is None:
        return
    n = schema_elements_stated(data)
    if n is None or n <= max_elements:
        return
    max_leaves = (max_elements - 1) // 2  # FileLimits.max_schema_elements: twice the leaf limit and one
    counted = count_schema_leaves(data)
    if counted is not None and counted[0] > max_leaves:
        raise LimitExceededError(
            f"the schema has {counted[0]} leaf columns, more than {max_leaves} (the limit "
            "SHREDCAT_MAX_SCHEMA_LEAVES; counted before the footer is decoded)",
            details={"limit": "max_schema_leaves", "value": counted[0], "maximum": max_leaves},
        )
    why = (
        "more leaves than the limit SHREDCAT_MAX_SCHEMA_LEAVES or more groups than leaves"
        if counted is None
        else f"{counted[1]} groups over {counted[0]} leaf columns: within the leaf limit, but more groups than leaves"
    )
    raise LimitExceededError(
        f"the schema has {n} elements, more than {max_elements} ({why}; a footer may state twice the "
        "limit SHREDCAT_MAX_SCHEMA_LEAVES and one; refused before the footer is decoded)",
        details={"limit": "max_schema_leaves", "value": n, "maximum": max_elements},
    )


def parse_file_metadata(data: bytes, max_schema_elements: int | None = None) -> FileMetaData:
    """Decode the Thrift-encoded ``FileMetaData`` (the footer without length and magic); a schema
    stating more than ``max_schema_elements`` elements is refused first
    (:func:`check_schema_elements`)."""
    if not isinstance(data, bytes):
        data = bytes(data)
    check_schema_elements(data, max_schema_elements)
    try:
        v, _ = _read_file_meta_data(data, 0, 0)
    except IndexError:
        # Every byte read indexes the buffer; running off its end is how truncation shows up.
        raise corrupt(f"truncated: {len(data)} bytes end in the middle of a value") from None
    except RecursionError:  # pragma: no cover - MAX_THRIFT_DEPTH keeps well below the limit
        raise corrupt("structures nested too deep") from None
    return _new_file_metadata(v[0], v[1], v[2], v[3], v[4], v[5], v[6], len(data))


def read_footer_bytes(
    tail: bytes, file_size: int, max_footer_bytes: int = DEFAULT_MAX_FOOTER_BYTES
) -> tuple[int, int]:
    """Check the end of a file and locate its footer.

    ``tail`` is the last ``len(tail)`` (at least 8) bytes of a file of ``file_size`` bytes.
    Returns ``(footer_offset, footer_length)``: the footer is ``file[footer_offset:footer_offset +
    footer_length]``. A footer longer than ``max_footer_bytes`` is refused like a corrupt one
    (:class:`~service.errors.InvalidParquetError`): the file is not one this reader accepts.
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
        # The reason only, never the file's bytes: a caller may register files it cannot read.
        raise InvalidParquetError("not a Parquet file: the trailing magic is not b'PAR1'")
    # "4-byte length in bytes of file metadata (little endian)"
    (length,) = struct.unpack("<I", tail[-8:-4])
    # The footer sits between the leading magic and the length field.
    if length > file_size - _MIN_FILE_SIZE:
        raise InvalidParquetError(
            f"corrupt Parquet file: the footer length it states does not fit in a file of {file_size} bytes"
        )
    if length > max_footer_bytes:
        raise InvalidParquetError(
            f"the footer is larger than the limit of {max_footer_bytes} bytes",
            details={"limit": max_footer_bytes},
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


def read_file_metadata(
    f: typing.BinaryIO,
    file_size: int | None = None,
    max_footer_bytes: int = DEFAULT_MAX_FOOTER_BYTES,
    *,
    tail_size: int = TAIL_READ_SIZE,
) -> FileMetaData:
    """Read and decode the footer of the Parquet file open as ``f`` (seekable, binary).

    The last ``tail_size`` bytes (64 KiB) are fetched in one read; a second read is made only for
    a larger footer, and only when it is at most ``max_footer_bytes`` long.
    """
    return read_file_tail(f, file_size, max_footer_bytes, tail_size=tail_size)[0]


def read_file_tail(
    f: typing.BinaryIO,
    file_size: int | None = None,
    max_footer_bytes: int = DEFAULT_MAX_FOOTER_BYTES,
    *,
    tail_size: int = TAIL_READ_SIZE,
    max_schema_elements: int | None = None,
) -> tuple[FileMetaData, int, bytes]:
    """:func:`read_file_metadata`, also returning the bytes of its first read and their offset in
    the file, so that later reads inside them (a small file's pages) need no I/O;
    ``max_schema_elements`` as in :func:`parse_file_metadata`."""
    if file_size is None:
        end = f.seek(0, 2)
        file_size = end if end is not None else f.tell()
    if file_size < _MIN_FILE_SIZE:
        raise InvalidParquetError(
            f"not a Parquet file: {file_size} bytes is smaller than the minimum of {_MIN_FILE_SIZE}"
        )
    tail_size = min(file_size, max(tail_size, 8))
    tail_start = file_size - tail_size
    f.seek(tail_start)
    tail = _read_exactly(f, tail_size)
    offset, length = read_footer_bytes(tail, file_size, max_footer_bytes)
    if offset >= tail_start:
        data = tail[offset - tail_start : offset - tail_start + length]
    else:
        f.seek(offset)
        data = _read_exactly(f, tail_start - offset) + tail[: tail_size - 8]
    if tail_start == 0 and tail[:4] != PARQUET_MAGIC:
        # "4-byte magic number "PAR1"" also opens the file; checked only when already in hand, so
        # that a remote file still costs a single read.
        raise InvalidParquetError("not a Parquet file: the leading magic is not b'PAR1'")
    return parse_file_metadata(data, max_schema_elements), tail_start, tail
