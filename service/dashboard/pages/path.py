"""``GET /admin/tables/{ns}/{table}/path``: one path's per-file [min, max] chart.

``path`` is a DuckLake variant path (``"user"."name"``) or, as in the playground, a JSON path
(``$.user.name``); a path shredded in no live file is answered with the close paths that are."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from service.catalog.admin import admin_reads
from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.chart import LINK_LIMIT, ChartFile, render_chart
from service.dashboard.pages.table import global_rows
from service.dashboard.web import catalog_of, render, urls
from service.errors import BadInputError, ShredcatError
from service.pruning.diagnostics import MAX_SUGGESTION_PATHS
from service.values import parse_bound

if TYPE_CHECKING:
    from service.catalog import PathCoverage

router = APIRouter()

#: Bars drawn in a path chart at most: each then gets at least 1.5 units of the plot's 794 (of
#: the SVG's 960), so neighbours stay apart at the chart's full width. A path in more files is
#: drawn from evenly spaced picks of them; the point-lookup estimate always counts all of them.
CHART_LIMIT = 500

#: The orders of the path chart's files (the ``order`` query parameter).
_ORDERS: dict[str, Literal["min", "path"]] = {"min": "min", "path": "path"}


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
    by = _ORDERS.get(order)
    if by is None:
        raise BadInputError(f"order must be min or path, not {order!r}")
    variant_path = as_variant_path(variant_path)
    pb = admin_reads(catalog).path_bounds(
        namespace, table, column, variant_path, shredded_type=type_, order=by, limit=CHART_LIMIT
    )
    u = urls(request)
    shredded = sum(n for _, n in pb.types)
    # Files a point lookup keeps whatever the value (counted in pb.point_keep): the path stored as
    # another type (bounds of that type do not serve this one) or not fully shredded (no stats).
    other_types = shredded - pb.total
    always_kept = max(0, pb.live_files - shredded) + other_types
    chart = None
    if pb.shredded_type is not None:
        linked = len(pb.files) <= LINK_LIMIT  # beyond, bars carry no link: no URL to build either
        files = [
            ChartFile(f.path, f.value_count, f.min_value, f.max_value, u.file(namespace, table, f.path) if linked else None)
            for f in pb.files
        ]
        x_label = f"files ordered by {'minimum' if order == 'min' else 'path'}"
        if pb.sample:
            x_label += f" ({len(files):,} of {pb.total:,}, evenly spaced in a sample of {pb.sample:,})"
        elif len(files) < pb.total:
            x_label += f" ({len(files):,} of {pb.total:,}, evenly spaced)"
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
    example = None
    if pb.shredded_type is not None and pb.files:
        first = next((f for f in pb.files if f.min_value is not None), None)
        if first is not None and first.min_value is not None:
            try:
                v = parse_bound(pb.shredded_type, first.min_value)
            except ShredcatError:
                v = None
            example = fmt.example_predicate(column, variant_path, pb.shredded_type, v)
    from service.catalog.history import type_timeline

    return render(
        request,
        "path.html",
        timeline=type_timeline(catalog, namespace, table, column, variant_path),
        t=info,
        pb=pb,
        chart=chart,
        estimate=pb.point_keep,
        with_values=pb.with_values,
        always_kept=always_kept,
        order=order,
        global_row=global_row,
        not_shredded=max(0, pb.live_files - shredded),
        other_types=other_types,
        limit=CHART_LIMIT,
        example=example,
        json_path=_json_path(variant_path),
        suggestions=[] if pb.types else _close_paths(admin_reads(catalog).path_coverage(namespace, table), column, variant_path),
    )


def as_variant_path(text: str) -> str:
    """A path as the catalog stores it: a JSON path (``$.user.name``, the playground's syntax)
    becomes its DuckLake variant path (``"user"."name"``); anything else is taken as one."""
    text = text.strip()
    if not text.startswith("$"):
        return text
    from service.pruning.paths import json_path_to_variant_path

    return json_path_to_variant_path(text)


def _json_path(variant_path: str) -> str | None:
    from service.pruning.diagnostics import variant_path_as_json

    try:
        return variant_path_as_json(variant_path)
    except ShredcatError:
        return None


def _close_paths(coverage: list[PathCoverage], column: str, variant_path: str) -> list[tuple[str, str]]:
    """``(variant path, JSON path)`` of the column's shredded paths closest to ``variant_path``
    (compared in both spellings, so ``user.name`` finds ``"user"."name"``)."""
    import difflib

    # Among the most widely shredded paths only: a comparison each (difflib), and a table may have
    # hundreds of thousands.
    among, _ = fmt.widest_paths([c for c in coverage if c.column == column], MAX_SUGGESTION_PATHS)
    known = {c.variant_path: _json_path(c.variant_path) or c.variant_path for c in among}
    asked = [variant_path, _json_path(variant_path) or variant_path, "$." + variant_path.strip('"')]
    by_spelling = {**{j: v for v, j in known.items()}, **{v: v for v in known}}
    out: dict[str, None] = {}
    for a in asked:
        for match in difflib.get_close_matches(a, list(by_spelling), n=3, cutoff=0.6):
            out[by_spelling[match]] = None
    return [(v, known[v]) for v in list(out)[:3]]
