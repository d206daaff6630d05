"""``POST .../verify`` (admin): re-extract a table's files and report stored stats that differ.

Client-side statistics are trusted by design (:mod:`service.catalog.verify`); this route makes
that trust checkable from the server. Each file is read like a commit by path reads it: the stored
path is checked against the warehouse roots (:mod:`service.api.paths`) and a local file is opened
beneath its root without following symlinks. A path outside the roots, a missing file or an object
store the server has no credentials for makes that file ``unverifiable`` (with the reason), never
``different``.

Bounded: at most :data:`MAX_FILES` files per call (more is 413: verify a sample, or run
``shredcat verify --all``), read in the app's extraction pool, and no new file is started after
:data:`TIME_LIMIT_SECONDS` (``complete: false`` then says how many were checked).
"""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Depends

from service.api.auth import Principal, require_admin
from service.api.bodies import json_content_type
from service.api.deps import COMMON, AppContext, error_responses, field_error, get_catalog, get_ctx
from service.api.ingest import extract_checked
from service.api.namespaces import NamespaceName
from service.api.paths import check_file_path
from service.api.schemas import VerifyRequest, VerifyResponse
from service.api.tables import TableName
from service.catalog import Catalog
from service.stats.model import FileStats

router = APIRouter(prefix="/v1/namespaces/{namespace}/tables/{table}", tags=["files"])

#: Files one call may verify.
MAX_FILES = 1000
#: No file is started after this many seconds of a call.
TIME_LIMIT_SECONDS = 60.0


@router.post(
    "/verify",
    operation_id="verifyFiles",
    summary="Re-extract a sample (or all) of the table's files and report stored statistics that differ",
    response_model=VerifyResponse,
    responses=error_responses(*COMMON, 404, 415),
    dependencies=[Depends(json_content_type)],
)
def verify_files(
    namespace: NamespaceName,
    table: TableName,
    body: VerifyRequest,
    _: Annotated[Principal, Depends(require_admin)],
    ctx: Annotated[AppContext, Depends(get_ctx)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> VerifyResponse:
    assert ctx.executor is not None
    if (body.sample is None) == (not body.all):
        raise field_error("body", 'give either "sample": N or "all": true')
    roots, max_footer, limits = ctx.roots, ctx.settings.max_footer_bytes, ctx.settings.file_limits

    def read(path: str) -> FileStats:
        return extract_checked(check_file_path(path, roots, resolve=True), max_footer, limits)

    report = catalog.verify(
        namespace,
        table,
        read,
        sample=body.sample,
        seed=body.seed,
        max_files=MAX_FILES,
        deadline=time.monotonic() + TIME_LIMIT_SECONDS,
        executor=ctx.executor,
    )
    return VerifyResponse.model_validate(
        {
            "table": report.table,
            "snapshot_id": report.snapshot_id,
            "live_files": report.live_files,
            "chosen": report.chosen,
            "checked": report.checked,
            "matching": report.matching,
            "complete": report.complete,
            "problems": [c.to_json() for c in report.problems],
        }
    )
