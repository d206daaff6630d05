"""Frozen values the catalog API returns (never ORM objects)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from service.values import ShreddedType

if TYPE_CHECKING:
    from service.pruning.diagnostics import PlanWarning
    from service.stats.merge import GlobalPathStats


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    namespace_id: int
    name: str
    begin_snapshot: int


@dataclass(frozen=True, slots=True)
class TableColumn:
    """One column of a table: ``kind`` ``variant``, ``plain`` (a primitive column or dotted struct
    leaf) or ``partition`` (Hive); ``type`` a DuckLake type name (``variant`` for a Variant
    column; for an undeclared partition column, Spark's inference merged over the live files, or
    the stored type when no file is live); ``declared`` when the table declares a partition
    column's type."""

    name: str
    type: str
    kind: str
    declared: bool = False


@dataclass(frozen=True, slots=True)
class TableInfo:
    table_id: int
    namespace: str
    name: str
    #: Variant columns, in column order.
    variant_columns: tuple[str, ...]
    live_file_count: int
    live_record_count: int
    live_bytes: int
    #: The last snapshot that changed this table (its creation, a commit, a removal).
    current_snapshot_id: int
    snapshot_count: int
    #: Time of the current snapshot.
    last_commit_time: datetime | None
    begin_snapshot: int
    #: Every column (Variant, plain, partition), in column order.
    columns: tuple[TableColumn, ...] = ()
    #: The base of partition directory segments (None: anywhere in a file's path).
    location: str | None = None

    @property
    def partition_columns(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns if c.kind == "partition")

    @property
    def qualified_name(self) -> str:
        return f"{self.namespace}.{self.name}"


@dataclass(frozen=True, slots=True)
class BulkLoadResult:
    """What a bulk load did: the snapshot it wrote (None when every file was already live and
    unchanged), how many files it added and how many it left unchanged, in how many batches, and
    whether it created the table."""

    snapshot_id: int | None
    added: int
    unchanged: int
    batches: int
    #: Whether the load created its table (``bulk_load(..., create=True)`` and it was missing).
    created: bool = False


@dataclass(frozen=True, slots=True)
class RefreshResult:
    """What :meth:`~service.catalog.Catalog.refresh` did: ``read`` live files had no plain-column
    or partition rows and were read again; ``refreshed`` of them got rows; ``without_columns``
    have no plain or partition column at all (nothing to add)."""

    table: str
    read: int
    refreshed: int
    without_columns: int


@dataclass(frozen=True, slots=True)
class CommitResult:
    """``snapshot_id`` is None when nothing changed (every file was already live, unchanged).

    A replayed result is the original one: it describes the snapshot that commit created, even if
    its files were removed since (the replay changes nothing)."""

    snapshot_id: int | None
    added: tuple[str, ...]
    unchanged: tuple[str, ...]
    #: True when this result was replayed from an idempotency key.
    replayed: bool = False
    #: Live files re-registered by path whose stored stats differed from the file's: their stats
    #: were replaced at ``snapshot_id``.
    restated: tuple[str, ...] = ()
    #: Files ended at ``snapshot_id`` by the commit's ``remove`` list (in the same snapshot as the
    #: files added: a reader sees the table before or after the replacement, never between).
    removed: tuple[str, ...] = ()
    #: Paths of the ``remove`` list that were not live (only with ``remove_missing_ok=True``).
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RemoveResult:
    snapshot_id: int | None
    removed: tuple[str, ...]
    #: Paths that were not live (only with ``missing_ok=True``).
    missing: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DataFileInfo:
    data_file_id: int
    path: str
    file_size_bytes: int
    record_count: int
    footer_size: int
    content_id: str | None
    begin_snapshot: int
    end_snapshot: int | None


@dataclass(frozen=True, slots=True)
class SnapshotInfo:
    snapshot_id: int
    snapshot_time: datetime
    table_id: int | None
    changes_made: str
    added_files: int
    removed_files: int


@dataclass(frozen=True)
class TableGlobalStats:
    """Global Variant stats of a table at ``snapshot_id``: per Variant column (every column is a
    key, possibly with no path) the kept paths, sorted by variant_path."""

    snapshot_id: int
    file_count: int
    columns: Mapping[str, tuple[GlobalPathStats, ...]] = field(default_factory=dict)

    def ducklake_json(self) -> dict[str, str | None]:
        """``ducklake_table_column_stats.extra_stats`` per column, in DuckLake's layout."""
        from service.stats.merge import render_ducklake_json  # the merge: not a read command's

        return {c: render_ducklake_json(paths) for c, paths in self.columns.items()}


@dataclass(frozen=True, slots=True)
class PathCoverage:
    """How widely one Variant path is fully shredded across the live files of a table."""

    column: str
    variant_path: str
    #: Live files of the table.
    live_files: int
    #: Live files in which the path is fully shredded (with any type).
    shredded_files: int
    #: ``(shredded_type, live files)`` for each type the path is shredded as, most files first.
    types: tuple[tuple[str, int], ...]

    @property
    def in_global_stats(self) -> bool:
        """Fully shredded in every live file with one type (so it is in the global stats)."""
        return self.live_files > 0 and len(self.types) == 1 and self.types[0][1] == self.live_files


