"""Commits by path and with client-side statistics: validation of every row, idempotency keys,
nothing partial on any error, and the request limits."""

from __future__ import annotations

import copy
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI

from service.api.schemas import CommitRequest
from service.client import file_stats_payload
from service.stats.extract import extract_file
from tests.api.conftest import ADMIN, READER, WRITER, assert_error, write_variant_file

T = "/v1/namespaces/lake/tables/events"


def _p(warehouse: Path, i: int) -> str:
    return os.path.realpath(warehouse / "events" / f"f{i}.parquet")


@pytest.fixture(scope="module")
def stats_doc(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Client-side statistics of a real file (extracted here, as a Spark executor would)."""
    p = write_variant_file(tmp_path_factory.mktemp("client") / "c.parquet", 50, extra=", 'tags': ['a', 'b']")
    return file_stats_payload(extract_file(str(p)))


def _doc(stats_doc: dict[str, Any], warehouse: Path, name: str = "remote.parquet") -> dict[str, Any]:
    d = copy.deepcopy(stats_doc)
    d["path"] = str(warehouse / "events" / name)  # the service never opens it
    return d


def _live(client) -> int:
    return client.get(T, headers=READER).json()["live-file-count"]


def test_commit_by_path(client, table, warehouse: Path) -> None:
    r = client.post(T + "/commits", json={"paths": [_p(warehouse, 0), _p(warehouse, 1)]}, headers=WRITER)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["added"] == [_p(warehouse, 0), _p(warehouse, 1)] and body["unchanged"] == []
    assert body["replayed"] is False and isinstance(body["snapshot-id"], int)
    # Registering the same files again changes nothing (no new snapshot).
    r = client.post(T + "/commits", json={"paths": [_p(warehouse, 1)]}, headers=WRITER)
    assert r.json() == {
        "snapshot-id": None, "added": [], "unchanged": [_p(warehouse, 1)], "restated": [], "replayed": False,
        "removed": [], "missing": [],
    }


def test_commit_with_client_stats(client, table, warehouse: Path, stats_doc) -> None:
    doc = _doc(stats_doc, warehouse)
    assert any(r["variant_path"] == '"tags".element' for r in doc["variant-stats"])
    r = client.post(T + "/commits", json={"files": [doc]}, headers=WRITER)
    assert r.status_code == 200, r.text
    assert r.json()["added"] == [doc["path"]]
    # What comes back is what was sent (the stats GET is the commit shape).
    got = client.get(T + "/files/stats", params={"path": doc["path"]}, headers=READER).json()
    key = lambda rows: sorted(rows, key=lambda x: x["variant_path"])  # noqa: E731
    assert key(got.pop("variant-stats")) == key(doc.pop("variant-stats"))
    # No plain column and no partition directory in this body: both lists come back empty.
    assert got.pop("column-stats") == doc.pop("column-stats", []) == []
    assert got.pop("partition-values") == []
    assert got == doc
    # snake_case keys are accepted too, and rows printed by `shredcat stats` (with "file").
    snake = {k.replace("-", "_"): v for k, v in _doc(stats_doc, warehouse, "snake.parquet").items()}
    snake["variant_stats"] = [{**row, "file": snake["path"]} for row in snake["variant_stats"]]
    r = client.post(T + "/commits", json={"files": [snake]}, headers=WRITER)
    assert r.status_code == 200, r.text


def test_mixed_commit_is_one_snapshot(client, table, warehouse: Path, stats_doc) -> None:
    r = client.post(
        T + "/commits", json={"paths": [_p(warehouse, 0)], "files": [_doc(stats_doc, warehouse)]}, headers=WRITER
    )
    assert r.status_code == 200, r.text
    assert len(r.json()["added"]) == 2
    snaps = client.get(T + "/snapshots", headers=READER).json()["snapshots"]
    assert [s["added-files"] for s in snaps] == [0, 2]


def _set(doc: dict[str, Any], dotted: str, value: Any) -> None:
    cur: Any = doc
    parts = dotted.split(".")
    for p in parts[:-1]:
        cur = cur[int(p)] if p.isdigit() else cur[p]
    last = parts[-1]
    if value is _DELETE:
        del cur[last]
    elif last.isdigit():
        cur[int(last)] = value
    else:
        cur[last] = value


_DELETE = object()


def _row(doc: dict[str, Any], path: str) -> int:
    return next(i for i, r in enumerate(doc["variant-stats"]) if r["variant_path"] == path)


@pytest.mark.parametrize(
    ("where", "value", "field_suffix", "type_"),
    [
        # File level.
        ("record-count", -1, "record-count", "validation_error"),
        ("record-count", "50", "record-count", "validation_error"),  # strict types
        ("record-count", 49, "value_count", "invalid_stats"),  # counts no longer add up
        ("file-size-bytes", 10, "file-size-bytes", "invalid_stats"),  # smaller than its footer
        ("footer-size", 1.5, "footer-size", "validation_error"),
        ("variant-columns", ["v", "v"], "variant-columns", "invalid_stats"),
        ("variant-columns", [], "column", "invalid_stats"),  # rows of an undeclared column
        ("path", "relative.parquet", "path", "invalid_file_path"),
        ("unknown", 1, "unknown", "validation_error"),
        # Row level.
        ("@id.shredded_type", "int128", "shredded_type", "invalid_stats"),
        ("@id.shredded_type", "decimal(50,2)", "shredded_type", "invalid_stats"),
        ("@id.shredded_type", "boolean", "max_value", "invalid_stats"),  # "49" is no boolean bound
        ("@id.variant_path", "id", "variant_path", "invalid_stats"),  # unquoted key
        ("@id.variant_path", '"id', "variant_path", "invalid_stats"),
        ("@id.variant_path", '"name"', "variant_path", "invalid_stats"),  # reported twice
        ("@id.min_value", "abc", "min_value", "invalid_stats"),
        ("@id.min_value", 3, "min_value", "validation_error"),  # bounds are DuckLake strings
        ("@id.min_value", "1000", "max_value", "invalid_stats"),  # min > max
        ("@id.value_count", 49, "value_count", "invalid_stats"),
        ("@id.null_count", -1, "null_count", "validation_error"),
        ("@id.column_size_bytes", 10**12, "column_size_bytes", "invalid_stats"),
        ("@id.contains_nan", True, "contains_nan", "invalid_stats"),  # not a float
        ("@score.contains_nan", "no", "contains_nan", "validation_error"),
        ("@score.min_value", "NaN", "min_value", "invalid_stats"),
        ("@id.column", "w", "column", "invalid_stats"),
        ("@id.file", "/other.parquet", "file", "invalid_stats"),
        ("@id.shredded_type", _DELETE, "shredded_type", "validation_error"),
    ],
)
def test_malformed_stats_are_refused(
    client, table, warehouse: Path, stats_doc, where: str, value: Any, field_suffix: str, type_: str
) -> None:
    good = _doc(stats_doc, warehouse, "good.parquet")
    bad = _doc(stats_doc, warehouse, "bad.parquet")
    if where.startswith("@"):
        name, key = where[1:].split(".")
        where = f"variant-stats.{_row(bad, chr(34) + name + chr(34))}.{key}"
    _set(bad, where, value)
    r = client.post(T + "/commits", json={"files": [good, bad]}, headers=WRITER)
    err = assert_error(r, 422, type_)
    field = err["details"]["field"]
    assert field.startswith("body.files[1]") and field.endswith(field_suffix), err
    if type_ != "validation_error":
        assert bad["path"] in err["message"]
    assert _live(client) == 0  # the good file was not committed either


def test_element_paths_may_have_more_entries_than_records(client, table, warehouse: Path, stats_doc) -> None:
    doc = _doc(stats_doc, warehouse)
    i = _row(doc, '"tags".element')
    assert doc["variant-stats"][i]["value_count"] == 100 and doc["record-count"] == 50
    r = client.post(T + "/commits", json={"files": [doc]}, headers=WRITER)
    assert r.status_code == 200, r.text


def test_all_null_path_with_bounds_is_refused(client, table, warehouse: Path, stats_doc) -> None:
    doc = _doc(stats_doc, warehouse)
    row = doc["variant-stats"][_row(doc, '"id"')]
    row["null_count"], row["value_count"] = row["null_count"] + row["value_count"], 0
    err = assert_error(client.post(T + "/commits", json={"files": [doc]}, headers=WRITER), 422, "invalid_stats")
    assert err["details"]["field"].endswith("min_value")


def _no_values(row: dict[str, Any]) -> None:
    row["null_count"], row["value_count"] = row["null_count"] + row["value_count"], 0
    row["min_value"] = row["max_value"] = None


def _rule_cases() -> list[Any]:
    """Rules the REST path and the library path (tests/catalog/test_validate.py) share: one
    validator. (mutation of the bad file, field suffix, status, error type)."""

    def at(name: str, fn: Any) -> Any:
        return lambda d: fn(d["variant-stats"][_row(d, f'"{name}"')])

    return [
        pytest.param(
            at("score", lambda r: (_no_values(r), r.update(contains_nan=True))),
            "variant-stats[{score}].contains_nan", 422, "invalid_stats", id="nan-with-no-values",
        ),
        pytest.param(
            at("id", lambda r: (_no_values(r), r.update(max_value="3"))),
            "variant-stats[{id}].max_value", 422, "invalid_stats", id="max-with-no-values",
        ),
        pytest.param(
            at("id", lambda r: r.update(variant_path='"' + "\U0001f600" * 600 + '"')),
            "variant-stats[{id}].variant_path", 413, "limit_exceeded", id="variant-path-bytes",
        ),
        pytest.param(
            at("id", lambda r: r.update(variant_path='"id".element.')),
            "variant-stats[{id}].variant_path", 422, "invalid_stats", id="variant-path-syntax",
        ),
        pytest.param(
            lambda d: d.update({"footer-size": d["file-size-bytes"] - 11}),
            "file-size-bytes", 422, "invalid_stats", id="footer-plus-12",
        ),
        pytest.param(
            lambda d: d.update({"path": d["path"].rsplit("/", 1)[0] + "/" + "\u00e9" * 1100 + ".parquet"}),
            "path", 413, "limit_exceeded", id="path-bytes",
        ),
    ]


@pytest.mark.parametrize(("mutate", "field", "status", "type_"), _rule_cases())
def test_the_catalog_validator_checks_client_stats(
    client, table, warehouse: Path, stats_doc, mutate: Any, field: str, status: int, type_: str
) -> None:
    good = _doc(stats_doc, warehouse, "good.parquet")
    bad = _doc(stats_doc, warehouse, "bad.parquet")
    mutate(bad)
    r = client.post(T + "/commits", json={"files": [good, bad]}, headers=WRITER)
    err = assert_error(r, status, type_)
    rows = {k: _row(good, f'"{k}"') for k in ("id", "score")}
    assert err["details"] == {"field": "body.files[1]." + field.format(**rows), "path": bad["path"]}
    assert bad["path"] in err["message"]
    assert _live(client) == 0


def test_same_path_different_content_conflicts(client, table, warehouse: Path, stats_doc) -> None:
    doc = _doc(stats_doc, warehouse)
    assert client.post(T + "/commits", json={"files": [doc]}, headers=WRITER).status_code == 200
    doc["content-id"] = "changed"
    assert_error(client.post(T + "/commits", json={"files": [doc]}, headers=WRITER), 409, "conflict")


def test_unreadable_file_fails_the_whole_commit(client, table, warehouse: Path, tmp_path: Path) -> None:
    broken = warehouse / "broken" / f"{tmp_path.name}.parquet"
    broken.parent.mkdir(exist_ok=True)
    broken.write_bytes(b"PAR1 not really parquet")
    for bad, type_ in [(str(broken), "invalid_parquet"), (str(warehouse / "events" / "missing.parquet"), "file_access")]:
        r = client.post(T + "/commits", json={"paths": [_p(warehouse, 0), bad, _p(warehouse, 1)]}, headers=WRITER)
        err = assert_error(r, 422, type_)
        assert os.path.basename(bad) in err["message"]
    assert _live(client) == 0


def test_idempotency_key(client, table, warehouse: Path) -> None:
    body = {"paths": [_p(warehouse, 0)]}
    h = {**WRITER, "Idempotency-Key": "commit-1"}
    first = client.post(T + "/commits", json=body, headers=h).json()
    assert first["replayed"] is False
    again = client.post(T + "/commits", json=body, headers=h).json()
    assert again == {**first, "replayed": True}
    assert len(client.get(T + "/snapshots", headers=READER).json()["snapshots"]) == 2
    # The same key with another request is a conflict.
    r = client.post(T + "/commits", json={"paths": [_p(warehouse, 1)]}, headers=h)
    assert_error(r, 409, "conflict")
    # Malformed keys.
    for key in ["", "x" * 256, "has space"]:
        r = client.post(T + "/commits", json=body, headers={**WRITER, "Idempotency-Key": key})
        assert_error(r, 422, field="header.Idempotency-Key")


def test_empty_commit(client, table) -> None:
    for body in [{}, {"paths": []}, {"paths": [], "files": []}, {"remove": []}]:
        assert_error(client.post(T + "/commits", json=body, headers=WRITER), 422, field="body")


def test_a_commit_replaces_files_in_one_snapshot(client, table, warehouse: Path, stats_doc) -> None:
    old = [_p(warehouse, 0), _p(warehouse, 1)]
    first = client.post(T + "/commits", json={"paths": old}, headers=WRITER).json()["snapshot-id"]
    doc = _doc(stats_doc, warehouse, "compacted.parquet")
    body = {"files": [doc], "remove": old}
    r = client.post(T + "/commits", json=body, headers={**WRITER, "Idempotency-Key": "compact-1"})
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["added"], got["removed"], got["missing"]) == ([doc["path"]], old, [])
    snaps = client.get(T + "/snapshots", headers=READER).json()["snapshots"]
    assert [s["snapshot-id"] for s in snaps][-2:] == [first, got["snapshot-id"]]
    assert (snaps[-1]["added-files"], snaps[-1]["removed-files"]) == (1, 2)
    assert _live(client) == 1
    # A retry is the same commit; the same key with other removals is another request.
    again = client.post(T + "/commits", json=body, headers={**WRITER, "Idempotency-Key": "compact-1"}).json()
    assert again["replayed"] is True and again["removed"] == old
    assert_error(
        client.post(T + "/commits", json={"files": [doc], "remove": old[:1]}, headers={**WRITER, "Idempotency-Key": "compact-1"}),
        409,
    )
    # A path to remove that is not live: 404 naming it, nothing changed; or reported with the flag.
    err = assert_error(
        client.post(T + "/commits", json={"paths": [_p(warehouse, 2)], "remove": old}, headers=WRITER), 404
    )
    assert err["details"]["paths"] == old and _live(client) == 1
    r = client.post(
        T + "/commits", json={"paths": [_p(warehouse, 2)], "remove": old, "remove-missing-ok": True}, headers=WRITER
    ).json()
    assert (r["added"], r["removed"], r["missing"]) == ([_p(warehouse, 2)], [], old)
    # Only removing is a commit too.
    r = client.post(T + "/commits", json={"remove": [doc["path"]]}, headers=WRITER).json()
    assert (r["added"], r["removed"]) == ([], [doc["path"]]) and _live(client) == 1


def test_a_commit_body_is_parsed_off_the_event_loop(client, table, warehouse: Path, stats_doc, monkeypatch) -> None:
    """A 10,000-file body takes about a second to parse and validate: on the event loop, the worker
    would answer nothing else meanwhile. Here the parse is held until another request was answered."""
    from service.api import commits

    entered, release = threading.Event(), threading.Event()
    parse = commits.parse_json_body

    def held(*args: Any, **kw: Any) -> Any:
        entered.set()
        assert release.wait(30), "the commit body was parsed on the event loop: no other request was answered"
        return parse(*args, **kw)

    monkeypatch.setattr(commits, "parse_json_body", held)
    doc = _doc(stats_doc, warehouse)
    result: list[Any] = []
    writer = threading.Thread(target=lambda: result.append(client.post(T + "/commits", json={"files": [doc]}, headers=WRITER)))
    writer.start()
    try:
        assert entered.wait(30), "the route did not parse its body with parse_json_body"
        assert client.get(T, headers=READER).status_code == 200  # answered while the commit's body is parsed
    finally:
        release.set()
        writer.join(30)
    assert result[0].status_code == 200, result[0].text
    assert result[0].json()["added"] == [doc["path"]]


def test_commit_body_errors_are_fastapis(client, table) -> None:
    """Parsed by the route, the body fails as FastAPI's own parsing would."""
    cases = [
        (b"", "body", "missing"),
        (b"{not json", "body[1]", "json_invalid"),
        (b"\xff\xfe{", None, "json_invalid"),
        (b'{"paths": [1]}', "body.paths[0]", "string_type"),
        (b'{"paths": ["/a"], "surprise": 1}', "body.surprise", "extra_forbidden"),
    ]
    for raw, field, type_ in cases:
        headers = {**WRITER, "content-type": "application/json"}
        err = assert_error(client.post(T + "/commits", content=raw, headers=headers), 422, "validation_error")
        assert err["details"]["errors"][0]["type"] == type_, err
        if field is not None:
            assert err["details"]["field"] == field, err


def test_the_commit_body_schema_is_the_one_fastapi_would_generate(client) -> None:
    declared = FastAPI()

    @declared.post("/c")
    def c(body: CommitRequest) -> None: ...

    want = declared.openapi()
    got = client.app.openapi()
    assert got["paths"][T.replace("lake", "{namespace}").replace("events", "{table}") + "/commits"]["post"]["requestBody"] == want["paths"]["/c"]["post"]["requestBody"]
    for name, schema in want["components"]["schemas"].items():
        if name not in ("HTTPValidationError", "ValidationError"):
            assert got["components"]["schemas"][name] == schema, name


@pytest.mark.parametrize(
    "body",
    [
        {"paths": ["/x.parquet"], "remove": "not-a-list"},
        {"paths": ["/x.parquet"], "remove": [""]},
        {"paths": ["/x.parquet"], "remove": [1]},
        {"paths": ["/x.parquet"], "remove": ["/a"], "remove-missing-ok": "yes"},
    ],
)
def test_malformed_removals_are_422(client, table, body: dict[str, Any]) -> None:
    assert_error(client.post(T + "/commits", json=body, headers=WRITER), 422)


def test_files_per_commit_limit(app_factory, warehouse: Path) -> None:
    c = app_factory(max_files_per_commit=2)
    c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers={"Authorization": "Bearer admin-token-3"})
    c.post(
        "/v1/namespaces/lake/tables",
        json={"name": "events", "variant-columns": ["v"]},
        headers={"Authorization": "Bearer admin-token-3"},
    )
    err = assert_error(
        c.post(T + "/commits", json={"paths": [_p(warehouse, i) for i in range(3)]}, headers=WRITER),
        413,
        "limit_exceeded",
    )
    assert err["details"]["limit"] == 2
    assert_error(c.post(T + "/files/remove", json={"paths": ["/a", "/b", "/c"]}, headers=WRITER), 413)
    err = assert_error(
        c.post(T + "/commits", json={"paths": [_p(warehouse, 0)], "remove": ["/a", "/b", "/c"]}, headers=WRITER),
        413,
        "limit_exceeded",
    )
    assert "3 paths to remove" in err["message"]
    assert c.post(T + "/commits", json={"paths": [_p(warehouse, 0), _p(warehouse, 1)]}, headers=WRITER).status_code == 200


