"""``GET /admin/tables/{ns}/{table}``: columns, global stats, coverage, files, history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from service import keyset, pagetoken
from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.web import catalog_of, render
from service.errors import BadInputError
from service.values.text import ascii_digits

if TYPE_CHECKING:
    from service.catalog import Catalog, DataFileInfo, PathCoverage, TableGlobalStats

router = APIRouter()

#: Files listed per page on the table page, snapshots per page of its history.
FILES_PAGE = 50
SNAPSHOTS_PAGE = 20


@dataclass(frozen=True)
class _Cursor:
    """Where a page of files starts: the first file past ``(key, path)`` in the page's order (or
    before it, reading backwards, for a Previous link) and its position in the whole list."""

    key: int | str
    path: str
    start: int
    backward: bool

    def encode(self) -> str:
        return pagetoken.encode([self.key, self.path, self.start, "p" if self.backward else "n"])


def _decode_cursor(token: str | None, sort: str) -> _Cursor | None:
    """The cursor of a files page sorted by ``sort``: its key is the path (a string) or a size or
    row count (an integer); a cursor of another sort (an edited link) is invalid."""
    if not token:
        return None
    invalid = BadInputError("invalid page cursor: go back to the first page")
    doc = pagetoken.decode(token, invalid)
    if not (
        isinstance(doc, list)
        and len(doc) == 4
        and isinstance(doc[0], str if sort == "path" else int)
        and not isinstance(doc[0], bool)
        and isinstance(doc[1], str)
        and isinstance(doc[2], int)
        and doc[2] >= 0
        and doc[3] in ("n", "p")
    ):
        raise invalid
    return _Cursor(doc[0], doc[1], doc[2], doc[3] == "p")


_SORTS = ("path", "size", "rows")


@router.get("/tables/{namespace}/{table}")
async def table_page(
    request: Request,
    namespace: str,
    table: str,
    prefix: str = "",
    contains: str = "",
    snapshot: str = "",
    sort: str = "path",
    order: str = "asc",
    cursor: str | None = None,
    before: str = "",
) -> Response:
    # The filter form sends an empty field when no snapshot is asked for. A bad number is the
    # dashboard's HTML error page (after the admin check), not the API's JSON.
    text, before = snapshot.strip(), before.strip()
    for name, value in (("snapshot", text), ("before", before)):
        if value and not (ascii_digits(value) and len(value) < 19):
            return await admin_page(request, _refuse, f"{name}: a snapshot id is a whole number, not {value[:40]!r}")
    filters = _Filters(prefix, contains, int(text) if text else None)
    return await admin_page(request, _table, namespace, table, filters, sort, order, cursor, int(before) if before else None)


def _refuse(request: Request, message: str) -> Response:
    raise BadInputError(message)


@dataclass(frozen=True)
class _Filters:
    """The files list's filters, as the query string carries them."""

    prefix: str
    contains: str
    snapshot: int | None

    @property
    def any(self) -> bool:
        return bool(self.prefix or self.contains or self.snapshot is not None)

    def params(self) -> dict[str, Any]:
        return {"prefix": self.prefix, "contains": self.contains, "snapshot": self.snapshot}


def _kind(c: PathCoverage) -> str:
    """Why a path is or is not in the global stats: ok, conflict (several types) or partial."""
    if c.in_global_stats:
        return "ok"
    return "conflict" if len(c.types) > 1 else "partial"


def _coverage_rows(coverage: list[PathCoverage]) -> list[dict[str, Any]]:
    rows = []
    for c in coverage:
        kind = _kind(c)
        if kind == "ok":
            status = "in the global stats"
        elif kind == "conflict":
            status = "type conflict: " + ", ".join(t for t, _ in c.types)
        else:
            status = f"not fully shredded in {c.live_files - c.shredded_files:,} of {c.live_files:,} files"
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


def _sort_key(f: DataFileInfo, sort: str) -> int | str:
    return {"path": f.path, "size": f.file_size_bytes, "rows": f.record_count}[sort]


def _full_prefix(catalog: Catalog, namespace: str, table: str, prefix: str) -> str:
    """``prefix`` as an absolute path or URI prefix: one written relative (``event_date=2024-03``,
    as the list shows paths) is taken under the directory every live file is in (the common
    directory of the first and last path in order is every path's)."""
    if not prefix or prefix.startswith("/") or "://" in prefix:
        return prefix
    ends = [f.path for desc in (False, True) for f in catalog.list_files_sorted(namespace, table, sort="path", descending=desc, limit=1)]
    return fmt.common_dir(ends) + prefix


