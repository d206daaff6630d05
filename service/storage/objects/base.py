"""The object-store interface: what every store (S3, Azure Blob, GCS, ...) implements.

An extractor needs three things of a store, each in as few round trips as the store allows:

* :meth:`ObjectStore.list`: every object below a prefix, at any depth, streamed page by page (the
  store's own flat listing, no delimiter), with the subtrees of directories the caller prunes
  jumped over (:func:`past_dir`); Spark's rules are applied by :mod:`service.storage.listing`,
  never here. Every object the store returned counts against the caller's bound
  (:class:`ListingBound`), so a prefix of millions of objects costs at most that many.
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
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from service.errors import (
    LimitExceededError,
    ObjectAccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectStoreUnavailableError,
    ObjectTruncatedError,
)

__all__ = [
    "ByteRange",
    "ListingBound",
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
    "Prune",
    "coalesce",
    "first_pruned_dir",
    "past_dir",
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
    """One object a listing returned."""

    uri: str
    #: Object size in bytes.
    size: int

    @property
    def name(self) -> str:
        """The last component of the object's name."""
        return self.uri.rsplit("/", 1)[-1]


#: Names of "directories" a listing does not descend into (Spark's hidden names).
Prune = Callable[[str], bool]


class ListingBound:
    """At most ``most`` objects listed, whatever they are: one counter for a whole walk, shared by
    every store call it makes. Passing it raises :class:`~service.errors.LimitExceededError`
    (413) naming ``what`` bounds it, so a flat prefix of millions of objects (or of ``_temporary``
    debris) stops after ``most`` of them instead of being read whole."""

    def __init__(self, most: int, what: str) -> None:
        self.most = most
        self.what = what
        self.listed = 0

    def count(self, prefix: str, n: int = 1) -> None:
        self.listed += n
        if self.listed > self.most:
            raise LimitExceededError(
                f"{prefix}: more than {self.most} objects listed under it ({self.what}): name a narrower prefix",
                details={"path": prefix, "limit": self.most, "count": self.listed},
            )


def first_pruned_dir(rel: str, prune: Prune | None) -> str | None:
    """The first directory of the relative object name ``rel`` (``a=1/_temporary/0/x``) whose
    name ``prune`` accepts, as a relative path without its ``/`` (``a=1/_temporary``); None when
    no directory of it is pruned (the object's own name is not looked at)."""
    if prune is None:
        return None
    parts = rel.split("/")
    for i, part in enumerate(parts[:-1]):
        if prune(part):
            return "/".join(parts[: i + 1])
    return None


def past_dir(key: str) -> str:
    """The listing offset that jumps over every key below the directory ``key`` (no trailing
    ``/``): ``key + "0"``, as ``"0"`` is the character right after ``"/"`` (in code points as in
    UTF-8 bytes, the stores' order). Stores take an offset exclusively (S3, GCS: ``start-after``)
    or inclusively (Azure: ``startFrom``): either way the only other key passed over is the object
    named exactly ``key + "0"``, which for a pruned Spark name is never a ``.parquet`` file."""
    return key + "0"


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

    def list(self, prefix: str, *, prune: Prune | None = None, bound: ListingBound | None = None) -> Generator[ObjectEntry, None, None]:
        """Every object below ``prefix`` (a URI ending in ``/``) at any depth, in the store's
        order, streamed: the store is asked for the next page only when the caller wants more, so
        a caller that stops early lists no further. Objects below a directory whose name
        ``prune`` accepts are not returned, and the S3, GCS and Azure stores jump over such a
        subtree with a listing offset (:func:`past_dir`) instead of paging through it. Each
        object the store sent counts against ``bound`` (returned or not). A prefix with nothing
        below it lists nothing (no error); a bucket (container) that does not exist is
        ObjectNotFoundError. A failure part-way raises, never truncates."""
        ...

    def read_tail(self, uri: str, n: int) -> ObjectTail:
        """The last ``n`` (> 0) bytes of the object, its size and content id, in one request.
        An empty object gives ``data == b""``. A body shorter than the response promised:
        :class:`ObjectTruncatedError`. No such object: :class:`ObjectNotFoundError`, naming the
        bucket (container) instead when that is what does not exist."""
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
