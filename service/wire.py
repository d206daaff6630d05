"""The JSON bodies the server sends and the client reads, each declared once (pydantic v2): the
REST API's response models (:mod:`service.api.schemas` uses them, so they are what the OpenAPI
document describes) and what :mod:`service.client` parses responses with.

Keys are kebab-case (``snapshot-id``, ``next-page-token``), made from the field names by one alias
generator; snake_case names are accepted on input too. Only pydantic is imported here: the client
imports this module, and must not bring in FastAPI, SQLAlchemy or the catalog.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


def _kebab(name: str) -> str:
    return name.replace("_", "-")


class ApiModel(BaseModel):
    model_config = ConfigDict(
        alias_generator=_kebab, validate_by_name=True, validate_by_alias=True, serialize_by_alias=True
    )


# --- tables -----------------------------------------------------------------------------------


class TableIdentifier(ApiModel):
    namespace: list[str]
    name: str


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
    variant_columns: list[str]
    live_file_count: int
    live_record_count: int
    live_bytes: int
    current_snapshot_id: int
    snapshot_count: int
    last_commit_time: datetime | None
    begin_snapshot: int
    #: Every column: Variant, plain and partition, in column order.
    columns: list[TableColumn] = Field(default_factory=list)
    partition_columns: list[str] = Field(default_factory=list)
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


# --- commits ----------------------------------------------------------------------------------


class CommitResponse(ApiModel):
    snapshot_id: int | None = Field(description="The new snapshot; null when every file was already live.")
    added: list[str]
    unchanged: list[str]
    restated: list[str] = Field(
        description="Files given by path, already live with the same content, whose stored statistics differed "
        "from the file's: their statistics were replaced at the new snapshot."
    )
    replayed: bool = Field(description="True when answered from an earlier commit with the same Idempotency-Key.")
    removed: list[str] = Field(default_factory=list, description="Files of `remove` ended at this snapshot.")
    missing: list[str] = Field(
        default_factory=list, description="Files of `remove` that were not live (with `remove-missing-ok`)."
    )


class RemoveFilesResponse(ApiModel):
    snapshot_id: int | None
    removed: list[str]
    missing: list[str]


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
    files: list[DataFile]
    next_page_token: str | None = None


class Snapshot(ApiModel):
    snapshot_id: int
    snapshot_time: datetime
    changes_made: str
    added_files: int
    removed_files: int


class ListSnapshotsResponse(ApiModel):
    snapshots: list[Snapshot]
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
    suggestions: list[str] = Field(
        default_factory=list,
        description="Close shredded paths of the column (`path_not_shredded`), or the types to ask for "
        "(`type_not_comparable`).",
    )


class PlanResponse(ApiModel):
    status: Literal["completed"] = "completed"
    snapshot_id: int | None
    files: list[PlanFile]
    next_page_token: str | None = None
    metrics: PlanMetrics
    explain: list[FileExplanation] | None = None
    warnings: list[PlanWarning] = Field(
        default_factory=list, description="On the first page only (like the counts); empty on follow-up pages."
    )
