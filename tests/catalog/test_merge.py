"""The pure global-stats merge (no database)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.errors import InvalidStatsError
from service.stats.merge import (
    EMPTY,
    GlobalStats,
    GlobalStatsAccumulator,
    from_ducklake_json,
    parse_ducklake_json,
    recompute,
    render_ducklake_json,
)
from service.stats.model import PathStats
from service.values import ShreddedType
from tests.catalog.factories import FLOAT32, FLOAT64, INT64, VARCHAR, ps

# --- the incremental merges, as the catalog makes them from frozen global stats ----------------


def merge_file_into(g: GlobalStats, file_paths: Iterable[PathStats]) -> GlobalStats:
    """Add one file to frozen global stats."""
    acc = GlobalStatsAccumulator(g)
    acc.add_file(file_paths)
    return acc.freeze()


def merge_stats(a: GlobalStats, b: GlobalStats) -> GlobalStats:
    """Merge the frozen global stats of two disjoint sets of files (what a commit does)."""
    acc = GlobalStatsAccumulator(a)
    acc.merge(b)
    return acc.freeze()


def merge_files_into(g: GlobalStats, files: Iterable[Iterable[PathStats]]) -> GlobalStats:
    """Add a batch of files to frozen global stats, through the batch's own."""
    return merge_stats(g, recompute(files))


# --- rules ------------------------------------------------------------------------------------


def test_first_file_keeps_everything_then_intersection() -> None:
    g = merge_file_into(EMPTY, [ps('"a"'), ps('"b"'), ps('"c"', column="w")])
    assert g.file_count == 1 and set(g.paths) == {("v", '"a"'), ("v", '"b"'), ("w", '"c"')}
    g = merge_file_into(g, [ps('"a"'), ps('"b"', VARCHAR, "x", "y"), ps('"c"', column="w")])
    assert set(g.paths) == {("v", '"a"'), ("w", '"c"')}
    g = merge_file_into(g, [])
    assert g.file_count == 3 and g.paths == {}
    assert merge_file_into(g, [ps('"a"')]).paths == {}  # once dropped, stays dropped while the file lives


def test_sums_and_typed_bounds() -> None:
    g = recompute(
        [
            [ps('"a"', INT64, 9, 9, values=2, nulls=1, size=5)],
            [ps('"a"', INT64, 10, 10, values=3, nulls=4, size=6)],
        ]
    )
    p = g.paths[("v", '"a"')]
    assert (p.min_value, p.max_value, p.value_count, p.null_count, p.column_size_bytes) == (9, 10, 5, 5, 11)
    s = recompute([[ps('"s"', VARCHAR, "10", "10")], [ps('"s"', VARCHAR, "9", "9")]]).paths[("v", '"s"')]
    assert (s.min_value, s.max_value) == ("10", "9")  # varchar compares as strings, by code point


def test_no_values_does_not_move_bounds_and_missing_bound_is_unknown() -> None:
    nulls = ps('"a"', INT64, None, None, values=0, nulls=5)
    weird = ps('"a"', INT64, -100, 100, values=0, nulls=5)  # bounds without values are ignored
    for files in (
        [[nulls], [ps('"a"', INT64, 3, 4)]],
        [[ps('"a"', INT64, 3, 4)], [nulls]],
        [[weird], [ps('"a"', INT64, 3, 4)]],
    ):
        p = recompute(files).paths[("v", '"a"')]
        assert (p.min_value, p.max_value, p.min_unknown) == (3, 4, False)
    p = recompute([[nulls]]).paths[("v", '"a"')]
    assert p.min_value is None and not p.min_unknown and p.value_count == 0
    p = recompute([[ps('"a"', INT64, 3, 4)], [ps('"a"', INT64, None, 9)], [ps('"a"', INT64, 0, 1)]]).paths[
        ("v", '"a"')
    ]
    assert p.min_unknown and p.max_value == 9


