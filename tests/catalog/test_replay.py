"""Idempotency keys store a bounded result (issue 32 row 5): the categories of the request's own
paths, run-length encoded, and a digest; the replay is the same result. Expired keys are deleted
by later keyed commits (both backends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, select, update

from service.catalog import Catalog
from service.catalog import models as m
from service.catalog.replay import decode, encode
from service.catalog.results import CommitResult
from service.errors import InvalidStatsError
from tests.catalog.factories import int_file

NS, T = "lake", "events"


def _replayed(r: CommitResult) -> CommitResult:
    return CommitResult(r.snapshot_id, r.added, r.unchanged, replayed=True, restated=r.restated,
                        removed=r.removed, missing=r.missing)


def test_the_stored_form_restates_the_result_and_is_small() -> None:
    files = [f"s3://b/{i:05d}.parquet" for i in range(10)]
    removing = ["s3://b/" + "x" * 2000 + f"{i:05d}" for i in range(10_000)]
    r = CommitResult(7, tuple(files[:6]), tuple(files[6:8]), restated=tuple(files[8:]),
                     removed=tuple(removing[:3]), missing=tuple(removing[3:]))
    stored = encode(r, files, removing)
    assert len(stored) < 300  # the full result: 20 MB of paths
    assert decode(stored, files, removing) == _replayed(r)
    # The same request in another order: the same lists, in its order.
    again = decode(stored, files[::-1], removing[::-1])
    assert again.added == tuple(files[:6][::-1]) and again.missing == tuple(removing[3:][::-1])


def test_alternating_categories_stay_bounded() -> None:
    files = [f"f{i:05d}" for i in range(10_000)]
    r = CommitResult(3, tuple(files[0::2]), tuple(files[1::2]))
    stored = encode(r, files, [])
    assert len(stored) < 3 * len(files) + 200
    assert decode(stored, files, []) == _replayed(r)


def test_a_stored_form_that_does_not_match_the_request_is_refused() -> None:
    r = CommitResult(3, ("a",), ("b",))
    stored = encode(r, ["a", "b"], [])
    for files in (["a"], ["a", "b", "c"], ["a", "c"]):
        with pytest.raises(InvalidStatsError, match="corrupt"):
            decode(stored, files, [])


def test_results_stored_whole_by_earlier_versions_still_replay() -> None:
    old = '{"snapshot_id": 4, "added": ["a"], "unchanged": [], "restated": [], "removed": ["z"], "missing": []}'
    assert decode(old, ["a"], ["z"]) == CommitResult(4, ("a",), (), replayed=True, removed=("z",))


def _key_rows(cat: Catalog) -> list[tuple[str, int]]:
    with cat.engine.connect() as c:
        return [(k, n) for k, n in c.execute(
            select(m.CommitKey.idempotency_key, func.length(m.CommitKey.result)).order_by(m.CommitKey.idempotency_key)
        )]


def test_a_huge_missing_ok_removal_stores_a_small_result(catalog: Catalog) -> None:
    catalog.create_table(NS, T, ["v"])
    catalog.commit(NS, T, [int_file("a")])
    missing = ["s3://lake/" + "p" * 2000 + f"{i:05d}.parquet" for i in range(9_999)]
    r = catalog.commit(NS, T, [], remove=["a", *missing], remove_missing_ok=True, idempotency_key="big")
    assert r.removed == ("a",) and len(r.missing) == 9_999
    [(key, size)] = _key_rows(catalog)
    assert key == "big" and size < 500
    replay = catalog.commit(NS, T, [], remove=["a", *missing], remove_missing_ok=True, idempotency_key="big")
    assert replay.replayed and (replay.snapshot_id, replay.removed, replay.missing) == (r.snapshot_id, r.removed, r.missing)


def test_expired_keys_are_deleted_by_later_keyed_commits(catalog_url: str) -> None:
    from service.cli._common import DEFAULT_LIMITS
    from service.limits import Limits

    cat = Catalog(catalog_url, limits=Limits(**DEFAULT_LIMITS, idempotency_retention_seconds=3600))
    try:
        cat.create_table(NS, T, ["v"])
        first = cat.commit(NS, T, [int_file("a")], idempotency_key="k1")
        cat.commit(NS, T, [int_file("b")], idempotency_key="k2")
        # Age both keys past the retention.
        with cat.engine.begin() as c:
            c.execute(update(m.CommitKey).values(created_at=datetime.now(UTC) - timedelta(hours=2)))
        cat.remove(NS, T, ["a"])
        # k1 is expired: the same request is a new commit (a is added again), not a replay.
        again = cat.commit(NS, T, [int_file("a")], idempotency_key="k1")
        assert not again.replayed and again.snapshot_id != first.snapshot_id and again.added == ("a",)
        # ...and k2, expired too, was deleted by that commit: one key left, k1's new one.
        assert [k for k, _ in _key_rows(cat)] == ["k1"]
        assert cat.commit(NS, T, [int_file("a")], idempotency_key="k1").replayed
    finally:
        cat.close()
