"""The failed sign-in throttle under concurrent attempts, against two real ``shredcat serve``
processes (two workers each, auth on) on one catalog, as behind a load balancer (issue 32's leftover,
issue 37 item 3), on both backends. Each attempt carries the login form's token and cookie, so it
is a real wrong password. The failures are counted in the catalog, the check and the count in one
transaction, so the limits hold for the four processes together and exactly: of 60 attempts
started together, alternating between the servers, exactly the limit are checked (401), the rest
refused (429 with ``Retry-After``). Counted, never timed."""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.ops.support import TOKENS, run_migrate, server_env
from tests.support.server import Server, running_servers

pytestmark = pytest.mark.slow

HTML = {"Accept": "text/html"}
PER_ADDRESS, TOTAL = 10, 25


@pytest.fixture
def servers(empty_db_url: str, tmp_path: Path) -> Iterator[list[Server]]:
    env = server_env(
        empty_db_url,
        roots=[str(tmp_path)],
        SHREDCAT_LOGIN_FAILURES_PER_ADDRESS=str(PER_ADDRESS),
        SHREDCAT_LOGIN_FAILURES_TOTAL=str(TOTAL),
    )
    assert run_migrate(env).returncode == 0
    with running_servers((env, tmp_path / "a.log"), (env, tmp_path / "b.log"), workers=2) as both:
        yield both


def _client(s: Server, address: str) -> httpx.Client:
    """A client whose connections come from ``address`` (any 127.0.0.0/8 address is loopback)."""
    return httpx.Client(base_url=s.base_url, timeout=60, transport=httpx.HTTPTransport(local_address=address))


def _csrf(c: httpx.Client) -> str:
    page = c.get("/admin/login", headers=HTML)
    m = re.search(r'name="csrf_token" value="([^"]+)"', page.text)
    assert page.status_code == 200 and m, page.text[:300]
    return m.group(1)


def _attempts(servers: list[Server], addresses: list[str], token: str = "not-a-token") -> list[httpx.Response]:
    """One sign-in per entry of ``addresses``, all released together (each on its own connection,
    with its own CSRF token fetched first), sent to the servers in turn."""
    clients = [_client(servers[i % len(servers)], a) for i, a in enumerate(addresses)]
    forms = [_csrf(c) for c in clients]
    ready = threading.Barrier(len(clients))
    out: list[httpx.Response] = []

    def attempt(c: httpx.Client, csrf: str) -> None:
        ready.wait(60)
        out.append(c.post("/admin/login", data={"token": token, "csrf_token": csrf}, headers={**HTML, "Cookie": f"shredcat_csrf={csrf}"}))

    threads = [threading.Thread(target=attempt, args=pair) for pair in zip(clients, forms, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for c in clients:
        c.close()
    assert len(out) == len(addresses)
    return out


def test_sixty_concurrent_wrong_passwords_from_one_address_check_exactly_the_limit(servers: list[Server]) -> None:
    answers = _attempts(servers, ["127.0.0.1"] * 60)
    assert Counter(r.status_code for r in answers) == {401: PER_ADDRESS, 429: 60 - PER_ADDRESS}
    assert all(int(r.headers["Retry-After"]) >= 1 for r in answers if r.status_code == 429)
    # The right token is not even checked while the address is throttled; another address may try.
    # On either server.
    for s in servers:
        right = _attempts([s], ["127.0.0.1"], TOKENS["admin"])[0]
        assert right.status_code == 429 and "Too many failed sign-ins" in right.text
        assert _attempts([s], ["127.0.0.2"], TOKENS["admin"])[0].status_code == 303


def test_concurrent_wrong_passwords_from_many_addresses_check_exactly_the_total(servers: list[Server]) -> None:
    addresses = [f"127.0.0.{10 + i % 6}" for i in range(60)]  # 10 from each of 6 addresses
    answers = _attempts(servers, addresses)
    assert Counter(r.status_code for r in answers) == {401: TOTAL, 429: 60 - TOTAL}
    for s in servers:  # the total holds for all addresses, on either server
        assert _attempts([s], ["127.0.0.99"], TOKENS["admin"])[0].status_code == 429
