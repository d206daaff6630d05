"""The catalog: registered files, per-file Variant stats, snapshots and exact global stats, on SQLite
and PostgreSQL. Library API: :class:`service.catalog.service.Catalog`; schema:
:mod:`service.catalog.models` (created by the Alembic migrations, :func:`service.catalog.db.upgrade_to_head`).
"""

from service.catalog.results import (
    CommitResult,
    DataFileInfo,
    NamespaceInfo,
    PathCoverage,
    RemoveResult,
    SnapshotInfo,
    TableGlobalStats,
    TableInfo,
)
from service.catalog.service import Catalog

__all__ = [
    "Catalog",
    "CommitResult",
    "DataFileInfo",
    "NamespaceInfo",
    "PathCoverage",
    "RemoveResult",
    "SnapshotInfo",
    "TableGlobalStats",
    "TableInfo",
]
