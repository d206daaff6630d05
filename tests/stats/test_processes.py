"""Local files extracted in worker processes (``shredcat register``/``refresh``, ``backfill --local``)."""

from __future__ import annotations

import signal
from typing import Any

import pytest


def _sigint_ignored(path: str) -> tuple[str, dict[str, Any], None]:
    # Module level: the workers find it by name.
    return path, {"ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN}, None


def test_workers_leave_ctrl_c_to_the_command(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal's Ctrl-C reaches the whole process group: each worker that did not ignore it
    printed a KeyboardInterrupt traceback under the command's own exit 130."""
    import importlib

    backfill = importlib.import_module("service.spark.backfill")  # the package exports a function of that name
    monkeypatch.setattr(backfill, "_extract_one", _sigint_ignored)
    out = backfill.extract_locally([f"/lake/f{i}.parquet" for i in range(64)], workers=2)
    assert [p for p, _, _ in out] == [f"/lake/f{i}.parquet" for i in range(64)]
    assert all(payload["ignored"] for _, payload, _ in out)


def test_stopping_early_ends_the_workers() -> None:
    """The caller's interrupt or error (here: closing the iterator) ends the workers at once,
    rather than after every item already handed to them."""
    import multiprocessing

    from service.stats.batch import in_processes

    results = in_processes(str, range(100_000), 2, chunksize=1)
    assert next(results) == "0"
    results.close()
    assert multiprocessing.active_children() == []
