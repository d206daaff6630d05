"""Amazon S3 (and S3 API servers such as MinIO or moto) over httpx, signed with SigV4.

Configuration is the AWS SDKs' standard environment: ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL`` (a custom endpoint; requests then use path-style addressing),
``AWS_REGION`` or ``AWS_DEFAULT_REGION`` (else the profile's ``region``, else ``us-east-1``), and
credentials from the SDKs' default chain (:mod:`service.storage.objects.aws_credentials`: keys,
web identity, a shared-file profile, container credentials; without any, requests go unsigned,
for public buckets).

One :class:`~service.storage.objects.http.HttpSender` per store (shared with Azure and GCS): its pool keeps at most ``options.concurrency`` connections,
which bounds the requests in flight of the whole process, and reuses them (keep-alive) across
files and threads. Idempotent requests are retried twice on a connection failure or an HTTP
5xx/429 before the store is called unavailable.
"""

from __future__ import annotations

import threading
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

from service.errors import (
    FileAccessError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectTruncatedError,
)
from service.storage.objects import StoreOptions, aws_credentials
from service.storage.objects.base import (
    ByteRange,
    ObjectEntry,
    ObjectInfo,
    ObjectTail,
)
from service.storage.objects.http import (
    HttpSender,
    Response,
    content_range_size,
    read_coalesced,
    status_error,
)
from service.storage.objects.renewal import Renewing
from service.storage.objects.sigv4 import sign, signing_key, uri_encode

ENV_VARS = ("AWS_REGION", "AWS_DEFAULT_REGION", *aws_credentials.ENV_VARS)

_NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"


@dataclass(frozen=True, slots=True)
class S3Config:
    region: str
    #: ``scheme://host[:port]`` of a custom endpoint (path-style), or None for AWS itself.
    endpoint: str | None
    #: Where the credentials come from; None: unsigned requests.
    credentials: aws_credentials.CredentialSource | None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> S3Config:
        endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL") or None
        region = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
        found = aws_credentials.resolve(env, region or "us-east-1")
        region = region or found.region or "us-east-1"
        return cls(region=region, endpoint=endpoint.rstrip("/") if endpoint else None, credentials=found.source)


def open_store(env: Mapping[str, str], options: StoreOptions) -> S3Store:
    return S3Store(S3Config.from_env(env), options)


def split_uri(uri: str) -> tuple[str, str, str]:
    """``s3://bucket/a/b`` -> ``("s3", "bucket", "a/b")``."""
    scheme, _, rest = uri.partition("://")
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise FileAccessError(f"{uri}: no bucket in the URI", details={"path": uri})
    return scheme, bucket, key


def _error_code(body: bytes) -> tuple[str, str]:
    """``(Code, Message)`` of an S3 XML error body ("", "" when there is none)."""
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return "", ""
    return (root.findtext("Code") or "").strip(), (root.findtext("Message") or "").strip()


