"""The admin dashboard in a real browser: Debian's headless Chromium driven by Playwright against a
real ``shredcat serve`` (uvicorn subprocess, SQLite catalog migrated by ``shredcat migrate``) with
real DuckDB-written files registered through the REST API.

Screenshots of every page are saved under ``test-artifacts/dashboard/`` (gitignored). Skipped when
``/usr/bin/chromium`` is missing, except under ``CI=true`` (``.ci/run`` installs it), where that
fails. Playwright never downloads a browser here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from service.client import ShredcatClient
from tests.dashboard.browser_server import ADMIN, CHROMIUM, CHROMIUM_ARGS, MANY, READER, SKEW, TABLE  # noqa: F401 (shared)
from tests.support.screenshots import save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"


@pytest.fixture
def page(browser: Any, server: dict[str, Any]) -> Iterator[Any]:
    """A fresh browser context (no cookies) at laptop width; fails on any request that leaves
    the server (the pages must work offline)."""
    ctx = browser.new_context(base_url=server["base"], viewport={"width": 1280, "height": 800})
    outside: list[str] = []

    def route(r: Any) -> None:
        if r.request.url.startswith(server["base"]):
            r.continue_()
        else:
            outside.append(r.request.url)
            r.abort()

    ctx.route("**/*", route)
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    try:
        yield pg
    finally:
        ctx.close()
    assert not outside, f"pages fetched from outside the server: {outside}"


def shot(page: Any, name: str) -> None:
    save_screenshot(page, ARTIFACTS / f"{name}.png", full_page=True)


def login(page: Any, token: str) -> Any:
    page.goto("/admin")
    page.get_by_label("Admin token").fill(token)
    page.get_by_role("button", name="Sign in").click()
    return page


def metric(page: Any, name: str) -> int:
    return int(page.locator(f'[data-metric="{name}"]').get_attribute("data-value"))


def test_login_is_required_and_non_admin_tokens_are_refused(page: Any, server: dict[str, Any]) -> None:
    page.goto(TABLE)
    assert page.url.startswith(server["base"] + "/admin/login")
    assert page.get_by_role("heading", name="Sign in").is_visible()
    shot(page, "01-login")
    page.get_by_label("Admin token").fill(READER)
    page.get_by_role("button", name="Sign in").click()
    assert "needs an admin token" in page.get_by_role("alert").inner_text()
    shot(page, "02-login-refused-reader")
    page.get_by_label("Admin token").fill("not-a-token")
    page.get_by_role("button", name="Sign in").click()
    assert "not valid" in page.get_by_role("alert").inner_text()
    assert not [c for c in page.context.cookies() if c["name"] == "shredcat_session"]
    # A non-admin bearer token (API-style) gets the 403 page; none at all, a 401 for non-browsers.
    r = page.request.get(server["base"] + "/admin", headers={"Authorization": f"Bearer {READER}"})
    assert r.status == 403 and "needs the admin role" in r.text()
    r = page.request.get(server["base"] + "/admin", headers={"Accept": "application/json"}, max_redirects=0)
    assert r.status == 401
    # The real admin token lands on the page asked for first.
    page.get_by_label("Admin token").fill(ADMIN)
    page.get_by_role("button", name="Sign in").click()
    assert page.url == server["base"] + TABLE
    cookie = next(c for c in page.context.cookies() if c["name"] == "shredcat_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict" and ADMIN not in cookie["value"]


def test_walk_every_page_by_following_links(page: Any, server: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    login(page, ADMIN)
    # Overview: the numbers are the API's.
    with ShredcatClient(server["base"], token=ADMIN) as c:
        t = c.load_table("lake", "events")
    row = page.locator("#tables tbody tr", has_text="lake.events")
    cells = row.locator("td.num")
    assert int(cells.nth(0).get_attribute("data-value")) == t.live_file_count == 5
    assert int(cells.nth(1).get_attribute("data-value")) == t.live_record_count == 500
    assert int(cells.nth(2).get_attribute("data-value")) == t.live_bytes
    assert page.locator("#recent tbody tr").count() >= 4
    shot(page, "03-overview")

    # Table: global stats, coverage, files, history.
    page.get_by_role("link", name="lake.events").first.click()
    # A click waits for the navigation to start, not for the new page: wait for what it shows.
    expect(page.get_by_role("heading", name="lake.events", level=1)).to_be_visible()
    assert page.url.endswith(TABLE)
    stats = page.locator('table.global-stats[data-column="v"]')
    assert stats.locator("tbody:not(.not-global) tr").count() == 4
    assert stats.locator("tbody.not-global tr").count() == 1  # "name", marked as a type conflict
    assert "type conflict: varchar, int64" in page.locator("#coverage").inner_text()
    assert "not fully shredded in 4 of 5 files" in page.locator("#coverage").inner_text()
    assert page.locator("#files-table tbody tr").count() == 5
    assert page.locator("#snapshots tbody tr").count() == 3
    shot(page, "04-table")

    # Files: sort by size (descending), then filter by prefix.
    page.get_by_label("Sort by").select_option("size")
    page.get_by_label("Order").select_option("desc")
    page.get_by_role("button", name="Apply").click()
    # A click waits for the navigation to start, not for the new page: wait for it before reading.
    page.wait_for_url("**sort=size&order=desc*")
    page.wait_for_load_state()
    sizes = [int(v) for v in page.locator("#files-table tbody td.num[data-value]").evaluate_all(
        "cells => cells.filter((c, i) => i % 2 === 0).map(c => c.dataset.value)")]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) == 5
    prefix = server["files"][3].rsplit("/", 1)[0] + "/part-3"
    page.get_by_label("Path prefix").fill(prefix)
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#files-count")).to_contain_text("1 of 5 live files")  # waits for the new page
    assert page.locator("#files-table tbody tr").count() == 1
    shot(page, "05-files-filtered")

    # Path chart for "id", from the global stats table.
    page.goto(TABLE)
    stats.get_by_role("link", name='"id"').click()
    svg = page.locator("svg.chart")
    assert svg.get_attribute("data-files") == "5"
    assert svg.locator("rect.bar").count() == 5
    box = svg.bounding_box()
    assert box and box["width"] > 800  # readable at laptop width
    assert "20.0%" in page.locator("#clustering").inner_text()
    shot(page, "06-path-chart-id")
    # The conflicting path explains itself and charts one type at a time.
    page.goto(TABLE)
    page.locator("#coverage").get_by_role("link", name='"name"').click()
    assert "type conflict" in page.locator("#why-not-global").inner_text()
    assert page.locator("svg.chart rect.bar").count() == 4
    shot(page, "07-path-chart-conflict")
    page.get_by_role("link", name="int64").click()
    expect(page.locator("svg.chart rect.bar")).to_have_count(1)  # waits for the new page

    # A file, from the files table.
    page.goto(TABLE)
    page.locator("#files-table tbody").get_by_role("link").first.click()
    assert page.locator("#file-path").inner_text() == server["files"][0]
    assert page.locator("#file-stats tbody tr").count() == 5
    shot(page, "08-file")

    # The empty table.
    page.goto("/admin")
    page.locator("#tables").get_by_role("link", name="lake.empty").click()
    assert "No files yet" in page.locator("#files").inner_text()
    shot(page, "09-empty-table")


def test_playground_numbers_match_the_api(page: Any, server: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    login(page, ADMIN)
    page.goto(TABLE)
    page.get_by_role("link", name="Open the prune playground").click()
    expect(page.get_by_label("Predicate (Spark SQL)")).to_be_visible()
    shot(page, "10-playground-empty")
    with ShredcatClient(server["base"], token=ADMIN) as c:
        for sql in (
            "variant_get(v, '$.id', 'bigint') BETWEEN 150 AND 260",
            "v:score::double > 240 OR v:name::string = 'n000042'",
            "variant_get(v, '$.day', 'date') = DATE '2024-01-05'",
        ):
            page.get_by_label("Predicate (Spark SQL)").fill(sql)
            page.get_by_role("button", name="Run").click()
            # The previous result's page has metrics too: wait for this predicate's page.
            page.wait_for_url(lambda u, sql=sql: parse_qs(urlsplit(u).query).get("sql") == [sql])
            api = c.plan("lake", "events", sql=sql, explain=True)
            assert metric(page, "files-kept") == api.files_kept
            assert metric(page, "files-considered") == api.files_considered == 5
            assert metric(page, "files-pruned") == api.files_pruned
            assert metric(page, "rows-skipped") == api.rows_skipped
            assert metric(page, "bytes-skipped") == api.bytes_skipped
            kept = page.locator("#plan-files tr.kept th a").evaluate_all("links => links.map(a => a.title)")
            assert sorted(kept) == sorted(api.paths)
            assert page.locator("#plan-files tr.pruned").count() == api.files_pruned
        shot(page, "11-playground-result")
    # An error in the predicate is shown inline, next to the text (kept for editing).
    bad = "variant_get(v, '$.id', 'bigint') >"
    page.get_by_label("Predicate (Spark SQL)").fill(bad)
    page.get_by_role("button", name="Run").click()
    expect(page.get_by_label("Predicate (Spark SQL)")).to_have_attribute("aria-invalid", "true")  # the new page
    alert = page.get_by_role("alert")
    assert alert.is_visible() and alert.inner_text().strip()
    assert page.get_by_label("Predicate (Spark SQL)").input_value() == bad
    assert page.locator("[data-metric]").count() == 0
    shot(page, "12-playground-error")


def test_sign_out(page: Any, server: dict[str, Any]) -> None:
    login(page, ADMIN)
    assert page.url == server["base"] + "/admin"
    page.get_by_role("button", name="Sign out").click()
    assert page.url.startswith(server["base"] + "/admin/login")
    page.goto("/admin")
    assert re.match(re.escape(server["base"]) + r"/admin/login", page.url)


# --- layout at both widths (issue 17) ----------------------------------------------------------

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"
VIEWPORTS = {"desktop": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}

#: Layout facts of the page: its scroll and client widths, elements sticking out of the viewport
#: (those inside a box that scrolls on its own excepted), and elements that should stay on one line.
LAYOUT_JS = """() => {
  const vw = document.documentElement.clientWidth;
  const out = [];
  for (const el of document.querySelectorAll('body *')) {
    if (el.closest('.skip, .sr')) continue;
    const box = el.parentElement && el.parentElement.closest('.scroll, .chart-scroll');
    if (box) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (r.right > vw + 0.5 || r.left < -0.5) {
      out.push(`${el.tagName}.${el.className} ${Math.round(r.left)}..${Math.round(r.right)}`);
    }
  }
  const lines = el => {  // distinct baselines (rect bottoms) of the element's text
    const bottoms = new Set();
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const range = document.createRange();
      range.selectNodeContents(n);
      for (const r of range.getClientRects()) if (r.width > 0) bottoms.add(Math.round(r.bottom / 4));
    }
    return bottoms.size;
  };
  const multi = [...document.querySelectorAll('time, td.bound, th.path, .mid, td.num')]
    .filter(el => el.getBoundingClientRect().height > 0 && lines(el) > 1)
    .map(el => `${el.tagName}.${el.className}: ${el.textContent.trim().slice(0, 40)}`);
  return {scrollWidth: document.documentElement.scrollWidth, clientWidth: vw, wide: out, multi: multi};
}"""

#: The smallest text drawn in each chart, in CSS px after the SVG's scaling.
CHART_TEXT_JS = """() => [...document.querySelectorAll('svg.chart')].map(svg => {
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  const sizes = [...svg.querySelectorAll('text')].map(t => parseFloat(getComputedStyle(t).fontSize) * scale);
  const heights = [...svg.querySelectorAll('text')].map(t => t.getBoundingClientRect().height);
  return {scale: scale, smallest: Math.min(...sizes), lowest: Math.min(...heights), count: sizes.length};
})"""


@pytest.fixture(params=list(VIEWPORTS))
def sized(request: pytest.FixtureRequest, browser: Any, server: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """``(viewport name, signed-in page)`` at 1440×900 and at 390 px wide, allowed to use the
    clipboard (the copy buttons' tests read it back)."""
    ctx = browser.new_context(
        base_url=server["base"], viewport=VIEWPORTS[request.param], permissions=["clipboard-read", "clipboard-write"]
    )
    pg = ctx.new_page()
    pg.set_default_timeout(15_000)
    try:
        yield request.param, login(pg, ADMIN)
    finally:
        ctx.close()


def check_layout(page: Any, view: str, name: str) -> dict[str, Any]:
    save_screenshot(page, SCREENSHOTS / f"{view}-{name}.png", full_page=True)
    facts = page.evaluate(LAYOUT_JS)
    assert facts["scrollWidth"] == facts["clientWidth"], (name, facts)
    assert not facts["wide"], (name, facts["wide"][:10])
    assert not facts["multi"], (name, facts["multi"][:10])
    return facts


def test_every_page_fits_the_viewport(sized: tuple[str, Any], server: dict[str, Any]) -> None:
    view, page = sized
    quoted = "%22id%22"
    pages = {
        "overview": "/admin",
        "table": TABLE,
        "table-search": TABLE + "?contains=part-3#files",
        "many": MANY,
        "many-page-2": None,  # followed from the pager below
        "file": f"{TABLE}/file?path={server['files'][4]}",
        "path-id": f"{TABLE}/path?column=v&path={quoted}",
        "path-conflict": f"{TABLE}/path?column=v&path=%22name%22",
        "many-chart": f"{MANY}/path?column=v&path={quoted}",
        "empty-table": "/admin/tables/lake/empty",
        "coverage-absent": f"{TABLE}/coverage?column=v&path=%22extra%22&type=",
        "playground": f"{TABLE}/prune",
        "not-found": f"{TABLE}/file?path=/nowhere.parquet",
    }
    for name, url in pages.items():
        if url is None:
            page.goto(MANY)
            page.get_by_role("link", name="Next").click()
            page.wait_for_url("**cursor=*")
        else:
            page.goto(url)
        check_layout(page, view, name)
    page.goto("/admin/login")
    check_layout(page, view, "login")


def test_chart_text_is_at_least_11px(sized: tuple[str, Any]) -> None:
    view, page = sized
    for table in (TABLE, MANY):
        page.goto(f"{table}/path?column=v&path=%22id%22")
        charts = page.evaluate(CHART_TEXT_JS)
        assert len(charts) == 1 and charts[0]["count"] > 3
        assert charts[0]["scale"] >= 1 and charts[0]["smallest"] >= 11, charts
        assert charts[0]["lowest"] >= 11, charts
        box = page.locator(".chart-scroll").bounding_box()
        assert box and box["x"] + box["width"] <= VIEWPORTS[view]["width"]


def test_files_navigation(sized: tuple[str, Any], server: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    page.goto(MANY)
    expect(page.locator("#files-range")).to_have_text("1–50 of 120")
    # Paths: relative to the files' directory, one line each, the full path in title and link.
    cells = page.locator("#files-table th.path a")
    assert cells.count() == 50
    first = cells.first
    full = first.get_attribute("title")
    assert full.endswith("part-00000-3f1c9a7e-5b2d-4c1e-9f0a-000000000000.c000.zstd.parquet")
    assert full.startswith(server["files"][0].rsplit("/events/", 1)[0])
    assert "path=" + full.replace("/", "%2F").replace("=", "%3D") in first.get_attribute("href")
    assert page.locator("#files-base").inner_text().endswith("/many/")
    assert first.inner_text().startswith("event_date=2024-03-01/")
    page.get_by_role("link", name="Next").click()
    expect(page.locator("#files-range")).to_have_text("51–100 of 120")
    page.get_by_role("link", name="Next").click()
    expect(page.locator("#files-range")).to_have_text("101–120 of 120")
    assert page.get_by_role("link", name="Next").count() == 0
    page.get_by_role("link", name="Previous").click()
    expect(page.locator("#files-range")).to_have_text("51–100 of 120")
    page.get_by_role("link", name="Previous").click()
    expect(page.locator("#files-range")).to_have_text("1–50 of 120")
    assert page.get_by_role("link", name="Previous").count() == 0
    # Substring search.
    page.get_by_label("Path contains").fill("hour=07")
    page.get_by_role("button", name="Apply").click()
    expect(page.locator("#files-table tbody tr")).to_have_count(5)  # i % 24 == 7 for i < 120
    assert "5 of 120 live files contain" in page.locator("#files-count").inner_text()
    check_layout(page, view, "many-search")
    # A snapshot number in the history lists what that snapshot added and removed.
    page.goto(MANY)
    history = page.locator("#snapshots tbody tr")
    assert "added 50 files" in history.first.inner_text()
    newest = history.first.locator("td.num a").first
    snapshot = newest.inner_text()
    newest.click()
    page.wait_for_url(f"**/lake/many?snapshot={snapshot}#files")
    expect(page.locator("#files-table tbody tr")).to_have_count(50)
    assert f"were added at snapshot {snapshot}" in page.locator("#files-count").inner_text()
    assert page.locator("#removed").is_visible()
    prune = page.get_by_role("link", name=f"Prune at snapshot {snapshot}…")
    assert prune.get_attribute("href").endswith(f"/prune?snapshot={snapshot}")
    check_layout(page, view, "many-snapshot")
    # The file page is named after its file.
    link = page.locator("#files-table th.path a").first
    name = link.get_attribute("title").rsplit("/", 1)[1]
    assert int(name[5:10]) >= 70  # a file of the second commit
    link.click()
    page.wait_for_url("**/file?path=*")
    assert page.title().startswith(name + " · lake.many")
    assert page.locator("h1").inner_text() == f"File {name}"


def test_coverage_and_conflicts(sized: tuple[str, Any], server: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    # Overview: paths in the global stats / in conflict / partial, per table.
    page.goto("/admin")
    health = page.locator("#tables tbody tr", has_text="lake.events").locator("td.health")
    assert health.inner_text().split() == ["4", "/", "1", "/", "1"]
    # The global stats table marks the conflicting path; one click lists each type's files.
    page.goto(TABLE)
    marker = page.locator('table.global-stats[data-column="v"] tbody.not-global tr')
    assert "type conflict" in marker.inner_text()
    marker.get_by_role("link", name="int64 in 1 file").click()
    page.wait_for_url("**/coverage?*")
    expect(page.locator("#coverage-files tbody tr")).to_have_count(1)
    assert page.locator("#coverage-files th.path a").get_attribute("title") == server["files"][4]
    check_layout(page, view, "coverage-int64")
    # From coverage: the files where "extra" is absent.
    page.goto(TABLE)
    page.locator("#coverage").get_by_role("link", name="absent (4)").click()
    page.wait_for_url("**/coverage?*")
    titles = page.locator("#coverage-files th.path a").evaluate_all("links => links.map(a => a.title)")
    assert titles == server["files"][:4]
    # The odd file: its "name" row is marked (int64 where most files have varchar).
    page.locator("#coverage-files th.path a").first.click()
    page.wait_for_url("**/file?*")
    assert page.locator("#file-stats tr.odd-type").count() == 0
    assert '"extra"' in page.locator("#file-absent").inner_text()
    page.goto(f"{TABLE}/file?path={server['files'][4]}")
    odd = page.locator("#file-stats tr.odd-type")
    assert odd.count() == 1 and "most files: varchar" in odd.inner_text()
    check_layout(page, view, "file-odd-type")


# --- playground and range chart (issue 17) -------------------------------------------------------

#: Tab presses (at most) from the element focused by ``start`` until focus leaves the chart, with
#: the number of those stops that were bars.
TAB_THROUGH_CHART = 400


def _tab_stops_in_chart(page: Any) -> int:
    page.locator("#chart-order").focus()
    page.keyboard.press("Tab")  # the Redraw button
    stops = 0
    for _ in range(TAB_THROUGH_CHART):
        page.keyboard.press("Tab")
        if not page.evaluate("() => !!document.activeElement.closest('svg.chart')"):
            return stops
        stops += 1
    return stops


def test_playground_one_table_with_filter_paging_and_reasons(sized: tuple[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    sql = "variant_get(v, '$.id', 'bigint') >= 5000"
    page.goto(f"{MANY}/prune")
    page.get_by_label("Predicate (Spark SQL)").fill(sql)
    page.get_by_role("button", name="Run").click()
    page.wait_for_url("**/prune?sql=*")  # a GET: the result has a URL
    assert metric(page, "files-kept") == 70 and metric(page, "files-pruned") == 50
    rows = page.locator("#plan-files tbody tr")
    expect(rows).to_have_count(100)
    expect(page.locator("#plan-range")).to_contain_text("1–100 of 120 files")
    paths = page.locator("#plan-files th.path a").evaluate_all("links => links.map(a => a.title)")
    assert len(set(paths)) == 100  # each file once
    reasons = page.locator("#plan-files tr.pruned td.reason").all_inner_texts()
    assert len(reasons) == 50 and all(re.fullmatch(r"max \d+ < 5000", r) for r in reasons), reasons[:3]
    assert all(r == "bounds [" + r[8:] and r.endswith("admit it") for r in page.locator("#plan-files tr.kept td.reason").all_inner_texts())
    check_layout(page, view, "playground-many")
    page.get_by_role("link", name="Next ›").click()
    expect(page.locator("#plan-range")).to_contain_text("101–120 of 120 files")
    expect(rows).to_have_count(20)
    assert "page=2" in page.url
    page.get_by_role("link", name="‹ Previous").click()
    expect(page.locator("#plan-range")).to_contain_text("1–100 of 120 files")
    # The filter: only the skipped files, by URL too.
    page.get_by_role("link", name="Skipped (50)").click()
    expect(page.locator("#plan-range")).to_contain_text("1–50 of 50 skipped files")
    expect(page.locator("#plan-files tr.pruned")).to_have_count(50)
    assert page.locator("#plan-files tr.kept").count() == 0 and "show=skipped" in page.url
    assert page.locator('#show a[aria-current="page"]').inner_text() == "Skipped (50)"
    check_layout(page, view, "playground-skipped")
    page.get_by_role("link", name="Kept (70)").click()
    expect(page.locator("#plan-files tr.kept")).to_have_count(70)
    assert page.locator("#plan-files tr.pruned").count() == 0


def test_playground_type_mismatch_reads_in_words_below_the_warning(sized: tuple[str, Any]) -> None:
    view, page = sized
    # A string range: equality with 'x' is proved false on int64 bounds (no integer's text).
    page.goto(f"{TABLE}/prune?sql=" + "variant_get(v, '$.id', 'string') > 'x'".replace(" ", "+").replace(">", "%3E"))
    warning = page.locator('#warnings [data-warning="type_not_comparable"]')
    assert warning.is_visible()
    assert page.locator("#warnings").bounding_box()["y"] < page.locator("#plan-files").bounding_box()["y"]
    reasons = page.locator("#plan-files td.reason").all_inner_texts()
    assert reasons == ["path stored as int64, asked as string: not comparable"] * 5
    check_layout(page, view, "playground-type-mismatch")


def test_playground_syntax_error_has_a_caret_under_its_column(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{TABLE}/prune")
    bad = "variant_get(v, '$.id', 'bigint') ="
    page.get_by_label("Predicate (Spark SQL)").fill(bad)
    page.get_by_role("button", name="Run").click()
    assert page.get_by_role("alert").inner_text() == "expected a value after '=' at column 35"
    caret = page.locator("#predicate-caret")
    assert caret.inner_text() == bad + "\n" + " " * 34 + "^"
    # The caret sits under column 35 of the line shown above it.
    xs = caret.evaluate("""pre => {
      const text = pre.firstChild, range = document.createRange();
      const at = i => { range.setStart(text, i); range.setEnd(text, i + 1); return range.getBoundingClientRect().left; };
      const line = text.data.split('\\n')[0];
      return [at(line.length + 1 + 34), at(line.length - 1) + (at(line.length - 1) - at(line.length - 2))];
    }""")
    assert abs(xs[0] - xs[1]) < 1.0, xs
    check_layout(page, view, "playground-syntax-error")


def test_playground_columns_and_paths_insert_at_the_cursor(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{TABLE}/prune")
    box = page.get_by_label("Predicate (Spark SQL)")
    items = page.locator("#inserts button.insert")
    assert items.all_inner_texts() == ["v", "$.day", "$.extra", "$.id", "$.name", "$.score", "$.ts"]
    box.fill(" > 240")
    box.evaluate("b => b.setSelectionRange(0, 0)")
    page.locator("#inserts").get_by_role("button", name="$.score").click()
    assert box.input_value() == "variant_get(v, '$.score', 'double') > 240"
    assert page.evaluate("() => document.activeElement.id") == "sql"
    assert box.evaluate("b => b.selectionStart") == len("variant_get(v, '$.score', 'double')")
    page.keyboard.type(" OR ")
    page.locator("#inserts").get_by_role("button", name="$.id").click()
    page.keyboard.type(" = 3")
    assert box.input_value() == "variant_get(v, '$.score', 'double') OR variant_get(v, '$.id', 'bigint') = 3 > 240"
    check_layout(page, view, "playground-inserts")


def test_chart_bars_are_one_tab_stop_with_arrow_keys(sized: tuple[str, Any]) -> None:
    view, page = sized
    for table, n in ((TABLE, 5), (MANY, 120)):
        page.goto(f"{table}/path?column=v&path=%22id%22")
        assert page.locator("svg.chart [data-bar]").count() == n
        assert page.locator('svg.chart [data-bar][tabindex="0"]').count() == 1
        assert _tab_stops_in_chart(page) == 1
    page.goto(f"{MANY}/path?column=v&path=%22id%22")
    page.locator("#chart-order").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    focused = "() => document.activeElement.getAttribute('data-bar')"
    assert page.evaluate(focused) == "0"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(focused) == "2"
    assert page.locator('svg.chart [data-bar][tabindex="0"]').get_attribute("data-bar") == "2"
    ring = page.evaluate("() => getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth")
    assert ring == "3px"  # the visible focus ring
    page.keyboard.press("End")
    assert page.evaluate(focused) == "119"
    page.keyboard.press("Home")
    assert page.evaluate(focused) == "0"
    page.keyboard.press("ArrowLeft")
    assert page.evaluate(focused) == "0"
    page.keyboard.press("ArrowRight")
    save_screenshot(page, SCREENSHOTS / f"{view}-chart-focus.png", full_page=True)
    page.keyboard.press("Enter")  # follows the focused bar's link
    page.wait_for_url("**/file?path=*")


def test_chart_takes_the_playgrounds_path_syntax_and_suggests_close_paths(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{TABLE}/path?column=v&path=$.id")
    assert page.locator("svg.chart rect.bar").count() == 5
    assert "$.id" in page.locator("h1").inner_text()
    check_layout(page, view, "path-json-syntax")
    page.goto(f"{TABLE}/path?column=v&path=$.idd")
    assert "not fully shredded in any live file" in page.locator("#no-chart").inner_text()
    page.locator("#path-suggestions").get_by_role("link", name="$.id").click()
    page.wait_for_url("**/path?*")
    assert page.locator("svg.chart rect.bar").count() == 5
    page.goto(f"{TABLE}/path?column=v&path=idd")  # no quotes, no $: still found
    assert page.locator("#path-suggestions").get_by_role("link", name="$.id").count() == 1
    check_layout(page, view, "path-suggestions")


def test_chart_scale_ticks_and_time_zones(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{SKEW}/path?column=v&path=$.n")
    svg = page.locator("svg.chart")
    assert svg.get_attribute("data-scale") == "log"
    assert "log scale" in svg.locator("text.axis").all_text_contents()[1]
    ticks = svg.locator("text.tick").all_text_contents()
    assert ticks[0] == "0" and "1,000,000" in ticks and len(set(ticks)) == len(ticks)
    # The small ranges get real height (on a linear axis every one would be the 2 px minimum mark).
    heights = svg.locator("rect.bar").evaluate_all("rs => rs.map(r => r.getBoundingClientRect().height)")
    assert sorted(heights)[-2] > 20 and sum(h > 2.5 for h in heights) >= 5, heights
    charts = page.evaluate(CHART_TEXT_JS)
    assert charts[0]["smallest"] >= 11 and charts[0]["lowest"] >= 11
    check_layout(page, view, "chart-log-scale")
    page.goto(f"{MANY}/path?column=v&path=$.id")
    assert page.locator("svg.chart").get_attribute("data-scale") is None  # no range dwarfs the others
    ticks = page.locator("svg.chart text.tick").all_text_contents()
    assert all(re.fullmatch(r"\d{1,3}(,\d{3})*", t) for t in ticks), ticks
    # "UTC" for the zoned timestamp only; one label form per axis.
    page.goto(f"{SKEW}/path?column=v&path=$.tz")
    axis = page.locator("svg.chart text.axis").all_text_contents()[1]
    assert axis == "timestamp (UTC)"
    labels = page.locator("svg.chart text.tick").all_text_contents()
    assert len({len(t) for t in labels}) == 1, labels
    check_layout(page, view, "chart-timestamptz")
    page.goto(f"{TABLE}/path?column=v&path=$.ts")
    assert page.locator("svg.chart text.axis").all_text_contents()[1] == "timestamp"
    assert not [t for t in page.locator("svg.chart text").all_text_contents() if "UTC" in t]


def test_point_lookup_estimate_counts_files_of_other_types(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{TABLE}/path?column=v&path=$.name")  # varchar in 4 files, int64 in 1
    text = page.locator("#clustering").inner_text()
    assert "of the 5 files" in text and "1 store the path as another type" in text, text
    # Disjoint ranges: each probe keeps its own file and the int64 one, 2 of 5.
    assert "keeps about 40.0%" in text, text
    check_layout(page, view, "path-other-type")
