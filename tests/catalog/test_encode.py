"""The commit hot path's per-type fast paths equal the reference functions of service.values."""

from __future__ import annotations

import math
import uuid
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from service.catalog.encode import bounds_encoder, prepare_batch, row_width
from service.catalog.validate import validate_batch
from service.errors import InvalidStatsError
from service.stats.merge import recompute
from service.stats.model import PathStats
from service.values import (
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    TS_INFINITY,
    TS_NEG_INFINITY,
    ShreddedType,
    bound_checker,
    check_bound,
    format_bound,
    index_key,
)
from tests.catalog.factories import DEC, FLOAT64, INT64, LIMITS, VARCHAR, committable, fs, ps
from tests.catalog.test_merge import file_paths

TYPE_NAMES = [
    "boolean", "int8", "int16", "int32", "int64", "float32", "float64", "decimal(5,5)", "decimal(18,2)",
    "decimal(38,10)", "decimal(3,0)", "date", "time", "timestamp", "timestamptz", "timestamp_ns",
    "timestamptz_ns", "uuid", "blob", "varchar",
]  # fmt: skip


def values_for(t: ShreddedType) -> st.SearchStrategy:
    k = t.kind.value
    if k == "boolean":
        return st.booleans()
    if k.startswith("int"):
        return st.integers(-(2**63), 2**63 - 1)
    if k.startswith("float"):
        return st.floats(allow_nan=True, width=32 if k == "float32" else 64)
    if k == "decimal":
        return st.decimals(allow_nan=False, allow_infinity=False, places=t.scale)
    if k == "date":
        return st.one_of(
            st.integers(-(2**31), 2**31),
            st.sampled_from([DATE_INFINITY, DATE_NEG_INFINITY, -719162, 2932896, 2932897]),
        )
    if k == "time":
        return st.integers(-1, 86_400_000_001)
    if k.startswith("timestamp"):
        return st.one_of(
            st.integers(-(2**63), 2**63 - 1),
            st.integers(-62135596800000000 - 2, 253402300800000000 + 2),
            st.sampled_from([TS_INFINITY, TS_NEG_INFINITY, 0, 1_700_000_000_000_000]),
        )
    if k == "uuid":
        return st.uuids()
    if k == "blob":
        return st.binary(max_size=8)
    return st.text(max_size=8)


def _outcome(fn, *a):  # type: ignore[no-untyped-def]
    try:
        return ("ok", fn(*a))
    except InvalidStatsError:
        return ("error", None)


@pytest.mark.parametrize("name", TYPE_NAMES)
@settings(max_examples=100, deadline=None)
@given(data=st.data())
def test_fast_paths_equal_reference(name: str, data: st.DataObject) -> None:
    t = ShreddedType.parse(name)
    v = data.draw(
        st.one_of(values_for(t), st.sampled_from([True, 1, 1.0, "1", b"1", Decimal(1), uuid.UUID(int=1)]))
    )
    ref, fast = _outcome(check_bound, t, v), _outcome(bound_checker(t), v)
    if type(v) is str and "\x00" in v and t.name == "varchar":
        assert fast[0] == "error", (t, v)  # a bound to store: NUL refused (service.values.text)
        return
    assert ref[0] == fast[0], (t, v)
    if ref[0] == "error":
        return
    assert fast[1] == ref[1] and type(fast[1]) is type(ref[1])
    if isinstance(ref[1], Decimal):
        assert str(fast[1]) == str(ref[1])
    b = ref[1]
    key = index_key(t, b)
    enc = bounds_encoder(t)(b, None)
    assert enc[0] == format_bound(t, b)
    assert (enc[2], enc[4], enc[6]) == (key.num, key.real, key.bin)
    assert enc[1] is None and enc[3] is None and enc[5] is None and enc[7] is None


