"""The JSON bodies the server sends and the client reads, each declared once (pydantic v2): the
REST API's response models (:mod:`service.api.schemas` uses them, so they are what the OpenAPI
document describes) and what :mod:`service.client` returns (it parses responses into them).

Keys are kebab-case (``snapshot-id``, ``next-page-token``), made from the field names by one alias
generator; snake_case names are accepted on input too. Models are frozen and their arrays are
tuples: the client hands them to its users as values. Only pydantic is imported here: the client
imports this module, and must not bring in FastAPI, SQLAlchemy or the catalog.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class ApiModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=_kebab, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True, frozen=True
    )

    @classmethod
    def of(cls, source: object) -> Self:
        """This model read from ``source`` by field name: an object's attributes (the catalog's
        results), a mapping's keys, nested models alike. By name only: on an object each kebab-case
        alias is looked up first and fails, which made a 10,000-file page twice as slow to build as
        with the constructor (by name it is as fast)."""
        return cls.model_validate(source, from_attributes=True, by_alias=False, by_name=True)


# --- namespaces -------------------------------------------------------------------------------


class NamespaceResponse(ApiModel):
    namespace: tuple[str, ...]
    properties: dict[str, str] = Field(default_factory=dict)

    model_config = ConfigDict(
        json_schema_extra={"examples": [{"namespace": ["lake"], "properties": {"begin-snapshot": "1"}}]}
    )

    @property
    def name(self) -> str:
        return ".".join(self.namespace)


class ListNamespacesResponse(ApiModel):
    namespaces: tuple[tuple[str, ...], ...]
    next_page_token: str | None = None


class DropResponse(ApiModel):
    #: The snapshot of the drop (of a namespace or a table).
    snapshot_id: int | None


# --- tables -----------------------------------------------------------------------------------


class TableIdentifier(ApiModel):
    namespace: tuple[str, ...]
    name: str


class ListTablesResponse(ApiModel):
    identifiers: tuple[TableIdentifier, ...]
    next_page_token: str | None = None


class TableColumn(ApiModel):
    """A column of the table: ``kind`` ``variant``, ``plain`` (a primitive column or a dotted
    struct leaf, typed as the first file that had it) or ``partition`` (Hive; declared or
    inferred type)."""

    name: str
    type: str
    kind: Literal["variant", "plain", "partition"]
    declared: bool = False


class TableResponse(ApiModel):
    identifier: TableIdentifier
    table_id: int
    variant_columns: tuple[str, ...]
    live_file_count: int
    live_record_count: int
    live_bytes: int
    current_snapshot_id: int
    snapshot_count: int
    last_commit_time: datetime | None
    begin_snapshot: int
    #: Every column: Variant, plain and partition, in column order.
    columns: tuple[TableColumn, ...] = Field(default_factory=tuple)
    partition_columns: tuple[str, ...] = Field(default_factory=tuple)
    location: str | None = None

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "identifier": {"namespace": ["lake"], "name": "events"},
                    "table-id": 1,
                    "variant-columns": ["v"],
                    "columns": [
                        {"name": "v", "type": "variant", "kind": "variant", "declared": False},
                        {"name": "id", "type": "int64", "kind": "plain", "declared": False},
                        {"name": "event_date", "type": "date", "kind": "partition", "declared": False},
                    ],
                    "partition-columns": ["event_date"],
                    "live-file-count": 8,
                    "live-record-count": 8000,
                    "live-bytes": 123456,
                    "current-snapshot-id": 5,
                    "snapshot-count": 3,
                    "last-commit-time": "2024-05-01T12:00:00Z",
                    "begin-snapshot": 2,
                }
            ]
        }
    )

    @property
    def namespace(self) -> str:
        return ".".join(self.identifier.namespace)

    @property
    def name(self) -> str:
        return self.identifier.name


# --- commits ----------------------------------------------------------------------------------


class CommitResponse(ApiModel):
    snapshot_id: int | None = Field(description="The new snapshot; null when every file was already live.")
    added: tuple[str, ...]
    unchanged: tuple[str, ...]
    restated: tuple[str, ...] = Field(
        description="Files given by path, already live with the same content, whose stored statistics differed "
        "from the file's: their statistics were replaced at the new snapshot."
    )
    replayed: bool = Field(description="True when answered from an earlier commit with the same Idempotency-Key.")
    removed: tuple[str, ...] = Field(default_factory=tuple, description="Files of `remove` ended at this snapshot.")
    missing: tuple[str, ...] = Field(
        default_factory=tuple, description="Files of `remove` that were not live (with `remove-missing-ok`)."
    )


class RemoveFilesResponse(ApiModel):
    snapshot_id: int | None
    removed: tuple[str, ...]
    missing: tuple[str, ...]


# --- reading -----------------------------------------------------------------------------------


class DataFile(ApiModel):
    path: str
    file_size_bytes: int
    record_count: int
    footer_size: int
    content_id: str | None
    begin_snapshot: int
    end_snapshot: int | None


class ListFilesResponse(ApiModel):
    snapshot_id: int
    files: tuple[DataFile, ...]
    next_page_token: str | None = None


class Snapshot(ApiModel):
    snapshot_id: int
    snapshot_time: datetime
    changes_made: str
    added_files: int
    removed_files: int


class ListSnapshotsResponse(ApiModel):
    snapshots: tuple[Snapshot, ...]
    next_page_token: str | None = None


# --- plan -------------------------------------------------------------------------------------


class PlanFile(ApiModel):
    path: str
    file_size_bytes: int
    record_count: int


class PlanMetrics(ApiModel):
    """Counts over the whole answer (every page), on the first page. ``files-considered`` is given
    at the current snapshot; the others when the answer fits in the first page or the request
    asked for ``counts``. Null on follow-up pages (with a page token)."""

    files_considered: int | None
    files_pruned: int | None
    files_kept: int | None
    rows_skipped: int | None
    bytes_skipped: int | None


class FileExplanation(ApiModel):
    path: str
    kept: bool
    reason: str


class PlanWarning(ApiModel):
    """Something the predicate cannot prune on in this table; the candidates are as sound as ever."""

    type: str = Field(
        description="`path_not_shredded` (the path is fully shredded in no live file), `type_not_comparable` "
        "(the path is stored only as types whose bounds do not speak for the requested type), "
        "`term_not_used` (a sub-expression pruning cannot use: an unknown function, LIKE, a literal that "
        "does not parse as the column's type), "
        "`predicate_prunes_nothing` (no file was pruned, because of the warnings before it)."
    )
    column: str | None = Field(default=None, description="The Variant column (null for the whole predicate).")
    path: str | None = Field(default=None, description="The JSON path as written in the predicate.")
    message: str
    suggestions: tuple[str, ...] = Field(
        default_factory=tuple,
        description="Close shredded paths of the column (`path_not_shredded`), or the types to ask for "
        "(`type_not_comparable`).",
    )


class PlanResponse(ApiModel):
    status: Literal["completed"] = "completed"
    snapshot_id: int | None
    files: tuple[PlanFile, ...]
    next_page_token: str | None = None
    metrics: PlanMetrics
    explain: tuple[FileExplanation, ...] | None = None
    warnings: tuple[PlanWarning, ...] = Field(
        default_factory=tuple, description="On the first page only (like the counts); empty on follow-up pages."
    )
    partition_types: dict[str, str | None] | None = Field(
        default=None,
        description="Each partition column's type as the plan read it at `snapshot-id` (null: every value is "
        "NULL): at a past snapshot, an inferred column is typed as that snapshot's files make it (`p=05` and "
        "`p=5`: `int32`, whatever a later `p=a` makes it now), which loadTable (today's types) cannot tell. "
        "On the first page only; null on follow-up pages and from servers before it.",
    )

    # The counts read from the page itself (the client's users did before they were nested).

    @property
    def files_considered(self) -> int | None:
        return self.metrics.files_considered

    @property
    def files_pruned(self) -> int | None:
        return self.metrics.files_pruned

    @property
    def files_kept(self) -> int | None:
        return self.metrics.files_kept

    @property
    def rows_skipped(self) -> int | None:
        return self.metrics.rows_skipped

    @property
    def bytes_skipped(self) -> int | None:
        return self.metrics.bytes_skipped

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    @staticmethod
    def merged(pages: Sequence[PlanResponse]) -> PlanResponse:
        """The pages of one plan as one result: every page's files (and explanations), the first
        page's snapshot, counts and warnings; the kept and pruned file counts, when the server did
        not count, from the files of all pages."""
        first = pages[0]
        explain = None if first.explain is None else tuple(x for p in pages for x in p.explain or ())
        files = tuple(f for p in pages for f in p.files)
        metrics = first.metrics
        if metrics.files_kept is None and metrics.files_considered is not None:
            metrics = metrics.model_copy(
                update={"files_kept": len(files), "files_pruned": metrics.files_considered - len(files)}
            )
        return first.model_copy(update={"files": files, "next_page_token": None, "explain": explain, "metrics": metrics})


# --- health -----------------------------------------------------------------------------------------


class StandbyHealth(ApiModel):
    name: str = Field(description="host:port/database of a hot standby (SHREDCAT_READ_DATABASE_URLS)")
    state: str = Field(description="ok, lagging, down, promoted (each skipped by reads but ok) or unknown")
    lag_seconds: float | None = None
    lag_bytes: int | None = None
    measured_seconds_ago: float | None = Field(
        default=None, description="age of this measure (taken by the reads, not by the probe); null: never"
    )


class HealthResponse(ApiModel):
    status: Literal["ok"]
    #: ``sqlite`` or ``postgresql`` (absent from ``/health/live``).
    backend: str | None = None
    schema_revision: str | None = None
    version: str
    #: Readiness depends on the primary alone: a standby that is down is reported, and skipped.
    standbys: tuple[StandbyHealth, ...] | None = None
