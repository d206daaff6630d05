"""The DuckLake peer harness writes real DuckLake tables and reads back what the extension stored."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from .ducklake import ducklake_available, unavailable_reason, write_ducklake_table

pytestmark = pytest.mark.skipif(not ducklake_available(), reason=unavailable_reason())


def test_primitive_root_matches_the_ducklake_pr_example(tmp_path: Path) -> None:
    # The example of duckdb/ducklake#750: a BIGINT at the root of the variant.
    table = write_ducklake_table(tmp_path, "(v VARIANT)", ["SELECT i FROM range(100) t(i)"])

    assert len(table.files) == 1
    f = table.files[0]
    assert Path(f.path).is_absolute() and Path(f.path).is_file()
    assert f.record_count == 100
    [row] = f.rows
    assert row["column_name"] == "v"
    assert (row["variant_path"], row["shredded_type"]) == ("root", "int64")
    assert (row["min_value"], row["max_value"]) == ("0", "99")
    assert (row["value_count"], row["null_count"]) == (100, 0)
    assert row["contains_nan"] is None and row["extra_stats"] is None
    # column_size_bytes is the compressed size of the typed_value chunk(s) of the file.
    md = pq.read_metadata(f.path)
    typed = [
        md.row_group(g).column(c).total_compressed_size
        for g in range(md.num_row_groups)
        for c in range(md.num_columns)
        if md.row_group(g).column(c).path_in_schema == "v.typed_value"
    ]
    assert row["column_size_bytes"] == sum(typed)

    assert table.global_stats == {
        "v": [
            {
                "field_name": "root",
                "shredded_type": "int64",
                "null_count": 0,
                "min": "0",
                "max": "99",
                "num_values": 100,
                "column_size_bytes": row["column_size_bytes"],
                "any_valid": True,
            }
        ]
    }


def test_two_inserts_give_two_files_and_merged_global_stats(tmp_path: Path) -> None:
    table = write_ducklake_table(
        tmp_path,
        "(id INT, v VARIANT)",
        [
            "SELECT i, {'a': i, 'b': 'x' || i} FROM range(10) t(i)",
            "SELECT i, {'a': i + 100} FROM range(5) t(i)",
        ],
    )

    assert [f.record_count for f in table.files] == [10, 5]
    first, second = ({r["variant_path"]: r for r in f.rows} for f in table.files)
    assert set(first) == {'"a"', '"b"'}
    assert (first['"a"']["shredded_type"], first['"a"']["min_value"], first['"a"']["max_value"]) == (
        "int64",
        "0",
        "9",
    )
    assert (first['"b"']["shredded_type"], first['"b"']["min_value"], first['"b"']["max_value"]) == (
        "varchar",
        "x0",
        "x9",
    )
    # The second file has no "b" at all, so only "a" survives DuckLake's global merge;
    # min/max are compared as numbers ("109" > "9").
    assert set(second) == {'"a"'}
    merged_paths = table.global_stats["v"]
    assert isinstance(merged_paths, list) and len(merged_paths) == 1
    merged = merged_paths[0]
    assert merged["field_name"] == '"a"'
    assert (merged["min"], merged["max"], merged["num_values"]) == ("0", "104", 15)


def test_a_workdir_holds_one_catalog(tmp_path: Path) -> None:
    write_ducklake_table(tmp_path, "(v VARIANT)", ["SELECT 1"])
    with pytest.raises(FileExistsError):
        write_ducklake_table(tmp_path, "(v VARIANT)", ["SELECT 2"])
