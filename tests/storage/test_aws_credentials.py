"""AWS credentials from the SDKs' default chain (service.storage.objects.aws_credentials).

The chain's choices and the parsers are pure; the sources are exercised against moto's server
(IAM enforced): STS ``AssumeRoleWithWebIdentity`` gives temporary credentials of an IAM role, which
the S3 store then signs with; a wrong secret in a profile, a role without S3 permissions and a
container agent that refuses the token each give a typed error. The container agent (ECS / EKS Pod
Identity) is a small JSON endpoint on loopback serving credentials STS gave."""

from __future__ import annotations

import json
import logging
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from service.errors import ObjectAccessDeniedError, ObjectStoreUnavailableError
from service.storage.objects import StoreOptions
from service.storage.objects.aws_credentials import (
    SSO_REFRESH_WINDOW,
    AssumeRoleSource,
    ContainerSource,
    CredentialSource,
    InstanceMetadataSource,
    ProcessSource,
    Resolved,
    SsoSource,
    StaticSource,
    WebIdentitySource,
    parse_container_credentials,
    parse_process_credentials,
    parse_sts_credentials,
    resolve,
)
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import REFRESH_MARGIN, Expiring, Renewing
from service.storage.objects.s3 import S3Config, S3Store
from service.storage.objects.sigv4 import Credentials
from tests.storage.conftest import BUCKET, S3Server
from tests.storage.loopback import Handler, answering, serving

URI = f"s3://{BUCKET}/creds/object.bin"
BODY = b"0123456789" * 10


def _env(tmp_path: Path, **kw: str) -> dict[str, str]:
    """An environment whose shared files are under ``tmp_path`` (none unless written)."""
    return {"HOME": str(tmp_path), **kw}


# --- the chain ---------------------------------------------------------------------------------


def test_environment_keys_come_first(tmp_path: Path) -> None:
    env = _env(
        tmp_path,
        AWS_ACCESS_KEY_ID="AK",
        AWS_SECRET_ACCESS_KEY="SK",
        AWS_SESSION_TOKEN="ST",
        AWS_WEB_IDENTITY_TOKEN_FILE="/t",
        AWS_ROLE_ARN="arn:aws:iam::1:role/r",
    )
    src = resolve(env, "us-east-1").source
    assert src == StaticSource(Credentials("AK", "SK", "ST"))


def test_web_identity_from_the_environment_and_its_sts_endpoint(tmp_path: Path) -> None:
    env = _env(tmp_path, AWS_WEB_IDENTITY_TOKEN_FILE="/t", AWS_ROLE_ARN="arn:aws:iam::1:role/r", AWS_ROLE_SESSION_NAME="s")
    src = resolve(env, "eu-west-3").source
    assert src == WebIdentitySource("/t", "arn:aws:iam::1:role/r", "s", "https://sts.eu-west-3.amazonaws.com/")
    src = resolve({**env, "AWS_ENDPOINT_URL": "http://127.0.0.1:9/"}, "eu-west-3").source
    assert isinstance(src, WebIdentitySource) and src.sts_url == "http://127.0.0.1:9/"
    src = resolve({**env, "AWS_ENDPOINT_URL": "http://a:1", "AWS_ENDPOINT_URL_STS": "http://b:2"}, "x").source
    assert isinstance(src, WebIdentitySource) and src.sts_url == "http://b:2/"


def test_profiles_of_the_shared_files(tmp_path: Path) -> None:
    aws = tmp_path / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("[default]\naws_access_key_id = D\naws_secret_access_key = DS\n[lake]\naws_access_key_id = L\naws_secret_access_key = LS\n")
    (aws / "config").write_text(
        "[default]\nregion = eu-north-1\n[profile lake]\nregion = ap-south-1\naws_session_token = LT\n"
        "[profile oidc]\nrole_arn = arn:aws:iam::1:role/o\nweb_identity_token_file = /tok\n"
        "[profile chained]\nsource_profile = lake\nrole_arn = arn:aws:iam::1:role/c\n"
        "[profile empty]\nregion = sa-east-1\n"
    )
    got = resolve(_env(tmp_path), "us-east-1")
    assert got.source == StaticSource(Credentials("D", "DS"), describe="profile default") and got.region == "eu-north-1"
    # The credentials file's section over the config file's, merged.
    got = resolve(_env(tmp_path, AWS_PROFILE="lake"), "us-east-1")
    assert got.source == StaticSource(Credentials("L", "LS", "LT"), describe="profile lake") and got.region == "ap-south-1"
    got = resolve(_env(tmp_path, AWS_PROFILE="oidc"), "us-east-1")
    assert isinstance(got.source, WebIdentitySource) and got.source.role_arn == "arn:aws:iam::1:role/o"
    # A profile with a region only lets the chain go on (to instance metadata here).
    assert resolve(_env(tmp_path, AWS_PROFILE="empty"), "us-east-1") == Resolved(InstanceMetadataSource(), "sa-east-1")
    with pytest.raises(ObjectAccessDeniedError, match="'nope' is in neither"):
        resolve(_env(tmp_path, AWS_PROFILE="nope"), "us-east-1")
    # Files named by the environment.
    other = tmp_path / "elsewhere.ini"
    other.write_text("[default]\naws_access_key_id = E\naws_secret_access_key = ES\n")
    got = resolve(_env(tmp_path / "none", AWS_SHARED_CREDENTIALS_FILE=str(other)), "us-east-1")
    assert got.source == StaticSource(Credentials("E", "ES"), describe="profile default")


