"""Who is calling a dashboard page: a bearer token or a signed session cookie; and CSRF tokens.

A browser does not send ``Authorization: Bearer`` on a plain navigation, so ``/admin/login`` takes
the token once and sets a session cookie. The cookie never holds the token: it is

    ``v1.<expiry unix seconds>.<base64url HMAC-SHA256(key=sha256(token), "shredcat-dashboard:v1:<expiry>")>``

keyed by the token's digest, which only the server (``SHREDCAT_TOKENS``) and the token's holder
know. Verifying computes the MAC under **every** configured digest and compares each in constant
time (like :class:`service.api.auth.Authenticator`), so the role comes from the current
configuration: removing a token from ``SHREDCAT_TOKENS`` ends its sessions at once, and a changed
role applies to the next request. Sessions are stateless (any worker process verifies them) and
expire after :data:`SESSION_SECONDS`. Cookies are ``HttpOnly``, ``SameSite=Strict``, ``Path=/admin``,
and ``Secure`` when the request came over https.

Forms (login, logout, the prune playground) carry a CSRF token checked against a second cookie
(double submit): a cross-site page can neither read the cookie nor, with ``SameSite=Strict``, make
the browser send it. Requests authenticated by an ``Authorization`` header need no CSRF token (a
browser never adds that header on its own).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Mapping

from fastapi import Request
from starlette.responses import Response

from service.api.auth import Principal

SESSION_COOKIE = "shredcat_session"
CSRF_COOKIE = "shredcat_csrf"
CSRF_FIELD = "csrf_token"
COOKIE_PATH = "/admin"
#: Lifetime of a dashboard session (12 hours).
SESSION_SECONDS = 12 * 3600
_CONTEXT = b"shredcat-dashboard:v1:"


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _mac(digest: bytes, expiry: int) -> bytes:
    return hmac.new(digest, _CONTEXT + str(expiry).encode("ascii"), hashlib.sha256).digest()


def make_session(token: str, *, now: float | None = None, ttl: int = SESSION_SECONDS) -> str:
    """The session cookie value for ``token`` (the caller has already checked the token)."""
    expiry = int(now if now is not None else time.time()) + ttl
    digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
    return f"v1.{expiry}.{_b64(_mac(digest, expiry))}"


def verify_session(value: str, tokens: Mapping[str, str], *, now: float | None = None) -> Principal | None:
    """The principal of a session cookie, or None (malformed, expired, or no configured token
    signs it)."""
    parts = value.split(".")
    if len(parts) != 3 or parts[0] != "v1" or not parts[1].isdigit() or len(parts[1]) > 12:
        return None
    expiry = int(parts[1])
    if expiry <= (now if now is not None else time.time()):
        return None
    try:
        presented = base64.urlsafe_b64decode(parts[2] + "=" * (-len(parts[2]) % 4))
    except (ValueError, TypeError):
        return None
    found: Principal | None = None
    for digest_hex, role in tokens.items():
        digest = bytes.fromhex(digest_hex)
        if hmac.compare_digest(_mac(digest, expiry), presented) and found is None:
            found = Principal(role, digest_hex[:8])
    return found


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_session_cookie(response: Response, request: Request, value: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=SESSION_SECONDS,
        path=COOKIE_PATH,
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )


def clear_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(SESSION_COOKIE, path=COOKIE_PATH, httponly=True, samesite="strict", secure=_secure(request))


# --- CSRF (double submit) ---------------------------------------------------------------------


def csrf_token(request: Request) -> str:
    """The CSRF token to put in this response's forms: the cookie's, or a new one (remembered on
    ``request.state`` so that :func:`attach_csrf_cookie` sets it)."""
    existing = request.cookies.get(CSRF_COOKIE)
    if existing and 20 <= len(existing) <= 100 and existing.isascii():
        return existing
    new = getattr(request.state, "new_csrf", None)
    if new is None:
        new = secrets.token_urlsafe(32)
        request.state.new_csrf = new
    return str(new)


def attach_csrf_cookie(response: Response, request: Request) -> None:
    new = getattr(request.state, "new_csrf", None)
    if new is not None:
        response.set_cookie(
            CSRF_COOKIE, new, path=COOKIE_PATH, httponly=True, samesite="strict", secure=_secure(request)
        )


def csrf_ok(request: Request, submitted: str | None) -> bool:
    cookie = request.cookies.get(CSRF_COOKIE)
    if not cookie or not submitted:
        return False
    return hmac.compare_digest(cookie.encode("utf-8", "surrogateescape"), submitted.encode("utf-8", "surrogateescape"))
