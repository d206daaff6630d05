"""The extractor against every apache/parquet-testing shredded_variant case.

Ground truth comes from the expected Variant values (`*.variant.bin`), not from the Parquet
file: each reported path is re-derived by walking the decoded values, so a wrong count, a wrong
bound or a path that is not really fully shredded fails here.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

import pytest

from service.errors import InvalidParquetError, UnsupportedShreddingError
from service.stats.extract import extract_file
from service.values import Kind, ShreddedType
from service.variant.binary import VariantValue, decode, metadata_length
from service.variant.paths import parse_variant_path_steps
from tests.support.conformance import SHREDDED_VARIANT as CORPUS
from tests.support.conformance import require_corpus

# Variant primitive kinds -> the shredded type kind that holds them exactly.
VARIANT_TO_KIND = {
    "boolean": Kind.BOOLEAN,
    "int8": Kind.INT8,
    "int16": Kind.INT16,
    "int32": Kind.INT32,
    "int64": Kind.INT64,
    "float": Kind.FLOAT32,
    "double": Kind.FLOAT64,
    "decimal4": Kind.DECIMAL,
    "decimal8": Kind.DECIMAL,
    "decimal16": Kind.DECIMAL,
    "date": Kind.DATE,
    "time": Kind.TIME,
    "timestamptz": Kind.TIMESTAMPTZ,
    "timestampntz": Kind.TIMESTAMP,
    "timestamptz_ns": Kind.TIMESTAMPTZ_NS,
    "timestampntz_ns": Kind.TIMESTAMP_NS,
    "binary": Kind.BLOB,
    "string": Kind.VARCHAR,
    "uuid": Kind.UUID,
}


def _cases() -> list[dict[str, Any]]:
    if not CORPUS.exists():
        return []
    return [c for c in json.loads((CORPUS / "cases.json").read_text()) if "parquet_file" in c]


def _expected_rows(case: dict[str, Any]) -> list[VariantValue | None]:
    files = case.get("variant_files") or [case["variant_file"]]
    out: list[VariantValue | None] = []
    for name in files:
        if name is None:
            out.append(None)
            continue
        raw = (CORPUS / name).read_bytes()
        n = metadata_length(raw)
        out.append(decode(raw[:n], raw[n:]))
    return out


def _entries(v: VariantValue | None, segments: list[tuple[str, bool]]) -> list[VariantValue | None]:
    """The leaf entries a path addresses in one row, with DuckLake's counting: a missing key or
    a value of another shape is one null entry; an array gives one entry per element (and one
    null entry when empty)."""
    if not segments:
        return [v]
    seg, rest = segments[0], segments[1:]
    if v is None or v.kind == "null":
        return [None]
    if seg[1]:
        if v.kind != "array":
            return [None]
        if not v.elements:
            return [None]
        out: list[VariantValue | None] = []
        for e in v.elements:
            out.extend(_entries(e, rest))
        return out
    if v.kind != "object" or seg[0] not in v.fields:
        return [None]
    return _entries(v.fields[seg[0]], rest)


def _bound(t: ShreddedType, v: VariantValue) -> Any:
    if t.kind is Kind.DECIMAL:
        return Decimal(v.value)  # type: ignore[arg-type]
    return v.value


def _check_case(case: dict[str, Any]) -> None:
    path = CORPUS / case["parquet_file"]
    fs = extract_file(str(path))
    rows = _expected_rows(case)
    assert fs.record_count == len(rows)
    for ps in fs.paths:
        segs = parse_variant_path_steps(ps.variant_path)
        entries = [e for row in rows for e in _entries(row, list(segs))]
        present = [e for e in entries if e is not None and e.kind != "null"]
        t = ps.shredded_type
        for e in present:
            assert VARIANT_TO_KIND.get(e.kind) is t.kind, (
                f"{case['parquet_file']} {ps.variant_path}: reported fully shredded as {t.name} but a row holds {e.kind}"
            )
        assert ps.value_count == len(present), ps
        assert ps.null_count == len(entries) - len(present), ps
        values = [_bound(t, e) for e in present]
        real = [x for x in values if not (isinstance(x, float) and math.isnan(x))]
        if t.is_float:
            assert ps.contains_nan is (len(real) != len(values))
        if real:
            assert ps.min_value == min(real) and ps.max_value == max(real), ps
        else:
            assert ps.min_value is None and ps.max_value is None


CASES = _cases()


# Without the corpus one placeholder case runs, so the run skips (laptop) or fails (CI=true).
@pytest.mark.parametrize("case", CASES or [None], ids=[c["parquet_file"] for c in CASES] or ["corpus-missing"])
def test_conformance_case(case: dict[str, Any] | None) -> None:
    if case is None:
        require_corpus(CORPUS)
        return
    if "error_message" in case:
        # Readers must reject these. For stats: a typed error, or no row for any path.
        try:
            fs = extract_file(str(CORPUS / case["parquet_file"]))
        except (UnsupportedShreddingError, InvalidParquetError):
            return
        assert fs.paths == (), f"Should reject: {case['error_message']}; got {fs.paths}"
        return
    if "-INVALID" in case["parquet_file"]:
        # Either behaviour is allowed, but whatever we report must still be true of the data
        # a spec reader returns (`typed_value` wins), which is what the expected value shows.
        pass
    _check_case(case)


def test_corpus_is_complete() -> None:
    require_corpus(CORPUS)
    assert len(list(CORPUS.glob("*.parquet"))) == 137
    assert len(CASES) == 137


def test_reported_paths_cover_the_corpus() -> None:
    """Guards against an extractor that reports nothing: the valid single-type cases must yield
    rows (every primitive kind of the spec appears in the corpus)."""
    require_corpus(CORPUS)
    kinds = set()
    for case in CASES:
        if "error_message" in case:
            continue
        for ps in extract_file(str(CORPUS / case["parquet_file"])).paths:
            kinds.add(ps.shredded_type.kind)
    assert kinds >= set(VARIANT_TO_KIND.values())


def test_plain_columns_of_the_corpus() -> None:
    """Every corpus file has one plain column, ``id`` (int32), beside its Variant column: its row
    must hold the counts and bounds of the data itself (read with pyarrow), and the Variant
    column's own leaves (metadata, value, typed_value) must never appear as plain columns."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    require_corpus(CORPUS)
    checked = 0
    for path in sorted(CORPUS.glob("*.parquet")):
        try:
            fs = extract_file(str(path))
        except (UnsupportedShreddingError, InvalidParquetError):
            continue
        ids = pq.read_table(path, columns=["id"])["id"]
        (row,) = fs.columns
        assert (row.column, row.column_type) == ("id", ShreddedType(Kind.INT32))
        assert (row.value_count, row.null_count) == (len(ids) - ids.null_count, ids.null_count)
        mm = pc.min_max(ids)
        assert (row.min_value, row.max_value) == (mm["min"].as_py(), mm["max"].as_py())
        checked += 1
    assert checked >= 130
