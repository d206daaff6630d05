"""Fixtures of the REST API tests: real shredded files written by DuckDB, a migrated catalog
(SQLite copied from a migrated template; PostgreSQL in a database of its own), and apps with
auth on and one token per role."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# starlette's TestClient warns that httpx is deprecated in favour of httpx2: not ours to fix.
warnings.filterwarnings("ignore", message=".*httpx2.*")

from fastapi.testclient import TestClient  # noqa: E402

from service.api import create_app  # noqa: E402
from service.api.auth import hash_token  # noqa: E402
from service.settings import Settings  # noqa: E402

TOKENS = {"reader": "reader-token-1", "writer": "writer-token-2", "admin": "admin-token-3"}
WRONG_TOKEN = "not-a-configured-token"


def auth(role: str | None) -> dict[str, str]:
    if role is None:
        return {}
    if role == "wrong":
        return {"Authorization": f"Bearer {WRONG_TOKEN}"}
    return {"Authorization": f"Bearer {TOKENS[role]}"}


ADMIN = auth("admin")
WRITER = auth("writer")
READER = auth("reader")


def write_variant_file(path: Path, n: int = 100, offset: int = 0, *, extra: str = "") -> Path:
    """A DuckDB-shredded file: v = {id: bigint offset..offset+n-1, name: 'n<r>', score: double}."""
    import duckdb

    path.parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect()
    try:
        con.execute(
            f"""COPY (SELECT {{'id': (r + {offset})::BIGINT, 'name': 'n' || r, 'score': (r * 0.5)::DOUBLE{extra}}}::VARIANT
                       AS v FROM range({n}) t(r)) TO '{path}' (FORMAT parquet)"""
        )
    finally:
        con.close()
    return path


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse root holding three shredded files (f0..f2, 100 rows each, ids 0..299).
    Shared by the session: tests must not change it (build their own under tmp_path)."""
    root = tmp_path_factory.mktemp("lake") / "warehouse"
    for i in range(3):
        write_variant_file(root / "events" / f"f{i}.parquet", 100, i * 100)
    return root


def make_settings(database_url: str, roots: list[str], **kw: Any) -> Settings:
    base: dict[str, Any] = {
        "database_url": database_url,
        "warehouse_roots": roots,
        "auth": "on",
        "tokens": {hash_token(t): role for role, t in TOKENS.items()},
    }
    base.update(kw)
    return Settings(**base)


@pytest.fixture
def app_factory(sqlite_url: str, warehouse: Path) -> Iterator[Callable[..., TestClient]]:
    """``app_factory(**settings)`` -> a started TestClient (lifespan run); all closed at the end."""
    clients: list[TestClient] = []

    def make(**kw: Any) -> TestClient:
        kw.setdefault("database_url", sqlite_url)
        kw.setdefault("roots", [str(warehouse)])
        settings = make_settings(kw.pop("database_url"), kw.pop("roots"), **kw)
        c = TestClient(create_app(settings), raise_server_exceptions=False)
        c.__enter__()
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.__exit__(None, None, None)


@pytest.fixture
def client(app_factory: Callable[..., TestClient]) -> TestClient:
    return app_factory()


@pytest.fixture
def table(client: TestClient) -> str:
    """Namespace ``lake`` with table ``events`` (Variant column ``v``); returns the table's URL."""
    r = client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    r = client.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    return "/v1/namespaces/lake/tables/events"


def assert_error(r: Any, status: int, type_: str | None = None, field: str | None = None) -> dict[str, Any]:
    assert r.status_code == status, r.text
    body = r.json()
    assert set(body) == {"error"}, body
    err = body["error"]
    assert {"type", "message", "details", "code"} <= set(err), err
    assert err["code"] == status
    if type_ is not None:
        assert err["type"] == type_, err
    if field is not None:
        assert err["details"].get("field") == field, err
    return err


# --- PostgreSQL (helpers of tests/conftest.py) -----------------------------------------------------


@pytest.fixture
def pg_url(_pg_template: str) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database of its own (cloned from the worker's template, dropped
    afterwards). Skipped without a server on a laptop, failing when CI=true."""
    from tests.conftest import _db_url, create_pg_database, drop_pg_database

    name = create_pg_database("shredcat_api", template=_pg_template)
    try:
        yield _db_url(name)
    finally:
        drop_pg_database(name)

