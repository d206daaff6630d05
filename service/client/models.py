"""What the client's calls return: a frozen dataclass per REST response, each parsed from the
server's JSON in its ``from_json`` (through the server's own response model, :mod:`service.wire`,
where the response has one there), and the DuckLake-shaped statistics kept as the plain dicts the
API sends, typed by ``TypedDict`` (their keys are the API's: kebab-case, DuckLake's snake_case
inside the statistics rows)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict, TypeVar, cast

from pydantic import BaseModel

from service import wire

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


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


_D = TypeVar("_D", bound="DataclassInstance")


def _view(cls: type[_D], model: BaseModel, **given: Any) -> _D:
    """The client's frozen dataclass ``cls`` of a parsed response ``model``: each field read from
    the model's attribute of the same name (a list as a tuple), or taken from ``given``."""
    values = dict(given)
    for f in fields(cls):
        if f.name not in values:
            v = getattr(model, f.name)
            values[f.name] = tuple(v) if isinstance(v, list) else v
    return cls(**values)


@dataclass(frozen=True, slots=True)
class Health:
    status: str
    version: str
    #: ``sqlite`` or ``postgresql``.
    backend: str | None
    schema_revision: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Health:
        return cls(d["status"], d["version"], d.get("backend"), d.get("schema-revision"))


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    #: Iceberg namespace properties; shredcat sets ``begin-snapshot``.
    properties: Mapping[str, str]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Namespace:
        return cls(".".join(d["namespace"]), dict(d.get("properties") or {}))


@dataclass(frozen=True, slots=True)
class Table:
    namespace: str
    name: str
    table_id: int
    variant_columns: tuple[str, ...]
    live_file_count: int
    live_record_count: int
    live_bytes: int
    current_snapshot_id: int
    snapshot_count: int
    last_commit_time: datetime | None
    begin_snapshot: int
    #: Every column (Variant, plain, partition), in column order (empty from a server before
    #: plain-column statistics).
    columns: tuple[TableColumn, ...] = ()
    partition_columns: tuple[str, ...] = ()
    location: str | None = None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Table:
        w = wire.TableResponse.model_validate(d)
        return _view(
            cls,
            w,
            namespace=".".join(w.identifier.namespace),
            name=w.identifier.name,
            columns=tuple(_view(TableColumn, c) for c in w.columns),
        )


@dataclass(frozen=True, slots=True)
class TableColumn:
    """A column of a table: ``kind`` ``variant``, ``plain`` or ``partition``; ``type`` a DuckLake
    type name (``variant`` for a Variant column)."""

    name: str
    type: str
    kind: str
    declared: bool = False


@dataclass(frozen=True, slots=True)
class CommitResult:
    snapshot_id: int | None
    added: tuple[str, ...]
    unchanged: tuple[str, ...]
    replayed: bool
    #: The Idempotency-Key the commit was sent with.
    idempotency_key: str | None = None
    #: Files given by path whose stored statistics differed from the file's and were replaced.
    restated: tuple[str, ...] = ()
    #: Files of ``remove`` ended in the same snapshot.
    removed: tuple[str, ...] = ()
    #: Files of ``remove`` that were not live (with ``remove_missing_ok=True``).
    missing: tuple[str, ...] = ()

    @classmethod
    def from_json(cls, d: Mapping[str, Any], idempotency_key: str | None) -> CommitResult:
        # removed and missing: absent from servers before atomic replacement (empty by default).
        return _view(cls, wire.CommitResponse.model_validate(d), idempotency_key=idempotency_key)


@dataclass(frozen=True, slots=True)
class RemoveResult:
    snapshot_id: int | None
    removed: tuple[str, ...]
    missing: tuple[str, ...]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> RemoveResult:
        return _view(cls, wire.RemoveFilesResponse.model_validate(d))


@dataclass(frozen=True, slots=True)
class DataFile:
    path: str
    file_size_bytes: int
    record_count: int
    footer_size: int
    content_id: str | None
    begin_snapshot: int
    end_snapshot: int | None



