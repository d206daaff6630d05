"""Stored statistics checked from the server (issue 14): ``POST .../verify`` (admin), the
restatement of a file re-registered by path, and idempotency keys per token."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from service.api import verify as verify_route
from service.api.auth import hash_token
from service.client import file_stats_payload
from service.stats.extract import extract_file
from tests.api.conftest import ADMIN, READER, TOKENS, WRITER, assert_error, write_variant_file

T = "/v1/namespaces/lake/tables/events"


@pytest.fixture
def lake(app_factory, tmp_path: Path) -> tuple[Any, dict[str, str]]:
    """A warehouse of its own: ``good`` registered by path; ``wrong`` by client stats whose min of
    ``"id"`` is too high (a pruning hazard); ``missing`` by client stats for a file that does not
    exist; ``link`` by client stats for a symlink inside the root that leads outside it."""
    root = tmp_path / "wh"
    outside = write_variant_file(tmp_path / "outside" / "secret.parquet", 10)
    files = {
        "good": write_variant_file(root / "good.parquet", 100),
        "wrong": write_variant_file(root / "wrong.parquet", 100, 100),
    }
    (root / "link.parquet").symlink_to(outside)
    client = app_factory(roots=[str(root)])
    assert client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = client.post(T.rsplit("/", 1)[0], json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200, r.text
    paths = {k: os.path.realpath(p) for k, p in files.items()}
    paths["missing"] = str(root / "missing.parquet")
    paths["link"] = str(root / "link.parquet")
    wrong = file_stats_payload(extract_file(paths["wrong"]))
    row = next(x for x in wrong["variant-stats"] if x["variant_path"] == '"id"')
    assert row["min_value"] == "100"
    row["min_value"] = "150"
    docs = [wrong]
    for name, source in (("missing", paths["good"]), ("link", str(outside))):
        doc = file_stats_payload(extract_file(source))
        doc["path"] = paths[name]
        docs.append(doc)
    r = client.post(T + "/commits", json={"paths": [paths["good"]], "files": docs}, headers=WRITER)
    assert r.status_code == 200, r.text
    return client, paths


def test_verify_reports_wrong_stats_and_unreadable_files(lake) -> None:
    client, paths = lake
    r = client.post(T + "/verify", json={"all": True}, headers=ADMIN)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["live-files"], body["chosen"], body["checked"], body["matching"], body["complete"]) == (
        4, 4, 4, 1, True,
    )  # fmt: skip
    problems = {p["path"]: p for p in body["problems"]}
    assert problems[paths["wrong"]] == {
        "path": paths["wrong"],
        "status": "different",
        "differences": [
            {"field": "min_value", "stored": "150", "extracted": "100", "column": "v", "variant_path": '"id"'}
        ],
        "reason": None,
    }
    assert problems[paths["missing"]]["status"] == "unverifiable"
    link = problems[paths["link"]]
    assert link["status"] == "unverifiable" and link["differences"] == []
    # Outside the roots: refused, and where the symlink leads is never named.
    assert "outside the warehouse roots" in link["reason"] and "secret" not in r.text
    # A sample.
    r = client.post(T + "/verify", json={"sample": 2, "seed": 1}, headers=ADMIN)
    assert r.status_code == 200 and r.json()["checked"] == 2


def test_verify_is_admin_only_and_validated(lake, monkeypatch: pytest.MonkeyPatch) -> None:
    client, _ = lake
    for h in (READER, WRITER):
        assert_error(client.post(T + "/verify", json={"all": True}, headers=h), 403, "forbidden")
    assert_error(client.post(T + "/verify", json={"all": True}), 401)
    for bad in ({}, {"all": False}, {"sample": 2, "all": True}, {"sample": 0}, {"sample": "2"}, {"every": True}):
        assert_error(client.post(T + "/verify", json=bad, headers=ADMIN), 422)
    assert_error(client.post("/v1/namespaces/lake/tables/nope/verify", json={"all": True}, headers=ADMIN), 404)
    monkeypatch.setattr(verify_route, "MAX_FILES", 3)
    err = assert_error(client.post(T + "/verify", json={"all": True}, headers=ADMIN), 413)
    assert "at most 3" in err["message"]
    assert client.post(T + "/verify", json={"sample": 3}, headers=ADMIN).status_code == 200


def test_re_registering_by_path_restates_wrong_stats(lake) -> None:
    client, paths = lake
    before = client.get(T, headers=READER).json()
    r = client.post(T + "/commits", json={"paths": [paths["good"], paths["wrong"]]}, headers=WRITER)
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["added"], body["unchanged"], body["restated"]) == ([], [paths["good"]], [paths["wrong"]])
    assert body["snapshot-id"] > before["current-snapshot-id"]
    after = client.get(T, headers=READER).json()
    assert after["live-file-count"] == before["live-file-count"]
    assert after["live-record-count"] == before["live-record-count"]
    stats = client.get(T + "/files/stats", params={"path": paths["wrong"]}, headers=READER).json()
    row = next(x for x in stats["variant-stats"] if x["variant_path"] == '"id"')
    assert row["min_value"] == "100"
    problems = client.post(T + "/verify", json={"all": True}, headers=ADMIN).json()["problems"]
    assert paths["wrong"] not in {p["path"] for p in problems}
    # Matching now: registering it again is unchanged, with no snapshot.
    again = client.post(T + "/commits", json={"paths": [paths["wrong"]]}, headers=WRITER).json()
    assert (again["snapshot-id"], again["unchanged"], again["restated"]) == (None, [paths["wrong"]], [])


def test_idempotency_keys_are_per_token(app_factory, warehouse: Path) -> None:
    second = "writer-token-two"
    tokens = {hash_token(t): role for role, t in TOKENS.items()} | {hash_token(second): "writer"}
    client = app_factory(tokens=tokens)
    assert client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN).status_code == 200
    r = client.post(T.rsplit("/", 1)[0], json={"name": "events", "variant-columns": ["v"]}, headers=ADMIN)
    assert r.status_code == 200
    f0, f1 = (os.path.realpath(warehouse / "events" / f"f{i}.parquet") for i in (0, 1))
    one = {**WRITER, "Idempotency-Key": "k"}
    two = {"Authorization": f"Bearer {second}", "Idempotency-Key": "k"}
    first = client.post(T + "/commits", json={"paths": [f0]}, headers=one).json()
    # The other token's "k" is its own key: no replay of the first token's commit, no conflict.
    theirs = client.post(T + "/commits", json={"paths": [f1]}, headers=two).json()
    assert theirs["replayed"] is False and theirs["added"] == [f1]
    assert client.post(T + "/commits", json={"paths": [f0]}, headers=one).json() == {**first, "replayed": True}
    assert_error(client.post(T + "/commits", json={"paths": [f1]}, headers=one), 409, "conflict")
