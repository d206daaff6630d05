"""Where the GCS store's OAuth 2 access token comes from: Google's Application Default
Credentials, without Google's libraries.

Looked for in this order (the first that is configured wins):

1. ``GOOGLE_OAUTH_ACCESS_TOKEN``: a token used as is (``gcloud auth print-access-token``; it
   expires within the hour and is not renewed).
2. ``GOOGLE_APPLICATION_CREDENTIALS``: a JSON credentials file, which must exist. Its ``type``:
   ``service_account`` (a key: a JWT signed with it, RS256, is exchanged at its ``token_uri``) or
   ``authorized_user`` (a refresh token, exchanged at its ``token_uri``) or ``external_account``
   (Workload Identity Federation: the workload's own token exchanged with Google's security token
   service, see :mod:`service.storage.objects.gcp_external`). Other types are refused with a message.
3. gcloud's file (``$CLOUDSDK_CONFIG`` or ``~/.config/gcloud``, ``application_default_credentials.json``),
   the same types.
4. The metadata server (GKE workload identity, Compute Engine): at ``GCE_METADATA_HOST`` when
   set, else at ``metadata.google.internal`` when this machine says it is a Google one (its DMI
   product name, as Google's libraries check before probing).

With ``STORAGE_EMULATOR_HOST`` (an emulator) only 1, 2 and an explicit ``GCE_METADATA_HOST``
apply, and with nothing configured requests go anonymous (public buckets, emulators). Tokens ask
for the read-only storage scope (shredcat never writes objects) and are renewed before they
expire (:mod:`service.storage.objects.renewal`).

A failure to get a token is an :class:`~service.errors.ObjectAccessDeniedError` (refused) or
:class:`~service.errors.ObjectStoreUnavailableError` (cannot be reached), naming the object being
read and where the token was asked for.
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from service.errors import ObjectAccessDeniedError
from service.storage.objects.gcp_external import AWS_ENV_VARS
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import (
    Expiring,
    Source,
    config_error,
    json_object,
    parse_token,
    refused,
    token_request,
)

#: Every variable the chain reads (a change of one gives a new store: see ``store_for``).
ENV_VARS = (
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "CLOUDSDK_CONFIG",
    "GCE_METADATA_HOST",
    *AWS_ENV_VARS,  # an external_account file's aws1 source
)

SCOPE = "https://www.googleapis.com/auth/devstorage.read_only"
TOKEN_URI = "https://oauth2.googleapis.com/token"
METADATA_HOST = "metadata.google.internal"
_METADATA_TOKEN = "/computeMetadata/v1/instance/service-accounts/default/token"
_DMI_PRODUCT = Path("/sys/class/dmi/id/product_name")
#: A JWT assertion's lifetime (Google's maximum).
_JWT_SECONDS = 3600


class TokenSource:
    """Where access tokens come from (a :class:`~service.storage.objects.renewal.Source`; an
    ``external_account`` file's is :class:`~service.storage.objects.gcp_external.ExternalAccountSource`)."""

    describe: str = ""

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str]:
        raise NotImplementedError


@dataclass(frozen=True)
class StaticToken(TokenSource):
    token: str
    describe: str = "GOOGLE_OAUTH_ACCESS_TOKEN"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str]:
        return Expiring(self.token)


@dataclass(frozen=True)
class RefreshTokenSource(TokenSource):
    """``authorized_user`` credentials (``gcloud auth application-default login``)."""

    client_id: str
    client_secret: str = field(repr=False)
    refresh_token: str = field(repr=False)
    token_uri: str = TOKEN_URI
    describe: str = "authorized_user credentials"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str]:
        form = {
            "grant_type": "refresh_token",
            "client_id": self.client_id,
            "client_secret": self.client_secret,
            "refresh_token": self.refresh_token,
        }
        return token_request(http, uri, self.token_uri, form, f"the token endpoint {self.token_uri} ({self.describe})")


