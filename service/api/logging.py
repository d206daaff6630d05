"""Structured server logs: one JSON object per line, each line of a request carrying its request id.

* :class:`RequestLogMiddleware` (the outermost ASGI layer) picks the request id exactly as
  :mod:`service.api.middleware` does (the caller's sane ``X-Request-ID``, else a new uuid4 hex),
  hands it on to the inner layers through the ``X-Request-ID`` header so that the id logged and the
  id echoed are the same, keeps ``(request_id, method, path)`` in a :mod:`contextvars` variable for
  the whole request, and writes one access line per request (logger ``shredcat.access``:
  ``method``, ``path``, ``status``, ``duration_ms``).
* The context variable follows the request into FastAPI's thread pool (anyio copies the context)
  and into the extraction pool (:class:`ContextThreadPoolExecutor`), so every line logged while a
  request is served, in any thread, carries its id.
* :class:`JsonFormatter` renders ``{"ts", "level", "logger", "message", "request_id", "method",
  "path", ...}`` (plus ``status``/``duration_ms`` on access lines, ``exc_info`` with the traceback,
  and any ``extra=`` fields); :class:`TextFormatter` is the human form. :func:`logging_config` is the
  ``logging.config.dictConfig`` document ``shredcat serve`` hands to uvicorn, which applies it in
  every worker process (``SHREDCAT_LOG_FORMAT=json|text``, ``SHREDCAT_LOG_LEVEL``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import logging.config
import re
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.middleware import _clean_request_id

access_log = logging.getLogger("shredcat.access")


@dataclass(frozen=True, slots=True)
class RequestInfo:
    request_id: str
    method: str
    path: str


_current: contextvars.ContextVar[RequestInfo | None] = contextvars.ContextVar("shredcat_request", default=None)


def current_request() -> RequestInfo | None:
    """The request being served by this task or thread (None outside a request)."""
    return _current.get()


def current_request_id() -> str | None:
    info = _current.get()
    return None if info is None else info.request_id


# --- the ASGI layer ---------------------------------------------------------------------------


class RequestLogMiddleware:
    """Outermost layer: request id into the context (and the header), one access line per request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = list(scope.get("headers", []))
        sent = next((v.decode("latin-1") for k, v in headers if k.lower() == b"x-request-id"), None)
        rid = _clean_request_id(sent)
        if rid != sent:
            # The inner layer takes a sane header as it is: give it ours, so both use one id.
            headers = [(k, v) for k, v in headers if k.lower() != b"x-request-id"]
            headers.append((b"x-request-id", rid.encode("latin-1")))
            scope = {**scope, "headers": headers}
        method, path = str(scope.get("method", "")), str(scope.get("path", ""))
        token = _current.set(RequestInfo(rid, method, path))
        status = 500
        started = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            duration_ms = round((time.perf_counter() - started) * 1000, 3)
            access_log.info(
                "%s %s %d %.1fms", method, path, status, duration_ms, extra={"status": status, "duration_ms": duration_ms}
            )
            _current.reset(token)


class ContextThreadPoolExecutor(ThreadPoolExecutor):
    """A thread pool whose tasks run in the submitter's context (so they log its request id)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        return super().submit(contextvars.copy_context().run, fn, *args, **kwargs)


# --- formatting ---------------------------------------------------------------------------------

#: Attributes every LogRecord has: not copied as extra fields.
_RECORD_ATTRS = frozenset(logging.LogRecord("x", logging.INFO, "x", 0, "x", None, None).__dict__) | {
    "message",
    "asctime",
    "color_message",  # uvicorn's coloured duplicate of the message
    "taskName",
}
_REQUEST_FIELDS = ("request_id", "method", "path")


class RequestIdFilter(logging.Filter):
    """Stamps ``request_id`` (``-`` outside a request), ``method`` and ``path`` on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        info = _current.get()
        if getattr(record, "request_id", None) is None:
            record.request_id = info.request_id if info is not None else None
        if info is not None:
            if getattr(record, "method", None) is None:
                record.method = info.method
            if getattr(record, "path", None) is None:
                record.path = info.path
        return True


def _jsonable(v: Any) -> Any:
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, list | tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    return str(v)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC, ISO 8601, ms), level, logger, message, request_id (null
    outside a request), method and path (inside one), the record's ``extra`` fields, exc_info."""

    def format(self, record: logging.LogRecord) -> str:
        info = _current.get()
        doc: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        rid = getattr(record, "request_id", None)
        doc["request_id"] = rid if rid is not None else (info.request_id if info is not None else None)
        for name in ("method", "path"):
            v = getattr(record, name, None)
            if v is None and info is not None:
                v = getattr(info, name)
            if v is not None:
                doc[name] = v
        for k, v in record.__dict__.items():
            if k not in _RECORD_ATTRS and k not in doc and not k.startswith("_"):
                doc[k] = _jsonable(v)
        if record.exc_info:
            doc["exc_info"] = self.formatException(record.exc_info)
        elif record.exc_text:
            doc["exc_info"] = record.exc_text
        if record.stack_info:
            doc["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(doc, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger> [<request id>] <message>`` (``[-]`` outside a request)."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if getattr(record, "request_id", None) is None:
            record.request_id = current_request_id() or "-"
        return super().format(record)

    def formatMessage(self, record: logging.LogRecord) -> str:
        # One record, one line: a request's path or text holding a newline must not forge another
        # line (a traceback, appended after this, keeps its lines).
        return _CONTROL.sub(_escaped, super().formatMessage(record))


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _escaped(m: re.Match[str]) -> str:
    return repr(m.group())[1:-1]


#: uvicorn's ``trace`` level (``uvicorn.config.TRACE_LOG_LEVEL``), named here before uvicorn is imported.
TRACE_LEVEL = 5


def logging_config(level: str = "INFO", fmt: str = "json") -> dict[str, Any]:
    """The ``dictConfig`` document of the server: root and uvicorn's loggers on one stderr handler
    with the request filter and the ``json`` or ``text`` formatter."""
    if fmt not in ("json", "text"):
        raise ValueError(f"log format must be json or text, not {fmt!r}")
    lvl = level.upper()
    if lvl == "TRACE":
        # uvicorn's own level below DEBUG (protocol events), which it names only once imported.
        logging.addLevelName(TRACE_LEVEL, "TRACE")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request": {"()": f"{__name__}.RequestIdFilter"}},
        "formatters": {
            "json": {"()": f"{__name__}.JsonFormatter"},
            "text": {"()": f"{__name__}.TextFormatter"},
        },
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": fmt,
                "filters": ["request"],
            }
        },
        "root": {"level": lvl, "handlers": ["default"]},
        "loggers": {
            name: {"level": lvl, "handlers": [], "propagate": True}
            for name in ("uvicorn", "uvicorn.error", "uvicorn.access", "shredcat.access")
        }
        # Alembic narrates every revision check of /health at INFO.
        | {"alembic": {"level": "WARNING", "handlers": [], "propagate": True}},
    }


def configure_logging(level: str = "INFO", fmt: str = "json") -> None:
    """Install :func:`logging_config` in this process."""
    logging.config.dictConfig(logging_config(level, fmt))
