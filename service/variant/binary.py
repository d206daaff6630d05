"""Pure decoder (and small encoder) of the Parquet Variant binary encoding.

Functions over bytes, no I/O, no third-party imports. Spec text from apache/parquet-format
``VariantEncoding.md`` is quoted beside the check it justifies, so a reader can audit each rule.

Malformed bytes raise :class:`InvalidVariantError` (a ``BadInputError``, HTTP 422) and nothing else:
every read is bounds-checked before it happens, lengths read from the input are compared with the
bytes actually present before anything is allocated or looped over, and container nesting is capped
at :data:`MAX_DEPTH` so hostile input cannot reach Python's recursion limit.

Where the spec is silent we are lenient (unused header bits are ignored); where it says "must" we
check, with two exceptions that real writers break and that a decoder does not need: dictionary
strings flagged ``sorted_strings`` need not be sorted or unique, and object fields need not be listed
in key order (DuckDB 1.5.5 writes both). Duplicate field names within one object are still rejected.
The one strictness beyond the text: a top-level value or metadata passed on its own must be exactly
as long as its encoding, since trailing bytes in a Parquet cell mean corruption.

Misuse of the encoder (a value that does not fit its kind) raises ``ValueError``: that is a
programming error, not bad input.
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, cast

from service.errors import BadInputError

__all__ = [
    "KINDS",
    "MAX_DEPTH",
    "InvalidVariantError",
    "VariantMetadata",
    "VariantValue",
    "decode",
    "decode_metadata",
    "decode_value",
    "encode",
    "encode_metadata",
    "encode_value",
    "is_variant_null",
    "metadata_length",
    "to_python",
    "varr",
    "vbinary",
    "vbool",
    "vdecimal",
    "vdouble",
    "vint",
    "vnull",
    "vobj",
    "vstr",
]


class InvalidVariantError(BadInputError):
    """Bytes that are not a valid Variant metadata or value."""

    code = "invalid_variant"


#: Containers nested deeper than this are rejected; real documents stay far below it and the cap
#: keeps both decoder and encoder well inside Python's recursion limit.
MAX_DEPTH: Final = 128

# --- Model ------------------------------------------------------------------------------------

# Indexed by primitive type ID (the spec's "Variant primitive types" table). IDs 1 and 2 both map to
# 'boolean' since the type ID carries the value.
_PRIMITIVE_KINDS: Final[tuple[str, ...]] = (
    "null",  # 0
    "boolean",  # 1 (True)
    "boolean",  # 2 (False)
    "int8",  # 3
    "int16",  # 4
    "int32",  # 5
    "int64",  # 6
    "double",  # 7
    "decimal4",  # 8
    "decimal8",  # 9
    "decimal16",  # 10
    "date",  # 11
    "timestamptz",  # 12
    "timestampntz",  # 13
    "float",  # 14
    "binary",  # 15
    "string",  # 16
    "time",  # 17
    "timestamptz_ns",  # 18
    "timestampntz_ns",  # 19
    "uuid",  # 20
)

KINDS: Final[frozenset[str]] = frozenset(_PRIMITIVE_KINDS) | {"object", "array"}

# Fixed-width little-endian signed integers: kind -> (type id, byte width).
_FIXED_INTS: Final[dict[str, tuple[int, int]]] = {
    "int8": (3, 1),
    "int16": (4, 2),
    "int32": (5, 4),
    "int64": (6, 8),
    "date": (11, 4),
    "timestamptz": (12, 8),
    "timestampntz": (13, 8),
    "time": (17, 8),
    "timestamptz_ns": (18, 8),
    "timestampntz_ns": (19, 8),
}
# kind -> (type id, byte width of the unscaled value)
_DECIMALS: Final[dict[str, tuple[int, int]]] = {"decimal4": (8, 4), "decimal8": (9, 8), "decimal16": (10, 16)}
_MAX_DECIMAL_SCALE: Final = 38
_MAX_DECIMAL_DIGITS: Final = 38


@dataclass(frozen=True, slots=True)
class VariantMetadata:
    """A decoded metadata dictionary. ``sorted_strings`` is the header bit as written; it is not
    verified (DuckDB sets it on unsorted dictionaries), so never binary-search ``keys`` on it."""

    version: int
    sorted_strings: bool
    keys: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class VariantValue:
    """One decoded Variant value, tagged with its physical kind.

    ``value`` by kind: None (null); bool; int (ints, date as days, times/timestamps as micros, *_ns
    as nanos); float (float, double); ``Decimal`` whose exponent is ``-scale`` (decimals); bytes
    (binary); str (string, short or long); ``uuid.UUID``; a tuple of ``(key, VariantValue)`` pairs
    in encoded field order (object, see :attr:`fields`); a tuple of ``VariantValue`` (array).
    Objects are pairs rather than a dict so the dataclass stays hashable.
    """

    kind: str
    value: object

    def __post_init__(self) -> None:
        # A typo in a kind would otherwise surface much later as an encoder error or a silent miss.
        if self.kind not in KINDS:
            raise ValueError(f"unknown Variant kind {self.kind!r}")

    @property
    def fields(self) -> dict[str, VariantValue]:
        """An object's fields as a dict, in encoded order."""
        if self.kind != "object":
            raise TypeError(f"a {self.kind} Variant has no fields")
        return dict(cast("_Pairs", self.value))

    @property
    def elements(self) -> tuple[VariantValue, ...]:
        if self.kind != "array":
            raise TypeError(f"a {self.kind} Variant has no elements")
        return cast("tuple[VariantValue, ...]", self.value)

    @staticmethod
    def null() -> VariantValue:
        return _NULL


