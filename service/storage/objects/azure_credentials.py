"""Azure AD (Microsoft Entra ID) tokens for the Blob store, for an account configured without a
key or SAS: the environment part of the Azure SDKs' ``DefaultAzureCredential``, without the SDK.

Looked for in this order (the first that is configured wins):

1. **A service principal's secret**: ``AZURE_TENANT_ID`` + ``AZURE_CLIENT_ID`` + ``AZURE_CLIENT_SECRET``
   (client credentials grant).
2. **Workload identity** (AKS): ``AZURE_TENANT_ID`` + ``AZURE_CLIENT_ID`` + ``AZURE_FEDERATED_TOKEN_FILE``
   (the file's token as a client assertion, read again at each renewal).
3. **Managed identity**: App Service / Functions / Container Apps (``IDENTITY_ENDPOINT`` +
   ``IDENTITY_HEADER``), else the VM's instance metadata service (``http://169.254.169.254``,
   ``AZURE_CLIENT_ID`` picking a user-assigned identity). The latter is probed with a one-second
   timeout, twice: unreachable, no identity, or another cloud's server means the next source, or
   anonymous requests as with nothing configured, asked again an hour later.
4. **The Azure CLI's login** (a developer's machine), when ``az`` is on the ``PATH`` and there is no
   managed identity: ``az account get-access-token`` (``AZURE_TENANT_ID`` naming the tenant), run
   without a shell, 30 s at most; not logged in means anonymous requests (logged, asked again an
   hour later), as without the CLI.

Tokens come from ``AZURE_AUTHORITY_HOST`` (default ``https://login.microsoftonline.com``) for the
scope ``https://storage.azure.com/.default`` and are renewed before they expire
(:mod:`service.storage.objects.renewal`). Azure accepts them over https only, so an http blob
endpoint (Azurite without TLS) gets none: 1 and 2 are then an error, 3 is not tried.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from service.errors import (
    FileAccessError,
    ObjectAccessDeniedError,
    ObjectStoreUnavailableError,
)
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import (
    PROBE,
    Expiring,
    absent,
    error_detail,
    json_object,
    parse_token,
    read_token_file,
    refused,
    token_request,
)
from service.values.text import ascii_digits

#: Every variable the chain reads (a change of one gives a new store: see ``store_for``).
ENV_VARS = (
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_AUTHORITY_HOST",
    "IDENTITY_ENDPOINT",
    "IDENTITY_HEADER",
    "PATH",  # where ``az`` is
)

SCOPE = "https://storage.azure.com/.default"
RESOURCE = "https://storage.azure.com/"
AUTHORITY = "https://login.microsoftonline.com"
_IMDS = "http://169.254.169.254/metadata/identity/oauth2/token"


class TokenSource:
    """Where Azure AD tokens come from (a :class:`~service.storage.objects.renewal.Source`)."""

    describe: str = ""

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str | None]:
        """A token; None: requests go anonymous (no managed identity here)."""
        raise NotImplementedError


@dataclass(frozen=True)
class ClientSecretSource(TokenSource):
    tenant: str
    client_id: str
    secret: str = field(repr=False)
    authority: str = AUTHORITY
    describe: str = "a service principal's secret"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str | None]:
        form = {"grant_type": "client_credentials", "client_id": self.client_id, "client_secret": self.secret, "scope": SCOPE}
        url = _token_url(self.authority, self.tenant)
        return token_request(http, uri, url, form, f"Azure AD ({url}) for client {self.client_id}")


@dataclass(frozen=True)
class WorkloadIdentitySource(TokenSource):
    tenant: str
    client_id: str
    token_file: str
    authority: str = AUTHORITY
    describe: str = "workload identity"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str | None]:
        assertion = read_token_file(self.token_file, uri, "federated token file")
        form = {
            "grant_type": "client_credentials",
            "client_id": self.client_id,
            "client_assertion_type": "urn:ietf:params:oauth:client-assertion-type:jwt-bearer",
            "client_assertion": assertion,
            "scope": SCOPE,
        }
        url = _token_url(self.authority, self.tenant)
        return token_request(http, uri, url, form, f"Azure AD ({url}) for workload identity {self.client_id}")


@dataclass(frozen=True)
class ManagedIdentitySource(TokenSource):
    """App Service's identity endpoint (``header`` given), or the VM's instance metadata."""

    endpoint: str = _IMDS
    header: str | None = field(default=None, repr=False)
    client_id: str | None = None
    #: Asked when the VM's metadata has no identity (the Azure CLI's login on a laptop).
    fallback: TokenSource | None = None
    describe: str = "managed identity"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str | None]:
        if self.header is not None:
            params = {"resource": RESOURCE, "api-version": "2019-08-01"}
            headers = {"x-identity-header": self.header}
            probe: dict[str, Any] = {}
        else:
            params = {"resource": RESOURCE, "api-version": "2018-02-01"}
            headers = {"metadata": "true"}
            probe = PROBE
        if self.client_id:
            params["client_id"] = self.client_id
        where = f"the managed identity endpoint {self.endpoint}"
        try:
            r = http.send("GET", self.endpoint + "?" + urlencode(params), uri, headers=headers, **probe)
        except ObjectStoreUnavailableError:
            if self.header is not None:
                raise
            if self.fallback is not None:
                return self.fallback.fetch(http, uri)
            return absent(f"Azure instance metadata at {self.endpoint} does not answer: blob requests go anonymous")
        if r.status != 200:
            if self.header is None and r.status < 500:
                # No identity on this VM (400 "Identity not found"), or another cloud's server.
                if self.fallback is not None:
                    return self.fallback.fetch(http, uri)
                why = f"answered {error_detail(r.status, r.body)}"
                return absent(f"Azure instance metadata at {self.endpoint} {why}: blob requests go anonymous")
            raise refused(uri, r.status, f"{where} answered {error_detail(r.status, r.body)}")
        return parse_token(r.body, uri, where)


#: How long ``az account get-access-token`` may take (it starts a Python of its own: seconds).
CLI_TIMEOUT = 30.0


@dataclass(frozen=True)
class AzureCliSource(TokenSource):
    """The token of the Azure CLI's login (``az login``)."""

    az: str
    tenant: str | None = None
    describe: str = "the Azure CLI's login"

    def fetch(self, http: HttpSender, uri: str) -> Expiring[str | None]:
        argv = [self.az, "account", "get-access-token", "--output", "json", "--resource", RESOURCE]
        if self.tenant:
            argv += ["--tenant", self.tenant]
        try:
            done = subprocess.run(argv, capture_output=True, stdin=subprocess.DEVNULL, timeout=CLI_TIMEOUT, check=False)
        except subprocess.TimeoutExpired:
            raise ObjectStoreUnavailableError(
                f"{uri}: no credentials: the Azure CLI ({self.az}) gave no token in {CLI_TIMEOUT:.0f} s", details={"path": uri}
            ) from None
        except OSError as e:
            return absent(f"the Azure CLI ({self.az}) cannot be run ({e.strerror or e}): blob requests go anonymous")
        if done.returncode != 0:
            # Not logged in, as on most machines that merely have az: anonymous, as before the CLI
            # was asked (public containers stay readable), and said once an hour.
            lines = [ln for ln in done.stderr.decode("utf-8", "replace").splitlines() if ln.strip()]
            why = lines[-1].strip()[:300] if lines else f"exit status {done.returncode}"
            return absent(f"the Azure CLI gave no token ({why}): blob requests go anonymous; run `az login` to use its login")
        return parse_cli_token(done.stdout, uri)


