"""``GET|POST /admin/tables/{ns}/{table}/prune``: the prune playground (SQL predicate); a GET
with ``sql`` (and ``snapshot``) in the query string runs it, so results have a URL.

Errors (a predicate that does not parse, a column the table does not have, a bad snapshot) are
shown inline under the form; the plan's warnings above the results, a close shredded path as a
link that runs the predicate with it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from service.dashboard import format as fmt
from service.dashboard.auth import admin_page, csrf_checked
from service.dashboard.web import app_context, catalog_of, read_form, render
from service.errors import BadInputError, InvalidPredicateError, NotFoundError, ShredcatError

if TYPE_CHECKING:
    from service.catalog import Catalog
    from service.pruning.diagnostics import PlanWarning

router = APIRouter()

#: Candidates listed by the playground (the counts cover all of them).
PLAYGROUND_PAGE = 100


@router.get("/tables/{namespace}/{table}/prune")
async def prune_form(request: Request, namespace: str, table: str, sql: str = "", snapshot: str = "") -> Response:
    # Results are addressable by URL (links from snapshots and examples, shared URLs): a GET with a
    # predicate runs it. Planning changes nothing, so a GET needs no CSRF token.
    form = {"sql": sql, "snapshot": snapshot}
    return await admin_page(request, _prune, namespace, table, form, bool(sql.strip()))


@router.post("/tables/{namespace}/{table}/prune")
async def prune_run(request: Request, namespace: str, table: str) -> Response:
    form = await read_form(request)
    return await admin_page(request, _prune, namespace, table, form, True)


def _examples(catalog: Catalog, namespace: str, table: str) -> list[str]:
    out = []
    gstats = catalog.global_stats(namespace, table)
    for column, paths in gstats.columns.items():
        for g in paths:
            ex = fmt.example_predicate(column, g.variant_path, g.shredded_type, g.min_value)
            if ex:
                out.append(ex)
            if len(out) >= 3:
                return out
    return out


def _with_fixes(sql: str, warnings: tuple[PlanWarning, ...]) -> list[tuple[PlanWarning, list[tuple[str, str]]]]:
    """Each warning with ``(suggested path, the predicate using it)`` for the suggested paths
    whose original is written in the predicate as a quoted literal (so replacing it is exact)."""
    out = []
    for w in warnings:
        fixes = []
        if w.type == "path_not_shredded" and w.path is not None:
            for quote in ("'", '"'):
                written = f"{quote}{w.path}{quote}"
                if written in sql:
                    fixes = [(p, sql.replace(written, f"{quote}{p}{quote}")) for p in w.suggestions]
                    break
        out.append((w, fixes))
    return out


def _prune(request: Request, namespace: str, table: str, form: dict[str, str], run: bool) -> Response:
    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    sql = form.get("sql", "")
    snapshot_text = form.get("snapshot", "").strip()
    values: dict[str, Any] = {
        "t": info,
        "sql": sql,
        "snapshot": snapshot_text,
        "result": None,
        "error": None,
        "error_field": None,
    }
    values["examples"] = _examples(catalog, namespace, table)
    if not run:
        return render(request, "prune.html", **values)
    if request.method == "POST" and not csrf_checked(request, form):
        values["error"] = "The form expired: reload the page and run the predicate again."
        return render(request, "prune.html", status=403, **values)
    settings = app_context(request).settings
    try:
        snapshot = None
        if snapshot_text:
            if not snapshot_text.isdigit():
                raise BadInputError("snapshot: a snapshot id is a whole number", details={"field": "snapshot"})
            snapshot = int(snapshot_text)
        from service.pruning.parse_sql import parse_sql

        if not sql.strip():
            raise InvalidPredicateError("enter a predicate, e.g. variant_get(v, '$.id', 'bigint') = 42")
        keywords = settings.predicate_limits.sql_keywords()
        # Parsed against the table's columns, which the catalog passes (bare names resolve there).
        result = catalog.plan(
            namespace,
            table,
            lambda schema: parse_sql(sql, **keywords),
            snapshot_id=snapshot,
            explain=True,
            page_size=PLAYGROUND_PAGE,
        )
    except NotFoundError as e:
        if e.details.get("snapshot_id") is None and e.details.get("snapshot") is None:
            raise
        values["error"] = e.message
        values["error_field"] = "snapshot"
        return render(request, "prune.html", status=404, **values)
    except ShredcatError as e:
        if e.http_status >= 500:
            raise
        values["error"] = e.message
        values["error_field"] = "snapshot" if e.details.get("field") == "snapshot" else "sql"
        return render(request, "prune.html", status=e.http_status, **values)
    values["result"] = result
    values["warnings"] = _with_fixes(sql, result.warnings)
    values["kept_explained"] = [x for x in (result.explain or ()) if x.kept]
    values["pruned_explained"] = [x for x in (result.explain or ()) if not x.kept]
    return render(request, "prune.html", **values)
