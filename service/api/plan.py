"""``POST /v1/namespaces/{namespace}/tables/{table}/plan``: which files can hold matching rows.

The predicate is Iceberg-style filter JSON (:mod:`service.pruning.parse_json`) or Spark SQL text
(:mod:`service.pruning.parse_sql`), parsed with the configured limits (terms, length, IN-list
length, nesting depth; terms and length checked before parsing); the execution is
:meth:`service.catalog.Catalog.plan`. The body, at most ``SHREDCAT_MAX_PLAN_BODY_BYTES`` (checked before it is read), is decoded in the
plan's thread (never on the event loop) with every JSON number exact
(:func:`service.pruning.parse_json.decode_json`): a double would round ``12345678901234567.1``,
and a number the decoder cannot hold (``1e999``, 5,000 digits) is refused by the filter's rules
as a 422 naming its node, not by the decoder.
SQL texts up to :data:`CACHED_SQL_CHARS` are parsed once per (text, limits) and the immutable
tree is reused (an LRU of 512): clients plan the same few predicates again and again.

A Variant column the table does not have is a 422 ``unknown_column`` (``details.column``, and
``details.columns`` the table's); the first page's ``warnings`` name the terms nothing can be
pruned on (:mod:`service.pruning.diagnostics`).
"""

from __future__ import annotations

from collections.abc import Hashable
from functools import lru_cache
from typing import TYPE_CHECKING, Annotated

import anyio.to_thread
from fastapi import APIRouter, Depends, Request

from service.api.auth import Principal, require_reader
from service.api.bodies import json_body, json_content_type, parse_json_body
from service.api.deps import (
    COMMON,
    AppContext,
    check_page_size,
    error_responses,
    field_error,
    get_catalog,
    get_ctx,
)
from service.api.namespaces import NamespaceName
from service.api.schemas import PlanRequest, PlanResponse
from service.api.tables import TableName
from service.catalog import Catalog
from service.errors import ShredcatError
from service.limits import PredicateLimits
from service.pruning.parse_json import decode_json
from service.pruning.zones import current_zone, reading_in, session_zone

if TYPE_CHECKING:
    from service.pruning.expressions import BooleanExpression
    from service.pruning.schema import TableSchema


router = APIRouter(prefix="/v1/namespaces/{namespace}/tables/{table}", tags=["plan"])


#: Predicates at most this long are remembered once parsed (a client plans the same few texts
#: again and again; a long IN list is parsed anew rather than held in memory).
CACHED_SQL_CHARS = 4096


@lru_cache(maxsize=512)
def _parse_sql_cached(
    sql: str, limits: PredicateLimits, key: Hashable, zone: str, schema: _Unhashed
) -> BooleanExpression:
    # ``zone``: the session zone's name, part of the key (the parse reads literals in it).
    return _parse_sql(sql, limits, schema.value)


def _parse_sql(sql: str, limits: PredicateLimits, schema: TableSchema | None) -> BooleanExpression:
    from service.pruning.parse_sql import parse_sql

    return parse_sql(sql, schema=schema, **limits.sql_keywords())


class _Unhashed:
    """Carries the schema into the cached parser without taking part in the cache key (the
    schema's ``key`` does)."""

    __slots__ = ("value",)

    def __init__(self, value: TableSchema | None) -> None:
        self.value = value

    def __hash__(self) -> int:
        return 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unhashed)


def schema_key(schema: TableSchema | None) -> Hashable:
    """What of a table's schema a parse depends on: its column names, kinds and types (None: the
    parsers' schema-free mode)."""
    if schema is None:
        return None
    return (tuple(schema.variant_columns), tuple((n, c.type, c.partition) for n, c in schema.columns.items()))


