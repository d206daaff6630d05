"""The admin dashboard: server-rendered pages under ``/admin`` (admin role).

Pages read through the catalog library (:class:`service.catalog.Catalog`: its reads and its
planner); no SQL or database access here or in the templates. No JavaScript: forms,
links and an SVG drawn on the server. Every page answers HTML; only an unauthenticated request
that is not from a browser (no ``text/html`` in ``Accept``) gets the API's JSON 401.

=====================================================  =============================================
``GET  /admin``                                        overview: tables, recent commits
``GET  /admin/tables/{ns}/{table}``                    columns, global stats, coverage, files, history
``GET  /admin/tables/{ns}/{table}/path``               one path's per-file [min, max] chart
``GET  /admin/tables/{ns}/{table}/file``               one file's metadata and per-path stats
``GET|POST /admin/tables/{ns}/{table}/prune``          prune playground (SQL predicate)
``GET|POST /admin/login``, ``POST /admin/logout``      browser sessions (see :mod:`.session`)
``GET  /admin/static/{name}``                          the stylesheet (no auth)
=====================================================  =============================================
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import APIRouter, Query, Request
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, RedirectResponse, Response

import service
from service import pagetoken
from service.api.auth import Principal
from service.api.errors import request_id, shredcat_error_response
from service.dashboard import format as fmt
from service.dashboard import session
from service.dashboard.chart import ChartFile, render_chart
from service.errors import (
    BadInputError,
    InvalidPredicateError,
    NotFoundError,
    ShredcatError,
    StorageUnavailableError,
    UnauthorizedError,
)

if TYPE_CHECKING:
    from service.catalog import Catalog, PathCoverage, TableGlobalStats

log = logging.getLogger("service.dashboard")

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"
#: Files listed per page on the table page, snapshots per page of its history.
FILES_PAGE = 50
SNAPSHOTS_PAGE = 20
#: Files drawn in a path chart at most.
CHART_LIMIT = 2000
#: Candidates listed by the playground (the counts cover all of them).
PLAYGROUND_PAGE = 100
#: Longest predicate the playground takes (characters).
MAX_PREDICATE_CHARS = 100_000

router = APIRouter(prefix="/admin", include_in_schema=False)

_env = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_env.filters.update(num=fmt.num, bytes=fmt.human_bytes, when=fmt.when, percent=fmt.percent)


def _static_files() -> dict[str, tuple[bytes, str, str]]:
    types = {".css": "text/css; charset=utf-8", ".svg": "image/svg+xml", ".txt": "text/plain; charset=utf-8"}
    out = {}
    if STATIC_DIR.is_dir():
        for p in STATIC_DIR.iterdir():
            if p.is_file() and p.suffix in types:
                data = p.read_bytes()
                out[p.name] = (data, types[p.suffix], hashlib.sha256(data).hexdigest()[:12])
    return out


_STATIC = _static_files()

_SECURITY_HEADERS = {
    # No script at all; styles only from our own stylesheet; forms post only to us.
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}


# --- URLs -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Urls:
    """Builds dashboard URLs (under the app's root path)."""

    base: str

    def _q(self, url: str, params: dict[str, Any]) -> str:
        kept = {k: v for k, v in params.items() if v is not None and v != ""}
        return url + ("?" + urlencode(kept) if kept else "")

    def home(self) -> str:
        return self.base

    def static(self, name: str) -> str:
        entry = _STATIC.get(name)
        return f"{self.base}/static/{name}" + (f"?v={entry[2]}" if entry else "")

    def table(self, ns: str, table: str, **params: Any) -> str:
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}", params)

    def path(self, ns: str, table: str, column: str, variant_path: str, **params: Any) -> str:
        return self._q(
            f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/path",
            {"column": column, "path": variant_path, **params},
        )

    def file(self, ns: str, table: str, path: str) -> str:
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/file", {"path": path})

    def prune(self, ns: str, table: str, **params: Any) -> str:
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/prune", params)

    def login(self, next_url: str | None = None) -> str:
        return self._q(f"{self.base}/login", {"next": next_url})


