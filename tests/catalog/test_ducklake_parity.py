"""Global stats against the real DuckLake extension: DuckLake's own per-file rows, committed into
shredcat, give DuckLake's own global JSON wherever DuckLake's merge is not one of its known
defects (order-dependent all-null files, removals)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from service.catalog import Catalog
from service.stats.model import FileStats, PathStats
from service.values import ShreddedType, parse_bound
from tests.peers.ducklake import (
    DuckLakeFileStats,
    ducklake_available,
    unavailable_reason,
    write_ducklake_table,
)

pytestmark = pytest.mark.skipif(not ducklake_available(), reason=unavailable_reason())


def to_file_stats(f: DuckLakeFileStats, column: str) -> FileStats:
    paths = []
    for r in f.rows:
        t = ShreddedType.parse(r["shredded_type"])
        paths.append(
            PathStats(
                column=column,
                variant_path=r["variant_path"],
                shredded_type=t,
                column_size_bytes=r["column_size_bytes"],
                value_count=r["value_count"],
                null_count=r["null_count"],
                min_value=None if r["min_value"] is None else parse_bound(t, r["min_value"]),
                max_value=None if r["max_value"] is None else parse_bound(t, r["max_value"]),
                contains_nan=r["contains_nan"],
                extra_stats=r["extra_stats"],
            )
        )
    with open(f.path, "rb") as fh:  # the real size and footer length: the validator checks both
        size = fh.seek(-8, os.SEEK_END) + 8
        footer = int.from_bytes(fh.read(4), "little")
    return FileStats(f.path, size, f.record_count, footer, f"dl-{f.data_file_id}", (column,), tuple(paths))


def test_global_json_equals_ducklakes(catalog: Catalog, tmp_path: Path) -> None:
    inserts = [
        "SELECT {'i': i, 'd': i::DOUBLE / 7, 's': 'k' || (i % 13), 'dt': DATE '2024-01-01' + i::INT, "
        "'p': (i / 3)::DECIMAL(9,2), 'b': i % 2 = 0, 'n': NULL::INT}::VARIANT FROM range(0, 50) t(i)",
        "SELECT {'i': i * 1000, 'd': -i::DOUBLE, 's': 'a' || i, 'dt': DATE '1999-12-31' - i::INT, "
        "'p': (-i)::DECIMAL(9,2), 'b': true, 'n': NULL::INT}::VARIANT FROM range(9, 20) t(i)",
        "SELECT {'i': 9 + i, 'd': 'inf'::DOUBLE, 's': 'zz', 'dt': DATE '2030-05-05', "
        "'p': 12345.67::DECIMAL(9,2), 'b': false, 'n': NULL::INT, 'x': 1}::VARIANT FROM range(3) t(i)",
    ]
    dl = write_ducklake_table(tmp_path, "(v VARIANT)", inserts, pre_sql=["SET threads = 1"])
    assert len(dl.files) == 3
    catalog.create_table("dl", "t", ["v"])
    for f in dl.files:  # one commit per DuckLake insert, in DuckLake's order
        catalog.commit("dl", "t", [to_file_stats(f, "v")])
    ours = json.loads(catalog.global_stats_json("dl", "t")["v"])
    theirs = dl.global_stats["v"]
    assert isinstance(theirs, list)
    key = lambda o: o["field_name"]  # noqa: E731
    assert sorted(ours, key=key) == sorted(theirs, key=key)
    assert [list(o) for o in sorted(ours, key=key)] == [list(o) for o in sorted(theirs, key=key)]
    assert {o["field_name"] for o in ours} >= {'"i"', '"d"', '"s"', '"dt"', '"p"', '"b"'}


def test_where_shredcat_deliberately_differs(catalog: Catalog, tmp_path: Path) -> None:
    """DuckLake loses min/max for good when the first file holds no value of a path; shredcat's
    merge is order-independent (NOTES §2)."""
    inserts = [
        # An all-null path is shredded as int32 by DuckDB, so the values are int32 too.
        "SELECT {'a': NULL::INT, 'b': i}::VARIANT FROM range(5) t(i)",
        "SELECT {'a': i::INT, 'b': i}::VARIANT FROM range(10, 20) t(i)",
    ]
    dl = write_ducklake_table(tmp_path, "(v VARIANT)", inserts, pre_sql=["SET threads = 1"])
    catalog.create_table("dl", "t", ["v"])
    for f in dl.files:
        catalog.commit("dl", "t", [to_file_stats(f, "v")])
    theirs = {o["field_name"]: o for o in dl.global_stats["v"]}  # type: ignore[union-attr]
    ours = {o["field_name"]: o for o in json.loads(catalog.global_stats_json("dl", "t")["v"])}
    assert set(ours) == set(theirs) == {'"a"', '"b"'}
    assert "min" not in theirs['"a"'] and "max" not in theirs['"a"']  # DuckLake's defect
    assert (ours['"a"']["min"], ours['"a"']["max"]) == ("10", "19")
    assert {k: v for k, v in ours['"a"'].items() if k not in ("min", "max")} == theirs['"a"']
    assert ours['"b"'] == theirs['"b"']