def _parsed_sql(sql: str, limits: PredicateLimits, schema: TableSchema | None) -> BooleanExpression:
    """The tree of a SQL predicate under these limits, against this table schema: trees are
    immutable, so one is shared by every request with the same text and schema; a text that fails
    to parse raises each time (errors are not cached)."""
    if len(sql) <= CACHED_SQL_CHARS:
        return _parse_sql_cached(sql, limits, schema_key(schema), current_zone().name, _Unhashed(schema))
    return _parse_sql(sql, limits, schema)


def _run_plan(
    ctx: AppContext, catalog: Catalog, namespace: str, table: str, raw: bytes
) -> PlanResponse:
    # Decoded here, in the plan's thread: the body was bounded (SHREDCAT_MAX_PLAN_BODY_BYTES) before
    # a byte of it was read, and decoding it never holds the event loop.
    body = parse_json_body(PlanRequest, raw, loads=decode_json)
    s = ctx.settings
    flt = body.filter
    if (flt is None) == (body.sql is None):
        raise field_error("body", "give exactly one of filter and sql")
    check_page_size(ctx, body.page_size, field="body.page-size")
    try:
        zone = session_zone(body.session_time_zone)
    except ShredcatError as e:
        e.details["field"] = "body.session-time-zone"
        raise

    def expr(schema: TableSchema | None) -> BooleanExpression:
        """The predicate parsed against the table's columns (the catalog passes them)."""
        try:
            with reading_in(zone):
                if body.sql is not None:
                    return _parsed_sql(body.sql, s.predicate_limits, schema)
                from service.pruning.parse_json import parse_json

                return parse_json(flt, schema=schema, **s.predicate_limits.json_keywords())
        except ShredcatError as e:
            e.details.setdefault("field", "body.sql" if body.sql is not None else "body.filter")
            raise

    try:
        result = catalog.plan(
            namespace,
            table,
            expr,
            snapshot_id=body.snapshot_id,
            explain=body.explain,
            page_size=body.page_size,
            page_token=body.page_token,
            counts=body.counts,
            min_snapshot_id=body.min_snapshot_id,
        )
    except ShredcatError as e:
        f = e.details.get("field")
        if isinstance(f, str) and f in ("page-size", "page-token", "snapshot-id", "min-snapshot-id"):
            e.details["field"] = f"body.{f}"
        elif e.code == "unknown_column":
            e.details.setdefault("field", "body.sql" if body.sql is not None else "body.filter")
        raise
    m = ctx.metrics
    m.prune_calls.labels(outcome="ok").inc()
    # Counts cover the whole answer and come with the first page only.
    m.files_considered.inc(result.files_considered or 0)
    m.files_pruned.inc(result.files_pruned or 0)
    # The page's fields by name; the candidates are the wire's files, and the counts its metrics.
    return PlanResponse.of(
        {
            "snapshot_id": result.snapshot_id,
            "files": result.candidates,
            "next_page_token": result.next_page_token,
            "metrics": result,
            "explain": result.explain,
            "warnings": result.warnings,
            "partition_types": result.partition_types,
        }
    )


@router.post(
    "/plan",
    operation_id="planTableScan",
    summary="Prune: the files that can hold rows matching a predicate on Variant paths",
    response_model=PlanResponse,
    responses=error_responses(*COMMON, 404, 415),
    openapi_extra=json_body(PlanRequest),
    dependencies=[Depends(json_content_type)],
)
async def plan_table_scan(
    namespace: NamespaceName,
    table: TableName,
    request: Request,
    _: Annotated[Principal, Depends(require_reader)],
    ctx: Annotated[AppContext, Depends(get_ctx)],
    catalog: Annotated[Catalog, Depends(get_catalog)],
) -> PlanResponse:
    raw = await request.body()
    try:
        # Its own limiter, not the thread pool's: plans beyond it wait here, holding no thread.
        return await anyio.to_thread.run_sync(
            _run_plan, ctx, catalog, namespace, table, raw, limiter=ctx.plan_limiter
        )
    except ShredcatError as e:
        ctx.metrics.prune_calls.labels(outcome=e.code).inc()
        raise
