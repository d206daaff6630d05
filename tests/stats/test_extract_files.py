"""The extractor on files built by the test writer (pyarrow): every row checked against ground
truth computed from the Python rows themselves."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.errors import FileAccessError, InvalidParquetError
from service.stats.extract import extract_file
from service.stats.model import PathStats
from service.values import ShreddedType
from service.variant.paths import quote_field
from tests.support.shred_writer import EPOCH, EPOCH_DT, MISSING, _fits, write_shredded

# --- ground truth ---------------------------------------------------------------------------


def _leaves(spec: Any, segs: tuple[tuple[str, bool], ...] = ()) -> list[tuple[tuple[tuple[str, bool], ...], str]]:
    if isinstance(spec, dict):
        out = []
        for k, sub in spec.items():
            out += _leaves(sub, (*segs, (k, False)))
        return out
    if isinstance(spec, list):
        return _leaves(spec[0], (*segs, ("element", True)))
    return [(segs, spec)]


def _entries(v: Any, segs: tuple[tuple[str, bool], ...]) -> list[Any]:
    if not segs:
        return [v]
    (name, is_elem), rest = segs[0], segs[1:]
    if v is MISSING or v is None:
        return [MISSING]
    if is_elem:
        if not isinstance(v, list) or not v:
            return [MISSING]
        return [e for x in v for e in _entries(x, rest)]
    if not isinstance(v, dict) or name not in v:
        return [MISSING]
    return _entries(v[name], rest)


def _as_bound(t: ShreddedType, v: Any) -> Any:
    if isinstance(v, dt.datetime):
        base = EPOCH_DT if v.tzinfo is None else dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
        return (v - base) // dt.timedelta(microseconds=1)
    if isinstance(v, dt.date):
        return (v - EPOCH).days
    return v


def expected_rows(rows: list[Any], spec: Any, sql_null: set[int] = frozenset()) -> dict[str, dict[str, Any]]:  # type: ignore[assignment]
    out = {}
    for segs, tname in _leaves(spec):
        path = ".".join("element" if e else quote_field(n) for n, e in segs) or "root"
        ents = [e for i, r in enumerate(rows) for e in _entries(MISSING if i in sql_null else r, segs)]
        present = [e for e in ents if e is not MISSING and e is not None]
        if not all(_fits(tname, e) for e in present):
            continue
        t = ShreddedType.parse(tname)
        vals = [_as_bound(t, e) for e in present]
        real = [x for x in vals if not (isinstance(x, float) and math.isnan(x))]
        out[path] = {
            "shredded_type": t.name,
            "value_count": len(present),
            "null_count": len(ents) - len(present),
            "min": min(real) if real else None,
            "max": max(real) if real else None,
            "contains_nan": (len(real) != len(vals)) if t.is_float else None,
        }
    return out


def actual_rows(paths: tuple[PathStats, ...]) -> dict[str, dict[str, Any]]:
    return {
        p.variant_path: {
            "shredded_type": p.shredded_type.name,
            "value_count": p.value_count,
            "null_count": p.null_count,
            "min": p.min_value,
            "max": p.max_value,
            "contains_nan": p.contains_nan,
        }
        for p in paths
    }


SPEC = {"a": "int64", "b": {"c": "varchar", "d": "float64"}, "tags": ["int32"], "when": "date", "amt": "decimal(9,2)"}


def _row(i: int) -> dict[str, Any]:
    return {
        "a": i,
        "b": {"c": f"s{i:03d}", "d": float(i) / 3},
        "tags": [i, i + 1],
        "when": dt.date(2024, 1, 1) + dt.timedelta(days=i),
        "amt": Decimal(i).scaleb(-2).quantize(Decimal("0.01")),
    }


# --- tests ----------------------------------------------------------------------------------


def test_ground_truth_for_a_plain_file(tmp_path: Path) -> None:
    rows = [_row(i) for i in range(50)]
    f = write_shredded(tmp_path / "a.parquet", rows, SPEC)
    fs = extract_file(str(f))
    assert actual_rows(fs.paths) == expected_rows(rows, SPEC)
    assert set(actual_rows(fs.paths)) == {'"a"', '"b"."c"', '"b"."d"', '"tags".element', '"when"', '"amt"'}
    assert fs.record_count == 50 and fs.variant_columns == ("v",)


@pytest.mark.parametrize(
    "options",
    [
        {"write_statistics": False},
        {"row_group_size": 7},
        {"compression": "gzip"},
        {"compression": "zstd", "row_group_size": 3, "write_statistics": False},
        {"compression": "none"},
    ],
)
def test_footer_and_data_paths_agree(tmp_path: Path, options: dict[str, Any]) -> None:
    """Statistics off (data is read), many row groups and codecs give identical rows, except
    the compressed size which depends on the codec."""
    rows = [_row(i) for i in range(40)]
    base = extract_file(str(write_shredded(tmp_path / "base.parquet", rows, SPEC)))
    other = extract_file(str(write_shredded(tmp_path / "o.parquet", rows, SPEC, **options)))
    assert actual_rows(other.paths) == actual_rows(base.paths) == expected_rows(rows, SPEC)


def test_late_mismatch_is_not_fully_shredded(tmp_path: Path) -> None:
    # Spark-like: the schema says int64 but a late row holds a string, written to `value`.
    rows: list[Any] = [{"a": i, "k": "x"} for i in range(100)] + [{"a": "n/a", "k": "y"}]
    f = write_shredded(tmp_path / "late.parquet", rows, {"a": "int64", "k": "varchar"}, row_group_size=30)
    got = actual_rows(extract_file(str(f)).paths)
    assert '"a"' not in got, "Should not report: a string sits in the value column of the last row group"
    assert got['"k"']["value_count"] == 101


def test_variant_nulls_missing_fields_and_sql_nulls_count_as_nulls(tmp_path: Path) -> None:
    rows: list[Any] = [{"a": 1}, {"a": None}, {}, "not an object", {"a": 5}, None, {"a": 3}]
    f = write_shredded(tmp_path / "n.parquet", rows, {"a": "int64"}, sql_null_rows=[6])
    got = actual_rows(extract_file(str(f)).paths)
    assert got == expected_rows(rows, {"a": "int64"}, {6})
    assert got['"a"'] == {
        "shredded_type": "int64",
        "value_count": 2,
        "null_count": 5,
        "min": 1,
        "max": 5,
        "contains_nan": None,
    }


def test_nan_infinities_and_signed_zeros(tmp_path: Path) -> None:
    rows = [{"d": x} for x in (0.0, -0.0, float("nan"), 2.5, float("-inf"))]
    got = extract_file(str(write_shredded(tmp_path / "f.parquet", rows, {"d": "float64"}))).paths[0]
    assert got.contains_nan is True
    assert got.min_value == -math.inf and got.max_value == 2.5
    row = got.ducklake_row()
    assert (row["min_value"], row["max_value"], row["contains_nan"]) == ("-inf", "2.5", True)
    zeros = extract_file(str(write_shredded(tmp_path / "z.parquet", [{"d": -0.0}, {"d": 0.0}], {"d": "float64"})))
    # DuckDB keeps the first zero seen for both bounds.
    assert zeros.paths[0].ducklake_row()["min_value"] == "-0.0"
    assert zeros.paths[0].ducklake_row()["max_value"] == "-0.0"
    only_nan = extract_file(str(write_shredded(tmp_path / "n.parquet", [{"d": float("nan")}], {"d": "float64"})))
    p = only_nan.paths[0]
    assert (p.min_value, p.max_value, p.contains_nan, p.value_count) == (None, None, True, 1)


def test_long_strings_follow_ducklakes_256_byte_rule(tmp_path: Path) -> None:
    long_a = "a" * 300
    rows = [{"s": long_a}, {"s": "b" * 10}]
    p = extract_file(str(write_shredded(tmp_path / "s.parquet", rows, {"s": "varchar"}))).paths[0]
    assert p.min_value == "a" * 256
    assert p.max_value == "b" * 10
    rows = [{"s": "z" * 300}]
    p = extract_file(str(write_shredded(tmp_path / "t.parquet", rows, {"s": "varchar"}))).paths[0]
    assert p.max_value == "z" * 255 + "{"  # last byte below 0x7F incremented


def test_field_names_are_quoted_like_ducklake(tmp_path: Path) -> None:
    spec = {'we"ird': "int64", "x.y": {"s t": ["varchar"]}, "element": "int64", "root": "int64", "ü": "int64"}
    rows = [{'we"ird': 1, "x.y": {"s t": ["q"]}, "element": 2, "root": 3, "ü": 4}]
    got = actual_rows(extract_file(str(write_shredded(tmp_path / "q.parquet", rows, spec))).paths)
    assert set(got) == {'"we""ird"', '"x.y"."s t".element', '"element"', '"root"', '"ü"'}


def test_root_primitive_and_root_array(tmp_path: Path) -> None:
    got = actual_rows(extract_file(str(write_shredded(tmp_path / "r.parquet", [1, 2, None], "int64"))).paths)
    assert got["root"]["value_count"] == 2 and got["root"]["null_count"] == 1
    rows: list[Any] = [[1, 2], [], None, [None, 4]]
    got = actual_rows(extract_file(str(write_shredded(tmp_path / "e.parquet", rows, ["int64"]))).paths)
    # One entry per element, plus one null per empty array, null element and null row.
    assert got["element"] == {
        "shredded_type": "int64",
        "value_count": 3,
        "null_count": 3,
        "min": 1,
        "max": 4,
        "contains_nan": None,
    }


def test_variant_null_beside_a_typed_value_is_invalid(tmp_path: Path) -> None:
    vtype = pa.struct(
        [
            pa.field("metadata", pa.binary(), nullable=False),
            pa.field("value", pa.binary()),
            pa.field("typed_value", pa.int64()),
        ]
    )
    recs = [
        {"metadata": b"\x01\x00\x00", "value": None, "typed_value": 1},
        {"metadata": b"\x01\x00\x00", "value": b"\x00", "typed_value": 2},  # both set: invalid
    ]
    pq.write_table(pa.table({"v": pa.array(recs, vtype)}), tmp_path / "c.parquet")
    assert extract_file(str(tmp_path / "c.parquet")).paths == ()


def test_bad_input_gets_typed_errors(tmp_path: Path) -> None:
    (tmp_path / "text.parquet").write_text("hello, not parquet")
    with pytest.raises(InvalidParquetError):
        extract_file(str(tmp_path / "text.parquet"))
    good = write_shredded(tmp_path / "g.parquet", [{"a": 1}], {"a": "int64"}).read_bytes()
    (tmp_path / "trunc.parquet").write_bytes(good[: len(good) - 20])
    with pytest.raises(InvalidParquetError):
        extract_file(str(tmp_path / "trunc.parquet"))
    (tmp_path / "empty.parquet").write_bytes(b"")
    with pytest.raises(InvalidParquetError):
        extract_file(str(tmp_path / "empty.parquet"))
    with pytest.raises(FileAccessError):
        extract_file(str(tmp_path / "missing.parquet"))
    with pytest.raises(FileAccessError):
        extract_file(str(tmp_path))


def test_files_without_variant_columns(tmp_path: Path) -> None:
    pq.write_table(pa.table({"x": [1, 2], "s": pa.array([{"metadata": 1}, None], pa.struct([("metadata", pa.int64())]))}), tmp_path / "p.parquet")
    fs = extract_file(str(tmp_path / "p.parquet"))
    assert fs.variant_columns == () and fs.paths == ()


def test_variant_nested_in_a_struct(tmp_path: Path) -> None:
    inner = tmp_path / "inner.parquet"
    write_shredded(inner, [{"a": 1}, {"a": 2}], {"a": "int64"})
    t = pq.read_table(inner)
    nested = pa.table({"s": pa.StructArray.from_arrays([t.column("v").combine_chunks()], names=["v"])})
    pq.write_table(nested, tmp_path / "n.parquet")
    fs = extract_file(str(tmp_path / "n.parquet"))
    assert fs.variant_columns == ("s.v",)
    assert [(p.column, p.variant_path, p.min_value, p.max_value) for p in fs.paths] == [("s.v", '"a"', 1, 2)]


# --- property: random rows, random row groups, stats on/off --------------------------------

_scalar = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.text(max_size=6),
    st.none(),
    st.just(MISSING),
)
_row_strategy = st.one_of(
    st.fixed_dictionaries(
        {},
        optional={
            "a": _scalar,
            "b": st.one_of(st.fixed_dictionaries({}, optional={"c": _scalar}), _scalar),
            "l": st.one_of(st.lists(_scalar.filter(lambda x: x is not MISSING), max_size=3), _scalar),
        },
    ),
    _scalar.filter(lambda x: x is not MISSING),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(_row_strategy, min_size=1, max_size=25),
    spec_a=st.sampled_from(["int64", "float64", "varchar"]),
    spec_c=st.sampled_from(["int64", "varchar"]),
    rg=st.sampled_from([None, 2, 5]),
    stats=st.booleans(),
)
def test_random_files_match_ground_truth(
    tmp_path: Path, rows: list[Any], spec_a: str, spec_c: str, rg: int | None, stats: bool
) -> None:
    rows = [{k: v for k, v in r.items() if v is not MISSING} if isinstance(r, dict) else r for r in rows]
    rows = [
        {**r, "b": {k: v for k, v in r["b"].items() if v is not MISSING}} if isinstance(r, dict) and isinstance(r.get("b"), dict) else r
        for r in rows
    ]
    spec = {"a": spec_a, "b": {"c": spec_c}, "l": ["int64"]}
    f = write_shredded(tmp_path / "h.parquet", rows, spec, row_group_size=rg, write_statistics=stats)
    got = actual_rows(extract_file(str(f)).paths)
    want = expected_rows(rows, spec)
    # NaN bounds compare by identity of None; floats by value (-0.0 == 0.0 is fine here).
    assert got == want
