"""The catalog: registered files, per-file Variant stats, snapshots and exact global stats, on SQLite
and PostgreSQL.

:class:`~service.catalog.service.Catalog` is the library API and the only database boundary: every
read, write and plan the API, the CLI and Spark need is one of its methods (the dashboard's own
reads are :mod:`.admin`'s, run through a Catalog), and :mod:`.service` runs each as one (retried)
transaction; a commit is the pipeline of :mod:`.commit`. Only :mod:`.repository` (tables, commits,
path counters and global stats, reads, idempotency keys) and :mod:`.planner` (a compiled stats
condition translated to SQL) write SQL. :mod:`.validate` is the one validator of what a writer
commits, :mod:`.encode` prepares a commit batch's rows, :mod:`.results` holds the frozen result
types. Schema: :mod:`.models` (created by the Alembic migrations, :func:`.db.upgrade_to_head`).
"""

from service.catalog.results import (
    BulkLoadResult,
    Candidate,
    CommitResult,
    DataFileInfo,
    FileBound,
    FileExplanation,
    NamespaceInfo,
    PathBounds,
    PathCoverage,
    PathHealth,
    PlannedFile,
    PlannedFilesPage,
    PlanResult,
    RecentSnapshot,
    RefreshResult,
    RemoveResult,
    SnapshotInfo,
    TableColumn,
    TableGlobalStats,
    TableInfo,
)
from service.catalog.service import Catalog

__all__ = [
    "BulkLoadResult",
    "Candidate",
    "Catalog",
    "CommitResult",
    "DataFileInfo",
    "FileBound",
    "FileExplanation",
    "NamespaceInfo",
    "PathBounds",
    "PathCoverage",
    "PathHealth",
    "PlanResult",
    "PlannedFile",
    "PlannedFilesPage",
    "RecentSnapshot",
    "RefreshResult",
    "RemoveResult",
    "SnapshotInfo",
    "TableColumn",
    "TableGlobalStats",
    "TableInfo",
]
