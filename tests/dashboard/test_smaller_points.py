"""Issue 36's smaller points without a browser: the HTML 404 page for unknown ``/admin`` URLs, an
HTML error (not the API's JSON) for a bad ``?snapshot=``/``?before=`` or a NUL in the URL, and the
favicon."""

from __future__ import annotations

import re
from html import unescape

import pytest
from fastapi.testclient import TestClient

from tests.dashboard.conftest import HTML

T = "/admin/tables/lake/events"


@pytest.mark.parametrize("url", ["/admin/nowhere", f"{T}/extra/deep", "/admin/favicon.ico", "/admin/tables"])
def test_unknown_admin_urls_get_the_html_404_page(admin: TestClient, url: str) -> None:
    r = admin.get(url)
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/html")
    assert f"There is no dashboard page at {url}." in r.text and "<h1>404 · Not found</h1>" in r.text


def test_unknown_admin_urls_ask_an_anonymous_browser_to_sign_in(client: TestClient) -> None:
    r = client.get("/admin/nowhere", headers=HTML)
    assert r.status_code in (302, 303) and "/admin/login" in r.headers["location"]


@pytest.mark.parametrize("query", ["snapshot=x", "snapshot=-1", "before=x", "before=99999999999999999999"])
def test_a_bad_snapshot_number_is_an_html_error(admin: TestClient, query: str) -> None:
    r = admin.get(f"{T}?{query}")
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html")
    assert "a snapshot id is a whole number" in r.text


@pytest.mark.parametrize(
    "url", ["/admin?x=%00", f"{T}?prefix=%00", f"{T}/file?path=/a%00.parquet", "/admin/tables/lake/ev%00ents", "/admin/%00"]
)
def test_a_nul_in_an_admin_url_is_the_html_422_page(admin: TestClient, url: str) -> None:
    """Refused before any route (the catalog stores no NUL), with the dashboard's page, not the
    API's JSON; its reason said once."""
    r = admin.get(url, headers=HTML)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html"), r.text
    assert "<h1>422 · Invalid request</h1>" in r.text and r.headers["content-security-policy"]
    assert r.text.count("NUL") == 1 and "the request's URL holds a NUL character (%00)" in unescape(r.text), r.text
    # Not a dashboard URL: the API's JSON.
    r = admin.get("/administrator?x=%00")
    assert r.status_code == 422 and r.json()["error"]["type"] == "bad_input"


def test_an_encoded_slash_in_an_admin_url_is_the_html_422_page(admin: TestClient) -> None:
    r = admin.get("/admin/tables/lake/a%2Fb", headers=HTML)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html"), r.text
    assert "names cannot contain '/'" in unescape(r.text)


def test_a_query_parameter_given_twice_is_the_html_422_page(admin: TestClient) -> None:
    r = admin.get(f"{T}?sort=path&sort=size", headers=HTML)
    assert r.status_code == 422 and r.headers["content-type"].startswith("text/html"), r.text
    assert "the query parameter 'sort' is given 2 times: it takes one value" in unescape(r.text)


def test_every_page_links_the_favicon_and_it_is_served(admin: TestClient) -> None:
    page = admin.get("/admin").text
    assert '<link rel="icon" type="image/svg+xml" href="/admin/static/favicon.svg?v=' in page
    r = admin.get("/admin/static/favicon.svg")
    assert r.status_code == 200 and r.headers["content-type"] == "image/svg+xml" and r.text.startswith("<svg")


def test_a_relative_path_prefix_is_taken_under_the_files_directory(admin: TestClient, events_files: list[str]) -> None:
    directory = events_files[3].rsplit("/", 1)[0] + "/"
    name = events_files[3].rsplit("/", 1)[1]
    relative = admin.get(T, params={"prefix": name[:-4]})
    absolute = admin.get(T, params={"prefix": events_files[3][:-4]})
    assert relative.status_code == absolute.status_code == 200
    assert "1 of 5 live files" in relative.text and "1 of 5 live files" in absolute.text
    assert f"start with <code>{directory}{name[:-4]}</code>" in relative.text
    # The box keeps what was typed.
    assert f'value="{name[:-4]}"' in relative.text
    assert "No live file starts with" in admin.get(T, params={"prefix": "nothing-"}).text


def test_snapshot_counts_are_worded_apart(admin: TestClient, filled: str) -> None:
    from service.catalog import Catalog

    with Catalog(filled) as cat:
        t = cat.get_table("lake", "events")
    assert t.snapshot_count < t.current_snapshot_id  # the two numbers the page read alike
    page = admin.get(T).text
    assert f"<dt>Commits to this table</dt><dd>{t.snapshot_count}</dd>" in page
    assert re.search(rf"<dt>Catalog snapshot id</dt><dd [^>]*>{t.current_snapshot_id}</dd>", page)
    assert "<dt>Snapshots</dt>" not in page
