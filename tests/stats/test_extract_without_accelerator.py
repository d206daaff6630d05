"""The extractor without the C accelerator (``service.parquet._compact`` absent, as on a machine
without a compiler) gives exactly what it gives with it: the accelerator's shortcuts (decoding,
the interned schema, building result objects) change speed only."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from service.errors import ShredcatError
from service.parquet.footer import ACCELERATED
from service.stats.extract import extract_file
from tests.support.conformance import SHREDDED_VARIANT as CONFORMANCE_DIR
from tests.support.conformance import require_corpus

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter where importing the extension fails, then print one line per file.
_SCRIPT = """
import sys
sys.modules["service.parquet._compact"] = None  # import fails: the pure-Python readers
from service.errors import ShredcatError
from service.parquet.footer import ACCELERATED
from service.stats.extract import extract_file
assert not ACCELERATED
for path in sys.stdin.read().splitlines():
    try:
        print(repr(extract_file(path)))
    except ShredcatError as e:
        print(type(e).__name__, e.message)
"""


def _answer(path: str) -> str:
    try:
        return repr(extract_file(path))
    except ShredcatError as e:
        return f"{type(e).__name__} {e.message}"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    require_corpus(CONFORMANCE_DIR)
    tmp = tmp_path_factory.mktemp("noaccel")
    out = []
    # Several files of one schema (the interned case) and a second schema between them.
    for i in range(3):
        for name, extra in (("a", ""), ("b", ", 'z': -0.0::DOUBLE")):
            p = tmp / f"{name}{i}.parquet"
            duckdb.sql(
                f"COPY (SELECT {{'id': (r + {i})::BIGINT, 's': 'u' || r, 'x': (r * 1.5)::DOUBLE{extra}}}::VARIANT AS v, "
                f"r::INT AS plain FROM range(20) t(r)) TO '{p}' (FORMAT parquet)"
            )
            out.append(str(p))
    out += [str(p) for p in sorted(CONFORMANCE_DIR.glob("*.parquet"))]
    return out


def test_same_answers_without_the_accelerator(files: list[str]) -> None:
    assert ACCELERATED
    expected = [_answer(p) for p in files]
    run = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        input="\n".join(files),
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    got = run.stdout.splitlines()
    assert len(got) == len(files)
    for path, want, have in zip(files, expected, got, strict=True):
        assert have == want, path
