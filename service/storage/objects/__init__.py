"""The one place shredcat talks to object stores (S3, and any store added beside it).

* :class:`~service.storage.objects.base.ObjectStore`: the interface every store implements
  (``head``, ``list``, ``read_tail``, ``read_ranges``), with its frozen result types and the typed
  errors of :mod:`service.errors` (``ObjectNotFoundError``, ``ObjectAccessDeniedError``,
  ``ObjectTruncatedError``, ``ObjectChangedError``, ``ObjectStoreUnavailableError``).
* :func:`store_for`: the store of a URI, made once per process and configuration (connections
  are reused across files and threads), or None for a local path.
* :class:`~service.storage.objects.file.ObjectFile`: an object as a seekable binary file whose
  reads are served from bytes already fetched (the tail, prefetched ranges), so the footer reader,
  the page scanner and pyarrow read remote files through the same code as local ones.

Stores are registered by scheme in :data:`STORES` (module names, imported on first use so that
the CLI starts without any HTTP client). A scheme not registered there is served through
``pyarrow.fs`` (:mod:`service.storage.objects.arrow`): slower (a HEAD and a GET per file), but
any filesystem pyarrow knows keeps working.

Each store module defines ``ENV_VARS`` (the environment variables its configuration is read from:
a change of them, e.g. new credentials, gives a new store instance) and
``open_store(env, options) -> ObjectStore``.
"""

from __future__ import annotations

import importlib
import os
import posixpath
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from service.storage.objects.base import (
    ByteRange,
    ObjectEntry,
    ObjectInfo,
    ObjectStore,
    ObjectTail,
    coalesce,
    slice_ranges,
)

__all__ = [
    "CANONICAL_SCHEMES",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_TAIL_BYTES",
    "STORES",
    "ByteRange",
    "ObjectEntry",
    "ObjectInfo",
    "ObjectStore",
    "ObjectTail",
    "StoreOptions",
    "canonical_moves",
    "canonical_uri",
    "coalesce",
    "is_remote",
    "local_path",
    "normal_local_path",
    "scheme_of",
    "slice_ranges",
    "store_for",
    "store_options",
    "stored_path",
]

#: Requests in flight per process and store (``SHREDCAT_OBJECT_STORE_CONCURRENCY``).
DEFAULT_CONCURRENCY = 64
#: Bytes fetched from the end of an object by the first request (``SHREDCAT_OBJECT_STORE_TAIL_BYTES``):
#: most footers fit, so most files cost exactly one GET; small files come whole.
DEFAULT_TAIL_BYTES = 64 * 1024
#: Seconds to wait for a connection or a response before the store is called unavailable.
DEFAULT_TIMEOUT = 30.0

#: URI scheme -> module implementing the store (``ENV_VARS``, ``open_store``).
STORES: dict[str, str] = {
    "s3": "service.storage.objects.s3",
    "s3a": "service.storage.objects.s3",
    "s3n": "service.storage.objects.s3",
    "abfs": "service.storage.objects.azure",
    "abfss": "service.storage.objects.azure",
    "az": "service.storage.objects.azure",
    "wasb": "service.storage.objects.azure",
    "wasbs": "service.storage.objects.azure",
    "gs": "service.storage.objects.gcs",
    "gcs": "service.storage.objects.gcs",
}
#: Schemes nobody registered: pyarrow.fs.
FALLBACK = "service.storage.objects.arrow"


@dataclass(frozen=True, slots=True)
class StoreOptions:
    """How a store behaves, from the settings (never credentials: those come from each store's
    own environment)."""

    concurrency: int = DEFAULT_CONCURRENCY
    tail_bytes: int = DEFAULT_TAIL_BYTES
    timeout: float = DEFAULT_TIMEOUT


def store_options() -> StoreOptions:
    """The options in force (``SHREDCAT_OBJECT_STORE_*`` settings)."""
    from service.settings import get_settings

    s = get_settings()
    return StoreOptions(
        concurrency=s.object_store_concurrency, tail_bytes=s.object_store_tail_bytes, timeout=s.object_store_timeout
    )


def scheme_of(uri: str) -> str | None:
    """The lower-case scheme of a URI (``s3``), or None for a plain local path."""
    if "://" not in uri:
        return "file" if uri[:5].lower() == "file:" else None
    return uri.split("://", 1)[0].lower()


def is_remote(uri: str) -> bool:
    """Whether ``uri`` names an object in a store (anything but a local path or ``file:`` URI)."""
    return scheme_of(uri) not in (None, "file")


def local_path(uri: str) -> str:
    """The local path of a plain path or a ``file:`` URI (``file:///a/b``, ``file:/a/b``, any case
    of ``file``), absolute. A ``file:`` URI with a host, or malformed, is a FileAccessError."""
    if uri[:5].lower() == "file:":
        from urllib.parse import unquote, urlsplit

        from service.errors import FileAccessError

        try:
            parts = urlsplit(uri)
        except ValueError as e:  # "Invalid IPv6 URL": file://[x/...
            raise FileAccessError(f"{uri}: not a valid file: URI ({e})", details={"path": uri}) from None
        if parts.netloc not in ("", "localhost"):
            raise FileAccessError(f"{uri}: a file: URI must name a local path", details={"path": uri})
        uri = unquote(parts.path)
    return os.path.abspath(uri)


