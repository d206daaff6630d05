"""Issue 30, point 2: per-file limits. A schema over the depth, leaf or shredded-path limit is
refused before it is walked (LimitExceededError, 413 over REST, one line in the CLI); facts needing
more column data than the file's budget are unknown (fewer bounds or no row), never a crash; and
column data is read in batches, so memory does not grow with the row group."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from bench.hostile import VARIANT_METADATA, write_chains, write_deep, write_paths
from service.errors import InvalidParquetError, LimitExceededError
from service.limits import FileLimits
from service.parquet.footer.read import count_schema_leaves, parse_file_metadata, schema_elements_stated
from service.stats.extract import extract_file
from tests.api.conftest import ADMIN, WRITER, app_factory, assert_error, warehouse  # noqa: F401
from tests.support.cli import SHREDCAT


@pytest.mark.parametrize(
    ("write", "limits", "message", "limit"),
    [
        (lambda p: write_deep(p, depth=70, leaves=3), FileLimits(), "more than 64 levels deep", "max_schema_depth"),
        (lambda p: write_deep(p, depth=3, leaves=1500), FileLimits(max_schema_leaves=1000), "1500 leaf columns, more than 1000", "max_schema_leaves"),
        # More elements than twice the leaf limit and one: the leaves counted before the footer is
        # decoded name the exact reason, the leaf limit or groups past the element budget.
        (lambda p: write_deep(p, depth=3, leaves=2500), FileLimits(max_schema_leaves=1000), "2500 leaf columns, more than 1000 (the limit SHREDCAT_MAX_SCHEMA_LEAVES; counted before the footer is decoded)", "max_schema_leaves"),
        (lambda p: write_chains(p, chains=40, depth=60), FileLimits(max_schema_leaves=1000), "2441 elements, more than 2001 (2400 groups over 40 leaf columns: within the leaf limit, but more groups than leaves", "max_schema_leaves"),
        (lambda p: write_paths(p, fields=50), FileLimits(max_shredded_paths=10), "50 typed_value leaves (shredded paths), more than 10", "max_shredded_paths"),
    ],
)  # fmt: skip
def test_a_schema_over_a_limit_is_refused_naming_the_numbers(
    tmp_path: Path, write: Callable[[Path], None], limits: FileLimits, message: str, limit: str
) -> None:
    path = tmp_path / "hostile.parquet"
    write(path)
    with pytest.raises(LimitExceededError) as e:
        extract_file(str(path), limits=limits)
    assert e.value.message.startswith(f"{path}: ") and message in e.value.message
    assert e.value.details["limit"] == limit and e.value.http_status == 413
    # Within the limits the same file is read (it has no row groups).
    roomy = FileLimits(max_schema_depth=100, max_schema_leaves=10_000, max_shredded_paths=100)
    assert extract_file(str(path), limits=roomy).record_count == 0


def test_the_cli_and_rest_refuse_it_the_same_way(tmp_path: Path, app_factory: Callable[..., TestClient]) -> None:  # noqa: F811
    lake = tmp_path / "lake"
    lake.mkdir()
    path = lake / "deep.parquet"
    write_deep(path, depth=70, leaves=3)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    r = subprocess.run([*SHREDCAT, "stats", str(path)], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [f"shredcat: {path}: the schema nests groups more than 64 levels deep (the limit SHREDCAT_MAX_SCHEMA_DEPTH)"]
    # A smaller configured limit applies over REST too.
    paths = lake / "paths.parquet"
    write_paths(paths, fields=50)
    client = app_factory(roots=[str(lake)], max_shredded_paths=10)
    client.post("/v1/namespaces", json={"namespace": ["lake"]}, headers=ADMIN)
    client.post("/v1/namespaces/lake/tables", json={"name": "t", "variant-columns": ["v"]}, headers=ADMIN)
    for p, text in ((path, "more than 64 levels deep"), (paths, "50 typed_value leaves (shredded paths), more than 10")):
        r = client.post("/v1/namespaces/lake/tables/t/commits", json={"paths": [str(p)]}, headers=WRITER)
        err = assert_error(r, 413, "limit_exceeded")
        assert str(p) in err["message"] and text in err["message"]


def test_a_schema_over_the_element_count_is_refused_before_it_is_decoded(tmp_path: Path) -> None:
    """The element count is the schema list's header: a footer cut right after it (corrupt to
    any decoder) is refused for its count, so nothing of the list was decoded; within the count
    the same bytes are corrupt, and an intact footer stating fewer elements is decoded."""
    path = tmp_path / "deep.parquet"
    write_deep(path, depth=3, leaves=2500)
    data = path.read_bytes()
    footer = data[-8 - int.from_bytes(data[-8:-4], "little") : -8]
    assert schema_elements_stated(footer) == 2504
    # Cut after the header, the leaves cannot be counted: refused for the count it states.
    with pytest.raises(LimitExceededError, match=r"2504 elements, more than 2001 \(more leaves than the limit") as e:
        parse_file_metadata(footer[:12], max_schema_elements=2001)
    assert e.value.details == {"limit": "max_schema_leaves", "value": 2504, "maximum": 2001}
    # Intact, its leaves are counted from the elements' num_children alone: the exact reason.
    assert count_schema_leaves(footer) == (2500, 3)
    with pytest.raises(LimitExceededError, match=r"^the schema has 2500 leaf columns, more than 1000 ") as e:
        parse_file_metadata(footer, max_schema_elements=2001)
    assert e.value.details == {"limit": "max_schema_leaves", "value": 2500, "maximum": 1000}
    with pytest.raises(InvalidParquetError, match="claims 2504 elements"):
        parse_file_metadata(footer[:12], max_schema_elements=2504)
    assert len(parse_file_metadata(footer, max_schema_elements=2504).schema) == 2504
    # A footer not opening with version then schema: no count, the full decode decides.
    assert schema_elements_stated(b"\x00") is None and schema_elements_stated(b"") is None


def _variant_nulls(path: Path, rows: int) -> None:
    """A Variant column whose residuals are all Variant null, without statistics on them: only
    reading them proves the path fully shredded."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    typed = pa.array([i if i % 3 else None for i in range(rows)], pa.int64())
    value = pa.array([None if i % 3 else b"\x00" for i in range(rows)], pa.binary())
    meta = pa.array([VARIANT_METADATA] * rows, pa.binary())
    v = pa.StructArray.from_arrays([meta, value, typed], ["metadata", "value", "typed_value"])
    floats = pa.array([float(i % 7) if i % 5 else None for i in range(rows)], pa.float64())
    plain = pa.array([i for i in range(rows)], pa.int64())
    pq.write_table(
        pa.table({"v": v, "f": floats, "n": plain}),
        path,
        write_statistics=["v.metadata", "v.typed_value", "f"],
        compression="zstd",
    )


