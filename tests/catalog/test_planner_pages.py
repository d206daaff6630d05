"""How a page of candidates is found (``service.catalog.planner.access.first_rows``): the set plan, a
walk over the files in id order that stops when the page is full, or a walk that hands over to the
set plan. Whatever the route, the pages of a plan, concatenated, are exactly the set plan's answer,
on both backends; and the counts over the whole answer are given when asked, or when free.

A condition every live file passes (folded to TRUE by ``planner.simplify``) reads the next live
files and nothing else ("every"); a single leaf on a key every live file has is scanned in file
order on the key's file-order index ("scan"), on further ("scan_on"), or handed to the set plan.
A range on such a key first reads the key's zone map ("zones"): no zone might pass (nothing to
read), a selective range the set plan answers cheaper, or a scan of the runs of zones that might.
Zones are shrunk to 16 files here so that 600 files make 38 of them.

The walk's windows are shrunk here so that 600 files exercise every route; each route must be
taken at least once, or the test fails (a change of thresholds would otherwise leave a route
untested without anyone noticing).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from service.catalog import Catalog, models
from service.catalog import repository as repo
from service.catalog.planner import access, routes, sets, zones
from service.pruning.conditions import compile_expression
from service.pruning.conjunctions import merge_conjunctions
from service.pruning.parse_sql import parse_sql
from tests.catalog.factories import FLOAT64, INT64, VARCHAR, fs, ps

NS, T = "ns", "t"
N_FILES = 600
A = "variant_get(v, '$.a', 'bigint')"
B = "variant_get(v, '$.b', 'double')"
C = "variant_get(v, '$.c', 'string')"
D = "variant_get(v, '$.d', 'string')"
E = "variant_get(v, '$.e', 'bigint')"
F = "variant_get(v, '$.f', 'bigint')"
H = "variant_get(v, '$.h', 'bigint')"
ZONE = 16

PREDICATES = [
    f"{B} > 0",  # every file with values: dense from the first file
    f"{B} > 95",  # mid: about a fifth of the files, spread
    f"{B} > 119",  # sparse and spread
    f"{A} >= 0",  # dense
    f"{A} < 300",  # the first half, clustered
    f"{A} > 5000",  # the last sixth, clustered: nothing in the first windows
    f"{A} BETWEEN 2000 AND 2100",  # a bounded range: the set plan directly
    f"{A} = 1234 OR {B} > 110",  # an OR with an open range: walked
    f"NOT ({A} BETWEEN 1000 AND 4000)",
    f"{C} = 'k3'",  # a path missing from some files: files without a row are kept
    f"{C} IS NULL",
    f"{A} IS NULL",  # a key every file has: its file-order index lacks null_count, so not scanned
    f"{B} IS NULL",  # every 37th file is all NULL
    f"{B} IS NOT NULL AND {A} > 4000",
    f"{A} IN (5, 1500, 5999)",
    f"{D} > 'n5'",  # strings on every file: keys the file-order index does not hold (walked)
    f"{D} <> 'n3'",
    f"{A} BETWEEN 2000 AND 4500",  # a long clustered run mid-table: scanned from its first zone
    f"{A} > 99999",  # no zone might pass
    f"{E} BETWEEN 2000 AND 2049",  # three runs of zones apart
    f"{E} >= 3010",  # a one-sided range in runs
    f"{B} BETWEEN 96 AND 97",  # spread: every zone might pass, few files do
    f"{F} <> 0",  # dense in the first files, then none until the last ones (not zoned)
    f"{F} > 50",  # the same, zoned
    f"{H} <> 0",  # a quarter of the files, spread (not zoned)
]


def _files() -> list[Any]:
    rnd = random.Random(7)
    out = []
    for i in range(N_FILES):
        lo = rnd.uniform(0, 20)
        paths = [
            ps('"a"', INT64, 10 * i, 10 * i + 9),
            ps('"b"', FLOAT64, lo, lo + rnd.uniform(50, 100)) if i % 37 else ps('"b"', FLOAT64, None, None, values=0, nulls=10),
        ]
        if i % 5:
            k = f"k{rnd.randrange(10)}"
            paths.append(ps('"c"', VARCHAR, k, k))
        paths.append(ps('"d"', VARCHAR, f"n{i % 7}", f"n{i % 7 + 2}"))
        e = (i // 50) % 4 * 1000 + i % 50
        paths.append(ps('"e"', INT64, e, e))
        f = 100 if (i < 40 and i % 4 == 0) or i >= 500 else 0
        paths.append(ps('"f"', INT64, f, f))
        h = 0 if i % 4 else 1
        paths.append(ps('"h"', INT64, h, h))
        out.append(fs(f"s3://b/t/f{i:04d}.parquet", *paths))
    return out


@pytest.fixture
def cat(catalog_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[Catalog]:
    monkeypatch.setattr(models, "ZONE_FILES", ZONE)
    c = Catalog(catalog_url)
    c.create_table(NS, T, ["v"])
    c.commit(NS, T, _files())
    yield c
    c.close()


def _set_answer(cat: Catalog, sql: str) -> list[str]:
    """Every candidate by the set plan alone."""
    cond = merge_conjunctions(compile_expression(parse_sql(sql)))
    with cat.engine.connect() as conn:
        t = repo.require_table(conn, NS, T)
        page = routes.Page(sets.Planner(conn, t, t.current_snapshot_id, True), cond, [])
        return [r[1] for r in routes.set_rows(page, 0, N_FILES + 1)]


def _paged(cat: Catalog, sql: str, page_size: int) -> list[str]:
    out: list[str] = []
    token = None
    while True:
        r = cat.plan(NS, T, parse_sql(sql), page_size=page_size, page_token=token)
        out += [c.path for c in r.candidates]
        token = r.next_page_token
        if token is None:
            return out


def test_every_route_pages_exactly_the_set_answer(cat: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    real_first, real_walk, real_set = access.first_rows, routes.walk, routes.set_rows
    real_scan, real_zones = routes.scan_window, zones.zone_runs
    calls: list[str] = []
    taken: dict[str, int] = {}

    def first_rows(*a: Any, **k: Any) -> Any:
        calls.clear()
        out = real_first(*a, **k)
        route = {
            (): "every",
            ("set",): "set",
            ("walk",): "walk",
            ("walk", "walk"): "walk_on",
            ("walk", "scan"): "walk_scan",
            ("scan",): "scan",
            ("scan", "scan"): "scan_on",
        }.get(tuple(calls), "")
        route = route or "+".join(calls)
        taken[route] = taken.get(route, 0) + 1
        return out

    def walk(*a: Any, **k: Any) -> Any:
        calls.append("walk")
        return real_walk(*a, **k)

    def scan(*a: Any, **k: Any) -> Any:
        calls.append("scan")
        return real_scan(*a, **k)

    def zone_runs(*a: Any, **k: Any) -> Any:
        out = real_zones(*a, **k)
        if out is not None:
            calls.append("zones")
        return out

    def set_rows(*a: Any, **k: Any) -> Any:
        calls.append("set")
        return real_set(*a, **k)

    monkeypatch.setattr(access, "PROBE_WINDOW", 40)
    monkeypatch.setattr(access, "MAX_WALK", 120)
    monkeypatch.setattr(access, "SCAN_PROBE", 40)
    monkeypatch.setattr(access, "MAX_SCAN", 120)
    monkeypatch.setattr(zones, "MAX_RUNS", 2)  # the three runs of `e` are read as two
    monkeypatch.setattr(access, "first_rows", first_rows)
    monkeypatch.setattr(routes, "walk", walk)
    monkeypatch.setattr(routes, "scan_window", scan)
    monkeypatch.setattr(routes, "set_rows", set_rows)
    monkeypatch.setattr(zones, "zone_runs", zone_runs)
    for sql in PREDICATES:
        expected = _set_answer(cat, sql)
        for page_size in (7, 14, 25, 1000):
            assert _paged(cat, sql, page_size) == expected, f"{sql} (pages of {page_size})"
    wanted: tuple[str, ...] = (
        "every", "set", "walk", "walk_on", "walk+set", "scan", "scan_on", "scan+set",
        "zones", "zones+set", "zones+scan", "zones+scan+scan",
    )  # fmt: skip
    if cat.backend == "postgresql":
        wanted += ("walk_scan",)  # a dense string leaf read on by its key's rows (zones.string_scan)
    missing = [r for r in wanted if not taken.get(r)]
    assert not missing, f"routes never taken: {missing}; taken: {sorted(taken.items())}"


def test_a_dense_first_page_never_builds_the_whole_answer(cat: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """`b > 0` keeps nearly every file: the first page comes from a walk over its first files;
    no statement collects the candidate set, and the counts are not computed unless asked."""
    monkeypatch.setattr(access, "PROBE_WINDOW", 40)
    seen: list[str] = []

    from sqlalchemy import event

    def record(conn: Any, cursor: Any, statement: str, *a: Any) -> None:
        seen.append(statement)

    event.listen(cat.engine, "before_cursor_execute", record)
    r = cat.plan(NS, T, parse_sql(f"{B} > 0"), page_size=10)
    event.remove(cat.engine, "before_cursor_execute", record)
    assert len(r.candidates) == 10 and r.next_page_token is not None
    assert not [s for s in seen if "q0.data_file_id" in s or "coalesce(sum(" in s], seen
    assert r.files_considered == N_FILES
    assert r.files_kept is None and r.files_pruned is None and r.rows_skipped is None and r.bytes_skipped is None


def test_a_string_point_or_prefix_is_probed_before_the_set_plan(cat: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """A point or bounded range on a string key looks selective by its shape, but a string key has
    no width floor, so the set plan reads every row on one side of a bound whatever the answer:
    such a page is probed on :data:`~access.STRING_PROBE_WINDOW` files first. Dense (`d = 'n3'`, 3
    files in 7; the prefix `d LIKE 'n3%'` as the range it implies), the page is filled on from there:
    on PostgreSQL by the key's rows in file order (a scan, :func:`~zones.string_scan`), on SQLite by
    the walk; sparse (`d = 'n85'`: no file), the set plan answers after the probe. A number's point
    still goes to the set plan directly."""
    monkeypatch.setattr(access, "STRING_PROBE_WINDOW", 20)
    real_walk, real_set, real_scan = routes.walk, routes.set_rows, routes.scan_window
    calls: list[tuple[str, int]] = []

    def walk(*a: Any, **k: Any) -> Any:
        calls.append(("walk", a[3]))
        return real_walk(*a, **k)

    def set_rows(*a: Any, **k: Any) -> Any:
        calls.append(("set", 0))
        return real_set(*a, **k)

    def scan(*a: Any, **k: Any) -> Any:
        calls.append(("scan", 0))
        return real_scan(*a, **k)

    monkeypatch.setattr(routes, "walk", walk)
    monkeypatch.setattr(routes, "set_rows", set_rows)
    monkeypatch.setattr(routes, "scan_window", scan)
    on = "scan" if cat.backend == "postgresql" else "walk"
    for sql, route in (
        (f"{D} = 'n3'", ["walk", on]),  # 20 files probed: 8 of the 11 rows, then on
        (f"{D} >= 'n3' AND {D} < 'n4'", ["walk", on]),  # what `d LIKE 'n3%'` prunes with
        (f"{D} = 'n85'", ["walk", "set"]),
        (f"{A} = 1234", ["set"]),
    ):
        calls.clear()
        r = cat.plan(NS, T, parse_sql(sql), page_size=10)
        assert [c for c, _ in calls] == route, (sql, calls)
        assert calls[0][1] == (20 if route[0] == "walk" else 0), (sql, calls)
        assert [c.path for c in r.candidates] == _set_answer(cat, sql)[:10], sql
        calls.clear()
        assert _paged(cat, sql, 7) == _set_answer(cat, sql), sql


def test_counts_when_asked_or_when_the_answer_fits(cat: Catalog) -> None:
    dense = f"{B} > 0"
    kept = len(_set_answer(cat, dense))
    assert 0 < kept < N_FILES  # files without values in b are pruned
    r = cat.plan(NS, T, parse_sql(dense), page_size=10, counts=True)
    assert (r.files_considered, r.files_kept, r.files_pruned) == (N_FILES, kept, N_FILES - kept)
    assert r.rows_skipped == 10 * (N_FILES - kept) and r.bytes_skipped == 1000 * (N_FILES - kept)
    r = cat.plan(NS, T, parse_sql(dense), page_size=N_FILES)  # the whole answer in one page
    assert (r.files_considered, r.files_kept, r.files_pruned) == (N_FILES, kept, N_FILES - kept)
    assert r.next_page_token is None
    sparse = f"{A} BETWEEN 2000 AND 2100"
    r = cat.plan(NS, T, parse_sql(sparse), page_size=5)
    assert r.next_page_token is not None and r.files_kept is None
    r = cat.plan(NS, T, parse_sql(sparse), page_size=5, counts=True)
    assert r.files_kept == len(_set_answer(cat, sparse)) == 11


def test_counts_at_a_past_snapshot(cat: Catalog) -> None:
    first = cat.plan(NS, T, parse_sql(f"{A} >= 0"), page_size=1).snapshot_id
    cat.commit(NS, T, [fs("s3://b/t/late.parquet", ps('"a"', INT64, 1, 2))])
    r = cat.plan(NS, T, parse_sql(f"{A} >= 0"), page_size=10, snapshot_id=first)
    assert r.snapshot_id == first and r.files_kept is None and r.files_considered is None
    r = cat.plan(NS, T, parse_sql(f"{A} >= 0"), page_size=10, snapshot_id=first, counts=True)
    assert (r.files_considered, r.files_kept) == (N_FILES, N_FILES)
    assert _paged_at(cat, f"{A} >= 0", first) == [f"s3://b/t/f{i:04d}.parquet" for i in range(N_FILES)]


def _paged_at(cat: Catalog, sql: str, snapshot: int) -> list[str]:
    out: list[str] = []
    r = cat.plan(NS, T, parse_sql(sql), page_size=97, snapshot_id=snapshot)
    while True:
        out += [c.path for c in r.candidates]
        if r.next_page_token is None:
            return out
        r = cat.plan(NS, T, parse_sql(sql), page_size=97, page_token=r.next_page_token)


def test_the_walk_skips_other_tables_and_removed_files(cat: Catalog, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk reads live files of this table only: files of another table interleaved by id,
    and removed files, are never candidates."""
    monkeypatch.setattr(access, "PROBE_WINDOW", 40)
    cat.create_table(NS, "other", ["v"])
    cat.commit(NS, "other", [fs(f"s3://b/o/f{i}.parquet", ps('"b"', FLOAT64, 1.0, 2.0)) for i in range(50)])
    cat.commit(NS, T, [fs("s3://b/t/g.parquet", ps('"b"', FLOAT64, 1.0, 2.0))])
    cat.remove(NS, T, [f"s3://b/t/f{i:04d}.parquet" for i in range(0, N_FILES, 3)])
    got = _paged(cat, f"{B} > 0", 11)
    assert got == _set_answer(cat, f"{B} > 0")
    assert all(p.startswith("s3://b/t/") for p in got)
    assert "s3://b/t/f0000.parquet" not in got and "s3://b/t/g.parquet" in got
    with cat.engine.connect() as conn:
        n = conn.execute(text("SELECT count(*) FROM ducklake_data_file WHERE end_snapshot IS NULL")).scalar()
    assert n == N_FILES - N_FILES // 3 + 1 + 50


