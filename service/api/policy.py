"""What a request may cost before its route runs, decided in one place from the route it matches:
the role a bearer token must hold, how many body bytes may be read, and how long reading them
may take (:class:`RoutePolicy`, used by :class:`service.api.middleware.RequestContextMiddleware`
before a byte of the body is buffered).

=====================================================  ==================================================
route                                                  body limit
=====================================================  ==================================================
a route needing a role (commits, removals)             ``SHREDCAT_MAX_BODY_BYTES``
``POST .../plan``                                      ``SHREDCAT_MAX_PLAN_BODY_BYTES``
creating a namespace or a table, verifying             1 MiB (:data:`SMALL_BODY_BYTES`)
``POST /admin/login``, ``/admin/logout``               the login form's 16 KiB
the prune playground's form                            a predicate's form for an admin (bearer or signed
                                                       session cookie), else the login form's 16 KiB
any other public route, no route, a wrong method       nothing (the body is never read)
=====================================================  ==================================================

The whole body must arrive within ``SHREDCAT_BODY_TIMEOUT_SECONDS`` (small bodies: at most
:data:`SMALL_BODY_SECONDS`). A path no route matches whose twin with (or without) a trailing slash
does is redirected with a relative ``Location`` (never one built from the request's ``Host``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from starlette.routing import BaseRoute, Match, Route
from starlette.types import Scope

from service.api.auth import RouteRoles

#: The most seconds a small body (a form, a plan request) may take to arrive.
SMALL_BODY_SECONDS = 10.0

PLAN, SMALL, FORM, ADMIN_FORM, LARGE, NONE = "plan", "small", "form", "admin_form", "large", "none"
#: The JSON body of a create or verify call (FastAPI decodes it on the event loop: ~10 ms at most).
SMALL_BODY_BYTES = 1024 * 1024

#: The routes whose body is not the default of their kind (a route needing a role: ``LARGE``; a
#: public one: ``NONE``), as (method, path template): one table, checked against the app's routes
#: by the tests.
BODY_KINDS: dict[tuple[str, str], str] = {
    ("POST", "/v1/namespaces/{namespace}/tables/{table}/plan"): PLAN,
    ("POST", "/v1/namespaces"): SMALL,
    ("POST", "/v1/namespaces/{namespace}/tables"): SMALL,
    ("POST", "/v1/namespaces/{namespace}/tables/{table}/verify"): SMALL,
    ("POST", "/admin/login"): FORM,
    ("POST", "/admin/logout"): FORM,
    ("POST", "/admin/tables/{namespace}/{table}/prune"): ADMIN_FORM,
}


def _never(*_: object) -> None:
    raise AssertionError("a matcher only")


@dataclass(frozen=True, slots=True)
class Bounds:
    """The decision for one request."""

    #: The role a bearer token must hold before anything else happens (None: public).
    role: str | None
    #: Most body bytes read (0: the body is not read; the route sees an empty one).
    body_bytes: int
    #: Seconds the whole body may take to arrive.
    body_seconds: float
    #: A relative URL to redirect to (the trailing-slash twin of an unmatched path).
    redirect: str | None = None
    #: The route reads the body itself, in chunks, stopping at the same limit (a form, answered
    #: with its own page); else the body is read in full before the route runs.
    streamed: bool = False


@dataclass(frozen=True, slots=True)
class BodyLimits:
    """Bytes per body kind and the body timeout, from the settings."""

    large: int
    plan: int
    form: int
    admin_form: int
    seconds: float

    @classmethod
    def from_settings(cls, max_body_bytes: int, max_plan_body_bytes: int, max_predicate_length: int,
                      body_timeout_seconds: float) -> BodyLimits:
        from service.dashboard.web import FORM_MAX_BYTES, form_limit_for

        return cls(max_body_bytes, max_plan_body_bytes, FORM_MAX_BYTES, form_limit_for(max_predicate_length),
                   body_timeout_seconds)


class RoutePolicy:
    """Per route: role, body bytes and body time (see the module). ``is_admin_session``: whether
    a request's headers carry an admin's bearer token or validly signed session cookie (the
    dashboard's own check still runs in the route; this only decides how much may be read)."""

    def __init__(self, routes: Sequence[BaseRoute], limits: BodyLimits,
                 is_admin_session: Callable[[Mapping[str, str]], bool]) -> None:
        self.roles = RouteRoles.of(routes)
        self.kinds = [(Route(path, _never, methods=[method]), kind) for (method, path), kind in BODY_KINDS.items()]
        self.limits = limits
        self.is_admin_session = is_admin_session

    def decide(self, scope: Scope, headers: Mapping[str, str]) -> Bounds:
        partial = False
        for route, role in self.roles.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return self._bounds(scope, role, headers)
            partial = partial or match is Match.PARTIAL
        if partial:  # the router answers 405
            return Bounds(None, 0, SMALL_BODY_SECONDS)
        return Bounds(None, 0, SMALL_BODY_SECONDS, redirect=self._slash_twin(scope))

    def _bounds(self, scope: Scope, role: str | None, headers: Mapping[str, str]) -> Bounds:
        lim = self.limits
        small = min(lim.seconds, SMALL_BODY_SECONDS)
        kind = next((k for r, k in self.kinds if r.matches(scope)[0] is Match.FULL), LARGE if role is not None else NONE)
        if kind == PLAN:
            return Bounds(role, lim.plan, small)
        if kind == SMALL:
            return Bounds(role, min(SMALL_BODY_BYTES, lim.large), small)
        if kind == FORM:
            return Bounds(role, lim.form, small, streamed=True)
        if kind == ADMIN_FORM:
            return Bounds(role, lim.admin_form if self.is_admin_session(headers) else lim.form, small, streamed=True)
        if kind == LARGE:
            return Bounds(role, lim.large, lim.seconds)
        return Bounds(role, 0, small)

    def _slash_twin(self, scope: Scope) -> str | None:
        """What Starlette's ``redirect_slashes`` does, with a relative ``Location``."""
        path: str = scope.get("path", "")
        if scope.get("type") != "http" or path in ("", "/"):
            return None
        twin = path.rstrip("/") if path.endswith("/") else path + "/"
        if twin in ("", "/"):
            return None
        twin_scope = {**scope, "path": twin}
        if not any(route.matches(twin_scope)[0] is not Match.NONE for route, _ in self.roles.routes):
            return None
        query = scope.get("query_string", b"").decode("latin-1")
        # A path-absolute reference: "//x" would name a host, so a leading run of slashes is one.
        location = "/" + quote(twin, safe="/:@!$&'()*+,;=-._~").lstrip("/")
        return location + (f"?{query}" if query else "")


def admin_session_check(
    authenticate: Callable[[str], str | None], verify_cookie: Callable[[str], str | None], *, enabled: bool
) -> Callable[[Mapping[str, str]], bool]:
    """:class:`RoutePolicy`'s ``is_admin_session`` from two checks giving a role (or None): one of
    an ``Authorization`` header, one of a session cookie's value (its signature and expiry; the
    route also checks it has not been revoked)."""
    from starlette.requests import cookie_parser

    from service.dashboard.session import SESSION_COOKIE

    def check(headers: Mapping[str, str]) -> bool:
        if not enabled:
            return True
        header = headers.get("authorization")
        if header:
            return authenticate(header) == "admin"
        cookie = cookie_parser(headers.get("cookie", "")).get(SESSION_COOKIE)
        return cookie is not None and cookie != "" and verify_cookie(cookie) == "admin"

    return check
