"""The Thrift Compact Protocol as this package reads it: wire types, the ``Struct`` table that
describes a struct as data, and the wire primitives every reader calls.

Quotes are from ``thrift-compact-protocol.md`` (apache/thrift, ``doc/specs``). A struct is
described once, as a :class:`Struct` table (field id -> slot, value kind, kind argument,
required); :mod:`.codegen` compiles each table into a Python reader and :mod:`.accel` hands the
same tables to the C decoder. Bad input raises :class:`service.errors.InvalidParquetError` through
:func:`corrupt`; reading past the end of a buffer raises ``IndexError``, which the callers turn
into the same error.
"""

from __future__ import annotations

import typing
from collections.abc import Callable, Sequence

from service.errors import InvalidParquetError

#: Nesting limit for Thrift containers. Real footers nest ~7 deep (FileMetaData > row_groups >
#: RowGroup > columns > ColumnChunk > ColumnMetaData > Statistics); the limit only exists so that a
#: hostile footer cannot exhaust the Python stack.
MAX_THRIFT_DEPTH = 64

# --- Wire types ----------------------------------------------------------------------------------
# "BOOLEAN_TRUE, encoded as 1 / BOOLEAN_FALSE, encoded as 2 / I8 3 / I16 4 / I32 5 / I64 6 /
#  DOUBLE 7 / BINARY 8 / LIST 9 / SET 10 / MAP 11 / STRUCT 12 / UUID 13"
W_TRUE, W_FALSE, W_I8, W_I16, W_I32, W_I64, W_DOUBLE = 1, 2, 3, 4, 5, 6, 7
W_BINARY, W_LIST, W_SET, W_MAP, W_STRUCT, W_UUID = 8, 9, 10, 11, 12, 13
WIRE_NAMES = {
    1: "bool", 2: "bool", 3: "i8", 4: "i16", 5: "i32", 6: "i64", 7: "double", 8: "binary",
    9: "list", 10: "set", 11: "map", 12: "struct", 13: "uuid",
}  # fmt: skip

# Value kinds a struct field can be declared with (what the decoder turns the wire value into).
K_BOOL = 0
K_INT = 1  # i8/i16/i32/i64: any integer wire type is accepted
K_ENUM = 2  # i32 mapped through a dict
K_BYTES = 3
K_STR = 4  # strict UTF-8: names, paths
K_TEXT = 5  # lenient UTF-8: informational text (created_by, key/value metadata)
K_STRUCT = 6
K_LIST = 7
KIND_NAMES = ("bool", "integer", "enum (i32)", "binary", "string", "string", "struct", "list")


