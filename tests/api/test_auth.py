"""Auth matrix: every route × (no token, wrong token, reader, writer, admin)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from service.api.auth import Authenticator, hash_token
from service.errors import UnauthorizedError
from tests.api.conftest import TOKENS, WRONG_TOKEN, auth

T = "/v1/namespaces/lake/tables/events"

# (method, route template, concrete path, json body, query params, role needed or None for public)
ROUTES: list[tuple[str, str, str, Any, dict[str, Any] | None, str | None]] = [
    ("GET", "/health", "/health", None, None, None),
    ("GET", "/health/live", "/health/live", None, None, None),
    ("GET", "/metrics", "/metrics", None, None, "reader"),
    ("GET", "/v1/namespaces", "/v1/namespaces", None, None, "reader"),
    ("POST", "/v1/namespaces", "/v1/namespaces", {"namespace": ["other"]}, None, "admin"),
    ("GET", "/v1/namespaces/{namespace}", "/v1/namespaces/lake", None, None, "reader"),
    ("DELETE", "/v1/namespaces/{namespace}", "/v1/namespaces/nope", None, None, "admin"),
    ("GET", "/v1/namespaces/{namespace}/tables", "/v1/namespaces/lake/tables", None, None, "reader"),
    (
        "POST", "/v1/namespaces/{namespace}/tables", "/v1/namespaces/lake/tables",
        {"name": "t2", "variant-columns": ["v"]}, None, "admin",
    ),
    ("GET", "/v1/namespaces/{namespace}/tables/{table}", T, None, None, "reader"),
    ("DELETE", "/v1/namespaces/{namespace}/tables/{table}", "/v1/namespaces/lake/tables/gone", None, None, "admin"),
    ("POST", "/v1/namespaces/{namespace}/tables/{table}/commits", T + "/commits", {"paths": ["@WAREHOUSE@/events/f0.parquet"]}, None, "writer"),
    ("POST", "/v1/namespaces/{namespace}/tables/{table}/files/remove", T + "/files/remove", {"paths": ["/x.parquet"], "missing-ok": True}, None, "writer"),
    ("GET", "/v1/namespaces/{namespace}/tables/{table}/files", T + "/files", None, None, "reader"),
    ("GET", "/v1/namespaces/{namespace}/tables/{table}/files/stats", T + "/files/stats", None, {"path": "/x.parquet"}, "reader"),
    ("GET", "/v1/namespaces/{namespace}/tables/{table}/stats", T + "/stats", None, None, "reader"),
    ("GET", "/v1/namespaces/{namespace}/tables/{table}/snapshots", T + "/snapshots", None, None, "reader"),
    ("POST", "/v1/namespaces/{namespace}/tables/{table}/plan", T + "/plan", {"sql": "variant_get(v, '$.id', 'bigint') = 1"}, None, "reader"),
    ("POST", "/v1/namespaces/{namespace}/tables/{table}/verify", T + "/verify", {"all": True}, None, "admin"),
]
RANK = {"reader": 0, "writer": 1, "admin": 2}


def test_matrix_covers_every_route(client) -> None:
    declared = {(m.upper(), path) for path, ops in client.app.openapi()["paths"].items() for m in ops}
    assert declared == {(m, tmpl) for m, tmpl, *_ in ROUTES}


@pytest.mark.parametrize("caller", [None, "wrong", "reader", "writer", "admin"])
def test_auth_matrix(client, table, warehouse, caller: str | None) -> None:
    for method, tmpl, path, body, params, need in ROUTES:
        if body and "paths" in body:
            body = {**body, "paths": [p.replace("@WAREHOUSE@", str(warehouse)) for p in body["paths"]]}
        r = client.request(method, path, json=body, params=params, headers=auth(caller))
        where = f"{method} {tmpl} as {caller}: {r.status_code} {r.text[:200]}"
        if need is None:
            assert r.status_code == 200, where
        elif caller in (None, "wrong"):
            assert r.status_code == 401, where
            assert r.json()["error"]["type"] == "unauthorized", where
            assert r.headers["www-authenticate"].startswith("Bearer"), where
        elif RANK[caller] < RANK[need]:
            assert r.status_code == 403, where
            assert r.json()["error"]["type"] == "forbidden", where
        else:
            assert r.status_code not in (401, 403), where


@pytest.mark.parametrize(
    "header",
    ["Basic YWRtaW46YWRtaW4=", "Bearer", "Bearer ", f"Token {TOKENS['admin']}", TOKENS["admin"], f"Bearer {TOKENS['admin']}x"],
)
def test_malformed_authorization_is_401(client, header: str) -> None:
    r = client.get("/v1/namespaces", headers={"Authorization": header})
    assert r.status_code == 401, r.text


def test_scheme_is_case_insensitive(client) -> None:
    assert client.get("/v1/namespaces", headers={"Authorization": f"bearer {TOKENS['reader']}"}).status_code == 200


def test_auth_off_makes_everyone_admin(app_factory, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="service.api"):
        c = app_factory(auth="off")
    assert any("SHREDCAT_AUTH=off" in rec.getMessage() for rec in caplog.records)
    assert c.post("/v1/namespaces", json={"namespace": ["x"]}).status_code == 200
    assert c.get("/v1/namespaces", headers=auth("wrong")).status_code == 200


def test_no_tokens_configured_refuses_and_warns(app_factory, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="service.api"):
        c = app_factory(tokens={})
    assert any("SHREDCAT_TOKENS" in rec.getMessage() for rec in caplog.records)
    assert c.get("/v1/namespaces", headers=auth("admin")).status_code == 401
    assert c.get("/health").status_code == 200


def test_authenticator_stores_only_hashes() -> None:
    a = Authenticator(enabled=True, tokens={hash_token("s3cret"): "writer"})
    assert "s3cret" not in repr(a.__dict__)
    assert a.authenticate("Bearer s3cret").role == "writer"
    with pytest.raises(UnauthorizedError):
        a.authenticate(f"Bearer {WRONG_TOKEN}")
    with pytest.raises(UnauthorizedError):
        a.authenticate(None)


def test_token_settings_reject_plain_tokens() -> None:
    from pydantic import ValidationError

    from service.settings import Settings

    with pytest.raises(ValidationError, match="sha256"):
        Settings(tokens={"plain-token": "admin"})
    with pytest.raises(ValidationError):
        Settings(tokens={hash_token("t"): "superuser"})
    # Upper-case digests are normalised.
    assert Settings(tokens={hash_token("t").upper(): "reader"}).tokens == {hash_token("t"): "reader"}


def test_a_request_checks_its_token_once(client, monkeypatch: pytest.MonkeyPatch) -> None:
    """The middleware checks the token before the body is read; the route's dependency takes the
    principal it found instead of hashing the token again."""
    calls: list[str | None] = []
    real = Authenticator.authenticate

    def counting(self: Authenticator, authorization: str | None) -> Any:
        calls.append(authorization)
        return real(self, authorization)

    monkeypatch.setattr(Authenticator, "authenticate", counting)
    assert client.get("/v1/namespaces", headers=auth("reader")).status_code == 200
    assert len(calls) == 1
    assert client.post("/v1/namespaces", json={"namespace": ["x"]}, headers=auth("reader")).status_code == 403
    assert len(calls) == 2
