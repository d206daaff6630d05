"""S3, GCS and Azure Blob on Apache Arrow's ``object_store`` (PyPI ``obstore``): the one module
that calls obstore and sees its exceptions.

Each cloud's module (:mod:`~service.storage.objects.s3`, :mod:`~service.storage.objects.gcs`,
:mod:`~service.storage.objects.azure`) only turns its environment into obstore's configuration
and splits its URIs; :class:`RemoteStore` implements the
:class:`~service.storage.objects.base.ObjectStore` interface for all three. obstore signs the
requests, runs the credential chains, renews credentials, retries and pools connections.

What is kept here because obstore does not do it:

* **Azure's missing suffix range** (Blob Storage has none, and obstore refuses to fake one): the
  last ``n`` bytes of a listed blob take one GET of the explicit range of the size the listing
  gave, guarded by the listed ETag (:class:`ListingHints`); a blob named directly takes a HEAD
  and a GET.
* **Bounded bytes**: a body that is not in the identity encoding, or longer or shorter than the
  range asked for, is refused with a per-file error (obstore neither decodes nor checks it).
* **Bounded listing**: a prefix is listed with obstore's flat, streamed ``list`` (its
  ``list_with_delimiter`` reads every page of a level into memory before returning), a pruned
  directory's subtree jumped over with a listing offset, every object counted against the
  caller's :class:`~service.storage.objects.base.ListingBound`.
* **Errors without secrets**: obstore's messages carry the request URL (an Azure SAS token's
  ``sig=``, a presigned query) and the store's answer. The typed errors built here name the
  file, the HTTP status and the store's error code only (:func:`translate`).
* **What is missing**: a read that finds no object says whether the file, its bucket (Azure: its
  container, or the storage account) is missing, ``details["missing"]``. The object's own 404
  may not tell (an Azure HEAD has no body; a GCS emulator answers NoSuchKey for a missing
  bucket): a listing under the file's name, made only once the read failed, does.
"""

from __future__ import annotations

import builtins
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from service.errors import (
    FileAccessError,
    ObjectAccessDeniedError,
    ObjectChangedError,
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
    first_pruned_dir,
    past_dir,
    slice_ranges,
)

if TYPE_CHECKING:
    from obstore import GetOptions  # a type only: not importable at runtime

#: Retries of one request after the first attempt (connection failures, 5xx, 429), as before.
RETRIES = 2
#: Objects handed from obstore's listing stream to Python at a time (not the page size: each
#: store's own, 1,000 on S3 and GCS's XML API, 5,000 on Azure, is what one request returns).
LIST_CHUNK = 1000

_STATUS = re.compile(r"status code: (\d{3})")
_CODE = re.compile(r"<Code>([A-Za-z0-9._-]{1,64})</Code>")


#: Error codes of refused credentials that come with another status than 401/403 (S3: 400).
_DENIED = frozenset({"InvalidToken", "ExpiredToken", "InvalidAccessKeyId", "SignatureDoesNotMatch", "TokenRefreshRequired"})


def _status(text: str) -> int | None:
    m = _STATUS.search(text)
    return int(m.group(1)) if m else None


#: What a 404's error code says is missing (Azure: a container-level request of an account that
#: does not exist answers ResourceNotFound; a missing container is ContainerNotFound).
_MISSING = {"NoSuchBucket": "bucket", "ContainerNotFound": "container", "ResourceNotFound": "storage account"}


def not_found(uri: str, missing: str = "file", **details: Any) -> ObjectNotFoundError:
    """``<uri>: no such <missing>``, what is missing also in ``details["missing"]``."""
    return ObjectNotFoundError(f"{uri}: no such {missing}", details={"path": uri, "missing": missing, **details})


