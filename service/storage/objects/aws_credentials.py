"""Where the S3 store's AWS credentials come from: the AWS SDKs' default chain, without the SDK.

Looked for in this order (the first that is configured wins, as in botocore):

1. **Environment keys**: ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (+ ``AWS_SESSION_TOKEN``).
2. **Web identity** (EKS IAM roles for service accounts, GitHub OIDC...): ``AWS_WEB_IDENTITY_TOKEN_FILE``
   + ``AWS_ROLE_ARN`` (+ ``AWS_ROLE_SESSION_NAME``): the token file is read and exchanged with STS
   ``AssumeRoleWithWebIdentity`` (an unsigned request: the token is the credential) for temporary
   credentials, renewed before they expire.
3. **A profile of the shared files** (``AWS_PROFILE``, else ``default``; ``AWS_SHARED_CREDENTIALS_FILE``,
   default ``~/.aws/credentials``, then ``AWS_CONFIG_FILE``, default ``~/.aws/config``), read in
   botocore's order:

   - ``role_arn`` + ``web_identity_token_file``: as 2;
   - ``role_arn`` + ``source_profile`` (another profile's credentials, itself possibly a role:
     chains are followed, a cycle is an error; a profile naming itself uses its own keys) or
     ``credential_source`` (``Environment``, ``Ec2InstanceMetadata``, ``EcsContainer``): STS
     ``AssumeRole`` signed with those credentials (``role_session_name``, ``external_id``,
     ``duration_seconds`` honoured), renewed before expiry;
   - IAM Identity Center (SSO): ``sso_session`` (its ``[sso-session NAME]`` section) or the
     legacy ``sso_start_url``, with ``sso_account_id`` and ``sso_role_name``: the token ``aws sso
     login`` cached (``~/.aws/sso/cache``) gets the role's credentials from the SSO portal; an
     ``sso_session`` token about to expire is refreshed (and the cache rewritten) as the CLI does;
   - ``aws_access_key_id``/``aws_secret_access_key``/``aws_session_token``;
   - ``credential_process``: the command is run (no shell; 60 s at most) and its JSON read
     (``Version`` 1, ``AccessKeyId``, ``SecretAccessKey``, ``SessionToken``, ``Expiration``: run
     again before that).

   A profile named by ``AWS_PROFILE`` that is in neither file is an error; ``mfa_serial`` (an
   interactive code) is refused with a message rather than skipped.
4. **Container credentials** (ECS task roles, EKS Pod Identity): ``AWS_CONTAINER_CREDENTIALS_RELATIVE_URI``
   (on ``http://169.254.170.2``) or ``AWS_CONTAINER_CREDENTIALS_FULL_URI`` (plain http only to a
   loopback address or the ECS/EKS agents' link-local ones, like the SDKs), with
   ``AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE`` (read again at each renewal) or
   ``AWS_CONTAINER_AUTHORIZATION_TOKEN`` as its ``Authorization`` header; renewed before expiry.

5. **EC2 instance metadata** (an instance profile's role), IMDSv2 (v1 when the token is refused):
   ``AWS_EC2_METADATA_SERVICE_ENDPOINT``, else ``http://169.254.169.254`` unless
   ``AWS_EC2_METADATA_DISABLED=true`` or a custom S3 endpoint is set (MinIO and the like are not
   EC2's S3). The default endpoint is probed with a one-second timeout, twice: unreachable,
   another cloud's metadata server, or no role attached means requests go unsigned, as with
   nothing configured (public buckets), and it is asked again an hour later.

STS is reached at ``AWS_ENDPOINT_URL_STS``, else ``AWS_ENDPOINT_URL``, else
``https://sts.{region}.amazonaws.com``.

A failure to get credentials is an :class:`~service.errors.ObjectAccessDeniedError` (STS or the
agent refused) or :class:`~service.errors.ObjectStoreUnavailableError` (cannot be reached), naming
the object being read and where the credentials were looked for.
"""

from __future__ import annotations

