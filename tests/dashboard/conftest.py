"""Fixtures of the dashboard tests: real shredded files written by DuckDB (with a type conflict and
a path shredded in one file only), a migrated SQLite catalog, and apps with auth on."""

from __future__ import annotations

import re
import shutil
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*httpx2.*")

from fastapi.testclient import TestClient  # noqa: E402

from service.api import create_app  # noqa: E402
from tests.api.conftest import TOKENS, make_settings  # noqa: E402
from tests.dashboard.browser_server import browser, server  # noqa: E402, F401 (the browser tests' session fixtures)
from tests.support.events import write_event_files  # noqa: E402

HTML = {"Accept": "text/html,application/xhtml+xml"}
ADMIN_TOKEN = TOKENS["admin"]
READER_TOKEN = TOKENS["reader"]


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@pytest.fixture(scope="session")
def events_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The five files of :func:`tests.support.events.write_event_files`."""
    return write_event_files(tmp_path_factory.mktemp("dash-lake") / "warehouse" / "events")


@pytest.fixture
def make_client(sqlite_url: str, events_files: list[str]) -> Iterator[Callable[..., TestClient]]:
    """``make_client(**settings)`` -> a started TestClient on ``sqlite_url`` (auth on by default)."""
    clients: list[TestClient] = []

    def make(**kw: Any) -> TestClient:
        roots = [str(Path(events_files[0]).parent.parent)]
        settings = make_settings(sqlite_url, roots, **kw)
        c = TestClient(create_app(settings), raise_server_exceptions=False, follow_redirects=False)
        c.__enter__()
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.__exit__(None, None, None)


@pytest.fixture(scope="session")
def _filled_db(_template_db: Path, events_files: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The catalog :func:`filled` gives, made once per session: each test gets a copy (registering
    the files cost 0.3-0.9 s a test on this machine under load, a copy a millisecond)."""
    from service.catalog import Catalog

    p = tmp_path_factory.mktemp("dash-filled") / "catalog.db"
    shutil.copyfile(_template_db, p)
    with Catalog(f"sqlite:///{p}") as cat:
        cat.register("lake", "events", events_files[:3])
        cat.register("lake", "events", events_files[3:])
        cat.create_table("lake", "empty", ["v"])
    return p


@pytest.fixture
def filled(sqlite_url: str, _filled_db: Path) -> str:
    """The catalog of ``sqlite_url`` with ``lake.events`` (the five files, in two commits) and an
    empty table ``lake.empty``; returns the URL."""
    from sqlalchemy import make_url

    # SQLite's backup API: a consistent copy whatever the source's WAL holds.
    with closing(sqlite3.connect(_filled_db)) as src, closing(sqlite3.connect(str(make_url(sqlite_url).database))) as dst:
        src.backup(dst)
    return sqlite_url


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    """Auth on, empty catalog."""
    return make_client()


@pytest.fixture
def admin(make_client: Callable[..., TestClient], filled: str) -> TestClient:
    """Auth on, filled catalog, every request carrying the admin bearer token and Accept: text/html."""
    c = make_client()
    c.headers.update({**HTML, **bearer(ADMIN_TOKEN)})
    return c


CSRF_RE = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_from(html: str) -> str:
    m = CSRF_RE.search(html)
    assert m, "no CSRF token in the page"
    return m.group(1)


def metrics_from(html: str) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r'data-metric="([^"]+)" data-value="(-?\d+)"', html)}
