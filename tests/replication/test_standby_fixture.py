"""The pair the replication tests stand on is real streaming replication."""

from __future__ import annotations

import pytest

from tests.replication.conftest import ReplicatedCatalog
from tests.support.standby import Pair

# One pair per worker process: keep the replication tests on one worker.
pytestmark = [pytest.mark.postgres, pytest.mark.xdist_group("replication")]


def test_standby_is_in_recovery_and_replays_the_primary(pg_pair: Pair) -> None:
    assert pg_pair.primary.execute("SELECT pg_is_in_recovery()") == [(False,)]
    assert pg_pair.standby.execute("SELECT pg_is_in_recovery()") == [(True,)]
    senders = pg_pair.primary.execute("SELECT state FROM pg_stat_replication")
    assert senders == [("streaming",)]


def test_standby_refuses_writes_and_sees_the_migrated_schema(repl: ReplicatedCatalog) -> None:
    import psycopg

    from service.catalog.db import SCHEMA_REVISION, current_revision

    assert current_revision(repl.standby_url) == SCHEMA_REVISION
    with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
        repl.pair.standby.execute("CREATE TABLE nope (x int)", repl.database)


@pytest.mark.parametrize(("ci", "outcome"), [("true", pytest.fail.Exception), ("", pytest.skip.Exception)])
def test_a_pair_that_cannot_start_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: object, ci: str, outcome: type[BaseException]
) -> None:
    from tests.replication.conftest import _start_or_fail

    monkeypatch.setenv("SHREDCAT_TEST_PG_BIN", str(tmp_path))  # no initdb there
    monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="could not start a PostgreSQL primary"):
        _start_or_fail()
