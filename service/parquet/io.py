"""The one module that talks to pyarrow: opening files by path or URI and reading column data.

Every pyarrow exception is translated here into :mod:`service.errors`, so callers never see
``ArrowInvalid`` or ``OSError``. Footers are parsed by our own reader (``footer.py``); pyarrow is
used only where the data itself must be read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from service.errors import FileAccessError, InvalidParquetError
from service.parquet.footer import FileMetaData, SchemaNode, read_file_metadata

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq


@dataclass(frozen=True, slots=True)
class OpenedFile:
    uri: str
    size: int
    #: mtime+size: changes whenever the bytes at the path are rewritten.
    content_id: str | None


def _split_uri(uri: str) -> tuple[Any, str]:
    from pyarrow import fs as pafs

    if "://" not in uri:
        return pafs.LocalFileSystem(), os.path.abspath(uri)
    try:
        return pafs.FileSystem.from_uri(uri)
    except Exception as e:  # pyarrow raises ArrowInvalid / OSError / ValueError here
        raise FileAccessError(f"cannot open {uri}: {e}") from None


@contextmanager
def open_parquet(uri: str) -> Iterator[tuple[OpenedFile, BinaryIO, Any]]:
    """Open ``uri`` for random access. Yields (info, file object, filesystem path handle)."""
    from pyarrow import fs as pafs

    fs, path = _split_uri(uri)
    try:
        info = fs.get_file_info(path)
    except Exception as e:
        raise FileAccessError(f"cannot stat {uri}: {e}") from None
    if info.type == pafs.FileType.NotFound:
        raise FileAccessError(f"{uri}: no such file")
    if info.type != pafs.FileType.File:
        raise FileAccessError(f"{uri}: not a regular file")
    mtime = info.mtime_ns if info.mtime_ns is not None else None
    content_id = f"{mtime}:{info.size}" if mtime is not None else None
    try:
        f = fs.open_input_file(path)
    except Exception as e:
        raise FileAccessError(f"cannot open {uri}: {e}") from None
    try:
        yield OpenedFile(uri=uri, size=int(info.size), content_id=content_id), f, f
    finally:
        f.close()


def read_metadata(f: BinaryIO, size: int) -> FileMetaData:
    try:
        return read_file_metadata(f, size)
    except OSError as e:
        raise FileAccessError(f"read failed: {e}") from None


class ColumnReader:
    """Reads selected leaf columns of one row group, aligned entry by entry.

    Values of sibling leaves (a ``value`` and its ``typed_value``) come out with the same length
    and order: lists are flattened the same way for both, and struct nulls are pushed down, so
    entry ``i`` of each array describes the same Variant position.
    """

    def __init__(self, f: Any, schema_root: SchemaNode) -> None:
        import pyarrow.parquet as pq

        self._root = schema_root
        try:
            self._pf: pq.ParquetFile = pq.ParquetFile(f)
        except Exception as e:
            raise InvalidParquetError(f"pyarrow cannot read the file: {e}") from None

    def read(self, row_group: int, nodes: Sequence[SchemaNode]) -> list[pa.Array]:
        """Arrays for ``nodes`` (leaves, or groups: a group is read through its first leaf and
        comes back as a StructArray whose validity is the group's)."""
        leaves = [_first_leaf(n) for n in nodes]
        names = [".".join(leaf.path) for leaf in leaves]
        try:
            table = self._pf.read_row_group(row_group, columns=sorted(set(names)))
        except Exception as e:
            raise InvalidParquetError(f"cannot read columns {names} of row group {row_group}: {e}") from None
        return [self._navigate(table, n) for n in nodes]

    def _repeated_flags(self, path: tuple[str, ...]) -> list[bool]:
        flags = []
        node: SchemaNode | None = self._root
        for name in path:
            node = node.child(name) if node is not None else None
            if node is None:
                raise InvalidParquetError(f"no column {'.'.join(path)} in the schema")
            flags.append(node.element.repetition == "REPEATED")
        return flags

    def _navigate(self, table: Any, leaf: SchemaNode) -> pa.Array:
        import pyarrow as pa
        import pyarrow.compute as pc

        path = leaf.path
        arr = table.column(path[0]).combine_chunks()
        # pyarrow turns <repeated group list { element }> into one ListArray level.
        i = 1
        rep_flags = self._repeated_flags(path)
        while True:
            if isinstance(arr, pa.ExtensionArray):
                arr = arr.storage
            if i >= len(path):
                break
            if rep_flags[i] and i + 1 >= len(path):
                raise InvalidParquetError(f"cannot stop at repeated group {'.'.join(path)}")
            if rep_flags[i]:
                # path[i] is the repeated group, path[i+1] its element: one list level.
                arr = pc.list_flatten(arr)
                i += 2
                continue
            if not isinstance(arr, pa.StructArray):
                raise InvalidParquetError(f"unexpected Arrow layout at {'.'.join(path[: i + 1])}")
            # flatten() merges the parent's validity into the children, so a null struct makes
            # its fields null instead of exposing garbage.
            idx = arr.type.get_field_index(path[i])
            arr = arr.flatten()[idx]
            i += 1
        return arr



def _first_leaf(n: SchemaNode) -> SchemaNode:
    while not n.is_leaf:
        if not n.children:
            raise InvalidParquetError(f"group {'.'.join(n.path)} has no columns")
        n = n.children[0]
    return n
