"""Explain mode: each file's reasons from the Python evaluator, for the kept files of a page and a
sample of the pruned ones. Both layers interpret the same condition; should they ever disagree,
the file is reported kept (the SQL answer), never silently pruned."""

from __future__ import annotations

from sqlalchemy import Connection

from service.catalog import repository as repo
from service.catalog.planner.sets import Planner
from service.catalog.planner.shapes import Shape
from service.catalog.results import Candidate, FileExplanation
from service.pruning.conditions import Condition

DEFAULT_EXPLAIN_SAMPLE = 50


def not_a_candidate(cand_sql: Shape) -> Shape:
    """``f`` is not among the candidates ``cand_sql``: an anti-join, not ``NOT IN (...)``, which PostgreSQL
    runs as a subplan rescanned for every file once it misjudges the candidates too many to hash
    in ``work_mem`` (at a past snapshot its estimate was 11 million rows for a 50,000-file table:
    47 s for an explained plan instead of 1 s)."""
    return ("not_candidate", cand_sql)


def explain(
    conn: Connection,
    planner: Planner,
    t: repo.TableRow,
    condition: Condition,
    cand_sql: Shape,
    candidates: tuple[Candidate, ...],
    sample: int,
) -> tuple[FileExplanation, ...]:
    """Reasons from the Python evaluator, for the kept files of this page (up to ``sample``) and
    a sample of pruned files. Both layers interpret the same IR; should they ever disagree, the
    file is reported kept (the SQL answer), never silently pruned."""
    from service.pruning.evaluator import interpret, stats_by_path  # a plan without explain never loads it

    tests = (("in", "f", planner.all_files()), not_a_candidate(cand_sql))
    pruned_rows = planner.run(("listed", "paths", tests, planner.binds(sample), None)).all()
    kept_files = [(c.data_file_id, c.path, True) for c in candidates[:sample]]
    files = kept_files + [(int(r[0]), r[1], False) for r in pruned_rows]
    stats = repo.stats_for_files(conn, t, [f[0] for f in files])
    objects = repo.objects_for_files(conn, t, [f[0] for f in files])
    out = []
    for fid, path, kept in files:
        verdict = interpret(condition, stats_by_path(stats.get(fid, [])), objects.get(fid))
        if kept:
            reason = verdict.reason if verdict.might_match else f"kept by the SQL layer ({verdict.reason})"
        else:
            reason = verdict.reason
        out.append(FileExplanation(path=path, kept=kept, reason=reason))
    return tuple(out)