#: An object's value: its (key, child) pairs in encoded order.
_Pairs = tuple[tuple[str, VariantValue], ...]


_NULL: Final = VariantValue("null", None)


# --- Small readers: every one checks bounds first ---------------------------------------------


def _fail(message: str, offset: int | None = None) -> InvalidVariantError:
    details = {} if offset is None else {"offset": offset}
    return InvalidVariantError(f"invalid Variant: {message}", details=details)


def _need(buf: bytes, pos: int, size: int, end: int, what: str) -> None:
    # `end` is the bound of the enclosing region (the whole buffer or a container's fields), so a
    # child can never read its siblings' or parent's bytes, let alone past the buffer.
    if size < 0 or pos < 0 or pos + size > end or end > len(buf):
        raise _fail(f"truncated {what}: need {size} byte(s) at {pos}, region ends at {end}", pos)


def _uint(buf: bytes, pos: int, size: int, end: int, what: str) -> int:
    _need(buf, pos, size, end, what)
    return int.from_bytes(buf[pos : pos + size], "little")


def _sint(buf: bytes, pos: int, size: int, end: int, what: str) -> int:
    _need(buf, pos, size, end, what)
    return int.from_bytes(buf[pos : pos + size], "little", signed=True)


def _utf8(raw: bytes, pos: int, what: str) -> str:
    # "All strings within the Variant binary format must be UTF-8 encoded. This includes the
    # dictionary key string values, the "short string" values, and the "long string" values."
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _fail(f"{what} is not valid UTF-8 ({exc.reason})", pos) from None


def _as_bytes(buf: bytes) -> bytes:
    # Callers hand us pyarrow buffers / memoryviews too; one copy up front keeps slicing cheap.
    return buf if type(buf) is bytes else bytes(buf)


# --- Metadata ---------------------------------------------------------------------------------


