"""The one validator (service.catalog.validate) through the library API: every rule and limit fails
the whole commit naming the file and the attribute, and nothing is committed. The same rules
through the REST API are in tests/api/test_commits.py."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from service.catalog import Catalog
from service.catalog.validate import MAX_COUNT, validate_batch, validate_file
from service.errors import BadInputError, InvalidStatsError, LimitExceededError
from service.limits import Limits
from tests.catalog.factories import BLOB, FLOAT64, INT64, LIMITS, VARCHAR, assert_consistent, fs, int_file, ps

NS, T = "lake", "events"


@pytest.fixture
def cat(catalog: Catalog) -> Catalog:
    catalog.create_table(NS, T, ["v"])
    return catalog


def _state(cat: Catalog) -> tuple[Any, ...]:
    return (
        [f.path for f in cat.list_files(NS, T)],
        cat.global_stats_json(NS, T),
        len(cat.list_snapshots(NS, T)),
        cat.get_table(NS, T).live_record_count,
    )


# Rules that were checked for REST client stats only and now hold for every commit (extracted
# stats always satisfy them): (bad file, attribute, row).
UNIFIED = [
    pytest.param(fs("bad", ps(), size=111), "file_size_bytes", None, id="file-smaller-than-footer+12"),
    pytest.param(fs("bad", ps('"a"', size=1001)), "column_size_bytes", 0, id="column-larger-than-file"),
    pytest.param(fs("bad", ps('"a'), ps('"b"')), "variant_path", 0, id="variant-path-syntax"),
    pytest.param(fs("bad", ps('"b"'), ps("a")), "variant_path", 1, id="variant-path-unquoted"),
    pytest.param(fs("bad", ps('"a"', values=0, nulls=10)), "min_value", 0, id="bound-with-no-values"),
    pytest.param(fs("bad", ps('"a"', INT64, None, 3, values=0, nulls=10)), "max_value", 0, id="max-with-no-values"),
    pytest.param(
        fs("bad", ps('"f"', FLOAT64, None, None, values=0, nulls=10, nan=True)), "contains_nan", 0, id="nan-with-no-values"
    ),
]

# Rules both paths checked before, with the location the validator reports now.
CHECKED_BEFORE = [
    pytest.param(fs("bad", ps('"a"', INT64, 10, 1)), "max_value", 0, id="min-above-max"),
    pytest.param(fs("bad", ps('"a"', INT64, 0, 1, nan=True)), "contains_nan", 0, id="nan-on-int"),
    pytest.param(fs("bad", ps('"a"', column="w")), "column", 0, id="column-not-in-file"),
    pytest.param(fs("bad", ps('"a"'), ps('"a"')), "variant_path", 1, id="reported-twice"),
    pytest.param(fs("bad", ps('"a"', FLOAT64, float("nan"), 1.0)), "min_value", 0, id="nan-bound"),
    pytest.param(fs("bad", ps('"a"', values=-1)), "value_count", 0, id="negative-count"),
    pytest.param(fs("bad", ps(), columns=("v", "v")), "variant_columns", None, id="duplicate-columns"),
]


@pytest.mark.parametrize(("bad", "attribute", "row"), UNIFIED + CHECKED_BEFORE)
def test_invalid_file_is_refused_naming_file_and_attribute(
    cat: Catalog, bad: Any, attribute: str, row: int | None
) -> None:
    cat.commit(NS, T, [int_file("keep")])
    before = _state(cat)
    with pytest.raises(InvalidStatsError) as e:
        cat.commit(NS, T, [int_file("ok"), bad])
    assert e.value.message.startswith("bad: ")
    assert e.value.details == {"path": "bad", "attribute": attribute, **({} if row is None else {"row": row})}
    assert _state(cat) == before
    assert_consistent(cat, NS, T)


def test_record_count_rule_is_for_client_stats_only() -> None:
    # A corrupt footer's row count may disagree with its column chunks: the extractor reports what
    # the file holds, so extracted stats are not held to it; client stats are.
    f = fs("f", ps('"a"', values=3, nulls=1), ps('"t".element', values=40), records=10)
    assert validate_file(f, LIMITS) is f
    with pytest.raises(InvalidStatsError, match=r"value_count \+ null_count = 4") as e:
        validate_file(f, LIMITS, check_record_counts=True)
    assert e.value.details == {"path": "f", "attribute": "value_count", "row": 0}
    ok = fs("f", ps('"a"', values=3, nulls=7), ps('"t".element', values=40), records=10)
    assert validate_file(ok, LIMITS, check_record_counts=True) is ok


def _limits(**kw: int) -> Limits:
    return dataclasses.replace(LIMITS, **kw)


def test_limits_come_from_the_catalog(catalog: Catalog) -> None:
    small = Catalog(catalog.engine, limits=_limits(max_files_per_commit=2, max_stats_rows_per_file=2))
    small.create_table(NS, T, ["v"])
    with pytest.raises(LimitExceededError, match="3 files in one request: at most 2") as e:
        small.commit(NS, T, [int_file(), int_file(), int_file()])
    assert e.value.http_status == 413 and e.value.details == {"limit": 2, "count": 3}
    with pytest.raises(LimitExceededError, match="3 paths in one request"):
        small.remove(NS, T, ["a", "b", "c"], missing_ok=True)
    with pytest.raises(LimitExceededError, match=r"wide: 3 statistics rows: at most 2 per file") as e:
        small.commit(NS, T, [fs("wide", ps('"a"'), ps('"b"'), ps('"c"'))])
    assert e.value.details["attribute"] == "paths" and e.value.details["limit"] == 2
    assert small.list_files(NS, T) == []
    small.commit(NS, T, [int_file(), fs(None, ps('"a"'), ps('"b"'))])
    assert len(small.list_files(NS, T)) == 2
    with pytest.raises(BadInputError, match="limit must be between 1 and 5"):
        Catalog(catalog.engine, limits=_limits(max_page_size=5)).list_files(NS, T, limit=6)


def test_the_default_limits_are_the_settings(monkeypatch: pytest.MonkeyPatch, catalog: Catalog) -> None:
    from service.settings import get_settings

    monkeypatch.setenv("SHREDCAT_MAX_FILES_PER_COMMIT", "7")
    monkeypatch.setenv("SHREDCAT_MAX_BOUND_CHARS", "9")
    get_settings.cache_clear()
    try:
        limits = Catalog(catalog.engine).limits
    finally:
        get_settings.cache_clear()
    assert (limits.max_files_per_commit, limits.max_bound_chars) == (7, 9)
    assert (limits.max_stats_rows_per_file, limits.max_extra_stats_chars) == (10_000, 64 * 1024)


@pytest.mark.parametrize(
    ("row", "attribute"),
    [
        (ps('"s"', VARCHAR, "a" * 10, "b" * 11), "max_value"),
        (ps('"s"', VARCHAR, "é" * 11, None), "min_value"),  # characters, not bytes
        (ps('"b"', BLOB, b"\x00" * 11, None), "min_value"),
        (ps('"a"', extra="x" * 21), "extra_stats"),
    ],
)
def test_string_length_limits(cat: Catalog, row: Any, attribute: str) -> None:
    small = Catalog(cat.engine, limits=_limits(max_bound_chars=10, max_extra_stats_chars=20))
    with pytest.raises(LimitExceededError) as e:
        small.commit(NS, T, [fs("long", row)])
    assert e.value.details == {"path": "long", "attribute": attribute, "row": 0}
    assert "SHREDCAT_MAX_" in e.value.message
    assert small.list_files(NS, T) == []
    at_limit = dataclasses.replace(
        row,
        **{attribute: row.extra_stats[:20] if attribute == "extra_stats" else getattr(row, attribute)[:10]},
    )
    small.commit(NS, T, [fs("long", at_limit)])


def test_counts_beyond_bigint_are_refused(cat: Catalog) -> None:
    for bad, attribute in [
        (fs("big", ps(), records=MAX_COUNT + 1), "record_count"),
        (fs("big", ps(), size=MAX_COUNT + 1), "file_size_bytes"),
        (fs("big", ps('"a"', values=MAX_COUNT + 1)), "value_count"),
        (fs("big", ps('"a"', nulls=MAX_COUNT + 1)), "null_count"),
    ]:
        with pytest.raises(InvalidStatsError, match=str(MAX_COUNT)) as e:
            cat.commit(NS, T, [bad])
        assert e.value.http_status == 422 and e.value.details["attribute"] == attribute
    assert cat.list_files(NS, T) == []


def test_table_totals_stay_within_bigint(cat: Catalog) -> None:
    def big(path: str, **kw: int) -> Any:
        return fs(path, ps(), **{"records": MAX_COUNT, **kw})

    # In one batch, and across commits: exact sums, refused beyond BIGINT, nothing committed.
    with pytest.raises(InvalidStatsError, match=f"{T} would hold {2 * MAX_COUNT} live records"):
        cat.commit(NS, T, [big("a"), big("b")])
    assert cat.list_files(NS, T) == []
    cat.commit(NS, T, [big("a")])
    before = _state(cat)
    with pytest.raises(InvalidStatsError, match="live records") as e:
        cat.commit(NS, T, [fs("b", ps(), records=1)])
    assert e.value.http_status == 422
    assert _state(cat) == before and before[3] == MAX_COUNT
    # A file already live adds nothing.
    assert cat.commit(NS, T, [big("a")]).unchanged == ("a",)
    with pytest.raises(InvalidStatsError, match="live bytes"):
        cat.commit(NS, T, [fs("c", ps(), records=0, size=MAX_COUNT), fs("d", ps(), records=0, size=1000)])
    assert_consistent(cat, NS, T)


def test_batch_checks_each_file_with_the_same_limits() -> None:
    assert validate_batch([int_file("a"), int_file("a")], LIMITS) == [int_file("a")]
    with pytest.raises(LimitExceededError):
        validate_batch([int_file("a"), int_file("b")], _limits(max_files_per_commit=1))


# --- content ids of two kinds ---------------------------------------------------------------------


def test_content_ids_of_one_kind_must_be_equal_and_of_two_kinds_cannot_be_compared() -> None:
    from service.catalog.validate import same_content_id

    assert same_content_id("etag:abc:10", "etag:abc:10")
    assert not same_content_id("etag:abc:10", "etag:abd:10")
    assert not same_content_id("1700000000000000000:10", "1700000000000000001:10")
    assert same_content_id("1700000000000000000:10", "etag:abc:10")  # pyarrow-era id vs etag
    assert same_content_id("1700000000000000000:10", "generation:5:10")
    assert not same_content_id("generation:5:10", "etag:abc:10")
    assert not same_content_id(None, "etag:abc:10") and same_content_id(None, None)


def test_an_object_registered_with_a_pyarrow_era_id_re_registers_unchanged(catalog: Catalog) -> None:
    """S3 files registered before shredcat read them with its own client carry ``mtime_ns:size``;
    read again they give ``etag:...``: the same size, record count and footer size are the same
    content (no 409, no new snapshot), and a different size is still a conflict."""
    from service.errors import ConflictError

    catalog.create_table("lake", "legacy", ["v"])
    old = fs("s3://b/t/x.parquet", ps('"a"', INT64, 1, 5), content_id="1700000000000000000:1000")
    first = catalog.commit("lake", "legacy", [old])
    again = catalog.commit("lake", "legacy", [dataclasses.replace(old, content_id="etag:9f1c:1000")])
    assert first.snapshot_id is not None and again.snapshot_id is None and again.added == ()
    with pytest.raises(ConflictError):
        catalog.commit("lake", "legacy", [dataclasses.replace(old, content_id="etag:9f1c:2000", file_size_bytes=2000)])


def test_only_the_pyarrow_era_pair_of_content_ids_is_incomparable() -> None:
    from service.catalog.validate import same_content_id

    assert not same_content_id("etag:abc:10", "other-etag")  # a client's own ids still differ
    assert not same_content_id("changed", "etag:abc:10")
    assert not same_content_id("1700000000000000000:10", "changed")
