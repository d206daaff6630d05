"""A tiny writer of the Thrift Compact Protocol for crafting Parquet footers in tests, and a minimal
synthetic footer (``simple_footer``) built with it.

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


# --- Synthetic Parquet footers -------------------------------------------------------------------


def s(text: str) -> tuple[str, bytes]:
    return ("bin", text.encode())


def schema_element(
    name: str | bytes, **fields: tuple[Any, ...]
) -> tuple[str, list[tuple[int, tuple[Any, ...]]]]:
    ids = {"type": 1, "type_length": 2, "repetition": 3, "num_children": 5, "converted_type": 6}
    ids |= {"scale": 7, "precision": 8, "field_id": 9, "logical_type": 10}
    raw_name = name.encode() if isinstance(name, str) else name
    return ("struct", sorted([(4, ("bin", raw_name))] + [(ids[k], v) for k, v in fields.items()]))


def simple_footer(
    *,
    leaf_extra: dict[str, tuple[Any, ...]] | None = None,
    meta_extra: list[tuple[int, tuple[Any, ...]]] | None = None,
    chunk_md_extra: list[tuple[int, tuple[Any, ...]]] | None = None,
    long_form: bool = False,
    leaf_name: str | bytes = "x",
) -> bytes:
    """A one-column (required INT64 'x'), one-row-group FileMetaData."""
    schema = [
        schema_element("root", num_children=("i32", 1)),
        schema_element(leaf_name, **({"type": ("i32", 2), "repetition": ("i32", 0)} | (leaf_extra or {}))),
    ]
    column_md = [
        (1, ("i32", 2)),
        (2, ("list", "i32", [("i32", 0)])),
        (3, ("list", "bin", [s("x")])),
        (4, ("i32", 0)),
        (5, ("i64", 3)),
        (6, ("i64", 40)),
        (7, ("i64", 40)),
        (9, ("i64", 4)),
        *(chunk_md_extra or []),
    ]
    chunk = ("struct", [(2, ("i64", 0)), (3, ("struct", sorted(column_md)))])
    row_group = ("struct", [(1, ("list", "struct", [chunk])), (2, ("i64", 40)), (3, ("i64", 3))])
    fields = [
        (1, ("i32", 1)),
        (2, ("list", "struct", schema)),
        (3, ("i64", 3)),
        (4, ("list", "struct", [row_group])),
        *(meta_extra or []),
    ]
    return encode_struct(sorted(fields, key=lambda f: f[0]), long_form=long_form)
