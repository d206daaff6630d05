"""Opening files by path or URI and reading column data (the one module that reads data with pyarrow).

Object-store URIs are opened through :mod:`service.storage.objects` (one request for the footer);
every pyarrow exception is translated here into :mod:`service.errors`, so callers never see
``ArrowInvalid`` or ``OSError``. Local files are opened without blocking and judged by the opened
descriptor (a regular file or nothing); :func:`open_beneath` also never leaves a given directory.
Footers are parsed by our own reader (``footer``); pyarrow is used only where the data itself
must be read.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from service.errors import FileAccessError, InvalidParquetError
from service.parquet.footer import (
    DEFAULT_MAX_FOOTER_BYTES,
    TAIL_READ_SIZE,
    FileMetaData,
    SchemaNode,
    read_file_tail,
)

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq


@dataclass(frozen=True, slots=True)
class OpenedFile:
    uri: str
    size: int
    #: Changes whenever the bytes at the path are rewritten: ``mtime_ns:size`` locally, the
    #: store's ``etag:<etag>:size`` (see :class:`service.storage.objects.ObjectInfo`) remotely.
    content_id: str | None


_Opened = tuple[OpenedFile, BinaryIO, Any]


def open_parquet(uri: str, *, tail_bytes: int | None = None) -> AbstractContextManager[_Opened]:
    """Open ``uri`` for random access. Yields (info, file object, filesystem path handle).

    An object-store URI costs one request here: the last ``tail_bytes`` (default: the
    ``SHREDCAT_OBJECT_STORE_TAIL_BYTES`` setting) of the object, its size and content id
    (:mod:`service.storage.objects`); the file object then serves reads from those bytes.
    """
    from service.storage.objects import is_remote

    if not is_remote(uri):
        # Local paths skip every store: a stat and an open cost a few µs, a large share of
        # extracting a small file.
        return _LocalOpen(uri)
    return _open_remote(uri, tail_bytes)


@contextmanager
def _open_remote(uri: str, tail_bytes: int | None) -> Iterator[_Opened]:
    from service.storage.objects import store_for, store_options
    from service.storage.objects.file import ObjectFile

    options = store_options()
    store = store_for(uri, options)
    assert store is not None
    tail = store.read_tail(uri, tail_bytes or options.tail_bytes)
    f = ObjectFile(store, tail)
    try:
        # ObjectFile is a RawIOBase, which typeshed does not count as a BinaryIO; it has every call pyarrow makes.
        yield OpenedFile(uri=uri, size=tail.info.size, content_id=tail.info.content_id), f, f  # type: ignore[misc]  # RawIOBase (above)
    finally:
        f.close()


#: Opening never blocks (a FIFO opens at once, a device is not waited on); ``_adopt`` then refuses
#: anything but a regular file, judged on what was opened, not on a name that may have changed.
_OPEN_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _access_error(uri: str, e: OSError) -> FileAccessError:
    if isinstance(e, FileNotFoundError):
        return FileAccessError(f"{uri}: no such file")
    return FileAccessError(f"cannot open {uri}: {e.strerror or type(e).__name__}")


class _LocalOpen:
    """A local file opened on entering (refused unless it is a regular file) and closed on exit.

    A class rather than a generator context manager: extracting a small file takes tens of µs,
    and each generator-based layer costs a few."""

    __slots__ = ("_file", "uri")

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._file: BinaryIO | None = None

    def _open_fd(self) -> int:
        from service.storage.objects import local_path

        try:
            return os.open(local_path(self.uri), _OPEN_FLAGS)
        except OSError as e:
            raise _access_error(self.uri, e) from None

    def __enter__(self) -> _Opened:
        fd = self._open_fd()
        # Take ownership of fd: refuse it unless it is a regular file, then wrap it as a file.
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise FileAccessError(f"{self.uri}: not a regular file")
            f = open(fd, "rb", buffering=0, closefd=True)  # closed by __exit__
        except BaseException:
            os.close(fd)
            raise
        self._file = f
        # Same content id as pyarrow.fs gives for local files: mtime in ns, then size, of the bytes
        # actually opened.
        return OpenedFile(self.uri, st.st_size, f"{st.st_mtime_ns}:{st.st_size}"), f, f

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class _BeneathOpen(_LocalOpen):
    """:func:`open_beneath`'s file: opened component by component below ``root``."""

    __slots__ = ("root",)

    def __init__(self, root: str, path: str) -> None:
        super().__init__(path)
        self.root = root

    def _open_fd(self) -> int:
        root, path = self.root, self.uri
        prefix = root.rstrip("/") + "/"
        if not path.startswith(prefix):
            raise FileAccessError(f"{path}: not inside {root}")
        parts = path[len(prefix) :].split("/")
        try:
            fd = os.open(root, _DIR_FLAGS)
        except OSError as e:
            raise _access_error(path, e) from None
        try:
            for name in parts[:-1]:
                parent = fd
                fd = -1
                try:
                    fd = os.open(name, _DIR_FLAGS | _NOFOLLOW, dir_fd=parent)
                finally:
                    os.close(parent)
            return os.open(parts[-1], _OPEN_FLAGS | _NOFOLLOW, dir_fd=fd)
        except (NotADirectoryError, IsADirectoryError):
            raise FileAccessError(f"{path}: changed while it was being opened (not a plain file path)") from None
        except OSError as e:
            if e.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink
                raise FileAccessError(f"{path}: changed while it was being opened (a symlink)") from None
            raise _access_error(path, e) from None
        finally:
            if fd >= 0:
                os.close(fd)