def test_roles_assumed_from_other_profiles_and_credential_processes(tmp_path: Path) -> None:
    aws = tmp_path / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text("[base]\naws_access_key_id = B\naws_secret_access_key = BS\n")
    (aws / "config").write_text(
        "[profile chained]\nsource_profile = base\nrole_arn = arn:aws:iam::1:role/c\nexternal_id = x-1\n"
        "duration_seconds = 900\nrole_session_name = etl\nregion = eu-west-1\n"
        "[profile twice]\nsource_profile = chained\nrole_arn = arn:aws:iam::1:role/t\n"
        "[profile self]\nsource_profile = self\nrole_arn = arn:aws:iam::1:role/s\naws_access_key_id = S\naws_secret_access_key = SS\n"
        "[profile ec2]\ncredential_source = Ec2InstanceMetadata\nrole_arn = arn:aws:iam::1:role/e\n"
        "[profile env]\ncredential_source = Environment\nrole_arn = arn:aws:iam::1:role/v\n"
        "[profile proc]\ncredential_process = /opt/bin/creds --account 'a b'\n"
        "[profile loop-a]\nsource_profile = loop-b\nrole_arn = arn:aws:iam::1:role/a\n"
        "[profile loop-b]\nsource_profile = loop-a\nrole_arn = arn:aws:iam::1:role/b\n"
        "[profile mfa]\nsource_profile = base\nrole_arn = arn:aws:iam::1:role/m\nmfa_serial = arn:aws:iam::1:mfa/u\n"
        "[profile orphan]\nrole_arn = arn:aws:iam::1:role/o\n"
        "[profile lost]\nsource_profile = missing\nrole_arn = arn:aws:iam::1:role/l\n"
        "[profile both]\nsource_profile = base\ncredential_source = Environment\nrole_arn = arn:aws:iam::1:role/x\n"
        "[profile sso]\nsso_session = corp\nsso_account_id = 1\nsso_role_name = r\n"
        "[profile keyed-role]\naws_access_key_id = KR\naws_secret_access_key = KRS\nrole_arn = arn:aws:iam::1:role/k\n"
        "source_profile = base\n"
        "[profile via-keyed]\nsource_profile = keyed-role\nrole_arn = arn:aws:iam::1:role/v2\n"
        "[profile oidc-and-source]\nrole_arn = arn:aws:iam::1:role/w\nweb_identity_token_file = /tok\nsource_profile = base\n"
    )
    base = StaticSource(Credentials("B", "BS"), describe="profile base")
    got = resolve(_env(tmp_path, AWS_PROFILE="chained"), "us-east-1")
    assert got.region == "eu-west-1"
    assert got.source == AssumeRoleSource(
        base, "arn:aws:iam::1:role/c", "etl", "https://sts.eu-west-1.amazonaws.com/", "eu-west-1", "x-1", 900,
        describe="profile chained (AssumeRole arn:aws:iam::1:role/c)",
    )  # fmt: skip
    twice = resolve(_env(tmp_path, AWS_PROFILE="twice", AWS_ENDPOINT_URL_STS="http://127.0.0.1:9"), "us-east-1").source
    assert isinstance(twice, AssumeRoleSource) and twice.sts_url == "http://127.0.0.1:9/"
    assert isinstance(twice.base, AssumeRoleSource) and twice.base.role_arn == "arn:aws:iam::1:role/c" and twice.base.base == base
    own = resolve(_env(tmp_path, AWS_PROFILE="self"), "us-east-1").source
    assert isinstance(own, AssumeRoleSource) and own.base == StaticSource(Credentials("S", "SS"), describe="profile self")
    ec2 = resolve(_env(tmp_path, AWS_PROFILE="ec2"), "us-east-1").source
    assert isinstance(ec2, AssumeRoleSource) and ec2.base == InstanceMetadataSource()
    assert resolve(_env(tmp_path, AWS_PROFILE="proc"), "us-east-1").source == ProcessSource("/opt/bin/creds --account 'a b'", "proc")
    # As botocore: a source profile with keys lends its keys, even beside a role of its own; and a
    # web identity token file wins over source_profile.
    via = resolve(_env(tmp_path, AWS_PROFILE="via-keyed"), "us-east-1").source
    assert isinstance(via, AssumeRoleSource) and via.base == StaticSource(Credentials("KR", "KRS"), describe="profile keyed-role")
    assert isinstance(resolve(_env(tmp_path, AWS_PROFILE="oidc-and-source"), "us-east-1").source, WebIdentitySource)
    refusals = {
        "loop-a": "loop-a -> loop-b -> loop-a: source_profile goes round in a circle",
        "mfa": "asks for an MFA code",
        "orphan": "has role_arn but no source_profile, credential_source or web_identity_token_file",
        "lost": "its source_profile 'missing' is in neither",
        "both": "has both source_profile and credential_source",
        "sso": r"its sso_session 'corp' has no \[sso-session corp\] section",
        "env": "credential_source Environment, but AWS_ACCESS_KEY_ID",
    }
    for name, message in refusals.items():
        with pytest.raises(ObjectAccessDeniedError, match=message):
            resolve(_env(tmp_path, AWS_PROFILE=name), "us-east-1")


