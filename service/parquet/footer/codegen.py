"""The code generator: each :class:`~.compact.Struct` table becomes a specialised Python reader.

:func:`compile_reader` turns a table into a function ``read(buf, pos, depth) -> (value, pos)``
(the technique dataclasses uses for ``__init__``): field slots become local variables, field ids
are dispatched through a balanced if-tree of literals, and varints are decoded inline. That keeps
the hot path free of per-field dict look-ups, tuple unpacking and per-byte calls, so each struct
costs one call and one constructor call. Reading past the end of ``buf`` raises IndexError, which
the public functions turn into InvalidParquetError; explicit checks cover the reads that slicing
or skipping would otherwise let run past the end silently.

These readers are the specification the C accelerator (:mod:`.accel`) is held to: it gives up
wherever they raise, and they decide.
"""

from __future__ import annotations

import typing
from collections.abc import Callable

from service.parquet.footer.compact import (
    K_BOOL,
    K_BYTES,
    K_ENUM,
    K_INT,
    K_LIST,
    K_STR,
    K_STRUCT,
    K_TEXT,
    MAX_THRIFT_DEPTH,
    W_BINARY,
    W_I16,
    W_I64,
    W_STRUCT,
    WIRE_NAMES,
    Struct,
    corrupt,
    list_header,
    long_field_id,
    mismatch,
    skip,
    too_deep,
    unknown_enum,
    uvarint,
)

_ListReader = Callable[[bytes, int, int], tuple[tuple[typing.Any, ...], int]]


def _list_reader(element: tuple[int, typing.Any], owner: str, fname: str) -> _ListReader:
    """A reader for ``list<...>`` field ``owner.fname`` whose elements are ``element``."""
    kind, arg = element
    what = f"{owner}.{fname}"
    if kind == K_STRUCT:
        return _struct_list_reader(compile_reader(arg), what)
    if kind in (K_ENUM, K_INT):
        return _int_list_reader(arg if kind == K_ENUM else None, what, owner, fname)
    return _string_list_reader(kind, what)


def _struct_list_reader(read: Callable[[bytes, int, int], tuple[typing.Any, int]], what: str) -> _ListReader:
    def read_structs(buf: bytes, pos: int, depth: int) -> tuple[tuple[typing.Any, ...], int]:
        size, wire, pos = list_header(buf, pos, depth, what)
        if size == 0:
            return (), pos
        if wire != W_STRUCT:
            raise corrupt(f"{what} should hold structs but holds {WIRE_NAMES.get(wire, wire)}")
        out: list[typing.Any] = []
        append = out.append
        for _ in range(size):
            value, pos = read(buf, pos, depth)
            append(value)
        return tuple(out), pos

    return read_structs


def _int_list_reader(table: dict[int, str] | None, what: str, owner: str, fname: str) -> _ListReader:
    """Integers, or with ``table`` the names of an enum's values."""

    def read_ints(buf: bytes, pos: int, depth: int) -> tuple[tuple[typing.Any, ...], int]:
        size, wire, pos = list_header(buf, pos, depth, what)
        if size == 0:
            return (), pos
        if not W_I16 <= wire <= W_I64:
            raise corrupt(f"{what} should hold integers but holds {WIRE_NAMES.get(wire, wire)}")
        out: list[typing.Any] = []
        append = out.append
        for _ in range(size):
            b = buf[pos]
            if b < 0x80:
                pos += 1
                v = (b >> 1) ^ -(b & 1)
            else:
                v, pos = uvarint(buf, pos, 10, what)
                v = (v >> 1) ^ -(v & 1)
            if table is None:
                append(v)
            else:
                name = table.get(v)
                append(name if name is not None else unknown_enum(table, v, owner, fname))
        return tuple(out), pos

    return read_ints


