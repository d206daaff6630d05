"""The one decision per route made before a body byte is read (service/api/policy.py): role, body
bytes, body time, relative trailing-slash redirects. Pure: the app is built, never started."""

from __future__ import annotations

from typing import Any

import pytest

from service.api import create_app
from service.api.policy import BODY_KINDS, SMALL_BODY_BYTES, SMALL_BODY_SECONDS, Bounds, RoutePolicy
from service.limits import MAX_PLAN_BODY_BYTES
from service.settings import Settings
from tests.api.conftest import ADMIN, READER, TOKENS, make_settings

TABLE = "/v1/namespaces/lake/tables/events"


@pytest.fixture(scope="module")
def built() -> tuple[Any, RoutePolicy, Settings]:
    settings = make_settings("sqlite://", [], session_secrets=["x" * 40], body_timeout_seconds=30.0)
    app = create_app(settings)
    (policy,) = [m.kwargs["policy"] for m in app.user_middleware if "policy" in m.kwargs]
    return app, policy, settings


def _scope(method: str, path: str, query: bytes = b"") -> dict[str, Any]:
    return {"type": "http", "method": method, "path": path, "root_path": "", "query_string": query, "headers": []}


def _decide(policy: RoutePolicy, method: str, path: str, headers: dict[str, str] | None = None) -> Bounds:
    return policy.decide(_scope(method, path), {k.lower(): v for k, v in (headers or {}).items()})


def test_every_declared_body_kind_names_a_route_of_the_app(built: tuple[Any, RoutePolicy, Settings]) -> None:
    _, policy, _ = built
    for (method, template) in BODY_KINDS:
        path = template.replace("{namespace}", "lake").replace("{table}", "events")
        b = _decide(policy, method, path, ADMIN)
        assert b.redirect is None and b.body_bytes > 0, (method, template, b)


def test_each_route_gets_its_own_limit(built: tuple[Any, RoutePolicy, Settings]) -> None:
    from service.dashboard.web import FORM_MAX_BYTES, form_limit_for

    _, policy, s = built
    assert _decide(policy, "POST", TABLE + "/commits") == Bounds("writer", s.max_body_bytes, 30.0)
    assert _decide(policy, "POST", TABLE + "/plan") == Bounds("reader", MAX_PLAN_BODY_BYTES, SMALL_BODY_SECONDS)
    assert _decide(policy, "POST", TABLE + "/files/remove") == Bounds("writer", s.max_body_bytes, 30.0)
    for path in ("/v1/namespaces", "/v1/namespaces/lake/tables", TABLE + "/verify"):
        assert _decide(policy, "POST", path) == Bounds("admin", SMALL_BODY_BYTES, SMALL_BODY_SECONDS), path
    assert _decide(policy, "POST", "/admin/login") == Bounds(None, FORM_MAX_BYTES, SMALL_BODY_SECONDS, streamed=True)
    # Public routes taking no body, unmatched paths and wrong methods: nothing is read.
    for method, path in (("POST", "/health/live"), ("POST", "/nowhere"), ("PUT", TABLE + "/plan"), ("POST", "/metrics")):
        assert _decide(policy, method, path).body_bytes == 0, (method, path)
    # The playground's form: the predicate's size for an admin only.
    prune = "/admin/tables/lake/events/prune"
    big = form_limit_for(s.max_predicate_length)
    assert _decide(policy, "POST", prune, ADMIN).body_bytes == big
    assert _decide(policy, "POST", prune, READER).body_bytes == FORM_MAX_BYTES
    assert _decide(policy, "POST", prune).body_bytes == FORM_MAX_BYTES


def test_the_playground_limit_follows_a_signed_session_cookie(built: tuple[Any, RoutePolicy, Settings]) -> None:
    from service.dashboard.session import SESSION_COOKIE
    from service.dashboard.web import FORM_MAX_BYTES

    app, policy, _ = built
    prune = "/admin/tables/lake/events/prune"
    good = app.state.session_signer.make(TOKENS["admin"])
    reader = app.state.session_signer.make(TOKENS["reader"])
    assert _decide(policy, "POST", prune, {"Cookie": f"{SESSION_COOKIE}={good}"}).body_bytes > FORM_MAX_BYTES
    # A forged signature: its first character changed, which always changes the MAC's bytes (its
    # last two, once "AA", could decode to the signature itself: 1 run in ~1,000 failed so).
    head, _, mac = good.rpartition(".")
    forged = f"{head}.{'B' if mac[0] == 'A' else 'A'}{mac[1:]}"
    for value in (reader, forged, "v2.1.x"):
        assert _decide(policy, "POST", prune, {"Cookie": f"{SESSION_COOKIE}={value}"}).body_bytes == FORM_MAX_BYTES


@pytest.mark.parametrize(
    ("path", "query", "location"),
    [
        ("/v1/namespaces/", b"", "/v1/namespaces"),
        ("/health/live/", b"a=1", "/health/live?a=1"),
        ("/admin", b"", "/admin/"),  # the overview answers both; no redirect needed
        ("//evil.example/", b"", None),
        ("/nowhere/", b"", None),
    ],
)
def test_trailing_slash_redirects_are_relative(
    built: tuple[Any, RoutePolicy, Settings], path: str, query: bytes, location: str | None
) -> None:
    _, policy, _ = built
    b = policy.decide(_scope("GET", path, query), {"host": "evil.example"})
    if path == "/admin":
        assert b.redirect is None and b.body_bytes == 0
        return
    assert b.redirect == location