def _files_page(
    catalog: Catalog,
    namespace: str,
    table: str,
    filters: _Filters,
    prefix: str,
    sort: str,
    descending: bool,
    cur: _Cursor | None,
) -> tuple[list[DataFileInfo], int, str | None, str | None]:
    """The page of files ``cur`` points at (the first page without one), keyset-paged in ``sort``
    order: its files, its position in the whole list, and the cursors of the next and previous
    pages (None at either end)."""

    def page(desc: bool, after: _Cursor | None) -> keyset.KeysetPage[DataFileInfo]:
        rows = catalog.list_files_sorted(
            namespace,
            table,
            sort=sort,  # type: ignore[arg-type]
            descending=desc,
            prefix=prefix or None,
            contains=filters.contains or None,
            added_in=filters.snapshot,
            after=None if after is None else (after.key, after.path),
            limit=keyset.fetch_limit(FILES_PAGE),
        )
        return keyset.cut(rows, FILES_PAGE)

    if cur is not None and cur.backward:
        # Previous page: read backwards from the first file of the page the user was on.
        back = page(not descending, cur)
        more_before, more_after = back.more, True
        files = list(reversed(back.rows))
        start = cur.start if more_before else 0
    else:
        ahead = page(descending, cur)
        more_before, more_after = cur is not None, ahead.more
        files = ahead.rows
        start = 0 if cur is None else cur.start
    next_cursor = prev_cursor = None
    if files and more_after:
        last = files[-1]
        next_cursor = _Cursor(_sort_key(last, sort), last.path, start + len(files), False).encode()
    if files and more_before:
        first = files[0]
        prev_cursor = _Cursor(_sort_key(first, sort), first.path, max(0, start - FILES_PAGE), True).encode()
    return files, start, next_cursor, prev_cursor


def _table(
    request: Request,
    namespace: str,
    table: str,
    filters: _Filters,
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
    cur = _decode_cursor(cursor, sort)
    descending = order == "desc"
    prefix = _full_prefix(catalog, namespace, table, filters.prefix)

    files, start, next_cursor, prev_cursor = _files_page(catalog, namespace, table, filters, prefix, sort, descending, cur)
    matching = catalog.count_files(
        namespace, table, prefix=prefix or None, contains=filters.contains or None, added_in=filters.snapshot
    )
    removed = (
        [] if filters.snapshot is None else catalog.files_removed_at(namespace, table, filters.snapshot, limit=FILES_PAGE)
    )
    base = fmt.common_dir([f.path for f in files])
    conflicts: dict[str, list[dict[str, Any]]] = {}
    for row in _coverage_rows([c for c in coverage if _kind(c) == "conflict"]):
        conflicts.setdefault(row["c"].column, []).append(row)
    listed, unlisted = fmt.widest_paths(coverage)
    cov_rows = _coverage_rows(listed)
    # The global stats and the type conflicts of a column are listed within the same bound (the
    # paths with the most values first), in their order.
    shown_global: dict[str, list[dict[str, Any]]] = {}
    global_unlisted: dict[str, int] = {}
    for column, rows in global_rows(gstats).items():
        shown_global[column], left_out = fmt.largest(rows, lambda r: r["g"].value_count)
        if left_out:
            global_unlisted[column] = left_out
    for column, rows in conflicts.items():
        if len(rows) > fmt.MAX_LISTED_PATHS:
            global_unlisted[column] = global_unlisted.get(column, 0) + len(rows) - fmt.MAX_LISTED_PATHS
            conflicts[column] = rows[: fmt.MAX_LISTED_PATHS]
    history = keyset.cut(
        catalog.recent_snapshots(namespace=namespace, table=table, before=before, limit=keyset.fetch_limit(SNAPSHOTS_PAGE)),
        SNAPSHOTS_PAGE,
    )
    older = history.rows[-1].snapshot_id if history.more else None
    return render(
        request,
        "table.html",
        t=info,
        global_rows=shown_global,
        global_unlisted=global_unlisted,
        global_file_count=gstats.file_count,
        coverage=cov_rows,
        coverage_unlisted=unlisted,
        conflicts=conflicts,
        files=[{"f": f, "p": fmt.path_parts(f.path, base)} for f in files],
        files_base=base,
        removed=[{"f": f, "p": fmt.path_parts(f.path, base)} for f in removed],
        filters=filters,
        fp=filters.params(),
        prefix=filters.prefix,
        prefix_full=prefix,
        sort=sort,
        order=order,
        first_page=cur is None,
        start=start,
        next_cursor=next_cursor,
        prev_cursor=prev_cursor,
        matching=matching,
        snapshots=history.rows,
        snapshots_first=before is None,
        older=older,
    )
