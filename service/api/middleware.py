"""The outermost ASGI layer: request id, authentication and body size before the body, latency
metric, and the last-resort 500.

* ``X-Request-ID``: echoed when the caller sends a sane one (≤ 128 printable ASCII), else a new
  uuid4 hex; stored in ``scope["state"]["request_id"]`` for handlers and logs.
* The bearer token is checked against the role the matched route requires (:class:`RouteRoles`)
  before a byte of the body is read: an unauthenticated or under-privileged caller gets its 401/403
  at once, whatever it is sending. The route's own dependency checks again (cheap) and records
  the principal.
* Bodies larger than ``max_body_bytes`` are refused with 413 before the route runs (by
  ``Content-Length`` before reading, or by counting a chunked body while it streams in, cut at the
  limit; the counted body is then replayed to the app).
* Any exception escaping the app becomes a logged 500 with the error model, never a traceback.
* The latency metric's labels are bounded: methods outside :data:`METHODS` are counted as
  ``other`` and requests no route matches as route ``unmatched``.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.auth import PRINCIPAL_STATE, Authenticator, RouteRoles
from service.api.errors import error_body
from service.api.metrics import Metrics
from service.errors import ShredcatError
from service.values.text import NUL_NOT_STORED

log = logging.getLogger("service.api")

_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
#: Methods with a label value of their own in the metrics; any other is ``other``.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _clean_request_id(raw: str | None) -> str:
    if raw and len(raw) <= 128 and all(33 <= ord(c) < 127 for c in raw):
        return raw
    return uuid.uuid4().hex


class _TooLarge(Exception):
    pass


class RequestContextMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        metrics: Metrics,
        authenticator: Authenticator,
        roles: RouteRoles,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics
        self.authenticator = authenticator
        self.roles = roles

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        rid = _clean_request_id(headers.get("x-request-id"))
        scope.setdefault("state", {})["request_id"] = rid
        started = time.perf_counter()
        status_holder = {"status": 500, "started": False}

        async def send_wrapper(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_holder["status"] = message["status"]
                status_holder["started"] = True
                hs = list(message.get("headers", []))
                hs.append((b"x-request-id", rid.encode("latin-1")))
                message = {**message, "headers": hs}
            await send(message)

        async def respond_error(
            status: int,
            type_: str,
            msg: str,
            details: dict[str, Any] | None = None,
            extra_headers: tuple[tuple[bytes, bytes], ...] = (),
        ) -> None:
            body = json.dumps(error_body(status, type_, msg, details)).encode()
            await send_wrapper(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        *extra_headers,
                    ],
                }
            )
            await send_wrapper({"type": "http.response.body", "body": body})

        try:
            app_receive = receive
            if "\x00" in scope.get("path", "") or b"%00" in scope.get("query_string", b""):
                # A name, prefix or path holding NUL names nothing (the catalog stores no such text,
                # and PostgreSQL cannot compare it): one answer on both backends, before any route.
                await respond_error(422, "bad_input", f"the request's URL holds a NUL character (%00): {NUL_NOT_STORED}")
                return
            role = self.roles.role_for(scope)
            if role is not None:
                try:
                    principal = self.authenticator.check(headers.get("authorization"), role)
                    # The route's dependency takes it from here instead of hashing the token again.
                    scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
                except ShredcatError as e:
                    challenge = ((b"www-authenticate", b'Bearer realm="shredcat"'),) if e.http_status == 401 else ()
                    await respond_error(e.http_status, e.code, e.message, extra_headers=challenge)
                    return
            if scope.get("method") in _BODY_METHODS:
                limit = self.max_body_bytes
                declared = headers.get("content-length")
                if declared is not None:
                    try:
                        n = int(declared)
                    except ValueError:
                        await respond_error(400, "bad_request", "invalid Content-Length header")
                        return
                    if n > limit:
                        await respond_error(
                            413, "limit_exceeded", f"request body larger than {limit} bytes", {"limit": limit}
                        )
                        return
                else:
                    try:
                        app_receive = await self._buffered(receive, limit)
                    except _TooLarge:
                        await respond_error(
                            413, "limit_exceeded", f"request body larger than {limit} bytes", {"limit": limit}
                        )
                        return
            await self.app(scope, app_receive, send_wrapper)
        except Exception:
            log.exception("request %s %s %s failed", rid, scope.get("method"), scope.get("path"))
            if not status_holder["started"]:
                await respond_error(500, "internal_error", f"internal server error (request id {rid})", {"request-id": rid})
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            method = scope.get("method", "")
            self.metrics.request_latency.labels(
                method=method if method in METHODS else "other", route=template, status=str(status_holder["status"])
            ).observe(time.perf_counter() - started)

    @staticmethod
    async def _buffered(receive: Receive, limit: int) -> Receive:
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise _TooLarge
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay
