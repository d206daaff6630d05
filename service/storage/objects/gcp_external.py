"""Google Workload Identity Federation: ``external_account`` credentials files (Google's AIP-4117),
without Google's libraries. A workload outside Google Cloud (on AWS, Azure, Kubernetes, a CI
runner) proves who it is with a token of its own platform, which Google's Security Token Service
exchanges for a Google access token.

1. **The subject token**, from the file's ``credential_source``:

   - ``file``: read from a file (read again at each renewal: platforms rotate it);
   - ``url``: a GET of that URL with its ``headers`` (Azure's instance metadata, for one);
   - both as ``format`` says: ``text`` (the whole body) or ``json`` (its
     ``subject_token_field_name`` member);
   - ``environment_id: aws1``: an AWS ``GetCallerIdentity`` request signed (SigV4, service
     ``sts``) with the environment's AWS keys or else the instance role's from the metadata URLs
     the file names (IMDSv2 when it names ``imdsv2_session_token_url``), in the region of
     ``AWS_REGION``/``AWS_DEFAULT_REGION`` or the metadata's availability zone, and serialized
     as Google expects (the URL, the method and the headers, the pool's audience among them
     and signed with them). Google has AWS check the signature; the request is never sent here.

   ``executable`` sources and X.509 certificates are refused with a message.
2. **The exchange**: a token-exchange grant (RFC 8693) at the file's ``token_url`` for the file's
   ``audience`` (with ``client_id``/``client_secret`` as HTTP basic authentication when given).
3. **Impersonation**, when the file has a ``service_account_impersonation_url``: the exchanged
   token (scope ``cloud-platform``) asks IAM Credentials ``generateAccessToken`` for the service
   account's token (``service_account_impersonation.token_lifetime_seconds``, default an hour).

Tokens ask for the read-only storage scope and are renewed before they expire
(:mod:`service.storage.objects.renewal`).
"""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

from service.errors import ObjectAccessDeniedError
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import (
    Expiring,
    config_error,
    error_detail,
    json_object,
    parse_expiry,
    parse_token,
    read_token_file,
    refused,
)
from service.storage.objects.sigv4 import Credentials, sign

