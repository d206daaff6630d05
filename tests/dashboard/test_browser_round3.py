"""Issue 36's items 9-12 in real headless Chromium at 390 and 1440 px, against the real ``shredcat
serve`` of :mod:`tests.dashboard.test_browser` (its fixtures): path search, coverage filters and
page numbers; export and copy (paths, a Spark read, a DuckDB query and its refusal); history
charts, a path's types over time and removed files as links; completion in the predicate box.
Screenshots under ``test-artifacts/screenshots/`` (gitignored); every page is checked to fit its
viewport, and the key columns to be inside it."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import pytest

from service.client import ShredcatClient
from tests.dashboard import test_browser as tb
from tests.dashboard.test_browser import ADMIN, MANY, TABLE, check_layout, metric

# Signed-in pages at both widths, from test_browser.py (the server and the browser they use are
# the session's: tests/dashboard/browser_server.py).
sized = tb.sized

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

ID = "variant_get(v, '$.id', 'bigint') >= 250"
HIST = "/admin/tables/lake/hist"


def _inside(page: Any, selector: str) -> None:
    """Every element of ``selector`` is visible within the viewport's width (a key column)."""
    width = page.viewport_size["width"]
    boxes = [page.locator(selector).nth(i).bounding_box() for i in range(page.locator(selector).count())]
    assert boxes, selector
    for b in boxes:
        assert b is not None and b["x"] >= -0.5 and b["x"] + b["width"] <= width + 0.5, (selector, b, width)


def _clipboard(page: Any) -> str:
    return str(page.evaluate("() => navigator.clipboard.readText()"))