def _metadata_header(buf: bytes) -> tuple[int, bool, int, int]:
    """(version, sorted_strings, offset_size, dictionary_size) after checking the header."""
    if not buf:
        raise _fail("empty metadata", 0)
    header = buf[0]
    # "header: 1 byte (<version> | <sorted_strings> << 4 | (<offset_size_minus_one> << 6))"
    # Bit 5 is unused; the spec says nothing about it, so it is ignored rather than rejected.
    version = header & 0x0F
    # "The `version` is a 4-bit value that must always contain the value `1`."
    # "An implementation is not expected to parse a Variant value whose metadata version is higher
    # than the version supported by the implementation."
    if version != 1:
        raise _fail(f"unsupported metadata version {version} (only 1 is defined)", 0)
    sorted_strings = bool(header & 0x10)
    # "The actual number of bytes, `offset_size`, is `offset_size_minus_one + 1`."
    offset_size = (header >> 6) + 1
    # "dictionary_size: `offset_size` bytes. unsigned little-endian value indicating the number of
    # strings in the dictionary"
    dictionary_size = _uint(buf, 1, offset_size, len(buf), "metadata dictionary_size")
    return version, sorted_strings, offset_size, dictionary_size


def metadata_length(buf: bytes) -> int:
    """Byte length of the metadata that starts ``buf`` (which may continue with a value).

    Only the header, size and last offset are read; the rest is validated by :func:`decode_metadata`.
    """
    buf = _as_bytes(buf)
    _, _, offset_size, dictionary_size = _metadata_header(buf)
    # "Next, is an `offset` list, which contains `dictionary_size + 1` values."
    offsets_start = 1 + offset_size
    bytes_start = offsets_start + (dictionary_size + 1) * offset_size
    # Checked before anything is read: a 4-byte dictionary_size can claim ~4 G entries.
    _need(buf, offsets_start, bytes_start - offsets_start, len(buf), "metadata offset list")
    # "the last `offset` value will always be the total length of `bytes`."
    total = _uint(buf, bytes_start - offset_size, offset_size, len(buf), "metadata last offset")
    _need(buf, bytes_start, total, len(buf), "metadata string bytes")
    return bytes_start + total


def decode_metadata(buf: bytes) -> VariantMetadata:
    """Decode a complete metadata buffer (no trailing bytes allowed)."""
    buf = _as_bytes(buf)
    version, sorted_strings, offset_size, dictionary_size = _metadata_header(buf)
    length = metadata_length(buf)
    if length != len(buf):
        raise _fail(f"{len(buf) - length} trailing byte(s) after metadata", length)
    offsets_start = 1 + offset_size
    bytes_start = offsets_start + (dictionary_size + 1) * offset_size
    offsets = [
        _uint(buf, offsets_start + i * offset_size, offset_size, bytes_start, "metadata offset")
        for i in range(dictionary_size + 1)
    ]
    # "The first `offset` value will always be `0`"
    if offsets[0] != 0:
        raise _fail(f"first metadata offset is {offsets[0]}, must be 0", offsets_start)
    keys: list[str] = []
    for i in range(dictionary_size):
        start, stop = offsets[i], offsets[i + 1]
        # "The length of the ith string can be computed as `offset[i+1] - offset[i]`." A negative
        # length would silently yield an empty slice, so monotonicity is checked explicitly.
        if stop < start:
            raise _fail(f"metadata offsets decrease at string {i} ({start} > {stop})", offsets_start)
        keys.append(_utf8(buf[bytes_start + start : bytes_start + stop], bytes_start + start, "metadata key"))
    # "If `sorted_strings` is set to 1, strings in the dictionary must be unique and sorted in
    # lexicographic order." Deliberately not enforced: DuckDB 1.5.5 writes header 0x11 over
    # dictionaries that are neither sorted nor unique (e.g. b, a, c, z, a, q), and nothing here
    # relies on the order. The flag is reported as written, so callers must not trust it either.
    return VariantMetadata(version=version, sorted_strings=sorted_strings, keys=tuple(keys))


# --- Values -----------------------------------------------------------------------------------


