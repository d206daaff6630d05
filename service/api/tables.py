"""``/v1/namespaces/{namespace}/tables``: list, create (declared or inferred columns), load, drop."""

from __future__ import annotations

from dataclasses import fields
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query

from service.api.auth import Principal, require_admin, require_reader
from service.api.bodies import json_content_type
from service.api.deps import COMMON, AppContext, error_responses, field_error, get_catalog, get_ctx
from service.api.ingest import check_paths, extract_all
from service.api.namespaces import NamespaceName, find_namespace
from service.api.schemas import (
    CreateTableRequest,
    DropResponse,
    ListTablesResponse,
    TableIdentifier,
    TableResponse,
)
from service.catalog import Catalog, TableInfo
from service.errors import ShredcatError

router = APIRouter(prefix="/v1/namespaces/{namespace}/tables", tags=["tables"])

TableName = Annotated[str, Path(min_length=1, max_length=1024, description="Table name.")]
#: A read's ``min-snapshot-id`` (read your writes), the one declaration of every route taking it.
MinSnapshotId = Annotated[
    int | None,
    Query(
        alias="min-snapshot-id",
        ge=0,
        le=2**63 - 1,
        description="Answer from a database holding at least this snapshot (your own commit's `snapshot-id`): "
        "a hot standby that has replayed it, else the primary.",
    ),
]


def table_response(t: TableInfo) -> TableResponse:
    """The catalog's table as the wire's: its fields by name, but for the name, which the wire
    nests in ``identifier``."""
    renamed = {
        "identifier": TableIdentifier(namespace=(t.namespace,), name=t.name),
        "partition_columns": t.partition_columns,
    }
    return TableResponse.of({f.name: getattr(t, f.name) for f in fields(t)} | renamed)


@router.get(
    "",
    operation_id="listTables",
    summary="List the tables of a namespace",
    response_model=ListTablesResponse,
    responses=error_responses(*COMMON, 404),
)
def list_tables(
    namespace: NamespaceName,
    _: Annotated[Principal, Depends(require_reader)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> ListTablesResponse:
    tables = catalog.list_tables(namespace)
    if not tables:
        find_namespace(catalog, namespace)  # 404 for a namespace that does not exist
    return ListTablesResponse(identifiers=tuple(TableIdentifier(namespace=(t.namespace,), name=t.name) for t in tables))


@router.post(
    "",
    operation_id="createTable",
    summary="Create a table, declaring its Variant columns or inferring them from a file",
    response_model=TableResponse,
    responses=error_responses(*COMMON, 404, 409, 415),
    dependencies=[Depends(json_content_type)],
)
def create_table(
    namespace: NamespaceName,
    body: CreateTableRequest,
    _: Annotated[Principal, Depends(require_admin)],
    ctx: Annotated[AppContext, Depends(get_ctx)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> TableResponse:
    if (body.variant_columns is None) == (body.infer_from is None):
        raise field_error("body", "give exactly one of variant-columns and infer-from")
    if body.variant_columns is not None:
        columns = list(body.variant_columns)
        if len(set(columns)) != len(columns):
            raise field_error("body.variant-columns", "duplicate column name")
    else:
        assert body.infer_from is not None
        find_namespace(catalog, namespace)  # fail before reading any file
        assert ctx.executor is not None
        (fs,) = extract_all(
            check_paths([body.infer_from], ctx.roots, "body.infer-from"),
            ctx.executor,
            max_footer_bytes=ctx.settings.max_footer_bytes,
            limits=ctx.settings.file_limits,
        )
        columns = list(fs.variant_columns)
        if not columns:
            raise field_error("body.infer-from", f"{fs.path} has no Variant column")
    parts = [(p.name, p.type) for p in body.partition_columns or ()]
    try:
        # The location is only compared with file paths (nothing is read there), so it need not exist.
        info = catalog.create_table(
            namespace, body.name, columns, create_namespace=False, partition_columns=parts, location=body.location
        )
    except ShredcatError as e:
        if e.details.get("field") in ("partition-columns", "location"):
            e.details["field"] = f"body.{e.details['field']}"
        raise
    return table_response(info)


@router.get(
    "/{table}",
    operation_id="loadTable",
    summary="Load a table",
    response_model=TableResponse,
    responses=error_responses(*COMMON, 404),
)
def load_table(
    namespace: NamespaceName,
    table: TableName,
    _: Annotated[Principal, Depends(require_reader)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
    min_snapshot_id: MinSnapshotId = None,
) -> TableResponse:
    return table_response(catalog.get_table(namespace, table, min_snapshot_id=min_snapshot_id))


@router.delete(
    "/{table}",
    operation_id="dropTable",
    summary="Drop a table (its files end at a new snapshot; history is kept)",
    response_model=DropResponse,
    responses=error_responses(*COMMON, 404),
)
def drop_table(
    namespace: NamespaceName,
    table: TableName,
    _: Annotated[Principal, Depends(require_admin)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> DropResponse:
    snap = catalog.drop_table(namespace, table)
    return DropResponse(snapshot_id=snap.snapshot_id)
