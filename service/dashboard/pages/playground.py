"""``GET|POST /admin/tables/{ns}/{table}/prune``: the prune playground (SQL predicate); a GET
with ``sql`` (and ``snapshot``, ``tz``, ``show=all|kept|skipped``, ``page``) in the query string
runs it, so results have a URL. ``tz``: the session time zone zone-less timestamp literals are
read in (as the REST API's ``session-time-zone``; default UTC).

The form posts (a predicate may be 256 KB: an ``IN`` list of 10,000 ids makes a URL no server
takes); with script, a predicate whose result URL fits in :data:`MAX_RESULT_URL` is run by GET
instead, so its result has a URL. A result too long for a URL pages and filters by posting the
predicate again (``view=show:page``).

One table lists the live files, 100 a page, each kept or skipped with its reason in a few words
(:meth:`~service.catalog.admin.AdminReads.plan_files`, with the plan's counts and warnings). Errors (a predicate that does
not parse, a column the table does not have, a bad snapshot) are shown inline under the form, a syntax error with a caret under its
position; the plan's warnings above the results, a close shredded path as a link that runs the
predicate with it. Beside the box, the table's columns and shredded paths insert themselves at
the cursor on a click (``static/dashboard.js``; without script they are plain text to copy)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from service.catalog.admin import admin_reads
from service.dashboard import format as fmt
from service.dashboard.auth import admin_page, authenticate, csrf_checked
from service.dashboard.web import app_context, catalog_of, form_limit_for, read_form, render, urls
from service.errors import (
    BadInputError,
    InvalidPredicateError,
    NotFoundError,
    ShredcatError,
    UnknownColumnError,
)
from service.values.text import ascii_digits

if TYPE_CHECKING:
    from service.catalog import Catalog, PathCoverage, PlannedFilesPage, TableInfo
    from service.catalog.admin import FileDecision
    from service.pruning.diagnostics import PlanWarning
    from service.pruning.expressions import BooleanExpression
    from service.pruning.schema import TableSchema

router = APIRouter()

#: Files listed per page by the playground (the counts cover all of them).
PLAYGROUND_PAGE = 100
#: The playground's file filters: every live file, the candidates, the files pruning skips.
SHOW: tuple[FileDecision, ...] = ("all", "kept", "skipped")
#: The longest result URL the playground links to (characters): servers and proxies commonly
#: refuse request lines past 8 KB (uvicorn answers "Invalid HTTP request received.").
MAX_RESULT_URL = 8_000
#: Characters of the predicate the result heading repeats (the whole text is in the box).
HEADING_PREDICATE = 400


@router.get("/tables/{namespace}/{table}/prune")
async def prune_form(
    request: Request,
    namespace: str,
    table: str,
    sql: str = "",
    snapshot: str = "",
    tz: str = "",
    show: str = "all",
    page: str = "1",
) -> Response:
    # Results are addressable by URL (links from snapshots and examples, shared URLs, the filter
    # and the pages): a GET with a predicate runs it. Planning changes nothing, so a GET needs no
    # CSRF token.
    form = {"sql": sql, "snapshot": snapshot, "tz": tz, "show": show, "page": page}
    return await admin_page(request, _prune, namespace, table, form, bool(sql.strip()))


@router.post("/tables/{namespace}/{table}/prune")
async def prune_run(request: Request, namespace: str, table: str) -> Response:
    guard = await authenticate(request)  # before the body is read: an anonymous client reads no form
    if isinstance(guard, Response):
        return guard
    form = await read_form(request, form_limit_for(app_context(request).settings.max_predicate_length))
    if isinstance(form, Response):
        return form
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


@dataclass(frozen=True, slots=True)
class InsertItem:
    """One entry of the list beside the predicate box: clicking it inserts ``text`` at the cursor."""

    label: str
    text: str
    #: What the entry is ("Variant column", "int64 in 4 of 5 files"...).
    note: str


_KIND_WORDS = {"variant": "Variant column", "plain": "column", "partition": "partition column"}


def insert_items(
    columns: Sequence[tuple[str, str]], coverage: Sequence[PathCoverage], *, name_column: bool | None = None
) -> list[InsertItem]:
    """The table's columns (``(name, kind)``, any kind of column) and the fully shredded paths of
    its Variant columns (each as ``variant_get(col, '$.path', 'type')`` with the path's most
    common type), for the playground's click-to-insert list. A path's label names its column
    when ``name_column`` (default: when ``columns`` are more than one)."""
    if name_column is None:
        name_column = len(columns) != 1
    from service.pruning.paths import JsonPath, Key, format_json_path, parse_variant_path
    from service.pruning.render import render_column, sql_string
    from service.pruning.spark_types import spark_type_name
    from service.values import ShreddedType

    items = [InsertItem(name, render_column(name), kind) for name, kind in columns]
    for c in coverage:
        if not c.types:
            continue
        try:
            segments = parse_variant_path(c.variant_path)
            keys = tuple(s for s in segments if isinstance(s, Key))
            if len(keys) != len(segments):
                continue  # an array element has no variant_get spelling (exists(...) instead)
            path = format_json_path(JsonPath(keys))
            type_name, n = c.types[0]
            spark = spark_type_name(ShreddedType.parse(type_name))
        except ShredcatError:
            continue
        text = f"variant_get({render_column(c.column)}, {sql_string(path)}, '{spark}')"
        label = f"{c.column} {path}" if name_column else path
        items.append(InsertItem(label, text, f"{type_name} in {n:,} of {c.live_files:,} files"))
    return items


def _caret(sql: str, position: int | None) -> tuple[str, str] | None:
    """The line of ``sql`` holding ``position`` and the spaces before a caret under it."""
    if position is None or position < 0 or position > len(sql):
        return None
    start = sql.rfind("\n", 0, position) + 1
    end = sql.find("\n", position)
    line = sql[start : end if end >= 0 else len(sql)]
    return line, " " * (position - start)


def _page_number(text: str) -> int:
    return int(text) if ascii_digits(text) and 0 < len(text) < 10 and int(text) > 0 else 1


def _view(form: dict[str, str]) -> tuple[FileDecision, int]:
    """The file filter and page asked for: a posted ``view`` (``kept:2``, from the buttons of a
    result too long for a URL) or the ``show`` and ``page`` fields."""
    show, page = form.get("show", "all"), form.get("page", "1")
    if "view" in form:
        show, _, page = form["view"].partition(":")
    return next((s for s in SHOW if s == show), "all"), _page_number(page)


def shortened(text: str, limit: int = HEADING_PREDICATE) -> str:
    """``text``, or its first ``limit`` characters and how long it is."""
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text):,} characters)"


def snapshot_of(text: str) -> int | None:
    """The snapshot field: empty (the current snapshot) or a whole number."""
    if not text:
        return None
    if not ascii_digits(text):
        raise BadInputError("snapshot: a snapshot id is a whole number", details={"field": "snapshot"})
    return int(text)


#: Parsed predicates kept for the buttons of a result that send its predicate again (show, pages,
#: exports): sqlglot takes ~3 ms per KiB, so a 90 KB IN list cost 0.3-0.5 s of CPU per click.
#: Keyed by text, zone and limits; a tree is reused only for an equal table schema.
PARSED_KEPT = 16
_parsed: OrderedDict[tuple[Any, ...], tuple[TableSchema, BooleanExpression]] = OrderedDict()
_parsed_lock = threading.Lock()


def predicate_parser(request: Request, sql: str, tz_text: str) -> Callable[[TableSchema], BooleanExpression]:
    """The predicate's parser, given the table's columns by the catalog (bare names resolve
    there), zone-less timestamp literals read in ``tz_text`` (empty: UTC), within the
    deployment's predicate limits. An empty predicate is refused here."""
    from service.pruning.parse_sql import parse_sql
    from service.pruning.zones import reading_in, session_zone

    zone = session_zone(tz_text or None)
    if not sql.strip():
        raise InvalidPredicateError("enter a predicate, e.g. variant_get(v, '$.id', 'bigint') = 42")
    keywords = app_context(request).settings.predicate_limits.sql_keywords()
    key = (sql, tz_text, tuple(sorted(keywords.items())))

    def expr(schema: TableSchema) -> BooleanExpression:
        with _parsed_lock:
            hit = _parsed.get(key)
            if hit is not None and hit[0] == schema:
                _parsed.move_to_end(key)
                return hit[1]
        with reading_in(zone):
            tree = parse_sql(sql, schema=schema, **keywords)  # an error is raised, never kept
        with _parsed_lock:
            _parsed[key] = (schema, tree)
            while len(_parsed) > PARSED_KEPT:
                _parsed.popitem(last=False)
        return tree

    return expr


