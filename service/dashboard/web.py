"""What every dashboard page shares: templates, static files, security headers, URLs, rendering
and error pages. No routes and no authentication here (see :mod:`.auth` and :mod:`.pages`)."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, quote, urlencode

from fastapi import Request
from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, Response
from starlette.types import Scope

import service
from service.api.auth import Principal
from service.api.errors import request_id
from service.dashboard import format as fmt
from service.dashboard import session
from service.dashboard.session import DASHBOARD_PREFIX
from service.errors import ShredcatError, StorageUnavailableError
from service.values.text import ascii_digits

if TYPE_CHECKING:
    from service.api.deps import AppContext
    from service.catalog import Catalog

log = logging.getLogger("service.dashboard")

HERE = Path(__file__).parent
STATIC_DIR = HERE / "static"

ENV = Environment(
    loader=FileSystemLoader(HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
ENV.filters.update(
    num=fmt.num, bytes=fmt.human_bytes, when=fmt.when, percent=fmt.percent, change=fmt.change_text
)


def static_files() -> dict[str, tuple[bytes, str, str]]:
    types = {
        ".css": "text/css; charset=utf-8",
        ".js": "text/javascript; charset=utf-8",
        ".svg": "image/svg+xml",
        ".txt": "text/plain; charset=utf-8",
    }
    out = {}
    if STATIC_DIR.is_dir():
        for p in STATIC_DIR.iterdir():
            if p.is_file() and p.suffix in types:
                data = p.read_bytes()
                out[p.name] = (data, types[p.suffix], hashlib.sha256(data).hexdigest()[:12])
    return out


STATIC = static_files()

SECURITY_HEADERS = {
    # Scripts and styles only from our own static files (no inline script or style); forms post
    # only to us, the script fetches only from us (completion, copy buttons).
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; "
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
        entry = STATIC.get(name)
        return f"{self.base}/static/{name}" + (f"?v={entry[2]}" if entry else "")

    def table(self, ns: str, table: str, **params: Any) -> str:
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}", params)

    def path(self, ns: str, table: str, column: str, variant_path: str, **params: Any) -> str:
        return self._q(
            f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/path",
            {"column": column, "path": variant_path, **params},
        )

    def coverage(self, ns: str, table: str, column: str, variant_path: str, shredded_type: str, **params: Any) -> str:
        """The files where the path is shredded as ``shredded_type`` ("": not fully shredded)."""
        return self._q(
            f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/coverage",
            {"column": column, "path": variant_path, "type": shredded_type, **params},
        )

    def file(self, ns: str, table: str, path: str, **params: Any) -> str:
        """A file's page (``snapshot``: as it was at that snapshot, for a file no longer live)."""
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/file", {"path": path, **params})

    def prune_export(self, ns: str, table: str, **params: Any) -> str:
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/prune/export", params)

    def prune_duckdb(self, ns: str, table: str, **params: Any) -> str:
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/prune/duckdb", params)

    def complete(self, ns: str, table: str) -> str:
        return f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/complete"

    def prune(self, ns: str, table: str, **params: Any) -> str:
        return self._q(f"{self.base}/tables/{quote(ns, safe='')}/{quote(table, safe='')}/prune", params)

    def login(self, next_url: str | None = None) -> str:
        return self._q(f"{self.base}/login", {"next": next_url})


def urls(request: Request) -> Urls:
    return Urls(session.dashboard_base(request))


# --- rendering --------------------------------------------------------------------------------


def app_context(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    return ctx


def catalog_of(request: Request) -> Catalog:
    ctx = app_context(request)
    if ctx.catalog is None:  # the lifespan did not run
        raise ShredcatError("the application was not started (lifespan not run)")
    return ctx.catalog


def render(request: Request, template: str, status: int = 200, **values: Any) -> HTMLResponse:
    principal: Principal | None = getattr(request.state, "principal", None)
    via_cookie = bool(getattr(request.state, "via_cookie", False))
    u = urls(request)
    html = ENV.get_template(template).render(
        request_path=request.url.path,
        u=u,
        base=u.base,
        version=service.__version__,
        principal=principal,
        auth_on=app_context(request).settings.auth == "on",
        show_logout=via_cookie,
        csrf=session.csrf_token(request),
        csrf_field=session.CSRF_FIELD,
        **values,
    )
    response = HTMLResponse(html, status_code=status, headers=SECURITY_HEADERS)
    session.attach_csrf_cookie(response, request)
    return response


def error_page(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    return render(request, "error.html", status=status, status_code=status, title=title, message=message)


def error_from(request: Request, e: ShredcatError) -> HTMLResponse:
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


def refused_url_page(scope: Scope, e: ShredcatError) -> Response | None:
    """The error page of a dashboard URL the API's middleware refuses before any route runs (a
    NUL in it), as the dashboard's own pages answer ``e``; None for any other URL (the API's JSON)."""
    path, root = str(scope.get("path", "")), str(scope.get("root_path", ""))
    path = path[len(root) :] if root and path.startswith(root) else path  # the route's path, as routing sees it
    if path != DASHBOARD_PREFIX and not path.startswith(DASHBOARD_PREFIX + "/"):
        return None
    return error_from(Request(scope), e)


def wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


def safe_next(target: str | None, base: str) -> str:
    """Only our own pages (no scheme, no host, no ``//``) may be redirected to after login."""
    if not target or not target.startswith(base) or target.startswith("//") or "\\" in target:
        return base
    rest = target[len(base) :]
    if rest and rest[0] not in "/?":
        return base
    return target


#: The largest sign-in or sign-out form (a token, a CSRF token, a next URL): the API's body limit
#: is far larger, and decoding a form costs some 75 bytes of memory per escaped byte.
FORM_MAX_BYTES = 16 * 1024


def form_limit_for(max_text_chars: int) -> int:
    """The largest form carrying a text of ``max_text_chars`` characters: each may come
    percent-encoded (up to 4 UTF-8 bytes, 3 characters each), plus the form's other fields."""
    return 12 * max_text_chars + FORM_MAX_BYTES


async def read_form(request: Request, limit: int = FORM_MAX_BYTES) -> dict[str, str] | Response:
    """An ``application/x-www-form-urlencoded`` body (the only kind our forms send), or the 413
    page when it is larger than ``limit`` bytes: read in chunks and refused once past it, never
    held whole. Large forms are decoded off the event loop."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype != "application/x-www-form-urlencoded":
        return {}

    def too_large() -> Response:
        return error_page(request, 413, "Form too large", f"The form is larger than {limit:,} bytes.")

    declared = request.headers.get("content-length", "")
    if ascii_digits(declared) and int(declared) > limit:
        return too_large()
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            return too_large()
        chunks.append(chunk)
    raw = b"".join(chunks)

    def parse() -> dict[str, str]:
        try:
            parsed = parse_qs(raw.decode("utf-8"), keep_blank_values=True, max_num_fields=50)
        except (UnicodeDecodeError, ValueError):
            return {}
        return {k: v[0] for k, v in parsed.items() if v}

    return parse() if size <= FORM_MAX_BYTES else await run_in_threadpool(parse)


async def static_route(name: str) -> Response:
    entry = STATIC.get(name)
    if entry is None:
        return Response("not found", status_code=404, media_type="text/plain")
    data, ctype, _ = entry
    return Response(
        data,
        media_type=ctype,
        headers={"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"},
    )
