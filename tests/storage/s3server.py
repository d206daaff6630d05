"""An S3 API server for the tests: moto's server mode on loopback, in a process of its own.

Run as ``python -m tests.storage.s3server PORT``. Beside moto's S3 (and IAM, for credentials that
are refused) it answers three test-only routes, which no bucket name can shadow (bucket names
never start with ``_``):

* ``GET /_test/requests``: the S3 requests served since the last reset, as JSON
  (method, path, query, Range header), so tests count requests at the server;
* ``POST /_test/reset``: forget them;
* ``POST /_test/die-after-lists/N``: the process exits, without answering, when the ``N+1``-th
  object listing arrives (a server that dies in the middle of a paginated listing).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server


class Recorder:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.log: list[dict[str, str | None]] = []
        self.lists_left: int | None = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path: str = environ.get("PATH_INFO", "")
        if path.startswith("/_test/"):
            return self.control(environ, path, start_response)
        query: str = environ.get("QUERY_STRING", "")
        is_list = environ["REQUEST_METHOD"] == "GET" and ("list-type=" in query or "prefix=" in query)
        with self.lock:
            if is_list and self.lists_left is not None:
                if self.lists_left == 0:
                    os._exit(0)  # dies with the request unanswered
                self.lists_left -= 1
            if not path.startswith("/moto-api"):
                self.log.append(
                    {
                        "method": environ["REQUEST_METHOD"],
                        "path": path,
                        "query": query,
                        "range": environ.get("HTTP_RANGE"),
                    }
                )
        if "+" in query:
            # The one place moto differs from S3 that the tests meet: reqwest (obstore) sends a
            # space in a query value as '+' and object_store signs it as %20; S3 decodes '+' as a
            # space before checking the signature, moto checks the raw text (a 403
            # SignatureDoesNotMatch for any listing of a prefix holding a space, e.g. a Spark Hive
            # directory of a timestamp: remote_suite's test_keys_are_read_and_stored_verbatim).
            # Hand moto the %20 S3 would see.
            environ["QUERY_STRING"] = query.replace("+", "%20")
        return self.app(environ, start_response)

    def control(self, environ: dict[str, Any], path: str, start_response: Any) -> Any:
        body = b"{}"
        with self.lock:
            if path == "/_test/requests":
                body = json.dumps(self.log).encode()
            elif path == "/_test/reset":
                self.log.clear()
            elif path.startswith("/_test/die-after-lists/"):
                self.lists_left = int(path.rsplit("/", 1)[1])
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]


def main() -> None:
    port = int(sys.argv[1])
    app = Recorder(DomainDispatcherApplication(create_backend_app))
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