def _form_values(request: Request, catalog: Catalog, info: TableInfo, form: dict[str, str], run: bool) -> dict[str, Any]:
    """What the page shows before (or around) a result: the form's fields, the examples (only
    before a predicate is run: they cost a global-stats merge) and the click-to-insert list."""
    show, _ = _view(form)
    values: dict[str, Any] = {
        "t": info,
        "sql": form.get("sql", ""),
        "snapshot": form.get("snapshot", "").strip(),
        "tz": form.get("tz", "").strip(),
        "show": show,
        "result": None,
        "error": None,
        "error_field": None,
        "caret": None,
        "max_url": MAX_RESULT_URL,
        "examples": [] if run else _examples(catalog, info.namespace, info.name),
    }
    columns = [(c.name, _KIND_WORDS.get(c.kind, c.kind) + ("" if c.kind == "variant" else f", {c.type}")) for c in info.columns]
    if not columns:
        columns = [(c, "Variant column") for c in info.variant_columns]
    values["inserts"] = insert_items(columns, fmt.widest_paths(admin_reads(catalog).path_coverage(info.namespace, info.name))[0])
    return values


def _error_page(request: Request, values: dict[str, Any], e: ShredcatError) -> Response:
    """The form again with the error under it (a missing snapshot: under the snapshot field; a
    syntax error, a curly quote or an unknown column: a caret under where it is written)."""
    if isinstance(e, NotFoundError):
        values["error"], values["error_field"] = e.message, "snapshot"
        return render(request, "prune.html", status=404, **values)
    values["error"] = e.message
    field = e.details.get("field")
    fields = {"snapshot": "snapshot", "session-time-zone": "tz"}
    values["error_field"] = fields.get(field, "sql") if isinstance(field, str) else "sql"
    if isinstance(e, InvalidPredicateError | UnknownColumnError):
        position = e.details.get("position")
        values["caret"] = _caret(values["sql"], position if isinstance(position, int) else None)
    return render(request, "prune.html", status=e.http_status, **values)


