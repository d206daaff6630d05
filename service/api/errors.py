"""The API's one error model: every 4xx/5xx body is

``{"error": {"type": <code>, "message": <text>, "details": {...}, "code": <HTTP status>}}``

(``code`` repeats the status, as in the Iceberg REST catalog's ErrorModel). ``type`` is the
:class:`~service.errors.ShredcatError` subclass's ``code`` (``not_found``, ``invalid_stats``...),
``validation_error`` for a request that does not match the schema (``details.field`` names the
first offending field, ``details.errors`` lists them all), or ``internal_error``. 5xx bodies never
carry internals: the message is fixed and the request id points to the server log.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from service.errors import ShredcatError, StorageUnavailableError

log = logging.getLogger("service.api")

_HTTP_TYPES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    413: "limit_exceeded",
    415: "unsupported_media_type",
}


def error_body(status: int, type_: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"type": type_, "message": message, "details": details or {}, "code": status}}


class _ErrorJSONResponse(JSONResponse):
    """An error may quote the request's text, which may not be valid Unicode (a lone surrogate from
    a JSON escape): then non-ASCII is escaped, which any JSON reader decodes the same."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def error_response(
    status: int, type_: str, message: str, details: dict[str, Any] | None = None, headers: dict[str, str] | None = None
) -> JSONResponse:
    return _ErrorJSONResponse(error_body(status, type_, message, details), status_code=status, headers=headers)


def request_id(request: Request) -> str:
    return str(request.scope.get("state", {}).get("request_id", "-"))


def field_name(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("body", "files", 0, "record-count")`` -> ``body.files[0].record-count``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return repr(v)


def shredcat_error_response(request: Request, exc: ShredcatError) -> JSONResponse:
    status = exc.http_status
    headers = {"WWW-Authenticate": 'Bearer realm="shredcat"'} if status == 401 else None
    if status >= 500:
        if isinstance(exc, StorageUnavailableError):
            log.warning("request %s: %s", request_id(request), exc.message)
            headers = {"Retry-After": "1"}
            # Driver messages name hosts and users: only our own subclasses' messages are shown.
            public = type(exc) is not StorageUnavailableError
            message = exc.message if public else "the catalog database is unavailable; retry later"
        elif status == 500:
            log.error("request %s: %s", request_id(request), exc.message, exc_info=exc)
            message = f"internal server error (request id {request_id(request)})"
        else:  # 501 and the like: our own, safe messages
            log.info("request %s: %s", request_id(request), exc.message)
            message = exc.message
        return error_response(status, exc.code, message, {"request-id": request_id(request)}, headers)
    return error_response(status, exc.code, exc.message, _jsonable(exc.details), headers)


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ShredcatError)
    async def _shredcat(request: Request, exc: ShredcatError) -> JSONResponse:
        return shredcat_error_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = []
        for e in exc.errors():
            errors.append(
                {"field": field_name(e.get("loc", ())), "message": str(e.get("msg", "")), "type": str(e.get("type", ""))}
            )
        first = errors[0] if errors else {"field": "", "message": "invalid request"}
        message = f"{first['field']}: {first['message']}" if first["field"] else first["message"]
        return error_response(422, "validation_error", message, {"field": first["field"], "errors": errors})

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        status = exc.status_code
        type_ = _HTTP_TYPES.get(status, "internal_error" if status >= 500 else "bad_request")
        message = exc.detail if isinstance(exc.detail, str) else type_.replace("_", " ")
        headers = dict(exc.headers or {})
        allow = headers.get("Allow", "").split(", ")
        if "GET" in allow and "HEAD" not in allow:  # the middleware answers HEAD on every GET route
            headers["Allow"] = ", ".join([*allow, "HEAD"])
        return error_response(status, type_, message, headers=headers)