def test_nan_three_valued_or_and_signed_zero() -> None:
    def nan_of(*flags: bool | None) -> bool | None:
        return (
            recompute([[ps('"f"', FLOAT64, 1.0, 2.0, nan=f)] for f in flags]).paths[("v", '"f"')].contains_nan
        )

    assert nan_of(False, False) is False
    assert nan_of(False, None) is None
    assert nan_of(None, True, False) is True
    assert recompute([[ps('"a"', INT64, 0, 1)]]).paths[("v", '"a"')].contains_nan is None
    for order in ([(0.0, 0.0), (-0.0, -0.0)], [(-0.0, -0.0), (0.0, 0.0)]):
        p = recompute([[ps('"f"', FLOAT64, lo, hi)] for lo, hi in order]).paths[("v", '"f"')]
        assert str(p.min_value) == "-0.0" and str(p.max_value) == "0.0"


def test_duplicate_path_in_a_file_is_invalid() -> None:
    with pytest.raises(InvalidStatsError):
        recompute([[ps('"a"'), ps('"a"')]])
    with pytest.raises(InvalidStatsError):
        recompute([[ps('"a"')], [ps('"a"'), ps('"a"')]])
    with pytest.raises(InvalidStatsError):
        merge_file_into(EMPTY, [ps('"a"'), ps('"a"')])


# --- DuckLake's JSON --------------------------------------------------------------------------

# Written by DuckLake 1.5.5 itself (two inserts into one table; keys in DuckLake's order).
DUCKLAKE_JSON = (
    '[{"field_name":"\\"é\\"\\"x\\\\y/\\"","shredded_type":"int64","null_count":0,"min":"0","max":"9","num_values":10,'
    '"column_size_bytes":86,"any_valid":true},{"field_name":"\\"s\\"","shredded_type":"varchar","null_count":0,'
    '"min":"a\\tb0","max":"a\\tb9","num_values":10,"column_size_bytes":74,"any_valid":true},{"field_name":"\\"n\\"",'
    '"shredded_type":"int32","null_count":10,"num_values":10,"column_size_bytes":25,"any_valid":true},'
    '{"field_name":"\\"f\\"","shredded_type":"float32","null_count":0,"min":"0.0","max":"3.0","num_values":10,'
    '"contains_nan":false,"column_size_bytes":65,"any_valid":true}]'
)


def test_reads_and_writes_ducklake_layout() -> None:
    paths = parse_ducklake_json("v", DUCKLAKE_JSON)
    by = {p.variant_path: p for p in paths}
    assert by['"é""x\\y/"'].max_value == 9 and by['"s"'].min_value == "a\tb0"
    assert by['"n"'].value_count == 0 and by['"n"'].min_value is None and not by['"n"'].min_unknown
    assert by['"f"'].shredded_type == FLOAT32 and by['"f"'].contains_nan is False
    out = render_ducklake_json(paths)
    assert out is not None
    ours = json.loads(out)
    theirs = json.loads(DUCKLAKE_JSON)
    key = lambda o: o["field_name"]  # noqa: E731
    assert sorted(ours, key=key) == sorted(theirs, key=key)
    assert [list(o) for o in sorted(ours, key=key)] == [list(o) for o in sorted(theirs, key=key)]  # key order
    # Compact, UTF-8 verbatim, escapes as DuckDB writes them.
    assert '"field_name":"\\"é\\"\\"x\\\\y/\\""' in out and '"min":"a\\tb0"' in out and ", " not in out
    assert render_ducklake_json([]) is None and parse_ducklake_json("v", None) == ()


@pytest.mark.parametrize(
    "bad",
    [
        "{",
        "{}",
        '[{"field_name":1}]',
        '[{"field_name":"a","shredded_type":"int64","null_count":-1,"num_values":0,"column_size_bytes":0}]',
        '[{"field_name":"a","shredded_type":"int64","null_count":2,"num_values":1,"column_size_bytes":0}]',
        '[{"field_name":"a","shredded_type":"int64","null_count":0,"num_values":1,"column_size_bytes":0,"min":"x"}]',
        '[{"field_name":"a","shredded_type":"nope","null_count":0,"num_values":1,"column_size_bytes":0}]',
    ],
)
def test_rejects_malformed_json(bad: str) -> None:
    with pytest.raises(InvalidStatsError):
        parse_ducklake_json("v", bad)