def test_credential_process_output_is_parsed() -> None:
    ok = parse_process_credentials(
        b'{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "S", "SessionToken": "T", "Expiration": "2030-01-01T00:00:00Z"}', URI, "p"
    )
    assert ok.value == Credentials("A", "S", "T") and ok.expires == datetime(2030, 1, 1, tzinfo=UTC).timestamp()
    assert parse_process_credentials(b'{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "S"}', URI, "p") == Expiring(Credentials("A", "S"))
    bad = {
        b"not json": "did not print a JSON object",
        b'{"Version": 2, "AccessKeyId": "A", "SecretAccessKey": "S"}': "printed Version 2",
        b'{"Version": 1, "AccessKeyId": "A"}': "printed no keys",
        b'{"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "S", "Expiration": "soon"}': "no valid expiration",
    }
    for out, message in bad.items():
        with pytest.raises(ObjectAccessDeniedError, match=message):
            parse_process_credentials(out, URI, "p")


def test_instance_metadata_comes_last(tmp_path: Path) -> None:
    assert resolve(_env(tmp_path), "us-east-1").source == InstanceMetadataSource()
    assert resolve(_env(tmp_path, AWS_EC2_METADATA_DISABLED="true"), "us-east-1").source is None
    # An S3-compatible store of its own (MinIO...) is not EC2's: no probe.
    assert S3Config.from_env(_env(tmp_path, AWS_ENDPOINT_URL="http://127.0.0.1:9000")).credentials is None
    named = _env(tmp_path, AWS_ENDPOINT_URL="http://x", AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:1338")
    assert resolve(named, "x").source == InstanceMetadataSource("http://127.0.0.1:1338", explicit=True)


def test_no_instance_metadata_means_unsigned_for_a_while_unless_it_was_named() -> None:
    http = HttpSender(StoreOptions())
    # Another cloud's metadata server on the address: it refuses EC2's token and has no roles.
    foreign = answering({("GET", "/computeMetadata/v1/"): (403, b"Metadata-Flavor header missing")})
    try:
        with foreign as url:
            for endpoint in ("http://127.0.0.1:9", url):  # nothing listens on port 9: "not on EC2"
                got = InstanceMetadataSource(endpoint).fetch(http, URI)
                assert got.value is None and got.expires is not None and got.expires > time.time() + 3000, endpoint
            with pytest.raises(ObjectStoreUnavailableError, match="cannot be reached"):
                InstanceMetadataSource("http://127.0.0.1:9", explicit=True).fetch(http, URI)
            with pytest.raises(ObjectAccessDeniedError, match="refused a session token"):
                InstanceMetadataSource(url, explicit=True).fetch(http, URI)
    finally:
        http.close()


def test_container_endpoints(tmp_path: Path) -> None:
    env = _env(tmp_path, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI="/v2/credentials/abc")
    assert resolve(env, "x").source == ContainerSource("http://169.254.170.2/v2/credentials/abc")
    for url in ("http://169.254.170.23/v1/credentials", "http://127.0.0.1:8080/c", "http://[::1]/c", "https://creds.example.com/c"):
        env = _env(tmp_path, AWS_CONTAINER_CREDENTIALS_FULL_URI=url, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE="/tok")
        assert resolve(env, "x").source == ContainerSource(url, None, "/tok")
    for bad in ("http://creds.example.com/c", "ftp://127.0.0.1/c", "nonsense"):
        with pytest.raises(ObjectAccessDeniedError, match="AWS_CONTAINER_CREDENTIALS_FULL_URI"):
            resolve(_env(tmp_path, AWS_CONTAINER_CREDENTIALS_FULL_URI=bad), "x")


# --- parsers -----------------------------------------------------------------------------------

AT_21H = datetime(2026, 11, 24, 21, tzinfo=UTC).timestamp()
STS_OK = b"""<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
<AssumeRoleWithWebIdentityResult><Credentials><AccessKeyId>ASIA1</AccessKeyId><SecretAccessKey>s3cr3t</SecretAccessKey>
<SessionToken>tok</SessionToken><Expiration>2026-11-24T21:00:00Z</Expiration></Credentials></AssumeRoleWithWebIdentityResult>
</AssumeRoleWithWebIdentityResponse>"""


def test_sts_and_container_answers_are_parsed() -> None:
    got = parse_sts_credentials(STS_OK, URI, "STS")
    assert got == Expiring(Credentials("ASIA1", "s3cr3t", "tok"), AT_21H)
    for bad in (b"not xml", b"<x/>", STS_OK.replace(b"2026-11-24T21:00:00Z", b"soon")):
        with pytest.raises(ObjectAccessDeniedError, match=r"no (AWS )?credentials"):
            parse_sts_credentials(bad, URI, "STS")
    doc = {"AccessKeyId": "A", "SecretAccessKey": "S", "Token": "T", "Expiration": "2026-11-24T21:00:00Z"}
    assert parse_container_credentials(json.dumps(doc).encode(), URI, "u") == Expiring(Credentials("A", "S", "T"), AT_21H)
    with pytest.raises(ObjectAccessDeniedError, match="without keys"):
        parse_container_credentials(b'{"Token": "T"}', URI, "u")


# --- renewal -----------------------------------------------------------------------------------


class _Counting(CredentialSource):
    describe = "test source"

    def __init__(self, lifetime: float | None, clock: list[float]) -> None:
        self.lifetime, self.clock, self.fetches, self.fail = lifetime, clock, 0, False

    def fetch(self, http: HttpSender, uri: str) -> Expiring:
        if self.fail:
            raise ObjectStoreUnavailableError(f"{uri}: STS is down")
        self.fetches += 1
        expires = None if self.lifetime is None else self.clock[0] + self.lifetime
        return Expiring(Credentials(f"K{self.fetches}", "S"), expires)


def test_temporary_credentials_are_renewed_before_they_expire(caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    src = _Counting(3600, now)
    creds = Renewing(src, None, clock=lambda: now[0])  # type: ignore[arg-type]
    assert creds.get(URI).access_key == "K1"
    now[0] += 3600 - REFRESH_MARGIN - 1
    assert creds.get(URI).access_key == "K1" and src.fetches == 1
    now[0] += 2  # within the margin: renewed
    assert creds.get(URI).access_key == "K2"
    # A failed renewal keeps the still-valid credentials, and says so.
    now[0] += 3600 - REFRESH_MARGIN + 1
    src.fail = True
    with caplog.at_level(logging.WARNING):
        assert creds.get(URI).access_key == "K2"
    assert "could not renew the credentials (test source)" in caplog.text
    now[0] += REFRESH_MARGIN  # expired now: the failure is the caller's
    with pytest.raises(ObjectStoreUnavailableError, match="STS is down"):
        creds.get(URI)
    src.fail = False
    assert creds.get(URI).access_key == "K3"
    # Keys never expire: fetched once.
    keys = _Counting(None, now)
    static = Renewing(keys, None, clock=lambda: now[0])  # type: ignore[arg-type]
    now[0] += 10**9
    assert static.get(URI).access_key == static.get(URI).access_key == "K1" and keys.fetches == 1


def test_short_lived_credentials_are_renewed_halfway_not_on_every_request() -> None:
    now = [0.0]
    src = _Counting(120, now)  # two minutes: less than the margin
    creds = Renewing(src, None, clock=lambda: now[0])  # type: ignore[arg-type]
    for t in (0, 30, 59.9):
        now[0] = t
        assert creds.get(URI).access_key == "K1"
    now[0] = 60.0
    assert creds.get(URI).access_key == "K2" and src.fetches == 2  # halfway through its life


# --- against the server --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def roles(s3_server: S3Server) -> dict[str, str]:
    """Three roles: ``reader`` may use S3, ``nobody`` may not, ``hopper`` may only assume other
    roles; web identities and the account's users may assume each. Their ARNs."""
    iam = s3_server.boto("iam")
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"Federated": "oidc"}, "Action": "sts:AssumeRoleWithWebIdentity"},
            # Any principal: moto does not read an account root principal as "the account's users".
            {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"},
        ],
    }
    arns = {}
    for name, actions in (("reader", "s3:*"), ("nobody", "sqs:*"), ("hopper", "sts:AssumeRole")):
        arns[name] = iam.create_role(RoleName=f"shredcat-{name}", AssumeRolePolicyDocument=json.dumps(trust))["Role"]["Arn"]
        policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
        iam.put_role_policy(RoleName=f"shredcat-{name}", PolicyName="p", PolicyDocument=json.dumps(policy))
    s3_server.put("creds/object.bin", BODY)
    return arns


