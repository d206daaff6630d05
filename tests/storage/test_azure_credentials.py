"""Azure AD tokens for the Blob store (service.storage.objects.azure_credentials).

The chain and the token parser are pure. End to end, Azurite runs with TLS and its OAuth check
(``--oauth basic``: a bearer token must be a JWT of Azure AD's issuer, for the storage audience,
within its lifetime; Azurite does not check signatures), and a small loopback server plays Azure
AD's token endpoint and App Service's identity endpoint, checking the client secret, the
federated token and the identity header: a read succeeds only with a token Azurite accepts."""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac
import ipaddress
import json
import logging
import os
import shutil
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from service.errors import FileAccessError, ObjectAccessDeniedError, ObjectStoreError
from service.storage.objects import StoreOptions
from service.storage.objects.azure import AzureBlobStore, AzureConfig, string_to_sign
from service.storage.objects.azure_credentials import (
    AzureCliSource,
    ClientSecretSource,
    ManagedIdentitySource,
    WorkloadIdentitySource,
    parse_cli_token,
    resolve,
)
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import Expiring, parse_token
from tests.storage.emulators import (
    EmulatorUnavailable,
    _wait_for_line,
    _wait_listening,
    azurite_command,
    free_port,
    require_emulator,
)
from tests.storage.loopback import Handler, answering, serving

TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
ACCOUNT = "shredcat"
BODY = b"0123456789" * 10

# --- the chain ---------------------------------------------------------------------------------


def test_the_chain_in_order() -> None:
    https = "https://acct.blob.core.windows.net"
    env = {"AZURE_TENANT_ID": "t", "AZURE_CLIENT_ID": "c"}
    assert resolve({**env, "AZURE_CLIENT_SECRET": "s", "AZURE_FEDERATED_TOKEN_FILE": "/f"}, https) == ClientSecretSource("t", "c", "s")
    assert resolve({**env, "AZURE_FEDERATED_TOKEN_FILE": "/f", "AZURE_AUTHORITY_HOST": "https://login.microsoftonline.us"}, https) == (
        WorkloadIdentitySource("t", "c", "/f", "https://login.microsoftonline.us")
    )
    assert resolve({"IDENTITY_ENDPOINT": "http://127.0.0.1:41/msi/token", "IDENTITY_HEADER": "h"}, https) == (
        ManagedIdentitySource("http://127.0.0.1:41/msi/token", "h")
    )
    assert resolve({"AZURE_CLIENT_ID": "uami"}, https) == ManagedIdentitySource(client_id="uami")
    # Over http (Azurite without TLS) no token is sent: managed identity is not tried, and
    # configured credentials are an error rather than silently unused.
    assert resolve({}, "http://127.0.0.1:10000/devstoreaccount1") is None
    with pytest.raises(FileAccessError, match="need an https blob endpoint"):
        resolve({**env, "AZURE_CLIENT_SECRET": "s"}, "http://127.0.0.1:10000/acct")
    # A key or a SAS wins over any token.
    key = base64.b64encode(b"k" * 32).decode()
    assert AzureConfig.from_env({"AZURE_STORAGE_ACCOUNT_NAME": "a", "AZURE_STORAGE_ACCOUNT_KEY": key, **env, "AZURE_CLIENT_SECRET": "s"}).tokens is None


def test_the_azure_cli_after_managed_identity(tmp_path: Path) -> None:
    https = "https://acct.blob.core.windows.net"
    az = tmp_path / "az"
    az.write_text("#!/bin/sh\n")
    az.chmod(0o755)
    got = resolve({"PATH": str(tmp_path), "AZURE_TENANT_ID": "t"}, https)
    assert got == ManagedIdentitySource(fallback=AzureCliSource(str(az), "t"))
    assert resolve({"PATH": str(tmp_path / "none")}, https) == ManagedIdentitySource()
    assert resolve({}, https) == ManagedIdentitySource()  # no PATH given: not the test process's
    # A relative entry (here one leading to that az from the working directory) is skipped.
    assert resolve({"PATH": os.path.relpath(tmp_path)}, https) == ManagedIdentitySource()
    assert parse_cli_token(b'{"accessToken": "a", "expires_on": 1800000000, "tokenType": "Bearer"}', "u") == Expiring("a", 1.8e9)
    local = dt.datetime(2030, 1, 2, 3, 4, 5)
    assert parse_cli_token(json.dumps({"accessToken": "a", "expiresOn": "2030-01-02 03:04:05.000000"}).encode(), "u") == Expiring("a", local.timestamp())
    for bad in (b"", b"{}", b'{"accessToken": "a"}', b'{"accessToken": "a", "expiresOn": "soon"}'):
        with pytest.raises(ObjectAccessDeniedError, match="no credentials: the Azure CLI printed"):
            parse_cli_token(bad, "u")


