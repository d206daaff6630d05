"""The Python client: every route through the in-process app, typed errors, retries with backoff,
and exactly-once commits through the idempotency key."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette
from starlette.routing import Mount

from service.client import (
    AsyncShredcatClient,
    ClientError,
    CommitConflict,
    CommitResult,
    Conflict,
    Forbidden,
    NamespaceAlreadyExists,
    NamespaceNotEmpty,
    NoSuchNamespace,
    NoSuchTable,
    NotFound,
    PayloadTooLarge,
    PlanWarning,
    ServerError,
    ServiceUnavailable,
    ShredcatAPIError,
    ShredcatClient,
    ShredcatConnectionError,
    Table,
    TableAlreadyExists,
    Unauthorized,
    UnexpectedResponse,
    Unprocessable,
    UnsupportedMediaType,
)
from service.stats.extract import extract_file
from tests.api.conftest import TOKENS, write_variant_file


@pytest.fixture
def sc(client) -> ShredcatClient:
    """An admin client sending through the in-process app."""
    return ShredcatClient(http=client, token=TOKENS["admin"], sleep=lambda s: None)


def _paths(warehouse: Path, *idx: int) -> list[str]:
    return [os.path.realpath(warehouse / "events" / f"f{i}.parquet") for i in idx]


def test_every_route(sc: ShredcatClient, warehouse: Path, tmp_path: Path) -> None:
    assert sc.health().status == "ok"
    assert sc.create_namespace("lake").name == "lake"
    assert sc.list_namespaces() == ["lake"]
    assert sc.load_namespace("lake").name == "lake"
    t = sc.create_table("lake", "events", variant_columns=["v"])
    assert isinstance(t, Table) and t.variant_columns == ("v",) and t.namespace == "lake"
    t2 = sc.create_table("lake", "inferred", infer_from=_paths(warehouse, 0)[0])
    assert t2.variant_columns == ("v",)
    assert sc.list_tables("lake") == ["events", "inferred"]

    c1 = sc.commit_paths("lake", "events", _paths(warehouse, 0, 1))
    assert isinstance(c1, CommitResult) and c1.added == tuple(_paths(warehouse, 0, 1)) and c1.idempotency_key
    remote = write_variant_file(tmp_path / "remote.parquet", 10, 500)
    fs = extract_file(str(remote))
    from dataclasses import replace

    fs = replace(fs, path=str(warehouse / "events" / "remote-client.parquet"))
    c2 = sc.commit_files("lake", "events", [fs])
    assert c2.added == (fs.path,) and c2.snapshot_id > c1.snapshot_id

    loaded = sc.load_table("lake", "events")
    assert loaded.live_file_count == 3 and loaded.live_record_count == 210 and loaded.last_commit_time is not None
    page = sc.list_files("lake", "events", page_size=2)
    assert len(page.files) == 2 and page.next_page_token
    assert [f.path for f in sc.iter_files("lake", "events", page_size=2)] == sorted(
        [*_paths(warehouse, 0, 1), fs.path]
    )
    assert [f.path for f in sc.iter_files("lake", "events", prefix=fs.path)] == [fs.path]
    stats = sc.file_stats("lake", "events", fs.path)
    assert {r["variant_path"] for r in stats["variant-stats"]} == {ps.variant_path for ps in fs.paths}
    g = sc.table_stats("lake", "events")
    assert g["file-count"] == 3
    snaps = list(sc.iter_snapshots("lake", "events", page_size=1))
    assert [s.added_files for s in snaps] == [0, 2, 1]
    assert sc.list_snapshots("lake", "events").snapshots == tuple(snaps)
    old = sc.table_stats("lake", "events", snapshot_id=c1.snapshot_id)
    assert old["file-count"] == 2

    plan = sc.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') = 505", explain=True)
    assert plan.paths == [fs.path] and plan.files_pruned == 2 and plan.explain is not None
    flt = {"type": "lt", "term": {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}, "value": 150}
    every = sc.plan_all("lake", "events", filter=flt, page_size=1)
    assert sorted(every.paths) == _paths(warehouse, 0, 1) and every.files_considered == 3

    r = sc.remove_files("lake", "events", [fs.path, "/gone.parquet"], missing_ok=True)
    assert r.removed == (fs.path,) and r.missing == ("/gone.parquet",)
    assert "shredcat_files_registered_total 3.0" in sc.metrics()
    assert isinstance(sc.drop_table("lake", "inferred"), int)
    assert sc.list_tables("lake") == ["events"]


def test_typed_errors(sc: ShredcatClient, client, warehouse: Path) -> None:
    with pytest.raises(NotFound) as ei:
        sc.load_table("lake", "nope")
    assert ei.value.status == 404 and ei.value.type == "not_found" and "does not exist" in ei.value.message
    assert ei.value.request_id
    sc.create_namespace("lake")
    with pytest.raises(Conflict):
        sc.create_namespace("lake")
    sc.create_table("lake", "events", variant_columns=["v"])
    with pytest.raises(Unprocessable) as ei2:
        sc.create_table("lake", "bad")
    assert ei2.value.details["field"] == "body"
    with pytest.raises(Forbidden) as ei3:
        sc.commit_paths("lake", "events", ["/etc/x.parquet"])
    assert ei3.value.type == "path_not_allowed" and isinstance(ei3.value, ClientError)
    with pytest.raises(Unauthorized):
        ShredcatClient(http=client, token="nope").list_namespaces()
    with pytest.raises(Forbidden):
        ShredcatClient(http=client, token=TOKENS["reader"]).commit_paths("lake", "events", _paths(warehouse, 0))
    with pytest.raises(Unauthorized):
        ShredcatClient(http=client).list_namespaces()


def test_per_call_errors_refine_the_status_classes(sc: ShredcatClient, warehouse: Path) -> None:
    with pytest.raises(NoSuchNamespace):
        sc.list_tables("lake")
    with pytest.raises(NoSuchNamespace):
        sc.create_table("lake", "events", variant_columns=["v"])
    sc.create_namespace("lake")
    with pytest.raises(NamespaceAlreadyExists) as ei:
        sc.create_namespace("lake")
    assert isinstance(ei.value, Conflict) and ei.value.status == 409
    sc.create_table("lake", "events", variant_columns=["v"])
    with pytest.raises(TableAlreadyExists):
        sc.create_table("lake", "events", variant_columns=["v"])
    with pytest.raises(NamespaceNotEmpty):
        sc.drop_namespace("lake")
    with pytest.raises(NoSuchTable) as ei2:
        sc.load_table("lake", "nope")
    assert isinstance(ei2.value, NotFound) and ei2.value.type == "not_found"
    r = sc.commit_paths("lake", "events", _paths(warehouse, 0))
    with pytest.raises(CommitConflict):  # the same key with another body
        sc.commit_paths("lake", "events", _paths(warehouse, 1), idempotency_key=r.idempotency_key)
    # Where a 404 may name a table, a file or a snapshot, it stays the plain status class.
    with pytest.raises(NotFound) as ei3:
        sc.file_stats("lake", "events", "/not/registered.parquet")
    assert type(ei3.value) is NotFound


def test_names_are_percent_encoded(sc: ShredcatClient) -> None:
    sc.create_namespace("a b%é")
    sc.create_table("a b%é", "t?x#y", variant_columns=["v"])
    assert sc.load_table("a b%é", "t?x#y").name == "t?x#y"
    assert sc.list_tables("a b%é") == ["t?x#y"]
    with pytest.raises(Unprocessable):  # a '/' could never be addressed in a URL path
        sc.create_namespace("a/b")
    # Dot segments: refused as names, and never normalized away by the client's URL (dropping
    # table '..' of a namespace must not become dropping the namespace).
    for name in (".", ".."):
        with pytest.raises(Unprocessable):
            sc.create_table("a b%é", name, variant_columns=["v"])
        with pytest.raises(NotFound):
            sc.drop_table("a b%é", name)
    assert sc.list_tables("a b%é") == ["t?x#y"]


def test_dot_segments_are_sent_percent_encoded() -> None:
    seen: list[bytes] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.raw_path)
        return httpx.Response(404, json={"error": {"type": "not_found", "message": "no", "details": {}, "code": 404}})

    c = ShredcatClient("http://shredcat.test", token="t", transport=httpx.MockTransport(handler))
    for name in (".", ".."):
        with pytest.raises(NotFound):
            c.drop_table("ns", name)
    assert seen == [b"/v1/namespaces/ns/tables/%2E", b"/v1/namespaces/ns/tables/%2E%2E"]


def test_payload_too_large(app_factory) -> None:
    c = ShredcatClient(http=app_factory(max_body_bytes=100), token=TOKENS["admin"])
    with pytest.raises(PayloadTooLarge):
        c.commit_paths("lake", "events", ["/x/" + "a" * 200 + ".parquet"])


def test_every_body_is_sent_as_json_whatever_the_http_clients_headers(app_factory, warehouse: Path) -> None:
    """The service refuses a body without JSON's Content-Type (415): the client names it on each
    call with a body, over a default one of the ``http`` client it is given."""
    http = app_factory()
    http.headers["Content-Type"] = "text/plain"
    sent: list[str | None] = []
    http.event_hooks["request"] = [lambda request: sent.append(request.headers.get("content-type"))]
    c = ShredcatClient(http=http, token=TOKENS["admin"])
    c.create_namespace("lake")
    c.create_table("lake", "events", variant_columns=["v"])
    c.commit_paths("lake", "events", _paths(warehouse, 0))
    assert len(c.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') = 5").files) == 1
    c.remove_files("lake", "events", _paths(warehouse, 0))
    assert sent == ["application/json"] * 5


def test_a_body_sent_as_another_content_type_is_unsupported_media_type(app_factory) -> None:
    http = app_factory()

    def as_text(request: httpx.Request) -> None:  # what a broken proxy or transport could do
        request.headers["content-type"] = "text/plain"

    http.event_hooks["request"] = [as_text]
    c = ShredcatClient(http=http, token=TOKENS["admin"])
    with pytest.raises(UnsupportedMediaType) as e:
        c.create_namespace("lake")
    assert e.value.status == 415 and e.value.type == "unsupported_media_type"


# --- retries ---------------------------------------------------------------------------------------


def _mock(handler: Callable[[httpx.Request], httpx.Response]) -> tuple[ShredcatClient, list[float]]:
    sleeps: list[float] = []
    c = ShredcatClient("http://shredcat.test", token="t", transport=httpx.MockTransport(handler), sleep=sleeps.append)
    return c, sleeps


def _ns_ok() -> httpx.Response:
    return httpx.Response(200, json={"namespaces": [["lake"]], "next-page-token": None})


def _error(status: int, type_: str = "x", headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, json={"error": {"type": type_, "message": "m", "details": {}, "code": status}}, headers=headers)


def test_reads_retry_on_connection_errors_and_5xx() -> None:
    calls: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        calls.append(req.headers["authorization"])
        if len(calls) == 1:
            raise httpx.ConnectError("refused", request=req)
        if len(calls) == 2:
            raise httpx.ReadTimeout("slow", request=req)
        if len(calls) == 3:
            return _error(503, "storage_unavailable", {"Retry-After": "2"})
        return _ns_ok()

    c, sleeps = _mock(handler)
    assert c.list_namespaces() == ["lake"]
    assert calls == ["Bearer t"] * 4
    assert len(sleeps) == 3 and sleeps[0] <= 0.2 and sleeps[1] <= 0.4 and sleeps[2] >= 2.0


def test_backoff_grows_and_gives_up() -> None:
    c, sleeps = _mock(lambda req: _error(502))
    with pytest.raises(ServerError) as ei:
        c.list_namespaces()
    assert ei.value.status == 502 and len(sleeps) == 3
    assert all(0.5 * 0.2 * 2**i <= s <= 0.2 * 2**i for i, s in enumerate(sleeps))

    def refuse(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=req)

    c, sleeps = _mock(refuse)
    with pytest.raises(ShredcatConnectionError):
        c.list_namespaces()
    assert len(sleeps) == 3
    c0 = ShredcatClient("http://x.test", transport=httpx.MockTransport(refuse), retries=0)
    with pytest.raises(ShredcatConnectionError):
        c0.list_namespaces()


def test_non_idempotent_calls_are_not_retried_once_sent() -> None:
    n = {"calls": 0}

    def handler(req: httpx.Request) -> httpx.Response:
        n["calls"] += 1
        return _error(500, "internal_error")

    c, _ = _mock(handler)
    with pytest.raises(ServerError):
        c.create_namespace("lake")
    assert n["calls"] == 1

    def timeout(req: httpx.Request) -> httpx.Response:
        n["calls"] += 1
        raise httpx.ReadTimeout("lost", request=req)

    n["calls"] = 0
    c, _ = _mock(timeout)
    with pytest.raises(ShredcatConnectionError):
        c.create_table("lake", "t", variant_columns=["v"])
    assert n["calls"] == 1
    # But a request that never left (connection refused) is retried.
    n["calls"] = 0

    def refuse_once(req: httpx.Request) -> httpx.Response:
        n["calls"] += 1
        if n["calls"] == 1:
            raise httpx.ConnectError("refused", request=req)
        return httpx.Response(200, json={"namespace": ["lake"], "properties": {}})

    c, _ = _mock(refuse_once)
    assert c.create_namespace("lake").name == "lake"
    # 4xx are never retried.
    n["calls"] = 0

    def not_found(req: httpx.Request) -> httpx.Response:
        n["calls"] += 1
        return _error(404, "not_found")

    c, _ = _mock(not_found)
    with pytest.raises(NotFound):
        c.list_namespaces()
    assert n["calls"] == 1


def test_commit_retries_reuse_one_idempotency_key() -> None:
    keys: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        keys.append(req.headers["idempotency-key"])
        if len(keys) < 3:
            return _error(500, "internal_error")
        return httpx.Response(200, json={"snapshot-id": 7, "added": ["/a.parquet"], "unchanged": [], "restated": [], "replayed": True})

    c, _ = _mock(handler)
    r = c.commit_paths("lake", "t", ["/a.parquet"])
    assert len(keys) == 3 and len(set(keys)) == 1 and r.idempotency_key == keys[0]
    assert r.snapshot_id == 7 and r.replayed
    keys.clear()
    c.commit_paths("lake", "t", ["/a.parquet"])
    assert keys[0] != r.idempotency_key  # a new logical commit gets a new key


def test_non_json_error_bodies() -> None:
    c, _ = _mock(lambda req: httpx.Response(503, text="<html>bad gateway</html>"))
    with pytest.raises(ServiceUnavailable) as ei:
        c.list_namespaces()
    assert ei.value.type == "http_error" and "bad gateway" in ei.value.message
    assert isinstance(ei.value, ShredcatAPIError)


@pytest.mark.parametrize(
    ("status", "body", "call"),
    [
        # A base URL reaching another page (the OpenAPI docs, a proxy's sign-in page) answers 200.
        (200, {"html": "<!DOCTYPE html><html><title>Sign in</title></html>"}, "list_namespaces"),
        (200, {"text": ""}, "health"),
        (200, {"json": {"identifier": "events"}}, "load_table"),
        (200, {"json": ["not", "stats"]}, "table_stats"),
        (201, {"json": {"snapshot-id": "seven"}}, "commit_paths"),
    ],
)
def test_a_success_answer_that_is_not_the_calls_raises_a_typed_error(status: int, body: dict[str, object], call: str) -> None:
    """Was a raw JSONDecodeError, pydantic ValidationError or a list passed on as stats."""
    args: dict[str, tuple[object, ...]] = {"list_namespaces": (), "health": (), "load_table": ("lake", "t")}
    args |= {"table_stats": ("lake", "t"), "commit_paths": ("lake", "t", ["/a.parquet"])}
    sent: list[str] = []

    def handler(req: httpx.Request) -> httpx.Response:
        sent.append(req.url.path)
        return httpx.Response(status, **body)  # type: ignore[arg-type]  # one of html/text/json

    c, _ = _mock(handler)
    with pytest.raises(UnexpectedResponse) as ei:
        getattr(c, call)(*args[call])
    assert isinstance(ei.value, ShredcatAPIError) and ei.value.type == "unexpected_response" and len(sent) == 1
    assert ei.value.status == status and ei.value.message.startswith(f"{'POST' if call == 'commit_paths' else 'GET'} {sent[0]}: the {status} answer")
    assert ei.value.details["content-type"] == handler(httpx.Request("GET", "http://x")).headers.get("content-type", "")

    async def run() -> None:
        async with AsyncShredcatClient("http://shredcat.test", transport=httpx.MockTransport(handler)) as ac:
            await getattr(ac, call)(*args[call])

    with pytest.raises(UnexpectedResponse):
        asyncio.run(run())


class _LoseFirstResponse(httpx.BaseTransport):
    """Delivers every request to the app but loses the first commit's response (as a dropped
    connection would), so the client must retry a commit the server already applied."""

    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner
        self.lost = 0

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = self.inner.handle_request(request)
        if request.url.path.endswith("/commits") and self.lost == 0:
            self.lost += 1
            response.read()
            raise httpx.ReadError("connection reset after the server answered", request=request)
        return response


def test_retried_commit_is_applied_exactly_once(sc: ShredcatClient, client, warehouse: Path) -> None:
    sc.create_namespace("lake")
    sc.create_table("lake", "events", variant_columns=["v"])
    flaky = _LoseFirstResponse(client._transport)
    c = ShredcatClient("http://testserver", token=TOKENS["writer"], transport=flaky, sleep=lambda s: None)
    r = c.commit_paths("lake", "events", _paths(warehouse, 0, 1))
    assert flaky.lost == 1
    assert r.replayed is True and len(r.added) == 2
    snaps = sc.list_snapshots("lake", "events").snapshots
    assert [s.added_files for s in snaps] == [0, 2]  # one commit, not two


# --- async ----------------------------------------------------------------------------------------


def test_async_client(sc: ShredcatClient, client, warehouse: Path) -> None:
    sc.create_namespace("lake")
    sc.create_table("lake", "events", variant_columns=["v"])

    async def main() -> None:
        transport = httpx.ASGITransport(app=client.app)
        async with AsyncShredcatClient("http://testserver", token=TOKENS["admin"], transport=transport) as ac:
            assert await ac.list_namespaces() == ["lake"]
            r = await ac.commit_paths("lake", "events", _paths(warehouse, 0, 1, 2))
            assert len(r.added) == 3
            assert (await ac.load_table("lake", "events")).live_file_count == 3
            assert [f.path async for f in ac.iter_files("lake", "events", page_size=2)] == _paths(warehouse, 0, 1, 2)
            with pytest.raises(NotFound):
                await ac.load_table("lake", "nope")
            # A replacement in one snapshot (a path removed and given again is replaced), and its missing paths.
            r = await ac.commit(
                "lake", "events", paths=_paths(warehouse, 0), remove=[*_paths(warehouse, 0, 1), "/gone.parquet"],
                remove_missing_ok=True,
            )  # fmt: skip
            assert (r.added, r.removed, r.missing) == (tuple(_paths(warehouse, 0)), tuple(_paths(warehouse, 0, 1)), ("/gone.parquet",))
            with pytest.raises(NotFound, match="cannot be removed"):
                await ac.commit("lake", "events", paths=_paths(warehouse, 1), remove=["/gone.parquet"])

    asyncio.run(main())
    r = sc.commit("lake", "events", paths=_paths(warehouse, 1), remove=_paths(warehouse, 2))
    assert (r.added, r.removed, r.missing) == (tuple(_paths(warehouse, 1)), tuple(_paths(warehouse, 2)), ())
    assert [f.path for f in sc.iter_files("lake", "events")] == _paths(warehouse, 0, 1)
    assert [(s.added_files, s.removed_files) for s in sc.iter_snapshots("lake", "events")][-2:] == [(1, 2), (1, 1)]


def test_async_client_has_every_method_of_the_sync_one() -> None:
    public = {n for n in dir(ShredcatClient) if not n.startswith("_")} - {"close"}
    assert public - set(dir(AsyncShredcatClient)) == set()


def test_async_paging_plans_and_client_side_commits(
    app_factory, warehouse: Path, tmp_path: Path
) -> None:
    """The async iter_snapshots, plan_all and extract_and_commit answer as the sync ones do."""
    client = app_factory(roots=[str(warehouse), str(tmp_path)])
    sc = ShredcatClient(http=client, token=TOKENS["admin"])
    sc.create_namespace("lake")
    sc.create_table("lake", "events", variant_columns=["v"])
    sc.commit_paths("lake", "events", _paths(warehouse, 0, 1))
    local = str(write_variant_file(tmp_path / "local.parquet", 10, 500))
    flt = {"type": "lt", "term": {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}, "value": 150}

    async def main() -> None:
        transport = httpx.ASGITransport(app=client.app)
        async with AsyncShredcatClient("http://testserver", token=TOKENS["admin"], transport=transport) as ac:
            r = await ac.extract_and_commit("lake", "events", [local])
            assert isinstance(r, CommitResult) and r.added == (local,) and r.idempotency_key
            again = await ac.extract_and_commit("lake", "events", [local], idempotency_key=r.idempotency_key)
            assert again.replayed and again.snapshot_id == r.snapshot_id
            assert sc.file_stats("lake", "events", local)["record-count"] == 10

            snaps = [s async for s in ac.iter_snapshots("lake", "events", page_size=1)]
            assert [s.added_files for s in snaps] == [0, 2, 1]
            assert snaps == list(sc.iter_snapshots("lake", "events", page_size=1))

            every = await ac.plan_all("lake", "events", filter=flt, page_size=1, explain=True)
            assert sorted(every.paths) == _paths(warehouse, 0, 1) and every.files_considered == 3
            assert every.next_page_token is None and every.explain is not None
            assert {x.path for x in every.explain} == {*_paths(warehouse, 0, 1), local}
            assert every == sc.plan_all("lake", "events", filter=flt, page_size=1, explain=True)

    asyncio.run(main())


def test_plan_warnings_and_unknown_columns_sync_and_async(client, warehouse: Path) -> None:
    """Warnings come typed with the first page (and with plan_all's merged result); an unknown
    column is Unprocessable with type ``unknown_column``."""
    sc = ShredcatClient(http=client, token=TOKENS["admin"])
    sc.create_namespace("lake")
    sc.create_table("lake", "events", variant_columns=["v"])
    sc.commit_paths("lake", "events", _paths(warehouse, 0, 1))
    typo = "variant_get(v, '$.id.d', 'bigint') = 5"
    plan = sc.plan("lake", "events", sql=typo)
    assert [type(w) for w in plan.warnings] == [PlanWarning, PlanWarning]
    w = plan.warnings[0]
    assert (w.type, w.column, w.path, w.suggestions) == ("path_not_shredded", "v", "$.id.d", ("$.id",))
    assert "not shredded in any live file" in w.message
    assert plan.warnings[1].type == "predicate_prunes_nothing" and plan.warnings[1].path is None
    every = sc.plan_all("lake", "events", sql=typo, page_size=1)
    assert every.warnings == plan.warnings and len(every.files) == 2
    assert sc.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') = 5").warnings == ()
    with pytest.raises(Unprocessable) as ei:
        sc.plan("lake", "events", sql="variant_get(w, '$.id', 'bigint') = 5")
    assert ei.value.type == "unknown_column" and ei.value.details["columns"] == ["v"]

    async def main() -> None:
        transport = httpx.ASGITransport(app=client.app)
        async with AsyncShredcatClient("http://testserver", token=TOKENS["admin"], transport=transport) as ac:
            assert (await ac.plan_all("lake", "events", sql=typo, page_size=1)).warnings == plan.warnings
            with pytest.raises(Unprocessable) as ei:
                await ac.plan("lake", "events", sql="variant_get(w, '$.id', 'bigint') = 5")
            assert ei.value.details["column"] == "w"

    asyncio.run(main())


# --- base URL ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("base", ["localhost:8181", "127.0.0.1:8181", "ftp://host/", "http://[::1", "http://", "/v1"])
def test_a_base_url_no_request_can_go_below_is_refused_at_once(base: str) -> None:
    """Without a scheme every call was retried with backoff, then a ShredcatConnectionError
    ("UnsupportedProtocol"); an unparsable URL raised httpx's own InvalidURL."""
    for make in (ShredcatClient, AsyncShredcatClient):
        with pytest.raises(ValueError, match=f"invalid base_url {re.escape(repr(base))}"):
            make(base)


@pytest.mark.parametrize("base", ["http://testserver/shredcat", "http://testserver/shredcat/"])
def test_base_url_is_handled_alike_by_both_clients(client, base: str) -> None:
    """A base URL with a path (the app served below ``/shredcat``): requests go below it whether
    the client opens its own connection or is handed one without a base URL; handed one with a base
    URL and given none, the client uses that one."""
    from fastapi.testclient import TestClient

    prefixed = Starlette(routes=[Mount("/shredcat", app=client.app)])
    admin = TOKENS["admin"]
    tc = TestClient(prefixed)
    for sync in (
        ShredcatClient(base, token=admin, transport=tc._transport),
        ShredcatClient(base, token=admin, http=TestClient(prefixed, base_url="http://elsewhere")),
        ShredcatClient(token=admin, http=TestClient(prefixed, base_url=base)),
    ):
        assert sync.list_namespaces() == []
        with pytest.raises(NoSuchTable):
            sync.load_table("lake", "nope")

    async def main() -> None:
        transport = httpx.ASGITransport(app=prefixed)
        for ac in (
            AsyncShredcatClient(base, token=admin, transport=transport),
            AsyncShredcatClient(base, token=admin, http=httpx.AsyncClient(transport=transport)),
            AsyncShredcatClient(token=admin, http=httpx.AsyncClient(base_url=base, transport=transport)),
        ):
            assert await ac.list_namespaces() == []
            with pytest.raises(NoSuchTable):
                await ac.load_table("lake", "nope")

    asyncio.run(main())


def test_columns_and_declared_partitions_sync_and_async(sc: ShredcatClient, client, warehouse: Path) -> None:
    """create_table's partition declarations and location, Table.columns, and client-side stats
    carrying plain-column rows (``column-stats``), through both clients."""
    from service.client import TableColumn
    from service.stats.model import ColumnStats
    from service.values import ShreddedType

    sc.create_namespace("lake")
    loc = str(warehouse / "events")
    t = sc.create_table("lake", "events", variant_columns=["v"], partition_columns={"day": "date"}, location=loc)
    assert t.columns == (
        TableColumn(name="v", type="variant", kind="variant"),
        TableColumn(name="day", type="date", kind="partition", declared=True),
    )
    assert t.partition_columns == ("day",) and t.location == loc
    sc.create_table("lake", "plain", variant_columns=["v"])
    fs = extract_file(_paths(warehouse, 0)[0])
    id_stats = ColumnStats("id", ShreddedType.parse("int64"), 10, fs.record_count, 0, 1, 9, None)
    import dataclasses

    sc.commit_files("lake", "plain", [dataclasses.replace(fs, columns=(id_stats,))])
    assert [c.name for c in sc.load_table("lake", "plain").columns] == ["v", "id"]
    rows = sc.file_stats("lake", "plain", fs.path)["column-stats"]  # type: ignore[typeddict-item]
    assert [(r["column"], r["column_type"], r["min_value"], r["max_value"]) for r in rows] == [("id", "int64", "1", "9")]

    async def main() -> None:
        transport = httpx.ASGITransport(app=client.app)
        async with AsyncShredcatClient("http://testserver", token=TOKENS["admin"], transport=transport) as ac:
            got = await ac.load_table("lake", "events")
            assert got.columns == t.columns and got.location == loc

    asyncio.run(main())


def test_commit_creates_a_missing_table_sync_and_async(sc: ShredcatClient, client, warehouse: Path) -> None:
    with pytest.raises(NoSuchTable):
        sc.commit("made", "one", paths=_paths(warehouse, 0))
    with pytest.raises(TypeError, match="not a string"):
        sc.commit("made", "one", paths=_paths(warehouse, 0), create_if_missing="v")  # type: ignore[arg-type]
    # A refused commit creates nothing (here: a table whose Variant column the file lacks).
    with pytest.raises(Unprocessable):
        sc.commit("made", "one", paths=_paths(warehouse, 0), create_if_missing=["w"])
    with pytest.raises(NoSuchNamespace):
        sc.list_tables("made")
    r = sc.commit("made", "one", paths=_paths(warehouse, 0), create_if_missing=True)
    assert r.added == tuple(_paths(warehouse, 0))
    assert sc.load_table("made", "one").variant_columns == ("v",)

    async def main() -> None:
        transport = httpx.ASGITransport(app=client.app)
        async with AsyncShredcatClient("http://testserver", token=TOKENS["admin"], transport=transport) as ac:
            files = [extract_file(p) for p in _paths(warehouse, 1)]
            r = await ac.commit("made", "two", files=files, create_if_missing=["v"])
            assert r.added == tuple(_paths(warehouse, 1))

    asyncio.run(main())
    assert sc.load_table("made", "two").live_file_count == 1


# --- read your writes -----------------------------------------------------------------------------


def _sent_min_snapshots(requests: list[httpx.Request]) -> list[tuple[str, object]]:
    """(route tail, min-snapshot-id sent) of each request, in order."""
    import json

    out: list[tuple[str, object]] = []
    for r in requests:
        tail = r.url.path.rsplit("/", 1)[-1]
        if r.method == "POST" and tail == "plan":
            out.append((tail, json.loads(r.content).get("min-snapshot-id")))
        else:
            out.append((tail, r.url.params.get("min-snapshot-id")))
    return out


def test_the_clients_ask_for_the_newest_snapshot_they_wrote_or_read(client, warehouse: Path) -> None:
    """Plans, listings and loadTable carry the newest snapshot the client's own writes made or its
    reads were answered at (what a server reading from hot standbys needs); an explicit one wins."""
    sent: list[httpx.Request] = []
    hooks = {"request": [sent.append]}
    client.event_hooks = hooks
    sc = ShredcatClient(http=client, token=TOKENS["admin"], sleep=lambda s: None)
    sc.create_namespace("lake")
    assert sc.last_snapshot_id is None
    table = sc.create_table("lake", "events", variant_columns=["v"])
    assert sc.last_snapshot_id == table.current_snapshot_id
    sent.clear()
    sc.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') = 1")
    commit = sc.commit_paths("lake", "events", _paths(warehouse, 0))
    assert sc.last_snapshot_id == commit.snapshot_id > table.current_snapshot_id
    sc.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') = 1")
    sc.list_files("lake", "events")
    sc.load_table("lake", "events")
    sc.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') = 1", min_snapshot_id=1)
    c, s = str(commit.snapshot_id), commit.snapshot_id
    assert _sent_min_snapshots(sent) == [
        ("plan", table.current_snapshot_id), ("commits", None), ("plan", s), ("files", c), ("events", c), ("plan", 1)
    ]
    # Global stats, a file's stats and the snapshots too (they went back after a commit on a
    # lagging standby: a 404 for the file just registered).
    sent.clear()
    sc.table_stats("lake", "events")
    sc.file_stats("lake", "events", _paths(warehouse, 0)[0])
    sc.list_snapshots("lake", "events")
    assert _sent_min_snapshots(sent) == [("stats", c), ("stats", c), ("snapshots", c)]
    removed = sc.remove_files("lake", "events", _paths(warehouse, 0))
    assert sc.last_snapshot_id == removed.snapshot_id
    # A client that wrote nothing sends nothing until it has read something.
    reader = ShredcatClient(http=client, token=TOKENS["reader"], sleep=lambda s: None)
    sent.clear()
    first = reader.load_table("lake", "events")
    reader.plan("lake", "events", sql="variant_get(v, '$.id', 'bigint') = 1")
    assert _sent_min_snapshots(sent) == [("events", None), ("plan", first.current_snapshot_id)]

    async def main() -> None:
        transport = httpx.ASGITransport(app=client.app)
        async with AsyncShredcatClient("http://testserver", token=TOKENS["admin"], transport=transport) as ac:
            r = await ac.commit_paths("lake", "events", _paths(warehouse, 1))
            assert ac.last_snapshot_id == r.snapshot_id
            assert (await ac.load_table("lake", "events")).current_snapshot_id == r.snapshot_id

    asyncio.run(main())
