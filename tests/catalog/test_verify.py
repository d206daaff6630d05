"""Stored stats checked against the files (issue 14): the pure comparison, ``Catalog.verify``,
restatement of a file re-registered by path, and idempotency keys per principal (both backends)."""

from __future__ import annotations

import dataclasses
import time
from decimal import Decimal

import pytest

from service.catalog import Catalog
from service.catalog.verify import Difference, compare_file_stats, same_bound
from service.errors import ConflictError, FileAccessError, LimitExceededError
from service.stats.model import FileStats
from tests.catalog.factories import DEC, FLOAT64, INT64, VARCHAR, assert_consistent, fs, ps

# --- the pure comparison --------------------------------------------------------------------------


def _file(*rows: object, **kw: object) -> FileStats:
    return fs("s3://b/t/f.parquet", *rows, **kw)  # type: ignore[arg-type]


def test_identical_stats_have_no_difference() -> None:
    f = _file(ps('"a"', INT64, 1, 9), ps('"s"', VARCHAR, "a", "z"))
    assert compare_file_stats(f, f) == ()
    # Row order and column order are not differences.
    g = dataclasses.replace(f, paths=f.paths[::-1])
    assert compare_file_stats(f, g) == ()
    two = _file(ps('"a"', INT64, 1, 9), columns=("v", "w"))
    assert compare_file_stats(two, dataclasses.replace(two, variant_columns=("w", "v"))) == ()


def test_bounds_compare_by_typed_value() -> None:
    nan = float("nan")
    assert same_bound(nan, nan) and same_bound(-0.0, 0.0) and same_bound(None, None)
    assert same_bound(Decimal("1.0"), Decimal("1.00"))
    assert not same_bound(True, 1) and not same_bound(1, 1.0) and not same_bound(None, 0)
    stored = _file(ps('"x"', FLOAT64, nan, nan, nan=True), ps('"d"', DEC, Decimal("1.50"), Decimal("2")))
    same = _file(ps('"x"', FLOAT64, nan, nan, nan=True), ps('"d"', DEC, Decimal("1.5"), Decimal("2.00")))
    assert compare_file_stats(stored, same) == ()


def test_every_differing_field_is_reported() -> None:
    stored = _file(
        ps('"a"', INT64, 0, 10, values=10),
        ps('"f"', FLOAT64, 0.5, 1.5, nan=False),
        ps('"gone"', INT64, 1, 2),
        ps('"e"', VARCHAR, "a", "b", extra='{"k": 1, "j": [1]}'),
        records=10,
    )
    fresh = _file(
        ps('"a"', INT64, -5, 10, values=9, nulls=1),
        ps('"f"', FLOAT64, 0.5, 1.5, nan=True),
        ps('"e"', VARCHAR, "a", "b", extra='{"j":[1],"k":1}'),  # the same JSON value
        ps('"new"', INT64, 1, 2),
        records=12,
    )
    assert compare_file_stats(stored, fresh) == (
        Difference("record_count", 10, 12),
        Difference("value_count", 10, 9, "v", '"a"'),
        Difference("null_count", 0, 1, "v", '"a"'),
        Difference("min_value", "0", "-5", "v", '"a"'),
        Difference("contains_nan", False, True, "v", '"f"'),
        Difference("row", "present", None, "v", '"gone"'),
        Difference("row", None, "present", "v", '"new"'),
    )


def test_a_type_change_is_the_difference_of_its_row() -> None:
    stored = _file(ps('"a"', INT64, 1, 2))
    fresh = _file(ps('"a"', VARCHAR, "1", "2"))
    assert compare_file_stats(stored, fresh) == (Difference("shredded_type", "int64", "varchar", "v", '"a"'),)
    assert compare_file_stats(stored, dataclasses.replace(stored, variant_columns=("v", "w"))) == (
        Difference("variant_columns", ["v"], ["v", "w"]),
    )


# --- Catalog.verify ---------------------------------------------------------------------------------

P = [f"s3://b/t/f{i}.parquet" for i in range(6)]


def _truth(path: str) -> FileStats:
    return fs(path, ps('"a"', INT64, 0, 100, values=10))


def _lake(catalog: Catalog) -> dict[str, FileStats]:
    """Six files; f1's stored min is wrong (it would prune a match), f4's row count; f5 unreadable."""
    catalog.create_table("ns", "t", ["v"])
    stored = {p: _truth(p) for p in P}
    stored[P[1]] = fs(P[1], ps('"a"', INT64, 50, 100, values=10))
    stored[P[4]] = dataclasses.replace(stored[P[4]], record_count=11)
    catalog.commit("ns", "t", list(stored.values()))
    return stored


def _read(path: str) -> FileStats:
    if path == P[5]:
        raise FileAccessError(f"{path}: no credentials for s3", details={"path": path})
    return _truth(path)


def test_verify_reports_different_and_unverifiable_files(catalog: Catalog) -> None:
    _lake(catalog)
    report = catalog.verify("ns", "t", _read)
    assert (report.live_files, report.chosen, report.checked, report.matching) == (6, 6, 6, 3)
    assert report.complete
    assert [c.path for c in report.different] == [P[1], P[4]]
    assert report.different[0].differences == (Difference("min_value", "50", "0", "v", '"a"'),)
    assert report.different[1].differences == (Difference("record_count", 11, 10),)
    (unreadable,) = report.unverifiable
    assert unreadable.path == P[5] and unreadable.differences == () and "no credentials" in (unreadable.reason or "")
    assert unreadable.to_json() == {"path": P[5], "status": "unverifiable", "reason": unreadable.reason}
    # A read that fails in an unexpected way is unverifiable too, never a crash or "different".
    report = catalog.verify("ns", "t", lambda p: 1 / 0)  # type: ignore[arg-type, return-value]
    assert len(report.unverifiable) == 6 and not report.different