def test_body_size_limit(app_factory) -> None:
    c = app_factory(max_body_bytes=1000)
    big = {"paths": ["/x/" + "a" * 2000 + ".parquet"]}
    err = assert_error(c.post(T + "/commits", json=big, headers=WRITER), 413, "limit_exceeded")
    assert err["details"]["limit"] == 1000

    def chunks():
        yield b'{"paths": ["'
        yield b"a" * 2000
        yield b'"]}'

    r = c.post(T + "/commits", content=chunks(), headers={**WRITER, "content-type": "application/json"})
    assert_error(r, 413, "limit_exceeded")
    # A small chunked body goes through to the route.
    r = c.post("/v1/namespaces", content=iter([b'{"namespace"', b': ["x"]}']), headers={"Authorization": "Bearer admin-token-3", "content-type": "application/json"})
    assert r.status_code == 200, r.text


def test_many_files_extracted_in_parallel(client, table, tmp_path: Path, warehouse: Path) -> None:
    d = warehouse / "many" / tmp_path.name
    paths = [os.path.realpath(write_variant_file(d / f"m{i:02d}.parquet", 20, i * 20)) for i in range(12)]
    r = client.post(T + "/commits", json={"paths": paths}, headers=WRITER)
    assert r.status_code == 200, r.text
    assert sorted(r.json()["added"]) == paths
    g = client.get(T + "/stats", headers=READER).json()
    ids = next(o for o in g["columns"]["v"] if o["field_name"] == '"id"')
    assert (ids["min"], ids["max"], ids["num_values"]) == ("0", "239", 240)


