"""The admin dashboard in a real browser: Debian's headless Chromium driven by Playwright against a
real ``shredcat serve`` (uvicorn subprocess, SQLite catalog migrated by ``shredcat migrate``) with
real DuckDB-written files registered through the REST API.

Screenshots of every page are saved under ``test-artifacts/dashboard/`` (gitignored). Skipped when
``/usr/bin/chromium`` is missing, except under ``CI=true`` (``.ci/run`` installs it), where that
fails. Playwright never downloads a browser here.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.api.auth import hash_token
from service.client import ShredcatClient
from tests.support.events import write_events
from tests.support.server import running_server, shredcat_cmd

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.xdist_group("browser")]

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ADMIN = "browser-admin-token"
READER = "browser-reader-token"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "dashboard"
TABLE = "/admin/tables/lake/events"


def _require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    msg = f"{CHROMIUM} is missing (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + ": CI requires it (.ci/run installs it)", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A running ``shredcat serve`` with lake.events (five files in two commits, a type conflict on
    ``name``, a path only one file has) and an empty table lake.empty."""
    _require_chromium()
    tmp = tmp_path_factory.mktemp("browser")
    lake = tmp / "lake"
    files = [
        str(write_events(lake / "events" / f"part-{i}.parquet", 100, i * 100, name_as_int=i == 4, extra=i == 4))
        for i in range(5)
    ]
    env = {
        **os.environ,
        "SHREDCAT_DATABASE_URL": f"sqlite:///{tmp / 'catalog.db'}",
        "SHREDCAT_TOKENS": json.dumps({hash_token(ADMIN): "admin", hash_token(READER): "reader"}),
        "SHREDCAT_WAREHOUSE_ROOTS": json.dumps([str(lake)]),
        "SHREDCAT_AUTH": "on",
    }
    m = subprocess.run([*shredcat_cmd(), "migrate"], env=env, capture_output=True, text=True, timeout=120)
    assert m.returncode == 0, m.stderr
    log_path = tmp / "server.log"
    with running_server(env, log_path) as srv:
        with ShredcatClient(srv.base_url, token=ADMIN) as c:
            c.create_namespace("lake")
            c.create_table("lake", "events", infer_from=files[0])
            c.commit_paths("lake", "events", files[:3])
            c.commit_paths("lake", "events", files[3:])
            c.create_table("lake", "empty", variant_columns=["v"])
        yield {"base": srv.base_url, "files": [os.path.realpath(f) for f in files], "log": log_path}
    assert "Traceback" not in log_path.read_text()


@pytest.fixture(scope="module")
def browser(server: dict[str, Any]) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


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
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


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
    assert page.url.endswith(TABLE)
    assert page.get_by_role("heading", name="lake.events", level=1).is_visible()
    stats = page.locator('table.global-stats[data-column="v"]')
    assert stats.locator("tbody tr").count() == 4
    assert "type conflict: varchar, int64" in page.locator("#coverage").inner_text()
    assert "not fully shredded in 4 of 5 files" in page.locator("#coverage").inner_text()
    assert page.locator("#files-table tbody tr").count() == 5
    assert page.locator("#snapshots tbody tr").count() == 3
    shot(page, "04-table")

    # Files: sort by size (descending), then filter by prefix.
    page.get_by_label("Sort by").select_option("size")
    page.get_by_label("Order").select_option("desc")
    page.get_by_role("button", name="Apply").click()
    sizes = [int(v) for v in page.locator("#files-table tbody td.num[data-value]").evaluate_all(
        "cells => cells.filter((c, i) => i % 2 === 0).map(c => c.dataset.value)")]
    assert sizes == sorted(sizes, reverse=True) and len(sizes) == 5
    prefix = server["files"][3].rsplit("/", 1)[0] + "/part-3"
    page.get_by_label("Path prefix").fill(prefix)
    page.get_by_role("button", name="Apply").click()
    assert page.locator("#files-table tbody tr").count() == 1
    assert "1 of 5 live files" in page.locator("#files-count").inner_text()
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
    assert page.locator("svg.chart rect.bar").count() == 1

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
    login(page, ADMIN)
    page.goto(TABLE)
    page.get_by_role("link", name="Open the prune playground").click()
    shot(page, "10-playground-empty")
    with ShredcatClient(server["base"], token=ADMIN) as c:
        for sql in (
            "variant_get(v, '$.id', 'bigint') BETWEEN 150 AND 260",
            "v:score::double > 240 OR v:name::string = 'n000042'",
            "variant_get(v, '$.day', 'date') = DATE '2024-01-05'",
        ):
            page.get_by_label("Predicate (Spark SQL)").fill(sql)
            page.get_by_role("button", name="Run").click()
            api = c.plan("lake", "events", sql=sql, explain=True)
            assert metric(page, "files-kept") == api.files_kept
            assert metric(page, "files-considered") == api.files_considered == 5
            assert metric(page, "files-pruned") == api.files_pruned
            assert metric(page, "rows-skipped") == api.rows_skipped
            assert metric(page, "bytes-skipped") == api.bytes_skipped
            shown = page.locator("#candidates tbody th a").all_inner_texts() if api.files_kept else []
            assert sorted(shown) == sorted(api.paths)
            assert page.locator("#explain tr.pruned").count() == api.files_pruned
        shot(page, "11-playground-result")
    # An error in the predicate is shown inline, next to the text (kept for editing).
    bad = "variant_get(v, '$.id', 'bigint') >"
    page.get_by_label("Predicate (Spark SQL)").fill(bad)
    page.get_by_role("button", name="Run").click()
    alert = page.get_by_role("alert")
    assert alert.is_visible() and alert.inner_text().strip()
    assert page.get_by_label("Predicate (Spark SQL)").get_attribute("aria-invalid") == "true"
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