def _stats_query_plans(c: Catalog, seen: list[tuple[str, Any]]) -> list[str]:
    """SQLite's EXPLAIN QUERY PLAN of each recorded page statement over the Variant stats."""
    with c.engine.connect() as conn:
        cur = conn.connection.driver_connection.cursor()
        return [
            " | ".join(str(r[3]) for r in cur.execute("EXPLAIN QUERY PLAN " + st, p).fetchall())
            for st, p in seen
            if "ducklake_file_variant_stats" in st and st.lstrip().upper().startswith("SELECT F.")
        ]


def test_sqlite_index_choices(tmp_path: Path) -> None:
    """SQLite picks indexes by rule, not by cost: a point lookup must go through the key index
    (offered the id range and order, it scanned the key's rows in file order: 0.6 -> 80 ms at
    1,000,000 files), and the file-order scan must be index-only (covering)."""
    from sqlalchemy import event

    from service.catalog.db import upgrade_to_head

    url = f"sqlite:///{tmp_path}/c.db"
    upgrade_to_head(url)
    c = Catalog(url)
    try:
        c.create_table(NS, T, ["v"])
        c.commit(NS, T, _files())
        seen: list[tuple[str, Any]] = []

        def record(conn: Any, cursor: Any, statement: str, params: Any, *a: Any) -> None:
            seen.append((statement, params))

        event.listen(c.engine, "before_cursor_execute", record)

        def plans(sql: str) -> list[str]:
            seen.clear()
            c.plan(NS, T, parse_sql(sql), page_size=5)
            return _stats_query_plans(c, seen)

        point = plans(f"{A} = 1234")
        assert point and not any("live_path_file" in p for p in point), point
        assert any("live_min_num" in p for p in point), point
        scan = plans(f"{B} > 95")
        assert any("COVERING INDEX ix_ducklake_file_variant_stats_live_path_file" in p for p in scan), scan
        event.remove(c.engine, "before_cursor_execute", record)
    finally:
        c.close()