def _limited_app(app_factory, **limits: int):  # type: ignore[no-untyped-def]
    c = app_factory(**limits)
    c.post("/v1/namespaces", json={"namespace": ["lake"]}, headers={"Authorization": "Bearer admin-token-3"})
    c.post(
        "/v1/namespaces/lake/tables",
        json={"name": "events", "variant-columns": ["v"]},
        headers={"Authorization": "Bearer admin-token-3"},
    )
    return c


def test_stats_rows_per_file_limit(app_factory, warehouse: Path, stats_doc) -> None:
    n = len(stats_doc["variant-stats"])
    c = _limited_app(app_factory, max_stats_rows_per_file=n - 1)
    good, bad = _doc(stats_doc, warehouse, "good.parquet"), _doc(stats_doc, warehouse, "bad.parquet")
    bad["variant-stats"][0]["shredded_type"] = "not a type"  # the count is checked before any row
    err = assert_error(c.post(T + "/commits", json={"files": [bad]}, headers=WRITER), 413, "limit_exceeded")
    assert err["details"] == {"field": "body.files[0].variant-stats", "path": bad["path"], "limit": n - 1, "count": n}
    assert "SHREDCAT_MAX_STATS_ROWS_PER_FILE" in err["message"] and bad["path"] in err["message"]
    good["variant-stats"].pop()
    assert c.post(T + "/commits", json={"files": [good]}, headers=WRITER).status_code == 200


