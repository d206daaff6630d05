"""``GET /admin``: tables with their paths' health, totals, recent commits."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from service.catalog.admin import admin_reads
from service.dashboard.auth import admin_page
from service.dashboard.web import catalog_of, render

router = APIRouter()


@router.get("")
@router.get("/")
async def overview(request: Request) -> Response:
    return await admin_page(request, _overview)


def _overview(request: Request) -> Response:
    catalog = catalog_of(request)
    tables = catalog.list_tables()
    namespaces = catalog.list_namespaces()
    recent = admin_reads(catalog).recent_snapshots(limit=15)
    health = admin_reads(catalog).path_health()
    totals = {
        "files": sum(t.live_file_count for t in tables),
        "rows": sum(t.live_record_count for t in tables),
        "bytes": sum(t.live_bytes for t in tables),
    }
    used = {t.namespace for t in tables}
    empty_namespaces = [n.name for n in namespaces if n.name not in used]
    return render(
        request,
        "overview.html",
        tables=tables,
        health=health,
        totals=totals,
        recent=recent,
        empty_namespaces=empty_namespaces,
        backend=catalog.backend,
        standbys=catalog.reads.status(),
    )
