"""The catalog: registered files, per-file Variant stats, snapshots and exact global stats, on SQLite
and PostgreSQL; the only package that talks to the database.

:class:`~service.catalog.service.Catalog` is the boundary: every read, write and plan the API, the
CLI, the dashboard and Spark need is a method returning frozen results (:mod:`.results`). Below it
only the storage layer writes SQL: :mod:`.repository` (tables, files, snapshots, stats, keyset
pages) and :mod:`.planner` (a compiled stats condition of :mod:`service.pruning` translated to SQL).
Schema: :mod:`.models` (created by the Alembic migrations, :func:`service.catalog.db.upgrade_to_head`).
"""

from service.catalog.results import (
    Candidate,
    CommitResult,
    DataFileInfo,
    FileBound,
    FileExplanation,
    NamespaceInfo,
    PathBounds,
    PathCoverage,
    PlanResult,
    RecentSnapshot,
    RemoveResult,
    SnapshotInfo,
    TableGlobalStats,
    TableInfo,
)
from service.catalog.service import Catalog

__all__ = [
    "Candidate",
    "Catalog",
    "CommitResult",
    "DataFileInfo",
    "FileBound",
    "FileExplanation",
    "NamespaceInfo",
    "PathBounds",
    "PathCoverage",
    "PlanResult",
    "RecentSnapshot",
    "RemoveResult",
    "SnapshotInfo",
    "TableGlobalStats",
    "TableInfo",
]
