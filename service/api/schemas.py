"""Request and response bodies of the REST API (pydantic v2).

JSON keys are kebab-case, as in the Iceberg REST catalog (``snapshot-id``, ``next-page-token``);
snake_case names are accepted on input too. The per-path statistics rows are the exception: they
are DuckLake's ``ducklake_file_variant_stats`` rows, with DuckLake's column names
(``variant_path``, ``min_value``...), exactly as ``shredcat stats`` prints them.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr

from service.catalog.validate import MAX_COUNT, MAX_NAME_BYTES, MAX_PATH_BYTES, check_object_name
from service.errors import ShredcatError

# The response bodies the client reads too, declared once there (re-exported: the routes and the
# OpenAPI document name them from here).
from service.wire import ApiModel
from service.wire import CommitResponse as CommitResponse
from service.wire import DataFile as DataFile
from service.wire import DropResponse as DropResponse
from service.wire import FileExplanation as FileExplanation
from service.wire import HealthResponse as HealthResponse
from service.wire import ListFilesResponse as ListFilesResponse
from service.wire import ListNamespacesResponse as ListNamespacesResponse
from service.wire import ListSnapshotsResponse as ListSnapshotsResponse
from service.wire import ListTablesResponse as ListTablesResponse
from service.wire import NamespaceResponse as NamespaceResponse
from service.wire import PlanFile as PlanFile
from service.wire import PlanMetrics as PlanMetrics
from service.wire import PlanResponse as PlanResponse
from service.wire import PlanWarning as PlanWarning
from service.wire import RemoveFilesResponse as RemoveFilesResponse
from service.wire import Snapshot as Snapshot
from service.wire import StandbyHealth as StandbyHealth
from service.wire import TableColumn as TableColumn
from service.wire import TableIdentifier as TableIdentifier
from service.wire import TableResponse as TableResponse

#: Lengths are checked in characters here, in UTF-8 bytes by the catalog's validator.
Count = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
Name = Annotated[StrictStr, Field(min_length=1, max_length=MAX_NAME_BYTES)]


def _object_name(name: str) -> str:
    try:
        return check_object_name("object", name)
    except ShredcatError as e:
        raise ValueError(e.message.replace("invalid object name", "invalid name")) from None


#: Namespace and table names travel in URL paths: no '/' (an encoded %2F is refused before routing),
#: no dot segment; the catalog's own check (:func:`~service.catalog.validate.check_object_name`).
ObjectName = Annotated[
    StrictStr,
    Field(min_length=1, max_length=MAX_NAME_BYTES, pattern=r"^[^/\x00-\x1f\x7f]+$"),
    AfterValidator(_object_name),
]
FilePath = Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATH_BYTES)]


class RequestModel(ApiModel):
    model_config = ConfigDict(extra="forbid")


# --- errors -----------------------------------------------------------------------------------


class ErrorDetail(ApiModel):
    type: str = Field(description="Stable machine-readable error name (`not_found`, `invalid_stats`...).")
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    code: int = Field(description="The HTTP status, repeated.")


class ErrorResponse(ApiModel):
    error: ErrorDetail

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "error": {
                        "type": "not_found",
                        "message": "table lake.events does not exist",
                        "details": {"table": "lake.events"},
                        "code": 404,
                    }
                }
            ]
        }
    )


# --- namespaces -------------------------------------------------------------------------------


class CreateNamespaceRequest(RequestModel):
    namespace: list[ObjectName] = Field(min_length=1, max_length=1, description="One level: `[\"lake\"]`.")
    properties: dict[str, str] = Field(
        default_factory=dict, description="Not supported: must be empty (accepted for Iceberg clients)."
    )

    model_config = ConfigDict(json_schema_extra={"examples": [{"namespace": ["lake"]}]})


# --- tables -----------------------------------------------------------------------------------


class PartitionColumnSpec(RequestModel):
    name: Name
    type: Annotated[StrictStr, Field(min_length=1, max_length=64, description="A DuckLake type name (`date`, `int64`, `varchar`, `decimal(10,2)`...).")]


class CreateTableRequest(RequestModel):
    name: ObjectName
    variant_columns: list[Name] | None = Field(
        default=None,
        max_length=1000,
        description="The table's Variant columns (dotted names for Variants inside structs).",
    )
    infer_from: FilePath | None = Field(
        default=None,
        description="Or: a Parquet file inside the warehouse roots whose Variant columns the table takes "
        "(the file itself is not registered).",
    )
    partition_columns: list[PartitionColumnSpec] | None = Field(
        default=None,
        max_length=100,
        description="Hive partition columns with declared types, in path order (otherwise partition columns "
        "come from the first files committed, typed as Spark infers them). Every file must then have exactly "
        "these partition columns.",
    )
    location: FilePath | None = Field(
        default=None,
        description="The table's base path: only `name=value` directory segments below it are partition values.",
    )

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"name": "events", "variant-columns": ["v"]},
                {"name": "events", "infer-from": "/data/lake/events/part-0.parquet"},
                {
                    "name": "events",
                    "variant-columns": ["v"],
                    "partition-columns": [{"name": "event_date", "type": "date"}],
                    "location": "s3://lake/events/",
                },
            ]
        }
    )


# --- statistics rows (DuckLake's names) ---------------------------------------------------------


class VariantStatsRow(BaseModel):
    """One ``ducklake_file_variant_stats`` row of a file, plus its Variant column."""

    model_config = ConfigDict(extra="forbid")

    column: Name
    variant_path: Annotated[StrictStr, Field(min_length=1, max_length=MAX_PATH_BYTES)]
    shredded_type: Annotated[StrictStr, Field(min_length=1, max_length=64)]
    column_size_bytes: Count
    value_count: Count
    null_count: Count
    min_value: StrictStr | None = None
    max_value: StrictStr | None = None
    contains_nan: StrictBool | None = None
    extra_stats: StrictStr | None = None


class VariantStatsRowIn(VariantStatsRow):
    #: ``shredcat stats`` prints the file on every row; accepted (must equal the file's path).
    file: StrictStr | None = None


class ColumnStatsRow(BaseModel):
    """One ``ducklake_file_column_stats`` row of a file (a plain column, or a partition column's
    constant value), with the column's name and the type its bounds are in (DuckLake keeps the
    type in ``ducklake_column``; a file may have another type than the table's)."""

    model_config = ConfigDict(extra="forbid")

    column: Name
    column_type: Annotated[StrictStr, Field(min_length=1, max_length=64)]
    column_size_bytes: Count
    value_count: Count
    null_count: Count
    min_value: StrictStr | None = None
    max_value: StrictStr | None = None
    contains_nan: StrictBool | None = None
    extra_stats: StrictStr | None = None


