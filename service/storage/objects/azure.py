"""Azure Blob Storage (and Azurite) on obstore (:mod:`service.storage.objects.remote`).

URIs: ``abfs://container/path/to/blob`` (also ``abfss://``, ``az://``, and Hadoop's
``abfs[s]://container@account.dfs.core.windows.net/path`` and
``wasb[s]://container@account.blob.core.windows.net/path`` of the configured account), the
container as the authority and the account from the configuration.

Configuration is the Azure SDKs' usual environment:

* ``AZURE_STORAGE_CONNECTION_STRING`` (``AccountName``, ``AccountKey`` or
  ``SharedAccessSignature``, ``BlobEndpoint`` or ``DefaultEndpointsProtocol`` +
  ``EndpointSuffix``; ``UseDevelopmentStorage=true`` for a local Azurite): obstore does not read
  it, so it is turned into obstore's settings here;
* else obstore's own variables: ``AZURE_STORAGE_ACCOUNT_NAME`` with ``AZURE_STORAGE_ACCOUNT_KEY``
  or ``AZURE_STORAGE_SAS_TOKEN``, or Azure AD (``AZURE_CLIENT_ID`` + ``AZURE_CLIENT_SECRET`` or
  ``AZURE_FEDERATED_TOKEN_FILE`` + ``AZURE_TENANT_ID``, managed identity, ``AZURE_USE_AZURE_CLI``),
  and ``AZURE_STORAGE_ENDPOINT`` for another endpoint than ``https://<account>.blob.core.windows.net``.

Blob Storage has no suffix range: the tail of a listed blob is one GET of an explicit range (its
listed size, guarded by its ETag); a blob named directly costs a HEAD and a GET.
"""

from __future__ import annotations

from collections.abc import Mapping

from service.errors import FileAccessError
from service.storage.objects import StoreOptions
from service.storage.objects.azure_config import ENV_VARS, SCHEMES, obstore_config
from service.storage.objects.remote import RemoteStore, config_error, store_settings


def split_uri(uri: str) -> tuple[str, str, str]:
    """``abfs://container/a/b`` (any Azure form, see
    :func:`service.storage.objects.canonical_uri`) -> ``("abfs", "container", "a/b")``."""
    from service.storage.objects import canonical_uri

    scheme, _, rest = canonical_uri(uri).partition("://")
    container, _, blob = rest.partition("/")
    if not container:
        raise FileAccessError(f"{uri}: no container in the URI", details={"path": uri})
    return scheme, container, blob


def open_store(env: Mapping[str, str], options: StoreOptions) -> RemoteStore:
    config = obstore_config(env)

    def make(container: str) -> object:
        from obstore.store import AzureStore

        try:
            return AzureStore(container, **store_settings(config, options, "AZURE_STORAGE_ENDPOINT"))
        except Exception as e:
            raise config_error("Azure Blob Storage (the AZURE_* environment)", e, list(config.values())) from None

    return RemoteStore(SCHEMES, split_uri, make, suffix_ranges=False, bucket="container")


__all__ = ["ENV_VARS", "SCHEMES", "open_store", "split_uri"]
