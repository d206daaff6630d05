"""The running ``shredcat serve`` and the headless Chromium of the dashboard's browser tests
(``test_browser*.py``), one of each per test session (``conftest.py`` provides them), not per
module: starting, migrating and seeding a server and launching the browser took 17-24 s a module
on this machine under load. The modules only read what it holds, except lake.hist, which
``test_browser_round3`` adds once (whichever test comes first) and the others never look at.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.api.auth import hash_token
from service.client import ShredcatClient
from tests.support.events import write_events
from tests.support.server import running_server, shredcat_cmd

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
ADMIN = "browser-admin-token"
READER = "browser-reader-token"
TABLE = "/admin/tables/lake/events"


def _require_chromium() -> None:
    if Path(CHROMIUM).exists():
        return
    msg = f"{CHROMIUM} is missing (apt-get install chromium)"
    if os.environ.get("CI") == "true":
        pytest.fail(msg + ": CI requires it (.ci/run installs it)", pytrace=False)
    pytest.skip(msg)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A running ``shredcat serve`` with lake.events (five files in two commits, a type conflict on
    ``name``, a path only one file has), an empty table lake.empty and lake.many (120 files with
    long partitioned paths, statistics committed directly, for paging and narrow screens)."""
    _require_chromium()
    tmp = tmp_path_factory.mktemp("browser")
    lake = tmp / "lake"
    files = [
        str(write_events(lake / "events" / f"part-{i}.parquet", 100, i * 100, name_as_int=i == 4, extra=i == 4))
        for i in range(5)
    ]
    env = {
        **os.environ,
        "SHREDCAT_DATABASE_URL": f"sqlite:///{tmp / 'catalog.db'}",
        "SHREDCAT_TOKENS": json.dumps({hash_token(ADMIN): "admin", hash_token(READER): "reader"}),
        "SHREDCAT_WAREHOUSE_ROOTS": json.dumps([str(lake)]),
        "SHREDCAT_AUTH": "on",
    }
    m = subprocess.run([*shredcat_cmd(), "migrate"], env=env, capture_output=True, text=True, timeout=120)
    assert m.returncode == 0, m.stderr
    log_path = tmp / "server.log"
    with running_server(env, log_path) as srv:
        with ShredcatClient(srv.base_url, token=ADMIN) as c:
            c.create_namespace("lake")
            c.create_table("lake", "events", infer_from=files[0])
            c.commit_paths("lake", "events", files[:3])
            c.commit_paths("lake", "events", files[3:])
            c.create_table("lake", "empty", variant_columns=["v"])
        _add_many_files(env["SHREDCAT_DATABASE_URL"], lake)
        _add_skewed_table(env["SHREDCAT_DATABASE_URL"], lake)
        yield {"base": srv.base_url, "files": [os.path.realpath(f) for f in files], "log": log_path}
    assert "Traceback" not in log_path.read_text()


MANY = "/admin/tables/lake/many"


def _add_many_files(url: str, lake: Path) -> None:
    from service.catalog import Catalog
    from service.stats.model import FileStats, PathStats
    from service.values import ShreddedType

    int64 = ShreddedType.parse("int64")
    files = [
        FileStats(
            str(
                lake / "many" / f"event_date=2024-03-{1 + i // 10:02d}" / f"hour={i % 24:02d}"
                / f"part-{i:05d}-3f1c9a7e-5b2d-4c1e-9f0a-{i:012d}.c000.zstd.parquet"
            ),
            1000 + 37 * i,
            100,
            900 + i,
            None,
            ("v",),
            (PathStats("v", '"id"', int64, 100, 100, 0, i * 100, i * 100 + 99, None),),
        )
        for i in range(120)
    ]
    with Catalog(url) as cat:
        cat.create_table("lake", "many", ["v"])
        cat.commit("lake", "many", files[:70])
        cat.commit("lake", "many", files[70:])


SKEW = "/admin/tables/lake/skew"


def _add_skewed_table(url: str, lake: Path) -> None:
    """lake.skew: 20 files whose "n" (int64) spans [10 i, 10 i + 9] and one spanning [0, 10^9]
    (a range that dwarfs the others: the chart goes logarithmic); "tz" is a zoned timestamp."""
    from service.catalog import Catalog
    from service.stats.model import FileStats, PathStats
    from service.values import ShreddedType

    int64, tz = ShreddedType.parse("int64"), ShreddedType.parse("timestamptz")
    t0 = 1_704_067_200_000_000  # 2024-01-01 00:00:00 UTC, in microseconds
    files = [
        FileStats(
            str(lake / "skew" / f"part-{i:02d}.parquet"), 2000 + i, 10, 100, None, ("v",),
            (
                PathStats("v", '"n"', int64, 10, 10, 0, 0 if i == 20 else 10 * i, 10**9 if i == 20 else 10 * i + 9, None),
                PathStats("v", '"tz"', tz, 10, 10, 0, t0 + i * 3_600_000_000, t0 + (i + 1) * 3_600_000_000, None),
            ),
        )
        for i in range(21)
    ]
    with Catalog(url) as cat:
        cat.create_table("lake", "skew", ["v"])
        cat.commit("lake", "skew", files)


@pytest.fixture(scope="module")
def browser(server: dict[str, Any]) -> Iterator[Any]:
    """Chromium, per module (the server above is per session): Playwright's sync API keeps an
    asyncio loop running in the worker's main thread while it is open, so a session-long one made
    every later test of that worker that calls ``asyncio.run`` fail (tests/ops/test_load.py)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()
