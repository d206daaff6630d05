"""Google Cloud Storage (and gcp-storage-emulator) through its JSON API over httpx.

URIs: ``gs://bucket/path/to/object`` (also ``gcs://``). Configuration is what Google's client
libraries read:

* ``STORAGE_EMULATOR_HOST`` (``http://127.0.0.1:9023`` or ``127.0.0.1:9023``): an emulator's
  endpoint instead of ``https://storage.googleapis.com``;
* an OAuth 2 access token sent as ``Authorization: Bearer``, from Application Default
  Credentials (:mod:`service.storage.objects.gcp_credentials`: ``GOOGLE_OAUTH_ACCESS_TOKEN``, a
  service-account or user credentials file, the metadata server), renewed before it expires.
  Without any, requests go anonymous (public buckets, emulators).

The last ``n`` bytes of an object take one GET: ``Range: bytes=-n`` (GCS answers 206 with the
object size in ``Content-Range`` and its generation in ``x-goog-generation``), or, for an object
a listing just returned, the explicit range of its known size guarded by ``ifGenerationMatch``.
An emulator that ignores a suffix range answers 200 with the whole object, which is still
correct (only wasteful for a large object).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from service.errors import (
    FileAccessError,
    ObjectChangedError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectTruncatedError,
)
from service.storage.objects import StoreOptions, gcp_credentials
from service.storage.objects.base import (
    ByteRange,
    ObjectEntry,
    ObjectInfo,
    ObjectTail,
)
from service.storage.objects.http import (
    HttpSender,
    ListingHints,
    Response,
    Seen,
    content_range_size,
    read_coalesced,
    status_error,
    tail_range,
)
from service.storage.objects.renewal import Renewing, Source, json_object

ENV_VARS = ("STORAGE_EMULATOR_HOST", *gcp_credentials.ENV_VARS)
SCHEMES = ("gs", "gcs")
DEFAULT_ENDPOINT = "https://storage.googleapis.com"
#: Largest page of one objects.list request.
_MAX_RESULTS = 1000


@dataclass(frozen=True, slots=True)
class GcsConfig:
    #: ``scheme://host[:port]`` of the JSON API (no trailing ``/``).
    endpoint: str
    #: Where access tokens come from; None: anonymous requests.
    credentials: Source[str] | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GcsConfig:
        host = (env.get("STORAGE_EMULATOR_HOST") or "").strip()
        endpoint = DEFAULT_ENDPOINT
        if host:
            endpoint = host if "://" in host else f"http://{host}"
            parts = urlsplit(endpoint)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise FileAccessError(f"STORAGE_EMULATOR_HOST={host!r} is not an http(s) host[:port]")
        return cls(endpoint=endpoint.rstrip("/"), credentials=gcp_credentials.resolve(env, emulator=bool(host)))


def open_store(env: Mapping[str, str], options: StoreOptions) -> GcsStore:
    return GcsStore(GcsConfig.from_env(env), options)


def split_uri(uri: str) -> tuple[str, str, str]:
    """``gs://bucket/a/b`` -> ``("gs", "bucket", "a/b")``."""
    scheme, _, rest = uri.partition("://")
    bucket, _, name = rest.partition("/")
    if not bucket or "@" in bucket:
        raise FileAccessError(f"{uri}: expected {scheme}://bucket/object", details={"path": uri})
    return scheme, bucket, name


def _error(body: bytes) -> str:
    """The message of a JSON API error body ("" when there is none)."""
    err = (json_object(body) or {}).get("error", {})
    return str(err.get("message", "")) if isinstance(err, dict) else ""


class GcsStore:
    schemes = SCHEMES

    def __init__(self, config: GcsConfig, options: StoreOptions) -> None:
        self.config = config
        self.options = options
        self._http = HttpSender(options)
        self._hints = ListingHints()
        self._tokens = None if config.credentials is None else Renewing(config.credentials, self._http)

    # --- requests ---------------------------------------------------------------------------

    def _url(self, bucket: str, name: str | None, params: Sequence[tuple[str, str]] = ()) -> str:
        path = f"/storage/v1/b/{quote(bucket, safe='')}/o" + (f"/{quote(name, safe='')}" if name is not None else "")
        q = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in params)
        return self.config.endpoint + path + (f"?{q}" if q else "")

    def _send(self, method: str, uri: str, url: str, headers: Mapping[str, str] | None = None) -> Response:
        tokens = self._tokens
        if tokens is None:
            return self._http.send(method, url, uri, headers)

        def authorize(_method: str, _url: str, h: dict[str, str]) -> None:
            # On every attempt: the token may have been renewed in between.
            h["Authorization"] = f"Bearer {tokens.get(uri)}"

        return self._http.send(method, url, uri, headers, authorize)

    def _fail(self, uri: str, r: Response, what: str = "") -> ObjectStoreError:
        message = _error(r.body)
        detail = f" ({message})" if message else ""
        denied = f" (HTTP {r.status}{': ' + message if message else ''})"
        return status_error(uri, r.status, detail=detail, denied=denied, what=what)

    @staticmethod
    def _info(uri: str, size: int, generation: str | None) -> ObjectInfo:
        content_id = f"generation:{generation}:{size}" if generation else None
        return ObjectInfo(uri=uri, size=size, content_id=content_id, version=generation)

    def _json(self, uri: str, r: Response) -> dict[str, Any]:
        doc = json_object(r.body)
        if doc is None:
            raise ObjectStoreError(f"{uri}: the store's answer is not a JSON object", details={"path": uri})
        return doc

    # --- the interface ----------------------------------------------------------------------

    def head(self, uri: str) -> ObjectInfo | None:
        _, bucket, name = split_uri(uri)
        if not name or name.endswith("/"):
            return None
        r = self._send("GET", uri, self._url(bucket, name, [("fields", "size,generation")]))
        if r.status == 404:
            return None
        if r.status != 200:
            raise self._fail(uri, r)
        doc = self._json(uri, r)
        return self._info(uri, int(doc.get("size") or 0), str(doc["generation"]) if doc.get("generation") else None)

    def list(self, prefix: str, limit: int | None = None) -> Iterator[ObjectEntry]:
        scheme, bucket, name_prefix = split_uri(prefix)
        if name_prefix and not name_prefix.endswith("/"):
            name_prefix += "/"
        token = ""
        n = 0
        while limit is None or n < limit:
            params = [("prefix", name_prefix), ("delimiter", "/")]
            params.append(("maxResults", str(min(_MAX_RESULTS, limit - n) if limit is not None else _MAX_RESULTS)))
            if token:
                params.append(("pageToken", token))
            r = self._send("GET", prefix, self._url(bucket, None, params))
            if r.status == 404:
                return  # no such bucket: nothing below the prefix
            if r.status != 200:
                raise self._fail(prefix, r)
            doc = self._json(prefix, r)
            for item in doc.get("items") or ():
                name = str(item.get("name") or "")
                if not name or name == name_prefix:
                    continue  # a "directory marker" object
                size = int(item.get("size") or 0)
                uri = f"{scheme}://{bucket}/{name}"
                generation = item.get("generation")
                self._hints.add(uri, Seen(size, str(generation) if generation else None))
                n += 1
                yield ObjectEntry(uri=uri, is_dir=False, size=size)
            for p in doc.get("prefixes") or ():
                if p:
                    n += 1
                    yield ObjectEntry(uri=f"{scheme}://{bucket}/{p}", is_dir=True)
            token = str(doc.get("nextPageToken") or "")
            if not token:
                return

    def read_tail(self, uri: str, n: int) -> ObjectTail:
        _, bucket, name = split_uri(uri)
        if not name:
            raise ObjectNotFoundError(f"{uri}: no such file", details={"path": uri})
        seen = self._hints.take(uri)
        if seen is not None and seen.size > 0:
            first, last = tail_range(seen.size, n)
            params = [("alt", "media")] + ([("ifGenerationMatch", seen.version)] if seen.version else [])
            r = self._send("GET", uri, self._url(bucket, name, params), {"Range": f"bytes={first}-{last}"})
            try:
                return self._tail(uri, r, n, seen)
            except ObjectChangedError:
                pass  # rewritten since the listing (412, or another size): ask with a suffix range
        r = self._send("GET", uri, self._url(bucket, name, [("alt", "media")]), {"Range": f"bytes=-{n}"})
        return self._tail(uri, r, n, None)

    def _tail(self, uri: str, r: Response, n: int, seen: Seen | None) -> ObjectTail:
        # The content id comes from the answer that carried the bytes (never from the listing), so
        # a file read by name and the same file read after a listing get the same one. An emulator
        # that sends no x-goog-generation with the bytes gives none.
        generation = r.headers.get("x-goog-generation")
        if r.status == 206:
            size = content_range_size(r.headers.get("content-range"))
            if size is None or len(r.body) != min(n, size):
                raise ObjectTruncatedError(
                    f"{uri}: expected the last {min(n, size or 0)} bytes, got {len(r.body)}", details={"path": uri}
                )
            if seen is not None and size != seen.size:
                raise ObjectChangedError(f"{uri}: the object changed while it was being read", details={"path": uri})
            return ObjectTail(self._info(uri, size, generation), r.body)
        if r.status == 200:  # the range ignored (emulators; an object smaller than the range)
            if seen is not None and len(r.body) != seen.size:
                raise ObjectChangedError(f"{uri}: the object changed while it was being read", details={"path": uri})
            return ObjectTail(self._info(uri, len(r.body), generation), r.body[-n:])
        if r.status == 416:
            # "bytes=-n" of an empty object: nothing to satisfy it with; the object exists.
            size = content_range_size(r.headers.get("content-range"))
            if size in (None, 0):
                return ObjectTail(self._info(uri, 0, generation), b"")
        raise self._fail(uri, r)

    def read_ranges(self, uri: str, ranges: Sequence[ByteRange], *, version: str | None = None) -> list[bytes]:
        _, bucket, name = split_uri(uri)
        params = [("alt", "media")] + ([("ifGenerationMatch", version)] if version is not None else [])
        url = self._url(bucket, name, params)

        def fetch(off: int, length: int) -> Response:
            return self._send("GET", uri, url, {"Range": f"bytes={off}-{off + length - 1}"})

        return read_coalesced(uri, ranges, fetch, lambda r, what: self._fail(uri, r, what))

    def close(self) -> None:
        self._http.close()


__all__ = ["ENV_VARS", "GcsConfig", "GcsStore", "open_store", "split_uri"]