def _string_list_reader(kind: int, what: str) -> _ListReader:
    """Binary elements: bytes (K_BYTES), strict UTF-8 (K_STR) or text with invalid bytes replaced."""
    strict = kind == K_STR

    def read_strings(buf: bytes, pos: int, depth: int) -> tuple[tuple[typing.Any, ...], int]:
        size, wire, pos = list_header(buf, pos, depth, what)
        if size == 0:
            return (), pos
        if wire != W_BINARY:
            raise corrupt(f"{what} should hold strings but holds {WIRE_NAMES.get(wire, wire)}")
        end = len(buf)
        out: list[typing.Any] = []
        append = out.append
        for _ in range(size):
            n = buf[pos]
            if n < 0x80:
                pos += 1
            else:
                n, pos = uvarint(buf, pos, 5, what)
            stop = pos + n
            if stop > end:
                raise corrupt(f"an element of {what} runs past the end of the footer")
            raw = buf[pos:stop]
            pos = stop
            if kind == K_BYTES:
                append(raw)
            elif strict:
                try:
                    append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    raise corrupt(f"{what} holds invalid UTF-8: {raw[:64]!r}") from None
            else:
                append(raw.decode("utf-8", "replace"))
        return tuple(out), pos

    return read_strings


# Source snippets per value kind. {v} is the slot's local, {q} the quoted "Struct.field" name,
# {s}/{f} the quoted struct/field names for error helpers, {k} the kind number. Wire type numbers
# are literals here ("I8 3, I16 4, I32 5, I64 6, BINARY 8, LIST 9, SET 10, STRUCT 12") because
# this is the hot path.

# "Values of type int32 and int64 are first transformed to a zigzag int ... then encoded as a var
#  int"; "Var ints take 1 to 5 bytes (int32) or 1 to 10 bytes (int64)."
_INLINE_VARINT = """\
b = buf[pos]
pos += 1
if b < 128:
    x = (b >> 1) ^ -(b & 1)
else:
    x = b & 127
    shift = 7
    while True:
        b = buf[pos]
        pos += 1
        x |= (b & 127) << shift
        if b < 128:
            break
        shift += 7
        if shift > 63:
            raise corrupt("varint longer than 10 bytes in " + {q})
    if x >> 64:
        raise corrupt("varint overflows 64 bits in " + {q})
    x = (x >> 1) ^ -(x & 1)
"""
# "byte length is the length of the byte array, using var int encoding (must be >= 0)."
_READ_BINARY = """\
if w != 8:
    raise mismatch({s}, {f}, {k}, w)
n = buf[pos]
if n < 128:
    pos += 1
else:
    n, pos = uvarint(buf, pos, 5, {q})
stop = pos + n
if stop > len(buf):
    raise corrupt({q} + " runs past the end of the footer")
"""
_SNIPPETS = {
    K_INT: """\
if 4 <= w <= 6:
{varint}    {v} = x
elif w == 3:
    b = buf[pos]
    pos += 1
    {v} = b - 256 if b > 127 else b
else:
    raise mismatch({s}, {f}, {k}, w)
""",
    # "The generated code encodes Enums by taking the ordinal value and then encoding that as an int32."
    K_ENUM: """\
if 4 <= w <= 6:
{varint}    {v} = {table}.get(x)
    if {v} is None:
        {v} = unknown_enum({table}, x, {s}, {f})
else:
    raise mismatch({s}, {f}, {k}, w)
""",
    # "Field values are encoded directly in the field header." (BOOLEAN_TRUE 1, BOOLEAN_FALSE 2)
    K_BOOL: """\
if w == 1:
    {v} = True
elif w == 2:
    {v} = False
else:
    raise mismatch({s}, {f}, {k}, w)
""",
    K_BYTES: _READ_BINARY + "{v} = buf[pos:stop]\npos = stop\n",
    # "Strings are first encoded to UTF-8, and then send as binary."
    K_STR: _READ_BINARY
    + """\
try:
    {v} = buf[pos:stop].decode("utf-8")
except UnicodeDecodeError:
    raise corrupt({q} + " is not valid UTF-8: " + repr(buf[pos:stop][:64])) from None
pos = stop
""",
    # Informational text (created_by, key/value metadata): a stray byte should not make the data
    # unreadable, so it is replaced rather than rejected.
    K_TEXT: _READ_BINARY + '{v} = buf[pos:stop].decode("utf-8", "replace")\npos = stop\n',
    K_STRUCT: """\
if w != 12:
    raise mismatch({s}, {f}, {k}, w)
{v}, pos = {reader}(buf, pos, depth + 1)
""",
    K_LIST: """\
if w != 9 and w != 10:
    raise mismatch({s}, {f}, {k}, w)
{v}, pos = {reader}(buf, pos, depth + 1)
""",
}