def test_past_the_budget_facts_are_unknown(tmp_path: Path) -> None:
    path = tmp_path / "nulls.parquet"
    _variant_nulls(path, 20_000)
    full = extract_file(str(path))
    assert [(p.variant_path, p.value_count, p.min_value, p.max_value) for p in full.paths] == [("root", 13_333, 1, 19_999)]
    cols = {c.column: c for c in full.columns}
    assert (cols["f"].min_value, cols["f"].max_value, cols["f"].contains_nan) == (0.0, 6.0, False)
    assert (cols["n"].min_value, cols["n"].max_value, cols["n"].null_count) == (0, 19_999, 0)
    tight = extract_file(str(path), limits=FileLimits(max_decompressed_bytes=1000))
    # The residuals cannot be read: the path is not proven fully shredded, no row.
    assert tight.paths == ()
    cols = {c.column: c for c in tight.columns}
    # The float's counts come from the footer; NaN and the zero's sign need its pages: unknown.
    f = cols["f"]
    assert (f.value_count, f.null_count, f.min_value, f.max_value, f.contains_nan) == (16_000, 4_000, None, None, None)
    # No statistics at all: even the counts need the data, so no row.
    assert "n" not in cols


_RSS_PROBE = """
import json, sys
from pathlib import Path
from service.limits import FileLimits
from service.parquet.footer.read import parse_file_metadata, schema_elements_stated
from service.stats.extract import extract_file

def hwm():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
import pyarrow, pyarrow.parquet, pyarrow.compute  # loaded before the baseline
before = hwm()
fs = extract_file(sys.argv[1], limits=FileLimits(max_decompressed_bytes=int(sys.argv[2])))
cols = {c.column: [c.value_count, c.null_count, c.min_value is not None] for c in fs.columns}
print(json.dumps({"grew": hwm() - before, "columns": cols}))
"""


def test_reading_a_large_column_keeps_memory_bounded(tmp_path: Path) -> None:
    """400,000 strings of 1,000 bytes, dictionary-encoded without statistics: a file of a few KB
    that decodes to 400 MB. Read in batches, the process grows by a few batches, whether the
    budget stops the read (default) or lets it finish (a budget of 4 GB)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = 400_000
    idx = pa.array([i % 2 for i in range(rows)], pa.int32())
    s = pa.DictionaryArray.from_arrays(idx, pa.array(["a" * 1000, "b" * 1000]))
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({"s": s}), path, write_statistics=False, compression="zstd", row_group_size=rows)
    assert path.stat().st_size < 100_000
    for budget, counted in ((64 * 2**20, False), (4 * 2**30, True)):
        r = subprocess.run([sys.executable, "-c", _RSS_PROBE, str(path), str(budget)], capture_output=True, text=True, timeout=600)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert out["grew"] < 150 * 2**20, out  # whole: 400 MB of strings, and as Python lists twice that
        assert out["columns"] == ({"s": [rows, 0, True]} if counted else {})


def test_a_residual_check_does_not_import_pandas(tmp_path: Path) -> None:
    """The residuals a footer cannot rule out are read and compared without building Arrow values
    from Python ones (pyarrow imports pandas on its first such conversion: seconds before the
    first file's answer); the whole extraction, in a fresh process, leaves pandas unimported."""
    from bench.hostile import write_residual

    path = tmp_path / "residual.parquet"
    write_residual(path, rows=20_000, width=100)
    code = (
        "import sys; from service.stats.extract import extract_file; "
        f"f = extract_file({str(path)!r}); print(len(f.paths), 'pandas' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    assert r.stdout.split() == ["0", "False"]  # not fully shredded (string residuals): no row
