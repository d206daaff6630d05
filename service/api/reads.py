"""Reading a table: its files (paginated), one file's stats, global stats, snapshots."""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query

from service import keyset
from service.api.auth import Principal, require_reader
from service.api.deps import (
    COMMON,
    AppContext,
    check_page_size,
    decode_page_token,
    error_responses,
    field_error,
    get_catalog,
    get_ctx,
)
from service.api.namespaces import NamespaceName
from service.api.paths import lookup_path
from service.api.schemas import (
    ColumnStatsRow,
    FileStatsResponse,
    ListFilesResponse,
    ListSnapshotsResponse,
    PartitionValueOut,
    ShreddedObjectRow,
    TableStatsResponse,
    VariantStatsRow,
)
from service.api.tables import MinSnapshotId, TableName
from service.catalog import Catalog
from service.stats.model import ColumnStats
from service.values import format_bound

router = APIRouter(prefix="/v1/namespaces/{namespace}/tables/{table}", tags=["files"])

SnapshotId = Annotated[
    int | None,
    Query(alias="snapshot-id", ge=0, le=2**63 - 1, description="Read as of this snapshot (default: current)."),
]
PageToken = Annotated[
    str | None, Query(alias="page-token", max_length=4096, description="`next-page-token` of the previous page.")
]
PageSize = Annotated[int, Query(alias="page-size", ge=1, description="At most SHREDCAT_MAX_PAGE_SIZE.")]


def _listing(*scope: str | None) -> str:
    """What a listing's page token is bound to (the table, and the files' prefix), hashed."""
    return hashlib.sha256(json.dumps(scope).encode()).hexdigest()[:16]


def _listing_token(token: str, listing: str, what: str) -> dict[str, Any]:
    """The page token's document, refused when another listing (``what``) made it: a token reused
    on another table listed that table's rows after the other's key, without a word."""
    doc = decode_page_token(token, "query.page-token")
    made_by = doc.get("listing")
    # A token of a server from before this check carries none (a rolling upgrade's pages go on).
    if made_by is not None and made_by != listing:
        raise field_error("query.page-token", f"the page token belongs to another {what}")
    return doc


def _int_or_none(v: object, field: str) -> int | None:
    if v is None:
        return None
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise field_error(field, "invalid page token")
    return v


