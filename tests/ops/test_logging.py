"""Structured logs (``service.api.logging``): one JSON object per line, and every line logged while
a request is served, in any thread, carries that request's id, method and path."""

from __future__ import annotations

import json
import logging
import re
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

warnings.filterwarnings("ignore", message=".*httpx2.*")

from fastapi import Request  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from service.api import create_app  # noqa: E402
from service.api.logging import (  # noqa: E402
    JsonFormatter,
    RequestIdFilter,
    TextFormatter,
    current_request_id,
    logging_config,
)
from service.catalog.db import upgrade_to_head  # noqa: E402
from service.settings import Settings, get_settings  # noqa: E402
from tests.api.conftest import READER, make_settings  # noqa: E402

log = logging.getLogger("tests.ops.logging")


class _Capture(logging.Handler):
    def __init__(self, formatter: logging.Formatter) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(formatter)
        self.addFilter(RequestIdFilter())
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def capture() -> Iterator[_Capture]:
    handler = _Capture(JsonFormatter())
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(old)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    url = f"sqlite:///{tmp_path / 'catalog.db'}"
    upgrade_to_head(url)
    app = create_app(make_settings(url, [str(tmp_path)]))

    def inner() -> str:
        log.info("in the pool, request %s", current_request_id())
        return current_request_id() or ""

    @app.get("/_test/log")
    def log_everywhere(request: Request) -> dict[str, Any]:
        log.info("in the route thread")
        ctx = request.app.state.ctx
        pooled = ctx.executor.submit(inner).result()
        log.warning("done", extra={"pooled": pooled})
        return {"pooled": pooled}

    @app.get("/_test/boom")
    def boom() -> None:
        log.info("about to fail")
        raise RuntimeError("kaput")

    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def _lines(capture: _Capture) -> list[dict[str, Any]]:
    return [json.loads(line) for line in capture.lines]


def test_every_line_of_a_request_carries_its_id(client: TestClient, capture: _Capture) -> None:
    r = client.get("/_test/log", headers={"X-Request-ID": "req-abc-1"})
    assert r.status_code == 200 and r.headers["x-request-id"] == "req-abc-1"
    assert r.json() == {"pooled": "req-abc-1"}  # the extraction pool runs in the request's context
    lines = [x for x in _lines(capture) if x["logger"] in ("tests.ops.logging", "shredcat.access")]
    assert [x["message"] for x in lines] == [
        "in the route thread",
        "in the pool, request req-abc-1",
        "done",
        lines[-1]["message"],
    ]
    for x in lines:
        assert x["request_id"] == "req-abc-1"
        assert (x["method"], x["path"]) == ("GET", "/_test/log")
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", x["ts"])
        assert x["level"] in ("INFO", "WARNING")
    assert lines[2]["pooled"] == "req-abc-1"  # extra= fields are kept
    access = lines[-1]
    assert access["logger"] == "shredcat.access" and access["status"] == 200
    assert access["message"].startswith("GET /_test/log 200 ") and access["duration_ms"] >= 0


def test_a_generated_id_is_logged_and_echoed(client: TestClient, capture: _Capture) -> None:
    for sent in (None, "has spaces in it", "x" * 200):
        r = client.get("/v1/namespaces/nope", headers={**READER, **({"X-Request-ID": sent} if sent else {})})
        assert r.status_code == 404
        rid = r.headers["x-request-id"]
        assert re.fullmatch(r"[0-9a-f]{32}", rid)
        access = [x for x in _lines(capture) if x["logger"] == "shredcat.access"][-1]
        assert access["request_id"] == rid and access["status"] == 404
    ids = {x["request_id"] for x in _lines(capture) if x["logger"] == "shredcat.access"}
    assert len(ids) == 3


def test_a_500_is_logged_with_its_id_and_traceback(client: TestClient, capture: _Capture) -> None:
    r = client.get("/_test/boom", headers={"X-Request-ID": "req-boom"})
    assert r.status_code == 500
    assert r.json()["error"]["details"]["request-id"] == "req-boom"
    assert "kaput" not in r.text
    lines = _lines(capture)
    failed = [x for x in lines if "exc_info" in x]
    assert failed and all(x["request_id"] == "req-boom" for x in failed)
    assert "RuntimeError: kaput" in failed[0]["exc_info"]
    assert [x["status"] for x in lines if x["logger"] == "shredcat.access"] == [500]
    server_side = [x for x in lines if x["logger"].startswith(("tests.ops", "service", "shredcat"))]
    assert len(server_side) >= 3 and all(x["request_id"] == "req-boom" for x in server_side)


def test_lines_outside_a_request_have_a_null_id(capture: _Capture) -> None:
    log.info("no request here")
    (line,) = [x for x in _lines(capture) if x["message"] == "no request here"]
    assert line["request_id"] is None and "method" not in line and "path" not in line


def test_text_format_shows_the_id() -> None:
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "hello %s", ("world",), None)
    RequestIdFilter().filter(record)
    assert TextFormatter().format(record).endswith(" INFO x [-] hello world")
    record.request_id = "r-1"
    assert TextFormatter().format(record).endswith("INFO x [r-1] hello world")


def test_text_lines_cannot_be_forged_with_newlines() -> None:
    """A request path holding %0A (or any control character) stays on its record's line; a
    traceback still follows on lines of its own."""
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "GET %s 200", ("/a\n2026 INFO forged\r\x1b[31m",), None)
    RequestIdFilter().filter(record)
    line = TextFormatter().format(record)
    assert "\n" not in line and "\r" not in line and "\x1b" not in line
    assert line.endswith("GET /a\\n2026 INFO forged\\r\\x1b[31m 200")
    # Percent-decoded paths may hold Unicode's line breaks too (NEL, U+2028, U+2029).
    record = logging.LogRecord("x", logging.INFO, __file__, 1, "GET %s 200", ("/a\x85b\u2028c\u2029d",), None)
    RequestIdFilter().filter(record)
    line = TextFormatter().format(record)
    assert len(line.splitlines()) == 1 and line.endswith("GET /a\\x85b\\u2028c\\u2029d 200")
    try:
        raise ValueError("boom")
    except ValueError:
        import sys

        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed\n", (), sys.exc_info())
    RequestIdFilter().filter(failed)
    out = TextFormatter().format(failed)
    assert out.splitlines()[0].endswith("failed\\n") and "Traceback (most recent call last):" in out.splitlines()[1]


def test_logging_config_is_a_valid_dict_config() -> None:
    import logging.config

    for fmt in ("json", "text"):
        cfg = logging_config("debug", fmt)
        assert cfg["handlers"]["default"]["formatter"] == fmt
        logging.config.dictConfig({**cfg, "root": {"level": "WARNING", "handlers": []}, "loggers": {}})
    with pytest.raises(ValueError):
        logging_config("info", "xml")


def test_log_format_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    from service.cli import main

    monkeypatch.delenv("SHREDCAT_LOG_FORMAT", raising=False)
    assert Settings().log_format == "json"
    monkeypatch.setenv("SHREDCAT_LOG_FORMAT", "text")
    assert Settings().log_format == "text"
    monkeypatch.setenv("SHREDCAT_LOG_FORMAT", "xml")
    get_settings.cache_clear()
    try:
        assert main(["serve"]) == 2  # refused before uvicorn starts
    finally:
        get_settings.cache_clear()
