"""Regression: an IN list longer than the point-probe limit becomes one OR-ed branch; the path
and live-row filters must apply to every point (they once applied to the first only, returning
files of other tables and removed files)."""

from __future__ import annotations

from pathlib import Path

from service.catalog.planner import MAX_POINT_PROBES
from service.catalog.service import Catalog
from service.pruning.parse_sql import parse_sql
from service.stats.extract import extract_file
from tests.support.shred_writer import write_shredded


def test_long_in_lists_stay_in_their_table_and_snapshot(catalog: Catalog, tmp_path: Path) -> None:
    files = {}
    for t in ("a", "b"):
        files[t] = [
            str(
                write_shredded(
                    tmp_path / f"{t}{i}.parquet", [{"id": i * 10 + r} for r in range(10)], {"id": "int64"}
                )
            )
            for i in range(5)
        ]
        catalog.create_table("lake", t, ["v"])
        catalog.commit("lake", t, [extract_file(f) for f in files[t]])
    catalog.remove("lake", "a", [files["a"][4]])
    ids = ", ".join(str(x) for x in range(1000, 1000 + MAX_POINT_PROBES + 6)) + ", 5, 45"
    res = catalog.plan("lake", "a", parse_sql(f"variant_get(v, '$.id', 'bigint') IN ({ids})"))
    assert [c.path for c in res.candidates] == [files["a"][0]], "Should read only a0: 45 is in the removed a4"


def test_long_in_lists_of_doubles_dates_and_decimals(catalog: Catalog, tmp_path: Path) -> None:
    import datetime as dt
    from decimal import Decimal

    rows = [
        [
            {
                "d": i * 10.0 + r,
                "t": dt.date(2024, 1, 1) + dt.timedelta(days=i * 10 + r),
                "m": Decimal(i * 10 + r).quantize(Decimal("0.01")),
            }
            for r in range(10)
        ]
        for i in range(4)
    ]
    spec = {"d": "float64", "t": "date", "m": "decimal(9,2)"}
    paths = [str(write_shredded(tmp_path / f"f{i}.parquet", rows[i], spec)) for i in range(4)]
    catalog.create_table("lake", "t", ["v"])
    catalog.commit("lake", "t", [extract_file(p) for p in paths])
    far = range(500, 500 + MAX_POINT_PROBES + 10)
    cases = {
        "d": ("double", [f"{x}.5" for x in far] + ["25.0"]),
        "t": (
            "date",
            [f"DATE '{dt.date(2025, 1, 1) + dt.timedelta(days=x)}'" for x in far] + ["DATE '2024-01-31'"],
        ),
        "m": ("decimal(9,2)", [f"{x}.25" for x in far] + ["25"]),
    }
    for field, (target, lits) in cases.items():
        sql = f"variant_get(v, '$.{field}', '{target}') IN ({', '.join(lits)})"
        got = [c.path for c in catalog.plan("lake", "t", parse_sql(sql)).candidates]
        want = paths[3] if field == "t" else paths[2]
        assert got == [want], f"Should read only {want} for {field}: {got}"