def parse_cli_token(out: bytes, uri: str) -> Expiring[str | None]:
    """``az account get-access-token``'s JSON: ``accessToken`` and ``expires_on`` (epoch seconds,
    az 2.54 and later) or ``expiresOn`` (local time without a zone, older versions)."""
    where = "the Azure CLI"
    doc = json_object(out)
    if doc is None or not isinstance(doc.get("accessToken"), str) or not doc["accessToken"]:
        raise ObjectAccessDeniedError(f"{uri}: no credentials: {where} printed no accessToken", details={"path": uri})
    expires: float | None = None
    raw = doc.get("expires_on")
    if isinstance(raw, int | str) and not isinstance(raw, bool) and ascii_digits(str(raw)):
        expires = float(raw)
    elif isinstance(doc.get("expiresOn"), str):
        try:
            expires = datetime.fromisoformat(doc["expiresOn"]).timestamp()  # naive: the machine's local time
        except ValueError:
            expires = None
    if expires is None:
        raise ObjectAccessDeniedError(f"{uri}: no credentials: {where} printed no valid expiry", details={"path": uri})
    return Expiring(doc["accessToken"], expires)


def _token_url(authority: str, tenant: str) -> str:
    return f"{authority.rstrip('/')}/{tenant}/oauth2/v2.0/token"


def resolve(env: Mapping[str, str], endpoint: str) -> TokenSource | None:
    """The first configured source for a blob ``endpoint`` (see the module docstring)."""
    tenant, client = env.get("AZURE_TENANT_ID"), env.get("AZURE_CLIENT_ID")
    authority = env.get("AZURE_AUTHORITY_HOST") or AUTHORITY
    https = endpoint.lower().startswith("https://")
    source: TokenSource | None = None
    if tenant and client and env.get("AZURE_CLIENT_SECRET"):
        source = ClientSecretSource(tenant, client, env["AZURE_CLIENT_SECRET"], authority)
    elif tenant and client and env.get("AZURE_FEDERATED_TOKEN_FILE"):
        source = WorkloadIdentitySource(tenant, client, env["AZURE_FEDERATED_TOKEN_FILE"], authority)
    elif env.get("IDENTITY_ENDPOINT") and env.get("IDENTITY_HEADER"):
        source = ManagedIdentitySource(env["IDENTITY_ENDPOINT"], env["IDENTITY_HEADER"], client)
    elif https:
        # Absolute PATH entries only (a relative one would depend on the working directory); no
        # PATH in the environment given: no az (never the process's own).
        path = os.pathsep.join(d for d in (env.get("PATH") or "").split(os.pathsep) if os.path.isabs(d))
        az = shutil.which("az", path=path)
        return ManagedIdentitySource(client_id=client, fallback=None if az is None else AzureCliSource(az, tenant or None))
    if source is not None and not https:
        raise FileAccessError(
            f"Azure AD credentials ({source.describe}) need an https blob endpoint; {endpoint} is not one"
        )
    return source


__all__ = [
    "CLI_TIMEOUT",
    "ENV_VARS",
    "SCOPE",
    "AzureCliSource",
    "ClientSecretSource",
    "ManagedIdentitySource",
    "TokenSource",
    "WorkloadIdentitySource",
    "parse_cli_token",
    "resolve",
]
