"""Regression: an IN list longer than the point-probe limit becomes one OR-ed branch; the path
and live-row filters must apply to every point (they once applied to the first only, returning
files of other tables and removed files)."""

from __future__ import annotations

from pathlib import Path

from service.catalog.service import Catalog
from service.pruning.engine import MAX_POINT_PROBES, plan
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from tests.support.shred_writer import write_shredded


def test_long_in_lists_stay_in_their_table_and_snapshot(catalog: Catalog, tmp_path: Path) -> None:
    files = {}
    for t in ("a", "b"):
        files[t] = [
            str(write_shredded(tmp_path / f"{t}{i}.parquet", [{"id": i * 10 + r} for r in range(10)], {"id": "int64"}))
            for i in range(5)
        ]
        catalog.create_table("lake", t, ["v"])
        catalog.commit("lake", t, [extract_file(f) for f in files[t]])
    catalog.remove("lake", "a", [files["a"][4]])
    ids = ", ".join(str(x) for x in range(1000, 1000 + MAX_POINT_PROBES + 6)) + ", 5, 45"
    res = plan(catalog, "lake", "a", parse_sql(f"variant_get(v, '$.id', 'bigint') IN ({ids})"))
    assert [c.path for c in res.candidates] == [files["a"][0]], "Should read only a0: 45 is in the removed a4"
