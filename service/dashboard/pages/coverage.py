"""``GET /admin/tables/{ns}/{table}/coverage``: the live files behind one coverage status of a
path: those where it is fully shredded as one type, or those where it is not fully shredded."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from service.catalog.admin import admin_reads
from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.web import catalog_of, render
from service.errors import BadInputError

router = APIRouter()

#: Files listed per page.
COVERAGE_PAGE = 100


@router.get("/tables/{namespace}/{table}/coverage")
async def coverage_page(
    request: Request,
    namespace: str,
    table: str,
    column: str = "",
    path: str = "",
    shredded_type: Annotated[str, Query(alias="type")] = "",
    after: str | None = None,
) -> Response:
    return await admin_page(request, _coverage, namespace, table, column, path, shredded_type, after)


def _coverage(
    request: Request, namespace: str, table: str, column: str, variant_path: str, type_: str, after: str | None
) -> Response:
    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    if not column or not variant_path:
        raise BadInputError("give a column and a variant path (?column=v&path=\"id\")")
    files = admin_reads(catalog).files_by_path(
        namespace, table, column, variant_path, shredded_type=type_ or None, after=after, limit=COVERAGE_PAGE + 1
    )
    more = len(files) > COVERAGE_PAGE
    files = files[:COVERAGE_PAGE]
    base = fmt.common_dir([f.path for f in files])
    rows = [{"f": f, "p": fmt.path_parts(f.path, base)} for f in files]
    return render(
        request,
        "coverage.html",
        t=info,
        column=column,
        variant_path=variant_path,
        shredded_type=type_,
        files=rows,
        files_base=base,
        first_page=after is None,
        next_after=files[-1].path if more else None,
    )
