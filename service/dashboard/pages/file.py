"""``GET /admin/tables/{ns}/{table}/file``: one file's metadata and per-path stats."""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import Response

from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.web import catalog_of, render
from service.errors import BadInputError

router = APIRouter()


@router.get("/tables/{namespace}/{table}/file")
async def fileadmin_page(request: Request, namespace: str, table: str, path: str = "") -> Response:
    return await admin_page(request, _file, namespace, table, path)


def _file(request: Request, namespace: str, table: str, path: str) -> Response:
    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    if not path:
        raise BadInputError("give a file path (?path=...)")
    meta = catalog.find_file(namespace, table, path)
    fs = catalog.file_stats(namespace, table, path)
    rows = []
    for ps in fs.paths:
        t = ps.shredded_type
        rows.append(
            {
                "ps": ps,
                "type": t.name,
                "min": fmt.bound_text(t, ps.min_value, ps.value_count),
                "max": fmt.bound_text(t, ps.max_value, ps.value_count),
                "nan": fmt.nan_text(t, ps.contains_nan),
            }
        )
    return render(request, "file.html", t=info, f=meta, fs=fs, rows=rows)
