"""``/metrics`` of ``shredcat serve --workers 2`` (issue 14): every worker's counters are summed
(prometheus_client's multiprocess mode), whichever worker answers the scrape."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx
import pytest

from tests.ops.support import TOKENS, run_migrate, server_env
from tests.support.server import running_server

pytestmark = pytest.mark.slow

SERIES = 'shredcat_http_request_duration_seconds_count{method="GET",route="/v1/namespaces",status="200"}'


def _count(text: str) -> float:
    """The series' value (0 when absent), whichever label order the exposition uses."""
    want = dict(re.findall(r'(\w+)="([^"]*)"', SERIES))
    for line in text.splitlines():
        m = re.match(r"shredcat_http_request_duration_seconds_count\{([^}]*)\} (\S+)$", line)
        if m and dict(re.findall(r'(\w+)="([^"]*)"', m.group(1))) == want:
            return float(m.group(2))
    return 0.0


def _metrics_dir(log: list[str]) -> str:
    for line in log:
        if "summed through" in line:
            return str(json.loads(line)["message"].rsplit(" ", 1)[1])
    raise AssertionError(f"serve did not say where the metrics go: {log[-20:]}")


def _worker_pids(directory: str) -> set[str]:
    return {m.group(1) for name in os.listdir(directory) if (m := re.search(r"_(\d+)\.db$", name))}


def test_metrics_of_two_workers_are_summed(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path}/catalog.db"
    env = server_env(url)
    env.pop("PROMETHEUS_MULTIPROC_DIR", None)
    assert run_migrate(env).returncode == 0
    reader = {"Authorization": f"Bearer {TOKENS['reader']}"}
    with running_server(env, tmp_path / "server.log", workers=2) as server:
        directory = _metrics_dir(server.log_lines())
        sent = 0
        # A fresh connection per request, until both workers have served some (each writes its
        # own files, named by its pid).
        while len(_worker_pids(directory)) < 2 or sent < 40:
            assert sent < 2000, "the second worker never served a request"
            r = httpx.get(server.base_url + "/v1/namespaces", headers=reader, timeout=10)
            assert r.status_code == 200
            sent += 1
        for _ in range(6):  # several scrapes, on fresh connections: any worker gives the sum
            text = httpx.get(server.base_url + "/metrics", headers=reader, timeout=10).text
            assert _count(text) == sent
    assert not os.path.exists(directory)  # removed when the server stops
