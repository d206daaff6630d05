"""A recording, fault-injecting HTTP proxy on loopback, in front of an emulator that has no such hooks.

Run as ``python -m tests.storage.proxy PORT UPSTREAM_PORT [BEARER_TOKEN [HMAC_KEY_ID]]``; it prints ``ready``
once it listens. Every request is forwarded unchanged (method, path, query, headers, body) to
``127.0.0.1:UPSTREAM_PORT`` and the upstream's answer is returned unchanged, so the emulator
behind it (Azurite, gcp-storage-emulator) still decides everything else. Beside that it answers
five test-only routes, as ``tests/storage/s3server.py`` does for moto:

* ``GET /_test/requests``: the requests forwarded since the last reset, as JSON (method, path,
  query, ``Range`` / ``x-ms-range`` and ``Accept-Encoding`` headers, and ``bytes``: the answer's
  body as sent);
* ``POST /_test/reset``: forget them;
* ``POST /_test/delay/MS``: from now on every request waits MS milliseconds before it is
  forwarded, the round trip of a real store (``bench/remote.py``): a sleep in the request's own
  thread, which costs no CPU;
* ``POST /_test/misbehave/MODE``: from now on, ``ignore-range`` answers a ranged read with the
  whole object (200; the range padded with zeros to the object's size: use objects of zeros), ``gzip`` sends every body gzip-compressed twice
  with ``Content-Encoding: gzip, gzip`` (a tiny answer that decodes to a huge one), ``none`` stops;
* ``POST /_test/die-after-lists/N``: the process exits, without answering, when the ``N+1``-th
  listing request arrives (a server that dies in the middle of a paginated listing). A listing is
  Azure's ``comp=list`` or GCS's XML ``list-type=2``.

With ``BEARER_TOKEN`` (the GCS proxy) it also plays what gcp-storage-emulator leaves out of
Google Cloud Storage, each because GCS itself behaves so and the emulator does not:

* a request whose ``Authorization`` is not ``Bearer <token>`` is refused with 401 and GCS's JSON
  error body, as Google refuses an invalid OAuth token (the emulator checks no credentials: without
  this, no test could see a refused credential). Given a fourth argument ``HMAC_KEY_ID`` (only
  ``bench/remote.py`` does), an ``AWS4-HMAC-SHA256`` ``Authorization`` naming that key id is
  accepted too: GCS's HMAC interoperability, how DuckDB's httpfs reads ``gs://``. The key id is
  checked, **the signature is not** (as moto does not verify S3's): enough for a benchmark peer,
  not a test of signing;
* GCS's XML API, which obstore (Apache Arrow's ``object_store``) uses for every request and the
  emulator does not serve (it answers 501): ``HEAD``/``GET /<bucket>/<object>`` (``Range`` of every
  form, ``If-Match`` of the ETag, ``Last-Modified``, the generation in ``x-goog-generation``) and
  ``GET /<bucket>?list-type=2`` (``ListBucketResult`` in pages of 1,000 with ``start-after`` and
  ``continuation-token``, where the emulator answers one unpaged list) are answered from the
  emulator's JSON API. The ETag is the object's generation (GCS's is its MD5; both change with
  every rewrite, which is all If-Match needs).
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import threading
import time
from datetime import UTC, datetime
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit

#: Hop-by-hop headers (RFC 9110 §7.6.1) are the proxy's own, never forwarded.
_HOP = {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"}


def is_listing(method: str, path: str, query: str) -> bool:
    # Azure Blob's List Blobs; GCS's XML API ListObjectsV2 (obstore lists GCS through nothing else).
    return method == "GET" and ("comp=list" in query or "list-type=2" in query)


class State:
    def __init__(self, upstream_port: int, token: str | None, hmac_key_id: str | None = None) -> None:
        self.upstream_port = upstream_port
        self.token = token
        self.hmac_key_id = hmac_key_id
        self.lock = threading.Lock()
        self.log: list[dict[str, Any]] = []
        self.lists_left: int | None = None
        self.misbehave: str | None = None
        self.delay = 0.0
        self.local = threading.local()

    def upstream(self) -> http.client.HTTPConnection:
        conn: http.client.HTTPConnection | None = getattr(self.local, "conn", None)
        if conn is None:
            conn = http.client.HTTPConnection("127.0.0.1", self.upstream_port, timeout=60)
            self.local.conn = conn
        return conn


def _iso(updated: str | None) -> str:
    """The emulator's ``updated`` time as the XML API gives it (``2026-11-28T01:02:03.000Z``)."""
    when = datetime.fromisoformat((updated or "1970-01-01T00:00:00+00:00").replace("Z", "+00:00"))
    return when.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _http_date(updated: str | None) -> str:
    when = datetime.fromisoformat((updated or "1970-01-01T00:00:00+00:00").replace("Z", "+00:00"))
    return format_datetime(when.astimezone(UTC), usegmt=True)


