"""An S3 API server for the tests: moto's server mode on loopback, in a process of its own.

Run as ``python -m tests.storage.s3server PORT``. Beside moto's S3 (and IAM, for credentials that
are refused) it answers four test-only routes, which no bucket name can shadow (bucket names
never start with ``_``):

* ``GET /_test/requests``: the S3 requests served since the last reset, as JSON
  (method, path, query, Range header, and ``bytes``: the answer's Content-Length, 0 for a HEAD),
  so tests and ``bench/remote.py`` count requests and bytes at the server;
* ``POST /_test/reset``: forget them;
* ``POST /_test/delay/MS``: from now on every S3 request waits MS milliseconds before it is
  served, the round trip of a real store (``bench/remote.py``). The wait is a sleep in the
  request's own thread: unlike a proxy in front, it adds no CPU and no copy of the bytes, so on a
  small machine the client, not the emulator, sets the figures;
* ``POST /_test/die-after-lists/N``: the process exits, without answering, when the ``N+1``-th
  object listing arrives (a server that dies in the middle of a paginated listing);
* ``POST /_test/put-many``: objects stored straight into moto's backend, from a JSON body
  ``{"bucket": ..., "keys": [...], "body": "<text>"}``: setup of a thousand objects (listing
  tests) without a thousand signed PUTs, each ~25 ms of moto's CPU on this machine. Not recorded.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server


class Dispatcher(DomainDispatcherApplication):
    """moto's dispatcher with its host-to-service answer remembered: moto recomputes it for every
    request by listing its package directory and ``stat``-ing each of its ~180 service folders,
    under a lock that all requests share: a ranged GET cost 1.25 ms of CPU in moto's WSGI app
    without this, 0.46 ms with it (werkzeug's test client, 1,000 GETs). The answer depends only on
    the host and on moto's installed files, so it is kept per host (moto calls this under that
    lock, which guards the dict too)."""

    def __init__(self, create_app: Any) -> None:
        super().__init__(create_app)
        self.backends: dict[str | None, Any] = {}

    def get_backend_for_host(self, host: str | None) -> Any:
        if host not in self.backends:
            self.backends[host] = super().get_backend_for_host(host)
        return self.backends[host]


class Recorder:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.log: list[dict[str, Any]] = []
        self.lists_left: int | None = None
        self.delay = 0.0

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
            entry: dict[str, Any] = {
                "method": environ["REQUEST_METHOD"],
                "path": path,
                "query": query,
                "range": environ.get("HTTP_RANGE"),
                "bytes": 0,
            }
            if not path.startswith("/moto-api"):
                self.log.append(entry)
            delay = self.delay
        if delay:
            time.sleep(delay)
        if "+" in query:
            # The one place moto differs from S3 that the tests meet: reqwest (obstore) sends a
            # space in a query value as '+' and object_store signs it as %20; S3 decodes '+' as a
            # space before checking the signature, moto checks the raw text (a 403
            # SignatureDoesNotMatch for any listing of a prefix holding a space, e.g. a Spark Hive
            # directory of a timestamp: remote_suite's test_keys_are_read_and_stored_verbatim).
            # Hand moto the %20 S3 would see.
            environ["QUERY_STRING"] = query.replace("+", "%20")

        def counting(status: str, headers: list[tuple[str, str]], *exc_info: Any) -> Any:
            if entry["method"] != "HEAD":
                entry["bytes"] = int(next((v for k, v in headers if k.lower() == "content-length"), 0))
            return start_response(status, headers, *exc_info)

        return self.app(environ, counting)

    def control(self, environ: dict[str, Any], path: str, start_response: Any) -> Any:
        body = b"{}"
        if path == "/_test/put-many":
            put_many(json.loads(environ["wsgi.input"].read(int(environ.get("CONTENT_LENGTH") or 0))))
        with self.lock:
            if path == "/_test/requests":
                body = json.dumps(self.log).encode()
            elif path == "/_test/reset":
                self.log.clear()
            elif path.startswith("/_test/die-after-lists/"):
                self.lists_left = int(path.rsplit("/", 1)[1])
            elif path.startswith("/_test/delay/"):
                self.delay = float(path.rsplit("/", 1)[1]) / 1000
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]


def put_many(request: dict[str, Any]) -> None:
    """Each of ``request["keys"]`` stored in ``request["bucket"]`` with ``request["body"]``, in the
    backend (account and partition) that holds the bucket, as a PUT of it would be."""
    from moto.s3.models import s3_backends

    bucket = request["bucket"]
    partition, account = s3_backends.bucket_accounts[bucket]
    backend = s3_backends[account][partition]
    for key in request["keys"]:
        backend.put_object(bucket, key, request["body"].encode())


def main() -> None:
    port = int(sys.argv[1])
    app = Recorder(Dispatcher(create_backend_app))
    server = make_server("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
