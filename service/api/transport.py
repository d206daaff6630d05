"""The HTTP protocol ``shredcat serve`` gives uvicorn: uvicorn's own (httptools, a dependency for
its speed; h11 where it is missing) with ``TCP_NODELAY`` set on every accepted TCP connection.

asyncio sets ``TCP_NODELAY`` on accepted sockets only when the listening socket says
``IPPROTO_TCP``; the socket uvicorn binds itself for ``--workers N`` says protocol 0, so without
this the workers' connections keep Nagle's algorithm on. A response is written as headers then
body, and the body then waits for the client's delayed ACK: about 40 ms of idle time on every
keep-alive request. Setting the option in ``connection_made`` covers one worker and many alike.
"""

from __future__ import annotations

import asyncio
import socket

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


class NoDelayHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
    _in_head = True
    _head_bytes = 0
    _began = False
    _refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)

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
                # Answer, then read and drop what is still coming for a moment: closing with
                # unread data would reset the connection and lose the answer.
                self._refused = True
                self.transport.write(_TOO_LARGE)
                if self.transport.can_write_eof():
                    self.transport.write_eof()
                self.loop.call_later(_DRAIN_SECONDS, self.transport.close)

        def on_message_begin(self) -> None:
            self._in_head, self._head_bytes, self._began = True, 0, True
            super().on_message_begin()

        def on_headers_complete(self) -> None:
            self._in_head = False
            super().on_headers_complete()