def is_variant_null(value_bytes: bytes) -> bool:
    """True for exactly the one-byte primitive null (basic type 0, primitive type 0)."""
    return len(value_bytes) == 1 and value_bytes[0] == 0


def decode(metadata_bytes: bytes, value_bytes: bytes) -> VariantValue:
    return decode_value(decode_metadata(metadata_bytes), value_bytes)


def decode_value(metadata: VariantMetadata, buf: bytes) -> VariantValue:
    """Decode a complete value buffer against already-decoded metadata (no trailing bytes allowed)."""
    buf = _as_bytes(buf)
    value, end = _decode_at(metadata.keys, buf, 0, len(buf), 0)
    if end != len(buf):
        raise _fail(f"{len(buf) - end} trailing byte(s) after value", end)
    return value


def _decode_at(keys: tuple[str, ...], buf: bytes, pos: int, end: int, depth: int) -> tuple[VariantValue, int]:
    """Decode the value starting at ``pos`` that must lie within ``buf[:end]``; return it and the
    position one past its last byte."""
    _need(buf, pos, 1, end, "value header")
    # "value_metadata: 1 byte (<basic_type> | (<value_header> << 2))"
    basic_type = buf[pos] & 0x03
    header = buf[pos] >> 2
    if basic_type == 0:
        return _decode_primitive(buf, pos, header, end)
    if basic_type == 1:
        # "The `short_string_header` value is the length of the string."
        _need(buf, pos + 1, header, end, "short string")
        return VariantValue("string", _utf8(buf[pos + 1 : pos + 1 + header], pos + 1, "short string")), (
            pos + 1 + header
        )
    if depth >= MAX_DEPTH:
        raise _fail(f"containers nested deeper than {MAX_DEPTH}", pos)
    if basic_type == 2:
        return _decode_object(keys, buf, pos, header, end, depth)
    return _decode_array(keys, buf, pos, header, end, depth)


def _decode_primitive(buf: bytes, pos: int, type_id: int, end: int) -> tuple[VariantValue, int]:
    data = pos + 1
    # "primitive_header: ID from Primitive Type table." IDs past the table have no known size, so
    # nothing after them could be read either.
    if type_id >= len(_PRIMITIVE_KINDS):
        raise _fail(f"unknown primitive type id {type_id}", pos)
    kind = _PRIMITIVE_KINDS[type_id]
    # "Boolean and null types do not have a corresponding `value_data`, since their type defines
    # their value."
    if type_id == 0:
        return _NULL, data
    if type_id in (1, 2):
        return VariantValue("boolean", type_id == 1), data
    if kind in _FIXED_INTS:
        width = _FIXED_INTS[kind][1]
        return VariantValue(kind, _sint(buf, data, width, end, kind)), data + width
    if kind == "double":
        _need(buf, data, 8, end, kind)
        return VariantValue(kind, struct.unpack_from("<d", buf, data)[0]), data + 8
    if kind == "float":
        _need(buf, data, 4, end, kind)
        return VariantValue(kind, struct.unpack_from("<f", buf, data)[0]), data + 4
    if kind in _DECIMALS:
        width = _DECIMALS[kind][1]
        # "1 byte scale in range [0, 38], followed by little-endian unscaled value"
        scale = _uint(buf, data, 1, end, f"{kind} scale")
        if scale > _MAX_DECIMAL_SCALE:
            raise _fail(f"{kind} scale {scale} is outside [0, 38]", data)
        unscaled = _sint(buf, data + 1, width, end, kind)
        # Decimal table: "> 38 | Not supported". Only a 16-byte unscaled value can get there.
        if abs(unscaled) >= 10**_MAX_DECIMAL_DIGITS:
            raise _fail(f"{kind} has more than 38 digits", data + 1)
        return VariantValue(kind, _scaled(unscaled, scale)), data + 1 + width
    if kind in ("binary", "string"):
        # "4 byte little-endian size, followed by bytes" / "... followed by UTF-8 encoded bytes"
        size = _uint(buf, data, 4, end, f"{kind} size")
        _need(buf, data + 4, size, end, kind)
        raw = buf[data + 4 : data + 4 + size]
        return VariantValue(
            kind, raw if kind == "binary" else _utf8(raw, data + 4, "string")
        ), data + 4 + size
    # uuid, the last ID: "16-byte big-endian"
    _need(buf, data, 16, end, "uuid")
    return VariantValue("uuid", uuid.UUID(bytes=buf[data : data + 16])), data + 16