def test_prepare_batch_counters_and_widths() -> None:
    b = prepare_batch(
        [
            fs("a", ps('"a"', INT64, -5, 5), ps('"f"', FLOAT64, -0.0, 0.0, nan=True)),
            fs("b", ps('"a"', INT64, None, 7, values=3), ps('"f"', FLOAT64, 1.0, 4.0, nan=None)),
            fs("c", ps('"a"', INT64, None, None, values=0, nulls=2)),
        ]
    )
    a = b.counters[("v", '"a"', "int64")]
    f = b.counters[("v", '"f"', "float64")]
    # files, values, nulls, size, nan, nan-unknown, min-unknown, max-unknown, keyless x2, -0 min, +0 max
    assert a.values() == (3, 13, 2, 300, 0, 3, 1, 0, 0, 0, 0, 0)
    assert f.values() == (2, 20, 0, 200, 1, 1, 0, 0, 0, 0, 1, 1)
    assert b.widths[("v", '"a"', "int64")] == (10, 0.0)
    assert b.widths[("v", '"f"', "float64")][1] >= 3.0
    assert [r[0] for r in b.rows[0]] == ["v", "v"]
    sub = b.subset([2])
    assert {k: c.values() for k, c in sub.counters.items()} == {
        ("v", '"a"', "int64"): (1, 0, 2, 100, 0, 1, 0, 0, 0, 0, 0, 0)
    }
    assert sub.aggregate.file_count == 1


def test_row_width_edges() -> None:
    assert row_width(-(2**63), 2**63 - 1, None, None) == (None, 0.0)
    assert row_width(None, None, -math.inf, math.inf) == (0, None)
    assert row_width(None, None, math.inf, math.inf) == (0, 0.0)
    assert row_width(None, None, -1e308, 1e308) == (0, None)
    w = row_width(None, None, 0.1, 0.3)[1]
    assert w is not None and w > 0.3 - 0.1


@settings(max_examples=200, deadline=None)
@given(st.lists(file_paths(), max_size=6))
def test_prepared_aggregate_equals_recompute(paths: list[list[PathStats]]) -> None:
    files = validate_batch(
        [
            fs(f"f{i}", *map(committable, p), columns=tuple(sorted({x.column for x in p} | {"v"})))
            for i, p in enumerate(paths)
        ],
        LIMITS,
    )
    got = prepare_batch(files).aggregate
    ref = recompute(f.paths for f in files)
    assert got == ref
    assert got.column_json(["v", "w"]) == ref.column_json(["v", "w"])  # -0.0 ties too


def _row(i: int) -> PathStats:
    """Row ``i`` of a large batch: every key family, signed zeros, unknown and keyless bounds."""
    k = i % 5
    if k == 0:
        return ps(f'"p{i}"', INT64, -i, i, values=i % 3)
    if k == 1:
        zero = -0.0 if i % 2 else 0.0
        return ps(f'"p{i}"', FLOAT64, zero, zero if i % 7 else 1.5, nan=(True, False, None)[i % 3])
    if k == 2:
        return ps(f'"p{i}"', VARCHAR, f"a{i}", None if i % 11 == 0 else f"z{i}")
    if k == 3:
        return ps(f'"p{i}"', DEC, Decimal(i).scaleb(-2), Decimal(10**20 + i))  # max beyond int64: keyless
    return ps(f'"p{i}"', INT64, None, None, values=0, nulls=i)


def _renamed(p: PathStats, path: str) -> PathStats:
    return PathStats(
        p.column, path, p.shredded_type, p.column_size_bytes, p.value_count, p.null_count,
        p.min_value, p.max_value, p.contains_nan,
    )  # fmt: skip


@pytest.mark.parametrize("shape", ["one file, 50,000 rows", "50,000 files, one row"])
def test_large_batch_aggregate_equals_recompute(shape: str) -> None:
    # The batch's own global stats and counters are linear in its rows (a file with 10^5 rows
    # once took minutes); here only their values are checked.
    n = 50_000
    if shape.startswith("one"):
        files = [fs("wide", *(_row(i) for i in range(n)))]
    else:
        files = [fs(f"f{j}", _renamed(_row(5 * j + 1), '"p"')) for j in range(n)]  # one float64 path
    b = prepare_batch(files)
    ref = recompute(f.paths for f in files)
    assert b.aggregate == ref
    assert b.aggregate.column_json(["v"]) == ref.column_json(["v"])
    assert sum(c.file_count for c in b.counters.values()) == sum(len(f.paths) for f in files)
    if shape.startswith("one"):
        assert len(ref.paths) == n
        keyless = b.counters[("v", '"p3"', DEC.name)]
        assert (keyless.min_keyless_files, keyless.max_keyless_files) == (0, 1)
    else:
        p = ref.paths[("v", '"p"')]
        assert (str(p.min_value), p.max_value, p.contains_nan) == ("-0.0", 1.5, True)
