"""Azure Blob Storage's configuration from the environment its users already set
(``AZURE_STORAGE_CONNECTION_STRING``, ``AZURE_STORAGE_ACCOUNT_NAME`` and the rest), as obstore's
settings: pure parsing, apart from the store (:mod:`service.storage.objects.azure`) so that the
URI rules (:func:`service.storage.objects.canonical_uri`, which must know the configured account)
do not import the store.
"""

from __future__ import annotations

from collections.abc import Mapping

from service.errors import FileAccessError

ENV_VARS = (
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_STORAGE_ACCOUNT_NAME",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_ENDPOINT",
    "AZURE_STORAGE_USE_EMULATOR",
    "AZURE_CLIENT_ID",
    "AZURE_CLIENT_SECRET",
    "AZURE_TENANT_ID",
    "AZURE_FEDERATED_TOKEN_FILE",
    "AZURE_AUTHORITY_HOST",
    "AZURE_MSI_ENDPOINT",
    "AZURE_MSI_RESOURCE_ID",
    "AZURE_USE_AZURE_CLI",
    "AZURE_SKIP_SIGNATURE",
)
SCHEMES = ("abfs", "abfss", "az", "wasb", "wasbs")
#: Azurite's well-known development account (``UseDevelopmentStorage=true``), public by design.
DEV_ACCOUNT = "devstoreaccount1"
DEV_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
DEV_ENDPOINT = "http://127.0.0.1:10000/devstoreaccount1"


def obstore_config(env: Mapping[str, str]) -> dict[str, str]:
    """obstore's configuration of ``env``: :class:`FileAccessError` when it names no account or
    is malformed (every path of the store then fails with that one clear message)."""
    conn = env.get("AZURE_STORAGE_CONNECTION_STRING")
    if conn:
        return _from_connection_string(conn)
    config = {k: env[k] for k in ENV_VARS if env.get(k) and k != "AZURE_STORAGE_CONNECTION_STRING"}
    if not config.get("AZURE_STORAGE_ACCOUNT_NAME") and not config.get("AZURE_STORAGE_USE_EMULATOR"):
        raise FileAccessError(
            "Azure Blob Storage is not configured: set AZURE_STORAGE_CONNECTION_STRING, or "
            "AZURE_STORAGE_ACCOUNT_NAME (with AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_TOKEN "
            "or Azure AD credentials)"
        )
    if "AZURE_STORAGE_SAS_TOKEN" in config:
        config["AZURE_STORAGE_SAS_TOKEN"] = config["AZURE_STORAGE_SAS_TOKEN"].lstrip("?")
    if "AZURE_STORAGE_ENDPOINT" in config:
        config["AZURE_STORAGE_ENDPOINT"] = _endpoint(config["AZURE_STORAGE_ENDPOINT"])
    return config


def configured_account(env: Mapping[str, str]) -> str | None:
    """The storage account ``env`` configures (None: none, or a malformed configuration, which
    reading reports)."""
    try:
        config = obstore_config(env)
    except FileAccessError:
        return None
    return config.get("AZURE_STORAGE_ACCOUNT_NAME") or (DEV_ACCOUNT if config.get("AZURE_STORAGE_USE_EMULATOR") else None)


def _endpoint(url: str) -> str:
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise FileAccessError(f"the Azure blob endpoint {url!r} must be an http(s) URL")
    return url.rstrip("/")


def _from_connection_string(conn: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for part in conn.split(";"):
        if part.strip():
            name, sep, value = part.partition("=")
            if not sep:
                raise FileAccessError("AZURE_STORAGE_CONNECTION_STRING: expected Name=Value pairs separated by ';'")
            fields[name.strip().lower()] = value.strip()
    if fields.get("usedevelopmentstorage", "").lower() == "true":
        fields = {"accountname": DEV_ACCOUNT, "accountkey": DEV_KEY, "blobendpoint": fields.get("blobendpoint") or DEV_ENDPOINT}
    account = fields.get("accountname")
    if not account:
        raise FileAccessError("AZURE_STORAGE_CONNECTION_STRING has no AccountName")
    endpoint = fields.get("blobendpoint") or (
        f"{fields.get('defaultendpointsprotocol', 'https')}://{account}.blob.{fields.get('endpointsuffix', 'core.windows.net')}"
    )
    config = {"AZURE_STORAGE_ACCOUNT_NAME": account, "AZURE_STORAGE_ENDPOINT": _endpoint(endpoint)}
    if fields.get("accountkey"):
        config["AZURE_STORAGE_ACCOUNT_KEY"] = fields["accountkey"]
    elif fields.get("sharedaccesssignature"):
        config["AZURE_STORAGE_SAS_TOKEN"] = fields["sharedaccesssignature"].lstrip("?")
    return config
