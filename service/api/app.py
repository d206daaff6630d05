"""The FastAPI application factory.

``create_app(settings)`` builds the app without touching the database: the catalog (engine and
pool) and the extraction thread pool are made by the lifespan and disposed when it ends, so
importing this module, or building an app in a test, connects to nothing.
"""

from __future__ import annotations

import gc
import logging
import secrets
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
from fastapi import FastAPI

import service
from service.api import commits, health, namespaces, plan, reads, tables, verify
from service.api.auth import Authenticator
from service.api.bodies import add_body_schemas
from service.api.deps import AppContext
from service.api.errors import install_error_handlers
from service.api.logging import ContextThreadPoolExecutor, RequestLogMiddleware
from service.api.metrics import Metrics
from service.api.middleware import RequestContextMiddleware
from service.api.paths import parse_roots
from service.api.policy import BodyLimits, RoutePolicy, admin_session_check
from service.catalog.logins import LoginLimits
from service.dashboard import router as dashboard_router
from service.dashboard.session import SessionSigner
from service.dashboard.web import refused_url_page
from service.errors import ShredcatError
from service.settings import Settings, get_settings

if TYPE_CHECKING:
    from service.catalog import Catalog

log = logging.getLogger("service.api")

#: How long shutting down waits for the pool's filling to stop (it stops between connections; one
#: that is being opened may take up to the connect timeout, and is then left to the daemon thread).
POOL_FILL_JOIN_S = 2.0

DESCRIPTION = """\
REST API of **shredcat**, a lakehouse catalog for shredded Parquet Variant statistics.

Routes follow the Iceberg REST catalog where the concept exists there (`/v1/namespaces`,
`/v1/namespaces/{namespace}/tables/{table}`, `.../plan`). Every error body is
`{"error": {"type", "message", "details", "code"}}`.

Authentication: `Authorization: Bearer <token>`; roles `reader` (list, stats, plan),
`writer` (also commit and remove files), `admin` (also create and drop namespaces and tables, and
verify stored statistics against the files).
"""

TAGS = [
    {"name": "namespaces", "description": "Namespaces (DuckLake schemas)."},
    {"name": "tables", "description": "Tables and their Variant columns."},
    {"name": "files", "description": "Registering, removing and listing data files; their statistics."},
    {"name": "plan", "description": "Pruning: which files can hold rows matching a predicate."},
    {"name": "operations", "description": "Health and metrics."},
]


def _open(ctx: AppContext, settings: Settings, catalog: Catalog | None) -> None:
    if settings.auth == "off":
        log.warning("SHREDCAT_AUTH=off: authentication is disabled, every caller is an admin (local use only)")
    elif not settings.tokens:
        log.warning("no SHREDCAT_TOKENS configured: every request but /health will be refused (401)")
    if not ctx.roots:
        log.warning("no SHREDCAT_WAREHOUSE_ROOTS configured: registering files is refused")
    if settings.auth == "on" and not settings.session_secrets:
        log.warning(
            "no SHREDCAT_SESSION_SECRETS configured: dashboard sessions are signed with a key made at start, "
            "so they end when the server restarts (and are not shared with other servers)"
        )
    if catalog is None:
        from service.catalog import Catalog
        from service.catalog.db import fill_pool, make_engine
        from service.catalog.replicas import ReadRouter

        # FastAPI runs the endpoints that use the catalog on anyio's thread limiter (40; plans on
        # their own, smaller one): at most one pooled connection per such thread, capped by
        # SHREDCAT_DB_POOL_SIZE, and kept, so no load opens new sessions and workers x pool stays
        # within max_connections.
        threads = int(anyio.to_thread.current_default_thread_limiter().total_tokens)
        pool = min(threads, settings.db_pool_size)
        engine = make_engine(settings.database_url, concurrency=pool)
        reads = ReadRouter.from_settings(engine, settings, concurrency=pool)
        reads.on_read = lambda database: ctx.metrics.catalog_reads.labels(database=database).inc()
        # A server measures its standbys in a thread of its own: a hung one then costs no request
        # a connect timeout per check interval (the CLI, one read per run, measures inline).
        reads.start_monitor()
        catalog = Catalog(engine, limits=ctx.limits, reads=reads)
        # Opened in the background: a server starts (and reports unready) without its database.
        engines = [catalog.engine, *(s.engine for s in reads.standbys)]
        ctx.pool_filler = threading.Thread(
            target=lambda: [fill_pool(e, ctx.stopping) for e in engines], name="shredcat-pool-fill", daemon=True
        )
        ctx.pool_filler.start()
    ctx.catalog = catalog
    ctx.plan_limiter = anyio.CapacityLimiter(min(settings.plan_concurrency, settings.db_pool_size))
    ctx.executor = ContextThreadPoolExecutor(max_workers=settings.extract_workers, thread_name_prefix="shredcat-extract")


