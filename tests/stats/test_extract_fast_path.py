"""The extractor's fast path (footer, then a page scan for float facts) against its slow path
(reading the columns through pyarrow): the same rows on every file, and no pyarrow read where the
footer and the pages suffice."""

from __future__ import annotations

import math
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from service.parquet.footer import SchemaNode
from service.stats import extract
from service.stats.extract import extract_file
from tests.support.conformance import SHREDDED_VARIANT as CONFORMANCE_DIR
from tests.support.shred_writer import write_shredded


def _rows(path: str) -> list[tuple[object, ...]]:
    out = []
    for p in extract_file(path).paths:
        nan = p.contains_nan
        # Compare floats with their sign: -0.0 and 0.0 are different answers here.
        lo = (p.min_value, math.copysign(1, p.min_value)) if isinstance(p.min_value, float) else p.min_value
        hi = (p.max_value, math.copysign(1, p.max_value)) if isinstance(p.max_value, float) else p.max_value
        out.append((p.column, p.variant_path, str(p.shredded_type), p.value_count, p.null_count, lo, hi, nan))
    return out


def _slow_rows(path: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, ...]]:
    with monkeypatch.context() as m:
        m.setattr(extract, "scan_float_chunk", lambda *a: None)
        return _rows(path)


def _float_leaves_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every FLOAT/DOUBLE leaf the extractor reads through pyarrow."""
    seen: list[str] = []
    original = extract.ColumnReader.batches

    def read(self: extract.ColumnReader, rg: int, nodes: list[SchemaNode], *a: object) -> object:
        seen.extend(".".join(n.path) for n in nodes if n.is_leaf and n.element.type in ("FLOAT", "DOUBLE"))
        return original(self, rg, nodes, *a)

    monkeypatch.setattr(extract.ColumnReader, "batches", read)
    return seen


@pytest.fixture(scope="module")
def duckdb_files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    tmp = tmp_path_factory.mktemp("fast")
    con = duckdb.connect()
    queries = {
        # The benchmark's shape: ints, strings, a double with a zero first, a timestamp.
        "bench": """SELECT {'user': {'id': r::BIGINT, 'name': 'u' || r}, 'score': (r * 1.5)::DOUBLE,
                    'ts': TIMESTAMP '2024-01-01' + INTERVAL (r) MINUTE}::VARIANT AS v FROM range(20) t(r)""",
        "neg_zero_first": """SELECT {'x': CASE WHEN r = 3 THEN '-0.0'::DOUBLE WHEN r = 7 THEN 0.0::DOUBLE
                             ELSE (r + 1)::DOUBLE END}::VARIANT AS v FROM range(10) t(r)""",
        "pos_zero_first": """SELECT {'x': CASE WHEN r = 3 THEN 0.0::DOUBLE WHEN r = 7 THEN '-0.0'::DOUBLE
                             ELSE -(r + 1)::DOUBLE END}::VARIANT AS v FROM range(10) t(r)""",
        "nan": """SELECT {'x': CASE WHEN r = 5 THEN 'nan'::DOUBLE ELSE r::DOUBLE END}::VARIANT AS v
                  FROM range(10) t(r)""",
        "inf_and_nulls": """SELECT CASE WHEN r % 3 = 0 THEN NULL ELSE {'x': CASE WHEN r = 4 THEN 'inf'::DOUBLE
                            ELSE -r::DOUBLE END} END::VARIANT AS v FROM range(12) t(r)""",
        "float32": """SELECT {'f': (r / 3)::FLOAT}::VARIANT AS v FROM range(30) t(r)""",
        "array": """SELECT [r * 0.5, -r * 0.25, 0.0]::DOUBLE[]::VARIANT AS v FROM range(8) t(r)""",
        "many": """SELECT {'x': ((r % 997) * 1.25)::DOUBLE}::VARIANT AS v FROM range(50000) t(r)""",
    }
    out = []
    for name, q in queries.items():
        for codec in ("snappy", "zstd", "uncompressed"):
            p = tmp / f"{name}-{codec}.parquet"
            con.execute(f"COPY ({q}) TO '{p}' (FORMAT parquet, COMPRESSION {codec}, ROW_GROUP_SIZE 16384)")
            out.append(str(p))
    return out


def test_duckdb_float_columns_are_scanned_not_read(
    duckdb_files: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = {p: _slow_rows(p, monkeypatch) for p in duckdb_files}
    reads = _float_leaves_read(monkeypatch)
    floats = 0
    for p in duckdb_files:
        fast = _rows(p)
        assert fast == slow[p], p
        floats += sum(1 for r in fast if r[7] is not None)
        if not Path(p).name.startswith("nan-"):
            assert reads == [], f"{p}: float column read through pyarrow"
        # DuckDB writes no min/max for a chunk holding NaN: only reading gives the bounds.
        reads.clear()
    assert floats >= len(duckdb_files)  # every file above has a float path


def test_signs_of_zero_and_nan_come_from_the_pages(duckdb_files: list[str]) -> None:
    by_name = {Path(p).name: _rows(p) for p in duckdb_files}
    (row,) = by_name["neg_zero_first-snappy.parquet"]
    assert row[5] == (0.0, -1.0) and row[7] is False
    (row,) = by_name["pos_zero_first-zstd.parquet"]
    assert row[6] == (0.0, 1.0)
    (row,) = by_name["nan-uncompressed.parquet"]
    assert row[7] is True and row[6] == (9.0, 1.0)


def test_conformance_files_give_the_same_rows_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted(CONFORMANCE_DIR.glob("*.parquet"))
    assert len(files) > 100
    compared = 0
    for f in files:
        try:
            fast = _rows(str(f))
        except Exception as e:  # reject cases: the slow path must reject them the same way
            with pytest.raises(type(e)):
                _slow_rows(str(f), monkeypatch)
            continue
        assert fast == _slow_rows(str(f), monkeypatch), f.name
        compared += 1
    assert compared > 100


# --- residuals beside shredded objects -------------------------------------------------------


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every leaf the extractor reads through pyarrow."""
    seen: list[str] = []
    original = extract.ColumnReader.batches

    def read(self: extract.ColumnReader, rg: int, nodes: list[SchemaNode], *a: object) -> object:
        seen.extend(".".join(n.path) for n in nodes)
        return original(self, rg, nodes, *a)

    monkeypatch.setattr(extract.ColumnReader, "batches", read)
    return seen


