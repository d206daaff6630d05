"""Issue 32 row 7 against a real ``shredcat serve`` (two workers, auth on), on both backends:
signing out of the dashboard revokes the session server side. The old cookie is refused by
every worker, also after the server restarts; other sessions are untouched; a made-up cookie
posted to the sign-out form adds nothing to the catalog."""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest

from tests.ops.support import TOKENS, run_migrate, server_env
from tests.support.server import running_server

pytestmark = pytest.mark.slow

HTML = {"Accept": "text/html"}


def _sign_in(base_url: str) -> str:
    with httpx.Client(base_url=base_url, timeout=30) as c:
        page = c.get("/admin/login", headers=HTML)
        m = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
        assert m
        r = c.post("/admin/login", data={"token": TOKENS["admin"], "csrf_token": m.group(1)},
                   headers={**HTML, "Cookie": f"shredcat_csrf={m.group(1)}"})
        assert r.status_code == 303, r.text
        return next(v for v in r.headers.get_list("set-cookie") if v.startswith("shredcat_session=")).split(";")[0]


def _sign_out(base_url: str, cookie: str) -> httpx.Response:
    csrf = "c" * 40
    return httpx.post(base_url + "/admin/logout", data={"csrf_token": csrf},
                      headers={**HTML, "Cookie": f"{cookie}; shredcat_csrf={csrf}"}, timeout=30)


def _overview(base_url: str, cookie: str) -> int:
    return httpx.get(base_url + "/admin", headers={**HTML, "Cookie": cookie}, timeout=30).status_code


def _revoked_rows(url: str) -> int:
    from sqlalchemy import text

    from service.catalog.db import make_engine

    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return int(c.execute(text("SELECT count(*) FROM shredcat_revoked_session")).scalar_one())
    finally:
        engine.dispose()


def test_sign_out_revokes_the_session_on_every_worker_and_across_restarts(empty_db_url: str, tmp_path: Path) -> None:
    env = server_env(empty_db_url, SHREDCAT_SESSION_SECRETS=json.dumps(["q" * 40]))
    assert run_migrate(env).returncode == 0
    with running_server(env, tmp_path / "server.log", workers=2) as server:
        kept, ended = _sign_in(server.base_url), _sign_in(server.base_url)
        assert _overview(server.base_url, ended) == 200
        r = _sign_out(server.base_url, ended)
        assert r.status_code == 303 and "shredcat_session=" in r.headers.get("set-cookie", "")
        # Many requests: the two workers each answer some of them.
        assert {_overview(server.base_url, ended) for _ in range(12)} == {303}
        assert {_overview(server.base_url, kept) for _ in range(12)} == {200}
        # A cookie this server never signed, posted to the form, is not written down.
        made_up = "shredcat_session=v2.9999999999.AAAA"
        assert _sign_out(server.base_url, made_up).status_code == 303
        assert _revoked_rows(empty_db_url) == 1
    with running_server(env, tmp_path / "server2.log", workers=1) as server:
        assert _overview(server.base_url, ended) == 303
        assert _overview(server.base_url, kept) == 200