def _byte_range(header: str | None, size: int) -> tuple[int, int] | str | None:
    """``(first, last)`` of a ``Range: bytes=...`` header, "unsatisfiable", or None (the whole)."""
    if not header or not header.startswith("bytes="):
        return None
    first_s, _, last_s = header[6:].partition("-")
    if not first_s:
        n = int(last_s)
        return "unsatisfiable" if size == 0 or n == 0 else (max(0, size - n), size - 1)
    first = int(first_s)
    last = min(int(last_s), size - 1) if last_s else size - 1
    return "unsatisfiable" if first >= size else (first, last)


def _authorized(state: State, authorization: str) -> bool:
    """The bearer token, or (given an HMAC key id) a SigV4 header naming that key, signature unchecked."""
    if authorization == f"Bearer {state.token}":
        return True
    key_id = state.hmac_key_id
    return key_id is not None and authorization.startswith(f"AWS4-HMAC-SHA256 Credential={key_id}/")


def make_handler(state: State) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # http.server sends the headers and the body in two writes: with Nagle's algorithm the
        # body waits for the client's delayed ACK of the headers, 40 ms on Linux, for every
        # answer with a body (Azurite through this proxy: 13 files/s read one at a time, 140
        # with TCP_NODELAY; bench/remote.py, 2026-11-28).
        disable_nagle_algorithm = True
        #: The log entry of the request being answered (None for the test-only routes).
        entry: dict[str, Any] | None = None

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def _reply(self, status: int, body: bytes, headers: list[tuple[str, str]]) -> None:
            if state.misbehave == "ignore-range" and self.command == "GET" and status == 206:
                # The whole object instead of the range: the range padded with zeros to the
                # object's size (the tests that ask for this read objects of zeros).
                cr = dict((k.lower(), v) for k, v in headers)["content-range"]
                first, total = int(cr.split(" ")[1].split("-")[0]), int(cr.rsplit("/", 1)[1])
                body = b"\0" * first + body + b"\0" * (total - first - len(body))
                status, headers = 200, [h for h in headers if h[0].lower() != "content-range"]
            if state.misbehave == "gzip" and self.command == "GET" and status in (200, 206) and "/_test/" not in self.path:
                import gzip

                body = gzip.compress(gzip.compress(body))
                headers = [*(h for h in headers if h[0].lower() != "content-encoding"), ("Content-Encoding", "gzip, gzip")]
            self.send_response_only(status)
            # A HEAD answer keeps the upstream's Content-Length: it is the object's size.
            keep_length = self.command == "HEAD"
            for k, v in headers:
                if k.lower() not in _HOP and (keep_length or k.lower() != "content-length"):
                    self.send_header(k, v)
            if not keep_length:
                self.send_header("Content-Length", str(len(body)))
                if self.entry is not None:
                    self.entry["bytes"] = len(body)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def _control(self, path: str) -> None:
            body = b"{}"
            with state.lock:
                if path == "/_test/requests":
                    body = json.dumps(state.log).encode()
                elif path == "/_test/reset":
                    state.log.clear()
                elif path.startswith("/_test/misbehave/"):
                    mode = path.rsplit("/", 1)[1]
                    state.misbehave = None if mode == "none" else mode
                elif path.startswith("/_test/die-after-lists/"):
                    state.lists_left = int(path.rsplit("/", 1)[1])
                elif path.startswith("/_test/delay/"):
                    state.delay = float(path.rsplit("/", 1)[1]) / 1000
            self._reply(200, body, [("Content-Type", "application/json")])

        def _forward(self) -> None:
            split = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            self.entry = None
            if split.path.startswith("/_test/"):
                self._control(split.path)
                return
            with state.lock:
                if is_listing(self.command, split.path, split.query) and state.lists_left is not None:
                    if state.lists_left == 0:
                        os._exit(0)  # dies with the request unanswered
                    state.lists_left -= 1
                self.entry = {
                    "method": self.command,
                    "path": split.path,
                    "query": split.query,
                    "range": self.headers.get("x-ms-range") or self.headers.get("Range"),
                    "accept_encoding": self.headers.get("Accept-Encoding"),
                    "bytes": 0,
                }
                state.log.append(self.entry)
                delay = state.delay
            if delay:
                time.sleep(delay)
            if state.token is not None and not _authorized(state, self.headers.get("Authorization") or ""):
                error = {"error": {"code": 401, "message": "Invalid Credentials", "errors": [{"reason": "authError"}]}}
                self._reply(401, json.dumps(error).encode(), [("Content-Type", "application/json")])
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
            if state.token is not None and not split.path.startswith(("/storage/", "/upload/", "/download/")):
                self._xml_api(split.path, split.query, headers)
                return
            status, data, answer = self._upstream(self.command, self.path, body, headers)
            self._reply(status, data, answer)

        def _upstream(
            self, method: str, path: str, body: bytes, headers: dict[str, str]
        ) -> tuple[int, bytes, list[tuple[str, str]]]:
            for attempt in range(2):
                conn = state.upstream()
                try:
                    conn.request(method, path, body=body, headers=headers)
                    resp = conn.getresponse()
                    return resp.status, resp.read(), resp.getheaders()
                except (ConnectionError, http.client.HTTPException):
                    conn.close()  # a kept-alive connection the upstream closed: once more, afresh
                    state.local.conn = None
                    if attempt:
                        raise
            raise AssertionError("not reached")

        def _xml_api(self, path: str, query: str, headers: dict[str, str]) -> None:
            """GCS's XML API from the emulator's JSON API (see the module's docstring)."""
            bucket, _, name = path.lstrip("/").partition("/")
            bucket, name = unquote(bucket), unquote(name)
            meta_headers = {k: v for k, v in headers.items() if k.lower() not in ("range", "if-match", "content-length")}
            if not name:
                self._xml_list(bucket, dict(parse_qsl(query)), meta_headers)
                return
            json_path = f"/storage/v1/b/{quote(bucket, safe='')}/o/{quote(name, safe='')}"
            status, data, _ = self._upstream("GET", json_path, b"", meta_headers)
            if status != 200:
                self._xml_error(404 if status == 404 else status, "NoSuchKey" if status == 404 else "Error")
                return
            meta = json.loads(data)
            size, etag = int(meta.get("size") or 0), f'"{meta.get("generation")}"'
            common = [("ETag", etag), ("Last-Modified", _http_date(meta.get("updated"))),
                      ("x-goog-generation", str(meta.get("generation")))]  # fmt: skip
            if self.command == "HEAD":
                self._reply(200, b"", [*common, ("Content-Length", str(size))])
                return
            wanted = headers.get("If-Match") or headers.get("if-match")
            if wanted is not None and wanted != etag:
                self._xml_error(412, "PreconditionFailed")
                return
            status, body, _ = self._upstream("GET", json_path + "?alt=media", b"", meta_headers)
            if status != 200:
                self._xml_error(status, "Error")
                return
            span = _byte_range(headers.get("Range") or headers.get("range"), len(body))
            if span is None:
                self._reply(200, body, common)
            elif span == "unsatisfiable":
                self._reply(416, b"<Error><Code>InvalidRange</Code></Error>", [("Content-Range", f"bytes */{len(body)}")])
            else:
                first, last = span
                self._reply(206, body[first : last + 1], [*common, ("Content-Range", f"bytes {first}-{last}/{len(body)}")])

        def _xml_list(self, bucket: str, params: dict[str, str], headers: dict[str, str]) -> None:
            """ListObjectsV2 of the XML API: pages of ``max-keys`` (GCS's default and most, 1,000),
            ``start-after`` and ``continuation-token`` (here: the last key sent) as GCS serves
            them, from the emulator's one unpaged JSON listing (it has no pagination)."""
            from xml.sax.saxutils import escape

            q = urlencode({"prefix": params.get("prefix", "")})  # flat: shredcat lists with no delimiter
            status, data, _ = self._upstream("GET", f"/storage/v1/b/{quote(bucket, safe='')}/o?{q}", b"", headers)
            if status != 200:
                self._xml_error(404 if status == 404 else status, "NoSuchBucket" if status == 404 else "Error")
                return
            doc = json.loads(data)
            after = max(params.get("start-after", ""), params.get("continuation-token", ""))
            items = sorted((i for i in doc.get("items") or () if i["name"] > after), key=lambda i: str(i["name"]))
            page = min(int(params.get("max-keys") or 1000), 1000)
            truncated = len(items) > page
            items = items[:page]
            more = f"<NextContinuationToken>{escape(items[-1]['name'])}</NextContinuationToken>" if truncated else ""
            out = [f'<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
                   f"<Name>{escape(bucket)}</Name><Prefix>{escape(params.get('prefix', ''))}</Prefix>"
                   f"<IsTruncated>{str(truncated).lower()}</IsTruncated>{more}"]  # fmt: skip
            for item in items:
                out.append(
                    f"<Contents><Key>{escape(item['name'])}</Key><Size>{item.get('size', 0)}</Size>"
                    f"<LastModified>{_iso(item.get('updated'))}</LastModified><ETag>\"{item.get('generation')}\"</ETag></Contents>"
                )
            out.append("</ListBucketResult>")
            self._reply(200, "".join(out).encode(), [("Content-Type", "application/xml")])

        def _xml_error(self, status: int, code: str) -> None:
            body = f"<?xml version='1.0' encoding='UTF-8'?><Error><Code>{code}</Code></Error>".encode()
            self._reply(status, body, [("Content-Type", "application/xml")])

        do_GET = do_HEAD = do_PUT = do_POST = do_DELETE = do_PATCH = _forward

    return Handler


class Server(ThreadingHTTPServer):
    #: A listen backlog for every connection a client opens at once (socketserver's default, 5,
    #: drops the connects of a client with 64 requests in flight: retried for seconds, then failed).
    request_queue_size = 256


def main() -> None:
    port, upstream = int(sys.argv[1]), int(sys.argv[2])
    token = sys.argv[3] if len(sys.argv) > 3 else None
    hmac_key_id = sys.argv[4] if len(sys.argv) > 4 else None
    server = Server(("127.0.0.1", port), make_handler(State(upstream, token, hmac_key_id)))
    server.daemon_threads = True
    print("ready", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