class ColumnStatsRowIn(ColumnStatsRow):
    #: ``shredcat stats --columns`` prints the file on every row; accepted (must equal the file's path).
    file: StrictStr | None = None


class PartitionValueOut(ApiModel):
    """A partition value of a file: ``raw`` the unescaped path text (None for
    ``__HIVE_DEFAULT_PARTITION__``), ``type`` the type it is stored as, ``value`` rendered in it."""

    column: str
    raw: str | None
    type: str
    value: str | None


class ShreddedObjectRow(ApiModel):
    """An object the footer proves fully shredded in the file (``service.stats.objects``): in every
    row it holds no field but ``fields``, so plans prune a file for lacking a field (issue 34)."""

    model_config = ConfigDict(extra="forbid")

    column: Name
    variant_path: Annotated[StrictStr, Field(min_length=1, max_length=MAX_NAME_BYTES * 4)]
    fields: list[Name] = Field(max_length=10_000)


class FileStatsBody(RequestModel):
    """A data file with the statistics shredcat's extractor found (``service.stats.extract``)."""

    path: FilePath
    file_size_bytes: Count
    record_count: Count
    footer_size: Count
    content_id: Annotated[StrictStr, Field(max_length=MAX_NAME_BYTES)] | None = None
    variant_columns: list[Name] = Field(max_length=1000)
    #: At most SHREDCAT_MAX_STATS_ROWS_PER_FILE rows (413 beyond).
    variant_stats: list[VariantStatsRowIn] = Field(default_factory=list)
    #: Plain columns' rows (optional; partition values are read from the path by the server).
    column_stats: list[ColumnStatsRowIn] = Field(default_factory=list)
    #: Accepted so that a loadFileStats answer can be committed again as it is; ignored: the
    #: catalog reads partition values from the path.
    partition_values: list[PartitionValueOut] = Field(default_factory=list, max_length=1000)
    #: Optional: without them nothing is proven absent (the file is kept, as before).
    shredded_objects: list[ShreddedObjectRow] = Field(default_factory=list, max_length=1000)


