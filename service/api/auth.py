"""Bearer tokens with roles: ``reader`` < ``writer`` < ``admin``.

Tokens are configured by their sha256 hex digest (``SHREDCAT_TOKENS``); a presented token is hashed
and compared with **every** configured digest in constant time (no early exit, so timing says
nothing about which digest matched or how far). A missing or unknown token is 401, a known token
with too small a role 403. ``SHREDCAT_AUTH=off`` makes every caller an admin.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated

from fastapi import Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

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


class Authenticator:
    def __init__(self, *, enabled: bool, tokens: Mapping[str, str]) -> None:
        self.enabled = enabled
        self._digests = tuple((bytes.fromhex(d), role) for d, role in tokens.items())

    def authenticate(self, authorization: str | None) -> Principal:
        if not self.enabled:
            return Principal("admin", "auth-off")
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
        return Principal(found, presented.hex()[:8])


#: Declares the scheme in the OpenAPI spec; the header itself is parsed by :class:`Authenticator`.
_bearer = HTTPBearer(auto_error=False, description="A token from SHREDCAT_TOKENS (roles: reader, writer, admin).")
_BearerCredentials = Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]


def require(role: str) -> Callable[[Request], Principal]:
    """A FastAPI dependency: the caller must hold ``role`` (or a higher one)."""
    if role not in _RANK:
        raise ValueError(role)
    need = _RANK[role]

    def dependency(request: Request, _documented: _BearerCredentials) -> Principal:
        auth: Authenticator = request.app.state.authenticator
        p = auth.authenticate(request.headers.get("authorization"))
        if _RANK[p.role] < need:
            raise ForbiddenError(f"this operation needs the {role!r} role (the token has {p.role!r})")
        request.state.principal = p
        return p

    dependency.__name__ = f"require_{role}"
    return dependency


require_reader = require("reader")
require_writer = require("writer")
require_admin = require("admin")
