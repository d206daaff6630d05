"""Azure Blob (Azurite) and Google Cloud Storage (gcp-storage-emulator) servers on loopback.

Each runs as a process of its own on a free port, behind :mod:`tests.storage.proxy` (which counts
requests and can die mid-listing; for GCS it also refuses a wrong bearer token, which the emulator
cannot). The tests reach them only through each SDK's usual environment (:meth:`env`):

* Azure: ``AZURE_STORAGE_CONNECTION_STRING`` (``AccountName``, ``AccountKey``, ``BlobEndpoint``),
  the way Azure's SDKs are pointed at Azurite. The account and its key are made up per session
  (``AZURITE_ACCOUNTS``), so a wrong key is refused with 403 by Azurite's own SharedKey check.
* GCS: ``STORAGE_EMULATOR_HOST`` (what Google's client libraries read), plus the access token
  the proxy expects in ``GOOGLE_OAUTH_ACCESS_TOKEN``.

Azurite comes from the npm registry: it is installed (pinned) into ``.cache/azurite`` of the
checkout on first use, under a lock so that xdist workers install it once; ``.ci/run`` installs it
before the tests. When it cannot be had (no ``npm``, no registry) or an emulator does not start,
the tests that need it are skipped on a laptop and fail when ``CI=true``, as for PostgreSQL.
Setup (containers, buckets, uploads) talks to the emulators directly, never through the code
under test: Azure through pyarrow's AzureFileSystem, GCS through the emulator's JSON upload API.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
#: The Azurite release the tests run against (npm package ``azurite``).
AZURITE_VERSION = "3.37.0"
AZURITE_DIR = Path(os.environ.get("SHREDCAT_TEST_AZURITE_DIR", REPO / ".cache" / "azurite"))
CONTAINER = "lake"
BUCKET = "lake"
_START_TIMEOUT = 60.0


class EmulatorUnavailable(Exception):
    """An emulator could not be installed or started here."""


def require_emulator(name: str, why: str) -> None:
    """Skip (laptop) or fail (CI=true): the policy of :func:`tests.conftest.require_postgres`."""
    msg = f"{name} is unavailable ({why})"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + ": CI requires it (.ci/run installs it)", pytrace=False)
    pytest.skip(msg)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[Any], what: str) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise EmulatorUnavailable(f"{what} exited with status {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise EmulatorUnavailable(f"{what} did not listen on port {port} within {_START_TIMEOUT:.0f} s")


def _wait_for_line(log: Path, needle: str, process: subprocess.Popen[Any], what: str) -> None:
    deadline = time.monotonic() + _START_TIMEOUT
    while needle not in log.read_text(errors="replace"):
        if process.poll() is not None:
            raise EmulatorUnavailable(f"{what} exited with status {process.returncode}: {log.read_text()[-500:]}")
        if time.monotonic() > deadline:
            process.kill()
            raise EmulatorUnavailable(f"{what} did not say it was ready within {_START_TIMEOUT:.0f} s")
        time.sleep(0.05)


def _start_proxy(
    upstream: int, token: str | None = None, hmac_key_id: str | None = None
) -> tuple[subprocess.Popen[str], str]:
    why = ""
    for _ in range(3):  # a free port may be taken by another process before the proxy binds it
        port = free_port()
        auth = [token, *([hmac_key_id] if hmac_key_id else [])] if token else []
        args = [sys.executable, "-m", "tests.storage.proxy", str(port), str(upstream), *auth]
        process = subprocess.Popen(
            args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}
        )
        assert process.stdout is not None and process.stderr is not None
        if process.stdout.readline().strip() == "ready":
            process.stderr.close()  # nothing more is read from it; the proxy logs nothing
            return process, f"http://127.0.0.1:{port}"
        process.kill()
        why = process.stderr.read().strip()[-500:]
        process.wait(10)
    raise EmulatorUnavailable(f"the recording proxy did not start: {why}")


@dataclass
class Emulator:
    """What the Azure and GCS servers share: the emulator process, the proxy in front of it."""

    process: subprocess.Popen[Any]
    proxy: subprocess.Popen[str]
    #: Where clients go (the proxy).
    endpoint: str
    #: The emulator itself, for setup that must not be counted or refused.
    direct: str
    workdir: Path | None = field(default=None)

    def control(self, path: str, method: str = "POST") -> Any:
        req = urllib.request.Request(self.endpoint + path, method=method)
        with urllib.request.urlopen(req, timeout=10) as r:
            return json.loads(r.read())

    def requests(self) -> list[dict[str, Any]]:
        return list(self.control("/_test/requests", "GET"))

    @staticmethod
    def is_listing(request: dict[str, Any]) -> bool:
        """Whether a request :meth:`requests` recorded lists objects."""
        from tests.storage.proxy import is_listing

        return is_listing(request["method"], request["path"], request["query"])

    def stop(self) -> None:
        for p in (self.proxy, self.process):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


# --- Azure Blob: Azurite ------------------------------------------------------------------------


def azurite_command() -> Path:
    """The ``azurite-blob`` launcher, installed from the npm registry into :data:`AZURITE_DIR` on
    first use (once per machine; concurrent callers wait on a lock)."""
    launcher = AZURITE_DIR / "node_modules" / ".bin" / "azurite-blob"
    if launcher.exists():
        return launcher
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None:
        raise EmulatorUnavailable("Azurite needs node and npm (Debian: apt-get install nodejs npm)")
    AZURITE_DIR.mkdir(parents=True, exist_ok=True)
    with open(AZURITE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not launcher.exists():
            cmd = [npm, "install", "--prefix", str(AZURITE_DIR), "--no-audit", "--no-fund", "--loglevel=error",
                   f"azurite@{AZURITE_VERSION}"]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            if r.returncode != 0 or not launcher.exists():
                raise EmulatorUnavailable(f"npm install azurite@{AZURITE_VERSION} failed: {r.stderr.strip()[-500:]}")
    return launcher


@dataclass
class AzuriteServer(Emulator):
    account: str = "shredcat"
    key: str = ""
    scheme = "abfs"
    _setup_fs: Any = field(default=None, init=False, repr=False, compare=False)

    def aliases(self, uri: str) -> list[str]:
        """Other spellings writers use for ``uri``: Hadoop's (Databricks, Synapse), fsspec's."""
        container, _, path = uri.split("://", 1)[1].partition("/")
        return [
            f"abfss://{container}/{path}",
            f"az://{container}/{path}",
            f"abfss://{container}@{self.account}.dfs.core.windows.net/{path}",
            f"wasbs://{container}@{self.account}.blob.core.windows.net/{path}",
        ]

    def wrong_credentials(self) -> dict[str, str]:
        """Environment overrides with a key Azurite refuses (a well-formed one of another account)."""
        return {"AZURE_STORAGE_CONNECTION_STRING": self.connection_string(key=base64.b64encode(b"k" * 64).decode())}

    def request_path(self, uri: str) -> str:
        """The HTTP path a request for ``uri`` goes to, percent-decoded (clients differ in what they escape)."""
        return f"/{self.account}/" + uri.split("://", 1)[1]

    def connection_string(self, *, key: str | None = None, endpoint: str | None = None) -> str:
        return (
            f"DefaultEndpointsProtocol=http;AccountName={self.account};AccountKey={key or self.key};"
            f"BlobEndpoint={endpoint or self.endpoint}/{self.account};"
        )

    def env(self, **overrides: str) -> dict[str, str]:
        """The SDK environment that points a client at this server (through the proxy)."""
        return {"AZURE_STORAGE_CONNECTION_STRING": self.connection_string(), **overrides}

    def filesystem(self) -> Any:
        """pyarrow's AzureFileSystem on the emulator itself (setup only)."""
        from pyarrow import fs as pafs

        authority = self.direct.split("://", 1)[1]
        return pafs.AzureFileSystem(
            account_name=self.account,
            account_key=self.key,
            blob_storage_authority=authority,
            dfs_storage_authority=authority,
            blob_storage_scheme="http",
            dfs_storage_scheme="http",
        )

    def uri(self, key: str) -> str:
        return f"abfs://{CONTAINER}/{key}"

    def put(self, key: str, body: bytes) -> str:
        if self._setup_fs is None:  # one for every upload: a new one costs ~20 ms an upload
            self._setup_fs = self.filesystem()
        with self._setup_fs.open_output_stream(f"{CONTAINER}/{key}") as f:
            f.write(body)
        return self.uri(key)

    def upload(self, local: Path, key: str) -> str:
        return self.put(key, local.read_bytes())


