"""Where the S3 store's AWS credentials come from: the AWS SDKs' default chain, without the SDK.

Looked for in this order (the first that is configured wins, as in botocore):

1. **Environment keys**: ``AWS_ACCESS_KEY_ID`` + ``AWS_SECRET_ACCESS_KEY`` (+ ``AWS_SESSION_TOKEN``).
2. **Web identity** (EKS IAM roles for service accounts, GitHub OIDC...): ``AWS_WEB_IDENTITY_TOKEN_FILE``
   + ``AWS_ROLE_ARN`` (+ ``AWS_ROLE_SESSION_NAME``): the token file is read and exchanged with STS
   ``AssumeRoleWithWebIdentity`` (an unsigned request: the token is the credential) for temporary
   credentials, renewed before they expire.
3. **A profile of the shared files** (``AWS_PROFILE``, else ``default``; ``AWS_SHARED_CREDENTIALS_FILE``,
   default ``~/.aws/credentials``, then ``AWS_CONFIG_FILE``, default ``~/.aws/config``): its
   ``aws_access_key_id``/``aws_secret_access_key``/``aws_session_token``, or its ``role_arn`` +
   ``web_identity_token_file`` (as 2). A profile named by ``AWS_PROFILE`` that is in neither file is
   an error; other profile kinds (``source_profile``, ``credential_process``, SSO) are refused with
   a message rather than skipped.
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
import ipaddress
import json
import os
import time
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from service.errors import ObjectAccessDeniedError, ObjectStoreUnavailableError
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import PROBE, Expiring, absent, parse_expiry, read_token_file, refused
from service.storage.objects.sigv4 import Credentials

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
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_EC2_METADATA_DISABLED",
    "AWS_EC2_METADATA_SERVICE_ENDPOINT",
)

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
        r = http.send(
            "POST",
            self.sts_url,
            uri,
            headers={"content-type": "application/x-www-form-urlencoded"},
            content=urlencode(form).encode(),
        )
        if r.status != 200:
            code, message = _sts_error(r.body)
            detail = f"{code}: {message}" if code else f"HTTP {r.status}"
            raise refused(uri, r.status, f"{where} answered {detail}")
        return parse_sts_credentials(r.body, uri, where)


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
    try:
        doc = json.loads(body)
    except ValueError:
        doc = None
    if not isinstance(doc, dict) or not doc.get("AccessKeyId") or not doc.get("SecretAccessKey"):
        raise ObjectAccessDeniedError(f"{uri}: no AWS credentials: {where} answered without keys", details={"path": uri})
    expires = None if doc.get("Expiration") is None else parse_expiry(str(doc["Expiration"]), uri, where)
    return Expiring(Credentials(str(doc["AccessKeyId"]), str(doc["SecretAccessKey"]), doc.get("Token") or None), expires)


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
    profile = _profile(env)
    pregion = None
    if profile is not None:
        name, values = profile
        pregion = values.get("region") or None
        if values.get("aws_access_key_id") and values.get("aws_secret_access_key"):
            keys = Credentials(values["aws_access_key_id"], values["aws_secret_access_key"], values.get("aws_session_token") or None)
            return Resolved(StaticSource(keys, describe=f"profile {name}"), pregion)
        if values.get("role_arn") and values.get("web_identity_token_file"):
            src = _web_identity(env, values["web_identity_token_file"], values["role_arn"], values.get("role_session_name"), pregion or region)
            return Resolved(src, pregion)
        unsupported = [k for k in _UNSUPPORTED if k in values]
        if unsupported:
            raise _config_error(f"AWS profile {name!r} uses {unsupported[0]}, which shredcat does not support; give it keys or a web identity")
    # A profile with no credentials (a region only) lets the chain go on, as in the SDKs.
    return Resolved(_container(env) or _instance_metadata(env), pregion)


def _instance_metadata(env: Mapping[str, str]) -> InstanceMetadataSource | None:
    if (env.get("AWS_EC2_METADATA_DISABLED") or "").strip().lower() == "true":
        return None
    if env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT"):
        return InstanceMetadataSource(env["AWS_EC2_METADATA_SERVICE_ENDPOINT"], explicit=True)
    if env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"):
        return None
    return InstanceMetadataSource()


#: Profile settings naming credentials this module cannot get: refused rather than ignored.
_UNSUPPORTED = ("source_profile", "credential_source", "credential_process", "sso_session", "sso_start_url")


def _config_error(message: str) -> ObjectAccessDeniedError:
    return ObjectAccessDeniedError(message, details={"reason": "denied"})


def _web_identity(env: Mapping[str, str], token_file: str, role_arn: str, session: str | None, region: str) -> WebIdentitySource:
    endpoint = env.get("AWS_ENDPOINT_URL_STS") or env.get("AWS_ENDPOINT_URL")
    url = endpoint.rstrip("/") + "/" if endpoint else f"https://sts.{region}.amazonaws.com/"
    return WebIdentitySource(token_file, role_arn, session or f"shredcat-{int(time.time())}", url)


def _profile(env: Mapping[str, str]) -> tuple[str, dict[str, str]] | None:
    """(name, merged values) of the profile, the credentials file's section over the config
    file's; None when no file has it and ``AWS_PROFILE`` does not ask for it."""
    name = env.get("AWS_PROFILE") or "default"
    home = Path(env.get("HOME") or os.path.expanduser("~"))
    creds_file = Path(env.get("AWS_SHARED_CREDENTIALS_FILE") or home / ".aws" / "credentials").expanduser()
    config_file = Path(env.get("AWS_CONFIG_FILE") or home / ".aws" / "config").expanduser()
    values: dict[str, str] = {}
    found = False
    for path, section in ((config_file, name if name == "default" else f"profile {name}"), (creds_file, name)):
        parser = configparser.RawConfigParser()
        try:
            parser.read(path, encoding="utf-8")
        except configparser.Error as e:
            raise _config_error(f"the AWS file {path} cannot be read: {e}") from None
        if parser.has_section(section):
            found = True
            values.update({k: v.strip() for k, v in parser.items(section)})
    if not found:
        if env.get("AWS_PROFILE"):
            raise _config_error(f"AWS profile {name!r} is in neither {creds_file} nor {config_file}")
        return None
    return name, values


def _container(env: Mapping[str, str]) -> ContainerSource | None:
    rel, full = env.get("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"), env.get("AWS_CONTAINER_CREDENTIALS_FULL_URI")
    if rel:
        url = _ECS_HOST + (rel if rel.startswith("/") else "/" + rel)
    elif full:
        parts = urlsplit(full)
        host = parts.hostname or ""
        if parts.scheme not in ("http", "https") or not host:
            raise _config_error(f"AWS_CONTAINER_CREDENTIALS_FULL_URI {full!r} is not an http(s) URL")
        if parts.scheme == "http" and not _agent_host(host):
            raise _config_error(
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
    "ContainerSource",
    "CredentialSource",
    "InstanceMetadataSource",
    "Resolved",
    "StaticSource",
    "WebIdentitySource",
    "parse_container_credentials",
    "parse_sts_credentials",
    "resolve",
]