@dataclass(frozen=True, slots=True)
class PathHealth:
    """How a table's paths (fully shredded in at least one live file) stand: in the global stats,
    shredded with more than one type, or fully shredded in only some live files with one type."""

    in_stats: int
    conflict: int
    partial: int


@dataclass(frozen=True, slots=True)
class RecentSnapshot:
    """A snapshot as the history lists show it, with the table it changed."""

    snapshot_id: int
    snapshot_time: datetime | None
    #: ``namespace.table`` of the table the snapshot changed (also for a dropped table), or None.
    table: str | None
    #: True when that table is live now (so a page about it exists).
    table_live: bool
    namespace: str | None
    table_name: str | None
    changes_made: str
    added_files: int
    removed_files: int


@dataclass(frozen=True, slots=True)
class FileBound:
    """One live file's statistics for one path (bounds as DuckLake strings)."""

    path: str
    value_count: int
    null_count: int
    min_value: str | None
    max_value: str | None
    contains_nan: bool | None


#: An index key as stored (:class:`service.values.IndexKey`): ``min_num``/``max_num`` (int),
#: ``min_real``/``max_real`` (float) or ``min_bin``/``max_bin`` (bytes), by the type's family.
Key = int | float | bytes


@dataclass(frozen=True, slots=True)
class PathBounds:
    """The per-file bounds of one Variant path (what the dashboard's range chart draws): the
    bound strings of at most ``limit`` files, and what the index keys of all of them say about a
    point lookup."""

    column: str
    variant_path: str
    #: The type whose files are in ``files``; None when the path is shredded in no live file.
    shredded_type: ShreddedType | None
    #: ``(type name, live files)`` for every type the path is shredded as, most files first.
    types: tuple[tuple[str, int], ...]
    #: Live files of the table.
    live_files: int
    #: Live files with a stats row of ``shredded_type`` for the path (may exceed ``len(files)``).
    total: int
    #: In ``order``; when there are more than the limit, evenly spaced picks of that order (its
    #: first and last included), so the files drawn span all of them.
    files: tuple[FileBound, ...]
    order: str
    #: Files (of ``total``) that hold values.
    with_values: int = 0
    #: The average share of the files a point lookup at a value of the path keeps, probed at
    #: every finite bound of every one of the ``total`` files and counted from their index keys as
    #: pruning counts, over the ``with_values`` files and the live files any lookup keeps (those
    #: storing the path as another type, or not fully shredding it): see
    #: :func:`service.catalog.estimates.point_keep_ratio`. None when no file holds values.
    point_keep: float | None = None
    #: 0: ``files``, ``with_values`` and ``point_keep`` are read from every one of the ``total``
    #: files. Otherwise the number of files of a sample they were read from instead (a path in
    #: more files than a page can read in time): ``files`` are evenly spaced picks of the sample
    #: in ``order``, ``with_values`` and ``point_keep`` estimates scaled from it to ``total``.
    sample: int = 0


# --- planning ---------------------------------------------------------------------------------


class Candidate(NamedTuple):
    """A file that may hold rows matching the predicate. A named tuple, not a frozen dataclass:
    a page of a dense answer makes 10,000 of them, and a dataclass's ``__init__`` cost as much
    as the database's share of that page."""

    path: str
    file_size_bytes: int
    record_count: int
    data_file_id: int


@dataclass(frozen=True, slots=True)
class FileExplanation:
    path: str
    kept: bool
    reason: str


@dataclass(frozen=True, slots=True)
class PlannedFile:
    """One live file and the plan's decision on it, with the reason in a few words
    (:attr:`service.pruning.evaluator.Verdict.short`)."""

    path: str
    file_size_bytes: int
    record_count: int
    data_file_id: int
    kept: bool
    reason: str


@dataclass(frozen=True, slots=True)
class PlannedFilesPage:
    """A page of :meth:`~service.catalog.admin.AdminReads.plan_files`: files in ``data_file_id`` order from ``offset``."""

    snapshot_id: int
    files: tuple[PlannedFile, ...]
    offset: int
    has_more: bool
    #: With ``with_plan``: :meth:`Catalog.plan`'s first page (the counts and the warnings).
    plan: PlanResult | None = None


@dataclass(frozen=True, slots=True)
class PlanResult:
    snapshot_id: int
    candidates: tuple[Candidate, ...]
    next_page_token: str | None
    #: Counts over the whole answer (not just this page); None on follow-up pages.
    files_considered: int | None
    files_pruned: int | None
    files_kept: int | None
    rows_skipped: int | None
    bytes_skipped: int | None
    explain: tuple[FileExplanation, ...] | None = None
    #: What the predicate cannot prune on here (a path shredded nowhere, a type it is not stored
    #: as); on the first page only, like the counts. Never a change to the candidates.
    warnings: tuple[PlanWarning, ...] = ()
    #: Each partition column's type (a DuckLake name; None: every value NULL) as the plan read it
    #: at ``snapshot_id``: at a past one, an inferred type is that snapshot's files' (a reader of
    #: those files must type them so). On the first page only; None on follow-up pages.
    partition_types: Mapping[str, str | None] | None = None