def test_token_answers() -> None:
    assert parse_token(b'{"access_token": "a", "expires_in": 3599}', "u", "w", now=100.0) == Expiring("a", 3699.0)
    assert parse_token(b'{"access_token": "a", "expires_in": "3599"}', "u", "w", now=100.0) == Expiring("a", 3699.0)
    assert parse_token(b'{"access_token": "a", "expires_on": "1800000000", "expires_in": "1"}', "u", "w") == Expiring("a", 1.8e9)
    for bad in (b"{}", b'{"access_token": "a"}', b'{"access_token": "a", "expires_in": "soon"}', b"<html/>"):
        with pytest.raises(ObjectAccessDeniedError, match="no credentials: w"):
            parse_token(bad, "u", "w")


def test_a_vm_without_identity_goes_anonymous_for_a_while() -> None:
    no_identity = {("GET", "/metadata/identity/oauth2/token"): (400, b'{"error": "invalid_request", "error_description": "Identity not found"}'),
                   ("GET", "/msi"): (400, b'{"error": "invalid_request", "error_description": "Identity not found"}')}  # fmt: skip
    http = HttpSender(StoreOptions())
    try:
        with answering(no_identity) as url:
            for endpoint in (url + "/metadata/identity/oauth2/token", "http://127.0.0.1:9/x"):
                got = ManagedIdentitySource(endpoint=endpoint).fetch(http, "abfs://c/x")
                assert got.value is None and got.expires is not None and got.expires > time.time() + 3000
            # App Service's endpoint is named: its refusal is an error.
            with pytest.raises(ObjectAccessDeniedError, match="Identity not found"):
                ManagedIdentitySource(url + "/msi", "h").fetch(http, "abfs://c/x")
    finally:
        http.close()


# --- against Azurite ----------------------------------------------------------------------------


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def _jwt(aud: str, lifetime: int = 3600) -> str:
    """A token of the shape Azure AD issues (Azurite checks issuer, audience and lifetime)."""
    now = int(time.time())
    claims = {"aud": aud, "iss": f"https://sts.windows.net/{TENANT}/", "iat": now - 5, "nbf": now - 5, "exp": now + lifetime, "tid": TENANT}
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + _b64(json.dumps(claims).encode())
    return head + "." + _b64(hmac.new(b"not-checked", head.encode(), hashlib.sha256).digest())


@dataclass
class _Azurite:
    process: subprocess.Popen[bytes]
    endpoint: str
    cert: Path
    key: str
    workdir: Path


