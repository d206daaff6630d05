"""Small HTTP servers on loopback for the credential services that have no emulator (OAuth token
endpoints, cloud metadata servers, the ECS agent): a handler base that answers and stays quiet,
and a context manager that serves one for the duration of a test."""

from __future__ import annotations

import json
import threading
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class Handler(BaseHTTPRequestHandler):
    def reply(self, status: int, body: bytes | dict[str, Any]) -> None:
        """Answer ``body``: a dict as JSON (with its content type), bytes as they are."""
        data = json.dumps(body).encode() if isinstance(body, dict) else body
        self.send_response(status)
        if isinstance(body, dict):
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def form(self) -> dict[str, str]:
        """The request's ``application/x-www-form-urlencoded`` body."""
        return dict(urllib.parse.parse_qsl(self.rfile.read(int(self.headers["Content-Length"])).decode()))

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``http://127.0.0.1:<port>`` of a server running ``handler`` until the block ends."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def answering(answers: dict[tuple[str, str], tuple[int, bytes]]) -> Iterator[str]:
    """A server answering ``(method, path) -> (status, body)`` (the query ignored), 404 otherwise."""

    class Fixed(Handler):
        def answer(self) -> None:
            self.reply(*answers.get((self.command, self.path.split("?")[0]), (404, b"")))

        do_GET = do_PUT = do_POST = answer

    with serving(Fixed) as url:
        yield url