def _result_values(request: Request, values: dict[str, Any], files: PlannedFilesPage, show: str) -> None:
    """The result's counts, warnings, page of files and links into ``values``."""
    result = files.plan
    assert result is not None
    info, sql, tz_text = values["t"], values["sql"], values["tz"]
    counts = {"all": result.files_considered, "kept": result.files_kept, "skipped": result.files_pruned}
    matching = counts[show] or 0
    base = fmt.common_dir([f.path for f in files.files])
    values["result"] = result
    values["warnings"] = _with_fixes(sql, result.warnings)
    values["files"] = [{"f": f, "p": fmt.path_parts(f.path, base)} for f in files.files]
    values["files_base"] = base
    values["page"] = files.offset // PLAYGROUND_PAGE + 1
    values["last_page"] = max(1, -(-matching // PLAYGROUND_PAGE))
    values["matching"] = matching
    values["start"] = files.offset
    values["counts"] = counts
    # The filter and page links keep the predicate and the snapshot the counts were planned at, so
    # a commit in between cannot shift the pages under the user.
    values["link"] = {"sql": sql, "snapshot": result.snapshot_id, "tz": tz_text or None}
    # Too long for a URL: the filter, pages and fixes post the predicate again instead of linking.
    # (A text longer than the limit makes a longer URL: not encoded just to be measured.)
    values["by_post"] = len(sql) > MAX_RESULT_URL or len(urls(request).prune(info.namespace, info.name, **values["link"])) > MAX_RESULT_URL
    values["sql_heading"] = shortened(sql)


def _prune(request: Request, namespace: str, table: str, form: dict[str, str], run: bool) -> Response:
    catalog = catalog_of(request)
    values = _form_values(request, catalog, catalog.get_table(namespace, table), form, run)
    if not run:
        return render(request, "prune.html", **values)
    if request.method == "POST" and not csrf_checked(request, form):
        values["error"] = "The form expired: reload the page and run the predicate again."
        return render(request, "prune.html", status=403, **values)
    show, page = _view(form)
    try:
        snapshot = snapshot_of(values["snapshot"])
        expr = predicate_parser(request, values["sql"], values["tz"])
        # The listed files and, planned in the same read from one parse, the counts and warnings
        # of the whole answer (a page past the last one shows the last).
        files = admin_reads(catalog).plan_files(
            namespace,
            table,
            expr,
            snapshot_id=snapshot,
            decision=show,
            offset=(page - 1) * PLAYGROUND_PAGE,
            limit=PLAYGROUND_PAGE,
            with_plan=True,
        )
    except NotFoundError as e:
        if e.details.get("snapshot_id") is None and e.details.get("snapshot") is None:
            raise
        return _error_page(request, values, e)
    except ShredcatError as e:
        if e.http_status >= 500:
            raise
        return _error_page(request, values, e)
    _result_values(request, values, files, show)
    return render(request, "prune.html", **values)
