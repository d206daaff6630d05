"""Azure Blob Storage (and Azurite, Microsoft's emulator) over httpx, signed with SharedKey.

URIs: ``abfs://container/path/to/blob`` (also ``abfss://`` and ``az://``), the container as the
authority, the account from the configuration (as fsspec's adlfs and pyarrow read them). The
Hadoop form ``abfss://container@account.dfs.core.windows.net/path`` is refused with a clear
error: the warehouse-root checks treat ``@`` as user info.

Configuration is the Azure SDKs' usual environment:

* ``AZURE_STORAGE_CONNECTION_STRING`` (``AccountName``, ``AccountKey`` or
  ``SharedAccessSignature``, ``BlobEndpoint`` or ``DefaultEndpointsProtocol`` +
  ``EndpointSuffix``; ``UseDevelopmentStorage=true`` for a local Azurite), or
* ``AZURE_STORAGE_ACCOUNT_NAME`` with ``AZURE_STORAGE_ACCOUNT_KEY`` or ``AZURE_STORAGE_SAS_TOKEN``
  (without either, requests go anonymous, for public containers), and ``AZURE_STORAGE_ENDPOINT``
  for another blob endpoint than ``https://<account>.blob.core.windows.net``.

For an account with neither key nor SAS, requests carry an Azure AD token when the environment
gives one (a service principal's secret, workload identity, managed identity:
:mod:`service.storage.objects.azure_credentials`), else they go anonymous.

Blob Storage has no suffix range (``x-ms-range: bytes=-n`` is not one of its range forms), so the
last ``n`` bytes of a blob take one GET only when its size is known: from the listing that found
it (:class:`~service.storage.objects.http.ListingHints`, guarded by ``If-Match`` of the listed
ETag), otherwise after a HEAD (Get Blob Properties): two requests for a file named directly.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import xml.etree.ElementTree as ET
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from email.utils import formatdate
from urllib.parse import parse_qsl, quote, unquote, urlsplit

from service.errors import (
    FileAccessError,
    ObjectChangedError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectTruncatedError,
)
from service.storage.objects import StoreOptions, azure_credentials
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
from service.storage.objects.renewal import Renewing

ENV_VARS = (
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_STORAGE_ACCOUNT_NAME",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_ENDPOINT",
    *azure_credentials.ENV_VARS,
)
SCHEMES = ("abfs", "abfss", "az")
#: The REST API version every request asks for (2021-08-06 has everything used here).
API_VERSION = "2021-08-06"
#: Azurite's well-known development account (``UseDevelopmentStorage=true``), public by design.
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
DEV_ENDPOINT = "http://127.0.0.1:10000/devstoreaccount1"
#: Largest page of one List Blobs request.
_MAX_RESULTS = 5000


@dataclass(frozen=True, slots=True)
class AzureConfig:
    account: str
    #: ``scheme://host[:port][/path]`` that container names are appended to (no trailing ``/``).
    endpoint: str
    #: The account key, decoded (SharedKey signing), or None.
    key: bytes | None = None
    #: A SAS token's query parameters, or None.
    sas: tuple[tuple[str, str], ...] | None = None
    #: Where Azure AD tokens come from (no key, no SAS), or None: anonymous.
    tokens: azure_credentials.TokenSource | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> AzureConfig:
        """The configuration of ``env``; :class:`FileAccessError` when it names no account or is
        malformed (so every path of the store fails with that one clear message)."""
        conn = env.get("AZURE_STORAGE_CONNECTION_STRING")
        if conn:
            config = cls._from_connection_string(conn)
        else:
            account = env.get("AZURE_STORAGE_ACCOUNT_NAME")
            if not account:
                raise FileAccessError(
                    "Azure Blob Storage is not configured: set AZURE_STORAGE_CONNECTION_STRING, or "
                    "AZURE_STORAGE_ACCOUNT_NAME (with AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_TOKEN "
                    "or Azure AD credentials)"
                )
            endpoint = env.get("AZURE_STORAGE_ENDPOINT") or f"https://{account}.blob.core.windows.net"
            config = cls._make(account, endpoint, env.get("AZURE_STORAGE_ACCOUNT_KEY"), env.get("AZURE_STORAGE_SAS_TOKEN"))
        if config.key is None and config.sas is None:
            config = dataclasses.replace(config, tokens=azure_credentials.resolve(env, config.endpoint))
        return config

    @classmethod
    def _from_connection_string(cls, conn: str) -> AzureConfig:
        fields: dict[str, str] = {}
        for part in conn.split(";"):
            if part.strip():
                name, sep, value = part.partition("=")
                if not sep:
                    raise FileAccessError("AZURE_STORAGE_CONNECTION_STRING: expected Name=Value pairs separated by ';'")
                fields[name.strip().lower()] = value.strip()
        if fields.get("usedevelopmentstorage", "").lower() == "true":
            return cls._make(DEV_ACCOUNT, fields.get("blobendpoint") or DEV_ENDPOINT, DEV_KEY, None)
        account = fields.get("accountname")
        if not account:
            raise FileAccessError("AZURE_STORAGE_CONNECTION_STRING has no AccountName")
        endpoint = fields.get("blobendpoint") or (
            f"{fields.get('defaultendpointsprotocol', 'https')}://{account}.blob."
            f"{fields.get('endpointsuffix', 'core.windows.net')}"
        )
        return cls._make(account, endpoint, fields.get("accountkey"), fields.get("sharedaccesssignature"))

    @classmethod
    def _make(cls, account: str, endpoint: str, key: str | None, sas: str | None) -> AzureConfig:
        decoded = None
        if key:
            try:
                decoded = base64.b64decode(key, validate=True)
            except (binascii.Error, ValueError):
                raise FileAccessError(f"the Azure account key of {account!r} is not base64") from None
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FileAccessError(f"the Azure blob endpoint {endpoint!r} must be an http(s) URL")
        params = tuple(parse_qsl(sas.lstrip("?"), keep_blank_values=True)) if sas and not key else None
        return cls(account=account, endpoint=endpoint.rstrip("/"), key=decoded, sas=params)


def open_store(env: Mapping[str, str], options: StoreOptions) -> AzureBlobStore:
    return AzureBlobStore(AzureConfig.from_env(env), options)


def split_uri(uri: str) -> tuple[str, str, str]:
    """``abfs://container/a/b`` -> ``("abfs", "container", "a/b")``."""
    scheme, _, rest = uri.partition("://")
    container, _, blob = rest.partition("/")
    if "@" in container:
        raise FileAccessError(
            f"{uri}: give Azure URIs as {scheme}://container/path (the account comes from "
            "AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_NAME)",
            details={"path": uri},
        )
    if not container:
        raise FileAccessError(f"{uri}: no container in the URI", details={"path": uri})
    return scheme, container, blob


