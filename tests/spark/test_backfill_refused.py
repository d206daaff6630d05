"""``shredcat backfill --local`` against a service that refuses the token's commits (no Spark)."""

from __future__ import annotations

import hashlib
import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.client import Forbidden, NotFound
from service.spark import LocalService, backfill
from tests.support.events import write_events

WRITER = "writer-token"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("refused-lake")
    for i in range(6):
        write_events(out / "events" / f"part-{i}.parquet", 10, i * 10)
    return out


@pytest.fixture(scope="module")
def service(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    db = tmp_path_factory.mktemp("refused-catalog") / "catalog.db"
    tokens = {hashlib.sha256(WRITER.encode()).hexdigest(): "writer"}
    with LocalService(f"sqlite:///{db}", [str(root)], auth="on", tokens=tokens) as svc:
        yield svc


def _count_extractions(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    module = importlib.import_module("service.spark.backfill")  # the package exports the function
    real = module.extract_locally
    calls: list[int] = []

    def counting(paths: Any, **kw: Any) -> Any:
        calls.append(len(paths))
        return real(paths, **kw)

    monkeypatch.setattr(module, "extract_locally", counting)
    return calls


def test_cli_backfill_stops_at_the_first_refused_commit(
    root: Path, service: LocalService, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer's token on a missing table: the first batch's commit is refused (403, creating
    needs the admin role), as every later one would be. One line, exit 1, no more commits (each
    of the 6 batches used to be extracted, committed and refused, a FAILED line each)."""
    from service.cli import main

    monkeypatch.setenv("SHREDCAT_URL", service.url)
    monkeypatch.setenv("SHREDCAT_TOKEN", WRITER)
    assert main(["backfill", "--local", "--table", "lake.missing", str(root / "events"), "--batch-size", "1"]) == 1
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("shredcat backfill: ")]
    assert len(errors) == 1, captured.err
    assert "batch 1/6 refused, backfill stopped" in errors[0] and "admin role" in errors[0], errors
    assert "FAILED" not in captured.err and "Traceback" not in captured.err and captured.out == ""
    with service.client(token=WRITER) as c, pytest.raises(NotFound):
        c.load_table("lake", "missing")


def test_backfill_extracts_no_wave_after_a_refused_commit(
    root: Path, service: LocalService, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three waves of one batch each: the first wave's commit is refused (403) and the later
    waves are never extracted (the second used to be extracted while the first committed)."""
    calls = _count_extractions(monkeypatch)
    with service.client(token=WRITER) as c, pytest.raises(Forbidden):
        backfill(None, str(root / "events"), "lake.waves", client=c, batch_size=2, wave_files=2, progress=None)
    assert calls == [2], calls
