"""The one translation of obstore's failures (:func:`service.storage.objects.remote.translate`),
as a pure function of obstore's exceptions and the text obstore 0.12.1 gives them (taken from its
answers to moto, Azurite and the GCS emulator in tests/storage): the typed error, and a message
naming the file, the status and the store's code only, never the request URL or its query."""

from __future__ import annotations

import pytest
from obstore import exceptions as ox

from service.errors import (
    ObjectAccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    ObjectStoreError,
    ObjectStoreUnavailableError,
    ObjectTruncatedError,
)
from service.storage.objects.remote import config_error, translate

URI = "abfs://c/k.parquet"
URL = "http://127.0.0.1:1/acct/c/k.parquet?sv=2021&sig=SECRETSIG"


def _answer(status: str, code: str = "") -> str:
    body = f"<Error><Code>{code}</Code><Message>m</Message></Error>" if code else ""
    return f"Generic error: Error performing GET {URL} in 3ms - Server returned non-2xx status code: {status}: {body}"


@pytest.mark.parametrize(
    ("exc", "cls", "message"),
    [
        (FileNotFoundError(_answer("404 Not Found", "BlobNotFound")), ObjectNotFoundError, "no such file"),
        (ox.GenericError(_answer("404 Not Found", "NoSuchBucket")), ObjectNotFoundError, "no such bucket"),
        (ox.GenericError(_answer("404 Not Found", "ContainerNotFound")), ObjectNotFoundError, "no such container"),
        (ox.PermissionDeniedError(_answer("403 Forbidden", "AuthorizationFailure")), ObjectAccessDeniedError, "access denied (AuthorizationFailure)"),
        (ox.GenericError(_answer("403 Forbidden")), ObjectAccessDeniedError, "access denied (HTTP 403)"),
        (ox.GenericError(_answer("400 Bad Request", "InvalidToken")), ObjectAccessDeniedError, "access denied (InvalidToken)"),
        (ox.PreconditionError(_answer("412 Precondition Failed")), ObjectChangedError, "changed while it was being read"),
        (ox.GenericError(_answer("416 Range Not Satisfiable", "InvalidRange")), ObjectTruncatedError, "past the end"),
        (ox.GenericError(_answer("503 Service Unavailable")), ObjectStoreUnavailableError, "keeps failing (HTTP 503)"),
        (ox.GenericError(_answer("301 Moved Permanently", "PermanentRedirect")), ObjectStoreError, "set AWS_REGION"),
        (ox.GenericError(_answer("400 Bad Request", "InvalidArgument")), ObjectStoreError, "answered HTTP 400 (InvalidArgument)"),
        (ox.GenericError("Generic GCS error: Received non-partial response when range requested"), ObjectStoreError, "ignored the range"),
        (ox.GenericError(f"Generic error: Error performing GET {URL}: error sending request: refused"), ObjectStoreUnavailableError, "cannot be reached"),
    ],
)
def test_translate(exc: BaseException, cls: type, message: str) -> None:
    err = translate(URI, exc, "bytes 0-9")
    assert type(err) is cls and message in err.message, err.message
    assert err.details["path"] == URI
    assert "SECRETSIG" not in err.message + repr(err.details) and "127.0.0.1" not in err.message


def test_config_errors_hide_the_values() -> None:
    err = config_error("Azure Blob Storage", ValueError("bad key 'topsecretvalue' for account"), ["topsecretvalue"])
    assert "topsecretvalue" not in err.message and "***" in err.message


def test_a_misconfigured_store_says_so_on_every_call() -> None:
    """A configuration obstore refuses (a key that is not base64) is the store's own error on a head
    and a listing too, as on a read: it was reported as 'cannot be reached' (retryable) there."""
    from service.errors import FileAccessError
    from service.storage.objects import StoreOptions
    from service.storage.objects.azure import open_store

    store = open_store(
        {"AZURE_STORAGE_ACCOUNT_NAME": "acct", "AZURE_STORAGE_ACCOUNT_KEY": "not base64 !!"}, StoreOptions(timeout=1.0)
    )
    for call in (lambda: store.head("abfs://c/k.parquet"), lambda: list(store.list("abfs://c/p/"))):
        with pytest.raises(FileAccessError) as e:
            call()
        assert not isinstance(e.value, ObjectStoreUnavailableError), e.value
        assert "not base64" not in e.value.message