def translate(uri: str, e: BaseException, what: str = "", *, missing: str = "file") -> ObjectStoreError:
    """The typed error of an obstore failure. Only the status and the store's error code are
    kept from obstore's text: it holds the request URL, which may carry a SAS signature.
    ``missing``: what a 404 without the store's own code for it says is missing."""
    from obstore import exceptions as ox

    text = str(e)
    status = _status(text)
    m = _CODE.search(text)
    code = m.group(1) if m else ""
    d: dict[str, Any] = {"path": uri}
    if status is not None:
        d["status"] = status
    said = f" ({code})" if code else f" (HTTP {status})" if status else ""
    if isinstance(e, FileNotFoundError) or status == 404:
        return not_found(uri, _MISSING.get(code, missing), **{k: v for k, v in d.items() if k != "path"})
    if isinstance(e, ox.PermissionDeniedError | ox.UnauthenticatedError) or status in (401, 403) or code in _DENIED:
        return ObjectAccessDeniedError(f"{uri}: access denied{said}", details=d)
    if isinstance(e, ox.PreconditionError) or status == 412:
        return ObjectChangedError(f"{uri}: the object changed while it was being read", details=d)
    if status == 416:
        return ObjectTruncatedError(f"{uri}: {what or 'range'} lies past the end of the object", details=d)
    if status is not None and (status >= 500 or status == 429):
        return ObjectStoreUnavailableError(f"{uri}: the object store keeps failing (HTTP {status})", details=d)
    if status in (301, 307) or code in ("PermanentRedirect", "AuthorizationHeaderMalformed"):
        # S3 answers a request sent to another region than the bucket's so.
        return ObjectStoreError(
            f"{uri}: the bucket is in another region than the one configured{said}: set AWS_REGION to the bucket's",
            details=d,
        )
    if status is not None:
        return ObjectStoreError(f"{uri}: the object store answered HTTP {status}{said}", details=d)
    if "non-partial response" in text:
        # A store that ignores Range: obstore drops the answer unread.
        return ObjectStoreError(f"{uri}: the store ignored the range asked ({what or 'a range'}) and sent the whole object", details=d)
    if "decoding response body" in text or "error reading a body" in text:
        return ObjectTruncatedError(f"{uri}: the store's answer was cut short", details=d)
    if isinstance(e, ox.NotSupportedError):
        return ObjectStoreError(f"{uri}: not supported by the object store", details=d)
    # No HTTP answer at all: refused or cut connections, timeouts, DNS.
    return ObjectStoreUnavailableError(f"{uri}: the object store cannot be reached ({type(e).__name__})", details=d)


