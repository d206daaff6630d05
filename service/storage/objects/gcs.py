"""Google Cloud Storage on obstore (:mod:`service.storage.objects.remote`), through GCS's XML API.

URIs: ``gs://bucket/path/to/object`` (also ``gcs://``). Configuration is what Google's client
libraries read, passed to obstore:

* ``GOOGLE_APPLICATION_CREDENTIALS`` (a service-account or authorized-user file), else the
  metadata server (Application Default Credentials, obstore's chain); ``GOOGLE_SERVICE_ACCOUNT_KEY``
  (the key's JSON itself);
* ``GOOGLE_OAUTH_ACCESS_TOKEN`` (or obstore's ``GOOGLE_BEARER_TOKEN``): a static access token;
* ``STORAGE_EMULATOR_HOST`` (``http://127.0.0.1:9023`` or ``127.0.0.1:9023``): another endpoint
  than ``https://storage.googleapis.com`` (requests go unsigned unless a token is given).
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import urlsplit

from service.errors import FileAccessError
from service.storage.objects import StoreOptions
from service.storage.objects.remote import RemoteStore, config_error, store_settings

ENV_VARS = (
    "STORAGE_EMULATOR_HOST",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GOOGLE_SERVICE_ACCOUNT",
    "GOOGLE_SERVICE_ACCOUNT_PATH",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_OAUTH_ACCESS_TOKEN",
    "GOOGLE_BEARER_TOKEN",
    "GOOGLE_SKIP_SIGNATURE",
)
SCHEMES = ("gs", "gcs")
DEFAULT_ENDPOINT = "https://storage.googleapis.com"


def obstore_config(env: Mapping[str, str]) -> dict[str, str]:
    config = {k: env[k] for k in ENV_VARS[1:] if env.get(k) and k != "GOOGLE_OAUTH_ACCESS_TOKEN"}
    token = env.get("GOOGLE_OAUTH_ACCESS_TOKEN")
    if token and "GOOGLE_BEARER_TOKEN" not in config:
        config["GOOGLE_BEARER_TOKEN"] = token
    host = (env.get("STORAGE_EMULATOR_HOST") or "").strip()
    if host:
        endpoint = host if "://" in host else f"http://{host}"
        parts = urlsplit(endpoint)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FileAccessError(f"STORAGE_EMULATOR_HOST={host!r} is not an http(s) host[:port]")
        config["GOOGLE_BASE_URL"] = endpoint.rstrip("/")
        if "GOOGLE_BEARER_TOKEN" not in config:
            config.setdefault("GOOGLE_SKIP_SIGNATURE", "true")  # an emulator: no credentials to look for
    return config


def split_uri(uri: str) -> tuple[str, str, str]:
    """``gs://bucket/a/b`` -> ``("gs", "bucket", "a/b")``."""
    scheme, _, rest = uri.partition("://")
    bucket, _, name = rest.partition("/")
    if not bucket or "@" in bucket:
        raise FileAccessError(f"{uri}: expected {scheme}://bucket/object", details={"path": uri})
    return scheme, bucket, name


def open_store(env: Mapping[str, str], options: StoreOptions) -> RemoteStore:
    config = obstore_config(env)

    def make(bucket: str) -> object:
        from obstore.store import GCSStore

        try:
            return GCSStore(bucket, **store_settings(config, options, "GOOGLE_BASE_URL"))
        except Exception as e:
            raise config_error("GCS (the GOOGLE_* environment)", e, list(config.values())) from None

    return RemoteStore(SCHEMES, split_uri, make, generation_ids=True)


__all__ = ["DEFAULT_ENDPOINT", "ENV_VARS", "SCHEMES", "obstore_config", "open_store", "split_uri"]
