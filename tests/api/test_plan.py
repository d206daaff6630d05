"""``POST .../plan``: parsing and limits, and execution through ``Catalog.plan``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from service import pagetoken
from service.errors import BadInputError
from service.limits import MAX_PLAN_BODY_BYTES
from tests.api.conftest import ADMIN, READER, WRITER, assert_error

T = "/v1/namespaces/lake/tables/events"
ID_EQ = "variant_get(v, '$.id', 'bigint') = {}"


def _id_filter(op: str, value: int) -> dict:
    return {"type": op, "term": {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}, "value": value}


@pytest.fixture
def loaded(client, table, warehouse: Path) -> list[str]:
    paths = [os.path.realpath(warehouse / "events" / f"f{i}.parquet") for i in range(3)]
    r = client.post(T + "/commits", json={"paths": paths}, headers=WRITER)
    assert r.status_code == 200, r.text
    return paths


# --- request checks (refused before planning) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "type_", "field"),
    [
        ({}, 422, None, "body"),
        ({"sql": ID_EQ.format(1), "filter": _id_filter("eq", 1)}, 422, None, "body"),
        ({"sql": "variant_get(v, '$.id', 'bigint') = = 1"}, 422, "invalid_predicate", "body.sql"),
        ({"sql": "variant_get(v) = 1"}, 422, "invalid_predicate", "body.sql"),
        ({"filter": {"type": "eq"}}, 422, "invalid_predicate", "body.filter"),
        ({"filter": {"type": "bogus"}}, 422, "invalid_predicate", "body.filter"),
        ({"filter": [1, 2]}, 422, "invalid_predicate", "body.filter"),
        ({"filter": "not json {"}, 422, None, "body.filter"),
        ({"sql": ID_EQ.format(1), "page-size": 0}, 422, "validation_error", "body.page-size"),
        ({"sql": ID_EQ.format(1), "page-size": 10**9}, 422, None, "body.page-size"),
        ({"sql": ID_EQ.format(1), "explain": "yes"}, 422, "validation_error", "body.explain"),
        ({"sql": ID_EQ.format(1), "snapshot-id": "1"}, 422, "validation_error", "body.snapshot-id"),
        ({"sql": ID_EQ.format(1), "unknown": 1}, 422, "validation_error", "body.unknown"),
    ],
)
def test_plan_request_errors(client, table, body, status: int, type_: str | None, field: str) -> None:
    assert_error(client.post(T + "/plan", json=body, headers=READER), status, type_, field)


def test_in_list_and_depth_limits(app_factory) -> None:
    c = app_factory(max_in_list=3, max_predicate_depth=4)
    in4 = {"type": "in", "term": _id_filter("eq", 0)["term"], "values": [1, 2, 3, 4]}
    err = assert_error(c.post(T + "/plan", json={"filter": in4}, headers=READER), 413, "limit_exceeded")
    assert err["details"]["field"] == "body.filter"
    err = assert_error(
        c.post(T + "/plan", json={"sql": "variant_get(v, '$.id', 'bigint') IN (1, 2, 3, 4)"}, headers=READER), 413
    )
    assert err["details"]["field"] == "body.sql"
    deep: dict = _id_filter("eq", 1)
    for _ in range(6):
        deep = {"type": "not", "child": {"type": "or", "left": deep, "right": _id_filter("eq", 2)}}
    assert_error(c.post(T + "/plan", json={"filter": deep}, headers=READER), 413, "limit_exceeded")
    sql = ID_EQ.format(1)
    for _ in range(8):
        sql = f"NOT ({sql} OR {ID_EQ.format(2)})"
    assert_error(c.post(T + "/plan", json={"sql": sql}, headers=READER), 413, "limit_exceeded")


def test_term_and_length_limits_come_from_settings(app_factory) -> None:
    c = app_factory(max_predicate_terms=3, max_predicate_length=200)
    three = " OR ".join(ID_EQ.format(i) for i in range(3))
    four = " OR ".join(ID_EQ.format(i) for i in range(4))
    assert c.post(T + "/plan", json={"sql": three}, headers=READER).status_code == 404  # no table: parsed
    err = assert_error(c.post(T + "/plan", json={"sql": four}, headers=READER), 413, "limit_exceeded", "body.sql")
    assert err["details"]["limit"] == 3
    long = ID_EQ.format("1" + " " * 200)
    err = assert_error(c.post(T + "/plan", json={"sql": long}, headers=READER), 413, "limit_exceeded", "body.sql")
    assert err["details"]["limit"] == 200
    f: dict = _id_filter("eq", 0)
    for i in range(1, 4):
        f = {"type": "and", "left": f, "right": _id_filter("not-eq", i)}
    err = assert_error(c.post(T + "/plan", json={"filter": f}, headers=READER), 413, "limit_exceeded", "body.filter")
    assert err["details"]["limit"] == 3


def test_path_depth_comes_from_settings(app_factory) -> None:
    c = app_factory(max_path_depth=3)
    ok = "v:a.b.c::bigint = 1"
    assert c.post(T + "/plan", json={"sql": ok}, headers=READER).status_code == 404  # no table: parsed
    err = assert_error(c.post(T + "/plan", json={"sql": "v:a.b.c.d::bigint = 1"}, headers=READER), 413, "limit_exceeded", "body.sql")
    assert err["details"]["limit"] == 3 and "a path of 4 steps; the limit is 3" in err["message"]


def _sql_or(n: int) -> str:
    return " OR ".join(ID_EQ.format(i) for i in range(n))


def _json_or(lo: int, hi: int) -> dict:
    """A balanced OR of ``$.id = i`` for i in lo..hi-1."""
    if hi - lo == 1:
        return _id_filter("eq", lo)
    mid = (lo + hi) // 2
    return {"type": "or", "left": _json_or(lo, mid), "right": _json_or(mid, hi)}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def loaded_any(request, app_factory, warehouse: Path):
    """A client on each backend with table ``lake.events`` holding f0..f2 (ids 0..299)."""
    kw = {"database_url": request.getfixturevalue("pg_url")} if request.param == "postgres" else {}
    c = app_factory(**kw)
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    paths = [os.path.realpath(warehouse / "events" / f"f{i}.parquet") for i in range(3)]
    assert c.post(T + "/commits", json={"paths": paths}, headers=WRITER).status_code == 200
    return c, paths


def test_too_many_terms_are_refused_before_parsing_and_sql(loaded_any, monkeypatch: pytest.MonkeyPatch) -> None:
    """More OR-ed comparisons than the planner can probe (on SQLite, once past 500 a compound
    SELECT the database refuses, 503): 413 from the predicate's own limit, before sqlglot parses
    the text and before the planner runs any query (only the table's columns, which the parser
    resolves names against, are read first)."""
    import sqlglot

    from service.catalog import planner

    c, paths = loaded_any

    def must_not_run(*args, **kwargs):
        raise AssertionError("ran on a predicate refused by its size")

    with monkeypatch.context() as m:
        m.setattr(sqlglot, "tokenize", must_not_run)
        m.setattr(sqlglot, "parse", must_not_run)
        m.setattr(planner, "plan_in", must_not_run)
        for n in (401, 600, 22_000):
            r = c.post(T + "/plan", json={"sql": _sql_or(n)}, headers=READER)
            assert_error(r, 413, "limit_exceeded", "body.sql")
        for n in (401, 600):
            r = c.post(T + "/plan", json={"filter": _json_or(0, n)}, headers=READER)
            assert_error(r, 413, "limit_exceeded", "body.filter")
        # Larger than a plan body may be (SHREDCAT_MAX_PLAN_BODY_BYTES): refused before it is read.
        r = c.post(T + "/plan", json={"filter": _json_or(0, 22_000)}, headers=READER)
        assert_error(r, 413, "limit_exceeded")
        assert r.json()["error"]["details"]["limit"] == MAX_PLAN_BODY_BYTES
    # What the limits allow is still planned, on either backend.
    for body in ({"sql": _sql_or(100)}, {"filter": _json_or(0, 100)}):
        r = c.post(T + "/plan", json=body, headers=READER)
        assert r.status_code == 200, r.text
        assert [f["path"] for f in r.json()["files"]] == [paths[0]]
    ids = ", ".join(str(250 + 7 * i) for i in range(10_000))
    r = c.post(T + "/plan", json={"sql": f"variant_get(v, '$.id', 'bigint') IN ({ids})"}, headers=READER)
    assert r.status_code == 200, r.text
    assert [f["path"] for f in r.json()["files"]] == [paths[2]]


def _raw(node: dict, key: str, json_text: str) -> bytes:
    """A plan body whose filter is ``node`` with ``key`` holding ``json_text`` verbatim."""
    return json.dumps({"filter": {**node, key: "@raw@"}}).replace('"@raw@"', json_text).encode()


ID = {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}
SCORE = {"type": "variant", "column": "v", "path": "$.score", "as": "double"}


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (_raw({"type": "eq", "term": ID}, "value", "1e999"), "body.filter"),
        (_raw({"type": "lt", "term": SCORE}, "value", "-1e999"), "body.filter"),
        (_raw({"type": "in", "term": SCORE}, "values", "[1, 1e999]"), "body.filter"),
        (_raw({"type": "eq", "term": ID}, "value", "9" * 5000), "body.filter"),
        (_raw({"type": "not-in", "term": ID}, "values", "[-" + "9" * 5000 + "]"), "body.filter"),
        (json.dumps({"sql": "variant_get(v, '$.score', 'double') > 1e999"}).encode(), "body.sql"),
        (json.dumps({"sql": ID_EQ.format("9" * 5000)}).encode(), "body.sql"),
    ],
)
def test_numbers_beyond_the_double_range_are_invalid_predicates(client, table, raw: bytes, field: str) -> None:
    """Once 200 (read as infinity, or as an out-of-range integer) or 500 (Python's int-from-text
    limit): a 422 naming the field."""
    r = client.post(T + "/plan", content=raw, headers={**READER, "content-type": "application/json"})
    assert_error(r, 422, "invalid_predicate", field)


@pytest.mark.parametrize("sql", ["v = 1", "variant_get(v, '$.id', 'bigint') LIKE 3"])
def test_sql_the_pruner_cannot_use_is_unknown(client, loaded: list[str], sql: str) -> None:
    """SQL text is parsed against the table's columns: a Variant column compared as a whole, or
    an operator pruning has no rule for, is an unknown sub-expression: it never prunes and never
    fails (a literal Spark itself refuses still does: above)."""
    r = client.post(T + "/plan", json={"sql": sql}, headers=READER)
    assert r.status_code == 200, r.text
    assert r.json()["metrics"]["files-pruned"] == 0
    assert sorted(f["path"] for f in r.json()["files"]) == sorted(loaded)


def test_parsed_predicates_are_reused_only_under_the_same_limits(app_factory, client, loaded: list[str]) -> None:
    # Parsed trees are cached by (text, limits): the same text is refused by a server with a
    # smaller IN-list limit after another server accepted it, and a refusal is never remembered.
    in4 = {"sql": "variant_get(v, '$.id', 'bigint') IN (1, 2, 3, 150)"}
    for _ in range(2):
        r = client.post(T + "/plan", json=in4, headers=READER)
        assert r.status_code == 200, r.text
        assert [f["path"] for f in r.json()["files"]] == loaded[:2]
        assert_error(app_factory(max_in_list=3).post(T + "/plan", json=in4, headers=READER), 413, "limit_exceeded")
    bad = {"sql": "variant_get(v, '$.id', 'bigint') = = 1"}
    for _ in range(2):
        assert_error(client.post(T + "/plan", json=bad, headers=READER), 422, "invalid_predicate", "body.sql")


def test_very_deep_json_does_not_crash(client, table) -> None:
    raw = '{"filter": ' + '{"type": "not", "child": ' * 5000 + "true" + "}" * 5000 + "}"
    r = client.post(T + "/plan", content=raw.encode(), headers={**READER, "content-type": "application/json"})
    # A limit, as the README's table says of predicate nesting (not a JSON syntax error).
    assert_error(r, 413, "limit_exceeded")
    assert "nested too deeply" in r.json()["error"]["message"]


# --- execution --------------------------------------------------------------------------------------


def test_plan_prunes(client, loaded: list[str]) -> None:
    r = client.post(T + "/plan", json={"sql": ID_EQ.format(150)}, headers=READER)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "completed"
    assert [f["path"] for f in body["files"]] == [loaded[1]]
    assert body["files"][0]["record-count"] == 100
    assert body["files"][0]["file-size-bytes"] == os.path.getsize(loaded[1])
    m = body["metrics"]
    assert (m["files-considered"], m["files-pruned"], m["files-kept"]) == (3, 2, 1)
    assert m["rows-skipped"] == 200
    assert body["explain"] is None
    # The same predicate as filter JSON.
    r2 = client.post(T + "/plan", json={"filter": _id_filter("eq", 150)}, headers=READER).json()
    assert r2["files"] == body["files"]
    metrics = client.get("/metrics", headers=READER).text
    assert 'shredcat_prune_calls_total{outcome="ok"} 2.0' in metrics
    assert "shredcat_prune_files_pruned_total 4.0" in metrics


def test_plan_explain_and_pages(client, loaded: list[str]) -> None:
    r = client.post(T + "/plan", json={"sql": ID_EQ.format(150), "explain": True}, headers=READER).json()
    assert {x["path"]: x["kept"] for x in r["explain"]} == {loaded[0]: False, loaded[1]: True, loaded[2]: False}
    assert all(x["reason"] for x in r["explain"])
    seen, token = [], None
    while True:
        body = {"sql": "variant_get(v, '$.id', 'bigint') >= 0", "page-size": 1} | ({"page-token": token} if token else {})
        page = client.post(T + "/plan", json=body, headers=READER).json()
        assert len(page["files"]) <= 1
        seen += [f["path"] for f in page["files"]]
        token = page["next-page-token"]
        if not token:
            break
    assert sorted(seen) == loaded


@pytest.mark.parametrize("key", ["a", "s"])
def test_plan_page_tokens_beyond_bigint_are_bad_requests(client, loaded: list[str], key: str) -> None:
    """A real token with its last file id or pinned snapshot forged beyond BIGINT: 422 naming the
    token (once a driver OverflowError, 500)."""
    body = {"sql": "variant_get(v, '$.id', 'bigint') >= 0", "page-size": 1}
    token = client.post(T + "/plan", json=body, headers=READER).json()["next-page-token"]
    doc = pagetoken.decode(token, BadInputError("not a token of the API"))
    for big in (2**70, -(2**70)):
        forged = pagetoken.encode(doc | {key: big})
        r = client.post(T + "/plan", json=body | {"page-token": forged}, headers=READER)
        assert_error(r, 422, "bad_input", "body.page-token")


def test_plan_at_snapshot_and_not_found(client, loaded: list[str]) -> None:
    snap = client.get(T, headers=READER).json()["current-snapshot-id"]
    client.post(T + "/files/remove", json={"paths": [loaded[1]]}, headers=WRITER)
    now = client.post(T + "/plan", json={"sql": ID_EQ.format(150)}, headers=READER).json()
    assert now["files"] == []
    then = client.post(T + "/plan", json={"sql": ID_EQ.format(150), "snapshot-id": snap}, headers=READER).json()
    assert [f["path"] for f in then["files"]] == [loaded[1]]
    assert_error(client.post("/v1/namespaces/lake/tables/nope/plan", json={"sql": ID_EQ.format(1)}, headers=READER), 404)


# --- errors and warnings that help ----------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"sql": "variant_get(w, '$.id', 'bigint') = 1234"},
        {"filter": {"type": "eq", "term": {"type": "variant", "column": "w", "path": "$.id", "as": "bigint"}, "value": 1}},
        # Also where no leaf is left to read the column's stats.
        {"sql": "variant_get(w, '$.id', 'tinyint') < -128 OR variant_get(v, '$.id', 'bigint') = 1"},
    ],
)
def test_an_unknown_column_is_a_422_naming_it_and_the_tables_columns(loaded_any, body: dict) -> None:
    c, _ = loaded_any
    field = "body.sql" if "sql" in body else "body.filter"
    err = assert_error(c.post(T + "/plan", json=body, headers=READER), 422, "unknown_column", field)
    assert err["details"]["column"] == "w" and err["details"]["columns"] == ["v"]
    assert "'w'" in err["message"] and "its Variant columns: v" in err["message"]


def _plan(c, sql: str, **kw) -> dict:
    r = c.post(T + "/plan", json={"sql": sql, **kw}, headers=READER)
    assert r.status_code == 200, r.text
    return r.json()


def test_warnings_for_a_path_shredded_nowhere_and_a_type_not_stored(loaded_any) -> None:
    c, paths = loaded_any
    body = _plan(c, "variant_get(v, '$.id.d', 'bigint') = 1234")
    assert [f["path"] for f in body["files"]] == paths
    assert body["warnings"] == [
        {
            "type": "path_not_shredded",
            "column": "v",
            "path": "$.id.d",
            "message": "path $.id.d of column v is not shredded in any live file: no file can be pruned on it "
            "(did you mean $.id?)",
            "suggestions": ["$.id"],
        },
        {
            "type": "predicate_prunes_nothing",
            "column": None,
            "path": None,
            "message": "the predicate prunes no file by its values: every term that could prune is on a path warned about above",
            "suggestions": [],
        },
    ]
    # A string range on an int64 path (equality with '150' is equality with 150: comparable).
    body = _plan(c, "variant_get(v, '$.id', 'string') > '150'")
    assert [w["type"] for w in body["warnings"]] == ["type_not_comparable", "predicate_prunes_nothing"]
    w = body["warnings"][0]
    assert (w["column"], w["path"], w["suggestions"]) == ("v", "$.id", ["bigint"])
    assert "stored as int64, asked as string: not comparable" in w["message"]


def test_no_warning_for_a_good_predicate_and_candidates_unchanged_by_warnings(loaded_any) -> None:
    c, paths = loaded_any
    good = _plan(c, ID_EQ.format(150))
    assert good["warnings"] == [] and [f["path"] for f in good["files"]] == [paths[1]]
    # A warned conjunct beside a pruning one: the same candidates, a warning, no "prunes nothing".
    mixed = _plan(c, ID_EQ.format(150) + " AND variant_get(v, '$.id.d', 'bigint') = 1")
    assert mixed["files"] == good["files"] and mixed["metrics"] == good["metrics"]
    assert [w["type"] for w in mixed["warnings"]] == ["path_not_shredded"]
    # OR with a warned term keeps everything, as without any stats for it.
    either = _plan(c, ID_EQ.format(150) + " OR variant_get(v, '$.id.d', 'bigint') = 1")
    assert [f["path"] for f in either["files"]] == paths
    assert [w["type"] for w in either["warnings"]] == ["path_not_shredded", "predicate_prunes_nothing"]
    typo = {"type": "eq", "term": {"type": "variant", "column": "v", "path": "$.id.d", "as": "bigint"}, "value": 1}
    r = c.post(T + "/plan", json={"filter": {"type": "and", "left": _id_filter("eq", 150), "right": typo}}, headers=READER)
    assert r.json()["files"] == good["files"] and r.json()["warnings"] == mixed["warnings"]


def test_warnings_come_with_the_first_page_only(loaded_any) -> None:
    c, _ = loaded_any
    first = _plan(c, "variant_get(v, '$.id.d', 'bigint') = 1", **{"page-size": 1})
    assert first["warnings"] and first["next-page-token"]
    nxt = _plan(c, "variant_get(v, '$.id.d', 'bigint') = 1", **{"page-size": 1, "page-token": first["next-page-token"]})
    assert nxt["warnings"] == [] and nxt["metrics"]["files-considered"] is None


def test_warnings_at_a_past_snapshot(client, loaded: list[str]) -> None:
    snap = client.get(T, headers=READER).json()["current-snapshot-id"]
    client.post(T + "/files/remove", json={"paths": loaded}, headers=WRITER)
    now = _plan(client, ID_EQ.format(150))
    assert [w["type"] for w in now["warnings"]] == ["path_not_shredded"]  # no live file: nothing to prune
    then = _plan(client, ID_EQ.format(150), **{"snapshot-id": snap})
    assert then["warnings"] == [] and [f["path"] for f in then["files"]] == [loaded[1]]
    then = _plan(client, "variant_get(v, '$.id.d', 'bigint') = 1", **{"snapshot-id": snap})
    assert [w["type"] for w in then["warnings"]] == ["path_not_shredded", "predicate_prunes_nothing"]


def test_a_predicate_longer_than_any_limit_is_413_at_every_length(client) -> None:
    # The request schema has no length cap of its own: the predicate limit decides, so 300 KiB and
    # 1 MB of SQL get the same answer (1 MB was once a 422 validation_error, 300 KiB a 413); a body
    # larger than a plan body may be is refused before it is read, as a 413 too.
    for n in (300 * 1024, 1024 * 1024):
        sql = ID_EQ.format(1) + " " * n
        assert_error(client.post(T + "/plan", json={"sql": sql}, headers=READER), 413, "limit_exceeded", "body.sql")
    r = client.post(T + "/plan", json={"sql": ID_EQ.format(1) + " " * (2 * 1024 * 1024)}, headers=READER)
    assert_error(r, 413, "limit_exceeded")
    assert r.json()["error"]["details"] == {"limit": MAX_PLAN_BODY_BYTES}


def test_plans_run_at_most_plan_concurrency_at_once(app_factory, warehouse: Path) -> None:
    """Plans beyond ``plan_concurrency`` wait for a turn (more at once only contend for the GIL),
    and every one of them is answered; the cap never exceeds the database pool."""
    import threading
    import time

    assert app_factory(plan_concurrency=8, db_pool_size=3).app.state.ctx.plan_limiter.total_tokens == 3
    c = app_factory(plan_concurrency=2)
    assert c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = c.post("/v1/namespaces/lake/tables", json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    paths = [os.path.realpath(warehouse / "events" / f"f{i}.parquet") for i in range(3)]
    assert c.post(T + "/commits", json={"paths": paths}, headers=WRITER).status_code == 200
    catalog = c.app.state.ctx.catalog
    original = catalog.plan
    lock = threading.Lock()
    running, most = 0, 0

    def slow_plan(*args, **kwargs):  # type: ignore[no-untyped-def]
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        try:
            time.sleep(0.05)
            return original(*args, **kwargs)
        finally:
            with lock:
                running -= 1

    catalog.plan = slow_plan
    statuses: list[int] = []

    def one(i: int) -> None:
        r = c.post(T + "/plan", json={"sql": ID_EQ.format(i * 37)}, headers=READER)
        statuses.append(r.status_code)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [200] * 8
    assert most == 2


def test_decimal_literals_beyond_their_type_are_422_naming_them(client, table) -> None:
    """Issue 32 row 6: these were a 500 (an InvalidOperation of the rounding) on the SQL form."""
    for literal, named in (("1." + "0" * 99 + "1BD", "DECIMAL(101,100)"), ("1e400BD", "DECIMAL(401,0)")):
        sql = f"variant_get(v, '$.p', 'decimal(38,2)') = {literal}"
        err = assert_error(client.post(T + "/plan", json={"sql": sql}, headers=READER), 422, field="body.sql")
        assert named in err["message"], err
    # A CAST Spark makes NULL (or refuses, in ANSI mode): against a table the term is one that
    # never prunes, and the plan is answered.
    sql = "variant_get(v, '$.p', 'decimal(38,2)') = CAST('1e400' AS DECIMAL(38,2))"
    r = client.post(T + "/plan", json={"sql": sql}, headers=READER)
    assert r.status_code == 200, r.text


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("length(variant_get(v, '$.name', 'string')) > 3", "function LENGTH() is not supported"),
        ("variant_get(v, '$.name', 'string') LIKE '%n'", "LIKE is not supported"),
        (ID_EQ.format("'abc'"), "string 'abc' is not a valid bigint"),
        ("variant_get(v, '$.day', 'date') = '2024-13-45'", "invalid date '2024-13-45'"),
    ],
)
def test_warnings_for_terms_pruning_cannot_use(loaded_any, sql: str, why: str) -> None:
    """Such a term keeps every file, soundly, and says so (issue 36: a silent keep-all)."""
    c, paths = loaded_any
    body = _plan(c, sql)
    assert [f["path"] for f in body["files"]] == paths
    assert [w["type"] for w in body["warnings"]] == ["term_not_used", "predicate_prunes_nothing"]
    assert f"is not used for pruning ({why})" in body["warnings"][0]["message"]
    # Beside a conjunct that prunes: the same candidates as without it, the term still warned about.
    both = _plan(c, ID_EQ.format(150) + " AND " + sql)
    assert both["files"] == _plan(c, ID_EQ.format(150))["files"]
    assert [w["type"] for w in both["warnings"]] == ["term_not_used"]
