"""Every shape of single-term predicate plans without a server error, on every kind of term and
key family, through every route the planner may take (a key every live file has is scanned in
file order; a key some files lack, or stored as two types, is not), and keeps every file the
Python evaluator keeps, on both backends.

The planner writes SQL per shape and per route; a shape whose SQL names a column the route's
rows do not carry fails only when that shape meets that route (``x IS NULL`` on a key every file
has did, with "no such column: s.null_count"). This test walks the whole grid.
"""

from __future__ import annotations

import itertools
import random
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from service.catalog import Catalog, models
from service.catalog.planner import routes, zones
from service.errors import ShredcatError
from service.pruning.evaluator import FileEvaluator, stats_by_path
from service.pruning.parse_sql import parse_sql
from service.storage.partitions import partition_stats
from tests.catalog.factories import DATE, DEC, FLOAT64, INT64, VARCHAR, cs, dec, fs, ps, with_columns

#: Files in the table, and data file ids per zone map entry: a few files, and enough files in
#: small zones for ranges to go through the zone maps and their runs.
LAYOUTS = [(12, None), (64, 4)]

#: (term, a few literals of its type) per kind of term and key family.
TERMS = {
    "variant_get(v, '$.i', 'bigint')": ["5", "40", "-1", "'7'"],
    "variant_get(v, '$.f', 'double')": ["0.5", "20.25", "'NaN'", "1e300"],
    "variant_get(v, '$.s', 'string')": ["'k3'", "'zz'", "''"],
    "variant_get(v, '$.d', 'date')": ["DATE '2024-01-05'", "'2024-02-01'"],
    "variant_get(v, '$.m', 'decimal(38,2)')": ["1.25", "100"],
    "variant_get(v, '$.sparse', 'bigint')": ["3", "100"],  # some files lack it
    "variant_get(v, '$.mixed', 'bigint')": ["3", "100"],  # stored as two types
    "i": ["5", "40", "'7'"],
    "x": ["0.5", "'NaN'", "-0.0"],
    "name": ["'k3'", "'k'"],
    "day": ["DATE '2024-01-05'", "'2024-01-05'"],
    "p": ["3", "'3'", "100"],
    "pd": ["DATE '2024-01-03'", "'2024-01-10'"],
}
SHAPES = [
    "{t} = {a}", "{t} <> {a}", "{t} < {a}", "{t} <= {a}", "{t} > {a}", "{t} >= {a}",
    "{t} IN ({a}, {b})", "{t} NOT IN ({a}, {b})", "{t} BETWEEN {a} AND {b}", "NOT ({t} BETWEEN {a} AND {b})",
    "{t} IS NULL", "{t} IS NOT NULL", "NOT ({t} = {a})", "{t} = {a} OR {t} IS NULL", "{t} <=> {a}",
]  # fmt: skip


def _files(n: int) -> list:
    out = []
    for i in range(n):
        nulls = 3 if i % 4 == 0 else 0
        paths = [
            ps('"i"', INT64, 4 * i, 4 * i + 3, nulls=nulls),
            ps('"f"', FLOAT64, 2.0 * i, 2.0 * i + 1.5, nan=i % 5 == 0, nulls=nulls),
            ps('"s"', VARCHAR, f"k{i}", f"k{i}x"),
            ps('"d"', DATE, 19723 + i, 19723 + i),
            ps('"m"', DEC, dec(f"{i}.25"), dec(f"{i + 1}.75")),
        ]
        if i % 3:
            paths.append(ps('"sparse"', INT64, i, i + 1))
        paths.append(ps('"mixed"', INT64 if i % 2 else VARCHAR, i if i % 2 else "a", i + 1 if i % 2 else "b"))
        f = fs(f"s3://b/t/p={i % 4}/pd=2024-01-{1 + i % 9:02d}/f{i:03d}.parquet", *paths)
        out.append(
            with_columns(
                f,
                cs("i", INT64, 4 * i, 4 * i + 3, nulls=nulls),
                cs("x", FLOAT64, -1.0 + i, 1.0 + i, nan=i % 3 == 0),
                cs("name", VARCHAR, f"k{i}", f"k{i}"),
                cs("day", DATE, 19723 + i, 19724 + i),
            )
        )
    return out


@pytest.fixture(params=LAYOUTS, ids=lambda layout: f"{layout[0]}files")
def cat(request: pytest.FixtureRequest, catalog_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Catalog, int]]:
    n, zone = request.param
    if zone is not None:
        monkeypatch.setattr(models, "ZONE_FILES", zone)
    c = Catalog(catalog_url)
    c.create_table("ns", "t", ["v"])
    c.commit("ns", "t", _files(n))
    yield c, n
    c.close()