STS_URL = "https://sts.googleapis.com/v1/token"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"
_ACCESS_TOKEN = "urn:ietf:params:oauth:token-type:access_token"
#: The AWS variables an ``aws1`` source reads (its store is rebuilt when one changes).
AWS_ENV_VARS = ("AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


class SubjectSource:
    """Where the workload's own token comes from."""

    describe: str = ""

    def subject_token(self, http: HttpSender, uri: str, audience: str) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class FileSubject(SubjectSource):
    path: str
    #: None: the whole file; else the JSON member of that name.
    json_field: str | None = None
    describe: str = "a subject token file"

    def subject_token(self, http: HttpSender, uri: str, audience: str) -> str:
        text = read_token_file(self.path, uri, "subject token file")
        return _formatted(text, self.json_field, uri, f"the subject token file {self.path}")


@dataclass(frozen=True)
class UrlSubject(SubjectSource):
    url: str
    headers: Mapping[str, str] = field(default_factory=dict)
    json_field: str | None = None
    describe: str = "a subject token URL"

    def subject_token(self, http: HttpSender, uri: str, audience: str) -> str:
        r = http.send("GET", self.url, uri, headers=dict(self.headers))
        if r.status != 200:
            raise refused(uri, r.status, f"the subject token URL {self.url} answered HTTP {r.status}")
        return _formatted(r.body.decode("utf-8", "replace"), self.json_field, uri, f"the subject token URL {self.url}")


@dataclass(frozen=True)
class AwsSubject(SubjectSource):
    """An AWS ``GetCallerIdentity`` request signed with the workload's AWS credentials."""

    verification_url: str
    region_url: str | None = None
    credentials_url: str | None = None
    session_token_url: str | None = None
    #: From the environment when the source was resolved (see :data:`AWS_ENV_VARS`).
    region: str | None = None
    keys: Credentials | None = field(default=None, repr=False)
    describe: str = "AWS credentials"

    def subject_token(self, http: HttpSender, uri: str, audience: str) -> str:
        imds: dict[str, str] = {}
        if self.session_token_url and (self.region is None or self.keys is None):
            r = http.send("PUT", self.session_token_url, uri, headers={"x-aws-ec2-metadata-token-ttl-seconds": "300"})
            if r.status != 200:
                raise refused(uri, r.status, f"the AWS session token URL {self.session_token_url} answered HTTP {r.status}")
            imds["x-aws-ec2-metadata-token"] = r.body.decode("ascii", "replace").strip()
        region = self.region or self._metadata_region(http, uri, imds)
        creds = self.keys or self._metadata_keys(http, uri, imds)
        url = self.verification_url.replace("{region}", region)
        parts = urlsplit(url)
        host = parts.hostname or ""
        params = parse_qsl(parts.query, keep_blank_values=True)
        extra = {"x-goog-cloud-target-resource": audience}
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        # The headers google-auth serializes (host, x-amz-date, the session token, the audience),
        # no payload hash header; the audience signed too, as Google recommends.
        signed = sign(
            "POST", host, parts.path or "/", params, creds, region, amz_date, extra_headers=extra, service="sts", payload_header=False
        )
        headers = {"host": host, **extra, **signed}
        request = {
            "url": url,
            "method": "POST",
            "headers": [{"key": "Authorization" if k == "authorization" else k, "value": v} for k, v in sorted(headers.items())],
        }
        return quote(json.dumps(request, separators=(",", ":"), sort_keys=True))

    def _metadata_region(self, http: HttpSender, uri: str, imds: Mapping[str, str]) -> str:
        if not self.region_url:
            raise config_error("an aws1 credential source needs AWS_REGION or a region_url")
        r = http.send("GET", self.region_url, uri, headers=dict(imds))
        zone = r.body.decode("utf-8", "replace").strip()
        if r.status != 200 or len(zone) < 2:
            raise refused(uri, r.status, f"the AWS region URL {self.region_url} answered HTTP {r.status} {zone[:40]!r}")
        return zone[:-1]  # the availability zone us-east-2b is in us-east-2

    def _metadata_keys(self, http: HttpSender, uri: str, imds: Mapping[str, str]) -> Credentials:
        if not self.credentials_url:
            raise config_error("an aws1 credential source needs AWS keys in the environment or a url")
        base = self.credentials_url.rstrip("/")
        r = http.send("GET", base, uri, headers=dict(imds))
        role = r.body.decode("utf-8", "replace").strip().split("\n")[0].strip() if r.status == 200 else ""
        if not role:
            raise refused(uri, r.status if r.status != 200 else 404, f"the AWS credentials URL {base} gave no role (HTTP {r.status})")
        c = http.send("GET", f"{base}/{role}", uri, headers={**imds, "content-type": "application/json"})
        doc = json_object(c.body) if c.status == 200 else None
        if doc is None or not doc.get("AccessKeyId") or not doc.get("SecretAccessKey"):
            raise refused(uri, c.status if c.status != 200 else 403, f"the AWS credentials URL {base}/{role} gave no keys (HTTP {c.status})")
        return Credentials(str(doc["AccessKeyId"]), str(doc["SecretAccessKey"]), doc.get("Token") or None)


@dataclass(frozen=True)
class ExternalAccountSource:
    """An ``external_account`` file's token source (a :class:`~service.storage.objects.renewal.Source`)."""

    audience: str
    subject_token_type: str
    subject: SubjectSource
    token_url: str = STS_URL
    impersonation_url: str | None = None
    lifetime_seconds: int = 3600
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    #: The storage scope of the final token.
    scope: str = ""
    describe: str = "external_account credentials"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str]:
        form = {
            "grant_type": _GRANT,
            "audience": self.audience,
            "scope": CLOUD_PLATFORM if self.impersonation_url else self.scope,
            "requested_token_type": _ACCESS_TOKEN,
            "subject_token": self.subject.subject_token(http, uri, self.audience),
            "subject_token_type": self.subject_token_type,
        }
        headers = {"content-type": "application/x-www-form-urlencoded"}
        if self.client_id and self.client_secret:
            basic = base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()
            headers["authorization"] = f"Basic {basic}"
        where = f"the security token service {self.token_url}"
        r = http.send("POST", self.token_url, uri, headers=headers, content=urlencode(form).encode())
        if r.status != 200:
            raise refused(uri, r.status, f"{where} answered {error_detail(r.status, r.body)}")
        federated = parse_token(r.body, uri, where)
        if not self.impersonation_url:
            return federated
        return self._impersonate(http, uri, federated.value)

    def _impersonate(self, http: HttpSender, uri: str, token: str) -> Expiring[str]:
        where = f"IAM credentials {self.impersonation_url}"
        body = json.dumps({"scope": [self.scope], "lifetime": f"{self.lifetime_seconds}s"}).encode()
        headers = {"content-type": "application/json", "authorization": f"Bearer {token}"}
        r = http.send("POST", self.impersonation_url or "", uri, headers=headers, content=body)
        if r.status != 200:
            raise refused(uri, r.status, f"{where} answered {error_detail(r.status, r.body)}")
        doc = json_object(r.body)
        if doc is None or not isinstance(doc.get("accessToken"), str) or not doc["accessToken"]:
            raise ObjectAccessDeniedError(f"{uri}: no credentials: {where} answered without an access token", details={"path": uri})
        return Expiring(doc["accessToken"], parse_expiry(str(doc.get("expireTime")), uri, where))