@pytest.mark.parametrize(
    ("where", "value", "field_suffix"),
    [
        ("@name.max_value", "n" + "z" * 40, "max_value"),
        ("@name.min_value", "n" * 41, "min_value"),
        ("@id.extra_stats", "{" + " " * 99 + "}", "extra_stats"),
    ],
)
def test_string_length_limits(app_factory, warehouse: Path, stats_doc, where: str, value: str, field_suffix: str) -> None:
    c = _limited_app(app_factory, max_bound_chars=40, max_extra_stats_chars=100)
    bad = _doc(stats_doc, warehouse, "bad.parquet")
    name, key = where[1:].split(".")
    _set(bad, f"variant-stats.{_row(bad, chr(34) + name + chr(34))}.{key}", value)
    err = assert_error(c.post(T + "/commits", json={"files": [bad]}, headers=WRITER), 413, "limit_exceeded")
    assert err["details"]["field"].startswith("body.files[0].variant-stats[") and err["details"]["field"].endswith(field_suffix)
    assert "SHREDCAT_MAX_" in err["message"] and bad["path"] in err["message"]
    assert _live(c) == 0
    _set(bad, f"variant-stats.{_row(bad, chr(34) + name + chr(34))}.{key}", value[:-1])  # at the limit: accepted
    if key == "min_value":
        _set(bad, f"variant-stats.{_row(bad, chr(34) + name + chr(34))}.max_value", "z")
    assert c.post(T + "/commits", json={"files": [bad]}, headers=WRITER).status_code == 200


