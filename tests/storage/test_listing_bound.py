"""Bounded listing, on each emulator (moto, Azurite, gcp-storage-emulator), requests counted at the
server: a commit of a flat prefix holding far more objects than the request may take stops
listing at the limit with the 413 of today (data files past SHREDCAT_MAX_FILES_PER_COMMIT), or
once more objects were listed than the limit allows whatever they are (debris that is not data),
after as few pages as that takes; nothing is committed either way. A hidden directory's subtree
is jumped over with a listing offset, never paged through.

The page size is the store's: 1,000 on S3 and GCS's XML API, 5,000 on Azure (obstore asks for no
smaller page there), so on Azure the whole prefix is one page and what is proven there is the
error and that no second request follows; fewer pages than the whole are proven on S3 and GCS."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import unquote

import pytest

from service.storage import list_data_files
from service.storage.listing import LISTED_PER_FILE, LISTED_SLACK
from tests.api.conftest import WRITER, assert_error
from tests.storage.remote_suite import T, nothing_committed, rest

pytestmark = pytest.mark.slow  # a thousand uploads to each emulator

#: Data files first in key order, then debris (``.crc`` files Spark ignores): 2 pages of 1,000 on
#: S3 and GCS. On Azure the prefix is one page of 5,000 however many objects it holds, so what the
#: debris must do there is only pass the bound (``LISTED_PER_FILE * DATA + LISTED_SLACK`` = 120
#: objects): 200 do, and cost a fifth of the uploads (Azurite takes 20-60 ms an upload here).
DATA = 10
DEBRIS = {"s3": 1_000, "gs": 1_000, "abfs": 200}
PAGE = {"s3": 1_000, "gs": 1_000, "abfs": 5_000}


@pytest.fixture(scope="module", params=["s3", "azure", "gcs"])
def flat(request: pytest.FixtureRequest) -> tuple[str, str]:
    """``(fixture name, prefix)``: a flat prefix of :data:`DATA` data files and :data:`DEBRIS`
    other objects on each store, uploaded once per module (setup talks to the emulator directly)."""
    name = request.param
    server = request.getfixturevalue({"s3": "s3_server", "azure": "azurite_server", "gcs": "gcs_server"}[name])
    debris = DEBRIS[server.scheme]
    assert DATA + debris > LISTED_PER_FILE * DATA + LISTED_SLACK  # past the bound
    keys = [f"lake/flat/a-{i:03d}.parquet" for i in range(DATA)] + [f"lake/flat/b-{i:05d}.crc" for i in range(debris)]
    if name == "s3":
        server.put_many(keys, b"x")  # in moto's backend: a signed PUT each costs ~25 ms of its CPU
    else:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda k: server.put(k, b"x"), keys))
    return name, server.uri("lake/flat/")


@pytest.fixture
def server(flat: tuple[str, str], request: pytest.FixtureRequest) -> Any:
    srv = request.getfixturevalue({"s3": "s3", "azure": "azure", "gcs": "gcs"}[flat[0]])  # its environment set
    srv.control("/_test/reset")
    return srv


def listings(server: Any) -> list[dict[str, Any]]:
    return [r for r in server.requests() if server.is_listing(r)]


def test_data_files_past_the_limit_stop_the_listing_in_its_first_page(server: Any, flat: tuple[str, str], app_factory: Any) -> None:
    c = rest(app_factory, server, max_files_per_commit=5)
    server.control("/_test/reset")
    r = c.post(T + "/commits", json={"prefixes": [flat[1]]}, headers=WRITER)
    assert_error(r, 413, "limit_exceeded", "body.prefixes[0]")
    assert "6 files in one request: at most 5 (SHREDCAT_MAX_FILES_PER_COMMIT)" in r.text, r.text
    assert len(listings(server)) == 1  # of 2 pages on S3 and GCS
    assert not [q for q in server.requests() if not server.is_listing(q)]  # no file was read
    nothing_committed(c)


def test_debris_past_the_bound_stops_the_listing(server: Any, flat: tuple[str, str], app_factory: Any) -> None:
    limit = DATA  # every data file fits: only the debris is too much
    most = LISTED_PER_FILE * limit + LISTED_SLACK
    c = rest(app_factory, server, max_files_per_commit=limit)
    server.control("/_test/reset")
    r = c.post(T + "/commits", json={"prefixes": [flat[1]]}, headers=WRITER)
    assert_error(r, 413, "limit_exceeded", "body.prefixes[0]")
    assert f"cannot list {flat[1]}" in r.text and f"more than {most} objects listed under it" in r.text, r.text
    assert r.json()["error"]["details"]["limit"] == most, r.text
    pages = -(-(most + 1) // PAGE[server.scheme])  # the pages holding the first most + 1 objects
    assert len(listings(server)) == pages
    if server.scheme != "abfs":  # one page of 5,000 on Azure
        assert pages < -(-(DATA + DEBRIS[server.scheme]) // PAGE[server.scheme])
    nothing_committed(c)
    # Without a limit (the CLI's stats, the Spark helpers) the whole prefix is listed, page by page.
    server.control("/_test/reset")
    assert len(list_data_files(flat[1])) == DATA
    assert len(listings(server)) == -(-(DATA + DEBRIS[server.scheme]) // PAGE[server.scheme])


def test_a_hidden_directory_is_jumped_over(server: Any, app_factory: Any) -> None:
    base = "lake/jump/"
    for k in ["a.parquet", "_temporary/0/a.parquet", "_temporary/0/b.parquet", "_delta_log/0.json", "z/b.parquet"]:
        server.put(base + k, b"x")
    server.control("/_test/reset")
    assert list_data_files(server.uri(base)) == [server.uri(base + "a.parquet"), server.uri(base + "z/b.parquet")]
    queries = [unquote(r["query"]) for r in listings(server)]
    # One listing from the start, one from past each hidden directory (sorted: _delta_log, _temporary).
    assert len(queries) == 3, queries
    assert "lake/jump/_delta_log0" in queries[1] and "lake/jump/_temporary0" in queries[2], queries
