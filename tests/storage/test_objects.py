"""The object-store module against a real S3 API server (moto on loopback, IAM enforced): requests
counted at the server (one per file when the footer fits the tail, two when it does not, only the
float chunks for a page scan), typed errors, and requests that
really overlap (a delaying proxy counts them in flight) without passing the concurrency bound."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.errors import (
    ObjectAccessDeniedError,
    ObjectChangedError,
    ObjectNotFoundError,
    ObjectStoreUnavailableError,
    ObjectTruncatedError,
)
from service.parquet.footer import read_file_metadata
from service.parquet.pages import chunk_span
from service.settings import get_settings
from service.stats.batch import extract_many
from service.stats.extract import extract_file
from service.storage.objects import ObjectStore, StoreOptions, close_stores, coalesce, store_for
from tests.api.conftest import write_variant_file
from tests.storage.conftest import BUCKET, S3Server
from tests.support.delay_proxy import start_in_thread

PAD = ", 'pad': repeat('x', 40) || r"


@pytest.fixture(autouse=True)
def _fresh_settings() -> Iterator[None]:
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()
    close_stores()


def _settings(monkeypatch: pytest.MonkeyPatch, **values: Any) -> None:
    for k, v in values.items():
        monkeypatch.setenv(f"SHREDCAT_OBJECT_STORE_{k.upper()}", str(v))
    get_settings.cache_clear()


def _reset(s3: S3Server) -> None:
    s3.control("/_test/reset")


def _gets(s3: S3Server) -> list[dict[str, Any]]:
    return [r for r in s3.requests()]


def _same_rows(remote: Any, local: Any) -> None:
    assert remote.paths == local.paths
    assert (remote.file_size_bytes, remote.record_count, remote.footer_size, remote.variant_columns) == (
        local.file_size_bytes, local.record_count, local.footer_size, local.variant_columns,
    )  # fmt: skip


# --- pure parts ---------------------------------------------------------------------------------


def test_coalesce_merges_near_ranges_only() -> None:
    assert coalesce([(100, 10), (0, 10), (12, 5), (5, 3)], gap=2) == [(0, 17), (100, 10)]
    assert coalesce([(0, 10), (1000, 10)], gap=100) == [(0, 10), (1000, 10)]
    assert coalesce([(0, 10), (20, 10)], gap=100, max_span=25) == [(0, 10), (20, 10)]
    assert coalesce([(0, 0), (5, 1)]) == [(5, 1)]


# --- requests counted at the server -------------------------------------------------------------


@pytest.fixture(scope="module")
def files(s3_server: S3Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, str]]:
    """name -> (local file, s3 URI): small DuckDB files, and a 3-row-group file of ~0.5 MB whose
    float chunks lie far from its end."""
    d = tmp_path_factory.mktemp("objects")
    out = {}
    for i in range(6):
        p = write_variant_file(d / f"small-{i}.parquet", 50, i * 50)
        out[p.name] = (p, s3_server.upload(p, f"objects/{p.name}"))
    big = d / "big.parquet"
    import duckdb

    duckdb.sql(
        f"COPY (SELECT {{'id': r::BIGINT, 'score': (r * 0.5)::DOUBLE{PAD}}}::VARIANT AS v FROM range(30000) t(r)) "
        f"TO '{big}' (FORMAT parquet, ROW_GROUP_SIZE 10000)"
    )
    out[big.name] = (big, s3_server.upload(big, f"objects/{big.name}"))
    return out


def test_a_footer_within_the_tail_costs_one_get(s3: S3Server, files: dict[str, tuple[Path, str]]) -> None:
    small = {k: v for k, v in files.items() if k.startswith("small")}
    _reset(s3)
    for local, uri in small.values():
        _same_rows(extract_file(uri), extract_file(str(local)))
    log = _gets(s3)
    assert len(log) == len(small)  # no HEAD, no second GET
    assert {(r["method"], r["range"]) for r in log} == {("GET", "bytes=-65536")}


def _float_spans(local: Path) -> list[tuple[int, int]]:
    with local.open("rb") as f:
        meta = read_file_metadata(f)
    spans = [chunk_span(c.meta_data) for rg in meta.row_groups for c in rg.columns if c.meta_data and c.meta_data.type == "DOUBLE"]
    return [s for s in spans if s is not None]


def test_a_footer_larger_than_the_tail_costs_two(s3: S3Server, files: dict[str, tuple[Path, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    local, uri = files["small-0.parquet"]
    size = local.stat().st_size
    footer = extract_file(str(local)).footer_size
    assert footer > 64
    _settings(monkeypatch, tail_bytes=64)
    _reset(s3)
    _same_rows(extract_file(uri), extract_file(str(local)))
    # The tail, then exactly the footer's bytes that were missing from it, then (the tail being
    # too short to hold it) the float chunk the page scan reads.
    (score,) = _float_spans(local)
    assert [r["range"] for r in _gets(s3)] == [
        "bytes=-64",
        f"bytes={size - 8 - footer}-{size - 64 - 1}",
        f"bytes={score[0]}-{score[0] + score[1] - 1}",
    ]


def test_a_page_scan_fetches_only_the_float_chunks_coalesced(
    s3: S3Server, files: dict[str, tuple[Path, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    local, uri = files["big.parquet"]
    size = local.stat().st_size
    _settings(monkeypatch, tail_bytes=8192)
    spans = _float_spans(local)
    assert len(spans) == 3 and all(s[0] + s[1] < size - 8192 for s in spans)  # outside the tail
    _reset(s3)
    remote = extract_file(uri)
    _same_rows(remote, extract_file(str(local)))
    assert remote.footer_size < 8192 - 8 and any(p.shredded_type.name == "float64" for p in remote.paths)
    # The tail, and the three score chunks in one request (they are < 256 KiB apart); nothing of
    # the id or pad columns before the first of them.
    (start, length), = coalesce(spans)  # fmt: skip
    assert start == min(s[0] for s in spans) and start + length == max(s[0] + s[1] for s in spans)
    assert [r["range"] for r in _gets(s3)] == ["bytes=-8192", f"bytes={start}-{start + length - 1}"]


# --- errors -------------------------------------------------------------------------------------


def _store(s3: S3Server, **env: str) -> ObjectStore:
    store = store_for(f"s3://{BUCKET}/", StoreOptions(), s3.env(**env))
    assert store is not None
    return store


def test_typed_errors(s3: S3Server, files: dict[str, tuple[Path, str]]) -> None:
    _, uri = files["small-1.parquet"]
    store = _store(s3)
    with pytest.raises(ObjectNotFoundError, match="no such file") as e:
        extract_file(uri + ".gone")
    assert e.value.details["reason"] == "not_found"
    with pytest.raises(ObjectNotFoundError, match="no such bucket"):
        store.read_tail("s3://no-such-bucket/x.parquet", 10)
    with pytest.raises(ObjectAccessDeniedError, match="access denied") as d:
        _store(s3, AWS_SECRET_ACCESS_KEY="wrong").read_tail(uri, 10)
    assert d.value.details["reason"] == "denied"
    with pytest.raises(ObjectAccessDeniedError):
        list(_store(s3, AWS_ACCESS_KEY_ID="nobody").list(f"s3://{BUCKET}/objects/"))
    tail = store.read_tail(uri, 10)
    with pytest.raises(ObjectTruncatedError, match="past the end"):
        store.read_ranges(uri, [(tail.info.size + 10, 5)])
    # Rewritten between the tail read and a later range read: never mixed.
    key = f"objects/rewritten-{id(tail)}.parquet"
    first = s3.put(key, b"PAR1" + b"a" * 100)
    t = store.read_tail(first, 8)
    s3.put(key, b"PAR1" + b"b" * 100)
    with pytest.raises(ObjectChangedError):
        store.read_ranges(first, [(0, 4)], version=t.info.version)


def test_an_unreachable_store_is_unavailable(s3: S3Server) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    dead = store_for(f"s3://{BUCKET}/", StoreOptions(timeout=2), s3.env(AWS_ENDPOINT_URL=f"http://127.0.0.1:{port}"))
    assert dead is not None
    with pytest.raises(ObjectStoreUnavailableError, match="cannot be reached") as e:
        dead.read_tail(f"s3://{BUCKET}/x.parquet", 10)
    assert e.value.details["reason"] == "unavailable"


# --- concurrency --------------------------------------------------------------------------------


def test_requests_overlap_within_the_bound(s3: S3Server, files: dict[str, tuple[Path, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    proxy, url = start_in_thread(s3.endpoint, delay=0.05)
    monkeypatch.setenv("AWS_ENDPOINT_URL", url)
    _settings(monkeypatch, concurrency=4)
    uris = [uri for name, (_, uri) in sorted(files.items()) if name.startswith("small")] * 3
    results = list(extract_many(uris))
    assert [r for _, r in results if not hasattr(r, "paths")] == []
    assert proxy.requests == len(uris)
    # Overlapping (more than one request waited at the proxy at once), never more than 4.
    assert 1 < proxy.max_in_flight <= 4
    # Results come back in the order given.
    assert [u for u, _ in results] == uris
    assert [r.path for _, r in results] == uris  # type: ignore[union-attr]


def test_local_files_stay_in_the_calling_thread(files: dict[str, tuple[Path, str]]) -> None:
    import threading

    seen: list[str] = []

    def extract(p: str) -> Any:
        seen.append(threading.current_thread().name)
        return extract_file(p)

    local = [str(p) for p, _ in files.values()]
    assert [r.path for _, r in extract_many(local, extract=extract)] == local  # type: ignore[union-attr]
    assert set(seen) == {threading.current_thread().name}
