"""Bounded bytes, against a misbehaving server (the recording proxy in front of Azurite and
gcp-storage-emulator, told to misbehave): a body in another encoding than identity (``gzip,
gzip``: 20 MiB of zeros that travel as a few hundred bytes) and a server that ignores ``Range``
and sends the whole object both fail the file with a clear per-file error, before the body is
decoded or read; and a commit of such a file commits nothing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from service.errors import ObjectStoreError
from service.storage.objects import StoreOptions
from tests.api.conftest import WRITER
from tests.storage.remote_suite import T, nothing_committed, rest

BIG = 20 * 1024 * 1024


@pytest.fixture(params=["azure", "gcs"])
def server(request: pytest.FixtureRequest) -> Iterator[Any]:
    srv = request.getfixturevalue(request.param)  # the store, with this process's environment set
    yield srv
    srv.control("/_test/misbehave/none")


def _store(server: Any) -> Any:
    from importlib import import_module

    module = import_module("service.storage.objects." + ("azure" if server.scheme == "abfs" else "gcs"))
    return module.open_store(server.env(), StoreOptions())


def test_only_the_identity_encoding_is_read(server: Any, app_factory: Any) -> None:
    uri = server.put("lake/bounded/gzip.parquet", b"\0" * BIG)
    store = _store(server)
    tail = store.read_tail(uri, 1000)  # behaving: fine
    server.control("/_test/misbehave/gzip")
    server.control("/_test/reset")
    for read in (lambda: store.read_tail(uri, 1000), lambda: store.read_ranges(uri, [(100, 10)], version=tail.info.version)):
        with pytest.raises(ObjectStoreError, match=r"Content-Encoding 'gzip, gzip': only identity is read") as e:
            read()
        assert e.value.details["path"] == uri and e.value.details["content_encoding"] == "gzip, gzip"
    # ... and no other encoding is ever asked for.
    assert {q["accept_encoding"] for q in server.requests()} <= {None, "identity"}, server.requests()
    c = rest(app_factory, server)
    r = c.post(T + "/commits", json={"paths": [uri]}, headers=WRITER)
    assert r.status_code == 422 and "only identity is read" in r.text, r.text
    nothing_committed(c)


def test_a_server_ignoring_the_range_is_not_read_whole(server: Any, app_factory: Any) -> None:
    uri = server.put("lake/bounded/norange.parquet", b"\0" * BIG)
    store = _store(server)
    tail = store.read_tail(uri, 1000)
    server.control("/_test/misbehave/ignore-range")
    for read in (lambda: store.read_tail(uri, 1000), lambda: store.read_ranges(uri, [(100, 10)], version=tail.info.version)):
        with pytest.raises(ObjectStoreError, match="ignored the range asked") as e:
            read()
        assert e.value.details["path"] == uri
    c = rest(app_factory, server)
    r = c.post(T + "/commits", json={"paths": [uri]}, headers=WRITER)
    assert r.status_code == 422 and "ignored the range" in r.text, r.text
    nothing_committed(c)