def test_counts_beyond_bigint_are_refused(client, table, warehouse: Path, stats_doc) -> None:
    big = 2**63 - 1

    def empty(name: str) -> dict[str, Any]:
        d = _doc(stats_doc, warehouse, name)
        d["record-count"], d["variant-stats"] = big, []
        return d

    # One count beyond BIGINT: refused by the schema.
    too_big = empty("too-big.parquet")
    too_big["record-count"] = big + 1
    assert_error(client.post(T + "/commits", json={"files": [too_big]}, headers=WRITER), 422, field="body.files[0].record-count")
    # Two files whose record counts sum beyond it: refused in one commit and across two, exact sums.
    two = [empty("a.parquet"), empty("b.parquet")]
    err = assert_error(client.post(T + "/commits", json={"files": two}, headers=WRITER), 422, "invalid_stats")
    assert str(2 * big) in err["message"]
    assert _live(client) == 0
    assert client.post(T + "/commits", json={"files": two[:1]}, headers=WRITER).status_code == 200
    assert_error(client.post(T + "/commits", json={"files": two[1:]}, headers=WRITER), 422, "invalid_stats")
    got = client.get(T, headers=READER).json()
    assert (got["live-file-count"], got["live-record-count"]) == (1, big)


def test_a_commit_may_create_its_table_and_a_refused_one_leaves_nothing(
    client, warehouse: Path, stats_doc, tmp_path: Path
) -> None:
    new = "/v1/namespaces/fresh/tables/made"
    # Without the option a missing table is 404, before any file is read.
    assert_error(client.post(new + "/commits", json={"paths": [_p(warehouse, 0)]}, headers=WRITER), 404)
    # A refused commit (an unreadable file; a client body with bad stats) creates nothing, not
    # even the namespace.
    broken = warehouse / "broken" / f"{tmp_path.name}.parquet"
    broken.parent.mkdir(exist_ok=True)
    broken.write_bytes(b"PAR1 not really parquet")
    bad_doc = _doc(stats_doc, warehouse)
    bad_doc["record-count"] = -1
    for body, status in [
        ({"paths": [_p(warehouse, 0), str(broken)], "create-if-missing": {}}, 422),
        ({"files": [bad_doc], "create-if-missing": {"variant-columns": ["v"]}}, 422),
        ({"paths": [_p(warehouse, 0)], "create-if-missing": {"variant-columns": ["v", "v"]}}, 422),
        ({"paths": [_p(warehouse, 0)], "create-if-missing": {"variant-columns": ["w"]}}, 422),
        ({"paths": [_p(warehouse, 0)], "create-if-missing": {"variant": ["v"]}}, 422),
        ({"paths": [_p(warehouse, 0)], "create-if-missing": True}, 422),
    ]:
        assert_error(client.post(new + "/commits", json=body, headers=ADMIN), status)
        assert client.get("/v1/namespaces/fresh", headers=READER).status_code == 404, body
    for bad_name in ["..", "a%2Fb"]:
        r = client.post(f"/v1/namespaces/fresh/tables/{bad_name}/commits", json={"paths": [_p(warehouse, 0)], "create-if-missing": {}}, headers=ADMIN)
        assert 400 <= r.status_code < 500, r.text
        assert client.get("/v1/namespaces/fresh", headers=READER).status_code == 404

    # Creating a table is the admin's (as POST .../tables is): a writer's commit is 403, and a
    # commit that only removes creates nothing (404).
    body = {"paths": [_p(warehouse, 0)], "create-if-missing": {}}
    assert_error(client.post(new + "/commits", json=body, headers=WRITER), 403)
    remove_only = {"remove": [_p(warehouse, 0)], "remove-missing-ok": True, "create-if-missing": {}}
    assert_error(client.post(new + "/commits", json=remove_only, headers=ADMIN), 404)
    assert client.get("/v1/namespaces/fresh", headers=READER).status_code == 404
    # Created with the files' Variant columns (the default) in the commit's snapshot...
    r = client.post(new + "/commits", json=body, headers=ADMIN)
    assert r.status_code == 200, r.text
    assert r.json()["added"] == [_p(warehouse, 0)]
    got = client.get(new, headers=READER).json()
    assert got["variant-columns"] == ["v"] and got["live-file-count"] == 1
    # ...and an existing table is used as it is (the option's columns are not compared), also by
    # a writer.
    r = client.post(
        new + "/commits",
        json={"files": [_doc(stats_doc, warehouse)], "create-if-missing": {"variant-columns": ["v", "other"]}},
        headers=WRITER,
    )
    assert r.status_code == 200, r.text
    assert client.get(new, headers=READER).json()["variant-columns"] == ["v"]
    assert client.get(new, headers=READER).json()["live-file-count"] == 2