def start_azurite() -> AzuriteServer:
    for attempt in range(3):  # a free port may be taken by another process before Azurite binds it
        try:
            return _start_azurite()
        except EmulatorUnavailable:
            if attempt == 2:
                raise
    raise AssertionError("not reached")


def _start_azurite() -> AzuriteServer:
    launcher = azurite_command()
    port = free_port()
    account = "shredcat"
    key = base64.b64encode(os.urandom(64)).decode()
    # Azurite accepts the accounts of AZURITE_ACCOUNTS only (plus none of its well-known default),
    # and checks every request's SharedKey signature against that key.
    env = {**os.environ, "AZURITE_ACCOUNTS": f"{account}:{key}"}
    workdir = Path(os.environ.get("TMPDIR", "/tmp")) / f"azurite-{os.getpid()}-{port}"
    workdir.mkdir(parents=True, exist_ok=True)
    with open(workdir / "azurite.log", "wb") as log:
        process = subprocess.Popen(
            [str(launcher), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence", "--loose",
             "--skipApiVersionCheck", "--disableTelemetry", "--silent", "--extentMemoryLimit", "512"],
            cwd=workdir,  # whatever Azurite writes besides its in-memory store stays in a directory of ours
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_listening(port, process, "Azurite")
        # Listening on the port may be another process that took it first: Azurite says when it is.
        _wait_for_line(workdir / "azurite.log", "successfully listens", process, "Azurite")
        proxy, endpoint = _start_proxy(port)
    except BaseException:
        process.kill()
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    server = AzuriteServer(process, proxy, endpoint, f"http://127.0.0.1:{port}", workdir, account, key)
    try:
        server.filesystem().create_dir(CONTAINER)
    except BaseException:
        server.stop()
        raise
    return server


# --- Google Cloud Storage: gcp-storage-emulator -----------------------------------------------


@dataclass
class GcsServer(Emulator):
    token: str = ""
    scheme = "gs"

    @staticmethod
    def aliases(uri: str) -> list[str]:
        """Other spellings writers use for ``uri`` (fsspec's gcs://)."""
        return ["gcs://" + uri.split("://", 1)[1], "GCS://" + uri.split("://", 1)[1]]

    def wrong_credentials(self) -> dict[str, str]:
        """Environment overrides with an access token the server refuses."""
        return {"GOOGLE_OAUTH_ACCESS_TOKEN": "not-" + self.token}

    def request_path(self, uri: str) -> str:
        """The HTTP path of a read of ``uri`` through GCS's XML API, percent-decoded."""
        return "/" + uri.split("://", 1)[1]

    def env(self, **overrides: str) -> dict[str, str]:
        """The environment that points a client at this server (through the proxy)."""
        return {"STORAGE_EMULATOR_HOST": self.endpoint, "GOOGLE_OAUTH_ACCESS_TOKEN": self.token, **overrides}

    def uri(self, key: str) -> str:
        return f"gs://{BUCKET}/{key}"

    def put(self, key: str, body: bytes) -> str:
        name = urllib.parse.quote(key, safe="")
        url = f"{self.direct}/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={name}"
        req = urllib.request.Request(url, data=body, method="POST", headers={"Content-Type": "application/octet-stream"})
        with urllib.request.urlopen(req, timeout=30) as r:
            r.read()
        return self.uri(key)

    def upload(self, local: Path, key: str) -> str:
        return self.put(key, local.read_bytes())


def start_gcs(hmac_key_id: str | None = None) -> GcsServer:
    """The emulator behind its proxy; ``hmac_key_id``: also accept SigV4 requests naming that HMAC
    key, signature unchecked (``bench/remote.py``'s DuckDB peer; see :mod:`tests.storage.proxy`)."""
    for attempt in range(3):  # a free port may be taken by another process before the emulator binds it
        try:
            return _start_gcs(hmac_key_id)
        except EmulatorUnavailable:
            if attempt == 2:
                raise
    raise AssertionError("not reached")


def _start_gcs(hmac_key_id: str | None) -> GcsServer:
    try:
        import gcp_storage_emulator  # noqa: F401 - only whether it is installed
    except ImportError:
        raise EmulatorUnavailable("gcp-storage-emulator is not installed (pip install -e '.[dev]')") from None
    port = free_port()
    # The emulator serves one request at a time behind http.server's listen backlog of 5: with more
    # connections opened at once (64 requests in flight), the rest are dropped and retried for
    # seconds (then failed by a client's timeout). GCS accepts them all: a backlog to match.
    # And after every change it serializes all its metadata (every object's) into a ``.meta``
    # file, which in memory nothing reads back (it is read once, at start, from the empty store):
    # a thousand uploads cost O(n^2), 5 s for the first 340 and 31 s for the third 340 measured
    # here. In memory, that write is skipped.
    launch = (
        "import http.server, sys; http.server.HTTPServer.request_queue_size = 256; "
        "from gcp_storage_emulator.storage import Storage; write = Storage._write_config_to_file; "
        "Storage._write_config_to_file = lambda self: None if self._use_memory_fs else write(self); "
        "from gcp_storage_emulator.__main__ import main; main(sys.argv[1:])"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", launch, "start", "--host", "127.0.0.1", "--port", str(port),
         "--in-memory", "--default-bucket", BUCKET, "--quiet"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_listening(port, process, "gcp-storage-emulator")
        _wait_bucket(f"http://127.0.0.1:{port}", process)
        token = base64.urlsafe_b64encode(os.urandom(24)).decode()
        proxy, endpoint = _start_proxy(port, token, hmac_key_id)
    except BaseException:
        process.kill()
        raise
    return GcsServer(process, proxy, endpoint, f"http://127.0.0.1:{port}", None, token)


def _wait_bucket(direct: str, process: subprocess.Popen[Any]) -> None:
    """The emulator listens before it has made the default bucket: wait for the bucket."""
    deadline = time.monotonic() + _START_TIMEOUT
    while True:
        try:
            with urllib.request.urlopen(f"{direct}/storage/v1/b/{BUCKET}", timeout=5) as r:
                r.read()
                return
        except (urllib.error.URLError, OSError):
            if time.monotonic() > deadline or process.poll() is not None:
                raise EmulatorUnavailable("gcp-storage-emulator did not create its bucket") from None
            time.sleep(0.1)
