"""Helpers shared by the Spark helpers (and the DuckDB ones' clients): table names, clients,
idempotency keys.

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
    from service.client import PlanResult, ShredcatClient, Table

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


#: The newest snapshot a client the helpers used committed or read at, per service URL: the next
#: helper's client (made or given) starts from it, so a read after ``write_and_register`` includes
#: that write even when a server answers reads from hot standbys (``min-snapshot-id``).
_last_snapshot: dict[str, int] = {}


@contextmanager
def client_for(
    client: ShredcatClient | None, url: str | None = None, token: str | None = None, *, min_snapshot_id: int | None = None
) -> Iterator[ShredcatClient]:
    """The given client, or one made from ``url``/``token`` (default: ``SHREDCAT_URL`` and
    ``SHREDCAT_TOKEN`` from the environment), closed afterwards if made here. Its reads ask for at
    least ``min_snapshot_id`` and the snapshots this process's helpers saw at that URL."""
    if client is not None:
        with _remembered(client, client.base_url, min_snapshot_id):
            yield client
        return
    from service.client import ShredcatClient

    base = url or os.environ.get("SHREDCAT_URL") or DEFAULT_URL
    with ShredcatClient(base, token or os.environ.get("SHREDCAT_TOKEN")) as c, _remembered(c, base, min_snapshot_id):
        yield c


@contextmanager
def _remembered(client: ShredcatClient, base: str | None, min_snapshot_id: int | None) -> Iterator[None]:
    """``client`` starting from the snapshot remembered for ``base`` (and ``min_snapshot_id``),
    and the newest it reaches remembered afterwards (a client with no URL of its own: not kept).
    A ``min_snapshot_id`` the service refused (none so new, not a snapshot id) is forgotten: kept,
    it made every later read of this client, and of the process's helpers at that URL, fail."""
    if base is not None:
        _at_least(client, _last_snapshot.get(base))
    known = client.last_snapshot_id
    _at_least(client, min_snapshot_id)
    asked = client.last_snapshot_id
    try:
        yield
    except BaseException:
        if asked != known and client.last_snapshot_id == asked:  # no answer reached it
            client.last_snapshot_id = known
        raise
    finally:
        if base is not None and client.last_snapshot_id is not None:
            _last_snapshot[base] = max(client.last_snapshot_id, _last_snapshot.get(base, client.last_snapshot_id))


def _at_least(client: ShredcatClient, snapshot_id: int | None) -> None:
    if snapshot_id is not None and (client.last_snapshot_id is None or snapshot_id > client.last_snapshot_id):
        client.last_snapshot_id = snapshot_id


def partition_types_read(table: Table, plan: PlanResult, snapshot: int | None) -> dict[str, str | None]:
    """The type of each partition column of ``table`` (its loadTable) to read ``plan``'s files with
    (a DuckLake name; None: every value NULL): those the plan was made with, at its snapshot.
    loadTable gives today's, which at a past snapshot may not be those files' (``p=05`` and
    ``p=5`` make an int, a later ``p=a`` a string: as strings ``'05' = '5'`` is false and a row is
    lost). A server that does not send them (before ``partition-types``) is trusted only where
    today's types are the snapshot's: at the current snapshot, or with declared types only."""
    from service.errors import BadInputError

    today: dict[str, str | None] = {c.name: c.type for c in table.columns if c.kind == "partition"}
    if plan.partition_types is not None:
        return {name: plan.partition_types.get(name, t) for name, t in today.items()}
    inferred = [c.name for c in table.columns if c.kind == "partition" and not c.declared]
    if inferred and snapshot is not None and snapshot < table.current_snapshot_id:
        raise BadInputError(
            f"{table.namespace}.{table.name} at past snapshot {snapshot}: this service does not say how it types "
            f"the inferred partition columns ({', '.join(inferred)}) there (its plan has no partition-types), and "
            "that snapshot's files may type them otherwise than today's; upgrade the service, or read with "
            "catalog= (the catalog itself)",
            details={"field": "snapshot", "columns": inferred},
        )
    return today


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
