"""The playground's exports and completion:

* ``GET|POST /admin/tables/{ns}/{table}/prune/export?format=csv|json|spark``: every candidate file
  of a predicate (``sql``, ``snapshot``, ``tz`` as the playground takes them), streamed page by
  page (:data:`EXPORT_PAGE` candidates a read) and pinned to the first page's snapshot (its page
  token); ``spark``: a PySpark ``spark.read.parquet(...)`` of the candidates with the predicate as
  its ``where``. A predicate that does not parse, an unknown column or snapshot is the HTML error
  page before anything is sent; a failure after the first page ends the download without its
  last chunk (the client sees an incomplete transfer, never a short file that looks whole).
* ``GET|POST /admin/tables/{ns}/{table}/prune/duckdb``: the runnable DuckDB query over the
  candidates (:func:`service.duckdb.plan_pruned`, as ``shredcat prune --sql duckdb``), a page with
  a copy button, or ``format=text``; what it refuses (no exact DuckDB rendering) is its message.
* ``GET /admin/tables/{ns}/{table}/complete?q=``: at most :data:`~service.catalog.history.COMPLETIONS`
  columns and shredded paths containing ``q``, as JSON, for the predicate box's completion list.

POSTs (a predicate too long for a URL) carry the form's CSRF token."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from starlette.responses import JSONResponse, PlainTextResponse, Response, StreamingResponse

from service.dashboard import format as fmt
from service.dashboard.auth import admin_page, authenticate, csrf_checked
from service.dashboard.pages.playground import insert_items, predicate_parser, snapshot_of
from service.dashboard.web import (
    SECURITY_HEADERS,
    app_context,
    catalog_of,
    error_page,
    form_limit_for,
    read_form,
    render,
)
from service.errors import BadInputError, ShredcatError

if TYPE_CHECKING:
    from service.catalog import Candidate, PlanResult

router = APIRouter()

#: Candidates read per page of an export (each page one read of the catalog).
EXPORT_PAGE = 5000
FORMATS = {
    "csv": ("text/csv; charset=utf-8", "csv"),
    "json": ("application/json", "json"),
    "spark": ("text/x-python; charset=utf-8", "py"),
}


async def _form(request: Request, query: dict[str, str]) -> dict[str, str] | Response:
    """The fields of a GET's query string, or of a POST's form (its CSRF token checked)."""
    if request.method != "POST":
        return query
    form = await read_form(request, form_limit_for(app_context(request).settings.max_predicate_length))
    if isinstance(form, Response):
        return form
    if not csrf_checked(request, form):
        return error_page(request, 403, "Forbidden", "The form expired: reload the page and run the predicate again.")
    return form


@router.api_route("/tables/{namespace}/{table}/prune/export", methods=["GET", "POST"])
async def export_route(
    request: Request,
    namespace: str,
    table: str,
    sql: str = "",
    snapshot: str = "",
    tz: str = "",
    format: str = "csv",
    inline: str = "",
) -> Response:
    guard = await authenticate(request)  # before a body is read
    if isinstance(guard, Response):
        return guard
    form = await _form(request, {"sql": sql, "snapshot": snapshot, "tz": tz, "format": format, "inline": inline})
    if isinstance(form, Response):
        return form
    # A POST's query string says the format (the buttons' formaction); its form, the predicate.
    return await admin_page(request, _export, namespace, table, {"format": format, "inline": inline, **form})


def _export(request: Request, namespace: str, table: str, form: dict[str, str]) -> Response:
    kind = form.get("format", "csv")
    if kind not in FORMATS:
        raise BadInputError(f"format must be csv, json or spark, not {kind[:40]!r}")
    catalog = catalog_of(request)
    expr = predicate_parser(request, form.get("sql", ""), form.get("tz", "").strip())
    # Planned before anything is sent: an error is the HTML error page.
    first = catalog.plan(namespace, table, expr, snapshot_id=snapshot_of(form.get("snapshot", "").strip()), page_size=EXPORT_PAGE)

    def candidates() -> Iterator[Candidate]:
        page = first
        yield from page.candidates
        while page.next_page_token is not None:  # pinned to the first page's snapshot
            page = catalog.plan(namespace, table, expr, page_size=EXPORT_PAGE, page_token=page.next_page_token)
            yield from page.candidates

    writer = {"csv": _csv, "json": _json, "spark": _spark}[kind]
    media, ext = FORMATS[kind]
    name = f"{namespace}.{table}-candidates-at-{first.snapshot_id}.{ext}"
    headers = {**SECURITY_HEADERS, "Content-Disposition": f'attachment; filename="{name}"'}
    if form.get("inline") == "1":  # the copy buttons read the text; no download
        headers.pop("Content-Disposition")
    body = _chunked(writer(candidates(), first, form.get("sql", "")))
    return StreamingResponse(body, media_type=media, headers=headers)


#: Characters sent per chunk of an export (each chunk is one trip through the ASGI stack: a chunk
#: per candidate cost 2.7 s of CPU for 10,000 of them).
CHUNK_CHARS = 64 * 1024


def _chunked(parts: Iterator[str]) -> Iterator[str]:
    """``parts`` joined into chunks of about :data:`CHUNK_CHARS` characters."""
    buf: list[str] = []
    size = 0
    for p in parts:
        buf.append(p)
        size += len(p)
        if size >= CHUNK_CHARS:
            yield "".join(buf)
            buf, size = [], 0
    if buf:
        yield "".join(buf)


def _csv(rows: Iterator[Candidate], first: PlanResult, sql: str) -> Iterator[str]:
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")

    def line(values: list[object]) -> str:
        w.writerow(values)
        text = out.getvalue()
        out.seek(0)
        out.truncate()
        return text

    yield line(["path", "file_size_bytes", "record_count", "snapshot_id"])
    for c in rows:
        yield line([c.path, c.file_size_bytes, c.record_count, first.snapshot_id])


def _json(rows: Iterator[Candidate], first: PlanResult, sql: str) -> Iterator[str]:
    head = {
        "snapshot_id": first.snapshot_id,
        "predicate": sql,
        "files_considered": first.files_considered,
        "warnings": [w.message for w in first.warnings],
    }
    yield json.dumps(head, ensure_ascii=False)[:-1] + ', "candidates": ['
    sep = ""
    for c in rows:
        yield sep + json.dumps({"path": c.path, "file_size_bytes": c.file_size_bytes, "record_count": c.record_count}, ensure_ascii=False)
        sep = ", "
    yield "]}\n"


def _spark(rows: Iterator[Candidate], first: PlanResult, sql: str) -> Iterator[str]:
    """PySpark reading only the candidates (``basePath``: their common directory, so partition
    columns are still discovered) and filtering with the predicate."""
    paths = [c.path for c in rows]
    yield f"# {len(paths):,} candidate files at snapshot {first.snapshot_id}\n"
    if not paths:
        yield "# no file can hold a matching row: the query reads nothing\n"
        return
    base = fmt.common_dir(paths)
    yield "df = (\n    spark.read"
    if base:
        yield f".option(\"basePath\", {json.dumps(base, ensure_ascii=False)})"
    yield ".parquet(\n"
    for p in paths:
        yield f"        {json.dumps(p, ensure_ascii=False)},\n"
    yield f"    )\n    .where({json.dumps(sql, ensure_ascii=False)})\n)\n"


@router.api_route("/tables/{namespace}/{table}/prune/duckdb", methods=["GET", "POST"])
async def duckdb_route(
    request: Request, namespace: str, table: str, sql: str = "", snapshot: str = "", tz: str = "", format: str = "html"
) -> Response:
    guard = await authenticate(request)
    if isinstance(guard, Response):
        return guard
    form = await _form(request, {"sql": sql, "snapshot": snapshot, "tz": tz, "format": format})
    if isinstance(form, Response):
        return form
    return await admin_page(request, _duckdb, namespace, table, {"format": format, **form})


def _duckdb(request: Request, namespace: str, table: str, form: dict[str, str]) -> Response:
    """The DuckDB query of the predicate, or the refusal of its rendering (422, its message)."""
    from service.duckdb import engine, plan_pruned

    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    sql, tz = form.get("sql", ""), form.get("tz", "").strip()
    snapshot = snapshot_of(form.get("snapshot", "").strip())
    predicate_parser(request, sql, tz)  # an empty predicate, a bad zone: refused as the playground does
    values: dict[str, Any] = {"t": info, "sql": sql, "snapshot": snapshot, "tz": tz, "query": None, "error": None}
    try:
        con = engine.connect()
        try:
            scan = plan_pruned(con, (namespace, table), sql, snapshot=snapshot, catalog=catalog, time_zone=tz or None)
        finally:
            con.close()
    except ShredcatError as e:
        if e.http_status >= 500:
            raise
        if form.get("format") == "text":
            return PlainTextResponse(e.message, status_code=e.http_status, headers=SECURITY_HEADERS)
        values["error"] = e.message
        return render(request, "duckdb.html", status=e.http_status, **values)
    if form.get("format") == "text":
        return PlainTextResponse(scan.sql + ";\n", headers=SECURITY_HEADERS)
    values.update(query=scan.sql + ";", scan=scan)
    return render(request, "duckdb.html", **values)


@router.get("/tables/{namespace}/{table}/complete")
async def complete_route(request: Request, namespace: str, table: str, q: str = "") -> Response:
    return await admin_page(request, _complete, namespace, table, q[:200])


def _complete(request: Request, namespace: str, table: str, q: str) -> Response:
    """Columns whose name contains ``q``, then the paths containing it (most live files first),
    each as the text it inserts (:func:`insert_items`)."""
    from service.catalog import PathCoverage
    from service.catalog.history import COMPLETIONS, complete_paths

    catalog = catalog_of(request)
    info = catalog.get_table(namespace, table)
    text = q.strip().lstrip("$.").casefold()
    columns = [(c.name, c.kind) for c in info.columns] or [(c, "variant") for c in info.variant_columns]
    wanted = [(n, k) for n, k in columns if text in n.casefold()][:COMPLETIONS]
    paths = complete_paths(catalog, namespace, table, text)
    coverage = [PathCoverage(p.column, p.variant_path, info.live_file_count, p.live_files, ((p.shredded_type, p.live_files),)) for p in paths]
    items = insert_items(wanted, coverage, name_column=len(info.variant_columns) > 1)[:COMPLETIONS]
    body = [{"label": it.label, "text": it.text, "note": it.note} for it in items]
    return JSONResponse(body, headers=SECURITY_HEADERS)
