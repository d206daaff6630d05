"""Google Cloud Storage through gcp-storage-emulator on loopback (``gs://``): the shared
object-store suite (:mod:`tests.storage.remote_suite`) plus what is GCS's own: the configuration
from the client libraries' environment, one request per file whether named or listed (a suffix
range), an object rewritten between two reads, a wrong token refused, and a server that dies in
the middle of a listing walk. obstore reads GCS through its XML API, which the emulator lacks: the
recording proxy in front of it serves that API from the emulator's JSON API.

The emulator does not paginate (it answers every listing in one page) and checks no credentials:
the recording proxy in front of it pages its XML listings (1,000 a page) and refuses a wrong bearer
token as Google does. Pagination is proven in ``test_listing_bound.py``; the death mid-listing here
comes between the two listings of one walk (from the start, from past a hidden directory)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.errors import FileAccessError, ObjectAccessDeniedError, ObjectChangedError, ObjectNotFoundError
from service.storage import list_data_files
from service.storage.objects import StoreOptions
from service.storage.objects.gcs import obstore_config, open_store
from tests.api.conftest import WRITER
from tests.storage.emulators import GcsServer, start_gcs
from tests.storage.remote_suite import *  # noqa: F403 - the shared suite, run for this store
from tests.storage.remote_suite import T, nothing_committed, rest


@pytest.fixture(scope="module")
def server(gcs_server: GcsServer) -> GcsServer:
    return gcs_server


def test_configuration_from_the_client_environment() -> None:
    assert obstore_config({}) == {}
    emulator = obstore_config({"STORAGE_EMULATOR_HOST": "127.0.0.1:9023"})
    assert emulator == {"GOOGLE_BASE_URL": "http://127.0.0.1:9023", "GOOGLE_SKIP_SIGNATURE": "true"}
    c = obstore_config({"STORAGE_EMULATOR_HOST": "https://gcs.test/", "GOOGLE_OAUTH_ACCESS_TOKEN": "t"})
    assert c == {"GOOGLE_BASE_URL": "https://gcs.test", "GOOGLE_BEARER_TOKEN": "t"}
    adc = obstore_config({"GOOGLE_APPLICATION_CREDENTIALS": "/k.json"})
    assert adc == {"GOOGLE_APPLICATION_CREDENTIALS": "/k.json"}
    with pytest.raises(FileAccessError, match="STORAGE_EMULATOR_HOST"):
        obstore_config({"STORAGE_EMULATOR_HOST": "ftp://x"})


@pytest.fixture
def gcs_store(gcs: GcsServer) -> Iterator[Any]:
    s = open_store(gcs.env(), StoreOptions(concurrency=4))
    yield s
    s.close()


def test_one_request_per_file_named_or_listed(gcs: GcsServer, gcs_store: Any) -> None:
    body = bytes(range(256)) * 4
    uri = gcs.put("reads/one.parquet", body)
    gcs.control("/_test/reset")
    tail = gcs_store.read_tail(uri, 100)
    assert (tail.data, tail.info.size) == (body[-100:], len(body))
    assert [(r["method"], r["range"]) for r in gcs.requests()] == [("GET", "bytes=-100")]
    gcs.control("/_test/reset")
    assert [e.uri for e in gcs_store.list(gcs.uri("reads/"))] == [uri]
    listed = gcs_store.read_tail(uri, 100)
    assert listed.data == body[-100:]
    # Read by name or after a listing, the object has one content id: its generation, which GCS
    # sends with the bytes (x-goog-generation, the form of the ids before obstore).
    assert listed.info == tail.info
    assert tail.info.content_id is not None and tail.info.content_id.startswith("generation:")
    assert tail.info.content_id.endswith(f":{len(body)}")
    reads = [r for r in gcs.requests() if not gcs.is_listing(r)]
    assert [(r["method"], r["range"]) for r in reads] == [("GET", "bytes=-100")]
    assert gcs_store.read_ranges(uri, [(10, 5), (1000, 3)], version=tail.info.version) == [body[10:15], body[1000:1003]]


def test_an_object_rewritten_between_reads_is_never_mixed(gcs: GcsServer, gcs_store: Any) -> None:
    uri = gcs.put("rewritten/x.parquet", b"a" * 50)
    first = gcs_store.read_tail(uri, 10)
    gcs.put("rewritten/x.parquet", b"b" * 70)
    with pytest.raises(ObjectChangedError):
        gcs_store.read_ranges(uri, [(0, 4)], version=first.info.version)
    tail = gcs_store.read_tail(uri, 10)
    assert (tail.data, tail.info.size) == (b"b" * 10, 70) and tail.info.content_id != first.info.content_id


def test_errors_of_the_store(gcs: GcsServer, gcs_store: Any) -> None:
    uri = gcs.put("errors/x.parquet", b"x" * 10)
    with pytest.raises(ObjectNotFoundError, match="no such file"):
        gcs_store.read_tail(gcs.uri("errors/nothing.parquet"), 10)
    assert gcs_store.head(gcs.uri("errors/nothing.parquet")) is None
    assert gcs_store.head(uri) is not None
    with pytest.raises(ObjectNotFoundError, match="gs://no-such-bucket/x/: no such bucket"):
        list(gcs_store.list("gs://no-such-bucket/x/"))
    # A file in a missing bucket: the emulator's GET says NoSuchKey, a listing says NoSuchBucket.
    gone = "gs://no-such-bucket/x.parquet"
    for read in (lambda: gcs_store.read_tail(gone, 10), lambda: gcs_store.read_ranges(gone, [(0, 4)])):
        with pytest.raises(ObjectNotFoundError, match=f"^{gone}: no such bucket$") as e:
            read()
        assert e.value.details["missing"] == "bucket"
    wrong = open_store(gcs.env(**gcs.wrong_credentials()), StoreOptions())
    for call in (lambda: wrong.read_tail(uri, 10), lambda: list(wrong.list(gcs.uri("errors/")))):
        with pytest.raises(ObjectAccessDeniedError, match="access denied"):
            call()


def test_a_server_dying_mid_listing_fails_the_commit(app_factory: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    server = start_gcs()
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


def _head_status(endpoint: str, path: str, authorization: str) -> int:
    import urllib.error
    import urllib.request

    req = urllib.request.Request(endpoint + path, method="HEAD", headers={"Authorization": authorization})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)


def test_an_hmac_key_id_is_accepted_only_where_the_bench_asks(gcs_server: GcsServer) -> None:
    # bench/remote.py's DuckDB peer reads gs:// with SigV4 (GCS's HMAC keys); the proxy of the
    # tests accepts bearer tokens only.
    sigv4 = "AWS4-HMAC-SHA256 Credential={}/20261128/auto/s3/aws4_request, SignedHeaders=host, Signature=00"
    path = "/" + gcs_server.put("hmac/a.parquet", b"x").split("://", 1)[1]
    assert _head_status(gcs_server.endpoint, path, f"Bearer {gcs_server.token}") == 200
    assert _head_status(gcs_server.endpoint, path, sigv4.format("GOOGBENCH")) == 401
    bench = start_gcs(hmac_key_id="GOOGBENCH")
    try:
        path = "/" + bench.put("hmac/a.parquet", b"x").split("://", 1)[1]
        assert _head_status(bench.endpoint, path, sigv4.format("GOOGBENCH")) == 200
        assert _head_status(bench.endpoint, path, sigv4.format("GOOGOTHER")) == 401
        assert _head_status(bench.endpoint, path, f"Bearer {bench.token}") == 200
    finally:
        bench.stop()