_FILE_EXAMPLE = {
    "path": "s3://lake/events/part-0.parquet",
    "file-size-bytes": 52311,
    "record-count": 1000,
    "footer-size": 2113,
    "content-id": "\"9b2cf535f27731c974343645a3985328\"",
    "variant-columns": ["v"],
    "variant-stats": [
        {
            "column": "v",
            "variant_path": '"user"."id"',
            "shredded_type": "int64",
            "column_size_bytes": 8123,
            "value_count": 1000,
            "null_count": 0,
            "min_value": "0",
            "max_value": "999",
            "contains_nan": None,
            "extra_stats": None,
        }
    ],
}


class FileStatsResponse(ApiModel):
    path: str
    file_size_bytes: int
    record_count: int
    footer_size: int
    content_id: str | None
    variant_columns: list[str]
    variant_stats: list[VariantStatsRow]
    column_stats: list[ColumnStatsRow] = Field(default_factory=list)
    partition_values: list[PartitionValueOut] = Field(default_factory=list)
    shredded_objects: list[ShreddedObjectRow] = Field(default_factory=list)

    model_config = ConfigDict(json_schema_extra={"examples": [_FILE_EXAMPLE]})


# --- commits and removals -----------------------------------------------------------------------


class CreateIfMissing(RequestModel):
    variant_columns: list[Name] | None = Field(
        default=None,
        max_length=1000,
        description="The Variant columns of the table created (dotted names for Variants inside structs); "
        "default: those of the committed files, each once, in the order they first appear.",
    )


class CommitRequest(RequestModel):
    paths: list[FilePath] | None = Field(
        default=None, description="Files the service reads itself (inside the warehouse roots)."
    )
    prefixes: list[FilePath] | None = Field(
        default=None,
        description="Directories or object-store prefixes (inside the warehouse roots) whose data files the "
        "service lists and reads itself: recursively, `*.parquet`, skipping names starting with `_` or `.` "
        "(`_SUCCESS`, `_temporary/`) but keeping Hive `name=value` directories. The listed files count "
        "against the files-per-commit limit.",
    )
    files: list[FileStatsBody] | None = Field(
        default=None, description="Files with statistics extracted on the client side."
    )
    remove: list[FilePath] | None = Field(
        default=None,
        description="Live files ended in the same snapshot, before the new files are added: a replacement "
        "(Spark's overwrite, a compaction) that readers see whole or not at all. A path that is not live is "
        "404, unless `remove-missing-ok`. Counts against the files-per-commit limit on its own.",
    )
    remove_missing_ok: StrictBool = Field(
        default=False, description="Report paths of `remove` that are not live in `missing` instead of failing."
    )
    create_if_missing: CreateIfMissing | None = Field(
        default=None,
        description="Create the table (and its namespace) when missing, in the commit's own transaction: a "
        "commit that fails leaves no table behind. An existing table is used as it is.",
    )

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"paths": ["/data/lake/events/part-0.parquet", "/data/lake/events/part-1.parquet"]},
                {"paths": ["/data/lake/events/part-0.parquet"], "create-if-missing": {"variant-columns": ["v"]}},
                {"prefixes": ["s3://lake/events/date=2026-11-23/"]},
                {"files": [_FILE_EXAMPLE]},
                {
                    "paths": ["/data/lake/events/part-2-compacted.parquet"],
                    "remove": ["/data/lake/events/part-0.parquet", "/data/lake/events/part-1.parquet"],
                },
            ]
        }
    )


class RemoveFilesRequest(RequestModel):
    paths: list[FilePath] = Field(min_length=1)
    missing_ok: StrictBool = False

    model_config = ConfigDict(json_schema_extra={"examples": [{"paths": ["s3://lake/events/part-0.parquet"]}]})


# --- reading ------------------------------------------------------------------------------------


