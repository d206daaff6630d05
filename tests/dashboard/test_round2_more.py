"""Issue 36's items 9-12 on the server side (no browser): path search and coverage filters, files
by page number, history and type-drift reads, removed files as links, exports streamed and pinned
to their snapshot, the DuckDB query and its refusals, completion. The browser side is
:mod:`tests.dashboard.test_browser_round3`."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from html import unescape

import pytest
from fastapi.testclient import TestClient

from service.catalog import Catalog
from service.catalog.admin import admin_reads
from service.catalog.history import complete_paths, files_at, table_history, type_timeline
from tests.dashboard.conftest import ADMIN_TOKEN, HTML, csrf_from

T = "/admin/tables/lake/events"
NAME = "variant_get(v, '$.name', 'string') = 'x'"
ID = "variant_get(v, '$.id', 'bigint') >= 0"


def test_history_counts_every_snapshot_of_the_table(filled: str, events_files: list[str]) -> None:
    with Catalog(filled) as cat:
        cat.remove("lake", "events", [events_files[0]])
        points = table_history(cat, "lake", "events")
        live = cat.get_table("lake", "events")
        files = cat.list_files("lake", "events", limit=100)
    assert [p.added for p in points][-3:] == [3, 2, 0] and points[-1].removed == 1
    last = points[-1]
    assert (last.files, last.rows, last.bytes) == (live.live_file_count, live.live_record_count, live.live_bytes)
    assert last.files == len(files) == 4
    assert [p.files for p in points][-3:] == [3, 5, 4]


def test_history_reads_snapshot_rows_only(filled: str, events_files: list[str]) -> None:
    """The history is the table's live totals walked back through what each snapshot added and
    removed: no read of the table's files (1.2 s at 3,000,000 files), and each point what the
    files live after its snapshot add up to, after commits, a removal and a bulk load."""
    from sqlalchemy import event, select

    from service.catalog import models as m
    from service.stats.model import FileStats, PathStats
    from service.values import ShreddedType

    def late(i: int) -> FileStats:
        stats = PathStats("v", '"id"', ShreddedType.parse("int64"), 10, 10, 0, i, i + 5, None)
        return FileStats(f"/lake/late-{i}.parquet", 4096 + i, 10 + i, 100, f"etag-{i}", ("v",), (stats,))

    seen: list[str] = []
    with Catalog(filled) as cat:
        cat.remove("lake", "events", [events_files[0], events_files[4]])
        cat.commit("lake", "events", [late(1)])
        cat.bulk_load("lake", "events", iter([[late(2), late(3)], [late(4)]]))
        cat.remove("lake", "events", ["/lake/late-3.parquet"])
        def record(*a: object) -> None:
            seen.append(str(a[2]))

        event.listen(cat.engine, "before_cursor_execute", record)
        points = table_history(cat, "lake", "events")
        event.remove(cat.engine, "before_cursor_execute", record)
        D = m.DataFile
        with cat.engine.connect() as conn:
            files = conn.execute(select(D.begin_snapshot, D.end_snapshot, D.record_count, D.file_size_bytes)).all()
    assert seen and not any("ducklake_data_file" in s for s in seen), seen
    live_after = [
        [f for f in files if f.begin_snapshot <= p.snapshot_id and (f.end_snapshot is None or f.end_snapshot > p.snapshot_id)]
        for p in points
    ]
    assert [(p.files, p.rows, p.bytes) for p in points] == [
        (len(fs), sum(f.record_count for f in fs), sum(f.file_size_bytes for f in fs)) for fs in live_after
    ]
    assert [(p.added, p.removed) for p in points][-4:] == [(0, 2), (1, 0), (3, 0), (0, 1)]


def test_type_timeline_says_from_which_snapshot_a_type_appears(filled: str) -> None:
    with Catalog(filled) as cat:
        spans = type_timeline(cat, "lake", "events", "v", '"name"')
        snaps = [s.snapshot_id for s in cat.list_snapshots("lake", "events")]
        assert type_timeline(cat, "lake", "events", "nope", '"name"') == []
    assert [s.shredded_type for s in spans] == ["varchar", "int64"]
    # The first commit held the varchar files, the second added the int64 one.
    assert spans[0].first_snapshot == snaps[1] and spans[1].first_snapshot == snaps[2]
    assert all(s.until_snapshot is None for s in spans)
    assert (spans[0].live_files, spans[1].live_files) == (4, 1) == (spans[0].files_ever, spans[1].files_ever)


def test_completion_and_pages_by_number_are_bounded_reads(filled: str) -> None:
    with Catalog(filled) as cat:
        found = complete_paths(cat, "lake", "events", "NA", limit=5)
        assert [(c.variant_path, c.shredded_type) for c in found] == [('"name"', "varchar"), ('"name"', "int64")]
        assert len(complete_paths(cat, "lake", "events", "", limit=2)) == 2
        by_size = admin_reads(cat).list_files_sorted("lake", "events", sort="size", descending=True, limit=5)
        none = {"prefix": None, "contains": None, "snapshot": None}
        page = files_at(cat, "lake", "events", sort="size", descending=True, filters=none, offset=2, limit=2)
    assert [f.path for f in page] == [f.path for f in by_size[2:4]]


def test_table_page_searches_paths_and_filters_coverage(admin: TestClient) -> None:
    html = admin.get(T, params={"q": "NAM"}).text
    coverage = unescape(html[html.index('id="coverage"') : html.index('id="files-h"')])
    assert '"name"' in coverage and '"score"' not in coverage and '"id"' not in coverage
    assert 'id="path-search-said"' in html
    conflict = admin.get(T, params={"status": "conflict"}).text
    rows = re.findall(r'<tr class="cov-(\w+)"', conflict)
    assert rows == ["conflict"]
    ordered = admin.get(T, params={"cov_sort": "status"}).text
    assert re.findall(r'<tr class="cov-(\w+)"', ordered)[0] == "conflict"
    bad = admin.get(T, params={"status": "weird"})
    assert bad.status_code == 422 and "status must be ok, conflict or partial" in bad.text
    bad = admin.get(T, params={"page": "x"})
    assert bad.status_code == 422 and "page: a page number is a whole number" in bad.text


def test_files_page_numbers(admin: TestClient, filled: str) -> None:
    import service.dashboard.pages.table as table_page

    old = table_page.FILES_PAGE
    table_page.FILES_PAGE = 2
    try:
        first = admin.get(T).text
        assert "page 1 of 3" in first and 'id="files-jump"' in first
        third = admin.get(T, params={"page": "3", "sort": "path"}).text
        assert "page 3 of 3" in third and third.count('class="copy-path"') == 1
        beyond = admin.get(T, params={"page": "99"}).text  # past the last: the last
        assert "page 3 of 3" in beyond
        # From a numbered page, Previous continues by cursor.
        prev = re.search(r'rel="prev" href="([^"]+)"', third)
        assert prev is not None
        back = admin.get(prev.group(1).replace("&amp;", "&")).text
        assert "page 2 of 3" in back
    finally:
        table_page.FILES_PAGE = old


def test_removed_files_link_to_the_file_as_it_was(admin: TestClient, filled: str, events_files: list[str]) -> None:
    with Catalog(filled) as cat:
        snap = cat.remove("lake", "events", [events_files[0]]).snapshot_id
    html = admin.get(T, params={"snapshot": snap}).text
    removed = html[html.index('id="removed"') :]
    link = re.search(r'<li class="removed-file"><a class="mid" href="([^"]+)"', removed)
    assert link is not None
    page = admin.get(link.group(1).replace("&amp;", "&"))
    assert page.status_code == 200 and 'id="file-removed"' in page.text and 'id="file-stats"' in page.text
    assert admin.get(f"{T}/file", params={"path": events_files[0]}).status_code == 404  # not live
    assert admin.get(f"{T}/file", params={"path": events_files[0], "snapshot": "1"}).status_code == 404
    # History: charts with a link per snapshot.
    assert html.count('class="history-chart"') == 3 and f'data-snapshot="{snap}"' in html


def test_export_csv_json_spark_pinned_to_the_snapshot(admin: TestClient, filled: str, events_files: list[str]) -> None:
    page = admin.get(f"{T}/prune", params={"sql": ID}).text
    snap = int(re.search(r"Result at snapshot (\d+)", page).group(1))  # type: ignore[union-attr]
    with Catalog(filled) as cat:
        cat.remove("lake", "events", [events_files[0]])  # later: the export stays at `snap`
        expected = [c.path for c in cat.iter_candidates("lake", "events", lambda s: __import__("service.pruning.parse_sql", fromlist=["x"]).parse_sql(ID, schema=s), snapshot_id=snap)]
    assert len(expected) == 5
    none = admin.get(f"{T}/prune/export", params={"sql": "variant_get(v, '$.id', 'bigint') < -5", "format": "csv"})
    assert none.status_code == 200 and none.text == "path,file_size_bytes,record_count,snapshot_id\n"
    nothing = admin.get(f"{T}/prune/export", params={"sql": "variant_get(v, '$.id', 'bigint') < -5", "format": "spark"}).text
    assert "no file can hold a matching row" in nothing and "spark.read" not in nothing
    r = admin.get(f"{T}/prune/export", params={"sql": ID, "snapshot": snap, "format": "csv"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert f"lake.events-candidates-at-{snap}.csv" in r.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(r.text)))
    assert [x["path"] for x in rows] == expected and {x["snapshot_id"] for x in rows} == {str(snap)}
    doc = admin.get(f"{T}/prune/export", params={"sql": ID, "snapshot": snap, "format": "json"}).json()
    assert doc["snapshot_id"] == snap and [c["path"] for c in doc["candidates"]] == expected
    spark = admin.get(f"{T}/prune/export", params={"sql": ID, "snapshot": snap, "format": "spark", "inline": "1"})
    assert "content-disposition" not in spark.headers
    code = spark.text
    assert "spark.read" in code and all(json.dumps(p) in code for p in expected) and json.dumps(ID) in code
    # Runs as Python against a stand-in reader that records its calls.
    calls: list[tuple[str, tuple[object, ...]]] = []

    class Rec:
        def __getattr__(self, name: str) -> object:
            def call(*a: object) -> Rec:
                calls.append((name, a))
                return self

            return call

    exec(compile(code, "spark.py", "exec"), {"spark": type("S", (), {"read": Rec()})()})
    assert ("parquet", tuple(expected)) in calls and ("where", (ID,)) in calls


def test_export_errors_are_pages_before_anything_is_sent(admin: TestClient) -> None:
    r = admin.get(f"{T}/prune/export", params={"sql": "variant_get(v, '$.id', 'bigint') =", "format": "csv"})
    assert r.status_code == 422 and "text/html" in r.headers["content-type"]
    r = admin.get(f"{T}/prune/export", params={"sql": ID, "format": "xml"})
    assert r.status_code == 422 and "format must be csv, json or spark" in r.text
    r = admin.get(f"{T}/prune/export", params={"sql": ID, "snapshot": "999999", "format": "csv"})
    assert r.status_code == 404
    r = admin.get(f"{T}/prune/export", params={"sql": "", "format": "csv"})
    assert r.status_code == 422 and "enter a predicate" in r.text


def test_export_by_post_needs_the_csrf_token(make_client: Callable[..., TestClient], filled: str) -> None:
    from tests.dashboard.test_pages import _login

    c = make_client()  # signed in by cookie, as a browser: its forms carry the CSRF token
    assert _login(c, ADMIN_TOKEN).status_code == 303  # type: ignore[attr-defined]
    token = csrf_from(c.get(f"{T}/prune", headers=HTML).text)
    sql = f"variant_get(v, '$.id', 'bigint') IN ({', '.join(str(10**6 + i) for i in range(2000))})"
    r = c.post(f"{T}/prune/export?format=json", data={"sql": sql, "csrf_token": token}, headers=HTML)
    assert r.status_code == 200, r.text[-600:]
    assert r.json()["candidates"] == [] and r.json()["predicate"] == sql
    r = c.post(f"{T}/prune/export?format=json", data={"sql": sql, "csrf_token": "forged"}, headers=HTML)
    assert r.status_code == 403 and "The form expired" in r.text
    r = c.post(f"{T}/prune/duckdb?format=text", data={"sql": sql, "csrf_token": token}, headers=HTML)
    assert r.status_code == 200 and r.text.rstrip().endswith("WHERE FALSE;")


def test_duckdb_query_and_refusal(admin: TestClient) -> None:
    ok = admin.get(f"{T}/prune/duckdb", params={"sql": ID, "format": "text"})
    assert ok.status_code == 200 and ok.text.startswith("SELECT * FROM read_parquet(")
    import duckdb

    rows = duckdb.sql(ok.text.rstrip().rstrip(";")).fetchall()
    assert len(rows) == 500
    page = admin.get(f"{T}/prune/duckdb", params={"sql": ID})
    assert page.status_code == 200 and 'id="duckdb-sql"' in page.text
    # What the DuckDB rendering refuses is refused here with its message (as the CLI's --sql duckdb).
    refused = "length(variant_get(v, '$.name', 'string')) > 3"
    r = admin.get(f"{T}/prune/duckdb", params={"sql": refused, "format": "text"})
    assert r.status_code == 422 and "no exact DuckDB rendering" in r.text, r.text
    html = admin.get(f"{T}/prune/duckdb", params={"sql": refused})
    assert html.status_code == 422 and 'id="duckdb-error"' in html.text and "no exact DuckDB rendering" in html.text


def test_complete_route(admin: TestClient) -> None:
    items = admin.get(f"{T}/complete", params={"q": "$.sco"}).json()
    assert items and items[0]["text"] == "variant_get(v, '$.score', 'double')"
    assert items[0]["label"] == "$.score"  # one Variant column: no column named
    everything = admin.get(f"{T}/complete").json()
    assert 1 <= len(everything) <= 20 and any(i["label"] == "v" for i in everything)
    assert admin.get("/admin/tables/lake/nope/complete").status_code == 404


def test_export_routes_need_the_admin_role(make_client: Callable[..., TestClient], filled: str) -> None:
    from tests.dashboard.conftest import READER_TOKEN, bearer

    c = make_client()
    for url in (f"{T}/prune/export?sql=x", f"{T}/prune/duckdb?sql=x", f"{T}/complete?q=a"):
        assert c.get(url, headers={**HTML, **bearer(READER_TOKEN)}).status_code == 403
        assert c.get(url).status_code == 401




def test_parsed_predicates_are_kept_per_schema_and_zone(client: TestClient) -> None:
    """The playground's buttons send a predicate again: its tree is parsed once per text, zone and
    table schema (errors are never kept)."""
    from starlette.requests import Request

    from service.dashboard.pages import playground
    from service.errors import InvalidPredicateError
    from service.pruning.schema import TableSchema

    request = Request({"type": "http", "app": client.app})  # the started app's settings
    v, w = TableSchema(("v",)), TableSchema(("v", "w"))
    sql = "variant_get(v, '$.ts', 'timestamp') > TIMESTAMP '2024-01-01 00:00:00'"
    first = playground.predicate_parser(request, sql, "")(v)
    assert playground.predicate_parser(request, sql, "")(v) is first
    assert playground.predicate_parser(request, sql, "")(w) is not first
    paris = playground.predicate_parser(request, sql, "Europe/Paris")(v)
    assert paris is not first and paris != first  # the literal is read in another zone
    bad = playground.predicate_parser(request, "variant_get(v, '$.id', 'bigint') =", "")
    for _ in range(2):
        with pytest.raises(InvalidPredicateError):
            bad(v)