def test_removals_and_lookups_name_a_file_as_its_commit_did(client, table, warehouse: Path, stats_doc) -> None:
    """A path is compared in the catalog's one form whichever way it is written (a file: URI,
    repeated or '.' segments): a compaction that names its old files so must replace them, not
    keep them beside the new one (readers would see every row twice)."""
    old = [_p(warehouse, 0), _p(warehouse, 1)]
    assert client.post(T + "/commits", json={"paths": [f"file://{old[0]}", old[1].replace("/events/", "//events/./")]}, headers=WRITER).json()["added"] == old
    written = {"as URI": f"file://{old[0]}", "with // and /./": old[1].replace("/events/", "//events/./")}
    r = client.get(T + "/files/stats", params={"path": written["as URI"]}, headers=READER)
    assert r.status_code == 200 and r.json()["path"] == old[0], r.text
    new = _doc(stats_doc, warehouse, "compacted.parquet")
    r = client.post(T + "/commits", json={"files": [new], "remove": list(written.values())}, headers=WRITER)
    assert r.status_code == 200, r.text
    assert (r.json()["removed"], r.json()["missing"]) == (old, [])
    assert [f["path"] for f in client.get(T + "/files", headers=READER).json()["files"]] == [new["path"]]
    r = client.post(T + "/files/remove", json={"paths": [new["path"].replace("/events/", "/./events/")]}, headers=WRITER)
    assert r.status_code == 200 and r.json()["removed"] == [new["path"]], r.text
    assert _live(client) == 0
