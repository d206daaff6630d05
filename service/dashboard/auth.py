"""Who may see the dashboard: the admin role, by ``Authorization`` header or browser session
(:mod:`.session`), the login and logout forms, and CSRF checks on posted forms."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import RedirectResponse, Response

from service.api.auth import AUTH_OFF, Principal
from service.api.errors import shredcat_error_response
from service.catalog.logins import LoginLimits, Throttled
from service.dashboard import session
from service.dashboard.web import (
    app_context,
    catalog_of,
    error_from,
    error_page,
    read_form,
    render,
    safe_next,
    urls,
    wants_html,
)
from service.errors import ShredcatError, UnauthorizedError

router = APIRouter()


async def authenticate(request: Request) -> Principal | Response:
    """The admin principal of the request, or the response to send instead (redirect to the
    login page, 401, 403). A session cookie that verifies is also looked up among the signed-out
    ones (in a thread: a catalog read)."""
    ctx = app_context(request)
    settings = ctx.settings
    if settings.auth != "on":
        p = AUTH_OFF
    else:
        header = request.headers.get("authorization")
        if header:
            try:
                p = ctx.authenticator.authenticate(header)
            except UnauthorizedError as e:
                return shredcat_error_response(request, e)
        else:
            cookie = request.cookies.get(session.SESSION_COOKIE)
            signer: session.SessionSigner = request.app.state.session_signer
            found = signer.verify(cookie, settings.tokens) if cookie else None
            if found is not None and cookie and await run_in_threadpool(_revoked, request, cookie):
                found = None
            if found is None:
                return _sign_in_again(request, had_cookie=bool(cookie))
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


def _revoked(request: Request, cookie: str) -> bool:
    return catalog_of(request).session_revoked(session.session_digest(cookie))


def _sign_in_again(request: Request, *, had_cookie: bool) -> Response:
    if not wants_html(request):
        return shredcat_error_response(
            request, UnauthorizedError("sign in at /admin/login or send Authorization: Bearer <token>")
        )
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    response = RedirectResponse(urls(request).login(target), status_code=303)
    if had_cookie:
        session.clear_session_cookie(response, request)
    return response


Handler = Callable[..., Response]


async def admin_page(request: Request, handler: Handler, *args: Any) -> Response:
    """Authenticate, then run ``handler(request, *args)`` (blocking catalog calls) in a thread,
    turning catalog errors into HTML error pages."""
    guard = await authenticate(request)
    if isinstance(guard, Response):
        return guard

    def run() -> Response:
        try:
            return handler(request, *args)
        except ShredcatError as e:
            return error_from(request, e)

    return await run_in_threadpool(run)


def csrf_checked(request: Request, form: dict[str, str]) -> bool:
    """Forms posted with a session cookie (or with auth off) must carry the CSRF token; requests
    authenticated by an Authorization header need none."""
    if request.headers.get("authorization") and app_context(request).settings.auth == "on":
        return True
    return session.csrf_ok(request, form.get(session.CSRF_FIELD))


# --- login ------------------------------------------------------------------------------------


@router.get("/login")
async def login_form(request: Request, next_url: Annotated[str | None, Query(alias="next")] = None) -> Response:
    u = urls(request)
    if app_context(request).settings.auth != "on":
        return RedirectResponse(safe_next(next_url, u.base), status_code=303)
    return render(request, "login.html", next_url=safe_next(next_url, u.base), error=None, status_code=200)


@router.post("/login")
async def login_submit(request: Request) -> Response:
    form = await read_form(request)
    if isinstance(form, Response):
        return form
    u = urls(request)
    next_url = safe_next(form.get("next"), u.base)
    ctx = app_context(request)
    if ctx.settings.auth != "on":
        return RedirectResponse(next_url, status_code=303)

    def again(status: int, error: str) -> Response:
        return render(request, "login.html", status=status, next_url=next_url, error=error, status_code=status)

    token = form.get("token", "").strip()

    def attempt() -> tuple[Principal | tuple[int, str], bool]:
        """The form's principal, or the (status, message) to answer; and whether that is a failed
        sign-in to count. Memory only: it runs inside the catalog's throttle transaction."""
        if not session.csrf_ok(request, form.get(session.CSRF_FIELD)):
            return (403, "The form expired or cookies are blocked: reload the page and sign in again."), False
        if not token:
            return (422, "Enter a token."), False
        try:
            return ctx.authenticator.authenticate(f"Bearer {token}"), False
        except UnauthorizedError:
            return (401, "This token is not valid."), True

    # Checked and counted by the catalog in one transaction, shared by every process and replica
    # (tests/ops/test_login_throttle.py): concurrent attempts are checked exactly up to the limits.
    address = request.client.host if request.client else "-"
    limits: LoginLimits = request.app.state.login_limits
    try:
        outcome = await run_in_threadpool(catalog_of(request).login_attempt, address, limits, attempt)
    except ShredcatError as e:
        return error_from(request, e)
    if isinstance(outcome, Throttled):
        response = again(429, f"Too many failed sign-ins: try again in {outcome.retry_after} seconds.")
        response.headers["Retry-After"] = str(outcome.retry_after)
        return response
    if isinstance(outcome, tuple):
        return again(*outcome)
    p = outcome
    if p.role != "admin":
        return again(403, f"This token has the {p.role!r} role; the dashboard needs an admin token.")
    response = RedirectResponse(next_url, status_code=303)
    signer: session.SessionSigner = request.app.state.session_signer
    session.set_session_cookie(response, request, signer.make(token))
    return response


@router.post("/logout")
async def logout(request: Request) -> Response:
    form = await read_form(request)
    if isinstance(form, Response):
        return form
    if not session.csrf_ok(request, form.get(session.CSRF_FIELD)):
        return error_page(request, 403, "Forbidden", "Invalid form token: reload the page and try again.")
    cookie = request.cookies.get(session.SESSION_COOKIE)
    signer: session.SessionSigner = request.app.state.session_signer
    expiry = session.cookie_expiry(cookie) if cookie else None
    # Only a session this server signed is written down (anyone may post the form: a made-up
    # cookie must not add rows), until its expiry.
    if cookie and expiry is not None and signer.verify(cookie, app_context(request).settings.tokens) is not None:
        # Revoked server side, not only forgotten by this browser: a copy of the cookie is refused
        # by every process sharing the catalog until it would have expired.
        when = datetime.fromtimestamp(expiry, UTC)
        try:
            await run_in_threadpool(catalog_of(request).revoke_session, session.session_digest(cookie), when)
        except ShredcatError as e:
            refused = error_from(request, e)
            session.clear_session_cookie(refused, request)
            return refused
    response = RedirectResponse(urls(request).login(), status_code=303)
    session.clear_session_cookie(response, request)
    return response
