"""The read router's pure rules (no database): WAL positions, lag, round robin, settings."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine

from service.catalog.replicas import ReadRouter, lag_of, parse_lsn


def test_parse_lsn() -> None:
    assert parse_lsn("0/0") == 0
    assert parse_lsn("16/B374D848") == (0x16 << 32) | 0xB374D848
    assert parse_lsn(None) is None and parse_lsn("") is None


def test_lag_is_zero_once_the_primary_position_is_replayed_else_the_replay_age() -> None:
    assert lag_of(100, 100, 30.0) == (0.0, 0)
    assert lag_of(100, 120, 30.0) == (0.0, 0)  # replayed beyond what the primary had when asked
    assert lag_of(100, 40, 2.5) == (2.5, 60)
    assert lag_of(100, 40, -0.1) == (0.0, 60)  # clocks of one machine, read a moment apart
    # Unknown is never zero: nothing replayed yet, or no replayed transaction to date it.
    assert lag_of(100, None, None) == (None, None)
    assert lag_of(100, 40, None) == (None, 60)


def test_fit_standbys_are_taken_in_turn_and_unfit_ones_skipped() -> None:
    engines = [create_engine("sqlite://") for _ in range(3)]
    router = ReadRouter(engines[0], engines)
    a, b, c = router.standbys
    for s in router.standbys:
        s.state = "ok"
    orders = [[s for s in router._fit()] for _ in range(3)]
    assert [o[0] for o in orders] == [a, b, c]
    assert all(sorted(map(id, o)) == sorted(map(id, [a, b, c])) for o in orders)
    b.state, c.state = "lagging", "down"
    assert [router._fit() for _ in range(2)] == [[a], [a]]
    a.state = "promoted"
    assert router._fit() == []


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SHREDCAT_READ_DATABASE_URLS": '["sqlite:///x.db"]', "SHREDCAT_DATABASE_URL": "postgresql://h/db"}, "hot standby"),
        ({"SHREDCAT_READ_DATABASE_URLS": '["postgresql://s/db"]'}, "PostgreSQL SHREDCAT_DATABASE_URL"),
        ({"SHREDCAT_READ_MAX_LAG_S": "-1"}, "SHREDCAT_READ_MAX_LAG_S"),
    ],
)
def test_bad_replication_settings_name_the_variable(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], message: str
) -> None:
    from service.errors import SettingsError
    from service.settings import get_settings

    for k, v in env.items():
        monkeypatch.setenv(k, v)
    get_settings.cache_clear()
    try:
        with pytest.raises(SettingsError, match=message):
            get_settings()
    finally:
        get_settings.cache_clear()