def open_beneath(root: str, path: str) -> AbstractContextManager[_Opened]:
    """Open the local file ``path`` (absolute, normalised, inside the directory ``root``) without
    ever leaving ``root``: each component below ``root`` is opened relative to its parent's
    descriptor and never through a symlink, so a directory swapped for a symlink between a check
    and this open cannot redirect it. Yields like :func:`open_parquet`.

    A symlink anywhere below ``root`` (the caller has already resolved the path, so one here
    appeared since), a missing component, a non-regular file: :class:`FileAccessError`, whose
    message names ``path`` only, never what a symlink points to. Nothing is opened before the
    block is entered.
    """
    return _BeneathOpen(root, path)


#: Bytes of a file already read, and their offset in it.
InHand = tuple[int, bytes]


def read_metadata(
    f: BinaryIO, size: int, max_footer_bytes: int = DEFAULT_MAX_FOOTER_BYTES, max_schema_elements: int | None = None
) -> tuple[FileMetaData, InHand]:
    """The file's footer, and the bytes read to find it (its last 64 KiB: all of a small file);
    a schema stating more than ``max_schema_elements`` elements is refused before it is decoded."""
    # A remote file's first read is the tail already in hand, whatever its configured size.
    tail = getattr(f, "tail_size", None) or TAIL_READ_SIZE
    try:
        meta, start, data = read_file_tail(f, size, max_footer_bytes, tail_size=tail, max_schema_elements=max_schema_elements)
    except OSError as e:
        raise FileAccessError(f"read failed: {e}") from None
    return meta, (start, data)


def one_line(e: BaseException) -> str:
    """An exception's text on one line: pyarrow's span several, and a per-file error is one line
    of the CLI's stderr."""
    return " ".join(str(e).split())


#: Rows per batch of column data read through pyarrow (one batch is in memory at a time).
BATCH_ROWS = 8192


class OverBudget(Exception):
    """A file's decompression budget is spent: the fact that needed more data is unknown. Never
    leaves the extraction (each place that reads decides what unknown means there)."""


class ReadBudget:
    """Bytes of column data one file's extraction may still decompress
    (``SHREDCAT_MAX_DECOMPRESSED_BYTES``)."""

    __slots__ = ("remaining",)

    def __init__(self, limit: int) -> None:
        self.remaining = limit

    def take(self, n: int) -> None:
        """Spend ``n`` bytes, or raise :class:`OverBudget` (spending nothing) if they are not left."""
        if n > self.remaining:
            raise OverBudget
        self.remaining -= n


