"""The dashboard's type timeline, read from the path dictionary's counters, equals the full scan
of the path's stats rows it replaced (kept here as the oracle), after every step of a history of
commits, removals, type drifts, replacements, restatements and re-registrations, on both backends."""

from __future__ import annotations

import dataclasses
import itertools

from hypothesis import HealthCheck, given, settings
from sqlalchemy import select

from bench.timeline import full_scan
from service.catalog import Catalog
from service.catalog import models as m
from service.catalog import repository as repo
from service.catalog.history import _timeline, type_timeline
from service.catalog.repository.common import VP
from service.stats.model import FileStats
from tests.catalog.factories import INT64, VARCHAR, assert_consistent, fs, ps
from tests.catalog.test_property import files_and_ops

_tables = itertools.count()


def assert_timelines_match(cat: Catalog, ns: str, table: str) -> int:
    """Every Variant path of the table: the timeline == the full scan; the spans compared."""
    compared = 0
    with cat.engine.connect() as conn:
        t = repo.require_table(conn, ns, table)
        keys = conn.execute(
            select(VP.column_id, VP.variant_path).where(VP.table_id == t.table_id, VP.variant_path != m.COLUMN_KEY_PATH).distinct()
        ).all()
        for cid, vp in keys:
            if int(cid) not in t.column_names:
                continue
            expected = full_scan(conn, t, int(cid), vp)
            assert _timeline(conn, t, int(cid), vp) == expected, (cid, vp)
            compared += len(expected)
    return compared


def test_timeline_follows_drift_removal_replacement_restatement_and_reregistration(catalog: Catalog) -> None:
    catalog.create_table("ns", "h", ["v"])
    name = lambda t, lo, hi: ps('"name"', t, lo, hi)  # noqa: E731
    a, b = fs("a", name(VARCHAR, "a", "k")), fs("b", name(VARCHAR, "b", "z"), ps('"id"', INT64, 0, 9))
    drift = fs("c", name(INT64, 1, 5))
    steps = [
        lambda: catalog.commit("ns", "h", [a, b]),
        lambda: catalog.commit("ns", "h", [drift]),  # "name" drifts to int64
        lambda: catalog.remove("ns", "h", ["a"]),
        lambda: catalog.commit("ns", "h", [fs("d", name(INT64, 2, 3))], remove=["b"]),  # replacement: varchar gone
        lambda: catalog.commit("ns", "h", [a]),  # re-registered: varchar again
        # Restated: same content, fresh stats extracted by the catalog's caller.
        lambda: catalog.commit("ns", "h", [dataclasses.replace(drift, paths=(name(INT64, 0, 7),))], extracted=["c"]),
        lambda: catalog.remove("ns", "h", ["a", "c", "d"]),  # nothing live
    ]
    compared = 0
    for step in steps:
        step()
        compared += assert_timelines_match(catalog, "ns", "h")
        assert_consistent(catalog, "ns", "h")
    spans = type_timeline(catalog, "ns", "h", "v", '"name"')
    snaps = [s.snapshot_id for s in catalog.list_snapshots("ns", "h")]
    assert [(s.shredded_type, s.files_ever, s.live_files) for s in spans] == [("varchar", 3, 0), ("int64", 3, 0)]
    assert [s.until_snapshot for s in spans] == [snaps[-1], snaps[-1]] and compared > 0


def test_timeline_equals_the_full_scan_over_random_histories(catalog: Catalog) -> None:
    n = 30 if catalog.backend == "sqlite" else 12

    @settings(max_examples=n, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(files_and_ops())
    def run(case: tuple[list[FileStats], list[tuple[str, list[int]]]]) -> None:
        files, ops = case
        table = f"t{next(_tables)}"
        catalog.create_table("p", table, ["v", "w"])
        for op, idx in ops:
            batch = [files[i] for i in idx]
            if op == "commit":
                catalog.commit("p", table, batch)
            else:
                catalog.remove("p", table, [f.path for f in batch], missing_ok=True)
            assert_timelines_match(catalog, "p", table)
        assert_consistent(catalog, "p", table)

    run()
