"""``python -m service.demo`` at the edges of its arguments (the full demo runs in ``make demo``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service import demo
from service.duckdb import engine


def test_the_latency_drift_line_names_the_first_and_last_files_whatever_their_names(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With few events Spark's first file is not part-00000 (``--events 1`` wrote only
    part-00007): the line looked that name up and failed with KeyError."""
    con = engine.connect()
    paths = []
    for name, value in (("part-00007-x.parquet", "5::BIGINT"), ("part-00009-x.parquet", "5.5::DOUBLE")):
        paths.append(str(tmp_path / name))
        con.execute(f"COPY (SELECT {{'latency_ms': {value}}}::VARIANT AS v) TO '{paths[-1]}'")
    demo._print_shredded_paths(paths)
    assert "latency_ms is shredded as int64 in the first file, as float64 in the last one" in capsys.readouterr().out
