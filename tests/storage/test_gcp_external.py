"""Workload Identity Federation (``external_account`` files, service.storage.objects.gcp_external).

The file's parsing is pure. The sources are exercised end to end against the GCS emulator behind
the test proxy, which refuses any bearer token but its own: a read succeeds only when the chain
got that token. Google's security token service, IAM Credentials and the platforms' metadata
servers have no emulator, so a loopback server plays them, checking what they check: the grant,
the audience, the scope and the subject token (for AWS, the SigV4 signature of the serialized
``GetCallerIdentity`` request, recomputed with botocore's signer), the client's basic
authentication, the bearer token and scope of ``generateAccessToken``, IMDSv2's session token."""

from __future__ import annotations

import base64
import datetime
import json
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from service.errors import ObjectAccessDeniedError
from service.storage.objects.gcp_credentials import SCOPE, from_file
from service.storage.objects.gcp_external import (
    CLOUD_PLATFORM,
    AwsSubject,
    ExternalAccountSource,
    FileSubject,
    UrlSubject,
)
from service.storage.objects.sigv4 import Credentials
from tests.storage.conftest import boto_sign, read_gcs_with
from tests.storage.emulators import GcsServer
from tests.storage.loopback import Handler, serving

URI = "gs://lake/creds/object.bin"
BODY = b"0123456789" * 10
AUDIENCE = "//iam.googleapis.com/projects/123/locations/global/workloadIdentityPools/lake/providers/ci"
JWT_TYPE = "urn:ietf:params:oauth:token-type:jwt"
AWS_TYPE = "urn:ietf:params:aws:token-type:aws4_request"
AWS_KEY, AWS_SECRET = "AKIDFEDERATED", "federated/secret+key"
SA = "lake-reader@p.iam.gserviceaccount.com"


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _doc(source: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return {"type": "external_account", "audience": AUDIENCE, "subject_token_type": JWT_TYPE, "credential_source": source, **kw}


# --- the file ----------------------------------------------------------------------------------


def test_external_account_files_are_read(tmp_path: Path) -> None:
    f = _write(tmp_path / "a.json", _doc({"file": "/var/run/token"}, token_url="https://sts.example/v1/token"))
    src = from_file(f, required=True)
    assert src == ExternalAccountSource(AUDIENCE, JWT_TYPE, FileSubject("/var/run/token"), "https://sts.example/v1/token", scope=SCOPE)
    url = {"url": "http://169.254.169.254/token", "headers": {"Metadata": "True"}, "format": {"type": "json", "subject_token_field_name": "access_token"}}
    src = from_file(_write(tmp_path / "b.json", _doc(url, service_account_impersonation_url="https://iam/x:generateAccessToken", service_account_impersonation={"token_lifetime_seconds": 1800})), required=True)
    assert isinstance(src, ExternalAccountSource) and src.subject == UrlSubject("http://169.254.169.254/token", {"Metadata": "True"}, "access_token")
    assert (src.impersonation_url, src.lifetime_seconds) == ("https://iam/x:generateAccessToken", 1800)
    aws = {"environment_id": "aws1", "region_url": "http://r", "url": "http://c", "regional_cred_verification_url": "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15"}
    env = {"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "S"}
    src = from_file(_write(tmp_path / "c.json", _doc(aws, subject_token_type=AWS_TYPE)), required=True, env=env)
    assert isinstance(src, ExternalAccountSource)
    assert src.subject == AwsSubject(aws["regional_cred_verification_url"], "http://r", "http://c", None, "eu-west-1", Credentials("K", "S"))
    refusals = {
        json.dumps(_doc({"executable": {"command": "/bin/id"}})): "credential_source.executable is not supported",
        json.dumps(_doc({"file": "/t", "url": "http://u"})): "needs one of file, url, environment_id",
        json.dumps(_doc({"file": "/t", "format": {"type": "json"}})): "needs subject_token_field_name",
        json.dumps(_doc({"file": "/t", "format": {"type": "xml"}})): "must be text or json",
        json.dumps(_doc({"environment_id": "aws2", "regional_cred_verification_url": "x"})): "'aws2' is not supported",
        json.dumps(_doc({"file": "/t"}, service_account_impersonation={"token_lifetime_seconds": 99999})): "must be 600..43200",
        json.dumps({"type": "external_account", "audience": AUDIENCE, "credential_source": {"file": "/t"}}): "has no subject_token_type",
        json.dumps({"type": "impersonated_service_account"}): "of type 'impersonated_service_account'",
    }
    for text, message in refusals.items():
        (tmp_path / "bad.json").write_text(text)
        with pytest.raises(ObjectAccessDeniedError, match=message):
            from_file(tmp_path / "bad.json", required=True)


# --- against the emulator ------------------------------------------------------------------------


def _signature_is_awss(subject_token: str) -> str | None:
    """Why the serialized GetCallerIdentity request is not what AWS would accept (None: it is):
    its signature recomputed by botocore at its own x-amz-date, and the audience signed with it."""
    import botocore.auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials as BotoCredentials

    doc = json.loads(urllib.parse.unquote(subject_token))
    headers = {h["key"]: h["value"] for h in doc["headers"]}
    if doc["method"] != "POST" or headers.get("x-goog-cloud-target-resource") != AUDIENCE:
        return f"method or audience: {doc['method']} {headers.get('x-goog-cloud-target-resource')}"
    # Exactly google-auth's serialized headers (the session token only with temporary keys).
    expected = {"Authorization", "host", "x-amz-date", "x-goog-cloud-target-resource"} | ({"x-amz-security-token"} if "x-amz-security-token" in headers else set())
    if set(headers) != expected:
        return f"headers: {sorted(headers)}"
    auth = headers.pop("Authorization")
    if "x-goog-cloud-target-resource" not in auth.split("SignedHeaders=")[1]:
        return "the audience is not signed"
    at = datetime.datetime.strptime(headers["x-amz-date"], "%Y%m%dT%H%M%SZ")
    req = AWSRequest(method="POST", url=doc["url"], data=b"", headers={k: v for k, v in headers.items() if k != "host"})
    region = urllib.parse.urlsplit(doc["url"]).hostname.split(".")[1]  # type: ignore[union-attr]
    boto_sign(req, botocore.auth.SigV4Auth(BotoCredentials(AWS_KEY, AWS_SECRET, headers.get("x-amz-security-token")), "sts", region), at)
    return None if req.headers["Authorization"] == auth else f"signature: {auth} != {req.headers['Authorization']}"


@dataclass
class _Google:
    """Google's STS (``/v1/token``) and IAM Credentials (``/iam/...:generateAccessToken``), a
    platform's token URL (``/subject``) and an EC2 metadata server (``/latest/...``)."""

    token: str
    url: str = ""
    seen: list[str] = field(default_factory=list)
    #: The client's basic authentication STS requires (None: none).
    client: tuple[str, str] | None = None

    def handler(self) -> type[Handler]:
        g = self

        class Google(Handler):
            def do_POST(self) -> None:
                path = self.path.split("?")[0]
                g.seen.append(f"POST {path}")
                if path == "/v1/token":
                    return self.exchange(self.form())
                if path.startswith("/iam/") and path.endswith(":generateAccessToken") and path != f"/iam/{SA}:generateAccessToken":
                    # The pool's principal has no Token Creator role on another service account.
                    return self.reply(403, {"error": {"code": 403, "message": "Permission 'iam.serviceAccounts.getAccessToken' denied on another account", "status": "PERMISSION_DENIED"}})
                if path == f"/iam/{SA}:generateAccessToken":
                    doc = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                    ok = self.headers.get("Authorization") == "Bearer federated-token" and doc == {"scope": [SCOPE], "lifetime": "1800s"}
                    if ok:
                        return self.reply(200, {"accessToken": g.token, "expireTime": "2099-01-01T00:00:00Z"})
                    return self.reply(403, {"error": {"code": 403, "message": "Permission 'iam.serviceAccounts.getAccessToken' denied", "status": "PERMISSION_DENIED"}})
                self.reply(404, b"")

            def exchange(self, form: dict[str, str]) -> None:
                impersonating = form.get("scope") == CLOUD_PLATFORM
                why = None
                if (form.get("grant_type"), form.get("requested_token_type")) != (
                    "urn:ietf:params:oauth:grant-type:token-exchange",
                    "urn:ietf:params:oauth:token-type:access_token",
                ) or form.get("audience") != AUDIENCE or form.get("scope") not in (SCOPE, CLOUD_PLATFORM):
                    why = f"grant: {form}"
                elif form.get("subject_token_type") == AWS_TYPE:
                    why = _signature_is_awss(form.get("subject_token", ""))
                elif form.get("subject_token") != "workload-jwt":
                    why = "the subject token is not the workload's"
                if g.client is not None:
                    basic = "Basic " + base64.b64encode(":".join(g.client).encode()).decode()
                    if self.headers.get("Authorization") != basic:
                        why = "the client's basic authentication"
                if why is not None:
                    return self.reply(400, {"error": "invalid_grant", "error_description": why})
                self.reply(200, {"access_token": "federated-token" if impersonating else g.token, "issued_token_type": form["requested_token_type"], "token_type": "Bearer", "expires_in": 3600})

            def do_PUT(self) -> None:
                g.seen.append(f"PUT {self.path}")
                ok = self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds") == "300"
                self.reply(200 if ok else 400, b"imds-session" if ok else b"")

            def do_GET(self) -> None:
                g.seen.append(f"GET {self.path}")
                if self.path == "/subject":
                    ok = self.headers.get("Metadata") == "True"
                    return self.reply(200 if ok else 400, {"access_token": "workload-jwt"} if ok else {"error": "no Metadata header"})
                if self.path.startswith("/latest/") and self.headers.get("X-aws-ec2-metadata-token") != "imds-session":
                    return self.reply(401, b"")
                if self.path == "/latest/meta-data/placement/availability-zone":
                    return self.reply(200, b"us-west-2b")
                if self.path == "/latest/meta-data/iam/security-credentials":
                    return self.reply(200, b"lake-role")
                if self.path == "/latest/meta-data/iam/security-credentials/lake-role":
                    return self.reply(200, {"Code": "Success", "AccessKeyId": AWS_KEY, "SecretAccessKey": AWS_SECRET, "Token": "aws-session"})
                self.reply(404, b"")

        return Google


@pytest.fixture
def google(gcs_server: GcsServer) -> Iterator[_Google]:
    g = _Google(gcs_server.token)
    with serving(g.handler()) as g.url:
        yield g


def test_a_file_subject_token_is_exchanged(gcs_server: GcsServer, gcs_creds_object: str, google: _Google, tmp_path: Path) -> None:
    (tmp_path / "token").write_text("workload-jwt\n")
    creds = _write(tmp_path / "wif.json", _doc({"file": str(tmp_path / "token")}, token_url=google.url + "/v1/token"))
    assert read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(creds)) == BODY
    assert google.seen == ["POST /v1/token"]  # one exchange served the HEAD and the GET
    (tmp_path / "token").write_text("someone-else")
    with pytest.raises(ObjectAccessDeniedError, match=r"security token service .* answered HTTP 400: invalid_grant \(the subject token"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(creds))
    (tmp_path / "token").write_text("")
    with pytest.raises(ObjectAccessDeniedError, match=r"subject token file .* is empty"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(creds))


def test_a_url_subject_token_with_a_client_and_impersonation(gcs_server: GcsServer, gcs_creds_object: str, google: _Google, tmp_path: Path) -> None:
    google.client = ("cid", "csecret")
    source = {"url": google.url + "/subject", "headers": {"Metadata": "True"}, "format": {"type": "json", "subject_token_field_name": "access_token"}}
    doc = _doc(
        source,
        token_url=google.url + "/v1/token",
        client_id="cid",
        client_secret="csecret",
        service_account_impersonation_url=f"{google.url}/iam/{SA}:generateAccessToken",
        service_account_impersonation={"token_lifetime_seconds": 1800},
    )
    assert read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(_write(tmp_path / "wif.json", doc))) == BODY
    assert google.seen == ["GET /subject", "POST /v1/token", f"POST /iam/{SA}:generateAccessToken"]
    # A service account the pool may not impersonate.
    doc["service_account_impersonation_url"] = f"{google.url}/iam/other@p.iam.gserviceaccount.com:generateAccessToken"
    with pytest.raises(ObjectAccessDeniedError, match=r"answered HTTP 403: 403 \(Permission .* denied on another account\)"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(_write(tmp_path / "other.json", doc)))
    doc["service_account_impersonation"] = {"token_lifetime_seconds": 3600}  # not what the fake grants
    doc["service_account_impersonation_url"] = f"{google.url}/iam/{SA}:generateAccessToken"
    with pytest.raises(ObjectAccessDeniedError, match=r"answered HTTP 403: 403 \(Permission"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(_write(tmp_path / "long.json", doc)))
    del doc["client_secret"]
    with pytest.raises(ObjectAccessDeniedError, match="basic authentication"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(_write(tmp_path / "noclient.json", doc)))


