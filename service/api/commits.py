"""Registering and removing data files: ``POST .../commits`` and ``POST .../files/remove``."""

from __future__ import annotations

from typing import Annotated

import anyio.to_thread
from fastapi import APIRouter, Depends, Header, Request

from service.api.auth import Principal, require_writer
from service.api.bodies import json_body, json_content_type, parse_json_body
from service.api.deps import COMMON, AppContext, error_responses, field_error, get_catalog, get_ctx
from service.api.ingest import check_paths, expand_prefixes, extract_all, file_from_body
from service.api.namespaces import NamespaceName
from service.api.paths import lookup_path
from service.api.schemas import (
    CommitRequest,
    CommitResponse,
    FileStatsBody,
    RemoveFilesRequest,
    RemoveFilesResponse,
)
from service.api.tables import TableName
from service.catalog import Catalog
from service.catalog.validate import check_file_count
from service.errors import ShredcatError

router = APIRouter(prefix="/v1/namespaces/{namespace}/tables/{table}", tags=["files"])

IdempotencyKey = Annotated[
    str | None,
    Header(
        alias="Idempotency-Key",
        min_length=1,
        max_length=255,
        pattern=r"^[\x21-\x7e]+$",
        description="Makes a retried commit apply once: a replay with the same key and body returns the "
        "original result (`replayed: true`), which describes the snapshot that commit created even if its "
        "files were removed since; the same key with another body is 409. Keys are per table and per token.",
    ),
]


@router.post(
    "/commits",
    operation_id="commitFiles",
    summary="Register a batch of files as one snapshot (by path, or with client-side statistics), "
    "optionally replacing live files in the same snapshot",
    response_model=CommitResponse,
    responses=error_responses(*COMMON, 404, 409, 415),
    openapi_extra=json_body(CommitRequest),
    dependencies=[Depends(json_content_type)],
)
async def commit_files(
    namespace: NamespaceName,
    table: TableName,
    request: Request,
    principal: Annotated[Principal, Depends(require_writer)],
    ctx: Annotated[AppContext, Depends(get_ctx)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
    idempotency_key: IdempotencyKey = None,
) -> CommitResponse:
    # A commit body can be tens of megabytes: read here, parsed in the route's thread (bodies.py).
    raw = await request.body()
    return await anyio.to_thread.run_sync(_commit, ctx, catalog, namespace, table, raw, principal, idempotency_key)


def _commit(
    ctx: AppContext,
    catalog: Catalog,
    namespace: str,
    table: str,
    raw: bytes,
    principal: Principal,
    idempotency_key: str | None,
) -> CommitResponse:
    body = parse_json_body(CommitRequest, raw, items=("files", FileStatsBody))
    assert ctx.executor is not None
    paths = body.paths or []
    prefixes = body.prefixes or []
    bodies = body.files or []
    remove = [lookup_path(p) for p in body.remove or []]
    by_path = bool(paths or prefixes)
    if not by_path and not bodies:
        mode = "remove"
    else:
        mode = "paths" if by_path and not bodies else "stats" if bodies and not by_path else "mixed"
    try:
        if not by_path and not bodies and not remove:
            raise field_error("body", "nothing to commit: give paths, prefixes, files or remove")
        check_file_count(len(paths) + len(bodies), ctx.limits)
        check_file_count(len(remove), ctx.limits, "paths to remove")
        # Everything is checked before anything is read, and everything is read before the commit.
        given = [file_from_body(i, f, ctx.roots, ctx.limits) for i, f in enumerate(bodies)]
        checked = check_paths(paths, ctx.roots)
        if prefixes:
            named = {c.path for c in checked}
            listed = expand_prefixes(prefixes, ctx.roots, ctx.limits, given=len(paths) + len(bodies))
            checked += [c for c in dict.fromkeys(listed) if c.path not in named]
        # Creating a missing table is the admin's, as POST .../tables is (the one policy:
        # Catalog.register).
        create: bool | list[str] = False
        if body.create_if_missing is not None:
            declared = body.create_if_missing.variant_columns
            create = True if declared is None else declared
        executor = ctx.executor
        result = catalog.register(
            namespace,
            table,
            checked,
            extract_all=lambda paths: extract_all(
                paths, executor, max_footer_bytes=ctx.settings.max_footer_bytes, limits=ctx.settings.file_limits
            ),
            given=given,
            idempotency_key=idempotency_key,
            principal=principal.identity,
            remove=remove,
            remove_missing_ok=body.remove_missing_ok,
            create_table=create,
            may_create=principal.role == "admin",
        )
    except ShredcatError as e:
        ctx.metrics.commits.labels(mode=mode, outcome=e.code).inc()
        raise
    ctx.metrics.commits.labels(mode=mode, outcome="replayed" if result.replayed else "ok").inc()
    if not result.replayed:
        ctx.metrics.files_registered.inc(len(result.added))
        ctx.metrics.files_removed.inc(len(result.removed))
    return CommitResponse.of(result)


@router.post(
    "/files/remove",
    operation_id="removeFiles",
    summary="Remove files from the table at one new snapshot",
    response_model=RemoveFilesResponse,
    responses=error_responses(*COMMON, 404, 415),
    openapi_extra=json_body(RemoveFilesRequest),
    dependencies=[Depends(json_content_type)],
)
async def remove_files(
    namespace: NamespaceName,
    table: TableName,
    request: Request,
    _: Annotated[Principal, Depends(require_writer)],
    ctx: Annotated[AppContext, Depends(get_ctx)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> RemoveFilesResponse:
    # 10,000 paths of up to 2 KB: read here, decoded in the route's thread (bodies.py).
    raw = await request.body()
    return await anyio.to_thread.run_sync(_remove, ctx, catalog, namespace, table, raw)


def _remove(ctx: AppContext, catalog: Catalog, namespace: str, table: str, raw: bytes) -> RemoveFilesResponse:
    body = parse_json_body(RemoveFilesRequest, raw)
    check_file_count(len(body.paths), ctx.limits, "paths")
    result = catalog.remove(namespace, table, [lookup_path(p) for p in body.paths], missing_ok=body.missing_ok)
    ctx.metrics.files_removed.inc(len(result.removed))
    return RemoveFilesResponse.of(result)
