"""The admin dashboard in-process (TestClient): every page renders from a real catalog, auth in a
browser (redirect, 401, 403, sessions, CSRF), empty states, the SVG chart, the playground's numbers
against the REST API."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from html import unescape
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import pytest
from fastapi.testclient import TestClient

from service import pagetoken
from service.dashboard import session
from service.dashboard.chart import ChartFile, nice_ticks, render_chart
from service.dashboard.pages import path as path_page
from service.dashboard.pages import table as table_page
from service.values import ShreddedType
from tests.dashboard.conftest import (
    ADMIN_TOKEN,
    HTML,
    READER_TOKEN,
    bearer,
    csrf_from,
    metrics_from,
)

T = "/admin/tables/lake/events"


def _path_url(variant_path: str, **params: str) -> str:
    q = "&".join(f"{k}={quote(v)}" for k, v in {"column": "v", "path": variant_path, **params}.items())
    return f"{T}/path?{q}"


def _links(html: str) -> list[str]:
    return [unescape(h) for h in re.findall(r'href="([^"]+)"', html)]


# --- pages ------------------------------------------------------------------------------------


def test_overview_lists_tables_with_counts_and_recent_commits(admin: TestClient) -> None:
    r = admin.get("/admin")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/html")
    html = r.text
    row = re.search(r"<tr>\s*<th scope=\"row\"><a href=\"/admin/tables/lake/events\">lake.events</a>.*?</tr>", html, re.S)
    assert row, html
    cells = re.findall(r'data-value="(\d+)"', row.group(0))
    files, rows, size = (int(x) for x in cells)
    table = admin.get("/v1/namespaces/lake/tables/events", headers={"Accept": "application/json"}).json()
    assert files == 5 and rows == 500
    assert size == table.get("live-bytes", size)
    assert "lake.empty" in html
    # Recent commits: newest first, two commits of lake.events and the two table creations.
    recent = re.search(r'<table class="data" id="recent">.*?</table>', html, re.S).group(0)
    ids = [int(x) for x in re.findall(r'<td class="num">(?:<a [^>]*>)?(\d+)(?:</a>)?</td>\s*<td><time>\d{4}-', recent)]
    assert ids == sorted(ids, reverse=True) and len(ids) >= 4
    # Changes in words, the stored DuckLake text in the title.
    assert "added 3 files" in recent and "added 2 files" in recent and "created table lake.events" in recent
    assert 'title="inserted_into_table' in recent


def test_table_page_shows_global_stats_coverage_files_and_history(admin: TestClient) -> None:
    r = admin.get(T)
    assert r.status_code == 200, r.text
    html = r.text
    stats = re.search(r'<table class="data global-stats" data-column="v">.*?</table>', html, re.S).group(0)
    # "name" (type conflict) and "extra" (one file) are not global; the others are, with merged bounds.
    in_stats = re.search(r"<tbody>.*?</tbody>", stats, re.S).group(0)
    paths = [unescape(p) for p in re.findall(r"<code>([^<]+)</code></a></th>", in_stats)]
    assert paths == ['"day"', '"id"', '"score"', '"ts"']
    # The conflicting path is marked below them, with a link to the files of each type.
    marked = re.search(r'<tbody class="not-global">.*?</tbody>', stats, re.S).group(0)
    assert [unescape(p) for p in re.findall(r"<code>([^<]+)</code></a></th>", marked)] == ['"name"']
    assert "type conflict" in marked and "int64 in 1 file<" in marked and "varchar in 4 files<" in marked
    id_row = re.search(r"<code>&#34;id&#34;</code>.*?</tr>", stats, re.S).group(0)
    assert ">0<" in id_row and ">499<" in id_row and "int64" in id_row
    coverage = re.search(r'<table class="data" id="coverage">.*?</table>', html, re.S).group(0)
    assert "type conflict: varchar, int64" in coverage
    assert "not fully shredded in 4 of 5 files" in coverage
    assert coverage.count("in the global stats") == 4
    files = re.search(r'<table class="data" id="files-table">.*?</table>', html, re.S).group(0)
    # The full path in the title (and the link), shown relative to the files' common directory.
    assert [p.rsplit("/", 1)[1] for p in re.findall(r'class="path"><a [^>]*title="([^"]+)"', files)] == [
        f"part-{i}.parquet" for i in range(5)
    ]
    assert re.findall(r'<span class="f">([^<]+)</span>', files) == [f"part-{i}.parquet" for i in range(5)]
    history = re.search(r'<table class="data" id="snapshots">.*?</table>', html, re.S).group(0)
    assert history.count("<tr>") == 1 + 3  # header + creation + two commits
    # Every link on the page leads somewhere that renders.
    for link in _links(html):
        if link.startswith("/admin") and "/static/" not in link:
            assert admin.get(link.split("#")[0]).status_code == 200, link


def test_file_page_shows_metadata_and_per_path_stats(admin: TestClient, events_files: list[str]) -> None:
    path = events_files[4]
    r = admin.get(f"{T}/file", params={"path": path})
    assert r.status_code == 200, r.text
    html = r.text
    assert unescape(re.search(r'id="file-path">([^<]+)<', html).group(1)) == path
    stats = re.search(r'<table class="data" id="file-stats">.*?</table>', html, re.S).group(0)
    rows = re.findall(r"<tr[^>]*>.*?</tr>", stats, re.S)[1:]
    assert len(rows) == 6  # id, name, score, ts, day, extra
    name_row = next(x for x in rows if "&#34;name&#34;" in x)
    assert "int64" in name_row and ">7<" in name_row and ">106<" in name_row
    # Stored as int64 here, as varchar in the four other files: the row is marked.
    assert name_row.startswith('<tr class="odd-type">') and "most files: varchar" in name_row
    assert sum('class="odd-type"' in x for x in rows) == 1
    assert "None: every path" in html  # this file has every path of the table
    first = admin.get(f"{T}/file", params={"path": events_files[0]}).text
    absent = re.search(r'<ul id="file-absent">.*?</ul>', first, re.S).group(0)
    assert "&#34;extra&#34;" in absent and "in 1 of 5 files" in absent and 'class="odd-type"' not in first
    score_row = next(x for x in rows if "&#34;score&#34;" in x)
    assert "float64" in score_row and "<td>no</td>" in score_row  # contains_nan false
    missing = admin.get(f"{T}/file", params={"path": "/nowhere.parquet"})
    assert missing.status_code == 404 and "not a live file" in missing.text


def test_path_chart_is_server_side_svg(admin: TestClient) -> None:
    r = admin.get(_path_url('"id"'))
    assert r.status_code == 200, r.text
    html = r.text
    svg = re.search(r"<svg class=\"chart\".*?</svg>", html, re.S).group(0)
    assert 'data-files="5"' in svg and svg.count('class="bar"') == 5
    assert "part-2.parquet: min 200, max 299" in svg
    assert "<script" not in svg
    assert "keeps about <strong>20.0%</strong>" in html  # disjoint ranges: a point hits one file of five
    # Ordered by path instead of min; timestamps and dates get formatted ticks.
    assert admin.get(_path_url('"id"', order="path")).status_code == 200
    ts = admin.get(_path_url('"ts"')).text
    assert re.search(r'class="tick"[^>]*>2024-01-\d\d', ts)
    day = admin.get(_path_url('"day"')).text
    assert re.search(r'class="tick"[^>]*>2024-01-\d\d<', day)
    strings = admin.get(_path_url('"name"', type="varchar")).text
    assert "rank among the bounds drawn" in strings and 'data-files="4"' in strings


def test_path_page_explains_why_a_path_has_no_global_stats(admin: TestClient) -> None:
    html = admin.get(_path_url('"name"')).text
    why = re.search(r'id="why-not-global">(.*?)</p>', html, re.S).group(1)
    assert "2 different types (a type conflict)" in why and "not fully shredded" not in why
    assert 'type=int64' in html  # link to the other type's chart
    html = admin.get(_path_url('"extra"')).text
    assert "not fully shredded in 4 live files" in html
    gone = admin.get(_path_url('"nope"'))
    assert gone.status_code == 200 and "not fully shredded in any live file" in gone.text
    assert admin.get(_path_url('"id"', type="varchar")).status_code == 404
    assert admin.get(f"{T}/path", params={"column": "w", "path": '"id"'}).status_code == 404
    assert admin.get(f"{T}/path").status_code == 422


def test_path_chart_is_capped(admin: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(path_page, "CHART_LIMIT", 2)
    html = admin.get(_path_url('"id"')).text
    svg = re.search(r"<svg class=\"chart\".*?</svg>", html, re.S).group(0)
    assert 'data-files="2"' in svg and "(2 of 5, evenly spaced)" in svg
    # The picks span the order: the first and the last file by minimum.
    assert "part-0.parquet: min 0, max 99" in svg and "part-4.parquet: min 400, max 499" in svg
    assert "part-2.parquet" not in svg
    cap = re.search(r'id="chart-cap">(.*?)</p>', html, re.S).group(1)
    assert "Showing 2 of 5 files, evenly spaced" in cap and "counts all 5" in cap
    # The estimate is over all five files, not the two drawn: still one file of five per probe.
    assert "keeps about <strong>20.0%</strong> of the 5 files" in html


def test_path_chart_of_many_files_says_it_is_a_sample(admin: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path in more files than a page reads is charted from a sample: the caption, the axis and
    the estimate say so."""
    from service.catalog import admin as admin_module

    monkeypatch.setattr(admin_module, "PATH_BOUNDS_EXACT_FILES", 4)
    monkeypatch.setattr(admin_module, "PATH_BOUNDS_SAMPLE", 2)
    html = admin.get(_path_url('"id"')).text
    svg = re.search(r"<svg class=\"chart\".*?</svg>", html, re.S).group(0)
    assert 'data-files="2"' in svg and "(2 of 5, evenly spaced in a sample of 2)" in svg
    cap = re.search(r'id="chart-cap">(.*?)</p>', html, re.S).group(1)
    assert "Showing 2 of 5 files" in cap and 'id="chart-sample">sample of 2<' in cap
    assert re.search(r'id="estimated">about 5 files \(estimated from the sample of 2\)', html)


