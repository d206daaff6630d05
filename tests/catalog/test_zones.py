"""Zone maps (``shredcat_stats_zone``): written with the stats rows, equal to the stats of their
rows taken together, filled the same way by migration 0007, and never narrowed by a removal.
The planner's use of them is tested, route by route, in ``test_planner_pages``."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from sqlalchemy import text

from service.catalog import Catalog, models
from service.catalog.db import downgrade, upgrade_to_head
from tests.catalog.factories import FLOAT64, INT64, VARCHAR, assert_consistent, cs, fs, ps

NS, T = "ns", "t"


def _files(n: int, seed: int) -> list[Any]:
    """Files whose rows cover every case of the union: values or none, a bound unknown, NaN known,
    unknown or absent, plain columns beside the Variant paths."""
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        lo = rnd.randrange(-1000, 1000)
        a = ps('"a"', INT64, lo, lo + rnd.randrange(50))
        if i % 11 == 3:
            a = ps('"a"', INT64, None, lo)  # values, min unknown
        if i % 13 == 5:
            a = ps('"a"', INT64, None, None, values=0, nulls=10)  # NULLs only
        x = rnd.uniform(-5, 5)
        nan = rnd.choice([False, False, True, None])
        b = ps('"b"', FLOAT64, x, x + 1, nan=nan)
        s = ps('"s"', VARCHAR, f"k{i % 9}", f"k{i % 9 + 1}")
        f = fs(f"s3://b/t/f{seed}-{i:05d}.parquet", a, b, s)
        out.append(dataclasses.replace(f, columns=(cs("x", INT64, i, i + 5),)))
    return out


def _recomputed(cat: Catalog, live_only: bool) -> dict[tuple[int, int], tuple[Any, ...]]:
    """Every zone as the union of its rows' stats, computed in Python from the stats rows."""
    size = models.ZONE_FILES
    zones: dict[tuple[int, int], list[tuple[Any, ...]]] = {}
    with cat.engine.connect() as c:
        for table in ("ducklake_file_variant_stats", "ducklake_file_column_stats"):
            for r in c.execute(
                text(
                    "SELECT path_id, data_file_id, value_count, min_num, max_num, min_real, max_real, contains_nan, "
                    f"end_snapshot FROM {table}"
                )
            ):
                if live_only and r[8] is not None:
                    continue
                zones.setdefault((int(r[0]), int(r[1]) // size), []).append(tuple(r))
    out = {}
    for key, rows in zones.items():
        with_values = [r for r in rows if r[2] > 0]

        def bound(i: int, pick: Any, vals: list[tuple[Any, ...]] = with_values) -> Any:
            if any(r[i] is None for r in vals) or not vals:
                return None
            return pick(r[i] for r in vals)

        nan = None if any(r[7] is None for r in with_values) else any(bool(r[7]) for r in with_values)
        out[key] = (
            len(rows),
            sum(r[2] for r in rows),
            bound(3, min),
            bound(4, max),
            bound(5, min),
            bound(6, max),
            nan,
        )
    return out


def _stored(cat: Catalog) -> dict[tuple[int, int], tuple[Any, ...]]:
    with cat.engine.connect() as c:
        return {
            (int(r[0]), int(r[1])): (int(r[2]), int(r[3]), r[4], r[5], r[6], r[7], None if r[8] is None else bool(r[8]))
            for r in c.execute(
                text(
                    "SELECT path_id, zone, files, value_count, min_num, max_num, min_real, max_real, contains_nan "
                    "FROM shredcat_stats_zone"
                )
            )
        }


def test_zones_are_their_rows_taken_together(catalog_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits of 7 files into zones of 4: most zones are written by two commits (the upsert's
    merge), each the union of its rows exactly."""
    monkeypatch.setattr(models, "ZONE_FILES", 4)
    files = _files(60, seed=1)
    with Catalog(catalog_url) as cat:
        cat.create_table(NS, T, ["v"])
        for k in range(0, len(files), 7):
            cat.commit(NS, T, files[k : k + 7])
        assert _stored(cat) == _recomputed(cat, live_only=False)
        assert_consistent(cat, NS, T)
        before = _stored(cat)
        cat.remove(NS, T, [f.path for f in files[::3]])
        assert _stored(cat) == before  # never narrowed: still a superset of the live rows
        assert_consistent(cat, NS, T)


def test_migration_fills_zones_as_commits_write_them(empty_db_url: str) -> None:
    """Taken down to 0006 and up again, the zones come back from the live rows as the commits had
    written them (zones of 1,024 files: the migration's own size)."""
    upgrade_to_head(empty_db_url)
    files = _files(2_500, seed=2)
    with Catalog(empty_db_url) as cat:
        cat.create_table(NS, T, ["v"])
        for k in range(0, len(files), 700):
            cat.commit(NS, T, files[k : k + 700])
        written = _stored(cat)
        assert written == _recomputed(cat, live_only=False)
    downgrade(empty_db_url, "0006")
    upgrade_to_head(empty_db_url)
    with Catalog(empty_db_url) as cat:
        assert _stored(cat) == written
        cat.remove(NS, T, [f.path for f in files[:1500:2]])
    downgrade(empty_db_url, "0006")
    upgrade_to_head(empty_db_url)
    with Catalog(empty_db_url) as cat:
        assert _stored(cat) == _recomputed(cat, live_only=True)  # removed rows are left out
        assert_consistent(cat, NS, T)