def normal_local_path(path: str) -> str:
    """An absolute local path with '.', '..' and repeated '/' folded lexically."""
    normal = posixpath.normpath(path)
    # POSIX keeps a leading '//' as implementation-defined: not ours.
    return "/" + normal.lstrip("/") if normal.startswith("//") else normal


#: Each store's URI schemes -> the one its objects are stored under: one object, one identity,
#: whichever spelling a writer used (Hadoop's s3a://, Databricks' abfss://, fsspec's az://...).
CANONICAL_SCHEMES: dict[str, str] = {
    "s3": "s3",
    "s3a": "s3",
    "s3n": "s3",
    "gs": "gs",
    "gcs": "gs",
    "abfs": "abfs",
    "abfss": "abfs",
    "az": "abfs",
    "wasb": "abfs",
    "wasbs": "abfs",
}


def canonical_uri(uri: str, env: Mapping[str, str] | None = None) -> str:
    """The canonical form of an object-store URI (a ``scheme://`` URI of a scheme in
    :data:`CANONICAL_SCHEMES`; any other URI gets its scheme lower-cased only): ``s3://``,
    ``gs://`` or ``abfs://container/path``. The key is kept verbatim (stores read keys verbatim).
    Azure's Hadoop forms ``abfs[s]://container@account.dfs.core.windows.net/path`` and
    ``wasb[s]://container@account.blob.core.windows.net/path`` lose the account, which must be the
    one configured (``env``, default the process environment): FileAccessError otherwise."""
    scheme, sep, rest = uri.partition("://")
    canon = CANONICAL_SCHEMES.get(scheme.lower())
    if canon is None or not sep:
        return scheme.lower() + sep + rest
    if canon == "abfs":
        authority, slash, key = rest.partition("/")
        if "@" in authority:
            rest = _azure_container(uri, authority, env) + slash + key
    return f"{canon}://{rest}"


def _azure_container(uri: str, authority: str, env: Mapping[str, str] | None) -> str:
    from service.errors import FileAccessError
    from service.storage.objects.azure_config import configured_account

    container, _, host = authority.partition("@")
    account, dot, service = host.partition(".")
    if not container or not account or not dot or not service.lower().startswith(("dfs.", "blob.")):
        raise FileAccessError(
            f"{uri}: expected container@account.dfs.core.windows.net (or .blob.) as the authority", details={"path": uri}
        )
    configured = configured_account(os.environ if env is None else env)
    if configured is not None and configured.lower() != account.lower():
        raise FileAccessError(
            f"{uri}: names the storage account {account!r}; this server reads {configured!r} "
            "(AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_NAME)",
            details={"path": uri},
        )
    return container


def canonical_moves(paths: Iterable[str], env: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, str]]:
    """What makes a catalog's live ``paths`` (stored before :func:`canonical_uri`) canonical:
    ``(drop, rename)``. ``drop``: paths whose canonical form is live as well, or that another
    spelling already moves to it (one object registered twice: one of its rows ends). ``rename``:
    each other non-canonical path -> its canonical form. Paths of no store are left alone, and an
    Azure URI of an account that is not the configured one is left too (reading it fails anyway)."""
    from service.errors import FileAccessError

    live = list(paths)
    taken = {p for p in live if _canonical_or_none(p, env, FileAccessError) == p}
    drop: list[str] = []
    rename: dict[str, str] = {}
    for p in sorted(live):
        canon = _canonical_or_none(p, env, FileAccessError)
        if canon is None or canon == p:
            continue
        if canon in taken:
            drop.append(p)
        else:
            rename[p] = canon
            taken.add(canon)
    return drop, rename


def _canonical_or_none(path: str, env: Mapping[str, str] | None, error: type[Exception]) -> str | None:
    if not is_remote(path):
        return None
    try:
        return canonical_uri(path, env)
    except error:
        return None


def stored_path(uri: str) -> str:
    """The one form a data file's location has in the catalog, whoever gives it (a commit, a
    removal, a lookup, a listing, the CLI): a local path or ``file:`` URI is an absolute local
    path (escapes decoded, ``.``, ``..`` and repeated ``/`` folded lexically, symlinks not
    resolved); an object-store URI is :func:`canonical_uri`. Raises FileAccessError for a
    ``file:`` URI with a host, or malformed, and for an Azure URI of another account."""
    if scheme_of(uri) in (None, "file"):
        return normal_local_path(local_path(uri))
    return canonical_uri(uri)


_lock = threading.Lock()
_stores: dict[tuple[Any, ...], ObjectStore] = {}


def store_for(uri: str, options: StoreOptions | None = None, env: Mapping[str, str] | None = None) -> ObjectStore | None:
    """The store serving ``uri`` (None for a local path), shared by every caller in the process
    with the same configuration: its connections are reused and its in-flight bound is shared."""
    scheme = scheme_of(uri)
    if scheme in (None, "file"):
        return None
    assert scheme is not None
    module_name = STORES.get(scheme, FALLBACK)
    module = importlib.import_module(module_name)
    env = os.environ if env is None else env
    opts = options if options is not None else store_options()
    key = (module_name, opts, *(env.get(v) for v in module.ENV_VARS))
    with _lock:
        store = _stores.get(key)
        if store is None:
            store = module.open_store(env, opts)
            _stores[key] = store
    return store


def close_stores() -> None:
    """Close every store made so far (tests; a long-lived process never needs to)."""
    with _lock:
        stores = list(_stores.values())
        _stores.clear()
    for s in stores:
        s.close()