def test_a_substring_found_in_one_page_is_counted_by_that_page(admin: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A path search whose matches fit in the first page counts them from it: no second scan of
    every live path for the count (a rare substring's two scans took 4.3 s at 3,000,000 files);
    one that fills the page still counts every match."""
    from sqlalchemy import event

    engine = admin.app.state.ctx.catalog.engine  # type: ignore[attr-defined]
    seen: list[str] = []

    def record(*a: object) -> None:
        seen.append(str(a[2]))

    def counts() -> list[str]:
        return [s for s in seen if "count(" in s and "LIKE" in s.upper()]

    monkeypatch.setattr(table_page, "FILES_PAGE", 2)
    event.listen(engine, "before_cursor_execute", record)
    try:
        found = admin.get(T, params={"contains": "RT-3"}).text
        counted = counts()
        seen.clear()
        many = admin.get(T, params={"contains": ".parquet", "sort": "size"}).text
        counted_many = counts()
    finally:
        event.remove(engine, "before_cursor_execute", record)
    assert "1 of 5 live files contain" in found and counted == []
    assert "5 of 5 live files contain" in many and len(counted_many) == 1


@pytest.fixture
def admin_each_backend(catalog_url: str, events_files: list[str]) -> Iterator[TestClient]:
    """As ``admin``, on a catalog of each back end holding ``lake.events`` (its five files)."""
    from service.api import create_app
    from service.catalog import Catalog
    from tests.api.conftest import make_settings

    with Catalog(catalog_url) as cat:
        cat.register("lake", "events", events_files)
    settings = make_settings(catalog_url, [str(Path(events_files[0]).parent.parent)])
    with TestClient(create_app(settings), raise_server_exceptions=False, follow_redirects=False) as c:
        c.headers.update({**HTML, **bearer(ADMIN_TOKEN)})
        yield c


def test_a_path_search_counts_its_matches_up_to_a_cap(admin_each_backend: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past :data:`table_page.MATCHES_COUNTED` matches the count says "more than" it (no exact
    number it did not count, no Last page); at the cap it is exact; the pages still walk every match."""
    admin = admin_each_backend
    monkeypatch.setattr(table_page, "FILES_PAGE", 2)

    def text(html: str, element: str) -> str:
        m = re.search(rf'id="{element}">(.*?)</(?:p|span)>', html, re.S)
        return "" if m is None else re.sub(r"<[^>]+>|\s+", " ", m.group(1)).strip()

    def shown(html: str) -> list[str]:
        return [p.rsplit("/", 1)[1] for p in re.findall(r'class="path"><a [^>]*title="([^"]+)"', html)]

    def following(html: str) -> str | None:
        m = re.search(r'rel="next" href="([^"]+)"', html)
        return None if m is None else unescape(m.group(1)).split("#")[0]

    monkeypatch.setattr(table_page, "MATCHES_COUNTED", 5)
    exact = admin.get(T, params={"contains": "PART-"}).text
    assert text(exact, "files-count").startswith("5 of 5 live files contain")
    assert text(exact, "files-range") == "1–2 of 5" and text(exact, "files-page") == "page 1 of 3"
    assert 'id="files-count-capped"' not in exact and "Last »" in exact

    monkeypatch.setattr(table_page, "MATCHES_COUNTED", 4)
    page = admin.get(T, params={"contains": "PART-"}).text
    assert text(page, "files-count").startswith("more than 4 of 5 live files contain")
    assert text(page, "files-range") == "1–2 of more than 4" and text(page, "files-page") == "page 1 of more than 2"
    assert text(page, "files-count-capped") == "Counting stopped at 4 matches." and "Last »" not in page
    seen = shown(page)
    while (url := following(page)) is not None:
        page = admin.get(url).text
        seen += shown(page)
        assert "of more than 4" in text(page, "files-range")
    assert seen == [f"part-{i}.parquet" for i in range(5)] and text(page, "files-range") == "5–5 of more than 4"
    # A page asked by number stays within the counted matches' pages.
    numbered = admin.get(T, params={"contains": "PART-", "page": "9"}).text
    assert shown(numbered) == ["part-2.parquet", "part-3.parquet"] and text(numbered, "files-range") == "3–4 of more than 4"
    # A prefix is counted exactly whatever the cap (its index range is the count).
    prefixed = admin.get(T, params={"prefix": "part-"}).text
    assert text(prefixed, "files-count").startswith("5 of 5 live files start with")


def test_path_chart_follows_commits(admin: TestClient, filled: str) -> None:
    """The chart's data is kept per table snapshot: a file committed by another writer (another
    Catalog, as another process would) is drawn on the next view and counted in the estimate."""
    from service.catalog import Catalog
    from service.stats.model import FileStats, PathStats

    html = admin.get(_path_url('"id"')).text
    assert 'data-files="5"' in html and "keeps about <strong>20.0%</strong> of the 5 files" in html
    assert admin.get(_path_url('"id"')).text == html
    spans_all = PathStats("v", '"id"', ShreddedType.parse("int64"), 10, 10, 0, 0, 499, None)
    with Catalog(filled) as cat:
        cat.commit("lake", "events", [FileStats("/lake/late.parquet", 4096, 10, 100, "etag", ("v",), (spans_all,))])
    html = admin.get(_path_url('"id"')).text
    svg = re.search(r"<svg class=\"chart\".*?</svg>", html, re.S).group(0)
    assert 'data-files="6"' in svg and "late.parquet: min 0, max 499" in svg
    # Each probe now keeps the file spanning every other as well as its own: 2 of 6.
    assert "keeps about <strong>33.3%</strong> of the 6 files" in html


def test_files_are_paginated_sorted_and_filtered(admin: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_page, "FILES_PAGE", 2)

    def walk(url: str) -> list[tuple[str, int, int]]:
        seen: list[tuple[str, int, int]] = []
        for _ in range(10):
            html = admin.get(url).text
            body = re.search(r'<table class="data" id="files-table">.*?</table>', html, re.S)
            if body is None:
                break
            for path, size, rows in re.findall(
                r'class="path"><a [^>]*title="([^"]+)"[^>]*>.*?</a>(?: <button[^>]*></button>)?</th>\s*<td class="num" data-value="(\d+)">.*?data-value="(\d+)"',
                body.group(0),
                re.S,
            ):
                seen.append((unescape(path), int(size), int(rows)))
            nxt = re.search(r'rel="next" href="([^"]+)"', html)
            if not nxt:
                break
            url = unescape(nxt.group(1)).split("#")[0]
        return seen

    by_path = walk(T)
    assert [p.rsplit("/", 1)[1] for p, _, _ in by_path] == [f"part-{i}.parquet" for i in range(5)]
    by_size = walk(f"{T}?sort=size&order=desc")
    assert len(by_size) == 5 and {p for p, _, _ in by_size} == {p for p, _, _ in by_path}
    assert [s for _, s, _ in by_size] == sorted((s for _, s, _ in by_size), reverse=True)
    by_rows = walk(f"{T}?sort=rows&order=asc")
    assert len(by_rows) == 5
    by_path_desc = walk(f"{T}?sort=path&order=desc")
    assert [p for p, _, _ in by_path_desc] == [p for p, _, _ in reversed(by_path)]
    prefix = by_path[0][0].rsplit("/", 1)[0] + "/part-3"
    filtered = admin.get(T, params={"prefix": prefix}).text
    assert "1 of 5 live files start with" in filtered
    none = admin.get(T, params={"prefix": "/no/such/prefix"}).text
    assert "No live file starts with" in none
    assert admin.get(T, params={"cursor": "%%%"}).status_code == 422
    # A forged cursor beyond BIGINT is the same bad request (once a driver OverflowError, 500).
    # So is a cursor of another sort (an edited link: a path where a size belongs, or the reverse).
    for sort, forged in [
        ("size", [2**70, by_path[0][0], 0, "n"]),
        ("size", [-(2**70), by_path[0][0], 0, "p"]),
        ("size", [1, "x", -1, "n"]),
        ("size", [1, "x"]),
        ("size", ["x", "/a", 0, "n"]),
        ("rows", ["x", "/a", 0, "n"]),
        ("rows", [True, "/a", 0, "n"]),
        ("path", [5, "/a", 0, "n"]),
    ]:
        r = admin.get(T, params={"sort": sort, "cursor": pagetoken.encode(forged)})
        assert r.status_code == 422 and r.headers["content-type"].startswith("text/html"), (sort, forged, r.text)
        assert "invalid page cursor" in r.text
    assert admin.get(T, params={"sort": "colour"}).status_code == 422
    # Digits other than ASCII ones (str.isdigit() accepts '²', which int() refuses): a 422, not a 500.
    for bad in ["²", "١"]:
        assert admin.get(T, params={"snapshot": bad}).status_code == 422
        assert admin.get(T + "/prune", params={"sql": "1 = 1", "snapshot": bad}).status_code == 422
        assert admin.get(T + "/prune", params={"sql": "1 = 1", "page": bad}).status_code == 200  # page 1


def test_empty_states(make_client: Callable[..., TestClient]) -> None:
    c = make_client()
    c.headers.update({**HTML, **bearer(ADMIN_TOKEN)})
    html = c.get("/admin").text
    assert "No tables yet" in html and "shredcat register" in html and "No commits yet" in html
    from service.catalog import Catalog

    with Catalog(c.app.state.ctx.catalog.engine) as cat:
        cat.create_table("lake", "empty", ["v"])
    html = c.get("/admin/tables/lake/empty").text
    assert "No files yet" in html and "No path is fully shredded in any live file" in html
    assert "No files yet, so no statistics" in html
    prune = c.get("/admin/tables/lake/empty/prune").text
    assert 'for="sql"' in prune and '<form method="post"' in prune and 'data-max-url=' in prune  # posted; short ones by GET (script)
    r = c.get("/admin/tables/lake/empty/prune", params={"sql": "variant_get(v, '$.id', 'bigint') = 1"})
    assert r.status_code == 200 and metrics_from(r.text)["files-considered"] == 0
    assert "The table has no files" in r.text
    r = c.get("/admin/tables/lake/empty/prune", params={"sql": "variant_get(v, '$.id', 'bigint') = 1", "show": "kept"})
    assert "No file can hold a matching row" in r.text
    missing = c.get("/admin/tables/lake/nope")
    assert missing.status_code == 404 and "does not exist" in missing.text


# --- playground -------------------------------------------------------------------------------

PREDICATES = [
    "variant_get(v, '$.id', 'bigint') BETWEEN 150 AND 160",
    "variant_get(v, '$.id', 'bigint') = 42 OR variant_get(v, '$.score', 'double') > 240",
    "v:name::string = 'n000123'",
    "variant_get(v, '$.extra', 'int') = 3",
    "NOT variant_get(v, '$.id', 'bigint') < 1000",
]


@pytest.mark.parametrize("sql", PREDICATES)
def test_playground_numbers_match_the_api(admin: TestClient, sql: str) -> None:
    page = admin.get(f"{T}/prune")
    assert page.status_code == 200
    r = admin.post(f"{T}/prune", data={"sql": sql})  # bearer-authenticated: no CSRF token needed
    assert r.status_code == 200, r.text
    shown = metrics_from(r.text)
    api = admin.post(
        "/v1/namespaces/lake/tables/events/plan", json={"sql": sql, "page-size": 1000}, headers={"Accept": "application/json"}
    ).json()
    m = api["metrics"]
    assert shown == {
        "files-kept": m["files-kept"],
        "files-considered": m["files-considered"],
        "files-pruned": m["files-pruned"],
        "rows-skipped": m["rows-skipped"],
        "bytes-skipped": m["bytes-skipped"],
    }
    # One table of files, each kept or skipped: the kept ones are the API's candidates.
    files = re.search(r'id="plan-files">.*?</table>', r.text, re.S).group(0)
    rows = re.findall(r'<tr class="(kept|pruned)">\s*<th scope="row" class="path"><a [^>]*title="([^"]+)"', files)
    assert len(rows) == m["files-considered"] == len({p for _, p in rows})  # no file listed twice
    assert sorted(unescape(p) for d, p in rows if d == "kept") == sorted(f["path"] for f in api["files"])
    assert sum(d == "pruned" for d, _ in rows) == m["files-pruned"]


def test_playground_errors_are_shown_inline(admin: TestClient) -> None:
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(v, '$.id', 'bigint') >"})
    assert r.status_code == 422
    err = re.search(r'<p class="error" id="predicate-error" role="alert">(.*?)</p>', r.text, re.S)
    assert err and err.group(1).strip()
    assert 'aria-invalid="true" aria-describedby="predicate-error sql-help"' in r.text
    assert "variant_get(v, &#39;$.id&#39;, &#39;bigint&#39;) &gt;</textarea>" in r.text  # kept for editing
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(v, '$.id', 'bigint') = 1", "snapshot": "99999"})
    assert r.status_code == 404 and 'id="predicate-error"' in r.text
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(v, '$.id', 'bigint') = 1", "snapshot": "abc"})
    assert r.status_code == 422 and "whole number" in r.text
    r = admin.post(f"{T}/prune", data={"sql": "  "})
    assert r.status_code == 422 and "enter a predicate" in r.text


def test_playground_shows_an_unknown_column_inline(admin: TestClient) -> None:
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(w, '$.id', 'bigint') = 1"})
    assert r.status_code == 422
    err = re.search(r'<p class="error" id="predicate-error" role="alert">(.*?)</p>', r.text, re.S)
    assert err and unescape(err.group(1)) == "lake.events has no Variant column 'w' (at column 13); its Variant columns: v"
    assert 'aria-invalid="true" aria-describedby="predicate-error sql-help"' in r.text
    assert 'id="result"' not in r.text


def test_playground_shows_warnings_above_the_results(admin: TestClient) -> None:
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(v, '$.id.d', 'bigint') = 1"})
    assert r.status_code == 200, r.text
    warnings = re.search(r'<ul class="warnings" id="warnings".*?</ul>', r.text, re.S)
    assert warnings and r.text.index('id="warnings"') < r.text.index('id="metrics"')
    items = re.findall(r'<li class="note" data-warning="([a-z_]+)">(.*?)</li>', warnings.group(0), re.S)
    assert [t for t, _ in items] == ["path_not_shredded", "predicate_prunes_nothing"]
    assert "path $.id.d of column v is not shredded in any live file" in unescape(items[0][1])
    # The close path is offered as the same predicate with it.
    (fix,) = re.findall(r'<a href="([^"]+)"><code>\$\.id</code></a>', items[0][1])
    assert parse_qs(urlsplit(unescape(fix)).query)["sql"] == ["variant_get(v, '$.id', 'bigint') = 1"]
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(v, '$.id', 'bigint') = 1"})
    assert r.status_code == 200 and 'id="warnings"' not in r.text


def test_playground_at_a_past_snapshot(admin: TestClient) -> None:
    snaps = admin.get("/v1/namespaces/lake/tables/events/snapshots", headers={"Accept": "application/json"}).json()
    first_commit = next(s for s in snaps["snapshots"] if s.get("added-files"))["snapshot-id"]
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(v, '$.id', 'bigint') >= 0", "snapshot": str(first_commit)})
    assert r.status_code == 200, r.text
    assert metrics_from(r.text)["files-considered"] == 3


def test_playground_reads_timestamps_in_the_session_time_zone(admin: TestClient) -> None:
    # Midnight UTC of 2024-01-05 is 09:00 that day in Tokyo: there, the day 01-05 (part-1's
    # first) starts before it.
    sql = "variant_get(v, '$.day', 'date') < TIMESTAMP '2024-01-05 00:00:00+00:00'"
    utc = admin.get(f"{T}/prune", params={"sql": sql})
    tokyo = admin.get(f"{T}/prune", params={"sql": sql, "tz": "Asia/Tokyo"})
    assert utc.status_code == tokyo.status_code == 200, tokyo.text
    assert (metrics_from(utc.text)["files-kept"], metrics_from(tokyo.text)["files-kept"]) == (1, 2)
    assert 'id="tz" name="tz" type="text" size="16" placeholder="UTC" value="Asia/Tokyo"' in tokyo.text
    # The filter links keep the zone.
    links = re.findall(r'href="([^"]*prune[^"]*)"[^>]*data-show=', tokyo.text)
    assert links and all(parse_qs(urlsplit(unescape(h)).query)["tz"] == ["Asia/Tokyo"] for h in links)
    bad = admin.get(f"{T}/prune", params={"sql": sql, "tz": "Mars/Olympus"})
    assert bad.status_code == 422 and "unknown time zone" in unescape(bad.text)
    assert re.search(r'id="tz"[^>]*aria-invalid="true" aria-describedby="predicate-error"', bad.text)
    assert 'aria-describedby="predicate-error sql-help"' not in bad.text  # the predicate is fine


def test_playground_get_prefills_and_offers_examples(admin: TestClient) -> None:
    html = admin.get(f"{T}/prune").text
    assert "Examples from this table" in html and "variant_get(v, &#39;$.day&#39;, &#39;date&#39;)" in html
    html = admin.get(f"{T}/prune", params={"sql": "v:id::bigint = 5"}).text
    assert "v:id::bigint = 5</textarea>" in html


def test_playground_results_are_addressable_by_url(admin: TestClient) -> None:
    # A GET with the predicate (and a snapshot) runs it without a CSRF token: links and shared URLs
    # show the same result as the form.
    sql = "variant_get(v, '$.id', 'bigint') >= 0"
    by_get = admin.get(f"{T}/prune", params={"sql": sql})
    assert by_get.status_code == 200 and 'class="kept"' in by_get.text
    by_post = admin.post(f"{T}/prune", data={"sql": sql})
    assert by_get.text.count('class="kept"') == by_post.text.count('class="kept"')
    r = admin.get(f"{T}/prune", params={"sql": sql, "snapshot": "99999"})
    assert r.status_code == 404 and 'id="predicate-error"' in r.text


# --- auth -------------------------------------------------------------------------------------


def test_no_token_browser_is_redirected_to_login(client: TestClient) -> None:
    r = client.get(T + "?sort=size", headers=HTML)
    assert r.status_code == 303
    loc = urlsplit(r.headers["location"])
    assert loc.path == "/admin/login" and parse_qs(loc.query)["next"] == [T + "?sort=size"]


def test_no_token_api_client_gets_401(client: TestClient) -> None:
    r = client.get("/admin", headers={"Accept": "application/json"})
    assert r.status_code == 401
    assert r.json()["error"]["type"] == "unauthorized"
    assert r.headers["www-authenticate"].startswith("Bearer")
    r = client.get("/admin", headers={**HTML, **bearer("not-a-token")})
    assert r.status_code == 401


def test_non_admin_token_gets_a_403_page(admin: TestClient) -> None:
    for url in ("/admin", T, f"{T}/prune", _path_url('"id"')):
        r = admin.get(url, headers=bearer(READER_TOKEN))
        assert r.status_code == 403, url
        assert "needs the admin role" in r.text and r.headers["content-type"].startswith("text/html")
    r = admin.post(f"{T}/prune", data={"sql": "v:id::bigint = 1"}, headers=bearer(READER_TOKEN))
    assert r.status_code == 403 and "data-metric" not in r.text


SESSION_KEY = "k" * 40


def _login(c: TestClient, token: str, next_url: str | None = None) -> object:
    page = c.get("/admin/login", headers=HTML, params={"next": next_url} if next_url else None)
    assert page.status_code == 200
    assert 'for="token"' in page.text and 'type="password"' in page.text
    data = {"token": token, "csrf_token": csrf_from(page.text)}
    if next_url:
        data["next"] = next_url
    return c.post("/admin/login", data=data, headers=HTML)


def test_login_sets_a_signed_httponly_strict_cookie(make_client: Callable[..., TestClient], filled: str) -> None:
    c = make_client()
    r = _login(c, ADMIN_TOKEN, next_url=T)
    assert r.status_code == 303 and r.headers["location"] == T
    cookies = r.headers.get_list("set-cookie")
    sess = next(x for x in cookies if x.startswith(session.SESSION_COOKIE + "="))
    low = sess.lower()
    assert "httponly" in low and "samesite=strict" in low and "path=/admin" in low and "max-age=43200" in low
    assert ADMIN_TOKEN not in sess and "secure" not in low  # plain http here
    page = c.get(T, headers=HTML)
    assert page.status_code == 200 and "Sign out" in page.text
    # Sign out: CSRF-protected, clears the cookie.
    bad = c.post("/admin/logout", data={"csrf_token": "x" * 40}, headers=HTML)
    assert bad.status_code == 403
    out = c.post("/admin/logout", data={"csrf_token": csrf_from(page.text)}, headers=HTML)
    assert out.status_code == 303 and out.headers["location"].startswith("/admin/login")
    assert c.get(T, headers=HTML).status_code == 303


def test_behind_a_root_path_the_dashboards_cookies_are_set_for_it(filled: str, events_files: list[str]) -> None:
    """Behind a proxy prefix (``--root-path /catalog``) a browser sends a cookie only under its path:
    the CSRF and session cookies are set (and cleared) for ``/catalog/admin``, so signing in, the
    pages and signing out work there (the client's jar keeps to cookie paths as a browser does)."""
    from service.api import create_app
    from tests.api.conftest import make_settings

    settings = make_settings(filled, [str(Path(events_files[0]).parent.parent)])
    app = create_app(settings)
    with TestClient(app, root_path="/catalog", raise_server_exceptions=False, follow_redirects=False) as c:
        page = c.get("/catalog/admin/login", headers=HTML)
        assert page.status_code == 200
        (csrf,) = [x for x in page.headers.get_list("set-cookie") if x.startswith(session.CSRF_COOKIE + "=")]
        assert "path=/catalog/admin;" in csrf.lower()
        data = {"token": ADMIN_TOKEN, "csrf_token": csrf_from(page.text), "next": "/catalog" + T}
        r = c.post("/catalog/admin/login", data=data, headers=HTML)
        assert r.status_code == 303 and r.headers["location"] == "/catalog" + T, r.text
        (sess,) = [x for x in r.headers.get_list("set-cookie") if x.startswith(session.SESSION_COOKIE + "=")]
        assert "path=/catalog/admin;" in sess.lower()
        page = c.get("/catalog" + T, headers=HTML)
        assert page.status_code == 200 and "Sign out" in page.text
        out = c.post("/catalog/admin/logout", data={"csrf_token": csrf_from(page.text)}, headers=HTML)
        assert out.status_code == 303 and out.headers["location"].startswith("/catalog/admin/login")
        (cleared,) = [x for x in out.headers.get_list("set-cookie") if x.startswith(session.SESSION_COOKIE + "=")]
        assert "path=/catalog/admin;" in cleared.lower()
        assert c.get("/catalog" + T, headers=HTML).status_code == 303  # signed out: to the login page


def test_login_refuses_bad_and_non_admin_tokens(client: TestClient) -> None:
    r = _login(client, "wrong-token")
    assert r.status_code == 401 and "not valid" in r.text and 'aria-invalid="true"' in r.text
    assert session.SESSION_COOKIE not in r.headers.get("set-cookie", "")
    r = _login(client, READER_TOKEN)
    assert r.status_code == 403 and "needs an admin token" in r.text
    assert session.SESSION_COOKIE not in r.headers.get("set-cookie", "")


def test_login_needs_the_csrf_token(client: TestClient) -> None:
    r = client.post("/admin/login", data={"token": ADMIN_TOKEN}, headers=HTML)
    assert r.status_code == 403 and session.SESSION_COOKIE not in r.headers.get("set-cookie", "")
    client.get("/admin/login", headers=HTML)  # sets the CSRF cookie
    r = client.post("/admin/login", data={"token": ADMIN_TOKEN, "csrf_token": "y" * 43}, headers=HTML)
    assert r.status_code == 403


def test_login_never_redirects_off_site(client: TestClient) -> None:
    for target in ("https://evil.example/", "//evil.example/admin", "/admin.evil", "/v1/namespaces", "/admin\\x"):
        r = _login(client, ADMIN_TOKEN, next_url=target)
        assert r.status_code == 303 and r.headers["location"] == "/admin", target


def test_forged_expired_and_revoked_sessions_are_refused(make_client: Callable[..., TestClient], filled: str) -> None:
    c = make_client(session_secrets=[SESSION_KEY])
    signer = session.SessionSigner([SESSION_KEY.encode()])
    good = signer.make(ADMIN_TOKEN)
    c.cookies.set(session.SESSION_COOKIE, good)
    assert c.get("/admin", headers=HTML).status_code == 200
    exp = good.split(".")[1]
    tampered = good.replace(f".{exp}.", f".{int(exp) + 3600}.")
    for value in (tampered, signer.make(ADMIN_TOKEN, now=time.time() - 13 * 3600), "v1.x.y", "garbage"):
        c.cookies.set(session.SESSION_COOKIE, value)
        r = c.get("/admin", headers=HTML)
        assert r.status_code == 303, value
        assert session.SESSION_COOKIE in r.headers.get("set-cookie", "")  # cleared
    c.cookies.set(session.SESSION_COOKIE, signer.make(READER_TOKEN))
    assert c.get("/admin", headers=HTML).status_code == 403
    # Removing the token from the configuration ends its sessions.
    other = make_client(tokens={}, session_secrets=[SESSION_KEY])
    other.cookies.set(session.SESSION_COOKIE, good)
    assert other.get("/admin", headers=HTML).status_code == 303


def test_playground_post_with_a_session_needs_the_csrf_token(make_client: Callable[..., TestClient], filled: str) -> None:
    c = make_client()
    assert _login(c, ADMIN_TOKEN).status_code == 303
    page = c.get(f"{T}/prune", headers=HTML)
    sql = "variant_get(v, '$.id', 'bigint') = 250"
    for data in ({"sql": sql}, {"sql": sql, "csrf_token": "z" * 43}):
        r = c.post(f"{T}/prune", data=data, headers=HTML)
        assert r.status_code == 403 and "data-metric" not in r.text
    r = c.post(f"{T}/prune", data={"sql": sql, "csrf_token": csrf_from(page.text)}, headers=HTML)
    assert r.status_code == 200 and metrics_from(r.text)["files-kept"] == 1


def test_auth_off_opens_every_page(make_client: Callable[..., TestClient], filled: str) -> None:
    c = make_client(auth="off")
    for url in ("/admin", T, f"{T}/prune", _path_url('"id"')):
        r = c.get(url, headers=HTML)
        assert r.status_code == 200, url
        assert "authentication off" in r.text
    assert c.get("/admin/login", headers=HTML).status_code == 303


# --- hygiene ----------------------------------------------------------------------------------


def test_pages_are_self_contained_and_locked_down(admin: TestClient) -> None:
    for url in ("/admin", T, f"{T}/prune", _path_url('"id"')):
        r = admin.get(url)
        csp = r.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "frame-ancestors 'none'" in csp
        assert r.headers["cache-control"] == "no-store"
        # Script only from our own static file (the CSP allows no inline script or handler).
        scripts = re.findall(r"<script\b[^>]*>.*?</script>", r.text, re.S)
        for tag in scripts:
            assert re.fullmatch(r'<script src="/admin/static/dashboard\.js\?v=[0-9a-f]{12}" defer></script>', tag), tag
        assert r.text.count("<script") == len(scripts)
        assert not re.search(r"<[^>]+\son[a-z]+=", r.text)
        assert "script-src 'self'" in csp and "unsafe-inline" not in csp
        # Nothing fetched from elsewhere (offline): every src/href is local.
        for ref in re.findall(r'(?:src|href)="([^"]+)"', r.text):
            assert ref.startswith(("/admin", "#")), ref
        assert 'style="' not in r.text  # the CSP allows no inline style
    css = admin.get("/admin/static/dashboard.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert "@import" not in css.text and "url(http" not in css.text
    assert admin.get("/admin/static/nope.js").status_code == 404
    js = admin.get("/admin/static/dashboard.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert "eval(" not in js.text and "innerHTML" not in js.text
    # The script fetches only from us (completion, the copy buttons): relative URLs the page gives
    # it, with its own cookie; the CSP allows nothing else (connect-src 'self').
    fetches = re.findall(r"fetch\(([^)]*)\)", js.text)
    assert fetches and all('credentials: "same-origin"' in f for f in fetches), fetches
    assert "connect-src 'self'" in admin.get(T).headers["content-security-policy"]


def test_every_form_control_has_a_label(admin: TestClient) -> None:
    for url in (T, f"{T}/prune", _path_url('"id"'), "/admin/login"):
        html = admin.get(url).text
        labels = set(re.findall(r'<label for="([^"]+)"', html))
        for tag in re.findall(r"<(?:input|select|textarea)\b[^>]*>", html):
            if 'type="hidden"' in tag:
                continue
            m = re.search(r'id="([^"]+)"', tag)
            assert m and m.group(1) in labels, (url, tag)


def test_dashboard_is_not_in_the_openapi_spec(admin: TestClient) -> None:
    assert not [p for p in admin.app.openapi()["paths"] if p.startswith("/admin")]


# --- units ------------------------------------------------------------------------------------


def test_session_values_round_trip() -> None:
    from service.api.auth import hash_token

    tokens = {hash_token(ADMIN_TOKEN): "admin", hash_token(READER_TOKEN): "reader"}
    signer = session.SessionSigner([SESSION_KEY.encode()])
    v = signer.make(ADMIN_TOKEN, now=1000)
    p = signer.verify(v, tokens, now=1001)
    assert p is not None and p.role == "admin" and p.token_id == hash_token(ADMIN_TOKEN)[:8]
    assert signer.verify(v, tokens, now=1000 + session.SESSION_SECONDS) is None
    assert signer.verify(signer.make(READER_TOKEN, now=1000), tokens, now=1001).role == "reader"  # type: ignore[union-attr]
    assert signer.verify(signer.make("unknown", now=1000), tokens, now=1001) is None


def test_chart_positions_and_marks() -> None:
    t = ShreddedType.parse("int64")
    files = [
        ChartFile("a", 10, "0", "9"),
        ChartFile("b", 10, None, "5"),  # unknown min
        ChartFile("c", 0, None, None),  # only nulls
        ChartFile("d", 10, "5", "5"),  # a point
    ]
    c = render_chart(t, files, x_label="files", title="x")
    assert (c.drawn, c.known, c.unknown, c.no_values) == (4, 2, 1, 1)
    assert c.svg.count('class="bar"') == 2 and c.svg.count('class="bar unknown"') == 1
    assert c.svg.count('class="novalues"') == 1
    f = render_chart(ShreddedType.parse("float64"), [ChartFile("a", 1, "-inf", "inf"), ChartFile("b", 1, "1.0", "2.0")], x_label="x", title="t")
    assert f.known == 2
    s = render_chart(ShreddedType.parse("varchar"), [ChartFile("a", 1, "apple", "kiwi"), ChartFile("b", 1, "lemon", "zebra")], x_label="x", title="t")
    assert ">apple<" in s.svg
    e = render_chart(t, [], x_label="x", title="t")
    assert e.drawn == 0
    assert nice_ticks(0, 10) == [0, 2, 4, 6, 8, 10]


def test_snapshot_ids_beyond_bigint_are_bad_requests(admin: TestClient) -> None:
    # Issue 14 row 4: ``before`` and the playground's snapshot once reached the driver (500).
    for big in (2**70, -(2**70)):
        r = admin.get(T, params={"before": big})
        assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    r = admin.post(f"{T}/prune", data={"sql": "variant_get(v, '$.id', 'bigint') = 1", "snapshot": str(2**70)})
    assert r.status_code == 422 and 'id="predicate-error"' in r.text


def test_files_search_paging_both_ways_and_snapshot_filter(admin: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(table_page, "FILES_PAGE", 2)

    def shown(html: str) -> list[str]:
        return [p.rsplit("/", 1)[1] for p in re.findall(r'class="path"><a [^>]*title="([^"]+)"', html)]

    def link(html: str, rel: str) -> str | None:
        m = re.search(rf'rel="{rel}" href="([^"]+)"', html)
        return None if m is None else unescape(m.group(1)).split("#")[0]

    first = admin.get(T).text
    assert "1–2 of 5" in first and link(first, "prev") is None
    second = admin.get(link(first, "next")).text
    assert shown(second) == ["part-2.parquet", "part-3.parquet"] and "3–4 of 5" in second
    third = admin.get(link(second, "next")).text
    assert shown(third) == ["part-4.parquet"] and "5–5 of 5" in third and link(third, "next") is None
    back = admin.get(link(third, "prev")).text
    assert shown(back) == ["part-2.parquet", "part-3.parquet"] and "3–4 of 5" in back
    back = admin.get(link(back, "prev")).text
    assert shown(back) == ["part-0.parquet", "part-1.parquet"] and "1–2 of 5" in back
    assert link(back, "prev") is None and link(back, "next")
    # Descending by size, backwards too.
    desc = admin.get(T, params={"sort": "size", "order": "desc"}).text
    later = admin.get(link(desc, "next")).text
    assert shown(admin.get(link(later, "prev")).text) == shown(desc)

    # Substring search (anywhere in the path, not only a prefix); filters survive paging.
    found = admin.get(T, params={"contains": "RT-3"}).text
    assert shown(found) == ["part-3.parquet"] and "1 of 5 live files contain" in found
    many = admin.get(T, params={"contains": ".parquet"}).text
    assert "contains=.parquet" in link(many, "next")
    assert "No live file contains" in admin.get(T, params={"contains": "%"}).text

    # A snapshot's number lists the files it added, those it removed, and links to the playground.
    snaps = [int(s) for s in re.findall(r'href="/admin/tables/lake/events\?snapshot=(\d+)#files"', first)]
    last_commit = max(snaps)
    at = admin.get(T, params={"snapshot": last_commit}).text
    assert shown(at) == ["part-3.parquet", "part-4.parquet"] and "were added at snapshot" in at
    assert "This snapshot removed no file" in at
    assert f'/admin/tables/lake/events/prune?snapshot={last_commit}"' in at
    history = re.search(r'<table class="data" id="snapshots">.*?</table>', first, re.S).group(0)
    assert "added 2 files" in history and "added 3 files" in history and "inserted_into_table:" not in re.sub(
        r'title="[^"]*"', "", history
    )
    assert admin.get(T, params={"snapshot": 2**70}).status_code == 422


def test_file_page_title_names_the_file_and_sizes_are_formatted(admin: TestClient, events_files: list[str]) -> None:
    html = admin.get(f"{T}/file", params={"path": events_files[1]}).text
    assert "<title>part-1.parquet · lake.events" in html
    assert re.search(r"<dt>Footer</dt><dd>\d+(\.\d)? (B|KiB)</dd>", html)
    table = admin.get(T).text
    for size in re.findall(r">(\d+) B<", table):
        assert int(size) < 1000


def test_sizes_switch_unit_at_1000() -> None:
    from service.dashboard.format import change_text, human_bytes

    assert [human_bytes(n) for n in (999, 1000, 1010, 1030, 1023 * 1024)] == [
        "999 B",
        "1.0 KiB",
        "1.0 KiB",
        "1.0 KiB",
        "1.0 MiB",
    ]
    assert change_text("inserted_into_table:2,deleted_from_table:2", 120, 1) == "added 120 files, removed 1 file"
    assert change_text('created_table:"lake"."events"', 0, 0) == "created table lake.events"


def test_coverage_lists_the_files_behind_each_status(admin: TestClient, events_files: list[str]) -> None:
    html = admin.get(T).text
    coverage = re.search(r'<table class="data" id="coverage">.*?</table>', html, re.S).group(0)
    links = {unescape(text): unescape(href) for href, text in re.findall(r'<a href="([^"]+/coverage\?[^"]+)">([^<]+)</a>', coverage)}
    assert set(links) == {"varchar (4)", "int64 (1)", "int32 (1)", "absent (4)"}  # name; extra

    def listed(url: str) -> list[str]:
        page = admin.get(url)
        assert page.status_code == 200, page.text
        return [unescape(p) for p in re.findall(r'class="path"><a [^>]*title="([^"]+)"', page.text)]

    assert listed(links["int64 (1)"]) == [events_files[4]]
    assert listed(links["varchar (4)"]) == events_files[:4]
    assert listed(links["absent (4)"]) == events_files[:4]  # "extra" is only in part-4
    assert listed(links["int32 (1)"]) == [events_files[4]]
    assert admin.get(f"{T}/coverage", params={"column": "w", "path": '"id"'}).status_code == 404
    assert admin.get(f"{T}/coverage").status_code == 422
    # The overview's health summary: paths in the global stats / in conflict / partial.
    overview = admin.get("/admin").text
    row = re.search(r'<th scope="row"><a href="/admin/tables/lake/events">.*?</tr>', overview, re.S).group(0)
    health = re.sub(r"<[^>]+>", "", re.search(r'<td class="health">(.*?)</td>', row, re.S).group(1))
    assert health.split() == ["4", "/", "1", "/", "1"]


def test_playground_lists_plain_and_partition_columns_to_insert(admin: TestClient, filled: str, tmp_path: Path) -> None:
    """A table with a plain column and a Hive partition: both are offered beside the Variant
    column, with their kind and type, and a mixed predicate on them runs."""
    import duckdb

    from service.catalog import Catalog

    d = tmp_path / "mixed" / "event_date=2024-03-01"
    d.mkdir(parents=True)
    f = d / "part-0.parquet"
    duckdb.sql(
        f"COPY (SELECT r::BIGINT AS user_id, {{'id': r::BIGINT}}::VARIANT AS v FROM range(10) t(r)) TO '{f}' (FORMAT parquet)"
    )
    with Catalog(filled) as cat:
        cat.register("lake", "mixed", [str(f)])
    html = admin.get("/admin/tables/lake/mixed/prune").text
    assert "user_id" in html and "column, int64" in html
    assert "event_date" in html and "partition column, date" in html
    assert "Variant column" in html
    for sql, pruned in (("event_date = '2024-03-01' AND user_id > 100", 1), ("event_date = '2024-03-01' AND user_id < 5", 0)):
        r = admin.get("/admin/tables/lake/mixed/prune", params={"sql": sql})
        assert r.status_code == 200 and metrics_from(r.text)["files-pruned"] == pruned, sql


def test_forms_are_read_up_to_a_limit_and_the_playground_only_after_authentication(
    make_client: Callable[..., TestClient], filled: str, admin: TestClient
) -> None:
    """Decoding a form costs far more memory than its bytes: an anonymous client must not make the
    server decode 60 MiB of escapes (the API's body limit). Sign-in and sign-out forms stop at
    FORM_MAX_BYTES, the playground's at what its predicate limit needs, and the playground reads
    nothing before it knows the caller."""
    from service.dashboard.web import FORM_MAX_BYTES, form_limit_for

    c = make_client()
    form = {"content-type": "application/x-www-form-urlencoded", **HTML}
    big = b"token=" + b"%00" * (FORM_MAX_BYTES // 3)
    for url in ("/admin/login", "/admin/logout"):
        r = c.post(url, content=big, headers=form)
        assert r.status_code == 413 and "Form too large" in r.text, (url, r.status_code)

        def chunks() -> Iterator[bytes]:  # no Content-Length: counted while it streams
            yield big

        assert c.post(url, content=chunks(), headers=form).status_code == 413
    # Anonymous: redirected to sign in before the body is read, whatever its size.
    r = c.post(T + "/prune", content=b"sql=" + b"%41" * (3 * FORM_MAX_BYTES), headers=form)
    assert r.status_code == 303 and "/admin/login" in r.headers["location"]
    # An admin's predicate of the whole allowed length, fully escaped, still fits.
    limit = form_limit_for(64)
    sized = make_client(max_predicate_length=64)
    sized.headers.update({**HTML, **bearer(ADMIN_TOKEN)})
    r = sized.post(T + "/prune", content=b"sql=" + b"%F0%9F%98%80" * 64, headers={"content-type": form["content-type"]})
    assert r.status_code == 422 and "Form too large" not in r.text, r.text  # read whole: the predicate's own error
    r = sized.post(T + "/prune", content=b"sql=" + b"a" * (limit + 1), headers={"content-type": form["content-type"]})
    assert r.status_code == 413


def test_pages_list_the_most_widely_shredded_paths_only(admin: TestClient, sqlite_url: str) -> None:
    """A map-like object shreds a path per key: a table of 200,000 paths made a 168 MB table page.
    Pages list at most MAX_LISTED_PATHS paths, the most widely shredded, and say how many more."""
    from service.catalog import Catalog
    from service.dashboard.format import MAX_LISTED_PATHS
    from tests.catalog.factories import INT64, fs, ps

    many = MAX_LISTED_PATHS + 7
    with Catalog(sqlite_url) as cat:
        cat.create_table("lake", "wide", ["v"])
        # "common" in both files; every "k..." path in one file only.
        cat.commit("lake", "wide", [
            fs("s3://b/wide/a.parquet", ps('"common"', INT64, 1, 2), *(ps(f'"k{i:04d}"', INT64, 1, 2) for i in range(many))),
            fs("s3://b/wide/b.parquet", ps('"common"', INT64, 1, 2)),
        ])  # fmt: skip
        # A wide object whose every key is in every file: all of them are in the global stats.
        cat.create_table("lake", "everywhere", ["v"])
        keys = [ps(f'"g{i:04d}"', INT64, 1, 2 + i) for i in range(many)]
        cat.commit("lake", "everywhere", [fs(f"s3://b/everywhere/{f}.parquet", *keys) for f in "ab"])
    page = admin.get("/admin/tables/lake/wide").text
    coverage = page.split('id="coverage"', 1)[1].split("</table>", 1)[0]
    listed = re.findall(r'<tr class="cov-[a-z]+">', coverage)
    assert len(listed) == MAX_LISTED_PATHS and '"common"' in unescape(coverage)  # the widest first
    assert f"{many + 1 - MAX_LISTED_PATHS:,} more paths are not listed" in page
    everywhere = admin.get("/admin/tables/lake/everywhere").text
    global_table = everywhere.split('class="data global-stats"', 1)[1].split("</table>", 1)[0]
    assert global_table.count("<tr>") == 1 + MAX_LISTED_PATHS  # the header row, then the paths
    assert f"{many - MAX_LISTED_PATHS:,} more paths of" in everywhere
    lacks = admin.get("/admin/tables/lake/wide/file", params={"path": "s3://b/wide/b.parquet"}).text
    assert lacks.count("<li><code>v</code>") == MAX_LISTED_PATHS and f"{many - MAX_LISTED_PATHS:,} more are not listed" in lacks
    inserts = admin.get("/admin/tables/lake/wide/prune").text
    assert inserts.count('class="insert"') == 1 + MAX_LISTED_PATHS  # the column, then the paths