def string_to_sign(method: str, url: str, headers: Mapping[str, str], account: str) -> str:
    """SharedKey's string to sign for the Blob service (versions 2009-09-19 and later), as the
    REST reference "Authorize with Shared Key" defines it."""
    h = {k.lower(): v for k, v in headers.items()}
    length = h.get("content-length", "")
    standard = [
        method.upper(),
        h.get("content-encoding", ""),
        h.get("content-language", ""),
        "" if length == "0" else length,
        h.get("content-md5", ""),
        h.get("content-type", ""),
        "",  # Date: x-ms-date is sent instead
        h.get("if-modified-since", ""),
        h.get("if-match", ""),
        h.get("if-none-match", ""),
        h.get("if-unmodified-since", ""),
        h.get("range", ""),
    ]
    ms = "".join(f"{k}:{h[k].strip()}\n" for k in sorted(k for k in h if k.startswith("x-ms-")))
    parts = urlsplit(url)
    resource = f"/{account}{parts.path or '/'}"
    query: dict[str, list[str]] = {}
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        query.setdefault(k.lower(), []).append(v)
    for k in sorted(query):
        resource += f"\n{k}:{','.join(sorted(query[k]))}"
    return "\n".join(standard) + "\n" + ms + resource


def listed_name(entry: ET.Element) -> str:
    """The name of a List Blobs ``Blob`` or ``BlobPrefix``: a name with characters XML 1.0
    cannot carry comes percent-encoded, flagged ``<Name Encoded="true">`` (REST reference, "List
    Blobs": "Encoded ... the name is URL-encoded")."""
    node = entry.find("Name")
    if node is None or not node.text:
        return ""
    return unquote(node.text) if (node.get("Encoded") or "").lower() == "true" else node.text