def _planned(cat: Catalog, sql: str, snapshot: int | None = None) -> set[str]:
    """Every candidate of ``sql``, page by page (5 a page, counts asked on the first)."""
    try:
        res = cat.plan("ns", "t", lambda s: parse_sql(sql, schema=s), page_size=5, counts=True, snapshot_id=snapshot)
        kept = {c.path for c in res.candidates}
        token = res.next_page_token
        while token is not None:
            page = cat.plan("ns", "t", lambda s: parse_sql(sql, schema=s), page_size=5, page_token=token)
            kept |= {c.path for c in page.candidates}
            token = page.next_page_token
    except ShredcatError as e:
        raise AssertionError(f"{sql}: {e.http_status} {e}") from e
    return kept


def _check(cat: Catalog, sql: str, stored: dict[str, Any], snapshot: int | None = None) -> bool:
    """Plan ``sql`` and check it keeps every file of ``stored`` (those live at ``snapshot``) the
    evaluator keeps; False when the predicate is refused (a 4xx) before planning."""
    schema = cat.table_schema("ns", "t")
    try:
        tree = parse_sql(sql, schema=schema)
    except ShredcatError as e:
        assert e.http_status < 500, (sql, e)
        return False
    kept = _planned(cat, sql, snapshot)
    assert kept <= set(stored), (sql, kept - set(stored))
    evaluator = FileEvaluator(tree)
    for path, s in stored.items():
        rows = [*s.paths, *s.columns, *(partition_stats(v, s.record_count) for v in s.partitions)]
        if evaluator.evaluate(stats_by_path(rows)).might_match:
            assert path in kept, f"Should not skip: {path} for {sql} at snapshot {snapshot}"
    return True


def _singles() -> list[str]:
    out = []
    for (term, literals), shape in itertools.product(TERMS.items(), SHAPES):
        a, b = literals[0], literals[-1]
        out += [shape.format(t=term, a=a, b=b), shape.format(t=term, a=b, b=a)]
    return out


def test_every_shape_on_every_term_plans(cat: tuple[Catalog, int], monkeypatch: pytest.MonkeyPatch) -> None:
    cat, n = cat
    taken: Counter[str] = Counter()
    for module, route in ((zones, "zone_runs"), (routes, "scan_window"), (routes, "walk"), (routes, "set_rows")):
        real = getattr(module, route)
        monkeypatch.setattr(module, route, lambda *a, _real=real, _route=route, **k: taken.update([_route]) or _real(*a, **k))
    stored = {f.path: cat.file_stats("ns", "t", f.path) for f in _files(n)}
    planned = sum(_check(cat, sql, stored) for sql in _singles())
    assert planned > 300, planned
    # Every route was taken (the large layout's zone maps included), or the grid proves less.
    want = {"scan_window", "walk", "set_rows"} | ({"zone_runs"} if n > 12 else set())
    assert want <= {r for r, k in taken.items() if k}, taken


def test_pairs_of_shapes_on_different_terms_plan(cat: tuple[Catalog, int]) -> None:
    """Two shapes joined by AND, OR or AND NOT, on different kinds of term (a sample)."""
    cat, n = cat
    rnd = random.Random(11)
    singles = _singles()
    stored = {f.path: cat.file_stats("ns", "t", f.path) for f in _files(n)}
    planned = 0
    for _ in range(100):
        a, b = rnd.sample(singles, 2)
        planned += _check(cat, f"({a}) {rnd.choice(['AND', 'OR', 'AND NOT'])} ({b})", stored)
    assert planned > 60, planned


def test_shapes_at_the_snapshot_before_a_removal(cat: tuple[Catalog, int]) -> None:
    """After a third of the files are removed: plans now, and at the snapshot before (where the
    removed files are live again), keep what the evaluator keeps among the files live there."""
    cat, n = cat
    files = _files(n)
    before = cat.get_table("ns", "t").current_snapshot_id
    everything = {f.path: cat.file_stats("ns", "t", f.path) for f in files}
    cat.remove("ns", "t", [f.path for f in files[::3]])
    now = {p: s for p, s in everything.items() if p not in {f.path for f in files[::3]}}
    rnd = random.Random(12)
    sample = rnd.sample(_singles(), 80)
    assert sum(_check(cat, sql, now) for sql in sample) > 40
    assert sum(_check(cat, sql, everything, snapshot=before) for sql in sample) > 40
