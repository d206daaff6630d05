"""What the client's calls return: the server's own response models (:mod:`service.wire`, frozen
pydantic models, named here as the client has always named them), and the DuckLake-shaped
statistics kept as the plain dicts the API sends, typed by ``TypedDict`` (their keys are the API's:
kebab-case, DuckLake's snake_case inside the statistics rows)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict, cast

from pydantic import Field

from service import wire

# What the calls return: the responses the server's routes are declared with, under the client's
# names. PlanResult is one page of a plan: its counts (``files_considered``...) cover the whole
# answer and are None on the pages fetched with a page token; ``PlanResult.merged`` joins the
# pages of one plan.
from service.wire import DataFile as DataFile
from service.wire import FileExplanation as FileExplanation
from service.wire import HealthResponse as Health
from service.wire import ListFilesResponse as FilesPage
from service.wire import ListSnapshotsResponse as SnapshotsPage
from service.wire import NamespaceResponse as Namespace
from service.wire import PlanFile as PlanFile
from service.wire import PlanResponse as PlanResult
from service.wire import PlanWarning as PlanWarning
from service.wire import RemoveFilesResponse as RemoveResult
from service.wire import Snapshot as Snapshot
from service.wire import TableColumn as TableColumn
from service.wire import TableResponse as Table

__all__ = [
    "ColumnStatsRowJSON", "CommitResult", "DataFile", "FileExplanation", "FileStatsJSON", "FilesPage",
    "GlobalPathStatsJSON", "Health", "Namespace", "PartitionValueJSON", "PlanFile", "PlanResult", "PlanWarning",
    "RemoveResult", "ShreddedObjectJSON", "Snapshot", "SnapshotsPage", "Table", "TableColumn", "TableStatsJSON",
    "VariantStatsRowJSON", "dropped_snapshot_id", "file_stats_json", "namespace_names", "table_names",
    "table_stats_json",
]  # fmt: skip


class VariantStatsRowJSON(TypedDict):
    """One ``ducklake_file_variant_stats`` row of a file, plus its Variant column (bounds as DuckDB
    text)."""

    column: str
    variant_path: str
    shredded_type: str
    column_size_bytes: int
    value_count: int
    null_count: int
    min_value: str | None
    max_value: str | None
    contains_nan: bool | None
    extra_stats: str | None


#: A data file with its statistics: the body of a commit with client-side statistics, and the
#: answer of ``file_stats``.
class ColumnStatsRowJSON(TypedDict):
    """One ``ducklake_file_column_stats`` row of a file (a plain column, or a partition column's
    constant value), with the column's name and the type its bounds are in."""

    column: str
    column_type: str
    column_size_bytes: int
    value_count: int
    null_count: int
    min_value: str | None
    max_value: str | None
    contains_nan: bool | None
    extra_stats: str | None


class PartitionValueJSON(TypedDict):
    """A file's partition value: the path text (None for ``__HIVE_DEFAULT_PARTITION__``), the type
    it is stored as and the value rendered in it."""

    column: str
    raw: str | None
    type: str
    value: str | None


#: An object proven fully shredded in a file: no field but ``fields`` in any row.
ShreddedObjectJSON = TypedDict(
    "ShreddedObjectJSON", {"column": str, "variant-path": str, "fields": list[str]}
)


FileStatsJSON = TypedDict(
    "FileStatsJSON",
    {
        "path": str,
        "file-size-bytes": int,
        "record-count": int,
        "footer-size": int,
        "content-id": str | None,
        "variant-columns": list[str],
        "variant-stats": list[VariantStatsRowJSON],
        "column-stats": NotRequired[list[ColumnStatsRowJSON]],
        "partition-values": NotRequired[list[PartitionValueJSON]],
        "shredded-objects": NotRequired[list[ShreddedObjectJSON]],
    },
)

class GlobalPathStatsJSON(TypedDict):
    """One path of DuckLake's global JSON array (``ducklake_table_column_stats.extra_stats``);
    ``min``, ``max`` and ``contains_nan`` are absent when unknown."""

    field_name: str
    shredded_type: str
    null_count: int
    min: NotRequired[str]
    max: NotRequired[str]
    num_values: int
    contains_nan: NotRequired[bool]
    column_size_bytes: int
    any_valid: bool


#: A table's global statistics: per Variant column its paths, and DuckLake's JSON text of them.
TableStatsJSON = TypedDict(
    "TableStatsJSON",
    {
        "snapshot-id": int,
        "file-count": int,
        "columns": dict[str, list[GlobalPathStatsJSON]],
        "extra-stats": dict[str, str | None],
    },
)




class CommitResult(wire.CommitResponse):
    """A commit's answer (``removed`` and ``missing`` empty from a server before atomic
    replacement), with the Idempotency-Key the commit was sent with: the client's own, never sent
    or read as part of the body."""

    idempotency_key: str | None = Field(default=None, exclude=True)

    @classmethod
    def sent_with(cls, d: Mapping[str, Any], idempotency_key: str) -> CommitResult:
        return cls.model_validate(d).model_copy(update={"idempotency_key": idempotency_key})


def namespace_names(d: Mapping[str, Any]) -> list[str]:
    return [".".join(n) for n in wire.ListNamespacesResponse.model_validate(d).namespaces]


def table_names(d: Mapping[str, Any]) -> list[str]:
    return [i.name for i in wire.ListTablesResponse.model_validate(d).identifiers]


def dropped_snapshot_id(d: Mapping[str, Any]) -> int | None:
    """The snapshot of a drop."""
    return wire.DropResponse.model_validate(d).snapshot_id


def file_stats_json(d: Any) -> FileStatsJSON:
    return cast(FileStatsJSON, _object(d))


def table_stats_json(d: Any) -> TableStatsJSON:
    return cast(TableStatsJSON, _object(d))


def _object(d: Any) -> dict[str, Any]:
    """``d``, a JSON object (what the dict-shaped answers are; anything else is not theirs)."""
    if not isinstance(d, dict):
        raise TypeError(f"expected a JSON object, not {type(d).__name__}")
    return d
