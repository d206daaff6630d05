"""Bearer tokens with roles: ``reader`` < ``writer`` < ``admin``.

Tokens are configured by their sha256 hex digest (``SHREDCAT_TOKENS``); a presented token is hashed
and compared with **every** configured digest in constant time (no early exit, so timing says
nothing about which digest matched or how far). A missing or unknown token is 401, a known token
with too small a role 403. ``SHREDCAT_AUTH=off`` makes every caller an admin.

Each route declares its role with a :func:`require` dependency; :class:`RouteRoles` reads that
declaration back so that the outermost middleware can answer 401/403 before the body is read.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated

from fastapi import Request, Security
from fastapi.dependencies.models import Dependant
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.routing import BaseRoute, Match
from starlette.types import Scope

from service.errors import ForbiddenError, UnauthorizedError

ROLES = ("reader", "writer", "admin")
_RANK = {r: i for i, r in enumerate(ROLES)}


def hash_token(token: str) -> str:
    """The digest to put in ``SHREDCAT_TOKENS`` for ``token``."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    role: str
    #: First 8 hex digits of the token's digest (for logs), or "auth-off".
    token_id: str
    #: Who the caller is, for scoping what it owns (idempotency keys): ``token:`` and a hash of the
    #: token's digest (never the digest itself, which the configuration holds), or "auth-off".
    identity: str

    @classmethod
    def of_token(cls, role: str, digest_hex: str) -> Principal:
        identity = hashlib.sha256(b"shredcat-principal\0" + bytes.fromhex(digest_hex)).hexdigest()[:32]
        return cls(role, digest_hex[:8], f"token:{identity}")


#: Where the request's checked principal is kept (``request.state``).
PRINCIPAL_STATE = "principal"

#: Every caller when authentication is off.
AUTH_OFF = Principal("admin", "auth-off", "auth-off")


class Authenticator:
    def __init__(self, *, enabled: bool, tokens: Mapping[str, str]) -> None:
        self.enabled = enabled
        self._digests = tuple((bytes.fromhex(d), role) for d, role in tokens.items())

    def authenticate(self, authorization: str | None) -> Principal:
        if not self.enabled:
            return AUTH_OFF
        if not authorization:
            raise UnauthorizedError("missing bearer token (Authorization: Bearer <token>)")
        scheme, _, token = authorization.partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            raise UnauthorizedError("the Authorization header must be 'Bearer <token>'")
        presented = hashlib.sha256(token.encode("utf-8", "surrogateescape")).digest()
        found: str | None = None
        for digest, role in self._digests:
            if hmac.compare_digest(presented, digest) and found is None:
                found = role
        if found is None:
            raise UnauthorizedError("invalid bearer token")
        return Principal.of_token(found, presented.hex())

    def check(self, authorization: str | None, role: str) -> Principal:
        """The caller's principal if it holds ``role`` (or a higher one); else 401 or 403."""
        p = self.authenticate(authorization)
        if _RANK[p.role] < _RANK[role]:
            raise ForbiddenError(f"this operation needs the {role!r} role (the token has {p.role!r})")
        return p


#: Declares the scheme in the OpenAPI spec; the header itself is parsed by :class:`Authenticator`.
_bearer = HTTPBearer(auto_error=False, description="A token from SHREDCAT_TOKENS (roles: reader, writer, admin).")
_BearerCredentials = Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]


def require(role: str) -> Callable[[Request, HTTPAuthorizationCredentials | None], Awaitable[Principal]]:
    """A FastAPI dependency: the caller must hold ``role`` (or a higher one). A coroutine, so that
    FastAPI runs it on the event loop rather than hopping to its thread pool for a hash and a
    comparison."""
    if role not in _RANK:
        raise ValueError(role)

    async def dependency(request: Request, _documented: _BearerCredentials) -> Principal:
        # The middleware checked the same role before the body was read (RouteRoles reads it from
        # this dependency); without the middleware (a bare router in tests) it is checked here.
        p = getattr(request.state, PRINCIPAL_STATE, None)
        if p is None or _RANK[p.role] < _RANK[role]:
            auth: Authenticator = request.app.state.authenticator
            p = auth.check(request.headers.get("authorization"), role)
            setattr(request.state, PRINCIPAL_STATE, p)
        return p

    dependency.__name__ = f"require_{role}"
    setattr(dependency, _ROLE_ATTRIBUTE, role)
    return dependency


_ROLE_ATTRIBUTE = "shredcat_required_role"


def _dependant_role(dependant: Dependant) -> str | None:
    role = getattr(dependant.call, _ROLE_ATTRIBUTE, None)
    if role is not None:
        return str(role)
    for d in dependant.dependencies:
        found = _dependant_role(d)
        if found is not None:
            return found
    return None


@dataclass(frozen=True, slots=True)
class RouteRoles:
    """Which role each route of an app requires, read from its :func:`require` dependency: lets
    the outermost middleware refuse a caller before the request body is read (FastAPI itself reads
    and parses the body before it runs any dependency)."""

    #: Every route in the app's order (None: a public route). Built from the routers the app
    #: includes (whose routes carry their full paths), not from the app's own routing table.
    routes: tuple[tuple[BaseRoute, str | None], ...]

    @classmethod
    def of(cls, routes: Sequence[BaseRoute]) -> RouteRoles:
        out = []
        for route in routes:
            dependant = getattr(route, "dependant", None)
            out.append((route, _dependant_role(dependant) if dependant is not None else None))
        return cls(tuple(out))

    def role_for(self, scope: Scope) -> str | None:
        """The role the route that will answer this request requires; None for a public route, no
        route, or a method the route does not take (the router then answers 404/405)."""
        for route, role in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return role
        return None


require_reader = require("reader")
require_writer = require("writer")
require_admin = require("admin")