def _store(env: dict[str, str]) -> S3Store:
    return S3Store(S3Config.from_env(env), StoreOptions())


def _read(store: S3Store) -> bytes:
    try:
        return store.read_tail(URI, 10_000).data
    finally:
        store.close()


def _server_env(s3_server: S3Server, tmp_path: Path, **kw: str) -> dict[str, str]:
    return _env(tmp_path, AWS_ENDPOINT_URL=s3_server.endpoint, AWS_REGION="us-east-1", **kw)


def test_web_identity_gets_a_roles_credentials_from_sts(s3_server: S3Server, roles: dict[str, str], tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("eyJ.a-web-identity.token\n")
    env = _server_env(s3_server, tmp_path, AWS_WEB_IDENTITY_TOKEN_FILE=str(token), AWS_ROLE_ARN=roles["reader"])
    store = _store(env)
    s3_server.control("/_test/reset")
    assert store.head(URI) is not None
    assert _read(store) == BODY
    # One STS call served both requests (the S3 requests are what the server logs as such).
    assert [r["method"] for r in s3_server.requests()] == ["POST", "HEAD", "GET"]
    # A role without S3 permissions: STS answers, S3 refuses.
    env["AWS_ROLE_ARN"] = roles["nobody"]
    with pytest.raises(ObjectAccessDeniedError, match="access denied"):
        _read(_store(env))
    # A token file that cannot be read.
    env["AWS_WEB_IDENTITY_TOKEN_FILE"] = str(tmp_path / "missing")
    with pytest.raises(ObjectAccessDeniedError, match=r"web identity token file .* cannot be read"):
        _read(_store(env))


def test_sts_that_cannot_be_reached_is_unavailable(s3_server: S3Server, roles: dict[str, str], tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("t")
    env = _server_env(
        s3_server, tmp_path, AWS_WEB_IDENTITY_TOKEN_FILE=str(token), AWS_ROLE_ARN=roles["reader"], AWS_ENDPOINT_URL_STS="http://127.0.0.1:9"
    )
    with pytest.raises(ObjectStoreUnavailableError, match="cannot be reached"):
        _read(_store(env))


def test_a_profile_signs_and_a_wrong_secret_in_it_is_denied(s3_server: S3Server, roles: dict[str, str], tmp_path: Path) -> None:
    creds = tmp_path / "credentials"
    creds.write_text(
        f"[lake]\naws_access_key_id = {s3_server.key_id}\naws_secret_access_key = {s3_server.secret}\n"
        f"[wrong]\naws_access_key_id = {s3_server.key_id}\naws_secret_access_key = not-the-secret\n"
    )
    env = _server_env(s3_server, tmp_path, AWS_SHARED_CREDENTIALS_FILE=str(creds), AWS_PROFILE="lake")
    assert _read(_store(env)) == BODY
    with pytest.raises(ObjectAccessDeniedError, match="access denied"):
        _read(_store({**env, "AWS_PROFILE": "wrong"}))


def test_a_role_assumed_with_a_source_profiles_keys_signs(s3_server: S3Server, roles: dict[str, str], tmp_path: Path) -> None:
    """STS AssumeRole, signed with the IAM user's keys (moto checks the signature and the role's
    trust policy), gives the role's credentials; a chain of two roles too; a wrong secret is
    refused by STS itself."""
    creds, config = tmp_path / "credentials", tmp_path / "config"
    creds.write_text(
        f"[user]\naws_access_key_id = {s3_server.key_id}\naws_secret_access_key = {s3_server.secret}\n"
        f"[forger]\naws_access_key_id = {s3_server.key_id}\naws_secret_access_key = not-the-secret\n"
    )
    config.write_text(
        f"[profile reader]\nsource_profile = user\nrole_arn = {roles['reader']}\nexternal_id = lake-1\n"
        f"[profile hopper]\nsource_profile = user\nrole_arn = {roles['hopper']}\n"
        f"[profile hop]\nsource_profile = hopper\nrole_arn = {roles['reader']}\n"
        f"[profile nobody]\nsource_profile = user\nrole_arn = {roles['nobody']}\n"
        f"[profile forged]\nsource_profile = forger\nrole_arn = {roles['reader']}\n"
    )
    env = _server_env(s3_server, tmp_path, AWS_SHARED_CREDENTIALS_FILE=str(creds), AWS_CONFIG_FILE=str(config), AWS_PROFILE="reader")
    s3_server.control("/_test/reset")
    store = _store(env)
    assert isinstance(store.config.credentials, AssumeRoleSource)
    assert _read(store) == BODY
    assert [r["method"] for r in s3_server.requests()] == ["POST", "GET"]  # AssumeRole, then the read
    s3_server.control("/_test/reset")
    assert _read(_store({**env, "AWS_PROFILE": "hop"})) == BODY  # user -> hopper -> reader
    assert [r["method"] for r in s3_server.requests()] == ["POST", "POST", "GET"]  # two AssumeRoles
    with pytest.raises(ObjectAccessDeniedError, match="access denied"):
        _read(_store({**env, "AWS_PROFILE": "hopper"}))  # the middle role alone cannot read
    with pytest.raises(ObjectAccessDeniedError, match="access denied"):
        _read(_store({**env, "AWS_PROFILE": "nobody"}))  # STS answers, S3 refuses the role
    with pytest.raises(ObjectAccessDeniedError, match=r"STS AssumeRole for .* answered .*Signature"):
        _read(_store({**env, "AWS_PROFILE": "forged"}))


def _process(tmp_path: Path, name: str, body: str) -> str:
    script = tmp_path / name
    script.write_text(f"import json, sys, time\n{body}\n")
    return f"{sys.executable} {script}"


def test_a_credential_process_signs_and_its_failures_are_typed(
    s3_server: S3Server, roles: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = {"Version": 1, **_assume(s3_server, roles["reader"])}
    doc["SessionToken"] = doc.pop("Token")
    calls = tmp_path / "calls"
    good = _process(tmp_path, "good.py", f"open({str(calls)!r}, 'a').write('x')\nprint(json.dumps({doc!r}))")
    failing = _process(tmp_path, "failing.py", "print('vault: permission denied', file=sys.stderr)\nsys.exit(3)")
    slow = _process(tmp_path, "slow.py", "time.sleep(30)")
    config = tmp_path / "config"
    config.write_text(
        f"[profile good]\ncredential_process = {good}\n[profile failing]\ncredential_process = {failing}\n"
        f"[profile slow]\ncredential_process = {slow}\n[profile absent]\ncredential_process = /no/such/helper --x\n"
    )
    env = _server_env(s3_server, tmp_path, AWS_CONFIG_FILE=str(config), AWS_PROFILE="good")
    store = _store(env)
    assert store.head(URI) is not None
    assert _read(store) == BODY
    assert calls.read_text() == "x"  # run once: the credentials last until their Expiration
    with pytest.raises(ObjectAccessDeniedError, match="exited with status 3: vault: permission denied"):
        _read(_store({**env, "AWS_PROFILE": "failing"}))
    with pytest.raises(ObjectAccessDeniedError, match=r"\('/no/such/helper'\) cannot be run: No such file"):
        _read(_store({**env, "AWS_PROFILE": "absent"}))
    monkeypatch.setattr("service.storage.objects.aws_credentials.PROCESS_TIMEOUT", 0.5)
    with pytest.raises(ObjectStoreUnavailableError, match="gave no answer in"):
        _read(_store({**env, "AWS_PROFILE": "slow"}))


def _sso_config(tmp_path: Path) -> Path:
    config = tmp_path / ".aws" / "config"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        "[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\nsso_region = eu-west-1\n"
        "[profile dev]\nsso_session = corp\nsso_account_id = 123456789012\nsso_role_name = LakeReader\n"
        "[profile legacy]\nsso_start_url = https://old.awsapps.com/start\nsso_region = us-east-2\n"
        "sso_account_id = 123456789012\nsso_role_name = LakeReader\n"
        "[profile half]\nsso_session = corp\nsso_role_name = LakeReader\n"
    )
    return config


def _sso_cache(tmp_path: Path, key: str) -> Path:
    import hashlib

    return tmp_path / ".aws" / "sso" / "cache" / (hashlib.sha1(key.encode()).hexdigest() + ".json")


def test_sso_profiles(tmp_path: Path) -> None:
    _sso_config(tmp_path)
    got = resolve(_env(tmp_path, AWS_PROFILE="dev"), "us-east-1").source
    assert got == SsoSource(
        "dev", "123456789012", "LakeReader", "eu-west-1", str(_sso_cache(tmp_path, "corp")),
        "https://portal.sso.eu-west-1.amazonaws.com", "https://oidc.eu-west-1.amazonaws.com", describe="profile dev (AWS SSO)",
    )  # fmt: skip
    legacy = resolve(_env(tmp_path, AWS_PROFILE="legacy"), "us-east-1").source
    assert isinstance(legacy, SsoSource) and legacy.oidc_url is None  # not refreshable, as in botocore
    assert legacy.cache_file == str(_sso_cache(tmp_path, "https://old.awsapps.com/start"))
    with pytest.raises(ObjectAccessDeniedError, match="is an SSO profile without sso_account_id"):
        resolve(_env(tmp_path, AWS_PROFILE="half"), "us-east-1")


@pytest.fixture
def sso_portal(s3_server: S3Server, roles: dict[str, str]) -> Iterator[tuple[str, list[str]]]:
    """IAM Identity Center's portal and OIDC service on loopback: the portal gives the reader
    role's credentials (from the server's STS) for the bearer token ``fresh-token``; OIDC turns
    the refresh token ``refresh-1`` of client ``cid``/``csecret`` into ``fresh-token``."""
    doc = _assume(s3_server, roles["reader"])
    seen: list[str] = []

    class Portal(Handler):
        def do_GET(self) -> None:
            seen.append(self.path)
            query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query))
            if self.headers.get("x-amz-sso_bearer_token") != "fresh-token":
                return self.reply(401, {"message": "Session token not found or invalid"})
            if query != {"role_name": "LakeReader", "account_id": "123456789012"}:
                return self.reply(403, {"message": "No access"})
            creds = {"accessKeyId": doc["AccessKeyId"], "secretAccessKey": doc["SecretAccessKey"], "sessionToken": doc["Token"], "expiration": 4102444800000}
            self.reply(200, {"roleCredentials": creds})

        def do_POST(self) -> None:
            seen.append(self.path)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            ok = body == {"grantType": "refresh_token", "clientId": "cid", "clientSecret": "csecret", "refreshToken": "refresh-1"}
            self.reply(200 if ok else 400, {"accessToken": "fresh-token", "expiresIn": 28800, "refreshToken": "refresh-2"} if ok else {"error": "invalid_grant"})

    with serving(Portal) as url:
        yield url, seen


