"""``bench/summary.py`` (``make bench``): it reads the figures the bench scripts really print, and it
rewrites only the table between BENCHMARKS.md's markers, never after a failed step.

No figure is asserted (shared machines are noisy): only that each one is read from the script's
own output and lands in the right row."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench import summary
from bench.summary import BEGIN, END, Row, Step, SummaryError, parse_extract, rewrite, times_faster

ROOT = Path(__file__).resolve().parents[2]


def _doc(table: str = "") -> str:
    return f"# Benchmarks\n\nintro\n\n{BEGIN}\n{table}{END}\n\nhistory link\n\n## New measurements\n\n### someone's\n"


def _line(key: str, result: str) -> str:
    return Row(key, "q", "python bench/x.py", result, "peer", "1.00× faster").cells("2026-11-28 02:00", "m") + (
        f" <!-- {key} -->"
    )


def test_extract_figures_come_from_a_real_run(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "bench/extract.py", "--files", "40", "--repeat", "1", "--dir", str(tmp_path / "x")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    (row,) = parse_extract(r.stdout, "python bench/extract.py")
    ours = re.search(r"^shredcat extract\s+\S+\s+(\d+)", r.stdout, re.MULTILINE)
    peer = re.search(r"^duckdb parquet_metadata \(1 thread\)\s+\S+\s+(\d+)", r.stdout, re.MULTILINE)
    assert ours and peer
    assert row.result.startswith(f"{int(ours[1]):,} files/s")
    assert f": {int(peer[1]):,} files/s" in row.peer
    assert row.ratio.endswith("per CPU-second")


def test_a_missing_figure_is_an_error() -> None:
    with pytest.raises(SummaryError, match="shredcat extract"):
        parse_extract("machine: ...\nfiles: 0\n", "python bench/extract.py")


def test_rewrite_replaces_the_table_and_keeps_everything_else() -> None:
    doc = _doc(_line("extract.files_per_s", "old") + "\n")
    new = rewrite(doc, [_line("extract.files_per_s", "new"), _line("commit.sqlite", "c")])
    head, rest = new.split(BEGIN)
    table, tail = rest.split(END)
    assert head == doc.split(BEGIN)[0] and tail == doc.split(END)[1]
    rows = table.strip().splitlines()
    assert rows[:2] == summary.HEADER.splitlines()
    assert [r.split(" | ")[2] for r in rows[2:]] == ["new", "c"]


def test_rows_of_steps_not_rerun_are_kept_in_step_order() -> None:
    doc = _doc(_line("extract.files_per_s", "e") + "\n" + _line("cli.prune", "old cli") + "\n")
    new = rewrite(doc, [_line("commit.sqlite", "c")])
    keys = re.findall(r"<!-- (\S+) -->", new.split(BEGIN)[1].split(END)[0])
    assert keys == ["extract.files_per_s", "commit.sqlite", "cli.prune"]


def test_rewrite_refuses_a_file_without_its_markers() -> None:
    with pytest.raises(SummaryError, match="markers"):
        rewrite("# Benchmarks\n", [])
    with pytest.raises(SummaryError, match="markers"):
        rewrite(f"{END}\n{BEGIN}\n", [])


def test_a_failed_step_leaves_the_file_as_it_was(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "BENCHMARKS.md"
    f.write_text(_doc(_line("extract.files_per_s", "kept") + "\n"))
    before = f.read_text()
    failing = Step("extract", "no_such_script.py", (), lambda tmp: (), lambda *a: [])
    monkeypatch.setattr(summary, "STEPS", [failing])
    assert summary.main(["--file", str(f)]) == 1
    assert f.read_text() == before


def test_ratio_words() -> None:
    assert times_faster(2.0, 10.0) == "5.00× faster"
    assert times_faster(10.0, 2.0) == "5.00× slower"
    with pytest.raises(SummaryError):
        times_faster(0.0, 1.0)


def test_the_repository_table_is_in_place() -> None:
    text = (ROOT / "BENCHMARKS.md").read_text()
    assert text.count(BEGIN) == 1 and text.count(END) == 1
    # After the table: the open questions' latest figures, and the way to the history.
    after = text.split(END)[1]
    assert "## Open questions" in after and "docs/benchmarks-history.md" in after
    assert (ROOT / "docs" / "benchmarks-history.md").is_file()