class TableStatsResponse(ApiModel):
    snapshot_id: int
    file_count: int
    columns: dict[str, list[dict[str, Any]]] = Field(
        description="Per Variant column, its global path stats as objects of DuckLake's global JSON array."
    )
    extra_stats: dict[str, str | None] = Field(
        description="Per Variant column, ``ducklake_table_column_stats.extra_stats`` (DuckLake's JSON text)."
    )


# --- plan -----------------------------------------------------------------------------------------


class PlanRequest(RequestModel):
    filter: Any = Field(
        default=None,
        description="An Iceberg-style JSON expression, with a `variant` term for Variant paths "
        "(see the pruning docs). Exactly one of `filter` and `sql`.",
    )
    # No max_length here: the predicate's own limit (SHREDCAT_MAX_PREDICATE_LENGTH, checked before
    # parsing) answers 413 at any length, and the request body limit bounds what is read at all.
    sql: StrictStr | None = Field(
        default=None, description="A Spark SQL predicate, e.g. `variant_get(v, '$.user.id', 'bigint') = 42`."
    )
    snapshot_id: Annotated[StrictInt, Field(ge=0, le=2**63 - 1)] | None = None
    min_snapshot_id: Annotated[StrictInt, Field(ge=0, le=2**63 - 1)] | None = Field(
        default=None,
        description="Answer from a database that holds at least this snapshot (the `snapshot-id` your own "
        "commit answered): a hot standby that has replayed it, else the primary (read your writes).",
    )
    explain: StrictBool = False
    page_token: Annotated[StrictStr, Field(max_length=4096)] | None = None
    page_size: Annotated[StrictInt, Field(ge=1)] = 1000
    counts: StrictBool = Field(
        default=False,
        description="Count the whole answer on the first page (`metrics`) even when it spans several "
        "pages; without it those counts are null unless the answer fits in the first page.",
    )
    session_time_zone: Annotated[StrictStr, Field(max_length=64)] | None = Field(
        default=None,
        description="The time zone timestamp literals without a zone are read in, as Spark's "
        "`spark.sql.session.timeZone` (a region such as `Europe/Paris`, or an offset such as `+02:00`); "
        "default UTC. A comparison whose answer hinges on the zone's transitions (a timestamp_ntz term "
        "against an instant, a timestamp partition column) is then unknown: it never prunes.",
    )

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {"sql": "variant_get(v, '$.user.id', 'bigint') = 42"},
                {
                    "filter": {
                        "type": "eq",
                        "term": {"type": "variant", "column": "v", "path": "$.user.id", "as": "bigint"},
                        "value": 42,
                    },
                    "explain": True,
                },
            ]
        }
    )


# --- verification -------------------------------------------------------------------------------


class VerifyRequest(RequestModel):
    sample: Annotated[StrictInt, Field(ge=1)] | None = Field(
        default=None, description="Verify this many live files chosen at random."
    )
    all: StrictBool = Field(default=False, description="Verify every live file.")
    seed: StrictInt | None = Field(default=None, description="Makes the random sample repeatable.")

    model_config = ConfigDict(json_schema_extra={"examples": [{"sample": 100}, {"all": True}]})


class StatsDifference(ApiModel):
    field: str = Field(
        description="A file attribute (`record_count`...), `row` (a stats row on one side only) or a stats "
        "row's attribute (`min_value`...)."
    )
    stored: Any
    extracted: Any
    column: str | None = None
    #: DuckLake's name, as in the stats rows (and in ``shredcat verify --json``).
    variant_path: str | None = Field(default=None, alias="variant_path")


class FileVerification(ApiModel):
    path: str
    status: Literal["different", "unverifiable"]
    differences: list[StatsDifference] = Field(default_factory=list)
    reason: str | None = Field(default=None, description="Why the file could not be read (unverifiable).")


class VerifyResponse(ApiModel):
    table: str
    snapshot_id: int = Field(description="The files live at this snapshot were checked.")
    live_files: int
    chosen: int = Field(description="Files chosen: the sample, or every live file.")
    checked: int = Field(description="Files compared or found unreadable.")
    matching: int
    complete: bool = Field(description="False when the time limit ended the check before every chosen file.")
    problems: list[FileVerification] = Field(description="Every file whose stored stats differ, or unreadable.")