def _quoted(etag: str | None) -> str | None:
    """An ETag as HTTP headers carry it (the listing's XML gives it without the quotes)."""
    if not etag:
        return None
    return etag if etag.startswith('"') else f'"{etag}"'


def _error(body: bytes, headers: Mapping[str, str]) -> tuple[str, str]:
    """``(code, message)`` of an Azure error answer."""
    code = headers.get("x-ms-error-code", "")
    try:
        root = ET.fromstring(body) if body else None
    except ET.ParseError:
        root = None
    if root is not None:
        code = code or (root.findtext("Code") or "").strip()
        message = (root.findtext("Message") or "").strip().splitlines()
        return code, message[0] if message else ""
    return code, ""


class AzureBlobStore:
    schemes = SCHEMES

    def __init__(self, config: AzureConfig, options: StoreOptions) -> None:
        self.config = config
        self.options = options
        self._http = HttpSender(options)
        self._hints = ListingHints()
        self._tokens = None if config.tokens is None else Renewing(config.tokens, self._http)

    # --- requests ---------------------------------------------------------------------------

    def _url(self, container: str, blob: str | None, params: Sequence[tuple[str, str]] = ()) -> str:
        path = f"/{quote(container, safe='')}" + (f"/{quote(blob, safe='/~')}" if blob is not None else "")
        query = list(params) + list(self.config.sas or ())
        q = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in query)
        return self.config.endpoint + path + (f"?{q}" if q else "")

    def _sign(self, method: str, url: str, headers: dict[str, str], uri: str) -> None:
        headers["x-ms-date"] = formatdate(usegmt=True)
        headers["x-ms-version"] = API_VERSION
        if self.config.key is not None:
            # The signed path is the URL's as sent (percent-encoded), as Azure's SDKs sign it.
            text = string_to_sign(method, url, headers, self.config.account)
            mac = hmac.new(self.config.key, text.encode("utf-8"), hashlib.sha256).digest()
            headers["Authorization"] = f"SharedKey {self.config.account}:{base64.b64encode(mac).decode()}"
        elif self._tokens is not None:
            token = self._tokens.get(uri)  # on every attempt: it may have been renewed in between
            if token is not None:
                headers["Authorization"] = f"Bearer {token}"

    def _send(self, method: str, uri: str, url: str, headers: Mapping[str, str] | None = None) -> Response:
        return self._http.send(method, url, uri, headers, lambda m, u, h: self._sign(m, u, h, uri))

    def _fail(self, uri: str, r: Response, what: str = "") -> ObjectStoreError:
        code, message = _error(r.body, r.headers)
        detail = f" ({code}: {message})" if code and message else f" ({code})" if code else ""
        missing = "container" if code == "ContainerNotFound" else "file"
        return status_error(
            uri, r.status, detail=detail, denied=detail or f" (HTTP {r.status})", missing=missing, what=what
        )

    @staticmethod
    def _info(uri: str, size: int, etag: str | None) -> ObjectInfo:
        content_id = f"etag:{etag.strip(chr(34))}:{size}" if etag else None
        return ObjectInfo(uri=uri, size=size, content_id=content_id, version=etag)

    # --- the interface ----------------------------------------------------------------------

    def head(self, uri: str) -> ObjectInfo | None:
        _, container, blob = split_uri(uri)
        if not blob or blob.endswith("/"):
            return None
        r = self._send("HEAD", uri, self._url(container, blob))
        if r.status == 404:
            return None
        if r.status != 200:
            raise self._fail(uri, r)
        return self._info(uri, int(r.headers.get("content-length", "0")), r.headers.get("etag"))

    def list(self, prefix: str, limit: int | None = None) -> Iterator[ObjectEntry]:
        scheme, container, blob_prefix = split_uri(prefix)
        if blob_prefix and not blob_prefix.endswith("/"):
            blob_prefix += "/"
        marker = ""
        n = 0
        while limit is None or n < limit:
            params = [("restype", "container"), ("comp", "list"), ("prefix", blob_prefix), ("delimiter", "/")]
            params.append(("maxresults", str(min(_MAX_RESULTS, limit - n) if limit is not None else _MAX_RESULTS)))
            if marker:
                params.append(("marker", marker))
            r = self._send("GET", prefix, self._url(container, None, params))
            if r.status == 404 and _error(r.body, r.headers)[0] == "ContainerNotFound":
                return
            if r.status != 200:
                raise self._fail(prefix, r)
            try:
                root = ET.fromstring(r.body)
            except ET.ParseError:
                raise ObjectStoreError(f"{prefix}: the store's listing is not XML", details={"path": prefix}) from None
            blobs = root.find("Blobs")
            for b in blobs.iter("Blob") if blobs is not None else ():
                name = listed_name(b)
                if not name or name == blob_prefix:
                    continue  # a "directory marker" blob
                size = int(b.findtext("Properties/Content-Length") or 0)
                uri = f"{scheme}://{container}/{name}"
                self._hints.add(uri, Seen(size, _quoted(b.findtext("Properties/Etag"))))
                n += 1
                yield ObjectEntry(uri=uri, is_dir=False, size=size)
            for p in blobs.iter("BlobPrefix") if blobs is not None else ():
                name = listed_name(p)
                if name:
                    n += 1
                    yield ObjectEntry(uri=f"{scheme}://{container}/{name}", is_dir=True)
            marker = (root.findtext("NextMarker") or "").strip()
            if not marker:
                return

    def read_tail(self, uri: str, n: int) -> ObjectTail:
        _, container, blob = split_uri(uri)
        if not blob:
            raise ObjectNotFoundError(f"{uri}: no such file", details={"path": uri})
        seen = self._hints.take(uri)
        if seen is not None and seen.size > 0 and seen.version:
            try:
                return self._tail(uri, container, blob, seen.size, seen.version, n)
            except ObjectChangedError:
                pass  # rewritten since the listing: ask for its size afresh
        for _ in range(2):
            info = self.head(uri)
            if info is None:
                raise ObjectNotFoundError(f"{uri}: no such file", details={"path": uri})
            if info.size == 0:
                return ObjectTail(info, b"")
            try:
                return self._tail(uri, container, blob, info.size, info.version, n)
            except ObjectChangedError:
                continue  # rewritten between the HEAD and the GET: once more
        raise ObjectChangedError(f"{uri}: the object keeps changing while it is being read", details={"path": uri})

    def _tail(self, uri: str, container: str, blob: str, size: int, version: str | None, n: int) -> ObjectTail:
        first, last = tail_range(size, n)
        headers = {"x-ms-range": f"bytes={first}-{last}"}
        if version:
            headers["If-Match"] = version
        r = self._send("GET", uri, self._url(container, blob), headers)
        if r.status not in (200, 206):
            raise self._fail(uri, r, f"bytes {first}-{last}")
        total = content_range_size(r.headers.get("content-range")) if r.status == 206 else len(r.body)
        if total is None or total != size:
            raise ObjectChangedError(f"{uri}: the object changed while it was being read", details={"path": uri})
        body = r.body if r.status == 206 else r.body[first:]
        if len(body) != last - first + 1:
            raise ObjectTruncatedError(
                f"{uri}: expected the last {last - first + 1} bytes, got {len(body)}", details={"path": uri}
            )
        return ObjectTail(self._info(uri, size, r.headers.get("etag") or version), body)

    def read_ranges(self, uri: str, ranges: Sequence[ByteRange], *, version: str | None = None) -> list[bytes]:
        _, container, blob = split_uri(uri)

        def fetch(off: int, length: int) -> Response:
            headers = {"x-ms-range": f"bytes={off}-{off + length - 1}"}
            if version is not None:
                headers["If-Match"] = version
            return self._send("GET", uri, self._url(container, blob), headers)

        return read_coalesced(uri, ranges, fetch, lambda r, what: self._fail(uri, r, what))

    def close(self) -> None:
        self._http.close()


__all__ = ["ENV_VARS", "AzureBlobStore", "AzureConfig", "listed_name", "open_store", "split_uri", "string_to_sign"]
