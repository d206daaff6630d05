"""Glue to the C accelerator, ``service.parquet._compact`` (``service/parquet/_compact.c``).

The extension interprets the same :class:`~.compact.Struct` tables in C and builds the same
values. :func:`fast` hands it a table as a "program" (a tuple per struct: slot count, how to build
the result, the class's slot member descriptors when it is a slots dataclass, defaults, required
slots and fields, each field flagged when its value is interned) together with
``MAX_THRIFT_DEPTH``. It never raises for bad input: it returns None and the generated Python
reader (:mod:`.codegen`) decodes the bytes again, so error messages and every forward-compatibility
rule live in one place, the Python package. Without a C compiler at install time the extension is
absent and the Python reader does all the work, about ten times slower.

:func:`slots_builder` hands the extension a slots dataclass to build the way the decoder builds
footer structs, for the extractor's result objects.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Callable

from service.parquet.footer.codegen import compile_reader
from service.parquet.footer.compact import K_ENUM, K_LIST, K_STRUCT, MAX_THRIFT_DEPTH, Struct

# How the C decoder builds a struct's result (MODE_* in _compact.c).
_MODE_SLOTS, _MODE_SPREAD, _MODE_LIST = 0, 1, 2

try:
    from service.parquet import _compact
except ImportError:  # pragma: no cover - built by `pip install` wherever a C compiler exists
    _compact = None  # type: ignore[assignment]  # the optional module absent: its name bound to None

#: True when footers are decoded by the C accelerator.
ACCELERATED = _compact is not None

_programs: list[tuple[typing.Any, ...]] = []
_program_index: dict[int, int] = {}
# Set by fast() before any reader it returns can run (rebuilt when a struct is registered).
_decoder: _compact.Decoder


def _slot_members(cls: typing.Any, nslots: int | None = None) -> tuple[typing.Any, ...] | None:
    """The member descriptors, in field order, of ``cls`` when it is a slots dataclass whose
    generated ``__init__`` only sets its fields (so that filling the slots builds the same
    object); ``nslots``: the number of fields it must have."""
    import dataclasses

    if not (isinstance(cls, type) and dataclasses.is_dataclass(cls)) or "__slots__" not in cls.__dict__:
        return None
    fields = dataclasses.fields(cls)
    if (nslots is not None and len(fields) != nslots) or not all(f.init for f in fields):
        return None
    if hasattr(cls, "__post_init__") or "__init__" not in cls.__dict__:
        return None
    members = tuple(cls.__dict__.get(f.name) for f in fields)
    if not all(isinstance(m, types.MemberDescriptorType) for m in members):
        return None
    return members


_T = typing.TypeVar("_T")


def slots_builder(cls: type[_T]) -> Callable[..., _T]:
    """A positional constructor of the slots dataclass ``cls``: ``build(*values)`` is
    ``cls(*values)`` with every field given, in C when the accelerator is built (a frozen
    dataclass's ``__init__`` costs 0.2 µs per field), ``cls`` itself otherwise or when ``cls``
    does more than set its fields (``__post_init__``, fields outside ``__init__``)."""
    members = _slot_members(cls)
    if _compact is None or members is None:
        return cls
    return typing.cast(Callable[..., _T], _compact.Builder(cls, members))


def _register(spec: Struct) -> int:
    """Give ``spec`` (and every struct it contains) a program number in the C decoder."""
    key = id(spec)
    if key in _program_index:
        return _program_index[key]
    index = len(_programs)
    _program_index[key] = index
    _programs.append(())  # placeholder: nested structs may refer back to this index
    fields = []
    for fid, (slot, kind, arg, name) in spec.fields.items():
        elem_kind, sub, table = -1, -1, None
        if kind == K_ENUM:
            table = arg
        elif kind == K_STRUCT:
            sub = _register(arg)
        elif kind == K_LIST:
            elem_kind, elem_arg = arg
            if elem_kind == K_STRUCT:
                sub = _register(elem_arg)
            elif elem_kind == K_ENUM:
                table = elem_arg
        fields.append((fid, slot, kind, elem_kind, sub, table, name in spec.interned))
    members = _slot_members(spec.make, len(spec.defaults)) if spec.spread else None
    mode = _MODE_SLOTS if members is not None else _MODE_SPREAD if spec.spread else _MODE_LIST
    _programs[index] = (
        len(spec.defaults),
        mode,
        spec.make,
        members,
        tuple(spec.defaults),
        tuple(slot for slot, _ in spec.required),
        tuple(fields),
    )
    return index


def fast(spec: Struct) -> Callable[[bytes, int, int], tuple[typing.Any, int]]:
    """A reader for ``spec`` with the signature of the generated ones, accelerated when it can be."""
    slow = compile_reader(spec)
    if _compact is None:
        return slow
    global _decoder
    if id(spec) not in _program_index:
        _register(spec)
        _decoder = _compact.Decoder(tuple(_programs), MAX_THRIFT_DEPTH)
    index = _program_index[id(spec)]

    def read(buf: bytes, pos: int, depth: int) -> tuple[typing.Any, int]:
        out = _decoder.decode(index, buf, pos, depth)
        # None: the C decoder met something it leaves to the specification's reader.
        return out if out is not None else slow(buf, pos, depth)

    return read
