"""Issue 30, point 5: mutated footers and pages of zoo files. Whatever the bytes, extraction
returns rows or raises one of shredcat's own errors naming the file, never a library's exception
(not even one the last safety net of ``extract_file`` would catch: its message says "cannot be
read: <exception type>", which this test refuses), and stays within the per-file budget.

Bounded in CI (``SHREDCAT_FUZZ_EXAMPLES``, default 150 per test); a longer run:
``SHREDCAT_FUZZ_EXAMPLES=5000 pytest tests/writers/test_fuzz.py -p no:randomly``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.errors import ShredcatError
from service.limits import FileLimits
from service.stats.extract import extract_file
from tests.writers.traps import write_traps
from tests.writers.zoo import write_zoo

EXAMPLES = int(os.environ.get("SHREDCAT_FUZZ_EXAMPLES", "150"))
#: Small enough that a mutation promising gigabytes is stopped early.
LIMITS = FileLimits(max_decompressed_bytes=8 * 2**20)


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> list[bytes]:
    d = tmp_path_factory.mktemp("fuzz")
    zoo = write_zoo(d / "zoo")
    traps = write_traps(d / "traps")
    keep = [zoo["pyarrow_default"], zoo["pyarrow_nostats_v2"], zoo["fastparquet"], zoo["duckdb"], zoo["polars_stats"]]
    keep += [traps["duckdb_infinity"], traps["pyarrow_no_stats_types"]]
    return [p.read_bytes() for p in keep]


def _footer_start(data: bytes) -> int:
    n = int.from_bytes(data[-8:-4], "little")
    return max(4, len(data) - 8 - n)


def _check(path: Path) -> None:
    try:
        extract_file(str(path), limits=LIMITS)
    except ShredcatError as e:
        assert e.message.startswith(f"{path}: "), e.message
        assert ": cannot be read: " not in e.message, e.message  # an exception nothing translated
        assert "\n" not in e.message


_SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
)


@_SETTINGS
@given(data=st.data())
def test_mutated_footers(originals: list[bytes], tmp_path: Path, data: st.DataObject) -> None:
    raw = bytearray(data.draw(st.sampled_from(originals)))
    start = _footer_start(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(start, len(raw) - 9))
        raw[at] = data.draw(st.integers(0, 255))
    path = tmp_path / "m.parquet"
    path.write_bytes(bytes(raw))
    _check(path)


@_SETTINGS
@given(data=st.data())
def test_mutated_pages(originals: list[bytes], tmp_path: Path, data: st.DataObject) -> None:
    raw = bytearray(data.draw(st.sampled_from(originals)))
    end = _footer_start(raw)
    for _ in range(data.draw(st.integers(1, 8))):
        at = data.draw(st.integers(4, end - 1))
        raw[at] = data.draw(st.integers(0, 255))
    path = tmp_path / "m.parquet"
    path.write_bytes(bytes(raw))
    _check(path)


@_SETTINGS
@given(data=st.data())
def test_truncated_and_spliced(originals: list[bytes], tmp_path: Path, data: st.DataObject) -> None:
    raw = data.draw(st.sampled_from(originals))
    cut = data.draw(st.integers(0, len(raw)))
    tail = data.draw(st.sampled_from(originals))
    # A prefix of one file with the tail (footer) of another: offsets point at foreign pages.
    spliced = raw[:cut] + tail[-data.draw(st.integers(0, len(tail))) :]
    path = tmp_path / "m.parquet"
    path.write_bytes(spliced)
    _check(path)
