"""``python -m service.demo`` at the edges of its arguments (the full demo runs in ``make demo``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from service import demo
from service.duckdb import engine


@pytest.mark.parametrize("args", [["--events", "0"], ["--events", "-1"], ["--files", "0"]])
def test_nothing_to_write_is_a_usage_error_before_spark_starts(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No event wrote no file, so no commit created demo.events: a traceback (404) after Spark had
    started."""
    monkeypatch.setattr(demo, "run", lambda *a: pytest.fail("the demo started"))
    with pytest.raises(SystemExit) as e:
        demo.main(args)
    assert e.value.code == 2 and f"{args[0]} must be at least 1" in capsys.readouterr().err


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
