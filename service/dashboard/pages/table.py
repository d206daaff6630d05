"""``GET /admin/tables/{ns}/{table}``: columns, global stats, coverage, files, history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from service import pagetoken
from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.web import catalog_of, render
from service.errors import BadInputError

if TYPE_CHECKING:
    from service.catalog import PathCoverage, TableGlobalStats

router = APIRouter()

#: Files listed per page on the table page, snapshots per page of its history.
FILES_PAGE = 50
SNAPSHOTS_PAGE = 20


def _decode_cursor(token: str | None) -> tuple[int | str, str] | None:
    """``(sort value, path)`` of the last file of the previous page."""
    if not token:
        return None
    invalid = BadInputError("invalid page cursor: go back to the first page")
    after = pagetoken.decode(token, invalid)
    if not (
        isinstance(after, list) and len(after) == 2 and isinstance(after[1], str) and isinstance(after[0], int | str)
    ):
        raise invalid
    return after[0], after[1]


_SORTS = ("path", "size", "rows")


@router.get("/tables/{namespace}/{table}")
async def tableadmin_page(
    request: Request,
    namespace: str,
    table: str,
    prefix: str = "",
    sort: str = "path",
    order: str = "asc",
    cursor: str | None = None,
    before: int | None = None,
) -> Response:
    return await admin_page(request, _table, namespace, table, prefix, sort, order, cursor, before)


def _coverage_rows(coverage: list[PathCoverage]) -> list[dict[str, Any]]:
    rows = []
    for c in coverage:
        if c.in_global_stats:
            status, kind = "in the global stats", "ok"
        elif len(c.types) > 1:
            status, kind = "type conflict: " + ", ".join(t for t, _ in c.types), "conflict"
        else:
            missing = c.live_files - c.shredded_files
            status, kind = f"not fully shredded in {missing:,} of {c.live_files:,} files", "partial"
        rows.append({"c": c, "status": status, "kind": kind})
    return rows


def global_rows(gstats: TableGlobalStats) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for column, paths in gstats.columns.items():
        rows = []
        for g in paths:
            t = g.shredded_type
            rows.append(
                {
                    "g": g,
                    "type": t.name,
                    "min": fmt.bound_text(t, g.min_value, g.value_count),
                    "max": fmt.bound_text(t, g.max_value, g.value_count),
                    "nan": fmt.nan_text(t, g.contains_nan),
                }
            )
        out[column] = rows
    return out


def _table(
    request: Request,
    namespace: str,
    table: str,
    prefix: str,
    sort: str,
    order: str,
    cursor: str | None,
    before: int | None,
) -> Response:
    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    gstats = catalog.global_stats(namespace, table)
    coverage = catalog.path_coverage(namespace, table)
    if sort not in _SORTS:
        raise BadInputError(f"cannot sort files by {sort!r} (path, size or rows)")
    if order not in ("asc", "desc"):
        raise BadInputError(f"order must be asc or desc, not {order!r}")
    after = _decode_cursor(cursor)
    descending = order == "desc"
    if sort == "path" and not descending:
        files = catalog.list_files(
            namespace, table, prefix=prefix or None, after=None if after is None else after[1], limit=FILES_PAGE + 1
        )
    else:
        files = catalog.list_files_sorted(
            namespace,
            table,
            sort=sort,  # type: ignore[arg-type]
            descending=descending,
            prefix=prefix or None,
            after=after,
            limit=FILES_PAGE + 1,
        )
    more = len(files) > FILES_PAGE
    files = files[:FILES_PAGE]
    next_cursor = None
    if more:
        last = files[-1]
        key = {"path": last.path, "size": last.file_size_bytes, "rows": last.record_count}[sort]
        next_cursor = pagetoken.encode([key, last.path])
    matching = catalog.count_files(namespace, table, prefix=prefix) if prefix else info.live_file_count
    snapshots = catalog.recent_snapshots(namespace=namespace, table=table, before=before, limit=SNAPSHOTS_PAGE + 1)
    older = snapshots[SNAPSHOTS_PAGE - 1].snapshot_id if len(snapshots) > SNAPSHOTS_PAGE else None
    return render(
        request,
        "table.html",
        t=info,
        global_rows=global_rows(gstats),
        global_file_count=gstats.file_count,
        coverage=_coverage_rows(coverage),
        files=files,
        prefix=prefix,
        sort=sort,
        order=order,
        first_page=cursor is None,
        next_cursor=next_cursor,
        matching=matching,
        snapshots=snapshots[:SNAPSHOTS_PAGE],
        snapshots_first=before is None,
        older=older,
    )