@dataclass(frozen=True)
class ServiceAccountSource(TokenSource):
    """``service_account`` credentials: a key whose signed JWT is exchanged for a token."""

    client_email: str
    private_key: str = field(repr=False)
    private_key_id: str | None = None
    token_uri: str = TOKEN_URI
    describe: str = "service_account credentials"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str]:
        assertion = self.assertion(time.time(), uri)
        form = {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer", "assertion": assertion}
        return token_request(http, uri, self.token_uri, form, f"the token endpoint {self.token_uri} (service account {self.client_email})")

    def assertion(self, now: float, uri: str = "") -> str:
        """The JWT of Google's "OAuth 2.0 for Server to Server Applications": RS256 over
        ``header.claims``, base64url without padding."""
        from cryptography.exceptions import UnsupportedAlgorithm
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import padding, rsa

        try:
            key = serialization.load_pem_private_key(self.private_key.encode(), password=None)
        except (ValueError, TypeError, UnsupportedAlgorithm) as e:
            raise ObjectAccessDeniedError(
                f"{uri}: no credentials: the private key of service account {self.client_email} cannot be read ({e})",
                details={"path": uri},
            ) from None
        if not isinstance(key, rsa.RSAPrivateKey):
            raise ObjectAccessDeniedError(
                f"{uri}: no credentials: the key of service account {self.client_email} is not an RSA key", details={"path": uri}
            )
        header: dict[str, Any] = {"alg": "RS256", "typ": "JWT"}
        if self.private_key_id:
            header["kid"] = self.private_key_id
        iat = int(now)
        claims = {"iss": self.client_email, "scope": SCOPE, "aud": self.token_uri, "iat": iat, "exp": iat + _JWT_SECONDS}
        signing_input = _b64(json.dumps(header, separators=(",", ":")).encode()) + "." + _b64(json.dumps(claims, separators=(",", ":")).encode())
        signature = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + _b64(signature)


@dataclass(frozen=True)
class MetadataSource(TokenSource):
    """The metadata server's token of the machine's (or the pod's) service account."""

    host: str
    describe: str = "the metadata server"

    @property
    def url(self) -> str:
        base = self.host if "://" in self.host else f"http://{self.host}"
        return base.rstrip("/") + _METADATA_TOKEN + "?" + urlencode({"scopes": SCOPE})

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str]:
        r = http.send("GET", self.url, uri, headers={"metadata-flavor": "Google"})
        where = f"the metadata server {self.host}"
        if r.status != 200:
            raise refused(uri, r.status, f"{where} answered HTTP {r.status}")
        return parse_token(r.body, uri, where)


def _b64(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


# --- the chain -----------------------------------------------------------------------------------


def resolve(env: Mapping[str, str], *, emulator: bool) -> Source[str] | None:
    """The first configured source (see the module docstring); raises
    :class:`~service.errors.ObjectAccessDeniedError` for a credentials file that cannot be used."""
    token = env.get("GOOGLE_OAUTH_ACCESS_TOKEN")
    if token:
        return StaticToken(token)
    named = env.get("GOOGLE_APPLICATION_CREDENTIALS")
    if named:
        return from_file(Path(named).expanduser(), required=True, env=env)
    if env.get("GCE_METADATA_HOST"):
        return MetadataSource(env["GCE_METADATA_HOST"])
    if emulator:
        return None
    config = Path(env["CLOUDSDK_CONFIG"]) if env.get("CLOUDSDK_CONFIG") else Path(env.get("HOME") or Path.home()) / ".config" / "gcloud"
    found = from_file(config / "application_default_credentials.json", required=False, env=env)
    if found is not None:
        return found
    return MetadataSource(METADATA_HOST) if on_google_machine() else None


def on_google_machine(product: Path = _DMI_PRODUCT) -> bool:
    """Whether the DMI product name says Google (Compute Engine, GKE nodes)."""
    try:
        return product.read_text(encoding="utf-8", errors="replace").strip().startswith("Google")
    except OSError:
        return False


def from_file(path: Path, *, required: bool, env: Mapping[str, str] | None = None) -> Source[str] | None:
    """The source of a JSON credentials file; None when it is absent and not ``required``.
    ``env``: what an ``external_account`` file's AWS source reads (the AWS region and keys)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if not required:
            return None
        raise config_error(f"the Google credentials file {path} (GOOGLE_APPLICATION_CREDENTIALS) does not exist") from None
    except OSError as e:
        raise config_error(f"the Google credentials file {path} cannot be read ({e.strerror or e})") from None
    doc = json_object(text)
    if doc is None:
        raise config_error(f"the Google credentials file {path} is not a JSON object")
    kind = doc.get("type")

    def need(*keys: str) -> list[str]:
        missing = [k for k in keys if not isinstance(doc.get(k), str) or not doc[k]]
        if missing:
            raise config_error(f"the Google credentials file {path} ({kind}) has no {', '.join(missing)}")
        return [doc[k] for k in keys]

    token_uri = doc.get("token_uri") if isinstance(doc.get("token_uri"), str) and doc.get("token_uri") else TOKEN_URI
    if kind == "service_account":
        email, key = need("client_email", "private_key")
        kid = doc.get("private_key_id") if isinstance(doc.get("private_key_id"), str) else None
        return ServiceAccountSource(email, key, kid, token_uri)
    if kind == "authorized_user":
        cid, secret, refresh = need("client_id", "client_secret", "refresh_token")
        return RefreshTokenSource(cid, secret, refresh, token_uri)
    if kind == "external_account":
        from service.storage.objects.gcp_external import from_info

        return from_info(doc, str(path), env or {}, SCOPE)
    raise config_error(
        f"the Google credentials file {path} is of type {kind!r}; shredcat reads service_account, authorized_user "
        "and external_account files"
    )


__all__ = [
    "ENV_VARS",
    "SCOPE",
    "MetadataSource",
    "RefreshTokenSource",
    "ServiceAccountSource",
    "StaticToken",
    "TokenSource",
    "from_file",
    "on_google_machine",
    "resolve",
]