class ColumnReader:
    """Reads selected leaf columns of one row group, aligned entry by entry.

    Values of sibling leaves (a ``value`` and its ``typed_value``) come out with the same length
    and order: lists are flattened the same way for both, and struct nulls are pushed down, so
    entry ``i`` of each array describes the same Variant position.
    """

    def __init__(self, f: Any, schema_root: SchemaNode) -> None:
        import pyarrow.parquet as pq

        self._root = schema_root
        # INT96 in milliseconds: any Julian day fits, where nanoseconds overflow past the year
        # 2262 (INT96 is read for its counts only).
        try:
            self._pf: pq.ParquetFile = pq.ParquetFile(f, coerce_int96_timestamp_unit="ms")
        except Exception as e:
            # A stored Arrow schema pyarrow refuses (delta-rs 1.6.6 declares a UUID extension over
            # binary storage) makes the whole file unreadable to it: read the Parquet types alone.
            try:
                self._pf = pq.ParquetFile(_WithoutArrowSchema(f), coerce_int96_timestamp_unit="ms")
            except Exception:
                raise InvalidParquetError(f"pyarrow cannot read the file: {one_line(e)}") from None

    def geo_statistics(self, row_group: int, leaf_index: int) -> tuple[list[float | None], list[int] | None] | None:
        """A leaf's Parquet geospatial statistics in one row group, as pyarrow decodes them
        (shredcat's footer decoder skips them): ``(xmin, xmax, ymin, ymax, zmin, zmax, mmin,
        mmax)`` and the WKB type codes; None when the chunk has none."""
        try:
            c = self._pf.metadata.row_group(row_group).column(leaf_index)
            g = c.geo_statistics if c.is_geo_stats_set else None
        except Exception:
            return None  # unreadable to pyarrow: not proven
        if g is None:
            return None
        return [g.xmin, g.xmax, g.ymin, g.ymax, g.zmin, g.zmax, g.mmin, g.mmax], g.geospatial_types

    def batches(
        self, row_group: int, nodes: Sequence[SchemaNode], budget: ReadBudget, claim: int
    ) -> Iterator[list[pa.Array]]:
        """Arrays for ``nodes`` (leaves, or groups: a group is read through its first leaf and
        comes back as a StructArray whose validity is the group's), a batch of at most
        :data:`BATCH_ROWS` rows at a time, so that memory holds one batch, not a row group.

        ``claim``, the bytes the footer says the columns decompress to, is taken from ``budget``
        first, and whatever the batches hold beyond it (dictionaries decoded) as they come:
        :class:`OverBudget` before anything is read, or between batches."""
        import pyarrow as pa

        names = sorted({".".join(first_leaf(n).path) for n in nodes})
        budget.take(claim)
        try:
            it = self._pf.iter_batches(
                batch_size=BATCH_ROWS, row_groups=[row_group], columns=names, use_threads=False
            )
        except Exception as e:
            raise InvalidParquetError(f"cannot read columns {names} of row group {row_group}: {one_line(e)}") from None
        used = 0
        while True:
            try:
                batch = next(it, None)
            except Exception as e:
                raise InvalidParquetError(f"cannot read columns {names} of row group {row_group}: {one_line(e)}") from None
            if batch is None:
                return
            table = pa.Table.from_batches([batch])
            arrays = [self._navigate(table, n) for n in nodes]
            # Dictionaries decoded here, so that what is charged is what the caller will hold: a
            # few KB of pages can expand to gigabytes of repeated values.
            arrays = [a.dictionary_decode() if isinstance(a, pa.DictionaryArray) else a for a in arrays]
            used += sum(a.nbytes for a in arrays)
            if used > claim:  # more than the footer said: charge what was really decoded
                budget.take(used - claim)
                claim = used
            yield arrays

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



#: The footer's key of the Arrow schema pyarrow stores (Thrift compact: length 12, then the bytes).
_ARROW_SCHEMA_KEY = b"\x0cARROW:schema"