def _scaled(unscaled: int, scale: int) -> Decimal:
    # Built from a tuple, not by division or scaleb, which would round past the context's
    # 28-digit precision; the exponent then keeps the scale (Decimal('1.20') stays 1.20).
    sign, digits, _ = Decimal(unscaled).as_tuple()
    return Decimal((sign, digits, -scale))


def _decimal_parts(d: Decimal) -> tuple[int, int]:
    """(unscaled, scale >= 0) of a finite Decimal, exactly (no context rounding)."""
    sign, digits, exponent = d.as_tuple()
    assert isinstance(exponent, int)  # only NaN/Infinity have a str exponent
    unscaled = int("".join(map(str, digits))) * 10 ** max(exponent, 0)
    return (-unscaled if sign else unscaled), max(-exponent, 0)


def _container_layout(
    buf: bytes, pos: int, end: int, is_large: bool, id_size: int, offset_size: int, what: str
) -> tuple[int, int, int, int]:
    """(num_elements, first field_id position, first field_offset position, fields start)."""
    # "num_elements: a 1 or 4 byte unsigned little-endian value (depending on is_large ...)"
    count_size = 4 if is_large else 1
    count = _uint(buf, pos + 1, count_size, end, f"{what} num_elements")
    ids_start = pos + 1 + count_size
    offsets_start = ids_start + count * id_size
    # "Each `array_val` and `object_val` must contain exactly `num_elements + 1` values for
    # `field_offset`." Checked as one span before any loop, so a huge count fails fast.
    fields_start = offsets_start + (count + 1) * offset_size
    _need(buf, ids_start, fields_start - ids_start, end, f"{what} field ids/offsets")
    return count, ids_start, offsets_start, fields_start


def _child_offsets(
    buf: bytes, count: int, offsets_start: int, offset_size: int, fields_start: int, end: int, what: str
) -> tuple[list[int], int]:
    """The ``count`` child start offsets and the end of the fields region."""
    offsets = [
        _uint(buf, offsets_start + i * offset_size, offset_size, fields_start, f"{what} field_offset")
        for i in range(count + 1)
    ]
    # "The last entry is the offset that is one byte past the last field (i.e. the total size of
    # all fields in bytes). All offsets are relative to the first byte of the first field"
    fields_end = fields_start + offsets[-1]
    _need(buf, fields_start, offsets[-1], end, f"{what} fields")
    for i, off in enumerate(offsets[:-1]):
        # Values need not be in offset order ("offsets will not necessarily be listed in ascending
        # order"), but each must start inside the fields region.
        if off >= offsets[-1]:
            raise _fail(
                f"{what} field_offset {i} ({off}) is not below the fields size {offsets[-1]}", offsets_start
            )
    return offsets[:-1], fields_end