def config_error(what: str, e: BaseException, secrets: Sequence[str] = ()) -> FileAccessError:
    """A store that cannot be made from its configuration: obstore's reason, any secret in it
    replaced by ``***``."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "***")
    return FileAccessError(f"{what} is not configured correctly: {text}")


@dataclass(frozen=True, slots=True)
class Seen:
    """An object as a listing just described it."""

    size: int
    etag: str | None


class ListingHints:
    """Sizes and ETags of blobs a listing returned, so that reading a listed blob's tail on a store
    without suffix ranges (Azure) takes one request (an explicit range guarded by ``If-Match``).
    Each hint is used once; the oldest are dropped beyond ``capacity`` (a dropped hint costs a HEAD,
    a stale one fails its precondition: never a wrong answer)."""

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


def quoted(etag: str | None) -> str | None:
    """An ETag as ``If-Match`` carries it (Azure's listing gives it without the quotes)."""
    if not etag:
        return None
    return etag if etag.startswith(('"', 'W/"')) else f'"{etag}"'


def client_options(options: StoreOptions, endpoint: str | None) -> dict[str, Any]:
    """obstore's HTTP client settings of ``options``; plain HTTP only for an ``http://`` endpoint
    the environment names (an emulator, a MinIO on the LAN)."""
    out: dict[str, Any] = {
        "timeout": timedelta(seconds=options.timeout),
        "connect_timeout": timedelta(seconds=min(options.timeout, 10.0)),
        "pool_max_idle_per_host": str(options.concurrency),
    }
    if endpoint and endpoint.lower().startswith("http://"):
        out["allow_http"] = True
    return out


def retry_config(options: StoreOptions) -> dict[str, Any]:
    return {
        "max_retries": RETRIES,
        "retry_timeout": timedelta(seconds=options.timeout),
        "backoff": {"init_backoff": timedelta(milliseconds=100), "max_backoff": timedelta(seconds=2), "base": 4},
    }


def store_settings(config: dict[str, str], options: StoreOptions, endpoint_variable: str) -> dict[str, Any]:
    """The keyword arguments every obstore store takes: the environment's ``config``, the HTTP
    client settings (``endpoint_variable``: the config key naming a custom endpoint) and retries.
    A plain dict, to be spread into the constructor: obstore types ``config`` as a TypedDict of
    each cloud's known keys, while these are names taken from the environment (obstore itself
    rejects one it does not know)."""
    return {
        "config": config,
        "client_options": client_options(options, config.get(endpoint_variable)),
        "retry_config": retry_config(options),
    }


#: ``(scheme, bucket, key)`` of a URI.
Split = Callable[[str], tuple[str, str, str]]


class RemoteStore:
    """One cloud's store: an obstore store per bucket (or container), made on first use."""

    def __init__(
        self,
        schemes: tuple[str, ...],
        split: Split,
        make: Callable[[str], Any],
        *,
        suffix_ranges: bool = True,
        generation_ids: bool = False,
        bucket: str = "bucket",
    ) -> None:
        self.schemes = schemes
        #: The store's word for a bucket (Azure: container).
        self.bucket = bucket
        self._generation_ids = generation_ids
        self._split = split
        self._make = make
        self._suffix_ranges = suffix_ranges
        self._lock = threading.Lock()
        self._buckets: dict[str, Any] = {}
        self._hints = ListingHints()

    def _store(self, bucket: str) -> Any:
        with self._lock:
            store = self._buckets.get(bucket)
            if store is None:
                store = self._buckets[bucket] = self._make(bucket)
            return store

    def _info(self, uri: str, meta: Mapping[str, Any], etag: str | None = None) -> ObjectInfo:
        """What ``meta`` (obstore's ObjectMeta) says of the object. Content ids are
        ``etag:<ETag>:<size>``, or for GCS ``generation:<generation>:<size>`` (as before obstore,
        so that files registered then compare equal); the ETag is the precondition token."""
        size = int(meta["size"])
        etag = quoted(meta.get("e_tag") or etag)
        generation = meta.get("version") if self._generation_ids else None
        if generation:
            content_id: str | None = f"generation:{generation}:{size}"
        else:
            content_id = f"etag:{etag.strip(chr(34))}:{size}" if etag else None
        return ObjectInfo(uri=uri, size=size, content_id=content_id, version=etag)

    def _get(self, uri: str, key: str, store: Any, options: GetOptions, what: str, most: int) -> tuple[Any, bytes]:
        """One GET: ``(result, body)``. The body is refused unless in the identity encoding, and
        read as a stream that stops past ``most`` bytes (a server that ignores ``Range`` is never
        read whole: obstore decodes nothing and does not bound the body)."""
        import obstore

        try:
            result = obstore.get(store, key, options=options)
            encoding = str(result.attributes.get("Content-Encoding") or "identity").strip().lower()
            if encoding != "identity":
                raise ObjectStoreError(
                    f"{uri}: the store sent {what} with Content-Encoding {encoding!r}: only identity is read",
                    details={"path": uri, "content_encoding": encoding},
                )
            body = bytearray()
            for chunk in result.stream(min_chunk_size=min(max(most, 1), 8 * 1024 * 1024)):
                body += chunk
                if len(body) > most:
                    raise ObjectStoreError(
                        f"{uri}: the store sent more than the {most} bytes asked ({what})",
                        details={"path": uri, "asked": most},
                    )
            return result, bytes(body)
        except ObjectStoreError:
            raise
        except Exception as e:  # obstore's exceptions, and the builtins it raises
            raise translate(uri, e, what) from None

    # --- the interface ----------------------------------------------------------------------

    def head(self, uri: str) -> ObjectInfo | None:
        import obstore

        _, bucket, key = self._split(uri)
        if not key or key.endswith("/"):
            return None
        store = self._store(bucket)  # its configuration errors are its own, not "unavailable"
        try:
            meta = obstore.head(store, key)
        except FileNotFoundError:
            return None
        except Exception as e:
            err = translate(uri, e)
            if isinstance(err, ObjectNotFoundError):
                return None
            raise err from None
        return self._info(uri, meta)

    def list(self, prefix: str, *, prune: Prune | None = None, bound: ListingBound | None = None) -> Generator[ObjectEntry, None, None]:
        from service.storage.objects import CANONICAL_SCHEMES

        scheme, bucket, key_prefix = self._split(prefix)
        scheme = CANONICAL_SCHEMES.get(scheme, scheme)  # listed objects are named canonically
        if key_prefix and not key_prefix.endswith("/"):
            key_prefix += "/"
        store = self._store(bucket)  # its configuration errors are its own, not "unavailable"
        offset: str | None = None
        while True:
            jump: str | None = None
            for meta in self._pages(prefix, store, key_prefix, offset, self.bucket):
                if bound is not None:
                    bound.count(prefix)
                key = meta["path"]
                if offset is not None and key <= offset:
                    continue  # a store that ignored the offset: its objects counted, not returned
                rel = key[len(key_prefix) :]
                pruned = first_pruned_dir(rel, prune)
                if pruned is not None:
                    jump = past_dir(key_prefix + pruned)
                    break
                if not rel or rel.endswith("/"):
                    continue  # a "directory marker" object
                uri = f"{scheme}://{bucket}/{key}"
                if not self._suffix_ranges:
                    self._hints.add(uri, Seen(int(meta["size"]), quoted(meta.get("e_tag"))))
                yield ObjectEntry(uri=uri, size=int(meta["size"]))
            if jump is None:
                return
            offset = jump  # a new listing from past the pruned directory: its subtree is never paged

    @staticmethod
    def _pages(prefix: str, store: Any, key_prefix: str, offset: str | None, bucket: str) -> Iterator[Mapping[str, Any]]:
        """The objects of one flat listing from ``offset``, page by page as the caller consumes
        them (obstore asks for the next page only when the previous one is used up). A missing
        bucket is ObjectNotFoundError naming it: listing it as empty made a typo in the bucket's
        name (or an endpoint answering 404) read "no Parquet data files in this directory"."""
        import obstore

        stream = obstore.list(store, key_prefix or None, offset=offset, chunk_size=LIST_CHUNK)
        while True:
            try:
                chunk = next(stream)
            except StopIteration:
                return
            except Exception as e:
                # A store answers a missing prefix with an empty page: a 404 is the bucket's.
                raise translate(prefix, e, missing=bucket) from None
            yield from chunk

    def _missing(self, uri: str, key: str, store: Any, e: ObjectNotFoundError) -> ObjectNotFoundError:
        """``e``, a read's "no such file", or the error naming the bucket (container, account) the
        file is in when that is what is missing: a listing under the file's own name (a page of
        at most a few objects) answers 404 then, and nothing otherwise."""
        if e.details.get("missing") != "file":
            return e
        try:
            next(self._pages(uri, store, key, None, self.bucket), None)
        except ObjectNotFoundError as gone:
            return gone
        except ObjectStoreError:
            return e  # the listing's own failure (denied, say) says nothing of the file
        return e

    def read_tail(self, uri: str, n: int) -> ObjectTail:
        _, bucket, key = self._split(uri)
        if not key:
            raise not_found(uri)
        store = self._store(bucket)
        try:
            return self._tail(uri, key, store, n)
        except ObjectNotFoundError as e:
            raise self._missing(uri, key, store, e) from None

    def _tail(self, uri: str, key: str, store: Any, n: int) -> ObjectTail:
        if self._suffix_ranges:
            return self._suffix(uri, key, store, n)
        seen = self._hints.take(uri)
        if seen is not None and seen.size > 0 and seen.etag:
            try:
                return self._known(uri, key, store, seen.size, seen.etag, n)
            except ObjectChangedError:
                pass  # rewritten since the listing: ask for its size afresh
        for _ in range(2):
            info = self.head(uri)
            if info is None:
                raise not_found(uri)
            if info.size == 0:
                return ObjectTail(info, b"")
            try:
                return self._known(uri, key, store, info.size, info.version, n)
            except ObjectChangedError:
                continue  # rewritten between the HEAD and the GET: once more
        raise ObjectChangedError(f"{uri}: the object keeps changing while it is being read", details={"path": uri})

    def _suffix(self, uri: str, key: str, store: Any, n: int) -> ObjectTail:
        try:
            result, data = self._get(uri, key, store, {"range": {"suffix": n}}, f"the last {n} bytes", n)
        except ObjectTruncatedError:
            # "bytes=-n" of an empty object has nothing to satisfy it: whether it exists, a HEAD tells.
            info = self.head(uri)
            if info is not None and info.size == 0:
                return ObjectTail(info, b"")
            raise
        size = int(result.meta["size"])
        if len(data) != min(n, size):
            raise ObjectTruncatedError(f"{uri}: expected the last {min(n, size)} bytes, got {len(data)}", details={"path": uri})
        return ObjectTail(self._info(uri, result.meta), data)

    def _known(self, uri: str, key: str, store: Any, size: int, etag: str | None, n: int) -> ObjectTail:
        """The tail of an object of a known ``size``: one explicit range, guarded by ``etag``."""
        first = max(0, size - n)
        what = f"bytes {first}-{size - 1}"
        options: GetOptions = {"range": (first, size)}
        if etag:
            options["if_match"] = etag
        result, data = self._get(uri, key, store, options, what, size - first)
        if int(result.meta["size"]) != size:
            raise ObjectChangedError(f"{uri}: the object changed while it was being read", details={"path": uri})
        if len(data) != size - first:
            raise ObjectTruncatedError(f"{uri}: {what} asked, {len(data)} bytes came", details={"path": uri})
        return ObjectTail(self._info(uri, result.meta, etag), data)

    def read_ranges(self, uri: str, ranges: Sequence[ByteRange], *, version: str | None = None) -> builtins.list[bytes]:
        _, bucket, key = self._split(uri)
        store = self._store(bucket)
        try:
            return self._ranges(uri, key, store, ranges, version)
        except ObjectNotFoundError as e:
            raise self._missing(uri, key, store, e) from None

    def _ranges(
        self, uri: str, key: str, store: Any, ranges: Sequence[ByteRange], version: str | None
    ) -> builtins.list[bytes]:
        fetched: dict[ByteRange, bytes] = {}
        # One GET per coalesced span, in this thread: the extraction pool's size is the bound of
        # requests in flight (obstore's get_ranges would add up to ten of its own).
        for off, length in coalesce(ranges):
            what = f"bytes {off}-{off + length - 1}"
            options: GetOptions = {"range": (off, off + length)}
            if version is not None:
                options["if_match"] = version
            result, data = self._get(uri, key, store, options, what, length)
            if off + length > int(result.meta["size"]):
                raise ObjectTruncatedError(f"{uri}: {what} lies past the end of the object", details={"path": uri})
            if len(data) != length:
                raise ObjectTruncatedError(f"{uri}: {what} asked, {len(data)} bytes came", details={"path": uri})
            fetched[(off, length)] = data
        return slice_ranges(ranges, fetched)

    def close(self) -> None:
        with self._lock:
            self._buckets.clear()


__all__ = ["RemoteStore", "client_options", "config_error", "not_found", "quoted", "retry_config", "translate"]
