"""An S3 API server on loopback for the storage tests, started like PostgreSQL is for the others.

moto's server mode (``tests/storage/s3server.py``) in a process of its own, with IAM enforced:
the tests' credentials belong to an IAM user allowed everything, so wrong credentials are refused
(403) as by a real store: this is also what checks shredcat's SigV4 signatures. shredcat's S3
store (``service.storage.objects.s3``), pyarrow and boto3 reach it through the SDK's usual
environment only (``AWS_ENDPOINT_URL``, ``AWS_ACCESS_KEY_ID``, ...), as a deployment configures it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from fastapi.testclient import TestClient

from service.api import create_app
from tests.api.conftest import make_settings
from tests.storage.emulators import (
    AzuriteServer,
    EmulatorUnavailable,
    GcsServer,
    require_emulator,
    start_azurite,
    start_gcs,
)

REPO = Path(__file__).resolve().parents[2]
BUCKET = "lake"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class S3Server:
    """moto in a process of its own, with the interface of :class:`tests.storage.emulators.Emulator`
    that the shared object-store suite (:mod:`tests.storage.remote_suite`) uses."""

    process: subprocess.Popen[str]
    endpoint: str
    key_id: str
    secret: str
    scheme = "s3"
    #: The S3 client of :meth:`put` and :meth:`upload` (a new client costs ~20 ms of setup each).
    _s3: Any = field(default=None, init=False, repr=False, compare=False)

    def uri(self, key: str) -> str:
        return f"s3://{BUCKET}/{key}"

    @staticmethod
    def aliases(uri: str) -> list[str]:
        """Other spellings writers use for the object (or prefix) ``uri`` names (Hadoop's)."""
        rest = uri.split("://", 1)[1]
        return [f"s3a://{rest}", f"s3n://{rest}", f"S3A://{rest}"]

    def wrong_credentials(self) -> dict[str, str]:
        """Environment overrides with a secret whose signatures the server refuses."""
        return {"AWS_SECRET_ACCESS_KEY": "wrong-secret"}

    def request_path(self, uri: str) -> str:
        """The HTTP path a GET of ``uri`` goes to (path-style, as :meth:`requests` records it)."""
        return "/" + uri.split("://", 1)[1]

    @staticmethod
    def is_listing(request: dict[str, Any]) -> bool:
        """Whether a request :meth:`requests` recorded lists objects (ListObjectsV2)."""
        return request["method"] == "GET" and "list-type=" in request["query"]

    def env(self, **overrides: str) -> dict[str, str]:
        """The SDK environment that points pyarrow at this server."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": self.key_id,
            "AWS_SECRET_ACCESS_KEY": self.secret,
            "AWS_REGION": "us-east-1",
            "AWS_EC2_METADATA_DISABLED": "true",
            **overrides,
        }

    def boto(self, service: str = "s3") -> Any:
        """A boto3 client of ``service`` (S3, IAM, STS...) with the IAM user's credentials."""
        return boto3.client(
            service,
            endpoint_url=self.endpoint,
            region_name="us-east-1",
            aws_access_key_id=self.key_id,
            aws_secret_access_key=self.secret,
        )

    def _client(self) -> Any:
        if self._s3 is None:
            self._s3 = self.boto()
        return self._s3

    def upload(self, local: Path, key: str) -> str:
        self._client().upload_file(str(local), BUCKET, key)
        return self.uri(key)

    def put(self, key: str, body: bytes) -> str:
        self._client().put_object(Bucket=BUCKET, Key=key, Body=body)
        return self.uri(key)

    def put_many(self, keys: list[str], body: bytes) -> None:
        """Every key with ``body``, stored by the server itself in one request (not recorded)."""
        self.control("/_test/put-many", data={"bucket": BUCKET, "keys": keys, "body": body.decode()})

    def control(self, path: str, method: str = "POST", data: Any = None) -> Any:
        payload = None if data is None else json.dumps(data).encode()
        req = urllib.request.Request(self.endpoint + path, data=payload, method=method)
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.loads(r.read())

    def requests(self) -> list[dict[str, Any]]:
        return list(self.control("/_test/requests", "GET"))

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(10)


def start_s3_server() -> S3Server:
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.storage.s3server", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    if process.stdout.readline().strip() != "ready":
        process.kill()
        raise RuntimeError("the S3 API server did not start")
    endpoint = f"http://127.0.0.1:{port}"
    boot = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "boot", "aws_secret_access_key": "boot"}
    deadline = time.monotonic() + 30
    while True:
        try:
            iam = boto3.client("iam", **boot)
            iam.create_user(UserName="shredcat")
            break
        except Exception:
            if time.monotonic() > deadline:
                process.kill()
                raise
            time.sleep(0.1)
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}
    iam.put_user_policy(UserName="shredcat", PolicyName="all", PolicyDocument=json.dumps(policy))
    key = iam.create_access_key(UserName="shredcat")["AccessKey"]
    boto3.client("s3", **boot).create_bucket(Bucket=BUCKET)
    # From here on every request needs the IAM user's credentials.
    req = urllib.request.Request(
        endpoint + "/moto-api/reset-auth", data=b"0", method="POST", headers={"Content-Type": "text/plain"}
    )
    urllib.request.urlopen(req, timeout=10).read()
    return S3Server(process, endpoint, key["AccessKeyId"], key["SecretAccessKey"])


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    server = start_s3_server()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def s3(s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> S3Server:
    """The session's server, with this process's environment pointing at it."""
    for k, v in s3_server.env().items():
        monkeypatch.setenv(k, v)
    return s3_server


@pytest.fixture
def app_factory(sqlite_url: str) -> Iterator[Callable[..., TestClient]]:
    """``app_factory(roots=[...], **settings)`` -> a started TestClient, as in tests/api."""
    clients: list[TestClient] = []

    def make(roots: list[str], **kw: Any) -> TestClient:
        c = TestClient(create_app(make_settings(sqlite_url, roots, **kw)), raise_server_exceptions=False)
        c.__enter__()
        clients.append(c)
        return c

    yield make
    for c in clients:
        c.__exit__(None, None, None)


@pytest.fixture(scope="session")
def azurite_server() -> Iterator[AzuriteServer]:
    try:
        server = start_azurite()
    except EmulatorUnavailable as e:
        require_emulator("Azurite (Azure Blob emulator)", str(e))
        raise  # not reached: require_emulator skips or fails
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def azure(azurite_server: AzuriteServer, monkeypatch: pytest.MonkeyPatch) -> AzuriteServer:
    """The session's Azurite, with this process's environment pointing at it."""
    for k, v in azurite_server.env().items():
        monkeypatch.setenv(k, v)
    return azurite_server


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[GcsServer]:
    try:
        server = start_gcs()
    except EmulatorUnavailable as e:
        require_emulator("gcp-storage-emulator (GCS emulator)", str(e))
        raise
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def gcs(gcs_server: GcsServer, monkeypatch: pytest.MonkeyPatch) -> GcsServer:
    """The session's GCS emulator, with this process's environment pointing at it."""
    for k, v in gcs_server.env().items():
        monkeypatch.setenv(k, v)
    return gcs_server
