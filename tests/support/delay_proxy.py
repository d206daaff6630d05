"""A loopback HTTP/1.1 proxy that delays every request by a fixed time and counts what passes.

It stands for the round trip of a real object store in front of an S3 API server on loopback:
every request waits ``delay`` seconds before it is forwarded, so requests overlap only when the
client sends them concurrently. It counts requests, requests in flight (and their maximum), and
response body bytes, which tests read from its control routes:

* ``GET /_proxy/stats``: JSON ``{"requests", "in_flight", "max_in_flight", "body_bytes",
  "methods": {...}, "ranges": [...]}`` (``ranges``: the Range header of each GET, or null);
* ``POST /_proxy/reset``: zero the counters;
* ``POST /_proxy/delay/<ms>``: change the delay.

It runs in a thread of the test's process (:func:`start_in_thread`); ``bench/remote.py`` does not
use it: there the servers sleep the delay themselves, which costs no CPU (a proxy in front cost 15–20 %
of the servers' CPU per file with moto). Requests and responses are forwarded unchanged
(Host included, so SigV4 signatures stay valid) except that each response is re-framed with a
``Content-Length`` and kept alive, whatever the upstream did.
"""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any
from urllib.parse import urlsplit


class DelayProxy:
    def __init__(self, upstream: str, delay: float) -> None:
        u = urlsplit(upstream)
        self.up_host, self.up_port = u.hostname or "127.0.0.1", u.port or 80
        self.delay = delay
        self.reset()

    def reset(self) -> None:
        self.requests = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.body_bytes = 0
        self.methods: dict[str, int] = {}
        self.ranges: list[str | None] = []

    def stats(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "body_bytes": self.body_bytes,
            "methods": self.methods,
            "ranges": self.ranges,
        }

    async def _read_head(self, reader: asyncio.StreamReader) -> tuple[bytes, list[tuple[str, str]]] | None:
        try:
            raw = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError):
            return None
        lines = raw.decode("latin-1").split("\r\n")
        headers = []
        for line in lines[1:]:
            if line:
                k, _, v = line.partition(":")
                headers.append((k.strip(), v.strip()))
        return lines[0].encode("latin-1"), headers

    async def _read_body(
        self, reader: asyncio.StreamReader, headers: list[tuple[str, str]], *, until_close: bool
    ) -> bytes:
        h = {k.lower(): v for k, v in headers}
        if "chunked" in h.get("transfer-encoding", "").lower():
            out = bytearray()
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                if size == 0:
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":
                        pass
                    return bytes(out)
                out += await reader.readexactly(size)
                await reader.readexactly(2)
        if "content-length" in h:
            return await reader.readexactly(int(h["content-length"]))
        return await reader.read() if until_close else b""

    async def handle(self, creader: asyncio.StreamReader, cwriter: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while True:
                head = await self._read_head(creader)
                if head is None:
                    return
                line, headers = head
                method, target, _ = line.decode().split(" ", 2)
                body = await self._read_body(creader, headers, until_close=False)
                if target.startswith("/_proxy/"):
                    await self._control(method, target, cwriter)
                    continue
                self.requests += 1
                self.methods[method] = self.methods.get(method, 0) + 1
                if method == "GET":
                    self.ranges.append(next((v for k, v in headers if k.lower() == "range"), None))
                self.in_flight += 1
                self.max_in_flight = max(self.max_in_flight, self.in_flight)
                try:
                    if self.delay:
                        await asyncio.sleep(self.delay)
                    if upstream is None:
                        upstream = await asyncio.open_connection(self.up_host, self.up_port)
                    ureader, uwriter = upstream
                    fwd = [(k, v) for k, v in headers if k.lower() not in ("connection", "keep-alive")]
                    fwd.append(("Connection", "keep-alive"))
                    uwriter.write(line + b"\r\n" + "".join(f"{k}: {v}\r\n" for k, v in fwd).encode("latin-1") + b"\r\n" + body)
                    await uwriter.drain()
                    rhead = await self._read_head(ureader)
                    if rhead is None:
                        return  # the server died: so does this connection
                    status_line, rheaders = rhead
                    status = int(status_line.split(b" ")[1])
                    rh = {k.lower(): v for k, v in rheaders}
                    no_body = method == "HEAD" or status in (204, 304) or 100 <= status < 200
                    rbody = b"" if no_body else await self._read_body(ureader, rheaders, until_close=True)
                    closing = rh.get("connection", "").lower() == "close" or status_line.startswith(b"HTTP/1.0") or (
                        not no_body and "content-length" not in rh and "chunked" not in rh.get("transfer-encoding", "")
                    )
                    if closing:
                        uwriter.close()
                        upstream = None
                    self.body_bytes += len(rbody)
                    out = [(k, v) for k, v in rheaders if k.lower() not in ("connection", "keep-alive", "transfer-encoding", "content-length")]
                    if not no_body or "content-length" in rh:
                        out.append(("Content-Length", str(len(rbody)) if not no_body else rh["content-length"]))
                    out.append(("Connection", "keep-alive"))
                    cwriter.write(
                        b"HTTP/1.1" + status_line[status_line.index(b" ") :] + b"\r\n"
                        + "".join(f"{k}: {v}\r\n" for k, v in out).encode("latin-1") + b"\r\n" + rbody
                    )  # fmt: skip
                    await cwriter.drain()
                finally:
                    self.in_flight -= 1
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            if upstream is not None:
                upstream[1].close()
            cwriter.close()

    async def _control(self, method: str, target: str, w: asyncio.StreamWriter) -> None:
        if target.startswith("/_proxy/reset"):
            self.reset()
        elif target.startswith("/_proxy/delay/"):
            self.delay = float(target.rsplit("/", 1)[1]) / 1000
        body = json.dumps(self.stats()).encode()
        w.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: keep-alive\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode() + body
        )  # fmt: skip
        await w.drain()


async def _serve(proxy: DelayProxy, started: Any) -> None:
    server = await asyncio.start_server(proxy.handle, "127.0.0.1", 0, backlog=1024)
    started(server.sockets[0].getsockname()[1])
    async with server:
        await server.serve_forever()


def start_in_thread(upstream: str, delay: float) -> tuple[DelayProxy, str]:
    """A proxy served by a daemon thread of this process; returns it and its URL."""
    proxy = DelayProxy(upstream, delay)
    ready = threading.Event()
    port: list[int] = []

    def started(p: int) -> None:
        port.append(p)
        ready.set()

    threading.Thread(target=lambda: asyncio.run(_serve(proxy, started)), daemon=True).start()
    if not ready.wait(10):
        raise RuntimeError("the proxy did not start")
    return proxy, f"http://127.0.0.1:{port[0]}"