def from_info(doc: Mapping[str, Any], path: str, env: Mapping[str, str], scope: str) -> ExternalAccountSource:
    """The source of an ``external_account`` document read from ``path`` (named in errors)."""

    def text(key: str, *, required: bool = False, within: Mapping[str, Any] = doc) -> str | None:
        v = within.get(key)
        if v is None and not required:
            return None
        if not isinstance(v, str) or not v:
            raise config_error(f"the Google credentials file {path} (external_account) has no {key}")
        return v

    audience = text("audience", required=True)
    token_type = text("subject_token_type", required=True)
    source = doc.get("credential_source")
    if not isinstance(source, dict):
        raise config_error(f"the Google credentials file {path} (external_account) has no credential_source")
    options = doc.get("service_account_impersonation") or {}
    lifetime = options.get("token_lifetime_seconds", 3600) if isinstance(options, dict) else 3600
    if isinstance(lifetime, bool) or not isinstance(lifetime, int) or not 600 <= lifetime <= 43200:
        raise config_error(f"the Google credentials file {path}: token_lifetime_seconds must be 600..43200, not {lifetime!r}")
    return ExternalAccountSource(
        audience=audience or "",
        subject_token_type=token_type or "",
        subject=_subject(source, path, env),
        token_url=text("token_url") or STS_URL,
        impersonation_url=text("service_account_impersonation_url"),
        lifetime_seconds=lifetime,
        client_id=text("client_id"),
        client_secret=text("client_secret"),
        scope=scope,
    )


def _subject(source: Mapping[str, Any], path: str, env: Mapping[str, str]) -> SubjectSource:
    def text(key: str) -> str | None:
        v = source.get(key)
        if v is not None and (not isinstance(v, str) or not v):
            raise config_error(f"the Google credentials file {path}: credential_source.{key} is not a string")
        return v

    env_id = text("environment_id")
    if env_id is not None:
        if env_id != "aws1":
            raise config_error(f"the Google credentials file {path}: environment_id {env_id!r} is not supported (aws1 is)")
        verification = text("regional_cred_verification_url")
        if verification is None:
            raise config_error(f"the Google credentials file {path}: an aws1 source has no regional_cred_verification_url")
        key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
        return AwsSubject(
            verification,
            text("region_url"),
            text("url"),
            text("imdsv2_session_token_url"),
            env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or None,
            Credentials(key, secret, env.get("AWS_SESSION_TOKEN") or None) if key and secret else None,
        )
    for refused_kind in ("executable", "certificate"):
        if refused_kind in source:
            raise config_error(
                f"the Google credentials file {path}: a credential_source.{refused_kind} is not supported (file, url and aws1 are)"
            )
    fmt = source.get("format") or {"type": "text"}
    if not isinstance(fmt, dict) or fmt.get("type", "text") not in ("text", "json"):
        raise config_error(f"the Google credentials file {path}: credential_source.format must be text or json")
    json_field = None
    if fmt.get("type") == "json":
        json_field = fmt.get("subject_token_field_name")
        if not isinstance(json_field, str) or not json_field:
            raise config_error(f"the Google credentials file {path}: a json format needs subject_token_field_name")
    file, url = text("file"), text("url")
    if (file is None) == (url is None):
        raise config_error(f"the Google credentials file {path}: credential_source needs one of file, url, environment_id")
    if file is not None:
        return FileSubject(file, json_field)
    headers = source.get("headers") or {}
    if not isinstance(headers, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise config_error(f"the Google credentials file {path}: credential_source.headers must map names to strings")
    return UrlSubject(url or "", dict(headers), json_field)


def _formatted(text: str, json_field: str | None, uri: str, where: str) -> str:
    if json_field is None:
        token = text.strip()
    else:
        doc = json_object(text)
        token = doc.get(json_field) if doc is not None else None
        token = token.strip() if isinstance(token, str) else ""
    if not token:
        what = "is empty" if json_field is None else f"has no {json_field!r} string"
        raise ObjectAccessDeniedError(f"{uri}: no credentials: {where} {what}", details={"path": uri})
    return token


__all__ = [
    "AWS_ENV_VARS",
    "CLOUD_PLATFORM",
    "STS_URL",
    "AwsSubject",
    "ExternalAccountSource",
    "FileSubject",
    "SubjectSource",
    "UrlSubject",
    "from_info",
]
