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


def test_point_lists_of_every_length_keep_exactly_the_matching_files(catalog: Catalog) -> None:
    """Each way a point list is planned (a branch per point, the PostgreSQL join of the points,
    SQLite's branches up to SQLITE_POINT_PROBES, its OR-ed scan once the plan's term budget is
    spent) keeps exactly the files whose range holds a point: file i holds ids [10 i, 10 i + 9];
    a removed file holding some of the points is never kept."""
    from service.catalog.planner import SQLITE_POINT_PROBES
    from tests.catalog.factories import INT64, fs, ps

    catalog.create_table("lake", "p", ["v"])
    catalog.commit("lake", "p", [fs(f"s3://b/p/{i:03d}.parquet", ps('"id"', INT64, 10 * i, 10 * i + 9)) for i in range(300)])
    catalog.commit("lake", "p", [fs("s3://b/p/gone.parquet", ps('"id"', INT64, 70, 79))])
    catalog.remove("lake", "p", ["s3://b/p/gone.parquet"])
    col = "variant_get(v, '$.id', 'bigint')"

    def points(n: int, salt: int) -> list[int]:
        return [10 * ((i * 7 + salt) % 300) + i % 10 for i in range(n)] + [5_000_000]  # the last matches nothing

    cases = [[points(n, 0)] for n in (3, MAX_POINT_PROBES + 1, 200, SQLITE_POINT_PROBES - 1)]
    cases.append([points(150, 0), points(150, 1)])  # 300 points in all: SQLite ORs the second list
    for lists in cases:
        sql = " OR ".join(f"{col} IN ({', '.join(map(str, ps_))})" for ps_ in lists)
        got = [c.path for c in catalog.iter_candidates("lake", "p", parse_sql(sql, max_in_list=1000))]
        want = sorted({f"s3://b/p/{x // 10:03d}.parquet" for ps_ in lists for x in ps_ if x < 3000})
        assert got == want, f"{[len(x) for x in lists]} points"


def test_a_long_point_list_sends_a_few_parameters(catalog: Catalog) -> None:
    """A 200-point list on a key every file has, planned on PostgreSQL as one join of the points:
    its keys travel as two arrays, and the key scan the set plan will not read is not built, so
    every statement goes with a few parameters whatever the list's length. 200 points bound one
    by one (and again in the unread scan's test) cost more client CPU than the database's answer,
    and past 50 parameters psycopg no longer caches a statement's conversion."""
    from sqlalchemy import event

    from tests.catalog.factories import INT64, fs, ps

    catalog.create_table("lake", "p", ["v"])
    catalog.commit("lake", "p", [fs(f"s3://b/p/{i:03d}.parquet", ps('"id"', INT64, 10 * i, 10 * i + 9)) for i in range(300)])
    points = [10 * ((i * 7) % 300) + i % 10 for i in range(200)]
    sent: list[int] = []

    def count(conn: object, cursor: object, statement: str, parameters: object, *rest: object) -> None:
        sent.append(len(parameters) if isinstance(parameters, dict | list | tuple) else 0)

    event.listen(catalog.engine, "before_cursor_execute", count)
    try:
        res = catalog.plan("lake", "p", parse_sql(f"variant_get(v, '$.id', 'bigint') IN ({', '.join(map(str, points))})"))
    finally:
        event.remove(catalog.engine, "before_cursor_execute", count)
    assert len(res.candidates) == len({x // 10 for x in points})
    if catalog.backend == "postgresql":
        assert sent and max(sent) < 50, sent
