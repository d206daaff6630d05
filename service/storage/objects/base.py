"""The object-store interface: what every store (S3, Azure Blob, GCS, ...) implements.

An extractor needs three things of a store, each in as few round trips as the store allows:

* :meth:`ObjectStore.list`: one "directory" level of a prefix (the store's own paginated listing
  with delimiter ``/``); Spark's rules are applied by :mod:`service.storage.listing`, never here.
* :meth:`ObjectStore.read_tail`: the last ``n`` bytes of an object, its size and a content id, in
  **one** request (``Range: bytes=-n``; the size comes from ``Content-Range``, the content id from
  the ETag / generation the same response carries). No HEAD.
* :meth:`ObjectStore.read_ranges`: byte ranges of the same object (the float page scan, a footer
  larger than the tail), near ranges coalesced into one request, guarded by the version the tail
  read saw so that a rewritten object is noticed rather than mixed.

Every failure is one of the :class:`~service.errors.FileAccessError` subclasses below, raised by
the store's own module, which is the only place that sees its HTTP client's exceptions.
Implementations must be safe to call from many threads at once (one instance per process and
configuration is shared by the extraction threads) and bound the requests they have in flight.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from service.errors import (
    ObjectAccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectStoreUnavailableError,
    ObjectTruncatedError,
)

__all__ = [
    "ByteRange",
    "ObjectAccessDeniedError",
    "ObjectChangedError",
    "ObjectEntry",
    "ObjectInfo",
    "ObjectNotFoundError",
    "ObjectStore",
    "ObjectStoreError",
    "ObjectStoreUnavailableError",
    "ObjectTail",
    "ObjectTruncatedError",
    "coalesce",
    "slice_ranges",
]


@dataclass(frozen=True, slots=True)
class ObjectInfo:
    """What a store says about one object."""

    uri: str
    size: int
    #: Changes whenever the bytes under the name change: ``etag:size`` (S3, Azure) or
    #: ``generation:size`` (GCS); None when the store gives neither.
    content_id: str | None
    #: The token a later read sends as a precondition (``If-Match``: the ETag; GCS: the
    #: generation), so that bytes of two different versions are never mixed. None: no check.
    version: str | None = None


@dataclass(frozen=True, slots=True)
class ObjectTail:
    """The end of an object as one request returned it."""

    info: ObjectInfo
    #: The last ``len(data)`` bytes of the object: ``min(n, size)`` of them.
    data: bytes

    @property
    def start(self) -> int:
        """Offset of ``data[0]`` in the object."""
        return self.info.size - len(self.data)


@dataclass(frozen=True, slots=True)
class ObjectEntry:
    """One entry of a listing level: an object, or a "directory" (a common prefix, ending in ``/``)."""

    uri: str
    is_dir: bool
    #: Object size in bytes (None for a directory).
    size: int | None = None

    @property
    def name(self) -> str:
        """The last component, without a trailing ``/``."""
        return self.uri.rstrip("/").rsplit("/", 1)[-1]


#: ``(offset, length)`` of a byte range.
ByteRange = tuple[int, int]


@runtime_checkable
class ObjectStore(Protocol):
    """One object store, addressed by full URIs of its schemes (``s3://bucket/key``)."""

    #: URI schemes this store answers (``("s3", "s3a")``).
    schemes: tuple[str, ...]

    def head(self, uri: str) -> ObjectInfo | None:
        """The object named exactly ``uri``, or None when there is none (a prefix is not an
        object). Used to tell a file from a prefix when a listing root is given without ``/``."""
        ...

    def list(self, prefix: str, limit: int | None = None) -> Iterator[ObjectEntry]:
        """The entries directly below ``prefix`` (a URI ending in ``/``): objects and common
        prefixes of delimiter ``/``, in the store's order, at most ``limit`` of them. The S3, GCS
        and Azure stores read the level whole first (obstore's ``list_with_delimiter`` follows
        every page), so a limit bounds what is returned, not what is listed. A prefix with
        nothing below it lists nothing (no error). A failure part-way raises, never truncates."""
        ...

    def read_tail(self, uri: str, n: int) -> ObjectTail:
        """The last ``n`` (> 0) bytes of the object, its size and content id, in one request.
        An empty object gives ``data == b""``. A body shorter than the response promised:
        :class:`ObjectTruncatedError`."""
        ...

    def read_ranges(self, uri: str, ranges: Sequence[ByteRange], *, version: str | None = None) -> builtins.list[bytes]:
        """The bytes of each ``(offset, length)`` range, in the order given. Near ranges are
        fetched together (see :func:`coalesce`). ``version`` (from :attr:`ObjectInfo.version`)
        makes the read fail with :class:`ObjectChangedError` if the object was rewritten. A range
        past the end of the object, or a short body: :class:`ObjectTruncatedError`."""
        ...

    def close(self) -> None:
        """Release connections (the store must not be used afterwards)."""
        ...


#: Ranges closer than this are fetched as one: a round trip costs far more than a few KiB.
COALESCE_GAP = 256 * 1024
#: ... but one request never spans more than this (a huge gap is not worth its bytes).
COALESCE_MAX = 16 * 1024 * 1024


def coalesce(ranges: Sequence[ByteRange], gap: int = COALESCE_GAP, max_span: int = COALESCE_MAX) -> list[ByteRange]:
    """The requests to make for ``ranges``: sorted, overlapping or near ranges (a gap of at most
    ``gap`` bytes) merged while the merged span stays within ``max_span`` (a single range longer
    than that is kept whole). Empty ranges are dropped."""
    out: list[list[int]] = []
    for off, length in sorted(r for r in ranges if r[1] > 0):
        end = off + length
        if out and off - out[-1][1] <= gap and max(end, out[-1][1]) - out[-1][0] <= max_span:
            out[-1][1] = max(out[-1][1], end)
        else:
            out.append([off, end])
    return [(a, b - a) for a, b in out]


def slice_ranges(ranges: Sequence[ByteRange], fetched: dict[ByteRange, bytes]) -> list[bytes]:
    """Each of ``ranges`` cut out of the coalesced requests ``fetched`` (request -> its bytes)."""
    out = []
    for off, length in ranges:
        for (start, n), data in fetched.items():
            if start <= off and off + length <= start + n:
                out.append(data[off - start : off - start + length])
                break
        else:
            if length == 0:
                out.append(b"")
                continue
            raise AssertionError(f"range {off}+{length} not fetched")  # pragma: no cover - coalesce covers all
    return out