def test_an_sso_profile_signs_and_refreshes_its_token(
    s3_server: S3Server, sso_portal: tuple[str, list[str]], tmp_path: Path
) -> None:
    url, seen = sso_portal
    _sso_config(tmp_path)
    cache = _sso_cache(tmp_path, "corp")
    cache.parent.mkdir(parents=True)
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    env = _server_env(s3_server, tmp_path, AWS_PROFILE="dev", AWS_ENDPOINT_URL_SSO=url, AWS_ENDPOINT_URL_SSO_OIDC=url)
    with pytest.raises(ObjectAccessDeniedError, match=r"has no SSO token in .*: run `aws sso login --profile dev`"):
        _read(_store(env))
    cache.write_text(json.dumps({"startUrl": "https://corp.awsapps.com/start", "region": "eu-west-1", "accessToken": "fresh-token", "expiresAt": later}))
    assert _read(_store(env)) == BODY
    assert seen == ["/federation/credentials?role_name=LakeReader&account_id=123456789012"]
    # A token the portal no longer knows.
    cache.write_text(json.dumps({"accessToken": "revoked", "expiresAt": later}))
    with pytest.raises(ObjectAccessDeniedError, match=r"answered HTTP 401: run `aws sso login --profile dev`"):
        _read(_store(env))
    # About to expire, with a refresh token: refreshed at the OIDC service, the cache rewritten.
    soon = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + SSO_REFRESH_WINDOW / 2))
    cache.write_text(json.dumps({
        "accessToken": "stale", "expiresAt": soon, "refreshToken": "refresh-1", "clientId": "cid", "clientSecret": "csecret",
        "registrationExpiresAt": "2099-01-01T00:00:00Z",
    }))  # fmt: skip
    seen.clear()
    assert _read(_store(env)) == BODY
    assert seen == ["/token", "/federation/credentials?role_name=LakeReader&account_id=123456789012"]
    saved = json.loads(cache.read_text())
    assert (saved["accessToken"], saved["refreshToken"], saved["clientId"]) == ("fresh-token", "refresh-2", "cid")
    assert time.time() + 28000 < datetime.fromisoformat(saved["expiresAt"].replace("Z", "+00:00")).timestamp()
    # A refresh that fails while the token still works: the token is used (as botocore does).
    cache.write_text(json.dumps({
        "accessToken": "fresh-token", "expiresAt": soon, "refreshToken": "rotated-away", "clientId": "cid", "clientSecret": "csecret",
    }))  # fmt: skip
    seen.clear()
    assert _read(_store(env)) == BODY
    assert seen == ["/token", "/federation/credentials?role_name=LakeReader&account_id=123456789012"]
    # Expired and not refreshable (the legacy kind has no refresh): log in again.
    legacy = _sso_cache(tmp_path, "https://old.awsapps.com/start")
    legacy.write_text(json.dumps({"accessToken": "fresh-token", "expiresAt": "2020-01-01T00:00:00UTC"}))
    with pytest.raises(ObjectAccessDeniedError, match=r"SSO token of AWS profile 'legacy' has expired: run `aws sso login --profile legacy`"):
        _read(_store({**env, "AWS_PROFILE": "legacy"}))