def test_path_search_coverage_filter_and_page_numbers(sized: tuple[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    page.goto(TABLE)
    page.get_by_label("Search paths").fill("NAM")
    page.locator("#path-search").get_by_role("button", name="Search").click()
    page.wait_for_url("**q=NAM*")
    rows = page.locator("#coverage tbody tr")
    expect(rows).to_have_count(1)
    assert '"name"' in rows.first.inner_text()
    _inside(page, "#coverage tbody tr th")
    check_layout(page, view, "round3-path-search")
    page.locator("#status").select_option("ok")
    page.locator("#path-search").get_by_role("button", name="Search").click()
    page.wait_for_url("**status=ok*")
    expect(page.locator("#coverage")).to_have_count(0)  # "name" is in a type conflict
    # Pages by number on the 120 files of lake.many: 50 a page.
    page.goto(MANY)
    expect(page.locator("#files-page")).to_have_text("page 1 of 3")
    page.get_by_label("Go to page (1–3)").fill("3")
    page.locator("#files-jump").get_by_role("button", name="Go").click()
    page.wait_for_url("**page=3*")
    expect(page.locator("#files-page")).to_have_text("page 3 of 3")
    expect(page.locator("#files-range")).to_have_text("101–120 of 120")
    _inside(page, "#files-table tbody th.path .mid")
    check_layout(page, view, "round3-files-page-3")
    page.get_by_role("link", name="‹ Previous").click()
    expect(page.locator("#files-page")).to_have_text("page 2 of 3")


def test_export_and_copy(sized: tuple[str, Any], server: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    page.goto(f"{TABLE}/prune")
    page.get_by_label("Predicate (Spark SQL)").fill(ID)
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("#result-h")).to_be_visible()
    kept = metric(page, "files-kept")
    with ShredcatClient(server["base"], token=ADMIN) as c:
        expected = c.plan_all("lake", "events", sql=ID).paths
    assert kept == len(expected) > 0
    # CSV: the link's download, every candidate.
    with page.expect_download() as dl:
        page.locator("#export-csv").click()
    rows = list(csv.DictReader(io.StringIO(Path(dl.value.path()).read_text())))
    assert sorted(r["path"] for r in rows) == sorted(expected)
    # Copy buttons: a file's full path, the Spark read, the DuckDB query.
    first = page.locator("#plan-files tbody tr").first
    first.locator("button.copy-path").click()
    expect(first.locator("button.copy-path")).to_have_attribute("data-copied", "yes")
    assert _clipboard(page) == first.locator(".mid").get_attribute("title")
    page.locator("#copy-spark").click()
    expect(page.locator("#copy-spark")).to_have_attribute("data-copied", "yes")
    spark = _clipboard(page)
    assert "spark.read" in spark and all(p in spark for p in expected) and ".where(" in spark
    page.locator("#copy-duckdb").click()
    expect(page.locator("#copy-duckdb")).to_have_attribute("data-copied", "yes")
    assert _clipboard(page).startswith("SELECT * FROM read_parquet([")
    _inside(page, "#export-form button, #copy-spark, #copy-duckdb")
    check_layout(page, view, "round3-export")
    # What DuckDB cannot render is refused with its message, and nothing is copied.
    page.goto(f"{TABLE}/prune?" + "sql=length(variant_get(v,%20'$.name',%20'string'))%20%3E%203")
    page.locator("#copy-duckdb").click()
    expect(page.locator("#copy-duckdb")).to_have_attribute("data-copied", "refused")
    expect(page.locator("#export .copied")).to_contain_text("no exact DuckDB rendering")
    assert _clipboard(page).startswith("SELECT")  # still the previous copy
    check_layout(page, view, "round3-duckdb-refused")
    page.locator("#export-duckdb").click()
    expect(page.locator("#duckdb-error")).to_contain_text("no exact DuckDB rendering")
    check_layout(page, view, "round3-duckdb-page-refused")


def _add_history_table(server: dict[str, Any]) -> tuple[str, int]:
    """lake.hist: three commits (the third makes "lat" a float64 and removes the first file):
    the removed file's path and the snapshot that removed it."""
    from service.catalog import Catalog
    from service.stats.model import FileStats, PathStats
    from service.values import ShreddedType

    i64, f64 = ShreddedType.parse("int64"), ShreddedType.parse("float64")
    root = Path(server["log"]).parent
    lake = root / "lake" / "hist"

    def f(i: int, t: ShreddedType) -> FileStats:
        lo, hi = (i * 10, i * 10 + 9) if t is i64 else (i * 10.0, i * 10 + 9.5)
        path = lake / f"event_date=2024-03-{20 + i:02d}" / f"part-{i:05d}-3f1c9a7e-5b2d-4c1e-9f0a-{i:012d}.c000.zstd.parquet"
        return FileStats(str(path), 1000 + i, 100, 900, None, ("v",), (PathStats("v", '"lat"', t, 100, 100, 0, lo, hi, None),))

    with Catalog(f"sqlite:///{root / 'catalog.db'}") as cat:
        if cat.list_tables("lake") and any(t.name == "hist" for t in cat.list_tables("lake")):
            removed = cat.list_snapshots("lake", "hist")[-1].snapshot_id
            return f(0, i64).path, removed
        cat.create_table("lake", "hist", ["v"])
        cat.commit("lake", "hist", [f(0, i64), f(1, i64)])
        cat.commit("lake", "hist", [f(2, i64)])
        res = cat.commit("lake", "hist", [f(3, f64)], remove=[f(0, i64).path])
        return f(0, i64).path, res.snapshot_id


def test_history_charts_type_timeline_and_removed_links(sized: tuple[str, Any], server: dict[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    removed_path, removed_at = _add_history_table(server)
    page.goto(HIST)
    charts = page.locator("#history-charts svg.history-chart")
    expect(charts).to_have_count(3)
    _inside(page, "#history-charts svg.history-chart")
    files = page.locator('svg[data-series="files"] a')
    expect(files).to_have_count(4)  # creation and three commits
    assert files.last.locator("title").text_content().endswith("+1 / -1 files")  # type: ignore[union-attr]
    check_layout(page, view, "round3-history")
    files.last.click()
    page.wait_for_url(f"**snapshot={removed_at}#files")
    entry = page.locator("#removed li.removed-file")
    expect(entry).to_have_count(1)
    expect(entry).to_contain_text(f"removed at {removed_at}")
    check_layout(page, view, "round3-removed")
    entry.locator("a.mid").click()
    expect(page.locator("#file-removed")).to_contain_text(f"snapshot {removed_at} removed it")
    expect(page.locator("#file-path")).to_have_text(removed_path)
    check_layout(page, view, "round3-removed-file")
    page.goto(f"{HIST}/path?column=v&path=%22lat%22")
    items = page.locator("#type-timeline li")
    expect(items).to_have_count(2)
    assert [items.nth(i).get_attribute("data-type") for i in range(2)] == ["int64", "float64"]
    expect(items.nth(1)).to_contain_text(f"from snapshot {removed_at}")
    expect(items.nth(0)).to_contain_text("in 2 live files now (3 ever)")
    check_layout(page, view, "round3-type-timeline")


def test_completion_in_the_predicate_box(sized: tuple[str, Any]) -> None:
    from playwright.sync_api import expect

    view, page = sized
    page.goto(f"{TABLE}/prune")
    box = page.get_by_label("Predicate (Spark SQL)")
    box.click()
    page.keyboard.type("sco")
    options = page.locator("#complete-list [role=option]")
    expect(options.first).to_be_visible()
    expect(box).to_have_attribute("aria-expanded", "true")
    assert "$.score" in options.first.inner_text()
    _inside(page, "#complete-list")
    check_layout(page, view, "round3-completion")
    page.keyboard.press("Escape")
    expect(page.locator("#complete-list")).to_be_hidden()
    page.keyboard.type("r")  # "scor": the list again; the keyboard picks and inserts
    expect(options.first).to_be_visible()
    page.keyboard.press("Enter")
    expect(box).to_have_value("variant_get(v, '$.score', 'double')")
    expect(page.locator("#complete-list")).to_be_hidden()
    page.keyboard.type(" > 1")
    page.keyboard.press("Control+Enter")
    expect(page.locator("#result-sql")).to_have_text("variant_get(v, '$.score', 'double') > 1")