import configparser
import hashlib
import ipaddress
import json
import logging
import os
import shlex
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from service.errors import ObjectAccessDeniedError, ObjectStoreError, ObjectStoreUnavailableError
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import (
    PROBE,
    Expiring,
    absent,
    config_error,
    json_object,
    parse_expiry,
    read_token_file,
    refused,
)
from service.storage.objects.sigv4 import Credentials, sign

#: Every variable the chain reads (a change of one gives a new store: see ``store_for``).
ENV_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_ENDPOINT_URL_STS",
    "AWS_ENDPOINT_URL_SSO",
    "AWS_ENDPOINT_URL_SSO_OIDC",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
)

log = logging.getLogger(__name__)

_ECS_HOST = "http://169.254.170.2"
_IMDS_HOST = "http://169.254.169.254"
#: The link-local addresses of the ECS and EKS Pod Identity agents, allowed over plain http.
_AGENT_HOSTS = frozenset({"169.254.170.2", "169.254.170.23", "fd00:ec2::23"})
_STS_NS = "{https://sts.amazonaws.com/doc/2011-06-15/}"


class CredentialSource:
    """Where AWS credentials come from (a :class:`~service.storage.objects.renewal.Source`)."""

    describe: str = ""

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials | None]:
        """The credentials; None: requests go unsigned (what instance metadata says off EC2)."""
        raise NotImplementedError


@dataclass(frozen=True)
class StaticSource(CredentialSource):
    keys: Credentials
    describe: str = "environment keys"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials]:
        return Expiring(self.keys)


@dataclass(frozen=True)
class WebIdentitySource(CredentialSource):
    token_file: str
    role_arn: str
    session_name: str
    sts_url: str
    describe: str = "web identity"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials]:
        where = f"STS AssumeRoleWithWebIdentity for {self.role_arn} at {self.sts_url}"
        token = read_token_file(self.token_file, uri, "web identity token file", prefix="no AWS credentials")
        form = {
            "Action": "AssumeRoleWithWebIdentity",
            "Version": "2011-06-15",
            "RoleArn": self.role_arn,
            "RoleSessionName": self.session_name,
            "WebIdentityToken": token,
        }
        return _sts_call(http, uri, self.sts_url, form, where)


@dataclass(frozen=True)
class AssumeRoleSource(CredentialSource):
    """STS ``AssumeRole``, signed with the credentials of ``base`` (fetched again at each renewal:
    they may be temporary too)."""

    base: CredentialSource
    role_arn: str
    session_name: str
    sts_url: str
    region: str
    external_id: str | None = None
    duration_seconds: int | None = None
    describe: str = "assumed role"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials]:
        where = f"STS AssumeRole for {self.role_arn} at {self.sts_url}"
        base = self.base.fetch(http, uri).value
        if base is None:
            raise ObjectAccessDeniedError(
                f"{uri}: no AWS credentials: {self.base.describe} gave none to assume {self.role_arn} with",
                details={"path": uri},
            )
        form = {"Action": "AssumeRole", "Version": "2011-06-15", "RoleArn": self.role_arn, "RoleSessionName": self.session_name}
        if self.external_id:
            form["ExternalId"] = self.external_id
        if self.duration_seconds:
            form["DurationSeconds"] = str(self.duration_seconds)
        return _sts_call(http, uri, self.sts_url, form, where, signer=(base, self.region))


#: How long a ``credential_process`` may take (the SDKs wait forever; a server must not).
PROCESS_TIMEOUT = 60.0


@dataclass(frozen=True)
class ProcessSource(CredentialSource):
    """A profile's ``credential_process``: a command whose standard output is the credentials."""

    command: str
    profile: str
    describe: str = "credential_process"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials]:
        where = f"the credential_process of AWS profile {self.profile!r}"
        try:
            argv = shlex.split(self.command)
        except ValueError as e:
            raise config_error(f"{where} cannot be split into words: {e}") from None
        if not argv:
            raise config_error(f"{where} is empty")
        try:
            done = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=PROCESS_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise ObjectStoreUnavailableError(
                f"{uri}: no AWS credentials: {where} gave no answer in {PROCESS_TIMEOUT:.0f} s", details={"path": uri}
            ) from None
        except (OSError, ValueError) as e:  # ValueError: a NUL byte in the command
            raise ObjectAccessDeniedError(
                f"{uri}: no AWS credentials: {where} ({argv[0]!r}) cannot be run: {getattr(e, 'strerror', None) or e}",
                details={"path": uri},
            ) from None
        if done.returncode != 0:
            lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
            why = f": {lines[-1][:300]}" if lines else ""
            raise ObjectAccessDeniedError(
                f"{uri}: no AWS credentials: {where} exited with status {done.returncode}{why}", details={"path": uri}
            )
        return parse_process_credentials(done.stdout, uri, where)