@router.get(
    "/files",
    operation_id="listFiles",
    summary="List the table's files in path order (keyset-paginated, optionally by path prefix)",
    response_model=ListFilesResponse,
    responses=error_responses(*COMMON, 404),
)
def list_files(
    namespace: NamespaceName,
    table: TableName,
    _: Annotated[Principal, Depends(require_reader)],
    ctx: Annotated[AppContext, Depends(get_ctx)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
    prefix: Annotated[str | None, Query(max_length=2048, description="Only paths starting with this.")] = None,
    snapshot_id: SnapshotId = None,
    page_token: PageToken = None,
    page_size: PageSize = 1000,
    min_snapshot_id: MinSnapshotId = None,
) -> ListFilesResponse:
    check_page_size(ctx, page_size, field="query.page-size")
    after: str | None = None
    listing = _listing(namespace, table, prefix or None)
    if page_token is not None:
        doc = _listing_token(page_token, listing, "table or prefix")
        after = doc.get("after")
        if not isinstance(after, str):
            raise field_error("query.page-token", "invalid page token")
        pinned = _int_or_none(doc.get("snapshot"), "query.page-token")
        if snapshot_id is not None and pinned is not None and snapshot_id != pinned:
            raise field_error("query.page-token", "the page token belongs to another snapshot-id")
        snapshot_id = pinned
    if snapshot_id is None:
        # Pin the snapshot so that later pages list the same set of files.
        snapshot_id = catalog.get_table(namespace, table, min_snapshot_id=min_snapshot_id).current_snapshot_id
    limit = keyset.fetch_limit(page_size, catalog.limits.max_page_size)
    page = keyset.cut(
        catalog.list_files(namespace, table, snapshot=snapshot_id, prefix=prefix or None, after=after, limit=limit),
        page_size,
        limit,
    )
    token = page.next_token(lambda r: {"after": r.path, "snapshot": snapshot_id, "listing": listing})
    return ListFilesResponse.of({"snapshot_id": snapshot_id, "files": page.rows, "next_page_token": token})


@router.get(
    "/files/stats",
    operation_id="loadFileStats",
    summary="One file's Variant statistics as committed (DuckLake rows)",
    response_model=FileStatsResponse,
    responses=error_responses(*COMMON, 404),
)
def load_file_stats(
    namespace: NamespaceName,
    table: TableName,
    path: Annotated[str, Query(min_length=1, max_length=2048, description="The file's path as registered.")],
    _: Annotated[Principal, Depends(require_reader)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
    snapshot_id: SnapshotId = None,
    min_snapshot_id: MinSnapshotId = None,
) -> FileStatsResponse:
    fs = catalog.file_stats(namespace, table, lookup_path(path), snapshot=snapshot_id, min_snapshot_id=min_snapshot_id)
    return FileStatsResponse(
        path=fs.path,
        file_size_bytes=fs.file_size_bytes,
        record_count=fs.record_count,
        footer_size=fs.footer_size,
        content_id=fs.content_id,
        variant_columns=list(fs.variant_columns),
        variant_stats=[VariantStatsRow(column=ps.column, **ps.ducklake_row()) for ps in fs.paths],
        column_stats=[column_stats_row(c) for c in fs.columns],
        partition_values=[
            PartitionValueOut(
                column=p.column,
                raw=p.raw,
                type=p.value_type.name,
                value=None if p.value is None else format_bound(p.value_type, p.value),
            )
            for p in fs.partitions
        ],
        shredded_objects=[
            ShreddedObjectRow(column=o.column, variant_path=o.variant_path, fields=list(o.fields))
            for o in fs.objects
        ],
    )


def column_stats_row(c: ColumnStats) -> ColumnStatsRow:
    """A plain column's stats as DuckLake's row, with its name and type."""
    return ColumnStatsRow(column=c.column, column_type=c.column_type.name, **c.ducklake_row())


@router.get(
    "/stats",
    operation_id="loadTableStats",
    summary="The table's global Variant statistics (DuckLake's global JSON per Variant column)",
    response_model=TableStatsResponse,
    responses=error_responses(*COMMON, 404),
)
def load_table_stats(
    namespace: NamespaceName,
    table: TableName,
    _: Annotated[Principal, Depends(require_reader)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
    snapshot_id: SnapshotId = None,
    min_snapshot_id: MinSnapshotId = None,
) -> TableStatsResponse:
    g = catalog.global_stats(namespace, table, snapshot=snapshot_id, min_snapshot_id=min_snapshot_id)
    return TableStatsResponse(
        snapshot_id=g.snapshot_id,
        file_count=g.file_count,
        columns={c: [p.ducklake_object() for p in paths] for c, paths in g.columns.items()},
        extra_stats=g.ducklake_json(),
    )


@router.get(
    "/snapshots",
    operation_id="listSnapshots",
    summary="Snapshots that changed the table, oldest first (paginated)",
    response_model=ListSnapshotsResponse,
    responses=error_responses(*COMMON, 404),
)
def list_snapshots(
    namespace: NamespaceName,
    table: TableName,
    _: Annotated[Principal, Depends(require_reader)],
    ctx: Annotated[AppContext, Depends(get_ctx)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
    page_token: PageToken = None,
    page_size: PageSize = 1000,
    min_snapshot_id: MinSnapshotId = None,
) -> ListSnapshotsResponse:
    check_page_size(ctx, page_size, field="query.page-size")
    after = None
    listing = _listing(namespace, table)
    if page_token is not None:
        after = _int_or_none(_listing_token(page_token, listing, "table").get("after"), "query.page-token")
        if after is None:
            raise field_error("query.page-token", "invalid page token")
    limit = keyset.fetch_limit(page_size, catalog.limits.max_page_size)
    page = keyset.cut(
        catalog.list_snapshots(namespace, table, after=after, limit=limit, min_snapshot_id=min_snapshot_id),
        page_size,
        limit,
    )
    return ListSnapshotsResponse.of(
        {"snapshots": page.rows, "next_page_token": page.next_token(lambda s: {"after": s.snapshot_id, "listing": listing})}
    )