@dataclass(frozen=True, slots=True)
class FilesPage:
    snapshot_id: int
    files: tuple[DataFile, ...]
    next_page_token: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> FilesPage:
        w = wire.ListFilesResponse.model_validate(d)
        return _view(cls, w, files=tuple(_view(DataFile, f) for f in w.files))


@dataclass(frozen=True, slots=True)
class Snapshot:
    snapshot_id: int
    snapshot_time: datetime
    changes_made: str
    added_files: int
    removed_files: int



@dataclass(frozen=True, slots=True)
class SnapshotsPage:
    snapshots: tuple[Snapshot, ...]
    next_page_token: str | None

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> SnapshotsPage:
        w = wire.ListSnapshotsResponse.model_validate(d)
        return _view(cls, w, snapshots=tuple(_view(Snapshot, s) for s in w.snapshots))


@dataclass(frozen=True, slots=True)
class PlanFile:
    path: str
    file_size_bytes: int
    record_count: int



@dataclass(frozen=True, slots=True)
class FileExplanation:
    path: str
    kept: bool
    reason: str



@dataclass(frozen=True, slots=True)
class PlanWarning:
    """A term the plan could prune nothing on: ``type`` is ``path_not_shredded``,
    ``type_not_comparable``, ``term_not_used`` or ``predicate_prunes_nothing``; ``column`` and ``path`` (the JSON path
    as written) are None for the whole predicate."""

    type: str
    message: str
    column: str | None = None
    path: str | None = None
    #: Close shredded paths, or the types to ask for.
    suggestions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PlanResult:
    """One page of a plan. The counts cover the whole answer (every page) and are None on the pages
    fetched with a page token."""

    snapshot_id: int | None
    files: tuple[PlanFile, ...]
    next_page_token: str | None
    files_considered: int | None
    files_pruned: int | None
    files_kept: int | None
    rows_skipped: int | None
    bytes_skipped: int | None
    explain: tuple[FileExplanation, ...] | None = None
    #: On the first page only, like the counts (empty on the others).
    warnings: tuple[PlanWarning, ...] = ()

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> PlanResult:
        w = wire.PlanResponse.model_validate(d)
        return _view(
            cls,
            w.metrics,
            snapshot_id=w.snapshot_id,
            files=tuple(_view(PlanFile, f) for f in w.files),
            next_page_token=w.next_page_token,
            explain=None if w.explain is None else tuple(_view(FileExplanation, x) for x in w.explain),
            warnings=tuple(_view(PlanWarning, x) for x in w.warnings),
        )

    @staticmethod
    def merged(pages: Sequence[PlanResult]) -> PlanResult:
        """The pages of one plan as one result: every page's files (and explanations), the first
        page's snapshot, counts and warnings; the kept and pruned file counts, when the server did
        not count, from the files of all pages."""
        first = pages[0]
        explain = None if first.explain is None else tuple(x for p in pages for x in p.explain or ())
        files = tuple(f for p in pages for f in p.files)
        merged = replace(first, files=files, next_page_token=None, explain=explain)
        if first.files_kept is None and first.files_considered is not None:
            merged = replace(merged, files_kept=len(files), files_pruned=first.files_considered - len(files))
        return merged


def namespace_names(d: Mapping[str, Any]) -> list[str]:
    return [".".join(n) for n in d["namespaces"]]


def table_names(d: Mapping[str, Any]) -> list[str]:
    return [i["name"] for i in d["identifiers"]]


def dropped_snapshot_id(d: Mapping[str, Any]) -> int | None:
    """The snapshot of a drop."""
    return cast(int | None, d["snapshot-id"])


def file_stats_json(d: Any) -> FileStatsJSON:
    return cast(FileStatsJSON, d)


def table_stats_json(d: Any) -> TableStatsJSON:
    return cast(TableStatsJSON, d)