def _urls(request: Request) -> Urls:
    return Urls(str(request.scope.get("root_path", "")).rstrip("/") + "/admin")


# --- rendering --------------------------------------------------------------------------------


def _ctx(request: Request) -> Any:
    return request.app.state.ctx


def _catalog(request: Request) -> Catalog:
    ctx = _ctx(request)
    if ctx.catalog is None:  # the lifespan did not run
        raise ShredcatError("the application was not started (lifespan not run)")
    return ctx.catalog


def render(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    principal: Principal | None = getattr(request.state, "principal", None)
    via_cookie = bool(getattr(request.state, "via_cookie", False))
    u = _urls(request)
    html = _env.get_template(template).render(
        request_path=request.url.path,
        u=u,
        base=u.base,
        version=service.__version__,
        principal=principal,
        auth_on=_ctx(request).settings.auth == "on",
        show_logout=via_cookie,
        csrf=session.csrf_token(request),
        csrf_field=session.CSRF_FIELD,
        **values,
    )
    response = HTMLResponse(html, status_code=status, headers=_SECURITY_HEADERS)
    session.attach_csrf_cookie(response, request)
    return response


def error_page(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    return render(request, "error.html", status=status, status_code=status, title=title, message=message)


def _error_from(request: Request, e: ShredcatError) -> HTMLResponse:
    status = e.http_status
    if isinstance(e, StorageUnavailableError):
        return error_page(request, 503, "Catalog unavailable", "The catalog database is unavailable; retry later.")
    if status >= 500:
        log.error("dashboard request %s: %s", request_id(request), e.message, exc_info=e)
        return error_page(
            request, status, "Internal error", f"Something went wrong (request id {request_id(request)})."
        )
    titles = {404: "Not found", 403: "Forbidden", 413: "Too large", 409: "Conflict"}
    return error_page(request, status, titles.get(status, "Invalid request"), e.message)


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def _safe_next(target: str | None, base: str) -> str:
    """Only our own pages (no scheme, no host, no ``//``) may be redirected to after login."""
    if not target or not target.startswith(base) or target.startswith("//") or "\\" in target:
        return base
    rest = target[len(base) :]
    if rest and rest[0] not in "/?":
        return base
    return target


# --- authentication ---------------------------------------------------------------------------


def authenticate(request: Request) -> Principal | Response:
    """The admin principal of the request, or the response to send instead (redirect to the
    login page, 401, 403)."""
    ctx = _ctx(request)
    settings = ctx.settings
    if settings.auth != "on":
        p = Principal("admin", "auth-off")
    else:
        header = request.headers.get("authorization")
        if header:
            try:
                p = ctx.authenticator.authenticate(header)
            except UnauthorizedError as e:
                return shredcat_error_response(request, e)
        else:
            cookie = request.cookies.get(session.SESSION_COOKIE)
            found = session.verify_session(cookie, settings.tokens) if cookie else None
            if found is None:
                if not _wants_html(request):
                    return shredcat_error_response(
                        request, UnauthorizedError("sign in at /admin/login or send Authorization: Bearer <token>")
                    )
                target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
                response = RedirectResponse(_urls(request).login(target), status_code=303)
                if cookie:
                    session.clear_session_cookie(response, request)
                return response
            p = found
            request.state.via_cookie = True
    request.state.principal = p
    if p.role != "admin":
        return error_page(
            request,
            403,
            "Forbidden",
            f"The dashboard needs the admin role; this token has the {p.role!r} role.",
        )
    return p


Handler = Callable[..., Response]


async def _page(request: Request, handler: Handler, *args: Any) -> Response:
    """Authenticate, then run ``handler(request, *args)`` (blocking catalog calls) in a thread,
    turning catalog errors into HTML error pages."""
    guard = authenticate(request)
    if isinstance(guard, Response):
        return guard

    def run() -> Response:
        try:
            return handler(request, *args)
        except ShredcatError as e:
            return _error_from(request, e)

    return await run_in_threadpool(run)


async def _form(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body (the only kind our forms send)."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        return {}
    raw = await request.body()
    try:
        parsed = parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
    except (UnicodeDecodeError, ValueError):
        return {}
    return {k: v[0] for k, v in parsed.items() if v}


def _csrf_checked(request: Request, form: dict[str, str]) -> bool:
    """Forms posted with a session cookie (or with auth off) must carry the CSRF token; requests
    authenticated by an Authorization header need none."""
    if request.headers.get("authorization") and _ctx(request).settings.auth == "on":
        return True
    return session.csrf_ok(request, form.get(session.CSRF_FIELD))


# --- login ------------------------------------------------------------------------------------


@router.get("/login")
async def login_form(request: Request, next_url: Annotated[str | None, Query(alias="next")] = None) -> Response:
    u = _urls(request)
    if _ctx(request).settings.auth != "on":
        return RedirectResponse(_safe_next(next_url, u.base), status_code=303)
    return render(request, "login.html", next_url=_safe_next(next_url, u.base), error=None, status_code=200)


@router.post("/login")
async def login_submit(request: Request) -> Response:
    form = await _form(request)
    u = _urls(request)
    next_url = _safe_next(form.get("next"), u.base)
    ctx = _ctx(request)
    if ctx.settings.auth != "on":
        return RedirectResponse(next_url, status_code=303)

    def again(status: int, error: str) -> Response:
        return render(request, "login.html", status=status, next_url=next_url, error=error, status_code=status)

    if not session.csrf_ok(request, form.get(session.CSRF_FIELD)):
        return again(403, "The form expired or cookies are blocked: reload the page and sign in again.")
    token = form.get("token", "").strip()
    if not token:
        return again(422, "Enter a token.")
    try:
        p = ctx.authenticator.authenticate(f"Bearer {token}")
    except UnauthorizedError:
        return again(401, "This token is not valid.")
    if p.role != "admin":
        return again(403, f"This token has the {p.role!r} role; the dashboard needs an admin token.")
    response = RedirectResponse(next_url, status_code=303)
    session.set_session_cookie(response, request, session.make_session(token))
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = await _form(request)
    if not session.csrf_ok(request, form.get(session.CSRF_FIELD)):
        return error_page(request, 403, "Forbidden", "Invalid form token: reload the page and try again.")
    response = RedirectResponse(_urls(request).login(), status_code=303)
    session.clear_session_cookie(response, request)
    return response


# --- static -----------------------------------------------------------------------------------


@router.get("/static/{name}")
async def static(name: str) -> Response:
    entry = _STATIC.get(name)
    if entry is None:
        return Response("not found", status_code=404, media_type="text/plain")
    data, ctype, _ = entry
    return Response(
        data,
        media_type=ctype,
        headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"},
    )


# --- overview ---------------------------------------------------------------------------------


@router.get("")
@router.get("/")
async def overview(request: Request) -> Response:
    return await _page(request, _overview)


def _overview(request: Request) -> Response:
    catalog = _catalog(request)
    tables = catalog.list_tables()
    namespaces = catalog.list_namespaces()
    recent = catalog.recent_snapshots(limit=15)
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
        totals=totals,
        recent=recent,
        empty_namespaces=empty_namespaces,
        backend=catalog.backend,
    )


# --- table ------------------------------------------------------------------------------------


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
async def table_page(
    request: Request,
    namespace: str,
    table: str,
    prefix: str = "",
    sort: str = "path",
    order: str = "asc",
    cursor: str | None = None,
    before: int | None = None,
) -> Response:
    return await _page(request, _table, namespace, table, prefix, sort, order, cursor, before)


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


def _global_rows(gstats: TableGlobalStats) -> dict[str, list[dict[str, Any]]]:
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
    catalog = _catalog(request)
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
        global_rows=_global_rows(gstats),
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


# --- path chart -------------------------------------------------------------------------------


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
    return await _page(request, _path, namespace, table, column, path, shredded_type, order)


def _path(
    request: Request, namespace: str, table: str, column: str, variant_path: str, type_: str | None, order: str
) -> Response:
    catalog = _catalog(request)
    info = catalog.get_table(namespace, table)
    if not column or not variant_path:
        raise BadInputError("give a column and a variant path (?column=v&path=\"id\")")
    if order not in ("min", "path"):
        raise BadInputError(f"order must be min or path, not {order!r}")
    pb = catalog.path_bounds(
        namespace, table, column, variant_path, shredded_type=type_, order=order, limit=CHART_LIMIT  # type: ignore[arg-type]
    )
    u = _urls(request)
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
        (r for r in _global_rows(gstats).get(column, []) if r["g"].variant_path == variant_path), None
    )
    shredded = sum(n for _, n in pb.types)
    example = None
    if pb.shredded_type is not None and pb.files:
        from service.values import parse_bound

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


# --- file -------------------------------------------------------------------------------------


@router.get("/tables/{namespace}/{table}/file")
async def file_page(request: Request, namespace: str, table: str, path: str = "") -> Response:
    return await _page(request, _file, namespace, table, path)


def _file(request: Request, namespace: str, table: str, path: str) -> Response:
    catalog = _catalog(request)
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


# --- prune playground -------------------------------------------------------------------------


@router.get("/tables/{namespace}/{table}/prune")
async def prune_form(request: Request, namespace: str, table: str, sql: str = "") -> Response:
    return await _page(request, _prune, namespace, table, {"sql": sql}, False)


@router.post("/tables/{namespace}/{table}/prune")
async def prune_run(request: Request, namespace: str, table: str) -> Response:
    form = await _form(request)
    return await _page(request, _prune, namespace, table, form, True)


def _examples(catalog: Catalog, namespace: str, table: str) -> list[str]:
    out = []
    gstats = catalog.global_stats(namespace, table)
    for column, paths in gstats.columns.items():
        for g in paths:
            ex = fmt.example_predicate(column, g.variant_path, g.shredded_type, g.min_value)
            if ex:
                out.append(ex)
            if len(out) >= 3:
                return out
    return out


def _prune(request: Request, namespace: str, table: str, form: dict[str, str], run: bool) -> Response:
    catalog = _catalog(request)
    info = catalog.get_table(namespace, table)
    sql = form.get("sql", "")
    snapshot_text = form.get("snapshot", "").strip()
    values: dict[str, Any] = {
        "t": info,
        "sql": sql,
        "snapshot": snapshot_text,
        "result": None,
        "error": None,
        "error_field": None,
    }
    values["examples"] = _examples(catalog, namespace, table)
    if not run:
        return render(request, "prune.html", **values)
    if not _csrf_checked(request, form):
        values["error"] = "The form expired: reload the page and run the predicate again."
        return render(request, "prune.html", status=403, **values)
    settings = _ctx(request).settings
    try:
        snapshot = None
        if snapshot_text:
            if not snapshot_text.isdigit():
                raise BadInputError("snapshot: a snapshot id is a whole number", details={"field": "snapshot"})
            snapshot = int(snapshot_text)
        from service.pruning.parse_sql import parse_sql

        if not sql.strip():
            raise InvalidPredicateError("enter a predicate, e.g. variant_get(v, '$.id', 'bigint') = 42")
        expr = parse_sql(
            sql,
            max_depth=settings.max_predicate_depth,
            max_in_list=settings.max_in_list,
            max_length=min(MAX_PREDICATE_CHARS, settings.max_predicate_length),
            max_terms=settings.max_predicate_terms,
        )
        result = catalog.plan(namespace, table, expr, snapshot_id=snapshot, explain=True, page_size=PLAYGROUND_PAGE)
    except NotFoundError as e:
        if e.details.get("snapshot_id") is None and e.details.get("snapshot") is None:
            raise
        values["error"] = e.message
        values["error_field"] = "snapshot"
        return render(request, "prune.html", status=404, **values)
    except ShredcatError as e:
        if e.http_status >= 500:
            raise
        values["error"] = e.message
        values["error_field"] = "snapshot" if e.details.get("field") == "snapshot" else "sql"
        return render(request, "prune.html", status=e.http_status, **values)
    values["result"] = result
    values["kept_explained"] = [x for x in (result.explain or ()) if x.kept]
    values["pruned_explained"] = [x for x in (result.explain or ()) if not x.kept]
    return render(request, "prune.html", **values)