def _indent(text: str, level: int) -> str:
    pad = "    " * level
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def compile_reader(spec: Struct) -> typing.Any:
    """Generate, compile and cache ``spec.read``."""
    if spec.read is not None:
        return spec.read
    namespace: dict[str, typing.Any] = {
        "MAX_THRIFT_DEPTH": MAX_THRIFT_DEPTH,
        "MAKE": spec.make,
        "corrupt": corrupt,
        "too_deep": too_deep,
        "mismatch": mismatch,
        "unknown_enum": unknown_enum,
        "uvarint": uvarint,
        "long_field_id": long_field_id,
        "skip": skip,
    }
    source = _reader_source(spec, _field_branches(spec, namespace))
    exec(compile(source, f"<parquet footer reader: {spec.name}>", "exec"), namespace)
    spec.read = namespace["read"]
    spec.source = source
    return spec.read


def _field_branches(spec: Struct, namespace: dict[str, typing.Any]) -> dict[int, str]:
    """The source reading each field of ``spec``, by field id; the enum tables and the readers
    of nested structs and lists it names go into ``namespace``."""
    branches: dict[int, str] = {}
    for fid, (slot, kind, arg, fname) in sorted(spec.fields.items()):
        names = {
            "v": f"v{slot}",
            "q": repr(f"{spec.name}.{fname}"),
            "s": repr(spec.name),
            "f": repr(fname),
            "k": str(kind),
            "table": f"T{slot}",
            "reader": f"R{slot}",
        }
        names["varint"] = _indent(_INLINE_VARINT.format(**names), 1)
        if kind == K_ENUM:
            namespace[f"T{slot}"] = arg
        elif kind == K_STRUCT:
            namespace[f"R{slot}"] = compile_reader(arg)
        elif kind == K_LIST:
            namespace[f"R{slot}"] = _list_reader(arg, spec.name, fname)
        branches[fid] = _SNIPPETS[kind].format(**names)
    return branches


def _dispatch(branches: dict[int, str], fids: list[int], level: int) -> str:
    """The branches of ``fids`` as a balanced tree of comparisons: ~log2(n) tests per field
    instead of a linear chain."""
    if len(fids) <= 3:
        out = ""
        for i, fid in enumerate(fids):
            out += _indent(f"{'if' if i == 0 else 'elif'} fid == {fid}:\n", level)
            out += _indent(branches[fid], level + 1)
        skip_unknown = "pos = skip(buf, pos, w, depth + 1)\n"
        if fids:
            return out + _indent("else:\n", level) + _indent(skip_unknown, level + 1)
        return _indent(skip_unknown, level)
    mid = len(fids) // 2
    return (
        _indent(f"if fid < {fids[mid]}:\n", level)
        + _dispatch(branches, fids[:mid], level + 1)
        + _indent("else:\n", level)
        + _dispatch(branches, fids[mid:], level + 1)
    )


def _reader_source(spec: Struct, branches: dict[int, str]) -> str:
    """The source of ``read(buf, pos, depth)`` for ``spec``: the field loop around ``branches``."""
    nslots = len(spec.defaults)
    locals_ = ", ".join(f"v{i}" for i in range(nslots))
    source = "def read(buf, pos, depth):\n"
    source += "    if depth > MAX_THRIFT_DEPTH:\n        raise too_deep()\n"
    for slot, default in enumerate(spec.defaults):
        # Defaults are None, 0 or (): literals, so no global look-up per slot.
        source += f"    v{slot} = {default!r}\n"
    source += "    last = 0\n    while True:\n"
    source += _indent(
        f"""\
h = buf[pos]
pos += 1
if h == 0:
    break
w = h & 15
if h > 15:
    fid = last + (h >> 4)
else:
    fid, pos = long_field_id(buf, pos, {spec.name!r})
last = fid
""",
        2,
    )
    source += _dispatch(branches, sorted(branches), 2)
    for slot, fname in spec.required:
        source += f"    if v{slot} is None:\n"
        source += f"        raise corrupt('required field {spec.name}.{fname} is missing')\n"
    if spec.spread:
        source += f"    return MAKE({locals_}), pos\n"
    else:
        source += f"    return MAKE([{locals_}]), pos\n"
    return source
