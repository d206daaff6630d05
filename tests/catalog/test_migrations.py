"""Alembic migrations: empty -> head -> base on both backends, and no drift from the models."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy import inspect

from service.catalog.db import current_revision, downgrade, make_engine, schema_drift, upgrade_to_head
from service.catalog.models import Base

REPO = Path(__file__).resolve().parents[2]


def _tables(url: str) -> set[str]:
    engine = make_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_downgrade_round_trip(empty_db_url: str) -> None:
    assert current_revision(empty_db_url) is None
    upgrade_to_head(empty_db_url)
    assert current_revision(empty_db_url) == "0001"
    assert set(Base.metadata.tables) <= _tables(empty_db_url)
    upgrade_to_head(empty_db_url)  # idempotent
    downgrade(empty_db_url, "base")
    assert current_revision(empty_db_url) is None
    assert _tables(empty_db_url) <= {"alembic_version"}
    upgrade_to_head(empty_db_url)  # and up again from scratch
    assert current_revision(empty_db_url) == "0001"


def test_models_and_migrations_do_not_drift(catalog_url: str) -> None:
    assert schema_drift(catalog_url) == []


def test_partial_indexes_exist(catalog_url: str) -> None:
    engine = make_engine(catalog_url)
    try:
        names = {ix["name"] for ix in inspect(engine).get_indexes("ducklake_file_variant_stats")}
    finally:
        engine.dispose()
    assert {
        f"ix_ducklake_file_variant_stats_live_{k}"
        for k in ("min_num", "max_num", "min_real", "max_real", "min_bin", "max_bin")
    } <= names


def test_alembic_command_line_uses_the_url_argument(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/cli.db"
    alembic = Path(sys.executable).with_name("alembic")
    out = subprocess.run(
        [str(alembic), "-x", f"url={url}", "upgrade", "head"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert current_revision(url) == "0001"