def _decode_object(
    keys: tuple[str, ...], buf: bytes, pos: int, header: int, end: int, depth: int
) -> tuple[VariantValue, int]:
    # "object_header: (is_large << 4 | field_id_size_minus_one << 2 | field_offset_size_minus_one)"
    offset_size = (header & 0x03) + 1
    id_size = ((header >> 2) & 0x03) + 1
    is_large = bool(header & 0x10)
    count, ids_start, offsets_start, fields_start = _container_layout(
        buf, pos, end, is_large, id_size, offset_size, "object"
    )
    offsets, fields_end = _child_offsets(buf, count, offsets_start, offset_size, fields_start, end, "object")
    pairs: list[tuple[str, VariantValue]] = []
    seen: set[str] = set()
    for i in range(count):
        field_id = _uint(buf, ids_start + i * id_size, id_size, offsets_start, "object field_id")
        # "A `field_id` is an index into the dictionary in the metadata."
        if field_id >= len(keys):
            raise _fail(f"object field_id {field_id} is outside the {len(keys)}-key dictionary", ids_start)
        key = keys[field_id]
        # "It is an error for an object to contain two fields with the same name, whether or not they
        # have distinct dictionary IDs."
        if key in seen:
            raise _fail(f"object has duplicate field name {key!r}", ids_start)
        seen.add(key)
        # "field IDs and offsets must be listed in the order of the corresponding field names,
        # sorted lexicographically" is deliberately not enforced: DuckDB 1.5.5 lists fields in
        # dictionary-ID order over an unsorted dictionary ({"z": .., "a": ..}). Fields are kept in
        # the order encoded; nothing here binary-searches them.
        child, _ = _decode_at(keys, buf, fields_start + offsets[i], fields_end, depth + 1)
        pairs.append((key, child))
    return VariantValue("object", tuple(pairs)), fields_end


def _decode_array(
    keys: tuple[str, ...], buf: bytes, pos: int, header: int, end: int, depth: int
) -> tuple[VariantValue, int]:
    # "array_header: (is_large << 2 | field_offset_size_minus_one)"
    offset_size = (header & 0x03) + 1
    is_large = bool(header & 0x04)
    count, _, offsets_start, fields_start = _container_layout(
        buf, pos, end, is_large, 0, offset_size, "array"
    )
    offsets, fields_end = _child_offsets(buf, count, offsets_start, offset_size, fields_start, end, "array")
    elements = tuple(_decode_at(keys, buf, fields_start + off, fields_end, depth + 1)[0] for off in offsets)
    return VariantValue("array", elements), fields_end


# --- Plain Python -----------------------------------------------------------------------------


def to_python(v: VariantValue) -> object:
    """Plain Python: dicts and lists for containers; dates, times and timestamps stay ints."""
    return _to_python(v, 0)


def _to_python(v: VariantValue, depth: int) -> object:
    if depth > MAX_DEPTH:
        raise ValueError(f"Variant nested deeper than {MAX_DEPTH}")
    if v.kind == "object":
        return {k: _to_python(child, depth + 1) for k, child in v.fields.items()}
    if v.kind == "array":
        return [_to_python(child, depth + 1) for child in v.elements]
    return v.value


# --- Encoder ----------------------------------------------------------------------------------


def _width(n: int) -> int:
    """Smallest of 1..4 bytes holding the unsigned n."""
    for size in (1, 2, 3, 4):
        if n < 1 << (8 * size):
            return size
    raise ValueError(f"{n} does not fit in 4 bytes")


def encode_metadata(keys: Sequence[str], sorted_strings: bool = False) -> bytes:
    """Metadata with the given dictionary, using the smallest offset size that fits."""
    encoded = [k.encode("utf-8") for k in keys]
    if sorted_strings and any(not keys[i - 1] < keys[i] for i in range(1, len(keys))):
        raise ValueError("sorted_strings=True needs unique keys in ascending order")
    total = sum(len(e) for e in encoded)
    offset_size = _width(max(len(encoded), total))
    header = 0x01 | (0x10 if sorted_strings else 0) | ((offset_size - 1) << 6)
    out = bytearray([header])
    out += len(encoded).to_bytes(offset_size, "little")
    position = 0
    out += position.to_bytes(offset_size, "little")
    for e in encoded:
        position += len(e)
        out += position.to_bytes(offset_size, "little")
    for e in encoded:
        out += e
    return bytes(out)