@dataclass(frozen=True)
class ContainerSource(CredentialSource):
    url: str
    token: str | None = None
    token_file: str | None = None
    describe: str = "container credentials"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials]:
        headers = {"accept": "application/json"}
        token = self.token
        if self.token_file is not None:
            token = read_token_file(self.token_file, uri, "container authorization token file", prefix="no AWS credentials")
        if token:
            headers["authorization"] = token
        r = http.send("GET", self.url, uri, headers=headers)
        if r.status != 200:
            raise refused(uri, r.status, f"the container credentials endpoint {self.url} answered HTTP {r.status}")
        return parse_container_credentials(r.body, uri, self.url)


@dataclass(frozen=True)
class InstanceMetadataSource(CredentialSource):
    """IMDSv2: a session token (PUT), the instance profile's role name, its credentials.
    ``explicit``: the endpoint was named (``AWS_EC2_METADATA_SERVICE_ENDPOINT``), so failing to
    reach it is an error rather than "not on EC2"."""

    endpoint: str = _IMDS_HOST
    explicit: bool = False
    describe: str = "EC2 instance metadata"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials | None]:
        base = self.endpoint.rstrip("/")
        probe: dict[str, Any] = {} if self.explicit else PROBE
        roles_url = base + "/latest/meta-data/iam/security-credentials/"
        try:
            r = http.send("PUT", base + "/latest/api/token", uri, headers={"x-aws-ec2-metadata-token-ttl-seconds": "21600"}, **probe)
        except ObjectStoreUnavailableError:
            if self.explicit:
                raise
            return absent(f"instance metadata at {base} does not answer: S3 requests go unsigned")
        if r.status == 200:
            auth = {"x-aws-ec2-metadata-token": r.body.decode("ascii", "replace").strip()}
        elif self.explicit:
            raise refused(uri, r.status, f"the instance metadata service {base} refused a session token (HTTP {r.status})")
        else:
            auth = {}  # IMDSv1 only, or another cloud's metadata server: the listing tells
        roles = http.send("GET", roles_url, uri, headers=auth, **probe)
        names = roles.body.decode("utf-8", "replace").split() if roles.status == 200 else []
        if not names:
            if self.explicit and roles.status not in (200, 404):
                raise refused(uri, roles.status, f"the instance metadata service {base} answered HTTP {roles.status} for the role")
            why = "gives no IAM role" if roles.status in (200, 404) else f"answered HTTP {roles.status}"
            return absent(f"instance metadata at {base} {why}: S3 requests go unsigned")
        c = http.send("GET", roles_url + names[0], uri, headers=auth)
        if c.status != 200:
            raise refused(uri, c.status, f"the instance metadata service {base} answered HTTP {c.status} for role {names[0]}")
        return parse_container_credentials(c.body, uri, roles_url + names[0])


#: An SSO access token this close to expiry (seconds) is refreshed first (botocore's window).
SSO_REFRESH_WINDOW = 15 * 60.0


