"""The playground's listing: a page of a table's live files, each with the plan's decision (kept or
skipped) and the evaluator's reason in a few words, in ``data_file_id`` order from an offset (the
dashboard's pages are numbered, not keyset)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Connection

from service import keyset
from service.catalog import repository as repo
from service.catalog.planner.explain import not_a_candidate
from service.catalog.planner.scope import resolve_snapshot, restrict_partitions
from service.catalog.planner.sets import Planner, simplify
from service.catalog.planner.shapes import Shape
from service.catalog.results import PlannedFile, PlannedFilesPage
from service.pruning.conditions import Condition, condition_paths
from service.pruning.evaluator import ShortReasons, stats_by_path
from service.values import ShreddedType


def plan_files_in(
    conn: Connection,
    t: repo.TableRow,
    condition: Condition,
    *,
    snapshot_id: int | None = None,
    decision: str = "all",
    offset: int = 0,
    limit: int = 100,
    partition_types: Mapping[str, ShreddedType | None] | None = None,
) -> PlannedFilesPage:
    """A page of the live files (``decision``: all, kept or skipped ones), in ``data_file_id``
    order from ``offset``, each with the SQL layer's decision and the evaluator's short reason.
    Should the two layers ever disagree, the file is reported kept (the SQL answer)."""
    snapshot, current = resolve_snapshot(conn, t, snapshot_id)
    if partition_types is not None:
        condition = restrict_partitions(condition, t, partition_types)
    planner = Planner(conn, t, snapshot, current)
    cand_sql = planner.build(simplify(planner, condition))
    binds = planner.binds
    tests: tuple[Shape, ...] = (("in", "f", planner.all_files()),)
    if decision == "kept":
        tests += (("in", "f", cand_sql),)
    elif decision == "skipped":
        tests += (not_a_candidate(cand_sql),)
    rows = planner.run(("listed", "rows", tests, binds(limit + 1), binds(offset))).all()
    shown = keyset.cut(rows, limit)
    rows = shown.rows
    if decision == "all" and rows:
        # The decision for this page's files only: the candidate set is read once, as a set,
        # rather than probed per row of the whole table.
        ids = tuple(binds(int(r[0])) for r in rows)
        page_ids: Shape = ("in_values", "f", "data_file_id", ids)
        kept_ids = {int(x) for (x,) in planner.run(("listed", "ids", (page_ids, ("in", "f", cand_sql)), None, None))}
    else:
        kept_ids = {int(r[0]) for r in rows} if decision == "kept" else set()
    stats = repo.stats_for_files(conn, t, [int(r[0]) for r in rows], condition_paths(condition))
    objects = repo.objects_for_files(conn, t, [int(r[0]) for r in rows])
    files = []
    reasons = ShortReasons(condition)  # what the page's files share, worked out once
    for r in rows:
        fid = int(r[0])
        kept = fid in kept_ids
        verdict = reasons.of(stats_by_path(stats.get(fid, [])), objects.get(fid))
        reason = f"kept by the SQL layer ({verdict.short})" if kept and not verdict.might_match else verdict.short
        files.append(PlannedFile(r[1], int(r[2]), int(r[3]), fid, kept, reason))
    return PlannedFilesPage(snapshot, tuple(files), offset, shown.more)
