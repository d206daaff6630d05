"""The HTTP protocol ``shredcat serve`` gives uvicorn: uvicorn's own (httptools, a dependency for
its speed; h11 where it is missing) with ``TCP_NODELAY`` set on every accepted TCP connection.

asyncio sets ``TCP_NODELAY`` on accepted sockets only when the listening socket says
``IPPROTO_TCP``; the socket uvicorn binds itself for ``--workers N`` says protocol 0, so without
this the workers' connections keep Nagle's algorithm on. A response is written as headers then
body, and the body then waits for the client's delayed ACK: about 40 ms of idle time on every
keep-alive request. Setting the option in ``connection_made`` covers one worker and many alike.

It also bounds what a connection may hold (with httptools; uvicorn's h11 protocol has only its
own head-size limit): request line and headers of at most :data:`MAX_HEAD_BYTES` (431), sent
within ``SHREDCAT_HEADER_TIMEOUT_SECONDS`` of the connection's start or the request's first byte
(408, then closed: a client trickling a byte at a time no longer holds it), and at most
``SHREDCAT_MAX_CONNECTIONS`` connections per process (default three quarters of the open-file
limit), past which the oldest connection still waiting for its headers, or else an idle kept-alive
one, is closed to make room, and only when every connection is busy with a request is the new one
refused (503). Idle kept-alive connections close after ``SHREDCAT_KEEPALIVE_TIMEOUT_SECONDS``.
"""

from __future__ import annotations

import asyncio
import resource
import socket
from dataclasses import dataclass
from functools import lru_cache

from uvicorn.protocols.http.auto import AutoHTTPProtocol

#: The largest request line + headers taken (nginx takes 4 x 8 KiB by default, h11 16 KiB):
#: httptools, unlike h11, buffers a header of any size, and the headers are parsed on the event
#: loop, so a few clients sending megabytes of headers stalled every other request.
MAX_HEAD_BYTES = 64 * 1024

_TOO_LARGE = (
    b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 38\r\nconnection: close\r\n\r\nrequest line and headers are too large"
)
#: How long a refused connection's remaining bytes are read and dropped before it is closed.
_DRAIN_SECONDS = 5.0
#: Whether uvicorn's protocol here is httptools' (h11's has its own limit).
_HTTPTOOLS = hasattr(AutoHTTPProtocol, "on_headers_complete")

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 38\r\nconnection: close\r\n\r\nrequest line and headers took too long"
)
_FULL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"content-length: 27\r\nconnection: close\r\nretry-after: 1\r\n\r\ntoo many connections: retry"
)


@dataclass(frozen=True, slots=True)
class ConnectionLimits:
    #: Seconds from a connection's start, or a request's first byte, to the end of its headers.
    header_seconds: float
    #: Most connections a worker process holds open.
    max_connections: int


def auto_max_connections() -> int:
    """Three quarters of the process's open-file limit: the rest stays for the database pool,
    files being read and logs, so accepting never fails for want of a descriptor."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        soft = 65536
    return max(16, soft * 3 // 4)


@lru_cache(maxsize=1)
def connection_limits() -> ConnectionLimits:
    """From the settings (read once per worker process, at its first connection)."""
    from service.settings import get_settings

    s = get_settings()
    return ConnectionLimits(s.header_timeout_seconds, s.max_connections or auto_max_connections())


# uvicorn binds AutoHTTPProtocol at import (httptools' protocol or h11's): a variable to mypy.
class NoDelayHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]  # a variable to mypy (above)
    _in_head = True
    _head_bytes = 0
    _began = False
    _refused = False
    _head_timer: asyncio.TimerHandle | None = None
    _opened = 0.0

    # uvicorn's transports are always Transports (asyncio's BaseProtocol takes a BaseTransport).
    def connection_made(self, transport: asyncio.Transport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        if _HTTPTOOLS:
            self._opened = self.loop.time()
            if self._admitted(connection_limits().max_connections):
                self._arm_head()

    def _admitted(self, cap: int) -> bool:
        """Past ``cap`` connections, the oldest one still waiting for its request's headers (a
        slow or idle client) makes room; when every one is busy with a request, this one is
        refused (503) and closed at once, so descriptors never run out and a probe that connects
        anew (``/health/live``) is answered while slow clients hold the others."""
        if len(self.connections) <= cap:
            return True
        others = [c for c in self.connections if c is not self and isinstance(c, NoDelayHTTPProtocol)]
        waiting = [c for c in others if c._head_timer is not None]
        # Kept alive between requests (the last response sent, no request begun).
        idle = [c for c in others if c.cycle is not None and c.cycle.response_complete and not c.pipeline]
        victims = waiting or idle
        if victims:
            min(victims, key=lambda c: c._opened)._refuse(_TIMED_OUT, drain=False)
            return True
        self._refuse(_FULL, drain=False)
        return False

    def _arm_head(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(connection_limits().header_seconds, self._head_timed_out)

    def _disarm_head(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self._refuse(_TIMED_OUT, drain=False)

    def _refuse(self, answer: bytes, *, drain: bool) -> None:
        """Answer, then close: at once, or after reading and dropping what is still coming for a
        moment (closing with unread data would reset the connection and lose the answer)."""
        self._refused = True
        self._disarm_head()
        self.transport.write(answer)
        if not drain:
            self.transport.close()
            return
        if self.transport.can_write_eof():
            self.transport.write_eof()
        self.loop.call_later(_DRAIN_SECONDS, self.transport.close)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head()
        super().connection_lost(exc)

    if _HTTPTOOLS:

        def data_received(self, data: bytes) -> None:
            # Counted after the parser took the chunk, only while a head is still incomplete, and
            # not the chunk a head began in (it may end a body or another request: a pipelined
            # request must not be refused for its neighbour's bytes). The parser then holds at most
            # the limit plus two chunks (asyncio reads at most 256 KiB at a time).
            if self._refused:
                return
            self._began = False
            super().data_received(data)
            if not self._in_head or self._began or self.transport.is_closing():
                return
            self._head_bytes += len(data)
            if self._head_bytes > MAX_HEAD_BYTES:
                self._refuse(_TOO_LARGE, drain=True)

        def on_message_begin(self) -> None:
            self._in_head, self._head_bytes, self._began = True, 0, True
            # The headers of this request must be in within the header timeout of its first byte
            # (trickling a byte at a time keeps uvicorn's keep-alive timer from firing, not this).
            self._disarm_head()
            self._arm_head()
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            self._disarm_head()
            super().on_headers_complete()
