"""Building a response page from the catalog's results: what the API does per listed file.

    .venv/bin/python bench/wire.py                   # 10,000 rows, 15 rounds

A ``ListFilesResponse`` of ``--rows`` data files (:class:`~service.catalog.results.DataFileInfo`)
and a ``PlanResponse`` of as many candidates (:class:`~service.catalog.results.Candidate`), built
three ways in the same run, interleaved: by ``ApiModel.of`` (what the routes do: read by field
name), by the constructor field by field (the routes' way before: the peer), and by
``model_validate(..., from_attributes=True)`` with pydantic's default lookup (each kebab-case
alias first, then the name). Median and minimum of ``--rounds`` rounds; the ratios are to the
constructor's median.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.machine import describe
from service.catalog.results import Candidate, DataFileInfo
from service.wire import DataFile, ListFilesResponse, PlanFile, PlanMetrics, PlanResponse


def builders(rows: int) -> dict[str, dict[str, Callable[[], object]]]:
    files = [DataFileInfo(i, f"/lake/events/part-{i:05}.parquet", 52_311, 1000, 2113, None, 1, None) for i in range(rows)]
    candidates = [Candidate(f"/lake/events/part-{i:05}.parquet", 52_311, 1000, i) for i in range(rows)]
    metrics = PlanMetrics(files_considered=rows, files_pruned=0, files_kept=rows, rows_skipped=0, bytes_skipped=0)
    listing = {"snapshot_id": 1, "files": files, "next_page_token": None}
    page = {"snapshot_id": 1, "files": candidates, "next_page_token": None, "metrics": metrics}
    return {
        "list files": {
            "of": lambda: ListFilesResponse.of(listing),
            "constructor": lambda: ListFilesResponse(
                snapshot_id=1,
                files=tuple(
                    DataFile(
                        path=r.path, file_size_bytes=r.file_size_bytes, record_count=r.record_count,
                        footer_size=r.footer_size, content_id=r.content_id, begin_snapshot=r.begin_snapshot,
                        end_snapshot=r.end_snapshot,
                    )
                    for r in files
                ),
            ),
            "from_attributes": lambda: ListFilesResponse.model_validate(listing, from_attributes=True),
        },
        "plan page": {
            "of": lambda: PlanResponse.of(page),
            "constructor": lambda: PlanResponse(
                snapshot_id=1,
                files=tuple(
                    PlanFile(path=c.path, file_size_bytes=c.file_size_bytes, record_count=c.record_count)
                    for c in candidates
                ),
                metrics=metrics,
            ),
            "from_attributes": lambda: PlanResponse.model_validate(page, from_attributes=True),
        },
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    print(describe())
    for shape, ways in builders(args.rows).items():
        built = {name: build() for name, build in ways.items()}
        assert len({repr(b) for b in built.values()}) == 1, f"{shape}: the ways disagree"
        times: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(args.rounds):
            for name, build in ways.items():
                t = time.perf_counter()
                build()
                times[name].append(time.perf_counter() - t)
        peer = statistics.median(times["constructor"])
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"{shape:10} {name:16} median {med * 1000:7.1f} ms  min {min(ts) * 1000:7.1f} ms  "
                  f"× {med / peer:.2f} of the constructor")


if __name__ == "__main__":
    main()
