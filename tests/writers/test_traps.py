"""Issue 30, point 1: every trap file a real writer makes gives the rows its data proves, through
the extractor, ``shredcat stats --columns`` and a commit (both backends) alike, and one bad file
among them is one error naming it, never a traceback that takes the other files with it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from service.catalog import Catalog
from service.errors import InvalidParquetError
from service.stats.extract import extract_file
from tests.support.cli import shredcat
from tests.writers.traps import EXPECTED, Row, write_traps


@pytest.fixture(scope="module")
def traps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return write_traps(tmp_path_factory.mktemp("traps"))


def _row(c: Any) -> Row:
    r = c.ducklake_row()
    return (r["value_count"], r["null_count"], r["min_value"], r["max_value"], r["contains_nan"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_trap_gives_the_rows_its_data_proves(traps: dict[str, Path], name: str) -> None:
    fs = extract_file(str(traps[name]))
    assert {c.column: _row(c) for c in fs.columns} == EXPECTED[name]


def _run(args: list[str], cwd: Path, *, real: bool = False) -> subprocess.CompletedProcess[str]:
    """``shredcat *args``: each behaviour once in a real process, its variations in this one."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    return shredcat(args, env, real=real, cwd=cwd, timeout=300)


def test_stats_prints_every_trap_and_one_line_for_the_bad_file(traps: dict[str, Path], tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1" + b"\x00" * 40 + b"PAR1")
    names = sorted(EXPECTED)
    # The bad file in the middle: the files after it are still read.
    paths = [str(traps[n]) for n in names[:3]] + [str(bad)] + [str(traps[n]) for n in names[3:]]
    r = _run(["stats", "--columns", *paths], tmp_path, real=True)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"shredcat: {bad}: "), r.stderr
    got: dict[str, dict[str, Row]] = {n: {} for n in names}
    for line in r.stdout.splitlines():
        row = json.loads(line)
        got[Path(row["file"]).stem][row["column"]] = (
            row["value_count"], row["null_count"], row["min_value"], row["max_value"], row["contains_nan"]
        )  # fmt: skip
    assert got == EXPECTED
    # Without the bad file: exit 0, nothing on stderr.
    ok = _run(["stats", "--columns", *(str(traps[n]) for n in names)], tmp_path)
    assert (ok.returncode, ok.stderr) == (0, "")


def test_register_takes_every_trap_and_refuses_a_bad_file_alone(traps: dict[str, Path], tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'c.db'}"
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    paths = [str(traps[n]) for n in sorted(EXPECTED)]
    r = _run(["register", "--database-url", db, "--table", "z.t", paths[0], str(bad), *paths[1:]], tmp_path, real=True)
    assert r.returncode == 1
    assert r.stderr.count("\n") == 1 and str(bad) in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert _run(["tables", "--database-url", db, "--json"], tmp_path).stdout.strip() in ("", "[]")
    r = _run(["register", "--database-url", db, "--table", "z.t", *paths], tmp_path)
    assert r.returncode == 0, r.stderr


def test_a_commit_stores_what_stats_printed(traps: dict[str, Path], catalog: Catalog) -> None:
    files = [extract_file(str(traps[n])) for n in sorted(EXPECTED)]
    catalog.create_table("z", "t", [])
    catalog.commit("z", "t", files)
    for f in files:
        stored = catalog.file_stats("z", "t", f.path)
        assert {c.column: _row(c) for c in stored.columns} == {c.column: _row(c) for c in f.columns}


def test_a_file_no_reader_foresaw_is_one_error_naming_it(tmp_path: Path) -> None:
    """A footer that parses but whose data pyarrow cannot decode: an InvalidParquetError naming
    the file (the last safety net turns any other exception into one too)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "torn.parquet"
    pq.write_table(pa.table({"d": pa.array([1.5, None, 2.5] * 1000)}), path, write_statistics=False, compression="zstd")
    data = bytearray(path.read_bytes())
    data[10:40] = b"\xff" * 30  # inside the column chunk's data page
    path.write_bytes(bytes(data))
    with pytest.raises(InvalidParquetError) as e:
        extract_file(str(path))
    assert e.value.message.startswith(f"{path}: ") and "\n" not in e.value.message
    assert e.value.details["file"] == str(path)


def test_a_string_column_holding_bytes_that_are_not_utf8(tmp_path: Path) -> None:
    """pyarrow does not check UTF-8 when it reads: such values leave the bounds unknown (counts
    exact), never an untranslated UnicodeDecodeError (found by tests/writers/test_fuzz.py)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "latin1.parquet"
    pq.write_table(
        pa.table({"s": pa.array(["caf\u00e9-marker", None, "b"])}),
        path, write_statistics=False, use_dictionary=False, compression="NONE",
    )  # fmt: skip
    data = path.read_bytes()
    at = data.index("\u00e9-marker".encode())
    path.write_bytes(data[:at] + b"\xe9\xff" + data[at + 2 :])  # the same length, not UTF-8
    (row,) = extract_file(str(path)).columns
    assert (row.value_count, row.null_count, row.min_value, row.max_value) == (2, 1, None, None)


def test_a_variant_column_named_empty_gets_no_rows_and_registers(tmp_path: Path, catalog: Catalog) -> None:
    """A Variant column named '' (the catalog cannot store the name): no Variant column, no
    path rows, its leaves no plain rows either; the file's other columns as usual, and a commit
    takes it, so that ``stats`` and ``register`` agree."""
    from tests.support.shred_writer import write_shredded

    path = write_shredded(tmp_path / "ev.parquet", [{"a": 1}, {"a": 2}], {"a": "int64"}, column="")
    fs = extract_file(str(path))
    assert (fs.variant_columns, fs.paths, [c.column for c in fs.columns]) == ((), (), ["id"])
    catalog.create_table("z", "ev", [])
    assert len(catalog.commit("z", "ev", [fs]).added) == 1


def test_deprecated_min_max_are_ignored_where_their_signed_order_is_unsound(tmp_path: Path) -> None:
    """parquet.thrift: the obsolete min/max are "always sorted by signed comparison regardless of
    column_orders": bounds of signed numbers, never of unsigned ones (2^63 sorts below 1) nor of
    byte arrays, whether the footer has column orders or not. Checked on a real footer whose
    statistics are moved to the deprecated fields."""
    import dataclasses

    import pyarrow as pa
    import pyarrow.parquet as pq

    from service.parquet.footer import build_schema_tree, iter_leaves
    from service.parquet.io import open_parquet, read_metadata
    from service.stats.extract import _usable_raw_bounds

    path = tmp_path / "old.parquet"
    table = pa.table({"u": pa.array([1, 2**63 + 5], pa.uint64()), "i": pa.array([-3, 9]), "s": pa.array(["a", "é"])})
    pq.write_table(table, path)
    with open_parquet(str(path)) as (info, f, _):
        meta, _ = read_metadata(f, info.size)
    leaves = {leaf.name: leaf for leaf in iter_leaves(build_schema_tree(meta.schema))}
    for orders in (meta.column_orders, None):
        m = dataclasses.replace(meta, column_orders=orders)
        got = {}
        for name, leaf in leaves.items():
            cm = m.row_groups[0].columns[leaf.leaf_index].meta_data
            st = cm.statistics
            old = dataclasses.replace(st, min=st.min_value, max=st.max_value, min_value=None, max_value=None)
            got[name] = _usable_raw_bounds(m, leaf, dataclasses.replace(cm, statistics=old)) != (None, None)
        assert got == {"u": False, "i": True, "s": False}, orders
