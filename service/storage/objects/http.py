"""What the HTTP object stores (S3, Azure Blob, GCS) share: one pooled httpx client, retries, the
translation of transport failures, ``Content-Range`` parsing, and the sizes a listing has seen.

The client's pool keeps at most ``options.concurrency`` connections, which bounds the requests a
store has in flight across all threads (a thread beyond it waits for a connection), and reuses
them. Idempotent requests (everything here is a GET or a HEAD) are retried twice on a connection
failure or an HTTP 429/5xx before the store is called unavailable.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from service.errors import (
    ObjectAccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectStoreUnavailableError,
    ObjectTruncatedError,
)
from service.storage.objects import StoreOptions
from service.storage.objects.base import ByteRange, coalesce, slice_ranges
from service.values.text import ascii_digits

#: Attempts of one request (the first and two retries) and the pauses between them.
ATTEMPTS = 3
BACKOFF = (0.1, 0.4)
RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes


def status_error(
    uri: str, status: int, *, detail: str = "", denied: str = "", missing: str = "file", what: str = ""
) -> ObjectStoreError:
    """The typed error of a store's failed answer, the same for S3, Azure Blob and GCS: 404 not
    found (``no such {missing}``: a file, or the store's bucket or container), 401/403 denied
    (``denied``: what the store said), 412 changed while read (an ``If-Match`` failed), 416 the
    range ``what`` past the end; anything else the status with the store's ``detail``."""
    d = {"path": uri, "status": status}
    if status == 404:
        return ObjectNotFoundError(f"{uri}: no such {missing}", details=d)
    if status in (401, 403):
        return ObjectAccessDeniedError(f"{uri}: access denied{denied}", details=d)
    if status == 412:
        return ObjectChangedError(f"{uri}: the object changed while it was being read", details=d)
    if status == 416:
        return ObjectTruncatedError(f"{uri}: {what or 'range'} lies past the end of the object", details=d)
    return ObjectStoreError(f"{uri}: the object store answered HTTP {status}{detail}", details=d)


class HttpSender:
    """One store's connections. ``sign(method, url, headers)`` is called before every attempt (a
    signature carries the time), and may change ``headers``."""

    def __init__(self, options: StoreOptions) -> None:
        import httpx

        n = options.concurrency
        # pool=None: waiting for a free connection is the concurrency bound, not a failure.
        self._client = httpx.Client(
            limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
            timeout=httpx.Timeout(options.timeout, pool=None),
            follow_redirects=False,
        )

    def send(
        self,
        method: str,
        url: str,
        uri: str,
        headers: Mapping[str, str] | None = None,
        sign: Callable[[str, str, dict[str, str]], None] | None = None,
        content: bytes | None = None,
        *,
        attempts: int = ATTEMPTS,
        timeout: float | None = None,
    ) -> Response:
        """The answer to one request (any status), the whole body read; transport failures and
        repeated 429/5xx raise :class:`ObjectStoreUnavailableError` naming ``uri``, a body cut
        short :class:`ObjectTruncatedError`. ``timeout``: this request's own (a probe's), else
        the store's."""
        import httpx

        last: Exception | None = None
        status = 0
        extra = {} if timeout is None else {"timeout": httpx.Timeout(timeout, pool=None)}
        for attempt in range(attempts):
            if attempt:
                time.sleep(BACKOFF[attempt - 1])
            h = dict(headers or {})
            if sign is not None:
                sign(method, url, h)
            try:
                r = self._client.request(method, url, headers=h, content=content, **extra)
            except httpx.TransportError as e:
                last = e
                continue
            status = r.status_code
            if status in RETRY_STATUS:
                last = None
                continue
            return Response(status, r.headers, r.content)
        if last is not None:
            text = str(last) or type(last).__name__
            if isinstance(last, httpx.RemoteProtocolError) and "complete message body" in text:
                raise ObjectTruncatedError(f"{uri}: the store's answer was cut short ({text})", details={"path": uri})
            raise ObjectStoreUnavailableError(
                f"{uri}: the object store cannot be reached ({type(last).__name__}: {text})", details={"path": uri}
            )
        raise ObjectStoreUnavailableError(f"{uri}: the object store keeps failing (HTTP {status})", details={"path": uri})

    def close(self) -> None:
        self._client.close()


def read_coalesced(
    uri: str,
    ranges: Sequence[ByteRange],
    fetch: Callable[[int, int], Response],
    fail: Callable[[Response, str], ObjectStoreError],
) -> list[bytes]:
    """``read_ranges`` for every HTTP store: ``ranges`` coalesced, each span asked of
    ``fetch(offset, length)``. A 206 carries the span; a 200 carrying the whole object (a server
    that ignores ``Range``) is cut; any other answer is ``fail(answer, "bytes a-b")``; a body of
    another length is an :class:`ObjectTruncatedError`."""
    fetched: dict[ByteRange, bytes] = {}
    for off, length in coalesce(ranges):
        what = f"bytes {off}-{off + length - 1}"
        r = fetch(off, length)
        body = r.body
        if r.status == 200 and len(body) >= off + length:
            body = body[off : off + length]
        elif r.status != 206:
            raise fail(r, what)
        if len(body) != length:
            raise ObjectTruncatedError(f"{uri}: {what} asked, {len(body)} bytes came", details={"path": uri})
        fetched[(off, length)] = body
    return slice_ranges(ranges, fetched)


def content_range_size(value: str | None) -> int | None:
    """The complete length of ``Content-Range: bytes a-b/size`` (or ``bytes */size``)."""
    if not value or "/" not in value:
        return None
    total = value.rsplit("/", 1)[1].strip()
    return int(total) if ascii_digits(total) else None


@dataclass(frozen=True, slots=True)
class Seen:
    """An object as a listing just described it."""

    size: int
    #: The version the listing gave (Azure: ETag; GCS: generation), sent as a precondition.
    version: str | None


class ListingHints:
    """Sizes and versions of objects a listing returned, so that reading such an object's tail
    takes one request with an explicit range (``bytes=size-n-size-1``, guarded by the version)
    where the store has no suffix range (Azure) or ignores it (emulators). Each hint is used
    once; the oldest are dropped beyond ``capacity`` (a listing larger than that costs a
    metadata request per dropped file, never a wrong answer: a stale hint fails its precondition)."""

    def __init__(self, capacity: int = 200_000) -> None:
        self._lock = threading.Lock()
        self._seen: OrderedDict[str, Seen] = OrderedDict()
        self._capacity = capacity

    def add(self, uri: str, seen: Seen) -> None:
        with self._lock:
            self._seen[uri] = seen
            self._seen.move_to_end(uri)
            while len(self._seen) > self._capacity:
                self._seen.popitem(last=False)

    def take(self, uri: str) -> Seen | None:
        with self._lock:
            return self._seen.pop(uri, None)


def tail_range(size: int, n: int) -> tuple[int, int]:
    """``(first, last)`` byte of the last ``n`` bytes of an object of ``size`` (> 0) bytes."""
    return max(0, size - n), size - 1