def encode(v: VariantValue) -> tuple[bytes, bytes]:
    """(metadata, value) with a sorted dictionary of exactly the keys the value uses."""
    keys = sorted(_collect_keys(v, set(), 0))
    return encode_metadata(keys, sorted_strings=True), encode_value(v, {k: i for i, k in enumerate(keys)})


def _collect_keys(v: VariantValue, into: set[str], depth: int) -> set[str]:
    if depth > MAX_DEPTH:
        raise ValueError(f"Variant nested deeper than {MAX_DEPTH}")
    if v.kind == "object":
        for key, child in cast("_Pairs", v.value):
            into.add(key)
            _collect_keys(child, into, depth + 1)
    elif v.kind == "array":
        for child in v.elements:
            _collect_keys(child, into, depth + 1)
    return into


def encode_value(v: VariantValue, key_ids: Mapping[str, int]) -> bytes:
    """Encode ``v``; object keys are looked up in ``key_ids`` (key -> dictionary index).

    Strings under 64 bytes become short strings. Object fields are written in key order, as the
    spec requires, whatever order ``v`` holds them in.
    """
    out = bytearray()
    _encode_into(out, v, key_ids, 0)
    return bytes(out)


def _encode_into(out: bytearray, v: VariantValue, key_ids: Mapping[str, int], depth: int) -> None:
    kind, value = v.kind, v.value
    if kind == "null":
        out.append(0)
    elif kind == "boolean":
        out.append((1 if value else 2) << 2)
    elif kind in _FIXED_INTS:
        type_id, width = _FIXED_INTS[kind]
        out.append(type_id << 2)
        try:
            out += int(cast(int, value)).to_bytes(width, "little", signed=True)
        except OverflowError:
            raise ValueError(f"{value!r} does not fit {kind}") from None
    elif kind == "double":
        out.append(7 << 2)
        out += struct.pack("<d", value)
    elif kind == "float":
        out.append(14 << 2)
        out += struct.pack("<f", value)  # raises OverflowError past float32's range
    elif kind in _DECIMALS:
        type_id, width = _DECIMALS[kind]
        if not isinstance(value, Decimal) or not value.is_finite():
            raise ValueError(f"{kind} needs a finite Decimal, got {value!r}")
        unscaled, scale = _decimal_parts(value)
        if scale > _MAX_DECIMAL_SCALE or abs(unscaled) >= 10**_MAX_DECIMAL_DIGITS:
            raise ValueError(f"{value!r} exceeds Variant decimal limits (scale/precision 38)")
        out.append(type_id << 2)
        out.append(scale)
        try:
            out += unscaled.to_bytes(width, "little", signed=True)
        except OverflowError:
            raise ValueError(f"{value!r} does not fit {kind}") from None
    elif kind == "string":
        raw = str(value).encode("utf-8")
        if len(raw) < 64:
            out.append(1 | (len(raw) << 2))
        else:
            out.append(16 << 2)
            out += len(raw).to_bytes(4, "little")
        out += raw
    elif kind == "binary":
        raw = bytes(cast(bytes, value))
        out.append(15 << 2)
        out += len(raw).to_bytes(4, "little")
        out += raw
    elif kind == "uuid":
        out.append(20 << 2)
        out += cast(uuid.UUID, value).bytes
    else:
        if depth >= MAX_DEPTH:
            raise ValueError(f"Variant nested deeper than {MAX_DEPTH}")
        if kind == "object":
            _encode_object(out, v, key_ids, depth)
        else:
            _encode_array(out, v, key_ids, depth)


def _encode_children(children: Iterable[VariantValue], key_ids: Mapping[str, int], depth: int) -> list[bytes]:
    parts = []
    for child in children:
        part = bytearray()
        _encode_into(part, child, key_ids, depth + 1)
        parts.append(bytes(part))
    return parts


