"""Any filesystem pyarrow knows (``pyarrow.fs.FileSystem.from_uri``), for schemes no native store
serves: the pre-native way of reading remote files, kept so that such URIs keep working.

It costs more round trips than a native store: a tail read is a metadata request (size, mtime)
plus a ranged read, and the content id is ``mtime_ns:size``. pyarrow's own exceptions never leave
this module.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Generator, Mapping, Sequence
from typing import Any

from service.errors import (
    ObjectAccessDeniedError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectStoreUnavailableError,
    ObjectTruncatedError,
)
from service.storage.objects import StoreOptions
from service.storage.objects.base import (
    ByteRange,
    ListingBound,
    ObjectEntry,
    ObjectInfo,
    ObjectTail,
    Prune,
    coalesce,
    slice_ranges,
)

#: pyarrow reads the AWS/GCS/Azure environment itself, when a filesystem is made.
ENV_VARS = (
    "AWS_ENDPOINT_URL",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
)


def open_store(env: Mapping[str, str], options: StoreOptions) -> ArrowStore:
    return ArrowStore()


def _translate(uri: str, e: Exception) -> ObjectStoreError:
    text = str(e)
    d = {"path": uri}
    if isinstance(e, FileNotFoundError) or "NOT_FOUND" in text or "does not exist" in text:
        return ObjectNotFoundError(f"{uri}: no such file", details=d)
    if isinstance(e, PermissionError) or "ACCESS_DENIED" in text or "AccessDenied" in text or "403" in text:
        return ObjectAccessDeniedError(f"{uri}: access denied ({text})", details=d)
    if "NETWORK_CONNECTION" in text or "Couldn't connect" in text or "timed out" in text.lower():
        return ObjectStoreUnavailableError(f"{uri}: the object store cannot be reached ({text})", details=d)
    return ObjectStoreError(f"{uri}: {text}", details=d)


class ArrowStore:
    schemes: tuple[str, ...] = ()

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._filesystems: dict[str, Any] = {}

    def _fs(self, uri: str) -> tuple[Any, str]:
        """The filesystem of ``uri``'s authority (made once, then reused) and the path in it."""
        from pyarrow import fs as pafs

        scheme, _, rest = uri.partition("://")
        root = scheme + "://" + rest.split("/", 1)[0]
        try:
            filesystem, path = pafs.FileSystem.from_uri(uri)
        except Exception as e:  # ArrowInvalid / OSError / ValueError
            raise _translate(uri, e) from None
        with self._lock:
            return self._filesystems.setdefault(root, filesystem), path

    def _stat(self, uri: str) -> Any:
        filesystem, path = self._fs(uri)
        try:
            return filesystem.get_file_info(path)
        except Exception as e:
            raise _translate(uri, e) from None

    def _info(self, uri: str, st: Any) -> ObjectInfo:
        mtime = st.mtime_ns
        return ObjectInfo(uri=uri, size=int(st.size), content_id=f"{mtime}:{st.size}" if mtime is not None else None)

    def head(self, uri: str) -> ObjectInfo | None:
        from pyarrow import fs as pafs

        st = self._stat(uri)
        return self._info(uri, st) if st.type == pafs.FileType.File else None

    def list(self, prefix: str, *, prune: Prune | None = None, bound: ListingBound | None = None) -> Generator[ObjectEntry, None, None]:
        """Directory by directory (pyarrow reads each level whole: the bound counts the entries
        after each level is read), pruned directories never read."""
        from pyarrow import fs as pafs

        filesystem, path = self._fs(prefix)
        scheme = prefix.split("://", 1)[0]
        stack = [path.rstrip("/")]
        while stack:
            directory = stack.pop()
            try:
                infos = filesystem.get_file_info(pafs.FileSelector(directory, recursive=False, allow_not_found=True))
            except Exception as e:
                raise _translate(prefix, e) from None
            if bound is not None:
                bound.count(prefix, len(infos))
            for info in infos:
                if info.type == pafs.FileType.Directory:
                    if prune is None or not prune(info.base_name):
                        stack.append(info.path)
                elif info.type == pafs.FileType.File:
                    yield ObjectEntry(uri=f"{scheme}://{info.path}", size=int(info.size))

    def read_tail(self, uri: str, n: int) -> ObjectTail:
        from pyarrow import fs as pafs

        st = self._stat(uri)
        if st.type == pafs.FileType.NotFound:
            raise ObjectNotFoundError(f"{uri}: no such file", details={"path": uri})
        if st.type != pafs.FileType.File:
            raise ObjectStoreError(f"{uri}: not a regular file", details={"path": uri})
        info = self._info(uri, st)
        (data,) = self._read(uri, [(max(0, info.size - n), min(n, info.size))])
        return ObjectTail(info, data)

    def _read(self, uri: str, ranges: Sequence[ByteRange]) -> builtins.list[bytes]:
        filesystem, path = self._fs(uri)
        out = []
        try:
            with filesystem.open_input_file(path) as f:
                for off, length in ranges:
                    data = f.read_at(length, off) if length else b""
                    if len(data) != length:
                        raise ObjectTruncatedError(
                            f"{uri}: bytes {off}-{off + length - 1} asked, {len(data)} bytes came", details={"path": uri}
                        )
                    out.append(bytes(data))
        except ObjectStoreError:
            raise
        except Exception as e:
            raise _translate(uri, e) from None
        return out

    def read_ranges(self, uri: str, ranges: Sequence[ByteRange], *, version: str | None = None) -> builtins.list[bytes]:
        spans = coalesce(ranges)
        return slice_ranges(ranges, dict(zip(spans, self._read(uri, spans), strict=True)))

    def close(self) -> None:
        with self._lock:
            self._filesystems.clear()
