"""``shredcat migrate`` and ``shredcat serve`` argument and settings handling (the e2e test runs both)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from service.cli import main
from service.settings import get_settings


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_migrate_is_idempotent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from service.catalog.db import current_revision

    url = f"sqlite:///{tmp_path / 'c.db'}"
    assert main(["migrate", "--database-url", url]) == 0
    assert main(["migrate", "--database-url", url]) == 0
    out = capsys.readouterr().out
    assert out.count("catalog schema at revision") == 2
    assert current_revision(url) is not None


def test_migrate_uses_settings_and_reports_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SHREDCAT_DATABASE_URL", f"sqlite:///{tmp_path}/nodir/x/c.db")
    assert main(["migrate"]) == 1
    assert capsys.readouterr().err.startswith("shredcat migrate:")


@pytest.mark.parametrize(
    ("env", "args"),
    [
        ({"SHREDCAT_WAREHOUSE_ROOTS": '["relative"]'}, []),
        ({"SHREDCAT_TOKENS": '{"my-secret-token": "admin"}'}, []),
        ({"SHREDCAT_AUTH": "maybe"}, []),
        ({}, ["--workers", "0"]),
    ],
)
def test_serve_refuses_bad_settings(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: dict[str, str], args: list[str]
) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert main(["serve", "--port", "0", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("shredcat serve:")
    assert "my-secret-token" not in err
