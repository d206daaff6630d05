"""``shredcat register`` holds no catalog connection while it extracts files (an extraction may
take hours: a PostgreSQL session slot, and a pooled connection, for nothing); it connects to check
the catalog before reading any file, then again to commit. On both backends, counted where the
database sees them: PostgreSQL's sessions on the catalog database, SQLite's open handles of the
catalog file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.pool import NullPool

from service.cli import main
from service.settings import get_settings
from tests.support.shred_writer import write_shredded


def _connections(url: str) -> int:
    """Connections to the catalog now open, but the one counting them."""
    u = make_url(url)
    if u.get_backend_name() == "sqlite":
        assert u.database is not None
        target = os.path.realpath(u.database)
        fds = Path("/proc/self/fd")
        return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) == target)
    observer = create_engine(url, poolclass=NullPool)
    try:
        with observer.connect() as c:
            return int(
                c.execute(
                    text("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
                ).scalar_one()
            )
    finally:
        observer.dispose()


@pytest.mark.parametrize("bulk", [False, True], ids=["register", "register-bulk"])
def test_no_connection_is_held_while_files_are_extracted(
    catalog_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: bool
) -> None:
    """An existing table (the run connects to check it), five files: while each is extracted (for
    --bulk, the first batch's, before the load's transaction starts) no connection is open."""
    from service.stats.extract import extract_file

    paths = [str(write_shredded(tmp_path / f"f{i}.parquet", [{"a": i}], {"a": "int64"})) for i in range(5)]
    base = ["--database-url", catalog_url, "--table", "lake.ev", "--workers", "1"]
    assert main(["register", *base, paths[0]]) == 0
    seen: list[int] = []

    def extract(path: str, **kw: Any) -> Any:
        if len(seen) < 3:  # the first batch of the bulk load holds three files
            seen.append(_connections(catalog_url))
        return extract_file(path, **kw)

    monkeypatch.setattr("service.stats.extract.extract_file", extract)
    if bulk:
        monkeypatch.setenv("SHREDCAT_MAX_FILES_PER_COMMIT", "3")
    get_settings.cache_clear()
    try:
        assert main(["register", *(["--bulk"] if bulk else []), *base, *paths[1:]]) == 0
    finally:
        get_settings.cache_clear()
    assert seen == [0, 0, 0]
