"""The dashboard's second round (issue 36) in real headless Chromium at 390 and 1440 px, against
the real ``shredcat serve`` of :mod:`tests.dashboard.test_browser` (its fixtures): long predicates
by POST, Back, compressed reasons, plan warnings, errors on a phone. Screenshots under
``test-artifacts/screenshots/`` (gitignored); every page is checked to fit its viewport."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from service.client import ShredcatClient
from tests.dashboard import test_browser as tb
from tests.dashboard.test_browser import ADMIN, MANY, TABLE, check_layout, metric
from tests.support.screenshots import save_screenshot

# Signed-in pages at both widths, from test_browser.py (the server and the browser they use are
# the session's: tests/dashboard/browser_server.py).
sized = tb.sized

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]


def _run(page: Any, sql: str) -> None:
    page.get_by_label("Predicate (Spark SQL)").fill(sql)
    page.get_by_role("button", name="Run", exact=True).click()


def _long_in_list() -> str:
    """An IN list of 10,000 ids (the default limit), over 90 KB, above every id of lake.many."""
    ids = range(1_000_000, 1_010_000)
    return f"variant_get(v, '$.id', 'bigint') IN ({', '.join(map(str, ids))})"


def test_a_90kb_in_list_round_trips_by_post(sized: tuple[str, Any], server: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    sql = _long_in_list()
    assert len(sql) > 90_000
    page.goto(f"{MANY}/prune")
    _run(page, sql)
    expect(page.locator("#result-h")).to_be_visible()
    # Posted: no predicate in the URL, the result and the predicate on the page.
    assert "sql=" not in page.url
    with ShredcatClient(server["base"], token=ADMIN) as c:
        api = c.plan("lake", "many", sql=sql)
    assert metric(page, "files-kept") == api.files_kept == 0
    assert metric(page, "files-pruned") == api.files_pruned == 120
    assert page.get_by_label("Predicate (Spark SQL)").input_value() == sql
    assert page.locator("#result-sql").inner_text().startswith(sql[:400])
    assert page.locator("#no-url").is_visible()
    check_layout(page, view, "playground-90kb")
    # The filter and the pages post the predicate again.
    page.locator("#show").get_by_role("button", name="Skipped (120)").click()
    expect(page.locator("#plan-range")).to_contain_text("1–100 of 120 skipped files")
    page.get_by_role("button", name="Next ›").click()
    expect(page.locator("#plan-range")).to_contain_text("101–120 of 120 skipped files")
    assert page.locator("#plan-files tr.pruned").count() == 20
    page.locator("#show").get_by_role("button", name="Kept (0)").click()
    expect(page.locator("p.empty")).to_contain_text("No file can hold a matching row")
    assert page.get_by_label("Predicate (Spark SQL)").input_value() == sql


def test_short_predicates_keep_their_url_and_back_restores_predicate_and_result(sized: tuple[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    a = "variant_get(v, '$.id', 'bigint') < 250"
    b = "variant_get(v, '$.id', 'bigint') >= 5000"
    page.goto(f"{MANY}/prune")
    for sql in (a, b):
        _run(page, sql)
        page.wait_for_url(lambda u, sql=sql: parse_qs(urlsplit(u).query).get("sql") == [sql])
        expect(page.locator("#result-sql")).to_have_text(sql)
    assert metric(page, "files-kept") == 70
    page.go_back()
    page.wait_for_url(lambda u: parse_qs(urlsplit(u).query).get("sql") == [a])
    expect(page.locator("#result-sql")).to_have_text(a)
    assert page.get_by_label("Predicate (Spark SQL)").input_value() == a
    assert metric(page, "files-kept") == 3
    check_layout(page, view, "playground-back")
    page.go_forward()
    page.wait_for_url(lambda u: parse_qs(urlsplit(u).query).get("sql") == [b])
    assert page.get_by_label("Predicate (Spark SQL)").input_value() == b
    assert metric(page, "files-kept") == 70
    # Typed but not run, then Back and Forward: the box shows the predicate of the result shown.
    page.get_by_label("Predicate (Spark SQL)").fill("something else")
    page.go_back()
    page.wait_for_url(lambda u: parse_qs(urlsplit(u).query).get("sql") == [a])
    assert page.get_by_label("Predicate (Spark SQL)").input_value() == a
    assert re.search(r"Result at snapshot \d+", page.locator("#result-h").inner_text())


def test_a_5kb_or_predicate_names_each_files_bound_once(sized: tuple[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    sql = " OR ".join(f"variant_get(v, '$.id', 'bigint') = {100_000 + 7 * k}" for k in range(200))
    assert len(sql) > 5_000
    page.goto(f"{MANY}/prune")
    one = "variant_get(v, '$.id', 'bigint') = 100000"
    _run(page, one)
    expect(page.locator("#result-sql")).to_have_text(one)
    one_size = len(page.content())
    _run(page, sql)
    expect(page.locator("#result-sql")).to_contain_text(sql[:100])  # posted: its URL would pass 8 KB
    assert metric(page, "files-pruned") == 120
    reasons = page.locator("#plan-files td.reason").all_inner_texts()
    assert len(reasons) == 100
    assert all(re.fullmatch(r"max \d+ < 100000 and 199 more", r) for r in reasons), reasons[:3]
    # Each of the 100 rows listed all 200 comparisons: a 300 KB, 55,000 px page. Compared with the
    # page of one comparison (the files' paths, whose length depends on the test's temporary
    # directory, cancel out), the 200 cost the predicate shown twice and "and 199 more" per row.
    assert len(page.content()) - one_size < 2 * len(sql) + 100 * len(" and 199 more") + 2_000
    height = page.evaluate("() => document.documentElement.scrollHeight")
    assert height < 12_000, height
    check_layout(page, view, "playground-5kb-or")


def test_a_keep_all_is_warned_about_at_the_top(sized: tuple[str, Any], server: dict[str, Any]) -> None:
    view, page = sized
    for name, sql in (
        ("like", "v:name::string LIKE '%n'"),
        ("function", "length(v:name::string) > 3"),
        ("literal", "v:id::bigint = 'abc'"),
        ("date", "v:day::date = '2024-13-45'"),
    ):
        page.goto(f"{TABLE}/prune")
        _run(page, sql)
        page.wait_for_url(lambda u, sql=sql: parse_qs(urlsplit(u).query).get("sql") == [sql])
        items = page.locator("#warnings li")
        with ShredcatClient(server["base"], token=ADMIN) as c:
            api = c.plan("lake", "events", sql=sql)
        assert [i.get_attribute("data-warning") for i in items.all()] == [w.type for w in api.warnings]
        assert [w.type for w in api.warnings] == ["term_not_used", "predicate_prunes_nothing"]
        assert items.first.inner_text() == "Warning: " + api.warnings[0].message
        assert metric(page, "files-kept") == 5
        # On screen at the top of the result, above the numbers, without scrolling sideways.
        box = page.locator("#warnings").bounding_box()
        assert box and box["y"] < page.locator("#metrics").bounding_box()["y"]
        assert box["x"] + box["width"] <= page.viewport_size["width"]
        check_layout(page, view, f"playground-warning-{name}")


#: The caret's box on screen: the caret character's left edge, and the viewport's width.
CARET_JS = """() => {
  const pre = document.getElementById('predicate-caret'), text = pre.firstChild;
  const range = document.createRange();
  range.setStart(text, text.data.length - 1);
  range.setEnd(text, text.data.length);
  const r = range.getBoundingClientRect(), box = pre.parentElement.getBoundingClientRect();
  return {left: r.left, right: r.right, boxLeft: box.left, boxRight: box.right, vw: document.documentElement.clientWidth};
}"""


def _caret_on_screen(page: Any) -> None:
    at = page.evaluate(CARET_JS)
    assert at["boxLeft"] <= at["left"] and at["right"] <= min(at["boxRight"], at["vw"]), at


def test_errors_point_at_their_place_on_any_screen(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{TABLE}/prune")
    # A syntax error at the end of a long line: the caret is scrolled into view.
    bad = "variant_get(v, '$.id', 'bigint') = 1 AND variant_get(v, '$.score', 'double') > 2 AND variant_get(v, '$.name', 'string') ="
    _run(page, bad)
    assert page.get_by_role("alert").inner_text() == f"expected a value after '=' at column {len(bad) + 1}"
    _caret_on_screen(page)
    check_layout(page, view, "playground-caret-long-line")
    # An unknown column: where it is written, with a caret.
    sql = "variant_get(v, '$.id', 'bigint') = 1 AND variant_get(vv, '$.id', 'bigint') = 2"
    _run(page, sql)
    at = sql.index("vv,")
    assert page.get_by_role("alert").inner_text().startswith(f"lake.events has no Variant column 'vv' (at column {at + 1});")
    assert page.locator("#predicate-caret").inner_text() == sql + "\n" + " " * at + "^"
    _caret_on_screen(page)
    # Curly quotes from a phone keyboard.
    sql = "v:name::string = \u2019n000001\u2019"
    _run(page, sql)
    assert "use straight quotes ('n000001')" in page.get_by_role("alert").inner_text()
    _caret_on_screen(page)
    check_layout(page, view, "playground-curly-quotes")


#: Per file link: whether its part number and name end are fully shown inside the link and the
#: viewport, and the part number's text.
PARTS_JS = """sel => [...document.querySelectorAll(sel)].map(a => {
  const box = a.getBoundingClientRect(), vw = document.documentElement.clientWidth;
  const inside = el => { if (!el) return true; const r = el.getBoundingClientRect();
    return r.left >= box.left - 0.5 && r.right <= box.right + 0.5 && r.right <= vw + 0.5 && r.width > 0; };
  const f = a.querySelector('.f'), t = a.querySelector('.t'), d = a.querySelector('.d');
  return {front: f.textContent, shown: inside(f) && inside(t), dirWidth: d ? d.getBoundingClientRect().width : 0};
})"""


def test_file_names_keep_their_part_number_on_a_phone(sized: tuple[str, Any]) -> None:
    view, page = sized
    pages = {
        "files": (MANY, "#files-table th.path a"),
        "playground": (f"{MANY}/prune?sql=" + "variant_get(v, '$.id', 'bigint') >= 5000".replace(" ", "+"), "#plan-files th.path a"),
        "coverage": (f"{MANY}/coverage?column=v&path=%22id%22&type=int64", "#coverage-files th.path a"),
    }
    for name, (url, sel) in pages.items():
        page.goto(url)
        links = page.evaluate(PARTS_JS, sel)
        assert len(links) >= 50, name
        assert all(x["shown"] for x in links), (name, [x for x in links if not x["shown"]][:3])
        fronts = [x["front"] for x in links]
        assert len(set(fronts)) == len(fronts) and all(re.fullmatch(r"part-\d{5}", f) for f in fronts), fronts[:3]
        # The directory is cut before the part number is, but stays in part (its end).
        assert all(x["dirWidth"] > 10 for x in links), name
        check_layout(page, view, f"paths-{name}")
        # The rows themselves, as they show on screen.
        page.evaluate("sel => document.querySelector(sel).scrollIntoView()", sel)
        save_screenshot(page, tb.SCREENSHOTS / f"{view}-paths-{name}-rows.png")


def test_key_columns_stay_on_screen_on_a_phone(sized: tuple[str, Any]) -> None:
    """Overview (files, conflicts, the Prune link), the table's coverage (Status, file lists) and
    the playground (decision, reason): every cell inside the viewport, the reason readable."""
    view, page = sized
    vw = page.viewport_size["width"]
    cells_js = """sel => [...document.querySelectorAll(sel + ' tbody tr > *')].map(c => {
      const r = c.getBoundingClientRect(); return {left: r.left, right: r.right, width: r.width, text: c.innerText.slice(0, 30)}; })"""
    pages = {
        "overview": ("/admin", "#tables"),
        "coverage": (TABLE, "#coverage"),
        "playground": (f"{MANY}/prune?sql=" + "variant_get(v, '$.id', 'bigint') >= 5000".replace(" ", "+"), "#plan-files"),
    }
    for name, (url, sel) in pages.items():
        page.goto(url)
        cells = page.evaluate(cells_js, sel)
        assert cells, name
        off = [c for c in cells if c["right"] > vw + 0.5 or c["left"] < -0.5]
        assert not off, (name, off[:3])
        # Each cell's content inside its cell (a long path does not run under the next cell).
        spill = page.evaluate("""sel => [...document.querySelectorAll(sel + ' tbody tr > * > a')].filter(a => {
          const c = a.parentElement.getBoundingClientRect(), r = a.getBoundingClientRect();
          return r.right > c.right + 0.5; }).map(a => a.innerText)""", sel)
        assert not spill, (name, spill[:3])
        check_layout(page, view, f"cards-{name}")
        page.evaluate("sel => document.querySelector(sel).scrollIntoView()", sel)
        save_screenshot(page, tb.SCREENSHOTS / f"{view}-cards-{name}-rows.png")
    reasons = page.locator("#plan-files td.reason").evaluate_all("cs => cs.map(c => c.getBoundingClientRect().width)")
    assert min(reasons) > 150, reasons[:3]
    page.goto("/admin")
    prune = page.locator("#tables tbody tr", has_text="lake.events").get_by_role("link", name="Prune…")
    box = prune.bounding_box()
    assert box and box["x"] + box["width"] <= vw


#: The chart's scroll box scrolled to its far end: the pinned axis's and the chart's tick labels
#: (text, screen box), and the viewport width.
AXIS_JS = """() => {
  const box = document.querySelector('.chart-scroll');
  box.scrollLeft = box.scrollWidth;
  const ticks = sel => [...document.querySelectorAll(sel)].map(t => {
    const r = t.getBoundingClientRect(); return {text: t.textContent, left: r.left, right: r.right, top: r.top}; });
  return {pinned: ticks('svg.chart-axis text.tick'), chart: ticks('svg.chart text.tick'),
          scrolled: box.scrollLeft, vw: document.documentElement.clientWidth};
}"""


def test_chart_axis_stays_pinned_while_the_bars_scroll(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{MANY}/path?column=v&path=$.id")
    at = page.evaluate(AXIS_JS)
    if view == "desktop":
        # The chart fits: nothing scrolls and the pinned copy is not drawn.
        assert at["scrolled"] == 0 and all(t["right"] - t["left"] == 0 for t in at["pinned"])
        return
    assert at["scrolled"] > 400  # the bars scroll on a phone...
    assert [t["text"] for t in at["pinned"]] == [t["text"] for t in at["chart"]]
    # ...the chart's own labels scrolled off the left edge, the pinned ones still on screen,
    # level with them, drawn at the same 11 px.
    assert all(t["right"] < 0 for t in at["chart"])
    assert all(t["left"] >= 0 and t["right"] <= at["vw"] for t in at["pinned"])
    assert [round(t["top"]) for t in at["pinned"]] == [round(t["top"]) for t in at["chart"]]
    size = page.evaluate("() => getComputedStyle(document.querySelector('svg.chart-axis text.tick')).fontSize")
    assert size == "11px"
    save_screenshot(page, tb.SCREENSHOTS / f"{view}-chart-scrolled-axis-pinned.png")
    check_layout(page, view, "chart-axis-pinned")


def test_unknown_urls_and_the_favicon_in_a_browser(sized: tuple[str, Any]) -> None:
    view, page = sized
    statuses: dict[str, int] = {}
    page.on("response", lambda r: statuses.__setitem__(r.url, r.status))
    page.goto("/admin")
    page.wait_for_load_state("networkidle")
    icons = {u: s for u, s in statuses.items() if "favicon" in u}
    assert icons and all(s == 200 for s in icons.values()), statuses
    assert not [u for u, s in statuses.items() if s >= 400], statuses
    for url in ("/admin/nowhere", f"{TABLE}?snapshot=x"):
        r = page.goto(url)
        assert r.status in (404, 422) and r.headers["content-type"].startswith("text/html")
        assert page.get_by_role("link", name="Back to the overview").is_visible()
        check_layout(page, view, "error-" + ("404" if r.status == 404 else "bad-snapshot"))


def test_a_focused_bar_shows_its_values_and_strings_say_their_axis_is_by_rank(sized: tuple[str, Any]) -> None:
    view, page = sized
    page.goto(f"{MANY}/path?column=v&path=$.id")
    assert page.locator("#string-axis").count() == 0  # numbers: to scale, no note
    page.locator("#chart-order").focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # the first bar
    page.keyboard.press("ArrowRight")
    title = page.evaluate("() => document.activeElement.querySelector('title').textContent")
    said = page.locator("#chart-focus")
    assert said.inner_text() == title and "100" in title and "199" in title, title
    box = said.bounding_box()
    assert box and box["x"] + box["width"] <= page.viewport_size["width"]
    check_layout(page, view, "chart-focused-values")
    page.goto(f"{TABLE}/path?column=v&path=$.name")
    note = page.locator("#string-axis")
    assert note.is_visible() and "not to scale" in note.inner_text()
    check_layout(page, view, "chart-string-axis")


def test_ctrl_enter_runs_and_recent_predicates_come_back(sized: tuple[str, Any]) -> None:
    view, page = sized
    a = "variant_get(v, '$.id', 'bigint') < 250"
    b = "variant_get(v, '$.id', 'bigint') >= 5000"
    page.goto(f"{MANY}/prune")
    assert page.locator("#recent-predicates").is_hidden()  # a fresh browser has none
    box = page.get_by_label("Predicate (Spark SQL)")
    for sql in (a, b):
        box.fill(sql)
        box.press("Control+Enter")
        page.wait_for_url(lambda u, sql=sql: parse_qs(urlsplit(u).query).get("sql") == [sql])
    assert metric(page, "files-kept") == 70
    page.goto(f"{MANY}/prune")
    recent = page.locator("#recent-predicates button")
    assert recent.all_inner_texts() == [b, a]
    recent.nth(1).click()
    assert box.input_value() == a
    check_layout(page, view, "playground-recent")
    # A long one is cut to the screen's width (the whole text in its title).
    long_sql = " OR ".join(f"variant_get(v, '$.id', 'bigint') = {k}" for k in range(20))
    box.fill(long_sql)
    box.press("Control+Enter")
    page.wait_for_url(lambda u: parse_qs(urlsplit(u).query).get("sql") == [long_sql])
    assert page.locator("#recent-predicates button").first.get_attribute("title") == long_sql
    check_layout(page, view, "playground-recent-long")
    page.locator("#recent-predicates button").nth(2).click()
    assert box.input_value() == a
    box.press("Control+Enter")
    page.wait_for_url(lambda u: parse_qs(urlsplit(u).query).get("sql") == [a])
    assert metric(page, "files-kept") == 3


#: WCAG contrast of each element's text (an SVG text's fill) against the first opaque background
#: behind it.
CONTRAST_JS = """sels => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => { const f = v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const bg = el => { for (; el; el = el.parentElement) { const c = rgb(getComputedStyle(el).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.9)) return c.slice(0, 3); } return [255, 255, 255]; };
  const out = {};
  for (const sel of sels) { const el = document.querySelector(sel); if (!el) { out[sel] = null; continue; }
    const st = getComputedStyle(el), a = lum(rgb(el instanceof SVGElement ? st.fill : st.color)), b = lum(bg(el));
    out[sel] = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05); }
  return out;
}"""


@pytest.mark.parametrize("view", ["desktop", "phone"])
def test_dark_mode_follows_the_browser_with_readable_contrast(browser: Any, server: dict[str, Any], view: str) -> None:
    ctx = browser.new_context(base_url=server["base"], viewport=tb.VIEWPORTS[view], color_scheme="dark")
    try:
        page = tb.login(ctx.new_page(), ADMIN)
        page.goto(f"{TABLE}/prune?sql=" + "v:name::string LIKE '%n'".replace(" ", "+"))
        background = page.evaluate("() => getComputedStyle(document.documentElement).backgroundColor")
        assert background == "rgb(20, 24, 31)", background
        sels = ["main h1", "main p.muted", "#sql", "button[type=submit]", "#warnings li", "#plan-files thead th",
                "#plan-files tbody td.reason", "#plan-files th.path a", "#result-sql"]
        ratios = page.evaluate(CONTRAST_JS, sels)
        low = {k: v for k, v in ratios.items() if v is None or v < 4.5}
        assert not low, ratios
        check_layout(page, view, "dark-playground")
        page.goto(f"{MANY}/path?column=v&path=$.id")
        ratios = page.evaluate(CONTRAST_JS, ["svg.chart text.tick", "svg.chart text.axis", "figcaption"])
        assert all(v is not None and v >= 4.5 for v in ratios.values()), ratios
        check_layout(page, view, "dark-chart")
    finally:
        ctx.close()
