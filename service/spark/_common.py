"""Helpers shared by the Spark helpers: table names, clients, listing data files, idempotency keys.

No PySpark here: listing uses ``pyarrow.fs`` so it works the same on the driver and in tests.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from service.client import ShredcatClient

DEFAULT_URL = "http://127.0.0.1:8181"

#: The file names Spark's Parquet writer gives its output: ``part-00000-<job uuid>[-c000][.codec].parquet``.
SPARK_PART_FILE = re.compile(
    r"^part-\d+-([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?:[-_.].*)?\.parquet$"
)


def split_table(table: str | tuple[str, str]) -> tuple[str, str]:
    """``"ns.table"`` or ``("ns", "table")`` → ``(ns, table)``."""
    if isinstance(table, tuple):
        ns, name = table
    else:
        ns, dot, name = str(table).partition(".")
        if not dot or "." in name:
            raise ValueError(f"a table is named NAMESPACE.TABLE, got {table!r}")
    if not ns or not name:
        raise ValueError(f"a table is named NAMESPACE.TABLE, got {table!r}")
    return ns, name


@contextmanager
def client_for(client: ShredcatClient | None, url: str | None = None, token: str | None = None) -> Iterator[ShredcatClient]:
    """The given client, or one made from ``url``/``token`` (default: ``SHREDCAT_URL`` and
    ``SHREDCAT_TOKEN`` from the environment), closed afterwards."""
    if client is not None:
        yield client
        return
    from service.client import ShredcatClient

    c = ShredcatClient(url or os.environ.get("SHREDCAT_URL") or DEFAULT_URL, token or os.environ.get("SHREDCAT_TOKEN"))
    try:
        yield c
    finally:
        c.close()


def _is_hidden(relative: str) -> bool:
    # Spark's own rule for data paths: a component starting with "_" or "." is not data
    # (_SUCCESS, _temporary/, _committed_*, .part-*.crc, .hidden/).
    return any(part.startswith(("_", ".")) for part in relative.split("/") if part)


def _filesystem(root: str) -> tuple[Any, str, str]:
    """``(pyarrow filesystem, base path inside it, prefix that turns a listed path into a URI)``.
    Local directories are resolved (symlinks), as the service stores local paths."""
    from pyarrow import fs as pafs

    if "://" not in root and not root.startswith("file:"):
        return pafs.LocalFileSystem(), os.path.realpath(os.path.abspath(root)), ""
    filesystem, base = pafs.FileSystem.from_uri(root)
    if isinstance(filesystem, pafs.LocalFileSystem):
        return filesystem, os.path.realpath(base), ""
    return filesystem, base.rstrip("/"), root.split("://", 1)[0] + "://"


def list_parquet_files(root: str) -> list[str]:
    """Every data file under ``root`` (a local directory or a ``pyarrow.fs`` URI such as
    ``s3://bucket/lake/events``), recursively, sorted: names ending in ``.parquet`` with no path
    component starting with ``_`` or ``.`` (so no ``_SUCCESS``, ``_temporary/``, ``.crc``, hidden
    files). Local paths come back absolute and resolved; others as URIs of the root's scheme.
    A root that does not exist lists nothing."""
    from pyarrow import fs as pafs

    filesystem, base, scheme = _filesystem(root)
    info = filesystem.get_file_info(base)
    if info.type == pafs.FileType.NotFound:
        return []
    if info.type == pafs.FileType.File:
        return [scheme + base] if base.endswith(".parquet") else []
    out = []
    for f in filesystem.get_file_info(pafs.FileSelector(base, recursive=True, allow_not_found=True)):
        if f.type != pafs.FileType.File or not f.path.endswith(".parquet"):
            continue
        if _is_hidden(f.path[len(base) :]):
            continue
        out.append(scheme + f.path)
    out.sort()
    return out


def listing_prefix(root: str) -> str:
    """The path prefix every file :func:`list_parquet_files` returns for ``root`` starts with."""
    _, base, scheme = _filesystem(root)
    return scheme + base.rstrip("/") + "/"


def idempotency_key(kind: str, namespace: str, table: str, paths: Iterable[str], salt: str = "") -> str:
    """A deterministic key for committing exactly these paths (order does not matter)."""
    h = hashlib.sha256()
    for part in (kind, namespace, table, salt):
        h.update(part.encode())
        h.update(b"\x00")
    for p in sorted(paths):
        h.update(p.encode())
        h.update(b"\n")
    return f"shredcat-{kind}-{h.hexdigest()[:48]}"


def chunks(items: Sequence[Any], size: int) -> list[Sequence[Any]]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def ensure_table(client: ShredcatClient, namespace: str, table: str, variant_columns: Sequence[str]) -> bool:
    """Create the namespace and the table when missing. True when the table was created here."""
    from service.client import Conflict, NotFound

    try:
        client.load_table(namespace, table)
        return False
    except NotFound:
        pass
    if not variant_columns:
        raise ValueError(f"{namespace}.{table} does not exist and no Variant column was found to create it with")
    with suppress(Conflict):
        client.create_namespace(namespace)
    try:
        client.create_table(namespace, table, variant_columns=list(variant_columns))
    except Conflict:
        return False
    return True
