"""The outermost ASGI layer: request id, authentication and body size before the body, latency
metric, and the last-resort 500.

* ``X-Request-ID``: echoed when the caller sends a sane one (≤ 128 printable ASCII), else a new
  uuid4 hex; stored in ``scope["state"]["request_id"]`` for handlers and logs.
* What the matched route allows is decided first (:class:`service.api.policy.RoutePolicy`): the
  role a bearer token must hold, the body bytes and the body time. An unauthenticated or
  under-privileged caller gets its 401/403 at once, whatever it is sending. The route's own
  dependency checks again (cheap) and records the principal. An unmatched path whose
  trailing-slash twin matches is redirected (307) with a relative ``Location``.
* A body is read here, before the route runs, up to the route's limit: larger is 413 (by
  ``Content-Length`` before reading, or by counting a chunked body while it streams in, cut at the
  limit), slower than the route's time is 408; both close the connection, as does any request
  whose body the route does not take (the app sees an empty body: the rest is never read).
* Any exception escaping the app becomes a logged 500 with the error model, never a traceback.
* ``HEAD`` is answered as ``GET`` is, without the body (same status and headers, as HTTP asks):
  every GET route takes it, one rule here instead of a second route per path.
* The latency metric's labels are bounded: methods outside :data:`METHODS` are counted as
  ``other`` and requests no route matches as route ``unmatched``.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, unquote_to_bytes

import anyio
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service.api.auth import PRINCIPAL_STATE, Authenticator
from service.api.errors import error_body
from service.api.metrics import Metrics
from service.api.policy import Bounds, RoutePolicy
from service.errors import BadInputError, ShredcatError

log = logging.getLogger("service.api")

_BODY_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
#: Methods with a label value of their own in the metrics; any other is ``other``.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _clean_request_id(raw: str | None) -> str:
    if raw and len(raw) <= 128 and all(33 <= ord(c) < 127 for c in raw):
        return raw
    return uuid.uuid4().hex


def _bad_url(scope: Scope) -> BadInputError | None:
    """Why the request's URL names nothing the catalog holds, refused before any route: a NUL
    (the catalog stores no such text, and PostgreSQL cannot compare it: one answer on both
    backends), an encoded '/' in a path segment (no name holds one), a query parameter given twice,
    or percent-encoded bytes that are not UTF-8, which the server's decoding turns into
    U+FFFD: a commit's create-if-missing made a table named U+FFFD + '(' of ``%C3%28``."""
    query = scope.get("query_string", b"")
    if "\x00" in scope.get("path", "") or b"%00" in query:
        return BadInputError("the request's URL holds a NUL character (%00), which no name, path or value in the catalog holds")
    if b"%2f" in (scope.get("raw_path") or b"").lower():
        # Decoded before routing, it would split the segment in two: a bare 404 from no route.
        return BadInputError(
            "the request's URL path holds an encoded '/' (%2F) within a segment: namespace and table names "
            "cannot contain '/'",
            details={"field": "path"},
        )
    for part, raw in (("path", scope.get("raw_path") or b""), ("query", query.replace(b"+", b" "))):
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError as u:
            bad = "".join(f"%{b:02X}" for b in u.object[u.start : u.end])
            return BadInputError(
                f"the request's URL {part} holds percent-encoded bytes that are not UTF-8 ({bad}): "
                "names, paths and values are UTF-8 text",
                details={"field": part},
            )
    return _repeated_parameter(query.decode("latin-1"))  # as Starlette decodes it for the routes


def _repeated_parameter(query: str) -> BadInputError | None:
    """A query parameter given more than once: every parameter of the API and the dashboard takes
    one value, and a route would silently use the last (``?path=a&path=b`` stats ``b``)."""
    counts = Counter(name for name, _ in parse_qsl(query, keep_blank_values=True))
    name, times = max(counts.items(), key=lambda kv: kv[1], default=("", 0))
    if times < 2:
        return None
    return BadInputError(
        f"the query parameter {name!r} is given {times} times: it takes one value", details={"field": f"query.{name}"}
    )


class _TooLarge(Exception):
    pass


class _TooSlow(Exception):
    pass


_CLOSE = ((b"connection", b"close"),)
_CHALLENGE = ((b"www-authenticate", b'Bearer realm="shredcat"'),)


async def _empty() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class _Exchange:
    """One request's answer side: its status for the metric, whether the response started, the
    request id and ``Connection: close`` added to the response's headers; ``head``: the body is
    not sent (its headers, Content-Length included, are)."""

    def __init__(self, send: Send, rid: str, *, head: bool = False) -> None:
        self._send = send
        self.rid = rid
        self.head = head
        self.status = 500
        self.started = False
        self.close = False

    async def send(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.started = True
            hs = [*message.get("headers", []), (b"x-request-id", self.rid.encode("latin-1"))]
            if self.close:
                hs += _CLOSE
            message = {**message, "headers": hs}
        elif self.head and message["type"] == "http.response.body":
            message = {**message, "body": b""}
        await self._send(message)

    async def answer(
        self, status: int, headers: tuple[tuple[bytes, bytes], ...] = (), body: bytes = b""
    ) -> None:
        hs = [(b"content-length", str(len(body)).encode()), *headers]
        await self.send({"type": "http.response.start", "status": status, "headers": hs})
        await self.send({"type": "http.response.body", "body": body})

    async def error(
        self, status: int, type_: str, msg: str, details: dict[str, Any] | None = None,
        headers: tuple[tuple[bytes, bytes], ...] = (),
    ) -> None:
        body = json.dumps(error_body(status, type_, msg, details)).encode()
        await self.answer(status, ((b"content-type", b"application/json"), *headers), body)

    async def refuse_body(self, e: _TooLarge | _TooSlow, bounds: Bounds) -> None:
        """413 or 408, closing the connection (the rest of the body is never read)."""
        self.close = True
        if isinstance(e, _TooLarge):
            limit = bounds.body_bytes
            await self.error(413, "limit_exceeded", f"request body larger than {limit} bytes", {"limit": limit})
        else:
            seconds = bounds.body_seconds
            msg = f"the request body did not arrive within {seconds:g} seconds"
            await self.error(408, "request_timeout", msg, {"seconds": seconds})


class RequestContextMiddleware:
    def __init__(
        self, app: ASGIApp, *, metrics: Metrics, authenticator: Authenticator, policy: RoutePolicy,
        refused_page: Callable[[Scope, ShredcatError], Response | None] | None = None,
    ) -> None:  # fmt: skip
        self.app = app
        self.metrics = metrics
        self.authenticator = authenticator
        self.policy = policy
        #: The page of a URL refused here that is not the API's (the dashboard's), or None: JSON.
        self.refused_page = refused_page

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        rid = _clean_request_id(headers.get("x-request-id"))
        scope.setdefault("state", {})["request_id"] = rid
        started = time.perf_counter()
        method = scope.get("method", "")
        if method == "HEAD":
            # A copy: the server's scope keeps HEAD (it then expects no body after Content-Length).
            scope = {**scope, "method": "GET"}
        ex = _Exchange(send, rid, head=method == "HEAD")
        bounds = Bounds(None, 0, 0.0)
        try:
            bounds = self.policy.decide(scope, headers)
            app_receive = await self._admit(scope, headers, bounds, receive, ex)
            if app_receive is not None:
                await self.app(scope, app_receive, ex.send)
        except (_TooLarge, _TooSlow) as e:  # from a body the route reads itself
            if not ex.started:
                await ex.refuse_body(e, bounds)
        except Exception:
            log.exception("request %s %s %s failed", rid, scope.get("method"), scope.get("path"))
            if not ex.started:
                await ex.error(500, "internal_error", f"internal server error (request id {rid})", {"request-id": rid})
        finally:
            route = scope.get("route")
            template = getattr(route, "path", None) or "unmatched"
            self.metrics.request_latency.labels(
                method=method if method in METHODS else "other", route=template, status=str(ex.status)
            ).observe(time.perf_counter() - started)

    async def _admit(
        self, scope: Scope, headers: dict[str, str], bounds: Bounds, receive: Receive, ex: _Exchange
    ) -> Receive | None:
        """What the app reads the body from; None when the answer was given here instead (a bad
        URL, a redirect, 401/403, a refused body)."""
        bad_url = _bad_url(scope)
        if bad_url is not None:
            page = self.refused_page(scope, bad_url) if self.refused_page is not None else None
            if page is not None:
                await page(scope, receive, ex.send)
            else:
                await ex.error(bad_url.http_status, bad_url.code, bad_url.message, details=bad_url.details)
            return None
        declared = headers.get("content-length")
        has_body = (declared is not None and declared != "0") or "transfer-encoding" in headers
        if bounds.redirect is not None:
            ex.close = has_body  # the body is never read
            await ex.answer(307, ((b"location", bounds.redirect.encode("latin-1")),))
            return None
        if bounds.role is not None:
            try:
                principal = self.authenticator.check(headers.get("authorization"), bounds.role)
            except ShredcatError as e:
                ex.close = has_body  # the body is never read
                await ex.error(e.http_status, e.code, e.message, headers=_CHALLENGE if e.http_status == 401 else ())
                return None
            # The route's dependency takes it from here instead of hashing the token again.
            scope.setdefault("state", {})[PRINCIPAL_STATE] = principal
        if scope.get("method") not in _BODY_METHODS:
            # A GET with a body: nothing reads it, and the connection closes after the answer
            # (else the server would drain whatever the client keeps sending).
            ex.close = has_body
            return _empty if has_body else receive
        if declared is not None and not (declared.isascii() and declared.isdigit()):
            ex.close = True
            await ex.error(400, "bad_request", "invalid Content-Length header")
            return None
        if bounds.body_bytes == 0:
            # The route takes no body: it sees none, and what was sent is never read.
            ex.close = has_body
            return _empty
        try:
            if bounds.streamed:  # the route refuses a declared length past the limit with its own page
                return _guarded(receive, bounds.body_bytes, bounds.body_seconds)
            if declared is not None and int(declared) > bounds.body_bytes:
                raise _TooLarge
            return await _buffered(receive, bounds.body_bytes, bounds.body_seconds)
        except (_TooLarge, _TooSlow) as e:
            await ex.refuse_body(e, bounds)
            return None


def _guarded(receive: Receive, limit: int, seconds: float) -> Receive:
    """``receive`` for a route that reads its body itself, in chunks, within the same limit: past
    ``limit`` bytes or the deadline it raises (answered by the middleware)."""
    deadline = time.monotonic() + seconds
    size = 0

    async def guarded() -> Message:
        nonlocal size
        with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
            message = await receive()
            size += len(message.get("body", b""))
            if size > limit:
                raise _TooLarge
            return message
        raise _TooSlow

    return guarded


async def _buffered(receive: Receive, limit: int, seconds: float) -> Receive:
    """The body read in full (at most ``limit`` bytes, within ``seconds``), replayed to the app."""
    chunks: list[bytes] = []
    size = 0
    with anyio.move_on_after(seconds) as deadline:
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
    if deadline.cancelled_caught:
        raise _TooSlow
    body = b"".join(chunks)
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