class S3Store:
    schemes = ("s3", "s3a", "s3n")

    def __init__(self, config: S3Config, options: StoreOptions) -> None:
        self.config = config
        self.options = options
        self._http = HttpSender(options)
        self._creds = (
            None if config.credentials is None else Renewing(config.credentials, self._http)
        )
        self._key_lock = threading.Lock()
        self._key: tuple[str, str, bytes] | None = None
        if config.endpoint is not None:
            parts = urlsplit(config.endpoint)
            self._scheme, self._netloc = parts.scheme or "https", parts.netloc
            self._base_path = parts.path.rstrip("/")

    # --- requests ---------------------------------------------------------------------------

    def _where(self, bucket: str, key: str | None) -> tuple[str, str]:
        """``(host, encoded path)`` of a bucket (key None) or an object."""
        if self.config.endpoint is not None:
            path = f"{self._base_path}/{uri_encode(bucket, keep_slash=False)}"
            return self._netloc, path + ("/" + uri_encode(key, keep_slash=True) if key is not None else "/")
        if "." in bucket:  # a dotted bucket does not match the wildcard certificate: path-style
            host = f"s3.{self.config.region}.amazonaws.com"
            return host, f"/{bucket}/" + (uri_encode(key, keep_slash=True) if key is not None else "")
        host = f"{bucket}.s3.{self.config.region}.amazonaws.com"
        return host, "/" + (uri_encode(key, keep_slash=True) if key is not None else "")

    def _signing_key(self, date: str, secret: str) -> bytes:
        with self._key_lock:
            if self._key is None or self._key[:2] != (date, secret):
                self._key = (date, secret, signing_key(secret, date, self.config.region))
            return self._key[2]

    def _send(
        self,
        method: str,
        uri: str,
        bucket: str,
        key: str | None,
        params: Sequence[tuple[str, str]] = (),
        headers: Mapping[str, str] | None = None,
    ) -> tuple[int, Mapping[str, str], bytes]:
        """One request, retried on transport failures and 5xx; the whole body read."""
        from service.storage.objects.sigv4 import canonical_query

        host, path = self._where(bucket, key)
        query = canonical_query(params)
        scheme = self._scheme if self.config.endpoint is not None else "https"
        url = f"{scheme}://{host}{path}" + (f"?{query}" if query else "")
        source = self._creds

        def signed(method: str, _url: str, h: dict[str, str]) -> None:
            # Signed again on every attempt: a signature carries the time (and temporary
            # credentials may have been renewed in between).
            assert source is not None
            creds = source.get(uri)
            if creds is None:
                return  # no credentials to be had (instance metadata off EC2): unsigned
            amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
            key = self._signing_key(amz_date[:8], creds.secret_key)
            h.update(sign(method, host, path, params, creds, self.config.region, amz_date, key=key))

        r = self._http.send(method, url, uri, headers, signed if source is not None else None)
        return r.status, r.headers, r.body

    def _fail(self, uri: str, status: int, body: bytes, what: str = "") -> ObjectStoreError:
        code, message = _error_code(body)
        detail = f" ({code}: {message})" if code else ""
        missing = "bucket" if code == "NoSuchBucket" else "file"
        return status_error(uri, status, detail=detail, denied=detail or f" (HTTP {status})", missing=missing, what=what)

    # --- the interface ----------------------------------------------------------------------

    def head(self, uri: str) -> ObjectInfo | None:
        _, bucket, key = split_uri(uri)
        if not key or key.endswith("/"):
            return None
        status, headers, body = self._send("HEAD", uri, bucket, key)
        if status == 404:
            return None
        if status != 200:
            raise self._fail(uri, status, body)
        size = int(headers.get("content-length", "0"))
        return self._info(uri, size, headers)

    def _info(self, uri: str, size: int, headers: Mapping[str, str]) -> ObjectInfo:
        etag = headers.get("etag")
        content_id = f"etag:{etag.strip(chr(34))}:{size}" if etag else None
        return ObjectInfo(uri=uri, size=size, content_id=content_id, version=etag)

    def list(self, prefix: str, limit: int | None = None) -> Iterator[ObjectEntry]:
        scheme, bucket, key_prefix = split_uri(prefix)
        if key_prefix and not key_prefix.endswith("/"):
            key_prefix += "/"
        token: str | None = None
        n = 0
        while limit is None or n < limit:
            params = [("list-type", "2"), ("prefix", key_prefix), ("delimiter", "/")]
            if limit is not None:
                params.append(("max-keys", str(min(1000, limit - n))))
            if token is not None:
                params.append(("continuation-token", token))
            status, _, body = self._send("GET", prefix, bucket, None, params)
            if status == 404 and _error_code(body)[0] == "NoSuchBucket":
                return
            if status != 200:
                raise self._fail(prefix, status, body)
            try:
                root = ET.fromstring(body)
            except ET.ParseError:
                raise ObjectStoreError(f"{prefix}: the store's listing is not XML", details={"path": prefix}) from None
            for c in root.iter(f"{_NS}Contents"):
                k = c.findtext(f"{_NS}Key") or ""
                if k == key_prefix or not k:
                    continue  # a "directory marker" object
                n += 1
                yield ObjectEntry(uri=f"{scheme}://{bucket}/{k}", is_dir=False, size=int(c.findtext(f"{_NS}Size") or 0))
            for p in root.iter(f"{_NS}CommonPrefixes"):
                k = p.findtext(f"{_NS}Prefix") or ""
                if k:
                    n += 1
                    yield ObjectEntry(uri=f"{scheme}://{bucket}/{k}", is_dir=True)
            if (root.findtext(f"{_NS}IsTruncated") or "").strip().lower() != "true":
                return
            token = root.findtext(f"{_NS}NextContinuationToken")
            if not token:
                raise ObjectStoreError(f"{prefix}: a truncated listing page without a continuation token", details={"path": prefix})

    def read_tail(self, uri: str, n: int) -> ObjectTail:
        _, bucket, key = split_uri(uri)
        if not key:
            raise ObjectNotFoundError(f"{uri}: no such file", details={"path": uri})
        status, headers, body = self._send("GET", uri, bucket, key, headers={"range": f"bytes=-{n}"})
        if status == 206:
            size = content_range_size(headers.get("content-range"))
            if size is None or len(body) != min(n, size):
                raise ObjectTruncatedError(
                    f"{uri}: expected the last {min(n, size or 0)} bytes, got {len(body)}", details={"path": uri}
                )
            return ObjectTail(self._info(uri, size, headers), body)
        if status == 200:  # the range ignored (some servers do so for an object smaller than it)
            return ObjectTail(self._info(uri, len(body), headers), body[-n:])
        if status == 416:
            # "bytes=-n" of an empty object: nothing to satisfy it with; the object exists.
            size = content_range_size(headers.get("content-range"))
            if size in (None, 0):
                return ObjectTail(self._info(uri, 0, headers), b"")
        raise self._fail(uri, status, body)

    def read_ranges(self, uri: str, ranges: Sequence[ByteRange], *, version: str | None = None) -> list[bytes]:
        _, bucket, key = split_uri(uri)

        def fetch(off: int, length: int) -> tuple[int, bytes]:
            headers = {"range": f"bytes={off}-{off + length - 1}"}
            if version is not None:
                headers["if-match"] = version
            status, h, body = self._send("GET", uri, bucket, key, headers=headers)
            return Response(status, h, body)

        return read_coalesced(uri, ranges, fetch, lambda r, what: self._fail(uri, r.status, r.body, what))

    def close(self) -> None:
        self._http.close()


__all__ = ["ENV_VARS", "S3Config", "S3Store", "open_store", "split_uri"]


