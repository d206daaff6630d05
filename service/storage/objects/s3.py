"""Amazon S3 (and S3 API servers: MinIO, moto) on obstore (:mod:`service.storage.objects.remote`).

Configuration is the AWS SDKs' standard environment, read by obstore: ``AWS_ENDPOINT_URL_S3`` or
``AWS_ENDPOINT_URL`` (a custom endpoint, path-style; ``http://`` allowed for it), ``AWS_REGION``
or ``AWS_DEFAULT_REGION`` (else ``us-east-1``), and credentials from obstore's chain: keys
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``), web identity
(``AWS_WEB_IDENTITY_TOKEN_FILE`` + ``AWS_ROLE_ARN``), container credentials, then instance
metadata; ``AWS_SKIP_SIGNATURE=true`` for public buckets. A named profile (``AWS_PROFILE``: SSO,
``credential_process``, assumed roles) is resolved by boto3 through obstore's credential hook.
"""

from __future__ import annotations

from collections.abc import Mapping

from service.errors import FileAccessError
from service.storage.objects import StoreOptions
from service.storage.objects.remote import RemoteStore, config_error, store_settings

#: The variables passed to obstore (a change of any gives a new store: new credentials).
ENV_VARS = (
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_REGION",
    "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL",
    "AWS_ENDPOINT_URL_S3",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_ROLE_ARN",
    "AWS_ROLE_SESSION_NAME",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
    "AWS_METADATA_ENDPOINT",
    "AWS_SKIP_SIGNATURE",
    "AWS_REQUEST_PAYER",
    "AWS_VIRTUAL_HOSTED_STYLE_REQUEST",
    # Read by boto3, not obstore (see profile_provider).
    "AWS_PROFILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "AWS_CONFIG_FILE",
)
#: Variables only boto3 reads: never passed to obstore.
_BOTO3_ONLY = ("AWS_PROFILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE")
SCHEMES = ("s3", "s3a", "s3n")


def split_uri(uri: str) -> tuple[str, str, str]:
    """``s3://bucket/a/b`` -> ``("s3", "bucket", "a/b")``."""
    scheme, _, rest = uri.partition("://")
    bucket, _, key = rest.partition("/")
    if not bucket:
        raise FileAccessError(f"{uri}: no bucket in the URI", details={"path": uri})
    return scheme, bucket, key


def obstore_config(env: Mapping[str, str]) -> dict[str, str]:
    """obstore's configuration of ``env``: its own names are the SDKs' variable names."""
    config = {k: env[k] for k in ENV_VARS if env.get(k) and k not in _BOTO3_ONLY}
    config.pop("AWS_ENDPOINT_URL_S3", None)
    endpoint = env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL")
    if endpoint:
        config["AWS_ENDPOINT_URL"] = endpoint.rstrip("/")
    config["AWS_REGION"] = env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION") or "us-east-1"
    config.pop("AWS_DEFAULT_REGION", None)
    return config


def profile_provider(env: Mapping[str, str]) -> object | None:
    """A named profile (``AWS_PROFILE``: SSO, ``credential_process``, ``role_arn`` chains) is
    boto3's to resolve, through obstore's hook; None without a profile or with keys in the
    environment (which win, as in the SDKs)."""
    profile = env.get("AWS_PROFILE")
    if not profile or env.get("AWS_ACCESS_KEY_ID"):
        return None
    try:
        import boto3
        from obstore.auth.boto3 import Boto3CredentialProvider
    except ImportError:
        raise FileAccessError(f"AWS_PROFILE={profile!r} needs boto3 to resolve the profile (pip install boto3)") from None
    try:
        return Boto3CredentialProvider(boto3.Session(profile_name=profile))
    except Exception as e:  # botocore's ProfileNotFound and friends
        raise FileAccessError(f"AWS_PROFILE={profile!r}: {type(e).__name__}: {e}") from None


def open_store(env: Mapping[str, str], options: StoreOptions) -> RemoteStore:
    config = obstore_config(env)
    provider = profile_provider(env)

    def make(bucket: str) -> object:
        from obstore.store import S3Store

        try:
            settings = store_settings(config, options, "AWS_ENDPOINT_URL")
            settings["credential_provider"] = provider  # boto3's provider (None: the environment's keys)
            return S3Store(bucket, **settings)
        except Exception as e:
            raise config_error("S3 (the AWS_* environment)", e, list(config.values())) from None

    return RemoteStore(SCHEMES, split_uri, make)


__all__ = ["ENV_VARS", "SCHEMES", "obstore_config", "open_store", "profile_provider", "split_uri"]