def _self_signed(where: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = where / "cert.pem", where / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return cert_path, key_path


def _shared_key_request(az: _Azurite, method: str, path: str, body: bytes = b"", **headers: str) -> None:
    url = az.endpoint + path
    h = {"x-ms-date": formatdate(usegmt=True), "x-ms-version": "2021-08-06", "content-length": str(len(body)), **headers}
    mac = hmac.new(base64.b64decode(az.key), string_to_sign(method, url, h, ACCOUNT).encode(), hashlib.sha256).digest()
    h["Authorization"] = f"SharedKey {ACCOUNT}:{base64.b64encode(mac).decode()}"
    r = httpx.request(method, url, headers=h, content=body, verify=ssl.create_default_context(cafile=str(az.cert)))
    assert r.status_code in (201, 202), r.text


@pytest.fixture(scope="module")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_Azurite]:
    """Azurite over TLS with its OAuth check, holding ``lake/creds/object.bin``."""
    workdir = tmp_path_factory.mktemp("azurite-oauth")
    try:
        launcher = azurite_command()
    except EmulatorUnavailable as e:
        require_emulator("Azurite", str(e))
        raise
    cert, key_file = _self_signed(workdir)
    port = free_port()
    key = base64.b64encode(os.urandom(64)).decode()
    with open(workdir / "azurite.log", "wb") as log:
        process = subprocess.Popen(
            [str(launcher), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence", "--loose",
             "--skipApiVersionCheck", "--disableTelemetry", "--oauth", "basic", "--cert", str(cert), "--key", str(key_file)],
            cwd=workdir,
            env={**os.environ, "AZURITE_ACCOUNTS": f"{ACCOUNT}:{key}"},
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        _wait_listening(port, process, "Azurite")
        _wait_for_line(workdir / "azurite.log", "successfully listens", process, "Azurite")
        az = _Azurite(process, f"https://127.0.0.1:{port}/{ACCOUNT}", cert, key, workdir)
        _shared_key_request(az, "PUT", "/lake?restype=container")
        _shared_key_request(az, "PUT", "/lake/creds/object.bin", BODY, **{"x-ms-blob-type": "BlockBlob"})
        yield az
    finally:
        process.kill()
        process.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


@dataclass
class _Entra:
    """Azure AD's token endpoint and App Service's identity endpoint, on loopback."""

    federated: str
    asked: list[str] = field(default_factory=list)
    url: str = ""

    def handler(self) -> type[Handler]:
        entra = self

        class Entra(Handler):
            def do_POST(self) -> None:
                form = self.form()
                entra.asked.append("POST " + self.path)
                if self.path != f"/{TENANT}/oauth2/v2.0/token" or form.get("scope") != "https://storage.azure.com/.default":
                    return self.reply(400, {"error": "invalid_request", "error_description": "AADSTS900144: bad request"})
                aud = "https://management.azure.com" if form.get("client_id") == "wrong-audience" else "https://storage.azure.com"
                if form.get("client_secret") == "s3cret" or form.get("client_assertion") == entra.federated:
                    return self.reply(200, {"token_type": "Bearer", "expires_in": 3599, "access_token": _jwt(aud)})
                self.reply(401, {"error": "invalid_client", "error_description": "AADSTS7000215: Invalid client secret provided.\nTrace ID: x"})

            def do_GET(self) -> None:
                entra.asked.append("GET " + self.path.split("?")[0])
                if self.headers.get("X-IDENTITY-HEADER") != "identity-header":
                    return self.reply(401, {"error": {"code": "Unauthorized", "message": "bad header"}})
                self.reply(200, {"access_token": _jwt("https://storage.azure.com/"), "expires_on": str(int(time.time()) + 3600)})

        return Entra


@pytest.fixture
def entra(tmp_path: Path) -> Iterator[tuple[_Entra, Path]]:
    token_file = tmp_path / "azure-identity-token"
    token_file.write_text("federated-token-of-the-pod\n")
    e = _Entra("federated-token-of-the-pod")
    with serving(e.handler()) as e.url:
        yield e, token_file


def _read(az: _Azurite, monkeypatch: pytest.MonkeyPatch, **env: str) -> bytes:
    monkeypatch.setenv("SSL_CERT_FILE", str(az.cert))  # httpx trusts the emulator's certificate
    config = AzureConfig.from_env({"AZURE_STORAGE_ACCOUNT_NAME": ACCOUNT, "AZURE_STORAGE_ENDPOINT": az.endpoint, **env})
    store = AzureBlobStore(config, StoreOptions())
    try:
        info = store.head("abfs://lake/creds/object.bin")
        assert info is not None
        return store.read_tail("abfs://lake/creds/object.bin", 1000).data
    finally:
        store.close()


def test_no_managed_identity_means_anonymous_which_azurite_refuses(azurite: _Azurite, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(azurite.cert))
    # Instance metadata that does not answer (nothing listens on loopback's port 9): anonymous.
    nowhere = ManagedIdentitySource(endpoint="http://127.0.0.1:9/metadata/identity/oauth2/token")
    store = AzureBlobStore(AzureConfig(ACCOUNT, azurite.endpoint, tokens=nowhere), StoreOptions())
    try:
        with pytest.raises(ObjectStoreError) as e:
            store.read_tail("abfs://lake/creds/object.bin", 1000)
        assert e.value.details["reason"] in ("denied", "not_found"), e.value.message
    finally:
        store.close()


def test_a_service_principal_secret(azurite: _Azurite, entra: tuple[_Entra, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    e, _ = entra
    sp = {"AZURE_TENANT_ID": TENANT, "AZURE_CLIENT_ID": "app", "AZURE_AUTHORITY_HOST": e.url}
    assert _read(azurite, monkeypatch, **sp, AZURE_CLIENT_SECRET="s3cret") == BODY
    assert e.asked == [f"POST /{TENANT}/oauth2/v2.0/token"]  # one token for the HEAD and the GET
    with pytest.raises(ObjectAccessDeniedError, match=r"answered HTTP 401: invalid_client \(AADSTS7000215: Invalid client secret provided.\)"):
        _read(azurite, monkeypatch, **sp, AZURE_CLIENT_SECRET="wrong")
    # A token for another audience: Azure AD gives it, the storage refuses it.
    with pytest.raises(ObjectAccessDeniedError, match="access denied"):
        _read(azurite, monkeypatch, **{**sp, "AZURE_CLIENT_ID": "wrong-audience"}, AZURE_CLIENT_SECRET="s3cret")


def test_workload_identity(azurite: _Azurite, entra: tuple[_Entra, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    e, token_file = entra
    env = {"AZURE_TENANT_ID": TENANT, "AZURE_CLIENT_ID": "app", "AZURE_AUTHORITY_HOST": e.url, "AZURE_FEDERATED_TOKEN_FILE": str(token_file)}
    assert _read(azurite, monkeypatch, **env) == BODY
    token_file.write_text("expired-federated-token")
    with pytest.raises(ObjectAccessDeniedError, match="invalid_client"):
        _read(azurite, monkeypatch, **env)


def _fake_az(tmp_path: Path, body: str) -> str:
    """An ``az`` that answers ``account get-access-token`` as the real one does (its arguments checked)."""
    script = tmp_path / "az"
    script.write_text(
        f"#!{sys.executable}\nimport json, sys, time\n"
        "assert sys.argv[1:7] == ['account', 'get-access-token', '--output', 'json', '--resource', 'https://storage.azure.com/'], sys.argv\n"
        f"{body}\n"
    )
    script.chmod(0o755)
    return str(script)


def test_the_azure_cli_login_signs_where_no_managed_identity_is(
    azurite: _Azurite, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(azurite.cert))
    token = _jwt("https://storage.azure.com/")
    good = _fake_az(tmp_path, f"print(json.dumps({{'accessToken': {token!r}, 'expires_on': int(time.time()) + 3600, 'tokenType': 'Bearer'}}))")
    nowhere = "http://127.0.0.1:9/metadata/identity/oauth2/token"  # no instance metadata here

    def read(az: AzureCliSource) -> bytes:
        store = AzureBlobStore(AzureConfig(ACCOUNT, azurite.endpoint, tokens=ManagedIdentitySource(endpoint=nowhere, fallback=az)), StoreOptions())
        try:
            return store.read_tail("abfs://lake/creds/object.bin", 1000).data
        finally:
            store.close()

    assert read(AzureCliSource(good)) == BODY
    # Logged out (most machines that merely have az): anonymous as before, said in the log.
    (tmp_path / "out").mkdir()
    logged_out = _fake_az(tmp_path / "out", "print(\"ERROR: Please run 'az login' to setup account.\", file=sys.stderr); sys.exit(1)")
    with caplog.at_level(logging.INFO, logger="service.storage.objects.renewal"), pytest.raises(ObjectStoreError) as e:
        read(AzureCliSource(logged_out))
    assert e.value.details["reason"] in ("denied", "not_found"), e.value.message  # Azurite refuses anonymous reads
    assert any("Please run 'az login'" in r.getMessage() and "go anonymous" in r.getMessage() for r in caplog.records)


def test_app_service_managed_identity(azurite: _Azurite, entra: tuple[_Entra, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    e, _ = entra
    env = {"IDENTITY_ENDPOINT": e.url + "/msi/token", "IDENTITY_HEADER": "identity-header"}
    assert _read(azurite, monkeypatch, **env) == BODY
    assert e.asked == ["GET /msi/token"]
    with pytest.raises(ObjectAccessDeniedError, match="Unauthorized"):
        _read(azurite, monkeypatch, **{**env, "IDENTITY_HEADER": "stale"})
