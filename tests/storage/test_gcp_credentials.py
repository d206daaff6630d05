"""Google access tokens from Application Default Credentials (service.storage.objects.gcp_credentials).

The chain's choices, the JWT and the token parser are pure. The sources are exercised end to end
against the GCS emulator behind the test proxy, which refuses any bearer token but its own: a read
succeeds only when the chain got that token. Google's token endpoint and metadata server have no
emulator, so a small loopback server plays both, checking what Google checks (the refresh token,
the JWT's RS256 signature, audience and scope, the ``Metadata-Flavor`` header)."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa

from service.errors import ObjectAccessDeniedError
from service.storage.objects.gcp_credentials import (
    SCOPE,
    MetadataSource,
    RefreshTokenSource,
    ServiceAccountSource,
    StaticToken,
    from_file,
    on_google_machine,
    resolve,
)
from service.storage.objects.renewal import Expiring, parse_token
from tests.storage.conftest import read_gcs_with
from tests.storage.emulators import GcsServer
from tests.storage.loopback import Handler, serving

KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PEM = KEY.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
URI = "gs://lake/creds/object.bin"


def _write(path: Path, doc: dict[str, Any]) -> Path:
    path.write_text(json.dumps(doc))
    return path


def _unb64(s: str) -> bytes:
    return base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))


def _verify_jwt(jwt: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The header and claims of a JWT whose RS256 signature ``KEY`` made (raises otherwise)."""
    head, claims, sig = jwt.split(".")
    KEY.public_key().verify(_unb64(sig), f"{head}.{claims}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return json.loads(_unb64(head)), json.loads(_unb64(claims))


# --- the chain ---------------------------------------------------------------------------------


def test_the_chain_in_order(tmp_path: Path) -> None:
    user = _write(tmp_path / "user.json", {"type": "authorized_user", "client_id": "c", "client_secret": "s", "refresh_token": "r"})
    home = {"HOME": str(tmp_path)}
    assert resolve({**home, "GOOGLE_OAUTH_ACCESS_TOKEN": "t", "GOOGLE_APPLICATION_CREDENTIALS": str(user)}, emulator=False) == StaticToken("t")
    assert resolve({**home, "GOOGLE_APPLICATION_CREDENTIALS": str(user), "GCE_METADATA_HOST": "m"}, emulator=False) == RefreshTokenSource("c", "s", "r")
    assert resolve({**home, "GCE_METADATA_HOST": "127.0.0.1:1"}, emulator=True) == MetadataSource("127.0.0.1:1")
    # gcloud's file: only for the real service, not an emulator.
    gcloud = tmp_path / ".config" / "gcloud"
    gcloud.mkdir(parents=True)
    _write(gcloud / "application_default_credentials.json", {"type": "service_account", "client_email": "e@p.iam", "private_key": PEM})
    assert resolve(home, emulator=False) == ServiceAccountSource("e@p.iam", PEM)
    assert resolve(home, emulator=True) is None
    assert resolve({"HOME": str(tmp_path / "none"), "CLOUDSDK_CONFIG": str(gcloud)}, emulator=False) == ServiceAccountSource("e@p.iam", PEM)


def test_credentials_files_that_cannot_serve(tmp_path: Path) -> None:
    with pytest.raises(ObjectAccessDeniedError, match="does not exist"):
        resolve({"GOOGLE_APPLICATION_CREDENTIALS": str(tmp_path / "missing.json")}, emulator=False)
    cases = {
        "not json": "is not a JSON object",
        json.dumps({"type": "impersonated_service_account"}): "of type 'impersonated_service_account'",
        json.dumps({"type": "service_account", "client_email": "e"}): "has no private_key",
        json.dumps({"type": "authorized_user", "client_id": "c"}): "has no client_secret, refresh_token",
    }
    for text, message in cases.items():
        (tmp_path / "c.json").write_text(text)
        with pytest.raises(ObjectAccessDeniedError, match=message):
            from_file(tmp_path / "c.json", required=True)


def test_a_google_machine_is_told_by_its_dmi_product_name(tmp_path: Path) -> None:
    product = tmp_path / "product_name"
    assert not on_google_machine(product)
    product.write_text("Google Compute Engine\n")
    assert on_google_machine(product)
    product.write_text("Standard PC (Q35 + ICH9, 2009)\n")
    assert not on_google_machine(product)


def test_the_service_account_jwt() -> None:
    src = ServiceAccountSource("e@p.iam.gserviceaccount.com", PEM, "kid1", "https://oauth2.googleapis.com/token")
    header, claims = _verify_jwt(src.assertion(1_700_000_000.7))
    assert header == {"alg": "RS256", "typ": "JWT", "kid": "kid1"}
    assert claims == {
        "iss": "e@p.iam.gserviceaccount.com",
        "scope": SCOPE,
        "aud": "https://oauth2.googleapis.com/token",
        "iat": 1_700_000_000,
        "exp": 1_700_003_600,
    }
    with pytest.raises(ObjectAccessDeniedError, match="private key of service account e@p cannot be read"):
        ServiceAccountSource("e@p", "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n").assertion(0, URI)


def test_token_answers() -> None:
    assert parse_token(b'{"access_token": "ya29.x", "expires_in": 3599, "token_type": "Bearer"}', URI, "w", now=100.0) == Expiring("ya29.x", 3699.0)
    for bad in (b"", b"[]", b'{"expires_in": 10}', b'{"access_token": "a"}', b'{"access_token": "a", "expires_in": true}'):
        with pytest.raises(ObjectAccessDeniedError, match="no credentials: w"):
            parse_token(bad, URI, "w")


# --- against the emulator ------------------------------------------------------------------------


@dataclass
class _Google:
    """Google's token endpoint (``/token``) and metadata server, on loopback; hands out ``token``."""

    token: str
    asked: list[str] = field(default_factory=list)
    url: str = ""

    def handler(self) -> type[Handler]:
        google = self

        class Google(Handler):
            def do_POST(self) -> None:
                form = self.form()
                google.asked.append(form.get("grant_type", ""))
                ok = False
                if form.get("grant_type") == "refresh_token":
                    ok = (form.get("client_id"), form.get("client_secret"), form.get("refresh_token")) == ("cid", "cs", "good")
                elif form.get("grant_type") == "urn:ietf:params:oauth:grant-type:jwt-bearer":
                    try:
                        _, claims = _verify_jwt(form.get("assertion", ""))
                        ok = claims["aud"] == google.url + "/token" and claims["scope"] == SCOPE
                    except Exception:
                        ok = False
                if ok:
                    self.reply(200, {"access_token": google.token, "expires_in": 3599})
                else:
                    self.reply(400, {"error": "invalid_grant", "error_description": "Bad Request"})

            def do_GET(self) -> None:
                google.asked.append("metadata")
                ok = self.path.startswith("/computeMetadata/v1/instance/service-accounts/default/token") and self.headers.get("Metadata-Flavor") == "Google"
                self.reply(200 if ok else 403, {"access_token": google.token, "expires_in": 3599} if ok else {})

        return Google


@pytest.fixture
def google(gcs_server: GcsServer) -> Iterator[_Google]:
    g = _Google(gcs_server.token)
    with serving(g.handler()) as g.url:
        yield g


def test_the_emulators_proxy_refuses_anonymous_requests(gcs_server: GcsServer, gcs_creds_object: str) -> None:
    with pytest.raises(ObjectAccessDeniedError):
        read_gcs_with(gcs_server)


def test_a_user_refresh_token_is_exchanged_once(gcs_server: GcsServer, gcs_creds_object: str, google: _Google, tmp_path: Path) -> None:
    good = _write(tmp_path / "u.json", {"type": "authorized_user", "client_id": "cid", "client_secret": "cs", "refresh_token": "good", "token_uri": google.url + "/token"})
    assert read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(good)) == b"0123456789" * 10
    assert google.asked == ["refresh_token"]  # one token served the HEAD and the GET
    bad = _write(tmp_path / "b.json", {"type": "authorized_user", "client_id": "cid", "client_secret": "cs", "refresh_token": "revoked", "token_uri": google.url + "/token"})
    with pytest.raises(ObjectAccessDeniedError, match=r"answered HTTP 400: invalid_grant \(Bad Request\)"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(bad))


def test_a_service_account_key_signs_its_assertion(gcs_server: GcsServer, gcs_creds_object: str, google: _Google, tmp_path: Path) -> None:
    sa = {"type": "service_account", "client_email": "shredcat@p.iam.gserviceaccount.com", "private_key": PEM, "token_uri": google.url + "/token"}
    assert read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(_write(tmp_path / "sa.json", sa))) == b"0123456789" * 10
    other = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    sa["private_key"] = other.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    with pytest.raises(ObjectAccessDeniedError, match="invalid_grant"):
        read_gcs_with(gcs_server, GOOGLE_APPLICATION_CREDENTIALS=str(_write(tmp_path / "other.json", sa)))


def test_the_metadata_servers_token(gcs_server: GcsServer, gcs_creds_object: str, google: _Google) -> None:
    assert read_gcs_with(gcs_server, GCE_METADATA_HOST=google.url.removeprefix("http://")) == b"0123456789" * 10
    assert google.asked == ["metadata"]