@dataclass(frozen=True)
class SsoSource(CredentialSource):
    """IAM Identity Center: the role's credentials from the SSO portal, for the access token
    ``aws sso login`` cached in ``cache_file``."""

    profile: str
    account_id: str
    role_name: str
    sso_region: str
    cache_file: str
    portal_url: str
    #: The OIDC service that refreshes an ``sso_session`` token (None: legacy, not refreshable).
    oidc_url: str | None = None
    describe: str = "AWS SSO"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[Credentials]:
        token = self._access_token(http, uri)
        url = self.portal_url.rstrip("/") + "/federation/credentials?" + urlencode({"role_name": self.role_name, "account_id": self.account_id})
        r = http.send("GET", url, uri, headers={"x-amz-sso_bearer_token": token, "accept": "application/json"})
        where = f"the SSO portal {self.portal_url} (role {self.role_name} of account {self.account_id})"
        if r.status != 200:
            hint = f": run `aws sso login --profile {self.profile}`" if r.status == 401 else ""
            raise refused(uri, r.status, f"{where} answered HTTP {r.status}{hint}")
        doc = (json_object(r.body) or {}).get("roleCredentials")
        if not isinstance(doc, dict) or not doc.get("accessKeyId") or not doc.get("secretAccessKey"):
            raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: {where} answered without keys", details={"path": uri})
        expires = doc.get("expiration")
        return Expiring(
            Credentials(str(doc["accessKeyId"]), str(doc["secretAccessKey"]), doc.get("sessionToken") or None),
            float(expires) / 1000 if isinstance(expires, int | float) and not isinstance(expires, bool) else None,
        )

    def _access_token(self, http: HttpSender, uri: str) -> str:
        login = f"run `aws sso login --profile {self.profile}`"
        try:
            doc = json_object(Path(self.cache_file).read_bytes())
        except OSError:
            raise ObjectAccessDeniedError(
                f"{uri}: no AWS credentials: AWS profile {self.profile!r} has no SSO token in {self.cache_file}: {login}",
                details={"path": uri},
            ) from None
        if doc is None or not isinstance(doc.get("accessToken"), str):
            raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: the SSO token cache {self.cache_file} is not valid: {login}", details={"path": uri})
        expires = _sso_time(doc.get("expiresAt"))
        if expires is not None and expires - time.time() > SSO_REFRESH_WINDOW:
            return str(doc["accessToken"])
        still_valid = expires is not None and expires > time.time()
        if self.oidc_url is not None and _refreshable(doc):
            try:
                return self._refresh(http, uri, doc)
            except ObjectStoreError as e:
                if not still_valid:
                    raise
                # As botocore: a token that still works is used while the refresh fails.
                log.warning("the SSO token of AWS profile %r could not be refreshed; it is used until it expires: %s", self.profile, e)
        if still_valid:
            return str(doc["accessToken"])
        raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: the SSO token of AWS profile {self.profile!r} has expired: {login}", details={"path": uri})

    def _refresh(self, http: HttpSender, uri: str, doc: dict[str, Any]) -> str:
        """OIDC ``CreateToken`` with the cached refresh token; the new token is written back to
        the cache (atomically) for the CLI and the next process, as botocore does."""
        url = (self.oidc_url or "").rstrip("/") + "/token"
        body = {"grantType": "refresh_token", "clientId": doc["clientId"], "clientSecret": doc["clientSecret"], "refreshToken": doc["refreshToken"]}
        r = http.send("POST", url, uri, headers={"content-type": "application/json"}, content=json.dumps(body).encode())
        if r.status != 200:
            raise refused(uri, r.status, f"the SSO OIDC service {self.oidc_url} refused to refresh the token of profile {self.profile!r} (HTTP {r.status}): run `aws sso login --profile {self.profile}`")
        new = json_object(r.body)
        if new is None or not isinstance(new.get("accessToken"), str) or not isinstance(new.get("expiresIn"), int):
            raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: the SSO OIDC service {self.oidc_url} answered without a token", details={"path": uri})
        doc = {**doc, "accessToken": new["accessToken"], "expiresAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + new["expiresIn"]))}
        if isinstance(new.get("refreshToken"), str):
            doc["refreshToken"] = new["refreshToken"]
        cache = Path(self.cache_file)
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(dir=cache.parent, prefix=".shredcat-", suffix=".json")  # mode 0600
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(doc, f)
            os.replace(tmp, cache)
            tmp = None
        except OSError as e:
            log.warning("the refreshed SSO token could not be saved to %s (%s); it is used anyway", cache, e.strerror or e)
        finally:
            if tmp is not None:
                Path(tmp).unlink(missing_ok=True)  # it holds the refresh token and the client secret
        return str(new["accessToken"])


def _sso_time(text: object) -> float | None:
    """``expiresAt`` of the SSO cache: ``2026-11-24T23:00:00Z`` (or the older ``...UTC``)."""
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.strip().replace("UTC", "+00:00").replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _refreshable(doc: Mapping[str, Any]) -> bool:
    if not all(isinstance(doc.get(k), str) and doc.get(k) for k in ("refreshToken", "clientId", "clientSecret")):
        return False
    registered = _sso_time(doc.get("registrationExpiresAt"))
    return registered is None or registered > time.time()


def _sts_call(
    http: HttpSender, uri: str, url: str, form: Mapping[str, str], where: str, *, signer: tuple[Credentials, str] | None = None
) -> Expiring[Credentials]:
    """POST an STS action; ``signer``: (credentials, region) to sign it with (AssumeRole), else
    unsigned (AssumeRoleWithWebIdentity: the token is the credential)."""
    body = urlencode(form).encode()
    headers = {"content-type": "application/x-www-form-urlencoded"}
    if signer is not None:
        parts = urlsplit(url)
        amz_date = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        digest = hashlib.sha256(body).hexdigest()
        creds, region = signer
        headers.update(
            sign("POST", parts.netloc, parts.path or "/", [], creds, region, amz_date, extra_headers=headers, service="sts", payload_sha256=digest)
        )
    r = http.send("POST", url, uri, headers=headers, content=body)
    if r.status != 200:
        code, message = _sts_error(r.body)
        detail = f"{code}: {message}" if code else f"HTTP {r.status}"
        raise refused(uri, r.status, f"{where} answered {detail}")
    return parse_sts_credentials(r.body, uri, where)


def _sts_error(body: bytes) -> tuple[str, str]:
    try:
        root = ET.fromstring(body)
    except ET.ParseError:
        return "", ""
    code = next((e.text or "" for e in root.iter() if e.tag.endswith("Code")), "")
    message = next((e.text or "" for e in root.iter() if e.tag.endswith("Message")), "")
    return code.strip(), message.strip()


def parse_sts_credentials(body: bytes, uri: str, where: str) -> Expiring[Credentials]:
    """The ``Credentials`` of an STS ``AssumeRole*`` answer."""
    try:
        creds = ET.fromstring(body).find(f".//{_STS_NS}Credentials")
    except ET.ParseError:
        creds = None
    if creds is None:
        raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: {where} answered without credentials", details={"path": uri})
    key, secret = creds.findtext(f"{_STS_NS}AccessKeyId"), creds.findtext(f"{_STS_NS}SecretAccessKey")
    if not key or not secret:
        raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: {where} answered without keys", details={"path": uri})
    return Expiring(
        Credentials(key.strip(), secret.strip(), (creds.findtext(f"{_STS_NS}SessionToken") or "").strip() or None),
        parse_expiry(creds.findtext(f"{_STS_NS}Expiration"), uri, where),
    )


def parse_container_credentials(body: bytes, uri: str, url: str) -> Expiring[Credentials]:
    """The JSON of the ECS / EKS Pod Identity agents (``AccessKeyId``, ``SecretAccessKey``,
    ``Token``, ``Expiration``)."""
    where = f"the container credentials endpoint {url}"
    doc = json_object(body)
    if doc is None or not doc.get("AccessKeyId") or not doc.get("SecretAccessKey"):
        raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: {where} answered without keys", details={"path": uri})
    expires = None if doc.get("Expiration") is None else parse_expiry(str(doc["Expiration"]), uri, where)
    return Expiring(Credentials(str(doc["AccessKeyId"]), str(doc["SecretAccessKey"]), doc.get("Token") or None), expires)


def parse_process_credentials(out: bytes, uri: str, where: str) -> Expiring[Credentials]:
    """A ``credential_process``'s output: ``{"Version": 1, "AccessKeyId", "SecretAccessKey",
    "SessionToken"?, "Expiration"?}`` (no expiration: the keys never expire)."""
    doc = json_object(out)
    if doc is None:
        raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: {where} did not print a JSON object", details={"path": uri})
    if doc.get("Version") != 1:
        raise ObjectAccessDeniedError(
            f"{uri}: no AWS credentials: {where} printed Version {doc.get('Version')!r}; only 1 is defined", details={"path": uri}
        )
    key, secret = doc.get("AccessKeyId"), doc.get("SecretAccessKey")
    if not isinstance(key, str) or not key or not isinstance(secret, str) or not secret:
        raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: {where} printed no keys", details={"path": uri})
    token = doc.get("SessionToken")
    expires = None if doc.get("Expiration") is None else parse_expiry(str(doc["Expiration"]), uri, where)
    return Expiring(Credentials(key, secret, token if isinstance(token, str) and token else None), expires)


# --- the chain -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Resolved:
    source: CredentialSource | None
    #: The profile's ``region``, for a store whose environment names none.
    region: str | None = None


def resolve(env: Mapping[str, str], region: str) -> Resolved:
    """The first configured source of the chain (see the module docstring); raises
    :class:`~service.errors.ObjectAccessDeniedError` for a configuration that names credentials
    which cannot be used (a missing profile, an unsupported profile kind, a bad container URI)."""
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if key and secret:
        return Resolved(StaticSource(Credentials(key, secret, env.get("AWS_SESSION_TOKEN") or None)))
    if env.get("AWS_WEB_IDENTITY_TOKEN_FILE") and env.get("AWS_ROLE_ARN"):
        return Resolved(_web_identity(env, env["AWS_WEB_IDENTITY_TOKEN_FILE"], env["AWS_ROLE_ARN"], env.get("AWS_ROLE_SESSION_NAME"), region))
    name = env.get("AWS_PROFILE") or "default"
    values = _profile(env, name)
    pregion = None
    if values is not None:
        pregion = values.get("region") or None
        src = _profile_source(env, name, values, pregion or region, ())
        if src is not None:
            return Resolved(src, pregion)
    elif env.get("AWS_PROFILE"):
        raise config_error(f"AWS profile {name!r} is in neither {_files(env)[0]} nor {_files(env)[1]}")
    # A profile with no credentials (a region only) lets the chain go on, as in the SDKs.
    return Resolved(_container(env) or _instance_metadata(env), pregion)


def _profile_source(env: Mapping[str, str], name: str, values: Mapping[str, str], region: str, via: tuple[str, ...]) -> CredentialSource | None:
    """The credentials profile ``name`` gives (None: none, the chain goes on); ``via``: the
    profiles whose ``source_profile`` led here."""
    role = values.get("role_arn")
    keys = None
    if values.get("aws_access_key_id") and values.get("aws_secret_access_key"):
        keys = StaticSource(
            Credentials(values["aws_access_key_id"], values["aws_secret_access_key"], values.get("aws_session_token") or None),
            describe=f"profile {name}",
        )
    if role and values.get("web_identity_token_file"):
        # botocore's assume-role provider steps aside for a profile with a web identity token.
        return _web_identity(env, values["web_identity_token_file"], role, values.get("role_session_name"), region)
    if role:
        if values.get("mfa_serial"):
            raise config_error(f"AWS profile {name!r} asks for an MFA code (mfa_serial), which a service cannot type")
        source_name, named = values.get("source_profile"), values.get("credential_source")
        if source_name and named:
            raise config_error(f"AWS profile {name!r} has both source_profile and credential_source; give one")
        base: CredentialSource | None
        if source_name == name:
            base = keys  # a profile that names itself: its own keys assume its role
            if base is None:
                raise config_error(f"AWS profile {name!r} is its own source_profile but has no keys")
        elif source_name:
            if source_name in via:
                raise config_error(f"AWS profiles {' -> '.join((*via, name, source_name))}: source_profile goes round in a circle")
            source_values = _profile(env, source_name)
            if source_values is None:
                raise config_error(f"AWS profile {name!r}: its source_profile {source_name!r} is in neither {_files(env)[0]} nor {_files(env)[1]}")
            base = _source_profile(env, source_name, source_values, region, (*via, name))
            if base is None:
                raise config_error(f"AWS profile {name!r}: its source_profile {source_name!r} gives no credentials")
        elif named:
            base = _credential_source(env, name, named)
        else:
            raise config_error(f"AWS profile {name!r} has role_arn but no source_profile, credential_source or web_identity_token_file")
        try:
            duration = int(values["duration_seconds"]) if values.get("duration_seconds") else None
        except ValueError:
            raise config_error(f"AWS profile {name!r}: duration_seconds {values['duration_seconds']!r} is not a number of seconds") from None
        return AssumeRoleSource(
            base,
            role,
            values.get("role_session_name") or f"shredcat-{int(time.time())}",
            _sts_url(env, region),
            region,
            values.get("external_id") or None,
            duration,
            describe=f"profile {name} (AssumeRole {role})",
        )
    if any(k in values for k in _SSO_KEYS):
        return _sso(env, name, values)
    if keys is not None:
        return keys
    if values.get("credential_process"):
        return ProcessSource(values["credential_process"], name)
    return None


def _source_profile(
    env: Mapping[str, str], name: str, values: Mapping[str, str], region: str, via: tuple[str, ...]
) -> CredentialSource | None:
    """The credentials another profile's ``source_profile`` names, as botocore resolves them: its
    keys when it has some (even beside a ``role_arn`` of its own), else whatever it gives."""
    if values.get("aws_access_key_id") and values.get("aws_secret_access_key"):
        return StaticSource(
            Credentials(values["aws_access_key_id"], values["aws_secret_access_key"], values.get("aws_session_token") or None),
            describe=f"profile {name}",
        )
    return _profile_source(env, name, values, region, via)


def _sso(env: Mapping[str, str], name: str, values: Mapping[str, str]) -> SsoSource:
    """A profile's IAM Identity Center settings (an ``sso_session`` section, or the legacy keys)."""
    session = values.get("sso_session")
    if session:
        section = _config_section(env, f"sso-session {session}")
        if section is None:
            raise config_error(f"AWS profile {name!r}: its sso_session {session!r} has no [sso-session {session}] section in {_files(env)[1]}")
        start_url, sso_region = section.get("sso_start_url"), section.get("sso_region")
        cache_key = session
    else:
        start_url, sso_region = values.get("sso_start_url"), values.get("sso_region")
        cache_key = start_url or ""
    missing = [k for k, v in (("sso_start_url", start_url), ("sso_region", sso_region), ("sso_account_id", values.get("sso_account_id")), ("sso_role_name", values.get("sso_role_name"))) if not v]
    if missing:
        raise config_error(f"AWS profile {name!r} is an SSO profile without {', '.join(missing)}")
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    cache = home / ".aws" / "sso" / "cache" / (hashlib.sha1(cache_key.encode("utf-8")).hexdigest() + ".json")
    # Not AWS_ENDPOINT_URL, unlike botocore: here it usually names an S3-compatible store (MinIO),
    # which must not be sent the SSO token, the refresh token and the client secret.
    portal = env.get("AWS_ENDPOINT_URL_SSO") or f"https://portal.sso.{sso_region}.amazonaws.com"
    oidc = (env.get("AWS_ENDPOINT_URL_SSO_OIDC") or f"https://oidc.{sso_region}.amazonaws.com") if session else None
    return SsoSource(name, values["sso_account_id"], values["sso_role_name"], sso_region or "", str(cache), portal, oidc, describe=f"profile {name} (AWS SSO)")


def _credential_source(env: Mapping[str, str], profile: str, named: str) -> CredentialSource:
    """A ``credential_source`` (what an EC2 instance, an ECS task or the environment gives)."""
    if named == "Environment":
        key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
        if not (key and secret):
            raise config_error(f"AWS profile {profile!r}: credential_source Environment, but AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY are not set")
        return StaticSource(Credentials(key, secret, env.get("AWS_SESSION_TOKEN") or None))
    if named == "EcsContainer":
        found = _container(env)
        if found is None:
            raise config_error(f"AWS profile {profile!r}: credential_source EcsContainer, but no AWS_CONTAINER_CREDENTIALS_*_URI is set")
        return found
    if named == "Ec2InstanceMetadata":
        endpoint = env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT")
        return InstanceMetadataSource(endpoint, explicit=True) if endpoint else InstanceMetadataSource()
    raise config_error(f"AWS profile {profile!r}: credential_source {named!r} is not one of Environment, Ec2InstanceMetadata, EcsContainer")


def _instance_metadata(env: Mapping[str, str]) -> InstanceMetadataSource | None:
    if (env.get("AWS_EC2_METADATA_DISABLED") or "").strip().lower() == "true":
        return None
    if env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT"):
        return InstanceMetadataSource(env["AWS_EC2_METADATA_SERVICE_ENDPOINT"], explicit=True)
    if env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"):
        return None
    return InstanceMetadataSource()


#: A profile with any of these is an IAM Identity Center (SSO) profile.
_SSO_KEYS = ("sso_session", "sso_start_url", "sso_account_id", "sso_role_name")


def _sts_url(env: Mapping[str, str], region: str) -> str:
    endpoint = env.get("AWS_ENDPOINT_URL_STS") or env.get("AWS_ENDPOINT_URL")
    return endpoint.rstrip("/") + "/" if endpoint else f"https://sts.{region}.amazonaws.com/"


def _web_identity(env: Mapping[str, str], token_file: str, role_arn: str, session: str | None, region: str) -> WebIdentitySource:
    return WebIdentitySource(token_file, role_arn, session or f"shredcat-{int(time.time())}", _sts_url(env, region))


def _files(env: Mapping[str, str]) -> tuple[Path, Path]:
    """The shared credentials file and the config file."""
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    creds_file = Path(env.get("AWS_SHARED_CREDENTIALS_FILE") or home / ".aws" / "credentials").expanduser()
    config_file = Path(env.get("AWS_CONFIG_FILE") or home / ".aws" / "config").expanduser()
    return creds_file, config_file


def _profile(env: Mapping[str, str], name: str) -> dict[str, str] | None:
    """The merged values of profile ``name``, the credentials file's section over the config
    file's; None when neither file has it."""
    creds_file, config_file = _files(env)
    values: dict[str, str] = {}
    found = False
    for path, section in ((config_file, name if name == "default" else f"profile {name}"), (creds_file, name)):
        got = _section(path, section)
        if got is not None:
            found = True
            values.update(got)
    return values if found else None


def _config_section(env: Mapping[str, str], section: str) -> dict[str, str] | None:
    """A section of the config file (``sso-session NAME``)."""
    return _section(_files(env)[1], section)


def _section(path: Path, section: str) -> dict[str, str] | None:
    parser = configparser.RawConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error as e:
        raise config_error(f"the AWS file {path} cannot be read: {e}") from None
    if not parser.has_section(section):
        return None
    return {k: v.strip() for k, v in parser.items(section)}


def _container(env: Mapping[str, str]) -> ContainerSource | None:
    rel, full = env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"), env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI")
    if rel:
        url = _ECS_HOST + (rel if rel.startswith("/") else "/" + rel)
    elif full:
        parts = urlsplit(full)
        host = parts.hostname or ""
        if parts.scheme not in ("http", "https") or not host:
            raise config_error(f"AWS_CONTAINER_CREDENTIALS_FULL_URI {full!r} is not an http(s) URL")
        if parts.scheme == "http" and not _agent_host(host):
            raise config_error(
                f"AWS_CONTAINER_CREDENTIALS_FULL_URI {full!r}: plain http is allowed only to a loopback address "
                "or the ECS/EKS agents' (169.254.170.2, 169.254.170.23, fd00:ec2::23)"
            )
        url = full
    else:
        return None
    return ContainerSource(
        url, env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN") or None, env.get("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") or None
    )


def _agent_host(host: str) -> bool:
    if host in _AGENT_HOSTS or host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


__all__ = [
    "ENV_VARS",
    "PROCESS_TIMEOUT",
    "SSO_REFRESH_WINDOW",
    "AssumeRoleSource",
    "ContainerSource",
    "CredentialSource",
    "InstanceMetadataSource",
    "ProcessSource",
    "Resolved",
    "SsoSource",
    "StaticSource",
    "WebIdentitySource",
    "parse_container_credentials",
    "parse_process_credentials",
    "parse_sts_credentials",
    "resolve",
]