def test_sqlite_reads_a_string_point_on_its_narrow_side(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """SQLite has no range statistics, so for ``g = p`` on a string key (no width floor) it could
    not tell ``min_bin <= p`` from ``max_bin >= p`` and read every row through the max index for
    a name below every file's range (issue 34). The set plan now counts both sides (up to
    :data:`~clauses.SIDE_PROBES` rows) and keeps the wider one out of the index choice: a point
    below every range reads the min index, one above every range the max index; a point on every
    file's range (a tie) leaves the SQL as it was. The answers are the files whose range holds the
    point."""
    from sqlalchemy import event

    from service.catalog.db import upgrade_to_head
    from service.catalog.planner import clauses

    monkeypatch.setattr(clauses, "SIDE_PROBES", (50, 500))
    url = f"sqlite:///{tmp_path}/c.db"
    upgrade_to_head(url)
    c = Catalog(url)
    G = "variant_get(v, '$.g', 'string')"
    try:
        c.create_table(NS, T, ["v"])
        files = [fs(f"s3://b/t/g{i:04d}.parquet", ps('"g"', VARCHAR, f"b{i:04d}", f"y{i:04d}")) for i in range(N_FILES)]
        c.commit(NS, T, files)
        seen: list[tuple[str, Any]] = []

        def record(conn: Any, cursor: Any, statement: str, params: Any, *a: Any) -> None:
            seen.append((statement, params))

        event.listen(c.engine, "before_cursor_execute", record)

        def plans(sql: str, kept: list[str]) -> tuple[list[str], int]:
            seen.clear()
            r = c.plan(NS, T, parse_sql(sql), page_size=10)
            assert [x.path for x in r.candidates] == kept, sql
            probes = sum("LIMIT 50 OFFSET 0)" in st and "max_bin >= ?" in st for st, _ in seen)
            return _stats_query_plans(c, seen), probes

        for point, kept, index, other in (
            ("a0", [], "live_min_bin", "live_max_bin"),  # below every file's range
            ("z0", [], "live_max_bin", "live_min_bin"),  # above every file's range
            ("b0005", [f"s3://b/t/g{i:04d}.parquet" for i in range(6)], "live_min_bin", "live_max_bin"),
        ):
            plan, probes = plans(f"{G} = '{point}'", kept)
            assert probes == 1, (point, seen)
            assert any(index in p for p in plan) and not any(other in p for p in plan), (point, plan)
        # Both sides reach every limit of the probe: no side is preferred, the SQL has no unary +.
        seen.clear()
        with c.engine.connect() as conn:
            t = repo.require_table(conn, NS, T)
            dense = merge_conjunctions(compile_expression(parse_sql(f"{G} = 'm'")))
            page = routes.Page(sets.Planner(conn, t, t.current_snapshot_id, True), dense, [])
            assert len(routes.set_rows(page, 0, N_FILES + 1)) == N_FILES
        assert any("LIMIT 500 OFFSET 0)" in st and "max_bin >= ?" in st for st, _ in seen), seen
        assert not any("+ s.m" in st for st, _ in seen), seen
        event.remove(c.engine, "before_cursor_execute", record)
    finally:
        c.close()