class _WithoutArrowSchema:
    """A read-only view of a Parquet file whose footer's ``ARROW:schema`` key reads as another
    key of the same length, so that pyarrow builds its schema from the Parquet types alone."""

    def __init__(self, f: Any) -> None:
        self._f = f
        size = f.seek(0, 2)
        f.seek(size - 8)
        tail = f.read(8)
        length = int.from_bytes(tail[:4], "little")
        start = max(0, size - 8 - length)
        f.seek(start)
        footer = f.read(size - 8 - start)
        at = footer.find(_ARROW_SCHEMA_KEY)
        #: (offset in the file, replacement byte) of the key's last letter, if any.
        self._patch = None if at < 0 else (start + at + len(_ARROW_SCHEMA_KEY) - 1, b"_")
        self._size = size
        self._pos = 0
        self.closed = False

    def seek(self, offset: int, whence: int = 0) -> int:
        self._pos = offset if whence == 0 else (self._pos + offset if whence == 1 else self._size + offset)
        return self._pos

    def tell(self) -> int:
        return self._pos

    def read(self, n: int = -1) -> bytes:
        self._f.seek(self._pos)
        data = self._f.read(self._size - self._pos if n is None or n < 0 else n)
        if self._patch is not None:
            at, byte = self._patch
            if self._pos <= at < self._pos + len(data):
                i = at - self._pos
                data = data[:i] + byte + data[i + 1 :]
        self._pos += len(data)
        return bytes(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def writable(self) -> bool:
        return False

    def close(self) -> None:
        self.closed = True


def first_leaf(n: SchemaNode) -> SchemaNode:
    """The leaf a node is read through (itself for a leaf)."""
    while not n.is_leaf:
        if not n.children:
            raise InvalidParquetError(f"group {'.'.join(n.path)} has no columns")
        n = n.children[0]
    return n


# --- Page decompression (service.parquet.pages) --------------------------------------------------

#: parquet.thrift ``CompressionCodec`` -> pyarrow codec name. Absent on purpose: "LZ4" ("Hadoop
#: LZ4 framing", deprecated; pyarrow.parquet guesses between framings) and "LZO" (no pyarrow codec).
#: "GZIP" is decoded with the standard library's zlib, which reports the exact output size.
_PYARROW_CODECS = {"SNAPPY": "snappy", "BROTLI": "brotli", "ZSTD": "zstd", "LZ4_RAW": "lz4_raw"}
_codecs: dict[str, Any] = {}


def _snappy_length(data: bytes) -> int | None:
    """The uncompressed length a Snappy block declares: "The stream starts with the uncompressed
    length (up to a maximum of 2^32 - 1), stored as a little-endian varint" (format_description.txt)."""
    n = shift = 0
    for i in range(min(len(data), 5)):
        b = data[i]
        n |= (b & 0x7F) << shift
        if b < 0x80:
            return n
        shift += 7
    return None


def _gunzip(data: bytes, uncompressed_size: int) -> bytes | None:
    import zlib

    # wbits 32 + 15: accept a gzip or a zlib header, as Arrow's GZIP codec does.
    d = zlib.decompressobj(47)
    try:
        # max_length bounds the allocation by what the page header promised (plus one byte, to
        # notice a stream that is longer than promised).
        out = d.decompress(data, uncompressed_size + 1)
    except zlib.error:
        return None
    if len(out) != uncompressed_size or not d.eof or d.unused_data:
        return None
    return out


def decompress(codec: str, data: bytes, uncompressed_size: int) -> bytes | None:
    """Decompress one page body compressed with parquet ``codec``.

    ``None`` when the codec is not supported here (LZ4, LZO, unknown), the data is corrupt, or it
    does not decompress to exactly ``uncompressed_size`` bytes. Not for 'UNCOMPRESSED'.
    """
    if uncompressed_size < 0:
        return None
    if codec == "GZIP":
        return _gunzip(data, uncompressed_size)
    name = _PYARROW_CODECS.get(codec)
    if name is None:
        return None
    c = _codecs.get(name)
    if c is None:
        import pyarrow as pa

        try:
            c = pa.Codec(name)
        except Exception:  # not built into this pyarrow
            return None
        _codecs[name] = c
    if name == "snappy" and _snappy_length(data) != uncompressed_size:
        # Snappy decodes to exactly its declared length or fails, but pyarrow returns a buffer of
        # the size asked for: check the declaration first.
        return None
    try:
        out: bytes = c.decompress(data, decompressed_size=uncompressed_size, asbytes=True)
    except Exception:  # ArrowInvalid / OSError: corrupt data or a buffer too small
        return None
    if name in ("brotli", "lz4_raw") and uncompressed_size > 0:
        # pyarrow does not say how many bytes these wrote, only whether they fit: the output is
        # exact iff it does not also fit one byte shorter. (ZSTD checks the size itself.)
        try:
            c.decompress(data, decompressed_size=uncompressed_size - 1, asbytes=True)
        except Exception:
            return out
        return None
    return out
