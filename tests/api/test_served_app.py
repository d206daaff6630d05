"""The app ``shredcat serve`` runs in each worker settles the process's garbage collector once
started (``service.api.app.settle_collector``); an app built by a library user or a test does not
touch its host's collector."""

from __future__ import annotations

import argparse
import gc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.api import create_app, serve_app
from service.settings import Settings


@pytest.fixture
def restore_collector() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def _settings(tmp_path: Path) -> Settings:
    return Settings(database_url=f"sqlite:///{tmp_path}/c.db", auth="off")


def test_the_served_app_settles_the_collector(tmp_path: Path, restore_collector: None) -> None:
    from service.catalog.db import upgrade_to_head

    upgrade_to_head(f"sqlite:///{tmp_path}/c.db")
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    with TestClient(create_app(_settings(tmp_path))) as client:
        assert client.get("/health").status_code == 200
        assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0
    with TestClient(create_app(_settings(tmp_path), settle=True)) as client:
        assert client.get("/health").status_code == 200
        assert gc.get_threshold() == (20_000, 20, 10) and gc.get_freeze_count() > 0


def test_shredcat_serve_runs_the_served_app(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    from service.cli import serve

    seen: dict[str, Any] = {}
    monkeypatch.setattr(uvicorn, "run", lambda target, **kw: seen.update(target=target, **kw))
    serve._serve(argparse.Namespace(host="127.0.0.1", port=0, workers=2), "info", "text", "", 7)
    assert seen["timeout_keep_alive"] == 7  # SHREDCAT_KEEPALIVE_TIMEOUT_SECONDS
    module, name = seen["target"].split(":")
    assert seen["factory"] is True and getattr(__import__(module, fromlist=[name]), name) is serve_app
