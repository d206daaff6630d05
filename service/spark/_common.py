"""Helpers shared by the Spark helpers: table names, clients, idempotency keys.

No PySpark here. Data files are listed by :mod:`service.storage`, as the CLI and the API list them.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
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
