"""``GET /admin/tables/{ns}/{table}``: columns, global stats, coverage, files, history."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from service import keyset, pagetoken
from service.catalog.admin import admin_reads
from service.dashboard import format as fmt
from service.dashboard.auth import admin_page
from service.dashboard.web import catalog_of, render, urls
from service.errors import BadInputError
from service.values.text import ascii_digits

if TYPE_CHECKING:
    from service.catalog import Catalog, DataFileInfo, PathCoverage, TableGlobalStats
    from service.catalog.admin import FileSort

router = APIRouter()

#: Files listed per page on the table page, snapshots per page of its history.
FILES_PAGE = 50
SNAPSHOTS_PAGE = 20
#: A path search's count of matches stops past this many: no index serves a substring, so an
#: exact count of a common one read every live path (1.4 s at 1,000,000 files); past it the page
#: says "more than" this, never a number it did not count.
MATCHES_COUNTED = 10_000


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


_SORTS: tuple[FileSort, ...] = ("path", "size", "rows")


def _file_sort(text: str) -> FileSort:
    """The files list's sort named ``text``."""
    for sort in _SORTS:
        if sort == text:
            return sort
    raise BadInputError(f"cannot sort files by {text!r} (path, size or rows)")


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
    q: str = "",
    status: str = "",
    cov_sort: str = "files",
    page: str = "",
) -> Response:
    # The filter form sends an empty field when no snapshot is asked for. A bad number is the
    # dashboard's HTML error page (after the admin check), not the API's JSON.
    text, before, page = snapshot.strip(), before.strip(), page.strip()
    for name, value in (("snapshot", text), ("before", before), ("page", page)):
        if value and not (ascii_digits(value) and len(value) < 19):
            what = "a page number" if name == "page" else "a snapshot id"
            return await admin_page(request, _refuse, f"{name}: {what} is a whole number, not {value[:40]!r}")
    filters = _Filters(prefix, contains, int(text) if text else None)
    view = _View(sort, order, cursor, int(page) if page else None, _PathQuery(q.strip(), status, cov_sort))
    return await admin_page(request, _table, namespace, table, filters, view, int(before) if before else None)


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
    keys: dict[str, int | str] = {"path": f.path, "size": f.file_size_bytes, "rows": f.record_count}
    return keys[sort]


def _full_prefix(catalog: Catalog, namespace: str, table: str, prefix: str) -> str:
    """``prefix`` as an absolute path or URI prefix: one written relative (``event_date=2024-03``,
    as the list shows paths) is taken under the directory every live file is in (the common
    directory of the first and last path in order is every path's)."""
    if not prefix or prefix.startswith("/") or "://" in prefix:
        return prefix
    ends = [f.path for desc in (False, True) for f in admin_reads(catalog).list_files_sorted(namespace, table, sort="path", descending=desc, limit=1)]
    return fmt.common_dir(ends) + prefix


#: Coverage statuses a path search may keep, and the orders of the coverage table.
_STATUSES = ("ok", "conflict", "partial")
_COVERAGE_SORTS = {"files": "most files first", "path": "path", "status": "status"}


@dataclass(frozen=True)
class _PathQuery:
    """The search over the global stats, the type conflicts and the coverage: paths containing
    ``text`` (case-insensitive), coverage of one ``status``, coverage ordered by ``sort``."""

    text: str
    status: str
    sort: str

    def check(self) -> None:
        if self.status and self.status not in _STATUSES:
            raise BadInputError(f"status must be ok, conflict or partial, not {self.status[:40]!r}")
        if self.sort not in _COVERAGE_SORTS:
            raise BadInputError(f"cannot sort coverage by {self.sort[:40]!r} (files, path or status)")

    def keeps(self, variant_path: str) -> bool:
        return self.text.casefold() in variant_path.casefold()

    def params(self) -> dict[str, Any]:
        return {"q": self.text, "status": self.status, "cov_sort": None if self.sort == "files" else self.sort}