# --- properties -------------------------------------------------------------------------------

TYPES = [INT64, FLOAT64, VARCHAR, ShreddedType.parse("decimal(5,2)"), ShreddedType.parse("date")]


def _bounds(t: ShreddedType) -> st.SearchStrategy:
    from decimal import Decimal

    if t == INT64:
        return st.integers(-50, 50)
    if t == FLOAT64:
        return st.sampled_from([-0.0, 0.0, 1.5, -2.25, float("inf"), float("-inf"), 1e300])
    if t == VARCHAR:
        return st.text(alphabet="09aé\U0010ffff", max_size=3)
    if t.kind.value == "date":
        return st.integers(-800_000, 800_000)
    return st.integers(-99999, 99999).map(lambda n: Decimal(n).scaleb(-2))


CANONICAL = {("v", '"a"'): INT64, ("v", '"b"'): FLOAT64, ("v", "root"): VARCHAR, ("w", '"a"'): TYPES[3]}


@st.composite
def path_stats(draw: st.DrawFn, path: str, column: str) -> PathStats:
    # Mostly one type per path (so that paths survive several files), sometimes another.
    t = draw(st.sampled_from(TYPES)) if draw(st.integers(0, 5)) == 0 else CANONICAL[(column, path)]
    values = draw(st.sampled_from([0, 1, 5, 5]))
    b = _bounds(t)
    lo, hi = draw(b), draw(b)
    if lo > hi:  # type: ignore[operator]
        lo, hi = hi, lo
    if draw(st.integers(0, 5)) == 0:
        lo = None
    if draw(st.integers(0, 5)) == 0:
        hi = None
    if values == 0 and draw(st.booleans()):
        lo = hi = None
    nan = draw(st.sampled_from([False, True, None])) if t.is_float else None
    return PathStats(column, path, t, draw(st.integers(0, 100)), values, draw(st.integers(0, 3)), lo, hi, nan)


@st.composite
def file_paths(draw: st.DrawFn) -> list[PathStats]:
    keys = draw(
        st.lists(st.sampled_from([("v", '"a"'), ("v", '"b"'), ("v", "root"), ("w", '"a"')]), unique=True)
    )
    if draw(st.integers(0, 4)):  # mostly the same keys everywhere, so that some survive
        keys = [("v", '"a"'), ("v", '"b"'), *keys[:1]]
        keys = list(dict.fromkeys(keys))
    return [draw(path_stats(p, c)) for c, p in keys]


def _normalize(g: GlobalStats) -> tuple:
    return (g.file_count, sorted((k, render_ducklake_json([p])) for k, p in g.paths.items()))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(file_paths(), max_size=8), st.randoms(use_true_random=False))
def test_recompute_equals_any_fold_order_and_split(files: list[list[PathStats]], rnd: random.Random) -> None:
    ref = recompute(files)
    fold = EMPTY
    for f in files:
        fold = merge_file_into(fold, f)
    assert fold == ref and _normalize(fold) == _normalize(ref)
    shuffled = files[:]
    rnd.shuffle(shuffled)
    assert _normalize(recompute(shuffled)) == _normalize(ref)
    cut = rnd.randint(0, len(files))
    assert _normalize(merge_stats(recompute(files[:cut]), recompute(files[cut:]))) == _normalize(ref)
    assert _normalize(merge_files_into(recompute(files[:cut]), files[cut:])) == _normalize(ref)
    # The stored JSON carries the whole merge state.
    cols = ["v", "w"]
    again = from_ducklake_json(ref.file_count, ref.column_json(cols))
    assert again == ref and again.column_json(cols) == ref.column_json(cols)
