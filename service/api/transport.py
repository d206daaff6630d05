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


class NoDelayHTTPProtocol(AutoHTTPProtocol):  # type: ignore[misc,valid-type]
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