class Struct:
    """How to decode one Thrift struct: its fields by id and how to build the result."""

    __slots__ = ("defaults", "fields", "interned", "make", "name", "read", "required", "source", "spread")

    def __init__(
        self,
        name: str,
        fields: Sequence[tuple[int, str, int, typing.Any, bool]],
        make: Callable[..., typing.Any],
        *,
        spread: bool = True,
        defaults: dict[str, typing.Any] | None = None,
        interned: Sequence[str] = (),
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
        # List fields whose decoded value the C decoder keeps by its exact bytes and hands out
        # again, the same object, for the same bytes (a table's files share one schema): a
        # speed-up only, the value is equal to a fresh decode. The Python reader ignores it.
        unknown = set(interned) - {f[1] for f in fields if f[2] == K_LIST}
        if unknown:
            raise ValueError(f"{name}: only list fields can be interned, not {sorted(unknown)}")
        self.interned = frozenset(interned)
        # Filled in by compile_reader: the generated decoder and its source (for debugging).
        self.read: Callable[[bytes, int, int], tuple[typing.Any, int]] | None = None
        self.source = ""


REQ, OPT = True, False

# Enum tables whose unknown values make the file unreadable (enum_table(..., closed=True)).
_closed_enums: list[dict[int, str]] = []


def enum_table(*names: str | None, closed: bool = False) -> dict[int, str]:
    """A Thrift enum as ``{value: name}``, numbered from 0; ``None`` leaves a gap.

    ``closed``: an unknown value is corruption (see :func:`unknown_enum`), not a newer member.
    """
    table = {i: n for i, n in enumerate(names) if n is not None}
    if closed:
        _closed_enums.append(table)
    return table


# --- Errors --------------------------------------------------------------------------------------


def corrupt(message: str) -> InvalidParquetError:
    return InvalidParquetError(f"corrupt Parquet footer: {message}")


def too_deep() -> InvalidParquetError:
    return corrupt(f"structures nested more than {MAX_THRIFT_DEPTH} deep")


def unknown_enum(table: dict[int, str], value: int, struct_name: str, field_name: str) -> str:
    if any(table is closed for closed in _closed_enums):
        raise corrupt(f"{struct_name}.{field_name} has unknown value {value}")
    return f"UNKNOWN_{value}"


def mismatch(struct_name: str, field_name: str, kind: int, wire: int) -> InvalidParquetError:
    # The spec leaves this open ("Other implementation may perform this check and then either
    # ignore the field, or return a protocol exception"); a field whose type changed is corruption.
    return corrupt(
        f"{struct_name}.{field_name} should be {KIND_NAMES[kind]} but is encoded as {WIRE_NAMES.get(wire, wire)}"
    )


# --- Wire primitives -----------------------------------------------------------------------------


def uvarint(buf: bytes, pos: int, max_bytes: int, what: str) -> tuple[int, int]:
    """Unsigned LEB128 at ``pos``; the slow path for everything but hot single-byte values."""
    b = buf[pos]
    pos += 1
    v = b & 0x7F
    shift = 7
    limit = 7 * max_bytes
    while b & 0x80:
        if shift >= limit:
            # "Var ints take 1 to 5 bytes (int32) or 1 to 10 bytes (int64)."
            raise corrupt(f"varint longer than {max_bytes} bytes in {what}")
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
    if v >> 64:
        raise corrupt(f"varint overflows 64 bits in {what}")
    return v, pos


def long_field_id(buf: bytes, pos: int, struct_name: str) -> tuple[int, int]:
    # "field id the field id, a signed 16 bit integer encoded as zigzag int."
    v, pos = uvarint(buf, pos, 3, f"a field id of {struct_name}")
    return (v >> 1) ^ -(v & 1), pos


def list_header(buf: bytes, pos: int, depth: int, what: str) -> tuple[int, int, int]:
    """Returns ``(size, element_type, pos)``."""
    if depth > MAX_THRIFT_DEPTH:
        raise too_deep()
    header = buf[pos]
    pos += 1
    # "ssss is the size, 4 bit unsigned int, values 0 - 14"; 15 means "size is the size, a var
    #  int (int32), positive values 15 or higher".
    size = header >> 4
    if size == 15:
        size, pos = uvarint(buf, pos, 5, what)
    # Every element takes at least one byte on the wire, so a larger count cannot be honest;
    # checking up front bounds the work a hostile size can cause.
    if size > len(buf) - pos:
        raise corrupt(f"{what} claims {size} elements but only {len(buf) - pos} bytes are left")
    return size, header & 0x0F, pos


def skip(buf: bytes, pos: int, wire: int, depth: int) -> int:
    """Step over one value of wire type ``wire`` without building it; returns the new position."""
    # "Therefore is also possible to handle unknown fields while decoding; these are simply ignored."
    # Writers put fields we do not model (SizeStatistics histograms, bloom filter offsets, ...) in
    # every column chunk, so varints are stepped over inline rather than decoded.
    if depth > MAX_THRIFT_DEPTH:
        raise too_deep()
    if W_I16 <= wire <= W_I64:
        start = pos
        while buf[pos] & 0x80:
            pos += 1
        pos += 1
        if pos - start > 10:
            raise corrupt("varint longer than 10 bytes in a skipped field")
        return pos
    if wire in (W_TRUE, W_FALSE):
        return pos
    if wire == W_BINARY:
        n, pos = uvarint(buf, pos, 5, "a skipped binary")
        pos += n
    elif wire == W_STRUCT:
        pos = _skip_struct(buf, pos, depth)
    elif wire in (W_LIST, W_SET):
        pos = _skip_list(buf, pos, depth)
    elif wire == W_I8:
        pos += 1
    elif wire == W_DOUBLE:
        pos += 8  # "the compact protocol encodes it in little endian order": 8 bytes
    elif wire == W_UUID:
        pos += 16  # "the field is always 16 bytes long"
    elif wire == W_MAP:
        pos = _skip_map(buf, pos, depth)
    else:
        raise corrupt(f"unknown compact protocol type {wire}")
    if pos > len(buf):
        raise corrupt("a value runs past the end of the footer")
    return pos


def _skip_struct(buf: bytes, pos: int, depth: int) -> int:
    while True:
        header = buf[pos]
        pos += 1
        if header == 0:
            return pos
        if not header >> 4:
            _, pos = long_field_id(buf, pos, "a skipped struct")
        wire = header & 0x0F
        if W_I16 <= wire <= W_I64:
            # Inline: skipped structs (SizeStatistics, ...) are mostly integers.
            start = pos
            while buf[pos] & 0x80:
                pos += 1
            pos += 1
            if pos - start > 10:
                raise corrupt("varint longer than 10 bytes in a skipped field")
        elif wire != W_TRUE and wire != W_FALSE:
            pos = skip(buf, pos, wire, depth + 1)


def _skip_list(buf: bytes, pos: int, depth: int) -> int:
    size, element, pos = list_header(buf, pos, depth + 1, "a skipped list")
    if element in (W_TRUE, W_FALSE):
        # "Element values of type bool are sent as an int8". The element-type table says BOOL
        # is 2, some writers use 1 (the field-type code): both are one byte per element.
        return pos + size
    if W_I16 <= element <= W_I64:
        # Histograms (list<i64>) are the bulk of what gets skipped.
        for _ in range(size):
            start = pos
            while buf[pos] & 0x80:
                pos += 1
            pos += 1
            if pos - start > 10:
                raise corrupt("varint longer than 10 bytes in a skipped list")
        return pos
    for _ in range(size):
        pos = skip(buf, pos, element, depth + 1)
    return pos


def _skip_map(buf: bytes, pos: int, depth: int) -> int:
    # "empty-map ::= 0 ; non-empty-map ::= size key-element-type value-element-type (key value)+"
    size, pos = uvarint(buf, pos, 5, "a skipped map")
    if not size:
        return pos
    if 2 * size > len(buf) - pos:
        raise corrupt(f"a map claims {size} entries but only {len(buf) - pos} bytes are left")
    types = buf[pos]
    pos += 1
    key, value = types >> 4, types & 0x0F
    for _ in range(size):
        for element in (key, value):
            if element in (W_TRUE, W_FALSE):
                pos += 1
            else:
                pos = skip(buf, pos, element, depth + 1)
    return pos
