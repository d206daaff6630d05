"""The browser tests' screenshot helper (:mod:`tests.support.screenshots`), with a stand-in page (no
browser): a failed capture is retried once, then logged, and never fails the test."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Error


class Page:
    """Fails its first ``failures`` screenshots as Chromium did ("Unable to capture screenshot")."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls: list[dict[str, Any]] = []

    def screenshot(self, **kw: Any) -> bytes:
        self.calls.append(kw)
        if len(self.calls) <= self.failures:
            raise Error("Protocol error (Page.captureScreenshot): Unable to capture screenshot")
        Path(kw["path"]).write_bytes(b"png")
        return b"png"


def test_a_failed_capture_is_retried_once(tmp_path: Path) -> None:
    from tests.support.screenshots import save_screenshot

    page = Page(failures=1)
    target = tmp_path / "shots" / "desktop-table.png"
    assert save_screenshot(page, target, full_page=True) is True
    assert target.read_bytes() == b"png"
    assert page.calls == [{"path": str(target), "full_page": True}] * 2


def test_a_capture_failing_twice_is_logged_and_the_test_goes_on(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    from tests.support.screenshots import save_screenshot

    page = Page(failures=5)
    with caplog.at_level(logging.INFO, logger="tests.support.screenshots"):
        assert save_screenshot(page, tmp_path / "x.png") is False
    assert len(page.calls) == 2
    (warning,) = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "no screenshot x.png" in warning.getMessage() and "Unable to capture screenshot" in warning.getMessage()


def test_only_the_capture_is_forgiven(tmp_path: Path) -> None:
    """Anything but the browser's error (a bug in the test itself) still fails the test."""
    from tests.support.screenshots import save_screenshot

    class Broken:
        def screenshot(self, **kw: Any) -> None:
            raise AssertionError("not a capture failure")

    with pytest.raises(AssertionError):
        save_screenshot(Broken(), tmp_path / "y.png")
