"""Screenshots of the browser tests, taken for the test artifacts and never asserted: a capture that
fails (Chromium's "Unable to capture screenshot", met once in a fresh-clone run and not when run
again) is tried once more, then logged, and the test goes on. Only the capture is forgiven: what
the test checks on the page fails it as ever."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def save_screenshot(page: Any, path: Path, *, full_page: bool = False) -> bool:
    """Save ``page``'s screenshot at ``path`` (its folder made); whether it was saved."""
    from playwright.sync_api import Error

    path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in (1, 2):
        try:
            page.screenshot(path=str(path), full_page=full_page)
            return True
        except Error as e:
            if attempt == 2:
                log.warning("no screenshot %s (an artifact, not a check): %s", path.name, _line(e))
            else:
                log.info("screenshot %s failed (%s): trying once more", path.name, _line(e))
    return False


def _line(e: BaseException) -> str:
    return str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
