"""A tiny writer of the Thrift Compact Protocol, for crafting Parquet footers in tests.

thrift-compact-protocol.md: "Var ints take 1 to 5 bytes (int32) or 1 to 10 bytes (int64)";
integers are zigzag-encoded first; field headers carry a 4-bit id delta and the wire type.
"""

from __future__ import annotations

import struct
from typing import Any

from service.parquet.footer import read_footer_bytes

# Tagged values: ("i32", n), ("i64", n), ("i8", n), ("bool", b), ("bin", bytes), ("double", x),
# ("uuid", 16 bytes), ("struct", [(fid, value), ...]), ("list", element_type, [values]),
# ("map", key_type, value_type, [(k, v), ...]).
WIRE = {"bool": 1, "i8": 3, "i16": 4, "i32": 5, "i64": 6, "double": 7, "bin": 8, "list": 9, "set": 10}
WIRE |= {"map": 11, "struct": 12, "uuid": 13}


def uvarint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def zigzag(n: int) -> int:
    return (n << 1) ^ (n >> 63)


def encode_element(value: tuple[Any, ...]) -> bytes:
    tag = value[0]
    if tag == "bool":
        return b"\x01" if value[1] else b"\x02"
    if tag == "i8":
        return struct.pack("<b", value[1])
    if tag in ("i16", "i32", "i64"):
        return uvarint(zigzag(value[1]))
    if tag == "double":
        return struct.pack("<d", value[1])
    if tag == "bin":
        return uvarint(len(value[1])) + value[1]
    if tag == "uuid":
        return value[1]
    if tag == "struct":
        return encode_struct(value[1])
    if tag in ("list", "set"):
        element_type, items = value[1], value[2]
        wire = WIRE[element_type] if element_type != "bool" else 2
        header = (
            bytes([(len(items) << 4) | wire])
            if len(items) < 15
            else bytes([0xF0 | wire]) + uvarint(len(items))
        )
        return header + b"".join(encode_element(item) for item in items)
    if tag == "map":
        _, key_type, value_type, items = value
        if not items:
            return b"\x00"
        return (
            uvarint(len(items))
            + bytes([(WIRE[key_type] << 4) | WIRE[value_type]])
            + b"".join(encode_element(k) + encode_element(v) for k, v in items)
        )
    raise AssertionError(tag)


def encode_struct(fields: list[tuple[int, tuple[Any, ...]]], long_form: bool = False) -> bytes:
    out = bytearray()
    last = 0
    for fid, value in fields:
        tag = value[0]
        wire = (1 if value[1] else 2) if tag == "bool" else WIRE[tag]
        if 0 < fid - last <= 15 and not long_form:
            out.append(((fid - last) << 4) | wire)
        else:
            out.append(wire)
            out += uvarint(zigzag(fid))
        last = fid
        if tag != "bool":
            out += encode_element(value)
    out.append(0)
    return bytes(out)


def footer_of(data: bytes) -> bytes:
    """The Thrift-encoded FileMetaData of a whole Parquet file's bytes."""
    offset, length = read_footer_bytes(data[-8:], len(data))
    return data[offset : offset + length]
