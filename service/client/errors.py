"""The client's exceptions, and the mapping from an error answer to one of them.

Every error answer raises a :class:`ShredcatAPIError` subclass. The class comes from the call's own
error map first (a 404 of ``load_table`` is :class:`NoSuchTable`, a 409 of ``create_namespace`` is
:class:`NamespaceAlreadyExists`), then from :data:`DEFAULT_ERRORS` by status, then from the status
class (4xx :class:`ClientError`, 5xx :class:`ServerError`). Each call-specific class subclasses the
status class, so ``except NotFound`` also catches :class:`NoSuchTable`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx


class ShredcatAPIError(Exception):
    """An error answer of the server: ``status`` and the body's ``type``, ``message``, ``details``."""

    def __init__(
        self,
        status: int,
        type: str,
        message: str,
        details: Mapping[str, Any] | None = None,
        *,
        request_id: str | None = None,
    ) -> None:
        super().__init__(f"{status} {type}: {message}")
        self.status = status
        self.type = type
        self.message = message
        self.details = dict(details or {})
        self.request_id = request_id


class ClientError(ShredcatAPIError):
    """4xx: the request was refused; retrying it unchanged will not help."""


class BadRequest(ClientError):
    pass


class Unauthorized(ClientError):
    pass


class Forbidden(ClientError):
    pass


class NotFound(ClientError):
    pass


class NoSuchNamespace(NotFound):
    """404 of a call on a namespace: it does not exist."""


class NoSuchTable(NotFound):
    """404 of a call on a whole table: the table (or its namespace) does not exist."""


class Conflict(ClientError):
    pass


class NamespaceAlreadyExists(Conflict):
    pass


class TableAlreadyExists(Conflict):
    pass


class NamespaceNotEmpty(Conflict):
    """409 of ``drop_namespace``: the namespace still holds tables."""


class CommitConflict(Conflict):
    """409 of a commit: a path is already live with other content, or the idempotency key was used
    for a different commit."""


class PayloadTooLarge(ClientError):
    pass


class UnsupportedMediaType(ClientError):
    """415: the body was not sent as JSON (a client built on this one never does that)."""


class Unprocessable(ClientError):
    """422: a field of the request is invalid (``details["field"]`` names it)."""


class ServerError(ShredcatAPIError):
    """5xx."""


class ServiceUnavailable(ServerError):
    pass


class UnexpectedResponse(ShredcatAPIError):
    """A success status whose body is not the call's answer: the base URL reaches another service
    (a proxy's or a login page, the OpenAPI docs) or a server of an incompatible version. The
    request may have been applied (a commit): it is not retried. ``type`` is
    ``unexpected_response``, ``details`` the ``content-type``."""


class ShredcatConnectionError(Exception):
    """The server could not be reached (after every retry)."""


#: Which status raises which class, for every call (a call's own map takes precedence).
ErrorMap = Mapping[int, type[ShredcatAPIError]]

DEFAULT_ERRORS: ErrorMap = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: Unprocessable,
    503: ServiceUnavailable,
}


def error_from_response(r: httpx.Response, errors: ErrorMap | None = None) -> ShredcatAPIError:
    """The exception for the error answer ``r`` of a call whose own error map is ``errors``."""
    status = r.status_code
    cls = (
        (errors or {}).get(status)
        or DEFAULT_ERRORS.get(status)
        or (ServerError if status >= 500 else ClientError)
    )
    type_, message = "http_error", r.reason_phrase or f"HTTP {status}"
    details: dict[str, Any] = {}
    try:
        body = r.json()
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict):
            type_ = str(err.get("type", type_))
            message = str(err.get("message", message))
            found = err.get("details")
            details = found if isinstance(found, dict) else {}
    except ValueError:
        text = r.text.strip()
        if text:
            message = text[:500]
    return cls(status, type_, message, details, request_id=r.headers.get("x-request-id"))


def unexpected_response(r: httpx.Response, call: str) -> UnexpectedResponse:
    """The exception for a success answer ``r`` of ``call`` (``"GET /v1/..."``) that does not parse."""
    ctype = r.headers.get("content-type", "")
    text = " ".join(r.text[:200].split())
    return UnexpectedResponse(
        r.status_code,
        "unexpected_response",
        f"{call}: the {r.status_code} answer is not this call's ({ctype or 'no Content-Type'}): {text or '(empty)'}",
        {"content-type": ctype},
        request_id=r.headers.get("x-request-id"),
    )
