"""Who is calling a dashboard page: a bearer token or a signed session cookie; failed-login
throttling; and CSRF tokens.

A browser does not send ``Authorization: Bearer`` on a plain navigation, so ``/admin/login`` takes
the token once and sets a session cookie. The cookie never holds the token: it is

    ``v3.<expiry unix seconds>.<nonce>.<base64url HMAC-SHA256(key=<session key>, "shredcat-dashboard:v3:<nonce>:<expiry>:" + sha256(token))>``

(``v2`` cookies, without the random nonce, still verify until they expire)

keyed by a session key (``SHREDCAT_SESSION_SECRETS``) that is not in ``SHREDCAT_TOKENS``: the
token digests of the configuration alone do not let anyone make a cookie. The first key signs; all
keys verify, so a key is rotated by putting a new one first and dropping the old one a session
lifetime later. Verifying computes the MAC for **every** (key, configured digest) pair and compares
each in constant time (like :class:`service.api.auth.Authenticator`), so the role comes from the
current configuration: removing a token from ``SHREDCAT_TOKENS`` ends its sessions at once, and a
changed role applies to the next request. Any worker process holding the keys verifies a cookie;
sessions expire after :data:`SESSION_SECONDS` (an expiry further ahead than that is refused
whoever signed it), and signing out revokes one at once: its cookie's sha256 is kept in the
catalog database until that expiry (``shredcat_revoked_session``), so every process and replica
sharing the catalog refuses it, also after a restart. Cookies are ``HttpOnly``, ``SameSite=Strict``, ``Path=/admin``, and
``Secure`` when the request came over https (directly, or through a proxy listed in
``SHREDCAT_FORWARDED_ALLOW_IPS``).

Failed sign-ins are counted per client address and overall in the catalog database
(``shredcat_login_failure``, :meth:`service.catalog.Catalog.login_attempt`), so the limits hold for
all processes and replicas together: past them, ``/admin/login`` answers 429 with ``Retry-After``
without looking at the token.

Forms (login, logout, the prune playground) carry a CSRF token checked against a second cookie
(double submit): a cross-site page can neither read the cookie nor, with ``SameSite=Strict``, make
the browser send it. Requests authenticated by an ``Authorization`` header need no CSRF token (a
browser never adds that header on its own).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Mapping, Sequence

from fastapi import Request
from starlette.responses import Response

from service.api.auth import Principal
from service.values.text import ascii_digits

SESSION_COOKIE = "shredcat_session"
CSRF_COOKIE = "shredcat_csrf"
CSRF_FIELD = "csrf_token"
#: Where the dashboard's pages are, under the app's root path (:func:`dashboard_base`). Here, not in
#: :mod:`.web` (which imports this module), so both read the one constant.
DASHBOARD_PREFIX = "/admin"
#: Lifetime of a dashboard session (12 hours), also the furthest expiry a cookie may carry.
SESSION_SECONDS = 12 * 3600
#: Clock difference tolerated between the process that signed a cookie and the one verifying it.
CLOCK_SKEW_SECONDS = 60
_CONTEXT = b"shredcat-dashboard:v2:"
_CONTEXT_V3 = b"shredcat-dashboard:v3:"
_NONCE = re.compile(r"[A-Za-z0-9_-]+")


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


class SessionSigner:
    """Makes and verifies session cookie values with the session keys (first signs, all verify)."""

    def __init__(self, keys: Sequence[bytes]) -> None:
        if not keys:
            raise ValueError("at least one session key is needed")
        self._keys = tuple(keys)

    @staticmethod
    def _mac(key: bytes, expiry: int, digest: bytes, nonce: str | None = None) -> bytes:
        context = _CONTEXT if nonce is None else _CONTEXT_V3 + nonce.encode("ascii") + b":"
        return hmac.new(key, context + str(expiry).encode("ascii") + b":" + digest, hashlib.sha256).digest()

    def make(self, token: str, *, now: float | None = None) -> str:
        """The session cookie value for ``token`` (the caller has already checked the token): a
        random nonce makes each sign-in's cookie its own, so signing out ends that one only."""
        expiry = int(now if now is not None else time.time()) + SESSION_SECONDS
        digest = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        nonce = secrets.token_urlsafe(16)
        return f"v3.{expiry}.{nonce}.{_b64(self._mac(self._keys[0], expiry, digest, nonce))}"

    def verify(self, value: str, tokens: Mapping[str, str], *, now: float | None = None) -> Principal | None:
        """The principal of a session cookie, or None (malformed, expired, expiring further ahead
        than a session lasts, or signed by no (key, configured token) pair). Cookies of the form
        before nonces (``v2``) verify until they expire."""
        parts = value.split(".")
        if len(parts) == 3 and parts[0] == "v2":
            nonce = None
        elif len(parts) == 4 and parts[0] == "v3" and 16 <= len(parts[2]) <= 32 and _NONCE.fullmatch(parts[2]):
            nonce = parts[2]
        else:
            return None
        # One spelling per cookie: sign-out revokes the digest of the cookie's text, so another
        # text of the same signature (a leading zero, a MAC in non-canonical base64) must not verify.
        if not ascii_digits(parts[1]) or len(parts[1]) > 12 or str(int(parts[1])) != parts[1]:
            return None
        expiry = int(parts[1])
        t = now if now is not None else time.time()
        if not t < expiry <= t + SESSION_SECONDS + CLOCK_SKEW_SECONDS:
            return None
        try:
            presented = base64.urlsafe_b64decode(parts[-1] + "=" * (-len(parts[-1]) % 4))
        except (ValueError, TypeError):
            return None
        if _b64(presented) != parts[-1]:
            return None
        found: Principal | None = None
        for digest_hex, role in tokens.items():
            digest = bytes.fromhex(digest_hex)
            for key in self._keys:
                if hmac.compare_digest(self._mac(key, expiry, digest, nonce), presented) and found is None:
                    found = Principal.of_token(role, digest_hex)
        return found


def session_digest(value: str) -> str:
    """What the catalog keeps of a signed-out session's cookie (sha256 hex; never the cookie)."""
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()


def cookie_expiry(value: str) -> int | None:
    """The expiry (unix seconds) a session cookie states, or None when it states none."""
    parts = value.split(".")
    return int(parts[1]) if len(parts) in (3, 4) and ascii_digits(parts[1]) and len(parts[1]) <= 12 else None


def dashboard_base(request: Request) -> str:
    """The dashboard's path as the browser sees it: under the app's root path (a proxy's prefix,
    ``--root-path /catalog``), which is also its cookies' path (a cookie of ``/admin`` alone would
    never be sent to ``/catalog/admin``)."""
    return str(request.scope.get("root_path", "")).rstrip("/") + DASHBOARD_PREFIX


def _secure(request: Request) -> bool:
    return request.url.scheme == "https"


def set_session_cookie(response: Response, request: Request, value: str) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=SESSION_SECONDS,
        path=dashboard_base(request),
        httponly=True,
        samesite="strict",
        secure=_secure(request),
    )


def clear_session_cookie(response: Response, request: Request) -> None:
    response.delete_cookie(
        SESSION_COOKIE, path=dashboard_base(request), httponly=True, samesite="strict", secure=_secure(request)
    )


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
            CSRF_COOKIE, new, path=dashboard_base(request), httponly=True, samesite="strict", secure=_secure(request)
        )


def csrf_ok(request: Request, submitted: str | None) -> bool:
    cookie = request.cookies.get(CSRF_COOKIE)
    if not cookie or not submitted:
        return False
    return hmac.compare_digest(cookie.encode("utf-8", "surrogateescape"), submitted.encode("utf-8", "surrogateescape"))
