"""``/health`` (readiness: the database answers and its schema is at the code's head revision),
``/health/live`` (the process answers) and ``/metrics`` (Prometheus text)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Response

import service
from service.api.auth import Principal, require_reader
from service.api.deps import AppContext, error_responses, get_catalog, get_ctx
from service.api.metrics import CONTENT_TYPE
from service.api.schemas import HealthResponse, StandbyHealth
from service.catalog import Catalog

router = APIRouter(tags=["operations"])


@router.get(
    "/health",
    operation_id="health",
    summary="Readiness: the catalog database answers and is migrated (no token needed); the hot standbys' "
    "last measured state and lag, which never fail it",
    response_model=HealthResponse,
    responses=error_responses(503),
)
def health(catalog: Annotated[Catalog, Depends(get_catalog)]) -> HealthResponse:
    from service.catalog.db import require_current_schema

    revision = require_current_schema(catalog.engine)  # unreachable or not migrated: 503
    # The last measure, not a new one: a probe must not wait on (or fail for) a standby that does
    # not answer; reads measure when due and skip whatever is not fit.
    standbys = tuple(
        StandbyHealth(
            name=s.name, state=s.state, lag_seconds=s.lag_s, lag_bytes=s.lag_bytes, measured_seconds_ago=s.measured_s_ago
        )
        for s in catalog.reads.status(measure=False)
    )
    return HealthResponse(
        status="ok", backend=catalog.backend, schema_revision=revision, version=service.__version__,
        standbys=standbys or None,
    )


@router.get(
    "/health/live",
    operation_id="liveness",
    summary="Liveness: the process answers (no database call, no token needed)",
    response_model=HealthResponse,
)
async def liveness() -> HealthResponse:
    # On the event loop, not in a thread: with every thread of the pool busy (40 readers listing
    # 10,000-file pages) a thread-bound probe waited 45 s for one and the process looked dead.
    return HealthResponse(status="ok", version=service.__version__)


@router.get(
    "/metrics",
    operation_id="metrics",
    summary="Prometheus metrics (text exposition format)",
    response_class=Response,
    responses={
        200: {"content": {CONTENT_TYPE.split(";")[0]: {"schema": {"type": "string"}}}, "description": "Metrics."},
        **error_responses(401, 403),
    },
)
def metrics(
    _: Annotated[Principal, Depends(require_reader)], ctx: Annotated[AppContext, Depends(get_ctx)]
) -> Response:
    standbys = ctx.catalog.reads.status() if ctx.catalog is not None else []
    return Response(content=ctx.metrics.render(standbys), media_type=CONTENT_TYPE)