def _close(ctx: AppContext, *, owned: bool) -> None:
    executor, catalog, filler = ctx.executor, ctx.catalog, ctx.pool_filler
    ctx.executor = None
    ctx.catalog = None
    ctx.pool_filler = None
    if filler is not None:
        ctx.stopping.set()
        filler.join(timeout=POOL_FILL_JOIN_S)
        ctx.stopping.clear()
    if executor is not None:
        executor.shutdown(wait=False, cancel_futures=True)
    if owned and catalog is not None:
        catalog.reads.dispose()  # first: its monitor reads the primary's WAL position
        catalog.engine.dispose()  # made by _open, so the Catalog does not own it


def settle_collector() -> None:
    """Settle a long-running process's garbage collector once it has started: what start-up made
    (modules, SQLAlchemy, FastAPI, the pool) is frozen out of the collector's sight, and young
    objects are collected every 20,000 allocations instead of 700.

    A page of 10,000 candidates allocates ~30,000 tracked objects (rows, tuples). With the default
    thresholds the collector walked the whole start-up heap every third such page: 20 ms median
    per page with 55-70 ms spikes on the 1,000,000-file benchmark; settled, 14 ms flat. Only
    ``shredcat serve``'s workers do this (:func:`serve_app`): a library must not retune its
    host's collector."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 10)


def preload_readers() -> None:
    """Import what extraction reads column data with (pyarrow), once per server worker at start-up:
    otherwise the first file that needs its data read (a residual check, a column without
    statistics) pays for the import, 2-3 s on a loaded machine (bench/hostile.py, issue 30)."""
    import pyarrow.compute
    import pyarrow.parquet  # noqa: F401


def serve_app() -> FastAPI:
    """The app as ``shredcat serve`` runs it in each worker process: :func:`create_app` on the
    environment's settings, and :func:`settle_collector` once its lifespan has opened the catalog."""
    return create_app(settle=True)


def _policy(settings: Settings, routes: list[Any], authenticator: Authenticator, signer: SessionSigner) -> RoutePolicy:
    def role_of_header(header: str) -> str | None:
        try:
            return authenticator.authenticate(header).role
        except ShredcatError:
            return None

    def role_of_cookie(value: str) -> str | None:
        p = signer.verify(value, settings.tokens)
        return p.role if p is not None else None

    limits = BodyLimits.from_settings(
        settings.max_body_bytes, settings.max_plan_body_bytes, settings.max_predicate_length,
        settings.body_timeout_seconds,
    )
    return RoutePolicy(routes, limits, admin_session_check(role_of_header, role_of_cookie, enabled=settings.auth == "on"))


def create_app(settings: Settings | None = None, *, catalog: Catalog | None = None, settle: bool = False) -> FastAPI:
    """Build the app. ``catalog``: use this :class:`~service.catalog.Catalog` instead of opening
    one on ``settings.database_url`` (the caller then owns it). ``settle``: settle the process's
    garbage collector after start-up (:func:`settle_collector`; what the server process does)."""
    settings = settings or get_settings()
    metrics = Metrics()
    ctx = AppContext(
        settings=settings,
        roots=parse_roots(settings.warehouse_roots),
        metrics=metrics,
        authenticator=Authenticator(enabled=settings.auth == "on", tokens=settings.tokens),
        limits=settings.commit_limits,
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        # Re-entrant: test tools may run the lifespan again around each request while an outer
        # one is active; the first entry opens the catalog, the last exit closes it.
        ctx.active += 1
        if ctx.active == 1:
            _open(ctx, settings, catalog)
            if settle:
                preload_readers()
                settle_collector()
        try:
            yield
        finally:
            ctx.active -= 1
            if ctx.active == 0:
                _close(ctx, owned=catalog is None)

    app = FastAPI(
        title="shredcat",
        version=service.__version__,
        description=DESCRIPTION,
        openapi_tags=TAGS,
        lifespan=lifespan,
        # The middleware redirects such paths itself, relatively (Starlette's Location is built
        # from the request's Host header).
        redirect_slashes=False,
    )
    app.state.ctx = ctx
    app.state.authenticator = ctx.authenticator
    signer = SessionSigner(
        [k.get_secret_value().encode("utf-8") for k in settings.session_secrets] or [secrets.token_bytes(32)]
    )
    app.state.session_signer = signer
    app.state.login_limits = LoginLimits(
        per_address=settings.login_failures_per_address, total=settings.login_failures_total
    )
    install_error_handlers(app)
    default_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            app.openapi_schema = add_body_schemas(default_openapi())
        return app.openapi_schema

    # FastAPI's documented way to extend the schema: an instance attribute over the method (set in
    # the instance's __dict__, which is what assigning does, without mypy's method-assign error).
    app.__dict__["openapi"] = openapi
    # The plan route first: a request is matched against the routes in order (twice: for its
    # role by the middleware, then by the router), and planning is the call clients repeat.
    # No other route's pattern matches a plan path, so the order decides nothing else.
    routers = [m.router for m in (plan, health, namespaces, tables, commits, reads, verify)] + [dashboard_router]
    for router in routers:
        app.include_router(router)
    app.add_middleware(
        RequestContextMiddleware,
        metrics=metrics,
        authenticator=ctx.authenticator,
        policy=_policy(settings, [route for router in routers for route in router.routes], ctx.authenticator, signer),
        refused_page=refused_url_page,
    )
    app.add_middleware(RequestLogMiddleware)  # outermost: the request id is in every log line
    return app