def _assume(s3_server: S3Server, role: str) -> dict[str, str]:
    """Temporary credentials of ``role`` from the server's STS, as the container agents give them."""
    form = {"Action": "AssumeRoleWithWebIdentity", "Version": "2011-06-15", "RoleArn": role, "RoleSessionName": "agent", "WebIdentityToken": "t"}
    req = urllib.request.Request(
        s3_server.endpoint + "/", data=urllib.parse.urlencode(form).encode(), headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    with urllib.request.urlopen(req, timeout=10) as r:
        got = parse_sts_credentials(r.read(), URI, "STS")
    c = got.value
    return {"AccessKeyId": c.access_key, "SecretAccessKey": c.secret_key, "Token": c.session_token or "", "Expiration": "2099-01-01T00:00:00Z"}


@pytest.fixture
def agent(s3_server: S3Server, roles: dict[str, str]) -> Iterator[tuple[str, list[str | None]]]:
    """A container credentials agent on loopback: answers the reader role's credentials to the
    token ``agent-token``, 403 otherwise; the Authorization headers it saw."""
    doc = _assume(s3_server, roles["reader"])
    seen: list[str | None] = []

    class Agent(Handler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization"))
            if self.headers.get("Authorization") == "agent-token":
                self.reply(200, doc)
            else:
                self.reply(403, {"message": "bad token"})

    with serving(Agent) as url:
        yield url + "/v1/credentials", seen


def test_container_credentials_sign_and_a_refused_token_is_denied(
    s3_server: S3Server, agent: tuple[str, list[str | None]], tmp_path: Path
) -> None:
    url, seen = agent
    token = tmp_path / "eks-pod-identity-token"
    token.write_text("agent-token\n")
    env = _server_env(s3_server, tmp_path, AWS_CONTAINER_CREDENTIALS_FULL_URI=url, AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE=str(token))
    assert _read(_store(env)) == BODY
    assert seen == ["agent-token"]
    token.write_text("stale")
    with pytest.raises(ObjectAccessDeniedError, match=r"container credentials endpoint .* answered HTTP 403"):
        _read(_store(env))


def test_extraction_reads_through_web_identity_alone(
    s3_server: S3Server, roles: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole path (``store_for`` by the process environment, then the footer reader): a
    deployment with a web identity and no keys extracts stats from S3."""
    from service.stats.extract import extract_file
    from service.storage.objects import close_stores
    from tests.api.conftest import write_variant_file

    uri = s3_server.upload(write_variant_file(tmp_path / "v.parquet", 50), "creds/v.parquet")
    token = tmp_path / "token"
    token.write_text("t")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(k, raising=False)
    for k, v in _server_env(s3_server, tmp_path, AWS_WEB_IDENTITY_TOKEN_FILE=str(token), AWS_ROLE_ARN=roles["reader"]).items():
        monkeypatch.setenv(k, v)
    try:
        stats = extract_file(uri)
    finally:
        close_stores()
    assert stats.record_count == 50 and {p.variant_path for p in stats.paths} == {'"id"', '"name"', '"score"'}


@pytest.fixture
def imds(s3_server: S3Server, roles: dict[str, str]) -> Iterator[tuple[str, list[str]]]:
    """An EC2 instance metadata service (IMDSv2 only) on loopback whose instance profile role is
    the reader role; the requests it saw."""
    doc = json.dumps({"Code": "Success", "Type": "AWS-HMAC", **_assume(s3_server, roles["reader"])}).encode()
    seen: list[str] = []

    class Imds(Handler):
        def do_PUT(self) -> None:
            seen.append("PUT " + self.path)
            ok = self.path == "/latest/api/token" and self.headers.get("X-aws-ec2-metadata-token-ttl-seconds")
            self.reply(200 if ok else 400, b"session-token" if ok else b"")

        def do_GET(self) -> None:
            seen.append("GET " + self.path)
            if self.headers.get("X-aws-ec2-metadata-token") != "session-token":
                return self.reply(401, b"")
            base = "/latest/meta-data/iam/security-credentials/"
            if self.path == base:
                return self.reply(200, b"shredcat-reader")
            self.reply(200, doc) if self.path == base + "shredcat-reader" else self.reply(404, b"")

    with serving(Imds) as url:
        yield url, seen


def test_an_instance_profile_role_signs(s3_server: S3Server, imds: tuple[str, list[str]], tmp_path: Path) -> None:
    url, seen = imds
    env = _server_env(s3_server, tmp_path, AWS_EC2_METADATA_SERVICE_ENDPOINT=url)
    assert _read(_store(env)) == BODY
    assert seen == [
        "PUT /latest/api/token",
        "GET /latest/meta-data/iam/security-credentials/",
        "GET /latest/meta-data/iam/security-credentials/shredcat-reader",
    ]


def test_imdsv1_when_the_token_is_refused(s3_server: S3Server, roles: dict[str, str]) -> None:
    doc = json.dumps({"Code": "Success", **_assume(s3_server, roles["reader"])}).encode()
    base = "/latest/meta-data/iam/security-credentials/"
    v1 = {("PUT", "/latest/api/token"): (403, b""), ("GET", base): (200, b"shredcat-reader"), ("GET", base + "shredcat-reader"): (200, doc)}
    with answering(v1) as url:
        store = S3Store(S3Config(region="us-east-1", endpoint=s3_server.endpoint, credentials=InstanceMetadataSource(url)), StoreOptions())
        assert _read(store) == BODY