def test_verify_a_sample_is_repeatable_and_bounded(catalog: Catalog) -> None:
    _lake(catalog)
    a = catalog.verify("ns", "t", _read, sample=3, seed=7)
    b = catalog.verify("ns", "t", _read, sample=3, seed=7)
    assert a.chosen == a.checked == 3 and a == b
    assert catalog.verify("ns", "t", _read, sample=100).chosen == 6
    with pytest.raises(LimitExceededError):
        catalog.verify("ns", "t", _read, max_files=5)
    assert catalog.verify("ns", "t", _read, sample=5, max_files=5).checked == 5
    late = catalog.verify("ns", "t", _read, deadline=time.monotonic() - 1)
    assert late.checked == 0 and not late.complete and late.chosen == 6


# --- restatement by path ---------------------------------------------------------------------------


def test_a_file_re_registered_by_path_with_other_stats_is_restated(catalog: Catalog) -> None:
    stored = _lake(catalog)
    before = catalog.get_table("ns", "t")
    # Client-side stats of the same content are not more trustworthy than the stored ones.
    assert catalog.commit("ns", "t", [_truth(P[1])]).unchanged == (P[1],)
    # Re-extracted by the caller itself: the stored stats are replaced at a new snapshot.
    r = catalog.commit("ns", "t", [_truth(P[0]), _truth(P[1]), _truth("s3://b/t/new.parquet")], extracted=[P[0], P[1]])
    assert (r.added, r.unchanged, r.restated) == (("s3://b/t/new.parquet",), (P[0],), (P[1],))
    assert r.snapshot_id is not None and r.snapshot_id > before.current_snapshot_id
    assert catalog.file_stats("ns", "t", P[1]) == _truth(P[1])
    # History is kept: the old stats at the old snapshot.
    assert catalog.file_stats("ns", "t", P[1], snapshot=before.current_snapshot_id) == stored[P[1]]
    after = catalog.get_table("ns", "t")
    assert after.live_file_count == 7 and after.live_record_count == before.live_record_count + 10
    assert_consistent(catalog, "ns", "t")
    snap = catalog.list_snapshots("ns", "t")[-1]
    assert (snap.added_files, snap.removed_files) == (2, 1)
    assert [c.path for c in catalog.verify("ns", "t", _read).different] == [P[4]]
    # Now that they match, a re-registration is unchanged again (and makes no snapshot).
    again = catalog.register("ns", "t", [P[1]], extract=_truth)
    assert (again.snapshot_id, again.unchanged, again.restated) == (None, (P[1],), ())


def test_register_restates_only_when_the_stats_differ(catalog: Catalog) -> None:
    _lake(catalog)
    r = catalog.register("ns", "t", [P[0], P[1], P[2]], extract=_truth)
    assert (r.unchanged, r.restated) == ((P[0], P[2]), (P[1],))
    assert_consistent(catalog, "ns", "t")


# --- idempotency keys -------------------------------------------------------------------------------


def test_idempotency_keys_are_per_principal(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    first = catalog.commit("ns", "t", [_truth(P[0])], idempotency_key="k", principal="alice")
    # Another principal's key of the same name is another key: its own commit, no replay.
    other = catalog.commit("ns", "t", [_truth(P[1])], idempotency_key="k", principal="bob")
    assert not other.replayed and other.added == (P[1],)
    with pytest.raises(ConflictError):
        catalog.commit("ns", "t", [_truth(P[2])], idempotency_key="k", principal="alice")
    again = catalog.commit("ns", "t", [_truth(P[0])], idempotency_key="k", principal="alice")
    assert again.replayed and again.added == first.added and again.snapshot_id == first.snapshot_id
    # The library's default principal is its own.
    assert not catalog.commit("ns", "t", [_truth(P[3])], idempotency_key="k").replayed


def test_a_replay_after_removal_answers_the_original_result_and_changes_nothing(catalog: Catalog) -> None:
    catalog.create_table("ns", "t", ["v"])
    first = catalog.commit("ns", "t", [_truth(P[0]), _truth(P[1])], idempotency_key="k")
    catalog.remove("ns", "t", [P[0]])
    table = catalog.get_table("ns", "t")
    again = catalog.commit("ns", "t", [_truth(P[0]), _truth(P[1])], idempotency_key="k")
    # The original result: it describes the snapshot that commit created, not the files live now.
    assert again.replayed and (again.snapshot_id, again.added) == (first.snapshot_id, (P[0], P[1]))
    assert catalog.get_table("ns", "t") == table
    assert [f.path for f in catalog.list_files("ns", "t")] == [P[1]]


def test_content_ids_of_two_kinds_are_not_a_difference() -> None:
    f = fs("s3://b/t/y.parquet", ps('"a"', INT64, 1, 5), content_id="1700000000000000000:1000")
    assert compare_file_stats(f, dataclasses.replace(f, content_id="etag:9f1c:1000")) == ()
    changed = compare_file_stats(f, dataclasses.replace(f, content_id="1700000000000000001:1000"))
    assert [d.field for d in changed] == ["content_id"]
