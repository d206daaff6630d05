"""No secret in any log line, error or answer: with credentials set for all three clouds (the
servers' real ones, and fake ones the servers refuse: an AWS secret and session token, an Azure
account key and a SAS token whose ``sig=`` the issue saw logged, a GCS access token), every
storage path is exercised (listing, reading, REST commits of paths and prefixes, the metrics, the CLI), with
every logger at DEBUG, and nothing any of it wrote or answered holds a secret, plain or
percent-encoded."""

from __future__ import annotations

import base64
import logging
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from service.errors import ShredcatError
from service.storage import list_data_files
from service.storage.objects import close_stores
from tests.api.conftest import ADMIN, READER, WRITER, write_variant_file
from tests.storage.remote_suite import cli

FAKE_AWS_SECRET = "fakeAwsSecretKEY0123456789abcdefghijklmn"
FAKE_AWS_TOKEN = "fakeAwsSessionTOKEN0123456789"
FAKE_AZURE_KEY = base64.b64encode(b"fake-azure-account-key-0123456789" * 2).decode()
FAKE_SAS_SIG = "fakeSasSIGNATURE0123456789abc+/="
FAKE_GCS_TOKEN = "ya29.fakeGcsTOKEN0123456789"


def _fake(server: Any) -> dict[str, str]:
    """Environment overrides with this server's kind of secret, fake (refused by the server)."""
    if server.scheme == "s3":
        return {"AWS_SECRET_ACCESS_KEY": FAKE_AWS_SECRET, "AWS_SESSION_TOKEN": FAKE_AWS_TOKEN}
    if server.scheme == "abfs":
        sas = f"sv=2021-08-06&ss=b&srt=sco&sp=rl&se=2099-01-01T00:00:00Z&sig={quote(FAKE_SAS_SIG, safe='')}"
        return {"AZURE_STORAGE_CONNECTION_STRING": f"AccountName={server.account};SharedAccessSignature={sas};"
                f"BlobEndpoint={server.endpoint}/{server.account}"}  # fmt: skip
    return {"GOOGLE_OAUTH_ACCESS_TOKEN": FAKE_GCS_TOKEN}


def _secrets(server: Any) -> list[str]:
    real = {"s3": lambda: [server.secret], "abfs": lambda: [server.key], "gs": lambda: [server.token]}[server.scheme]()
    out = [*real, FAKE_AWS_SECRET, FAKE_AWS_TOKEN, FAKE_AZURE_KEY, FAKE_SAS_SIG, FAKE_GCS_TOKEN]
    return out + [quote(s, safe="") for s in out]


@pytest.fixture(params=["s3", "azure", "gcs"])
def server(request: pytest.FixtureRequest) -> Any:
    return request.getfixturevalue(request.param)  # the store, with this process's environment set


def test_no_secret_in_logs_errors_or_answers(
    server: Any, app_factory: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # every logger, every level
    base = f"lake/secrets-{server.scheme}/"
    good = server.upload(write_variant_file(tmp_path / "f.parquet", 20), base + "f.parquet")
    written: list[str] = []
    # Every cloud's secrets are in the environment at once, as on a machine that uses all three.
    monkeypatch.setenv("AZURE_STORAGE_ACCOUNT_KEY", FAKE_AZURE_KEY)
    monkeypatch.setenv("GOOGLE_BEARER_TOKEN", FAKE_GCS_TOKEN) if server.scheme != "gs" else None

    def exercise(expect_ok: bool) -> None:
        close_stores()
        try:
            written.append(repr(list_data_files(server.uri(base))))
        except ShredcatError as e:
            assert not expect_ok, e
            written.append(f"{e.message} {e.details}")
        c = app_factory(roots=[server.uri("lake/")])
        c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
        c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
        for body in ({"paths": [good]}, {"prefixes": [server.uri(base)]}, {"paths": [good + ".gone.parquet"]}):
            r = c.post("/v1/namespaces/lake/tables/events/commits", json=body, headers=WRITER)
            assert (r.status_code == 200) is (expect_ok and "gone" not in str(body)), r.text
            written.append(r.text)
        metrics = c.get("/metrics", headers=READER)
        assert metrics.status_code == 200, metrics.text
        written.append(metrics.text)
        env = server.env(**({} if expect_ok else _fake(server)))
        for args in (["stats", good], ["stats", server.uri(base)]):
            p = cli(args, tmp_path, {**env, "AZURE_STORAGE_ACCOUNT_KEY": FAKE_AZURE_KEY, "SHREDCAT_LOG_LEVEL": "DEBUG"})
            assert (p.returncode == 0) is expect_ok, p.stderr
            written.extend([p.stdout, p.stderr])

    exercise(expect_ok=True)
    for k, v in _fake(server).items():
        monkeypatch.setenv(k, v)
    exercise(expect_ok=False)
    close_stores()
    written.extend(r.getMessage() + repr(r.args) + (r.exc_text or "") for r in caplog.records)
    everything = "\n".join(written)
    assert "access denied" in everything, everything[-3000:]  # the failures were exercised
    for secret in _secrets(server):
        assert secret not in everything, secret
