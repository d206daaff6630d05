"""Azure Blob Storage through Azurite on loopback (``abfs://``): the shared object-store suite
(:mod:`tests.storage.remote_suite`) plus what is Azure's own: the configuration from the SDKs'
environment, two requests for a file named directly (Blob Storage has no suffix range, so a HEAD
gives the size) but one for a listed file, a blob rewritten after the listing, SharedKey refused
for a wrong key, and a server that dies between two pages of one listing."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.errors import FileAccessError, ObjectAccessDeniedError, ObjectNotFoundError
from service.storage import list_data_files
from service.storage.objects import StoreOptions, store_for
from service.storage.objects.azure import open_store
from service.storage.objects.azure_config import DEV_ACCOUNT, DEV_ENDPOINT, obstore_config
from tests.api.conftest import ADMIN, WRITER, assert_error
from tests.storage.emulators import AzuriteServer, start_azurite
from tests.storage.remote_suite import *  # noqa: F403 - the shared suite, run for this store
from tests.storage.remote_suite import T, nothing_committed, rest


@pytest.fixture(scope="module")
def server(azurite_server: AzuriteServer) -> AzuriteServer:
    return azurite_server


def test_configuration_from_the_sdk_environment() -> None:
    """A connection string (which obstore does not read) becomes obstore's own settings; the
    variables obstore reads pass through."""
    key = base64.b64encode(b"secret").decode()
    c = obstore_config(
        {"AZURE_STORAGE_CONNECTION_STRING": f"DefaultEndpointsProtocol=https;AccountName=acc;AccountKey={key};EndpointSuffix=core.chinacloudapi.cn"}
    )
    assert c == {"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_STORAGE_ENDPOINT": "https://acc.blob.core.chinacloudapi.cn",
                 "AZURE_STORAGE_ACCOUNT_KEY": key}  # fmt: skip
    dev = obstore_config({"AZURE_STORAGE_CONNECTION_STRING": "UseDevelopmentStorage=true"})
    assert (dev["AZURE_STORAGE_ACCOUNT_NAME"], dev["AZURE_STORAGE_ENDPOINT"]) == (DEV_ACCOUNT, DEV_ENDPOINT)
    sas = obstore_config({"AZURE_STORAGE_CONNECTION_STRING": "AccountName=acc;SharedAccessSignature=?sv=1&sig=a%2Fb"})
    assert sas["AZURE_STORAGE_SAS_TOKEN"] == "sv=1&sig=a%2Fb" and "AZURE_STORAGE_ACCOUNT_KEY" not in sas
    named = obstore_config({"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_STORAGE_SAS_TOKEN": "?sv=1&sig=a%2Fb", "AZURE_CLIENT_ID": "id"})
    assert named == {"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_STORAGE_SAS_TOKEN": "sv=1&sig=a%2Fb", "AZURE_CLIENT_ID": "id"}
    custom = obstore_config({"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_STORAGE_ENDPOINT": "http://127.0.0.1:1/acc/"})
    assert custom["AZURE_STORAGE_ENDPOINT"] == "http://127.0.0.1:1/acc"
    for bad in ({}, {"AZURE_STORAGE_CONNECTION_STRING": "AccountKey=abc"}, {"AZURE_STORAGE_CONNECTION_STRING": "nonsense"},
                {"AZURE_STORAGE_ACCOUNT_NAME": "acc", "AZURE_STORAGE_ENDPOINT": "ftp://x"}):  # fmt: skip
        with pytest.raises(FileAccessError):
            obstore_config(bad)


def test_an_unconfigured_store_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME"):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(FileAccessError, match="AZURE_STORAGE_CONNECTION_STRING"):
        list_data_files("abfs://lake/lake/")


def test_the_hadoop_form_of_another_account_is_refused(azure: AzuriteServer, app_factory: Any) -> None:
    """``abfss://container@account.dfs.core.windows.net/`` is read when it names the configured
    account (the shared suite's test_every_spelling_is_one_object), refused clearly otherwise:
    as a warehouse root, a path, a prefix and a listing."""
    other = "abfss://lake@elsewhere.dfs.core.windows.net/lake/"
    with pytest.raises(FileAccessError, match="names the storage account 'elsewhere'; this server reads 'shredcat'"):
        list_data_files(other)
    with pytest.raises(FileAccessError, match=r"container@account\.dfs\.core\.windows\.net"):
        list_data_files("abfss://lake@shredcat.example.com/lake/")
    c = app_factory(roots=["abfss://lake/lake/"])
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    assert c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN).status_code == 200
    for body in ({"prefixes": [other]}, {"paths": [other + "f.parquet"]}):
        err = assert_error(c.post(T + "/commits", json=body, headers=WRITER), 403, "path_not_allowed")
        assert "'elsewhere'" in err["message"], err
    nothing_committed(c)
    from service.api.paths import parse_roots

    with pytest.raises(ValueError, match="elsewhere"):
        parse_roots([other])


@pytest.fixture
def az_store(azure: AzuriteServer) -> Iterator[Any]:
    s = open_store(azure.env(), StoreOptions(concurrency=4))
    yield s
    s.close()


def test_a_named_file_costs_a_head_and_a_get_a_listed_one_a_get(azure: AzuriteServer, az_store: Any) -> None:
    body = bytes(range(256)) * 4
    uri = azure.put("reads/one.parquet", body)
    azure.control("/_test/reset")
    tail = az_store.read_tail(uri, 100)
    assert (tail.data, tail.info.size, tail.start) == (body[-100:], len(body), len(body) - 100)
    assert tail.info.content_id and tail.info.content_id.endswith(f":{len(body)}")
    assert [(r["method"], r["range"]) for r in azure.requests()] == [("HEAD", None), ("GET", "bytes=924-1023")]
    azure.control("/_test/reset")
    assert [e.uri for e in az_store.list(azure.uri("reads/"))] == [uri]
    assert az_store.read_tail(uri, 2000).data == body  # more than the blob: all of it
    assert [(r["method"], r["range"]) for r in azure.requests() if not azure.is_listing(r)] == [("GET", "bytes=0-1023")]
    assert az_store.read_tail(uri, 100).info == tail.info  # by name or after a listing: one content id
    assert az_store.read_ranges(uri, [(10, 5), (1000, 3)], version=tail.info.version) == [body[10:15], body[1000:1003]]


def test_a_blob_rewritten_after_the_listing_is_read_afresh(azure: AzuriteServer, az_store: Any) -> None:
    uri = azure.put("rewritten/x.parquet", b"a" * 50)
    list(az_store.list(azure.uri("rewritten/")))
    azure.put("rewritten/x.parquet", b"b" * 70)
    tail = az_store.read_tail(uri, 10)
    assert (tail.data, tail.info.size) == (b"b" * 10, 70)


def test_errors_of_the_store(azure: AzuriteServer, az_store: Any) -> None:
    uri = azure.put("errors/x.parquet", b"x" * 10)
    with pytest.raises(ObjectNotFoundError, match="no such file"):
        az_store.read_tail(azure.uri("errors/nothing.parquet"), 10)
    assert az_store.head(azure.uri("errors/nothing.parquet")) is None
    with pytest.raises(ObjectNotFoundError, match="abfs://no-such-container/x/: no such container"):
        list(az_store.list("abfs://no-such-container/x/"))
    # A blob named in a missing container: the HEAD's 404 has no body to say which (no such file).
    gone = "abfs://no-such-container/x.parquet"
    for read in (lambda: az_store.read_tail(gone, 10), lambda: az_store.read_ranges(gone, [(0, 4)])):
        with pytest.raises(ObjectNotFoundError, match=f"^{gone}: no such container$") as e:
            read()
        assert e.value.details["missing"] == "container"
    # A storage account the endpoint does not hold (the listing said "no such bucket").
    other = azure.connection_string().replace(f"AccountName={azure.account};", "AccountName=nosuchaccount;")
    nobody = open_store({"AZURE_STORAGE_CONNECTION_STRING": other.replace(f"/{azure.account};", "/nosuchaccount;")}, StoreOptions())
    for read in (lambda: nobody.read_tail(uri, 10), lambda: list(nobody.list(azure.uri("errors/")))):
        with pytest.raises(ObjectNotFoundError, match=r"no such storage account$"):
            read()
    wrong = open_store(azure.env(**azure.wrong_credentials()), StoreOptions())
    for call in (lambda: wrong.read_tail(uri, 10), lambda: list(wrong.list(azure.uri("errors/")))):
        with pytest.raises(ObjectAccessDeniedError, match=r"access denied \((AuthorizationFailure|HTTP 403)\)"):
            call()
    # The store in force follows the environment: another key is another store.
    assert store_for(uri, env=azure.env()) is not store_for(uri, env=azure.env(**azure.wrong_credentials()))


def test_a_server_dying_mid_listing_fails_the_commit(app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The death comes between the two listings of one walk, from the start and from past a hidden
    directory (obstore asks for pages of Azure's largest size, 5,000; pagination itself is proven
    on S3 and GCS, where a page holds 1,000)."""
    server = start_azurite()
    try:
        for k, v in server.env().items():
            monkeypatch.setenv(k, v)
        for d in range(3):
            server.put(f"lake/big/d={d}/part-0.parquet", b"x")
        server.put("lake/big/_temporary/0/part-9.parquet", b"x")  # before d=..., in key order
        c = rest(app_factory, server)
        server.control("/_test/reset")
        assert len(list_data_files(server.uri("lake/big/"))) == 3
        assert len([r for r in server.requests() if server.is_listing(r)]) == 2  # from the start, from past _temporary/
        # The server dies when the listing from past _temporary/ is asked for: the first was answered.
        server.control("/_test/die-after-lists/1")
        r = c.post(T + "/commits", json={"prefixes": [server.uri("lake/big/")]}, headers=WRITER)
        assert r.status_code == 422, r.text
        assert f"cannot list {server.uri('lake/big/')}" in r.text and "cannot be reached" in r.text, r.text
        assert server.proxy.wait(10) is not None  # it really died
        nothing_committed(c)
    finally:
        server.stop()


def _account_sas(account: str, key: str, permissions: str) -> str:
    """An account SAS token (version 2019-12-12) for the blob service, as the REST reference
    "Create an account SAS" defines its string to sign."""
    import hashlib
    import hmac
    from datetime import UTC, datetime, timedelta
    from urllib.parse import urlencode

    expiry = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    fields = {"sv": "2019-12-12", "ss": "b", "srt": "sco", "sp": permissions, "se": expiry, "spr": "https,http"}
    text = "\n".join([account, permissions, "b", "sco", "", expiry, "", "https,http", "2019-12-12", ""])
    sig = base64.b64encode(hmac.new(base64.b64decode(key), text.encode(), hashlib.sha256).digest()).decode()
    return urlencode({**fields, "sig": sig})


def test_a_sas_token_instead_of_the_key(azure: AzuriteServer) -> None:
    body = b"sas" * 100
    uri = azure.put("sas/x.parquet", body)

    def sas_store(token: str) -> Any:
        env = {"AZURE_STORAGE_ACCOUNT_NAME": azure.account, "AZURE_STORAGE_SAS_TOKEN": token,
               "AZURE_STORAGE_ENDPOINT": f"{azure.endpoint}/{azure.account}"}  # fmt: skip
        return open_store(env, StoreOptions())

    read_list = sas_store("?" + _account_sas(azure.account, azure.key, "rl"))
    assert [e.uri for e in read_list.list(azure.uri("sas/"))] == [uri]
    assert read_list.read_tail(uri, 10).data == body[-10:]
    list_only = sas_store(_account_sas(azure.account, azure.key, "l"))
    assert [e.uri for e in list_only.list(azure.uri("sas/"))] == [uri]
    with pytest.raises(ObjectAccessDeniedError):  # the token does not grant reading
        list_only.read_tail(uri, 10)
    forged = sas_store(_account_sas(azure.account, base64.b64encode(b"x" * 64).decode(), "rl"))
    with pytest.raises(ObjectAccessDeniedError):
        list(forged.list(azure.uri("sas/")))
    for s in (read_list, list_only, forged):
        s.close()
