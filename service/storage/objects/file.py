"""An object as a seekable, read-only binary file, served from the bytes already fetched.

The footer reader, the float page scanner and pyarrow's ParquetFile all read files through
``seek``/``read``; for a remote object those reads are answered from the tail its first request
brought (most files: nothing else is ever needed) and from ranges fetched ahead with
:meth:`ObjectFile.prefetch` (the page scan's chunks, coalesced into few requests). Anything else is
fetched on demand, one ranged GET per read, guarded by the version the tail read saw.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from service.storage.objects.base import ByteRange, ObjectInfo, ObjectStore, ObjectTail


class ObjectFile(io.RawIOBase):
    """One remote object opened for reading (not thread-safe: one extraction at a time)."""

    def __init__(self, store: ObjectStore, tail: ObjectTail) -> None:
        super().__init__()
        self.store = store
        self.info: ObjectInfo = tail.info
        self.size = tail.info.size
        #: Fetched spans ``(offset, bytes)``; the tail first.
        self._spans: list[tuple[int, bytes]] = [(tail.start, tail.data)]
        self._pos = 0

    @property
    def tail_size(self) -> int:
        """Bytes the first request brought."""
        return len(self._spans[0][1])

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self.size + offset
        else:
            raise ValueError(f"invalid whence {whence}")
        if pos < 0:
            raise ValueError("negative seek position")
        self._pos = pos
        return pos

    def _cached(self, off: int, n: int) -> bytes | None:
        for start, data in self._spans:
            if start <= off and off + n <= start + len(data):
                return data[off - start : off - start + n]
        return None

    def prefetch(self, ranges: Sequence[ByteRange]) -> None:
        """Fetch the ranges not already in hand (clipped to the object), coalesced by the store."""
        missing = []
        for off, n in ranges:
            n = min(n, self.size - off)
            if off >= 0 and n > 0 and self._cached(off, n) is None:
                missing.append((off, n))
        if not missing:
            return
        from service.storage.objects.base import coalesce

        spans = coalesce(missing)
        for (off, _), data in zip(spans, self.store.read_ranges(self.info.uri, spans, version=self.info.version), strict=True):
            self._spans.append((off, data))

    def pread(self, off: int, n: int) -> bytes:
        """``n`` bytes at ``off`` (fewer at the end of the object), without moving the position."""
        n = max(0, min(n, self.size - off))
        if n == 0:
            return b""
        data = self._cached(off, n)
        if data is None:
            (data,) = self.store.read_ranges(self.info.uri, [(off, n)], version=self.info.version)
            self._spans.append((off, data))
        return data

    def read(self, size: int | None = -1) -> bytes:
        n = self.size - self._pos if size is None or size < 0 else size
        data = self.pread(self._pos, n)
        self._pos += len(data)
        return data

    def readall(self) -> bytes:
        return self.read(-1)

    # override: RawIOBase takes any writable buffer; pyarrow and io.BufferedReader pass these two.
    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]  # narrower buffer (above)
        data = self.read(len(b))
        b[: len(data)] = data
        return len(data)
