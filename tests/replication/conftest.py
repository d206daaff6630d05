"""Fixtures of the replication tests: a private PostgreSQL primary + hot standby pair
(:mod:`tests.support.standby`) per test session, and a migrated catalog database on it.

Where the pair cannot start, the tests are skipped on a laptop and fail loudly under ``CI=true``
(as the main PostgreSQL fixtures do): CI must prove replication, not skip it.
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pytest

from tests.support.events import write_event_files
from tests.support.standby import Pair, StandbyUnavailable, start_pair

if TYPE_CHECKING:
    from service.catalog import Catalog

#: A predicate every file of the tests' event lake may match (its ids are >= 0).
ALL = "variant_get(v, '$.id', 'bigint') >= 0"


def _start_or_fail() -> Pair:
    try:
        return start_pair()
    except StandbyUnavailable as e:
        msg = f"could not start a PostgreSQL primary + hot standby pair: {e}"
        if os.environ.get("CI") == "true":
            pytest.fail(msg, pytrace=False)
        pytest.skip(msg)


@pytest.fixture(scope="session")
def pg_pair() -> Iterator[Pair]:
    """The session's primary and hot standby (never promoted nor stopped by a test: tests that do
    that use :func:`own_pair`)."""
    pair = _start_or_fail()
    try:
        yield pair
    finally:
        pair.close()


@pytest.fixture
def own_pair() -> Iterator[Pair]:
    """A pair of the test's own, for tests that stop or promote the standby."""
    pair = _start_or_fail()
    try:
        yield pair
    finally:
        pair.close()


@dataclass(frozen=True)
class ReplicatedCatalog:
    pair: Pair
    database: str

    @property
    def primary_url(self) -> str:
        return self.pair.primary.url(self.database)

    @property
    def standby_url(self) -> str:
        return self.pair.standby.url(self.database)


def replicated_catalog(pair: Pair) -> ReplicatedCatalog:
    """A fresh migrated catalog database on ``pair``'s primary, replayed by its standby."""
    from service.catalog.db import upgrade_to_head

    name = f"shredcat_repl_{uuid.uuid4().hex[:12]}"
    pair.primary.execute(f'CREATE DATABASE "{name}"')
    upgrade_to_head(pair.primary.url(name))
    pair.wait_replayed()
    return ReplicatedCatalog(pair, name)


@pytest.fixture
def repl(pg_pair: Pair) -> Iterator[ReplicatedCatalog]:
    rc = replicated_catalog(pg_pair)
    try:
        yield rc
    finally:
        pg_pair.primary.execute(f'DROP DATABASE IF EXISTS "{rc.database}" WITH (FORCE)')


def standby_catalog(rc: ReplicatedCatalog, **router: Any) -> Catalog:
    """A catalog on ``rc``'s primary that reads from its standby (``router``: the
    :class:`~service.catalog.replicas.ReadRouter`'s settings); :func:`close_catalog` ends it."""
    from service.catalog import Catalog
    from service.catalog.db import make_engine
    from service.catalog.replicas import ReadRouter

    primary = make_engine(rc.primary_url)
    return Catalog(primary, reads=ReadRouter(primary, [make_engine(rc.standby_url)], **router))


def close_catalog(cat: Catalog) -> None:
    cat.reads.dispose()
    cat.engine.dispose()


def plan_all(cat: Catalog, **kw: Any) -> list[str]:
    """The candidates of :data:`ALL` on ``lake.events`` (``kw``: :meth:`Catalog.plan`'s options)."""
    from service.pruning.parse_sql import parse_sql

    return [c.path for c in cat.plan("lake", "events", lambda s: parse_sql(ALL, schema=s), **kw).candidates]


@pytest.fixture(scope="module")
def events(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The event lake's files, written once per test module (each module registers them anew)."""
    return write_event_files(tmp_path_factory.mktemp("repl-lake") / "warehouse" / "events")


def until(cond: Callable[[], object], what: str, timeout: float = 30.0) -> None:
    """Wait for ``cond`` (polled every 50 ms), failing 'never <what>' after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.05)
