"""``GET /admin/tables/{ns}/{table}/file``: one file's metadata and per-path stats, rows whose type
differs from the one most files store the path as, the table's paths this file lacks, and the
file's partition values and plain-column statistics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter, Request
from starlette.responses import Response

from service.api.paths import lookup_path
from service.catalog.admin import admin_reads
from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.web import catalog_of, render
from service.errors import BadInputError, NotFoundError
from service.values.text import ascii_digits

if TYPE_CHECKING:
    from service.catalog import Catalog, DataFileInfo

router = APIRouter()


@router.get("/tables/{namespace}/{table}/file")
async def file_page(request: Request, namespace: str, table: str, path: str = "", snapshot: str = "") -> Response:
    return await admin_page(request, _file, namespace, table, path, snapshot.strip())


def _file_at(catalog: Catalog, namespace: str, table: str, path: str, snapshot: str) -> DataFileInfo:
    """The file live now, or (``snapshot``) the file as it was live at that snapshot: a file a
    later snapshot removed, linked from "Removed at snapshot N"."""
    if not snapshot:
        return admin_reads(catalog).find_file(namespace, table, path)
    if not (ascii_digits(snapshot) and len(snapshot) < 19):
        raise BadInputError(f"snapshot: a snapshot id is a whole number, not {snapshot[:40]!r}")
    found = catalog.list_files(namespace, table, snapshot=int(snapshot), prefix=path, limit=1)
    if not found or found[0].path != path:
        raise NotFoundError(f"{path}: not a file of {namespace}.{table} at snapshot {snapshot}")
    return found[0]


def _file(request: Request, namespace: str, table: str, path: str, snapshot: str) -> Response:
    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    if not path:
        raise BadInputError("give a file path (?path=...)")
    path = lookup_path(path)
    meta = _file_at(catalog, namespace, table, path, snapshot)
    fs = catalog.file_stats(namespace, table, path, snapshot=int(snapshot) if snapshot else None)
    coverage = {(c.column, c.variant_path): c for c in admin_reads(catalog).path_coverage(namespace, table)}
    rows = []
    for ps in fs.paths:
        t = ps.shredded_type
        c = coverage.get((ps.column, ps.variant_path))
        # The type most live files store this path as (ties: the first by name, as coverage sorts).
        majority = c.types[0] if c is not None and len(c.types) > 1 else None
        rows.append(
            {
                "ps": ps,
                "type": t.name,
                "majority": majority if majority is not None and majority[0] != t.name else None,
                "min": fmt.bound_text(t, ps.min_value, ps.value_count),
                "max": fmt.bound_text(t, ps.max_value, ps.value_count),
                "nan": fmt.nan_text(t, ps.contains_nan),
            }
        )
    present = {(ps.column, ps.variant_path) for ps in fs.paths}
    absent, absent_unlisted = fmt.widest_paths([c for key, c in coverage.items() if key not in present])
    table_types = {c.name: c.type for c in info.columns}
    column_rows = [
        {
            "cs": cs,
            "type": cs.column_type.name,
            # The table's type of the column, when this file stores another (the planner decides
            # whether those stats serve a predicate).
            "table_type": table_types.get(cs.column) if table_types.get(cs.column) != cs.column_type.name else None,
            "min": fmt.bound_text(cs.column_type, cs.min_value, cs.value_count),
            "max": fmt.bound_text(cs.column_type, cs.max_value, cs.value_count),
            "nan": fmt.nan_text(cs.column_type, cs.contains_nan),
        }
        for cs in fs.columns
    ]
    partitions = [
        {
            "pv": pv,
            "value": "NULL" if pv.value is None else fmt.bound_text(pv.value_type, pv.value, 1),
            "table_type": table_types.get(pv.column) if table_types.get(pv.column) != pv.value_type.name else None,
        }
        for pv in fs.partitions
    ]
    return render(
        request,
        "file.html",
        t=info,
        f=meta,
        fs=fs,
        rows=rows,
        absent=absent,
        absent_unlisted=absent_unlisted,
        column_rows=column_rows,
        partitions=partitions,
        at_snapshot=snapshot or None,
    )