def test_partially_shredded_objects_are_proven_from_the_footer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Spark's shape: every row has fields beyond the shredded ones, so the root residual holds an
    # object in every row. Exact min and max share their first byte, an object header: no read.
    rows = [{"a": i, "extra": f"x{i}", "more": i % 3} for i in range(50)]
    p = write_shredded(tmp_path / "partial.parquet", rows, {"a": "int64"})
    reads = _reads(monkeypatch)
    (row,) = extract_file(str(p)).paths
    assert (row.variant_path, row.min_value, row.max_value, row.null_count) == ('"a"', 0, 49, 0)
    assert reads == []


def test_a_non_object_residual_beside_an_object_is_still_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The residuals start with different bytes (an object header, then a short string's), so the
    # footer proves nothing: the chunk is read, and the invalid row (a string residual beside a
    # non-null shredded object; conformance cases 87 and 128) leaves the path without a row.
    from tests.support.shred_writer import _Encoder

    enc = _Encoder(["a", "extra"])
    vtype = pa.struct(
        [
            pa.field("metadata", pa.binary(), nullable=False),
            pa.field("value", pa.binary()),
            pa.field(
                "typed_value",
                pa.struct([("a", pa.struct([("value", pa.binary()), ("typed_value", pa.int64())]))]),
            ),
        ]
    )
    typed = {"a": {"value": None, "typed_value": 1}}
    good = {"metadata": enc.metadata, "value": enc.bytes({"extra": 1}), "typed_value": typed}
    bad = {"metadata": enc.metadata, "value": enc.bytes("not an object"), "typed_value": typed}
    for name, recs, expect_row in (("valid", [good, good], True), ("invalid", [good, bad, good], False)):
        p = tmp_path / f"{name}.parquet"
        pq.write_table(pa.table({"v": pa.array(recs, vtype)}), p)
        reads = _reads(monkeypatch)
        assert bool(extract_file(str(p)).paths) is expect_row, name
        assert (reads == []) is expect_row, (name, reads)


# --- memory ----------------------------------------------------------------------------------


def _of_service(o: object) -> bool:
    module = getattr(o, "__module__", None) if callable(o) else type(o).__module__
    return isinstance(module, str) and module.startswith("service.")


def test_an_extraction_leaves_no_reference_cycle(tmp_path: Path, duckdb_files: list[str]) -> None:
    # A cycle (a closure calling itself held the footer) is freed only by the garbage collector:
    # its passes over every footer cost a few % of a small remote file's client CPU.
    import gc

    rows = [{"a": i, "o": {"b": f"x{i}"}} for i in range(20)]
    objects = str(write_shredded(tmp_path / "objects.parquet", rows, {"a": "int64", "o": {"b": "varchar"}}))
    files = [objects, *duckdb_files[:6]]
    assert extract_file(objects).objects  # proven objects: the walk that made the cycle runs
    gc.disable()
    try:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the next collection frees is kept in gc.garbage
        for p in files:
            extract_file(p)
        gc.collect()
        # Only shredcat's own objects: another thread of the process may leave garbage of its own.
        ours = {getattr(o, "__qualname__", type(o).__qualname__) for o in gc.garbage if _of_service(o)}
        assert sorted(ours) == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
