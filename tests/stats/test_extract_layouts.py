"""Layouts other than the adopted spec's canonical one: Spark's early design, field order,
URIs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from service.errors import UnsupportedShreddingError
from service.stats.extract import extract_file
from service.variant.binary import encode_metadata, encode_value
from tests.support.shred_writer import to_variant, write_shredded


def _concat(keys: list[str], v: object) -> bytes:
    """Early Spark layout: untyped_value = metadata || value."""
    return encode_metadata(keys) + encode_value(to_variant(v), {k: i for i, k in enumerate(keys)})


def test_early_spark_layout(tmp_path: Path) -> None:
    keys = ["a", "b", "c"]
    leaf_i64 = pa.struct([("untyped_value", pa.binary()), ("typed_value", pa.int64())])
    leaf_str = pa.struct([("untyped_value", pa.binary()), ("typed_value", pa.string())])
    obj = pa.struct([("a", leaf_i64), ("b", leaf_str), ("c", pa.struct([("untyped_value", pa.binary()), ("array", pa.list_(pa.field("element", leaf_i64)))]))])
    vtype = pa.struct([("untyped_value", pa.binary()), ("object", obj)])
    null_concat = _concat(keys, None)
    recs = [
        {"untyped_value": None, "object": {"a": {"untyped_value": None, "typed_value": 5}, "b": {"untyped_value": None, "typed_value": "x"}, "c": {"untyped_value": None, "array": [{"untyped_value": None, "typed_value": 1}, {"untyped_value": None, "typed_value": 9}]}}},
        {"untyped_value": None, "object": {"a": {"untyped_value": null_concat, "typed_value": None}, "b": {"untyped_value": _concat(keys, 1.5), "typed_value": None}, "c": None}},
        {"untyped_value": _concat(keys, "not an object"), "object": None},
    ]
    pq.write_table(pa.table({"v": pa.array(recs, vtype)}), tmp_path / "early.parquet")
    got = {p.variant_path: (p.shredded_type.name, p.value_count, p.null_count, p.min_value, p.max_value) for p in extract_file(str(tmp_path / "early.parquet")).paths}
    # "b" holds a double in untyped_value in row 2: not fully shredded. "a" has a Variant null.
    assert got == {'"a"': ("int64", 1, 2, 5, 5), '"c".element': ("int64", 2, 2, 1, 9)}


def test_value_before_metadata_and_file_uri(tmp_path: Path) -> None:
    f = write_shredded(tmp_path / "a.parquet", [{"a": 1}, {"a": 2}], {"a": "int64"})
    t = pq.read_table(f)
    v = t.column("v").combine_chunks()
    reordered = pa.StructArray.from_arrays([v.field("value"), v.field("typed_value"), v.field("metadata")], names=["value", "typed_value", "metadata"])
    pq.write_table(pa.table({"v": reordered}), tmp_path / "b.parquet")
    fs = extract_file((tmp_path / "b.parquet").as_uri())
    assert [(p.variant_path, p.min_value, p.max_value) for p in fs.paths] == [('"a"', 1, 2)]
    assert fs.path.startswith("file://")


def test_unsupported_typed_value_is_a_typed_error(tmp_path: Path) -> None:
    vtype = pa.struct([("metadata", pa.binary()), ("value", pa.binary()), ("typed_value", pa.uint32())])
    pq.write_table(pa.table({"v": pa.array([{"metadata": b"\x01\x00\x00", "value": None, "typed_value": 1}], vtype)}), tmp_path / "u.parquet")
    with pytest.raises(UnsupportedShreddingError, match="INTEGER\\(32,false\\)"):
        extract_file(str(tmp_path / "u.parquet"))