def _offsets(parts: list[bytes]) -> tuple[int, bytes]:
    """(offset size, the num_elements + 1 offsets encoded)."""
    total = sum(len(p) for p in parts)
    size = _width(total)
    out = bytearray()
    position = 0
    for p in parts:
        out += position.to_bytes(size, "little")
        position += len(p)
    out += position.to_bytes(size, "little")
    return size, bytes(out)


def _encode_object(out: bytearray, v: VariantValue, key_ids: Mapping[str, int], depth: int) -> None:
    pairs = sorted(cast("_Pairs", v.value), key=lambda kv: kv[0])
    for i in range(1, len(pairs)):
        if pairs[i - 1][0] == pairs[i][0]:
            raise ValueError(f"duplicate object key {pairs[i][0]!r}")
    try:
        ids = [key_ids[k] for k, _ in pairs]
    except KeyError as exc:
        raise ValueError(f"object key {exc.args[0]!r} is not in key_ids") from None
    parts = _encode_children((child for _, child in pairs), key_ids, depth)
    offset_size, offsets = _offsets(parts)
    id_size = _width(max(ids, default=0))
    is_large = len(pairs) > 255
    out.append(2 | (((int(is_large) << 4) | ((id_size - 1) << 2) | (offset_size - 1)) << 2))
    out += len(pairs).to_bytes(4 if is_large else 1, "little")
    for field_id in ids:
        out += field_id.to_bytes(id_size, "little")
    out += offsets
    for p in parts:
        out += p


def _encode_array(out: bytearray, v: VariantValue, key_ids: Mapping[str, int], depth: int) -> None:
    parts = _encode_children(v.elements, key_ids, depth)
    offset_size, offsets = _offsets(parts)
    is_large = len(parts) > 255
    out.append(3 | (((int(is_large) << 2) | (offset_size - 1)) << 2))
    out += len(parts).to_bytes(4 if is_large else 1, "little")
    out += offsets
    for p in parts:
        out += p


# --- Constructors -----------------------------------------------------------------------------


def vnull() -> VariantValue:
    return _NULL


def vbool(b: bool) -> VariantValue:
    return VariantValue("boolean", bool(b))


def vint(i: int) -> VariantValue:
    """The smallest of int8/16/32/64 that holds ``i``."""
    for kind, bits in (("int8", 8), ("int16", 16), ("int32", 32), ("int64", 64)):
        if -(1 << (bits - 1)) <= i < 1 << (bits - 1):
            return VariantValue(kind, int(i))
    raise ValueError(f"{i} does not fit in int64")


def vdouble(x: float) -> VariantValue:
    return VariantValue("double", float(x))


def vdecimal(d: Decimal | str) -> VariantValue:
    """The smallest of decimal4/8/16 that holds ``d``; its exponent sets the scale (1E+2 becomes 100)."""
    d = Decimal(d)
    if not d.is_finite():
        raise ValueError(f"{d!r} is not finite")
    unscaled, scale = _decimal_parts(d)
    # Never below the scale, so the kind also fits a Parquet DECIMAL(precision, scale).
    precision = max(len(str(abs(unscaled))), scale)
    for kind, limit in (("decimal4", 9), ("decimal8", 18), ("decimal16", 38)):
        if precision <= limit:
            return VariantValue(kind, _scaled(unscaled, scale))
    raise ValueError(f"{d!r} needs more than 38 digits")


def vstr(s: str) -> VariantValue:
    return VariantValue("string", s)


def vbinary(b: bytes) -> VariantValue:
    return VariantValue("binary", bytes(b))


def vobj(fields: Mapping[str, VariantValue]) -> VariantValue:
    """An object with fields sorted by key, i.e. in the order the encoding stores (and decodes) them."""
    return VariantValue("object", tuple(sorted(fields.items(), key=lambda kv: kv[0])))


def varr(elements: Iterable[VariantValue]) -> VariantValue:
    return VariantValue("array", tuple(elements))
