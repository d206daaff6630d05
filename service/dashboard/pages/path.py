"""``GET /admin/tables/{ns}/{table}/path``: one path's per-file [min, max] chart."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.chart import ChartFile, render_chart
from service.dashboard.pages.table import global_rows
from service.dashboard.web import catalog_of, render, urls
from service.errors import BadInputError, ShredcatError
from service.values import parse_bound

router = APIRouter()

#: Files drawn in a path chart at most.
CHART_LIMIT = 2000


@router.get("/tables/{namespace}/{table}/path")
async def path_page(
    request: Request,
    namespace: str,
    table: str,
    column: str = "",
    path: str = "",
    shredded_type: Annotated[str | None, Query(alias="type")] = None,
    order: str = "min",
) -> Response:
    return await admin_page(request, _path, namespace, table, column, path, shredded_type, order)


def _path(
    request: Request, namespace: str, table: str, column: str, variant_path: str, type_: str | None, order: str
) -> Response:
    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    if not column or not variant_path:
        raise BadInputError("give a column and a variant path (?column=v&path=\"id\")")
    if order not in ("min", "path"):
        raise BadInputError(f"order must be min or path, not {order!r}")
    pb = catalog.path_bounds(
        namespace, table, column, variant_path, shredded_type=type_, order=order, limit=CHART_LIMIT  # type: ignore[arg-type]
    )
    u = urls(request)
    chart = None
    if pb.shredded_type is not None:
        files = [
            ChartFile(f.path, f.value_count, f.min_value, f.max_value, u.file(namespace, table, f.path)) for f in pb.files
        ]
        x_label = f"files ordered by {'minimum' if order == 'min' else 'path'}"
        chart = render_chart(
            pb.shredded_type,
            files,
            x_label=x_label,
            title=f"{column} {variant_path} ({pb.shredded_type.name}): [min, max] of each file",
        )
    gstats = catalog.global_stats(namespace, table)
    global_row = next(
        (r for r in global_rows(gstats).get(column, []) if r["g"].variant_path == variant_path), None
    )
    shredded = sum(n for _, n in pb.types)
    example = None
    if pb.shredded_type is not None and pb.files:
        first = next((f for f in pb.files if f.min_value is not None), None)
        if first is not None and first.min_value is not None:
            try:
                v = parse_bound(pb.shredded_type, first.min_value)
            except ShredcatError:
                v = None
            example = fmt.example_predicate(column, variant_path, pb.shredded_type, v)
    return render(
        request,
        "path.html",
        t=info,
        pb=pb,
        chart=chart,
        order=order,
        global_row=global_row,
        not_shredded=max(0, pb.live_files - shredded),
        limit=CHART_LIMIT,
        example=example,
    )