@dataclass(frozen=True)
class _View:
    """How the files list is ordered and which page of it is shown (a cursor, or a page number)."""

    sort: str
    order: str
    cursor: str | None
    page: int | None
    paths: _PathQuery


def _cursor_page(
    catalog: Catalog, namespace: str, table: str, prefix: str, filters: _Filters, view: _View
) -> tuple[list[DataFileInfo], int, bool, bool]:
    """The page of files at the view's cursor (or the first): the files, the position of the
    first, whether files come before and after it."""
    cur = _decode_cursor(view.cursor, view.sort)
    descending = view.order == "desc"

    def page(desc: bool, after: _Cursor | None) -> keyset.KeysetPage[DataFileInfo]:
        rows = admin_reads(catalog).list_files_sorted(
            namespace,
            table,
            sort=_file_sort(view.sort),
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
        return list(reversed(back.rows)), cur.start if back.more else 0, back.more, True
    ahead = page(descending, cur)
    return ahead.rows, 0 if cur is None else cur.start, cur is not None, ahead.more


def _files_section(catalog: Catalog, namespace: str, table: str, filters: _Filters, view: _View) -> dict[str, Any]:
    """The files list's page (by cursor, or by number: ``page`` of ``pages``), its Previous and
    Next cursors, how many files match, and the files removed at the filtered snapshot."""
    from service.catalog.history import files_at

    _file_sort(view.sort)
    if view.order not in ("asc", "desc"):
        raise BadInputError(f"order must be asc or desc, not {view.order!r}")
    prefix = _full_prefix(catalog, namespace, table, filters.prefix)

    def count() -> tuple[int, bool]:
        """The files matching and whether there are more: past :data:`MATCHES_COUNTED` matches of
        a substring, that number and True (the pages offered are then those known to be full)."""
        n = admin_reads(catalog).count_files(
            namespace, table, prefix=prefix or None, contains=filters.contains or None, added_in=filters.snapshot,
            at_most=MATCHES_COUNTED if filters.contains else None,
        )
        return (MATCHES_COUNTED, True) if filters.contains and n > MATCHES_COUNTED else (n, False)

    if view.page is not None:
        matching, capped = count()
        number = min(max(1, view.page), max(1, -(-matching // FILES_PAGE)))  # a page past the last shows the last
        start = (number - 1) * FILES_PAGE
        got = files_at(
            catalog, namespace, table, sort=view.sort, descending=view.order == "desc",
            filters={"prefix": prefix or None, "contains": filters.contains or None, "snapshot": filters.snapshot},
            offset=start, limit=FILES_PAGE,
        )
        files, more_before, more_after = got, start > 0, capped or start + len(got) < matching
    else:
        files, start, more_before, more_after = _cursor_page(catalog, namespace, table, prefix, filters, view)
        # A page holding every match has counted them: a rare substring's count would be a second
        # scan of every live path (what the page itself read to find so few).
        matching, capped = (len(files), False) if not more_before and not more_after else count()
    pages = max(1, -(-matching // FILES_PAGE))
    next_cursor = prev_cursor = None
    if files and more_after:
        last = files[-1]
        next_cursor = _Cursor(_sort_key(last, view.sort), last.path, start + len(files), False).encode()
    if files and more_before:
        first = files[0]
        prev_cursor = _Cursor(_sort_key(first, view.sort), first.path, max(0, start - FILES_PAGE), True).encode()
    removed = (
        [] if filters.snapshot is None else admin_reads(catalog).files_removed_at(namespace, table, filters.snapshot, limit=FILES_PAGE)
    )
    base = fmt.common_dir([f.path for f in files])
    return {
        "files": [{"f": f, "p": fmt.path_parts(f.path, base)} for f in files],
        "files_base": base,
        "removed": [{"f": f, "p": fmt.path_parts(f.path, fmt.common_dir([r.path for r in removed]))} for f in removed],
        "prefix_full": prefix,
        "first_page": view.cursor is None and view.page in (None, 1),
        "start": start,
        "page_number": start // FILES_PAGE + 1,
        "pages": pages,
        "next_cursor": next_cursor,
        "prev_cursor": prev_cursor,
        "matching": matching,
        "matching_capped": capped,
    }


def _coverage_order(rows: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    if sort == "path":
        return sorted(rows, key=lambda r: (r["c"].variant_path, r["c"].column))
    if sort == "status":  # the paths that need attention first
        rank = {"conflict": 0, "partial": 1, "ok": 2}
        return sorted(rows, key=lambda r: (rank[r["kind"]], -r["c"].shredded_files))
    return rows


def _paths_section(gstats: TableGlobalStats, coverage: list[PathCoverage], pq: _PathQuery) -> dict[str, Any]:
    """The global stats, type conflicts and coverage rows, kept by the path search: at most
    :data:`fmt.MAX_LISTED_PATHS` of each column, the paths with the most values (or files) first."""
    pq.check()
    coverage = [c for c in coverage if pq.keeps(c.variant_path)]
    conflicts: dict[str, list[dict[str, Any]]] = {}
    for row in _coverage_rows([c for c in coverage if _kind(c) == "conflict"]):
        conflicts.setdefault(row["c"].column, []).append(row)
    listed, unlisted = fmt.widest_paths([c for c in coverage if not pq.status or _kind(c) == pq.status])
    # The global stats and the type conflicts of a column are listed within the same bound (the
    # paths with the most values first), in their order.
    shown_global: dict[str, list[dict[str, Any]]] = {}
    global_unlisted: dict[str, int] = {}
    for column, rows in global_rows(gstats).items():
        shown_global[column], left_out = fmt.largest([r for r in rows if pq.keeps(r["g"].variant_path)], lambda r: r["g"].value_count)
        if left_out:
            global_unlisted[column] = left_out
    for column, rows in conflicts.items():
        if len(rows) > fmt.MAX_LISTED_PATHS:
            global_unlisted[column] = global_unlisted.get(column, 0) + len(rows) - fmt.MAX_LISTED_PATHS
            conflicts[column] = rows[: fmt.MAX_LISTED_PATHS]
    return {
        "global_rows": shown_global,
        "global_unlisted": global_unlisted,
        "coverage": _coverage_order(_coverage_rows(listed), pq.sort),
        "coverage_unlisted": unlisted,
        "conflicts": conflicts,
        "pq": pq,
        "pqp": pq.params(),
        "coverage_sorts": _COVERAGE_SORTS,
    }


def _history_section(request: Request, catalog: Catalog, namespace: str, table: str, before: int | None) -> dict[str, Any]:
    """A page of the snapshot list (newest first, keyset ``before``) and the charts of the table's
    files, rows and bytes over its newest snapshots."""
    from service.catalog.history import table_history
    from service.dashboard.history_chart import history_charts

    history = keyset.cut(
        admin_reads(catalog).recent_snapshots(
            namespace=namespace, table=table, before=before, limit=keyset.fetch_limit(SNAPSHOTS_PAGE)
        ),
        SNAPSHOTS_PAGE,
    )
    older = history.rows[-1].snapshot_id if history.more else None
    u = urls(request)
    points = table_history(catalog, namespace, table)
    return {
        "snapshots": history.rows,
        "snapshots_first": before is None,
        "older": older,
        "history_charts": history_charts(points, lambda s: u.table(namespace, table, snapshot=s) + "#files") if points else [],
        "history_points": len(points),
    }


def _table(
    request: Request, namespace: str, table: str, filters: _Filters, view: _View, before: int | None
) -> Response:
    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    gstats = catalog.global_stats(namespace, table)
    paths = _paths_section(gstats, admin_reads(catalog).path_coverage(namespace, table), view.paths)
    return render(
        request,
        "table.html",
        t=info,
        global_file_count=gstats.file_count,
        filters=filters,
        fp={**filters.params(), **paths["pqp"]},
        prefix=filters.prefix,
        sort=view.sort,
        order=view.order,
        **paths,
        **_files_section(catalog, namespace, table, filters, view),
        **_history_section(request, catalog, namespace, table, before),
    )