def test_an_aws_workload_signs_get_caller_identity(gcs_server: GcsServer, gcs_creds_object: str, google: _Google, tmp_path: Path) -> None:
    aws = {
        "environment_id": "aws1",
        "region_url": google.url + "/latest/meta-data/placement/availability-zone",
        "url": google.url + "/latest/meta-data/iam/security-credentials",
        "regional_cred_verification_url": "https://sts.{region}.amazonaws.com?Action=GetCallerIdentity&Version=2011-06-15",
        "imdsv2_session_token_url": google.url + "/latest/api/token",
    }
    creds = str(_write(tmp_path / "aws.json", _doc(aws, subject_token_type=AWS_TYPE, token_url=google.url + "/v1/token")))
    # On EC2: region and the instance role's keys from the metadata server, with IMDSv2.
    assert read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=creds) == BODY
    assert google.seen == [
        "PUT /latest/api/token",
        "GET /latest/meta-data/placement/availability-zone",
        "GET /latest/meta-data/iam/security-credentials",
        "GET /latest/meta-data/iam/security-credentials/lake-role",
        "POST /v1/token",
    ]
    # Keys and region in the environment: no metadata server at all.
    google.seen.clear()
    env = {"AWS_REGION": "eu-central-1", "AWS_ACCESS_KEY_ID": AWS_KEY, "AWS_SECRET_ACCESS_KEY": AWS_SECRET}
    assert read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=creds, **env) == BODY
    assert google.seen == ["POST /v1/token"]
    with pytest.raises(ObjectAccessDeniedError, match=r"invalid_grant .*signature"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=creds, **{**env, "AWS_SECRET_ACCESS_KEY": "wrong"})
