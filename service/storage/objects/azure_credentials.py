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
   timeout, twice: unreachable, no identity, or another cloud's server means anonymous requests,
   as with nothing configured, asked again an hour later.

Tokens come from ``AZURE_AUTHORITY_HOST`` (default ``https://login.microsoftonline.com``) for the
scope ``https://storage.azure.com/.default`` and are renewed before they expire
(:mod:`service.storage.objects.renewal`). Azure accepts them over https only, so an http blob
endpoint (Azurite without TLS) gets none: 1 and 2 are then an error, 3 is not tried.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from service.errors import (
    FileAccessError,
    ObjectStoreUnavailableError,
)
from service.storage.objects.http import HttpSender
from service.storage.objects.renewal import (
    PROBE,
    Expiring,
    absent,
    error_detail,
    parse_token,
    read_token_file,
    refused,
    token_request,
)

#: Every variable the chain reads (a change of one gives a new store: see ``store_for``).
ENV_VARS = (
    "AZURE_TENANT_ID",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_AUTHORITY_HOST",
    "IDENTITY_ENDPOINT",
    "IDENTITY_HEADER",
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
            return absent(f"Azure instance metadata at {self.endpoint} does not answer: blob requests go anonymous")
        if r.status != 200:
            if self.header is None and r.status < 500:
                # No identity on this VM (400 "Identity not found"), or another cloud's server.
                why = f"answered {error_detail(r.status, r.body)}"
                return absent(f"Azure instance metadata at {self.endpoint} {why}: blob requests go anonymous")
            raise refused(uri, r.status, f"{where} answered {error_detail(r.status, r.body)}")
        return parse_token(r.body, uri, where)


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
        return ManagedIdentitySource(client_id=client)
    if source is not None and not https:
        raise FileAccessError(
            f"Azure AD credentials ({source.describe}) need an https blob endpoint; {endpoint} is not one"
        )
    return source


__all__ = [
    "ENV_VARS",
    "SCOPE",
    "ClientSecretSource",
    "ManagedIdentitySource",
    "TokenSource",
    "WorkloadIdentitySource",
    "resolve",
]
