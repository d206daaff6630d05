"""``shredcat migrate`` and ``shredcat serve`` argument and settings handling (the e2e test runs both)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

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


def test_migrate_refuses_what_it_cannot_do_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unknown revisions, a catalog a newer shredcat migrated, and a revision below the catalog's
    are one line each (Alembic's tracebacks before); --downgrade takes a catalog back."""
    import sqlite3

    from service.catalog.db import SCHEMA_REVISION, current_revision

    url = f"sqlite:///{tmp_path / 'c.db'}"
    assert main(["migrate", "--database-url", url, "--revision", "bogus"]) == 2
    assert "unknown revision 'bogus'" in capsys.readouterr().err
    assert main(["migrate", "--database-url", url]) == 0
    assert main(["migrate", "--database-url", url, "--revision", "0005"]) == 1
    err = capsys.readouterr().err
    assert f"already at revision {SCHEMA_REVISION}, past 0005" in err and "--downgrade 0005" in err
    assert main(["migrate", "--database-url", url, "--downgrade", "0007"]) == 0
    assert current_revision(url) == "0007"
    assert main(["migrate", "--database-url", url, "--downgrade", "0008"]) == 1  # not a downgrade
    assert main(["migrate", "--database-url", url, "--downgrade", "head"]) == 2
    assert main(["migrate", "--database-url", url]) == 0 and current_revision(url) == SCHEMA_REVISION
    # Migrated by a newer shredcat: migrate and every other command say so, without a traceback.
    with sqlite3.connect(tmp_path / "c.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '9999'")
    capsys.readouterr()
    assert main(["migrate", "--database-url", url]) == 1
    assert main(["tables", "--database-url", url]) == 1
    err = capsys.readouterr().err
    assert err.count("revision 9999, which this shredcat") == 2 and "Traceback" not in err, err


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
        ({"SHREDCAT_LOG_LEVEL": "LOUD"}, []),
        ({"SHREDCAT_DATABASE_URL": "foo://bar"}, []),
        ({"SHREDCAT_DATABASE_URL": "shredcat.db"}, []),
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
    if env:
        assert "SHREDCAT_" + next(iter(env))[len("SHREDCAT_") :] in err, err  # the variable is named


@pytest.mark.parametrize("command", [["tables"], ["stats", "x.parquet"], ["prune", "--table", "a.b", "id = 1"]])
def test_every_command_refuses_bad_settings_with_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    monkeypatch.setenv("SHREDCAT_MAX_PAGE_SIZE", "abc")
    get_settings.cache_clear()
    try:
        assert main(command) == 2
    finally:
        get_settings.cache_clear()
    err = capsys.readouterr().err
    assert err.startswith(f"shredcat {command[0]}: invalid settings: SHREDCAT_MAX_PAGE_SIZE:"), err
    assert "Traceback" not in err and "abc" not in err


@pytest.mark.parametrize(
    ("env", "args", "needle"),
    [
        ({"SHREDCAT_DATABASE_URL": "shredcat.db"}, [], "invalid settings: SHREDCAT_DATABASE_URL:"),
        ({"SHREDCAT_DATABASE_URL": "foo://bar"}, [], "invalid settings: SHREDCAT_DATABASE_URL:"),
        ({}, ["--database-url", "nope"], "--database-url must be"),
    ],
)
def test_a_bad_database_url_alone_is_exit_2_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], env: dict[str, str], args: list[str], needle: str
) -> None:
    """The CLI's fast path (no other SHREDCAT_ variable: pydantic-settings not imported) checks
    the URL the way the settings do."""
    import os

    for k in list(os.environ):
        if k.upper().startswith("SHREDCAT_"):
            monkeypatch.delenv(k)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    get_settings.cache_clear()
    assert main(["tables", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"shredcat tables: {needle}") and "Traceback" not in err, err


@pytest.mark.parametrize(
    ("variable", "value", "kind"),
    [
        ("SHREDCAT_WAREHOUSE_ROOTS", "/data/lake", "a JSON list"),
        ("shredcat_warehouse_roots", "/data/lake", "a JSON list"),
        ("SHREDCAT_TOKENS", "my-secret-token=admin", "a JSON object"),
        ("SHREDCAT_SESSION_SECRETS", "my-secret-token", "a JSON list"),
        ("SHREDCAT_READ_DATABASE_URLS", "postgresql://standby/db", "a JSON list"),
    ],
)
@pytest.mark.parametrize("command", [["tables"], ["serve", "--port", "0"]])
def test_a_json_setting_that_is_not_json_is_one_line_exit_2(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    kind: str,
    command: list[str],
) -> None:
    # pydantic-settings decodes these before validating them: its error was a traceback naming
    # the field, and the command exited 1.
    monkeypatch.setenv(variable, value)
    assert main(command) == 2
    err = capsys.readouterr().err
    assert err == f"shredcat {command[0]}: invalid settings: {variable.upper()}: must be {kind} (not JSON)\n"


def test_an_unreachable_catalog_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """libpq's refusal holds a second, indented line ("Is the server running on that host...")."""
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        url = f"postgresql://postgres@127.0.0.1:{s.getsockname()[1]}/x"
    assert main(["tables", "--database-url", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith("shredcat tables: the catalog database is unavailable: connection failed:"), err
    assert "Is the server running" in err and len(err.splitlines()) == 1, err


@pytest.mark.parametrize("existing", [True, False], ids=["existing-table", "new-table"])
def test_register_opens_the_catalog_once(
    sqlite_url: str, warehouse: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    existing: bool,
) -> None:
    """The catalog checked before extraction is the one the commit uses: one schema check per run
    (it was opened twice, its first engine never closed), and each connection closed: one for the
    check, given back before extraction (no idle session held while files are read,
    tests/cli/test_register_connections.py), one for the commit."""
    from sqlalchemy import event
    from sqlalchemy.pool import Pool

    from service.catalog import db

    files = [str(warehouse / "events" / f"f{i}.parquet") for i in range(2)]
    if existing:
        assert main(["register", "--database-url", sqlite_url, "--table", "lake.events", files[0]]) == 0
    seen = {"connections": 0, "closed": 0, "schema checks": 0}

    def connected(*_: object) -> None:
        seen["connections"] += 1

    def closed(*_: object) -> None:
        seen["closed"] += 1

    def revision(engine: Any) -> str | None:
        seen["schema checks"] += 1
        return read_revision(engine)

    read_revision = db.current_revision
    monkeypatch.setattr(db, "current_revision", revision)
    event.listen(Pool, "connect", connected)
    event.listen(Pool, "close", closed)
    try:
        assert main(["register", "--database-url", sqlite_url, "--table", "lake.events", files[1]]) == 0
    finally:
        event.remove(Pool, "connect", connected)
        event.remove(Pool, "close", closed)
    assert "1 added" in capsys.readouterr().out
    assert seen == {"connections": 2, "closed": 2, "schema checks": 1}
