"""A ``register`` or ``register --bulk`` that fails on an embedded SQLite catalog it created leaves
no catalog file behind (nor its ``-wal``, ``-shm`` or ``-journal``): the command created and
migrated it only to commit there, and nothing was committed. A catalog that existed before, or
that holds rows, is kept."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from service.cli import main
from service.settings import get_settings
from tests.support.shred_writer import write_shredded

NS, T = "lake", "ev"


def _files(root: Path, n: int) -> list[Path]:
    root.mkdir(parents=True, exist_ok=True)
    return [write_shredded(root / f"f{i:02d}.parquet", [{"a": i}], {"a": "int64"}) for i in range(n)]


def _left(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.glob(db.name + "*"))


def _interrupting(at: str) -> Callable[..., Any]:
    from service.stats.extract import extract_file

    def extract(path: str, **kw: Any) -> Any:
        if path.endswith(at):
            raise KeyboardInterrupt
        return extract_file(path, **kw)

    return extract


def test_a_register_whose_commit_fails_leaves_no_catalog_it_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The files extract, the catalog is created for the commit, and the commit refuses (a file to
    remove that is not live): exit 1, and no catalog file. The same command that succeeds keeps it,
    and a later failure keeps the catalog that existed."""
    (f0, f1) = _files(tmp_path / "lake", 2)
    db = tmp_path / "new.db"
    base = ["register", "--database-url", f"sqlite:///{db}", "--table", f"{NS}.{T}", "--workers", "1"]
    assert main([*base, str(f0), "--remove", str(tmp_path / "lake" / "gone.parquet")]) == 1
    assert "not a live file" in capsys.readouterr().err
    assert _left(db) == []
    assert main([*base, str(f0)]) == 0
    assert main([*base, str(f1), "--remove", str(tmp_path / "lake" / "gone.parquet")]) == 1
    assert db.exists()


@pytest.mark.parametrize("case", ["unreadable", "interrupted"])
def test_a_bulk_register_failing_in_a_later_batch_leaves_no_catalog_it_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    """Batches of 2: the first extracts, the catalog is created for the load, and the third batch
    fails (a file that is not Parquet, or Ctrl-C): exit 1 or 130, and no catalog file."""
    monkeypatch.setenv("SHREDCAT_MAX_FILES_PER_COMMIT", "2")
    get_settings.cache_clear()
    files = _files(tmp_path / "lake", 6)
    if case == "unreadable":
        files[4].write_bytes(b"not parquet at all")
    else:
        monkeypatch.setattr("service.stats.extract.extract_file", _interrupting(files[4].name))
    db = tmp_path / "new.db"
    args = ["register", "--bulk", "--database-url", f"sqlite:///{db}", "--table", f"{NS}.{T}", "--workers", "1"]
    assert main([*args, str(tmp_path / "lake")]) == (1 if case == "unreadable" else 130)
    capsys.readouterr()
    assert _left(db) == []


def test_only_a_catalog_holding_nothing_but_its_schema_is_removed(tmp_path: Path) -> None:
    """Another process may have committed to the file meanwhile: then it stays."""
    from service.catalog import Catalog
    from service.catalog.db import upgrade_to_head
    from service.cli._common import _remove_if_empty

    empty, used = tmp_path / "empty.db", tmp_path / "used.db"
    for db in (empty, used):
        upgrade_to_head(f"sqlite:///{db}")
    with Catalog(f"sqlite:///{used}") as cat:
        cat.register(NS, T, [str(p) for p in _files(tmp_path / "lake", 1)])
    _remove_if_empty(str(empty))
    _remove_if_empty(str(used))
    assert _left(empty) == [] and used.exists()
