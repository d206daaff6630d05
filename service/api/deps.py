"""What routes share: the app context (settings, catalog, roots, metrics) and small helpers."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi import Request

from service import pagetoken
from service.api.auth import Authenticator
from service.api.errors import field_name
from service.api.metrics import Metrics
from service.api.paths import WarehouseRoot
from service.errors import BadInputError, ShredcatError
from service.limits import Limits
from service.settings import Settings

if TYPE_CHECKING:
    from service.catalog import Catalog


@dataclass
class AppContext:
    settings: Settings
    roots: tuple[WarehouseRoot, ...]
    metrics: Metrics
    authenticator: Authenticator
    #: From the settings; the catalog the app opens gets the same.
    limits: Limits
    #: Set by the lifespan.
    catalog: Catalog | None = None
    executor: ThreadPoolExecutor | None = field(default=None, repr=False)
    #: Lifespans currently entered (see service.api.app).
    active: int = 0
    #: Caps the plan requests running at once (``plan_concurrency``); made by the lifespan.
    plan_limiter: Any = field(default=None, repr=False)
    #: The thread opening the catalog's pooled connections at start, and its stop signal.
    pool_filler: threading.Thread | None = field(default=None, repr=False)
    stopping: threading.Event = field(default_factory=threading.Event, repr=False)


# The dependencies are coroutines: FastAPI runs a plain ``def`` dependency in its thread pool, a
# hop that costs more CPU and latency than the attribute reads it would run.
async def get_ctx(request: Request) -> AppContext:
    ctx: AppContext = request.app.state.ctx
    _started_catalog(ctx)
    return ctx


async def get_catalog(request: Request) -> Catalog:
    """The open catalog, for a handler: never None (a request before the lifespan is refused)."""
    return _started_catalog(request.app.state.ctx)


def _started_catalog(ctx: AppContext) -> Catalog:
    if ctx.catalog is None:  # the lifespan did not run (a test using a bare ASGI transport)
        raise ShredcatError("the application was not started (lifespan not run)")
    return ctx.catalog


def field_error(field: tuple[Any, ...] | str, message: str, cls: type[ShredcatError] = BadInputError) -> ShredcatError:
    name = field if isinstance(field, str) else field_name(field)
    return cls(f"{name}: {message}", details={"field": name})


def check_page_size(ctx: AppContext, page_size: int, *, field: str = "page-size") -> int:
    limit = ctx.limits.max_page_size
    if page_size > limit:
        raise field_error(field, f"at most {limit} (SHREDCAT_MAX_PAGE_SIZE)")
    return page_size


def decode_page_token(token: str, field: str) -> dict[str, Any]:
    """A page token of this API (a JSON object), or the 422 naming ``field``."""
    invalid = field_error(field, "invalid page token")
    doc = pagetoken.decode(token, invalid)
    if not isinstance(doc, dict):
        raise invalid
    return doc


#: Errors every route may answer; documented in the OpenAPI spec.
def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    from service.api.schemas import ErrorResponse

    text = {
        400: "Malformed request.",
        401: "Missing or invalid bearer token.",
        403: "The token's role does not allow this operation, or a path outside the warehouse roots.",
        404: "No such namespace, table, file or snapshot.",
        409: "Conflict with the catalog's state.",
        413: "A limit was exceeded (body size, files per request, stats rows per file, string length, IN-list "
        "length, predicate depth).",
        415: "The request body is not JSON (its Content-Type must be `application/json`).",
        422: "Invalid request (the field is named in `details.field`).",
        500: "Internal error (details only in the server log).",
        501: "Not supported by this version of the catalog.",
        503: "The catalog database is unavailable; retry.",
    }
    return {s: {"model": ErrorResponse, "description": text[s]} for s in statuses}


COMMON = (400, 401, 403, 413, 422, 503)
