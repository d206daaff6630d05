"""The entry point: one page of a condition's candidates (:func:`plan_in`), with the first page's
counts over the whole answer when they are free or asked for, and explain mode's reasons."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from sqlalchemy import Connection

from service import keyset
from service.catalog import repository as repo
from service.catalog.planner import access
from service.catalog.planner.explain import DEFAULT_EXPLAIN_SAMPLE
from service.catalog.planner.explain import explain as explain_page
from service.catalog.planner.paging import decode_plan_token, fingerprint, next_token_doc
from service.catalog.planner.routes import Page
from service.catalog.planner.scope import resolve_snapshot, restrict_partitions
from service.catalog.planner.sets import Planner, simplify
from service.catalog.results import Candidate, PlanResult
from service.errors import BadInputError
from service.pruning.conditions import Condition
from service.pruning.rewrites import keeps_every_file
from service.values import ShreddedType


def plan_in(
    conn: Connection,
    t: repo.TableRow,
    condition: Condition,
    *,
    snapshot_id: int | None = None,
    explain: bool = False,
    page_size: int = 1000,
    page_token: str | None = None,
    explain_sample: int = DEFAULT_EXPLAIN_SAMPLE,
    path_facts: dict[tuple[str, str | None], list[tuple[ShreddedType, int, int]]] | None = None,
    partition_types: Mapping[str, ShreddedType | None] | None = None,
    counts: bool = False,
    cache: repo.TableCache | None = None,
) -> PlanResult:
    """One page of the candidates of ``condition`` (already compiled and merged), inside an open
    transaction, on the table row ``t`` read in it; see :meth:`service.catalog.Catalog.plan`.

    ``path_facts``, if given, receives what planning read of each leaf's path: ``(column,
    variant_path) -> [(stored type, live files, live values)]`` (every type ever stored), so the plan's
    warnings need no second look at the same rows. ``partition_types``: the type of each partition
    column as the predicate reads it (declared, or merged over the live files): a file whose value
    is stored as another type is judged by type-independent facts only
    (:func:`~.scope.restrict_partitions`).

    The first page's counts over the whole answer are given when the answer fits in the page or
    when ``counts`` asks for them; otherwise ``files_kept``, ``files_pruned``, ``rows_skipped`` and
    ``bytes_skipped`` are None (counting a million candidates costs seconds; a driver paging
    through them does not need it). ``cache``: keeps the Variant paths' dictionary rows by the
    table's metadata key (given when ``t`` was read with one), for the next plans to reuse."""
    fp = fingerprint(condition, t.table_id)
    after, snapshot_id = _start(page_token, fp, snapshot_id)
    snapshot, current = resolve_snapshot(conn, t, snapshot_id)
    if partition_types is not None:
        condition = restrict_partitions(condition, t, partition_types)
    planner = Planner(conn, t, snapshot, current, cache)
    as_asked = condition  # explain gives each file's reasons for the condition as asked
    condition = simplify(planner, condition)
    page = access.first_rows(planner, condition, after, page_size)
    if path_facts is not None:
        for key, prows in planner.path_rows().items():
            path_facts[key] = [(r.shredded_type, r.live_file_count, r.live_value_count) for r in prows]
    shown = keyset.cut(page.rows, page_size)
    candidates = tuple([Candidate(r[1], r[2], r[3], r[0]) for r in shown.rows])
    next_token = shown.next_token(lambda r: next_token_doc(r[0], snapshot, fp, partition_types))
    totals = _Counts(None, None, None, None, None)
    if page_token is None:
        totals = _counts(planner, page, candidates, more=shown.more, counts=counts)
    explanation = None
    if explain:
        explanation = explain_page(conn, planner, t, as_asked, page.candidate_sql(), candidates, explain_sample)
    return PlanResult(
        snapshot_id=snapshot,
        candidates=candidates,
        next_page_token=next_token,
        files_considered=totals.considered,
        files_pruned=totals.pruned,
        files_kept=totals.kept,
        rows_skipped=totals.rows_skipped,
        bytes_skipped=totals.bytes_skipped,
        explain=explanation,
    )


def _start(page_token: str | None, fp: str, snapshot_id: int | None) -> tuple[int, int | None]:
    """The file id a page starts after, and the snapshot to plan at: a page token's (which must
    belong to this predicate and table), else the first page of ``snapshot_id``."""
    if page_token is None:
        return 0, snapshot_id
    token = decode_plan_token(page_token)
    if token.fingerprint != fp:
        raise BadInputError("the page token belongs to another predicate or table", details={"field": "page-token"})
    return token.after, token.snapshot


class _Counts(NamedTuple):
    considered: int | None
    pruned: int | None
    kept: int | None
    rows_skipped: int | None
    bytes_skipped: int | None


def _counts(planner: Planner, page: Page, candidates: tuple[Candidate, ...], *, more: bool, counts: bool) -> _Counts:
    """The first page's counts: the files considered (free at the current snapshot), and the files
    kept, when the whole answer is this page, every file is kept, or ``counts`` asks for them."""
    t = planner.t
    total_n: Any
    total_rows: Any
    total_bytes: Any
    if planner.current:
        total_n, total_rows, total_bytes = t.live_file_count, t.live_record_count, t.live_bytes
    elif counts or not more:
        total_n, total_rows, total_bytes = planner.run(("sums_joined", planner.all_files())).one()
    else:
        total_n = total_rows = total_bytes = None
    considered = None if total_n is None else int(total_n)
    if not more:
        # The whole answer is this page.
        kept_n: Any = len(candidates)
        kept_rows: Any = sum(c.record_count for c in candidates)
        kept_bytes: Any = sum(c.file_size_bytes for c in candidates)
    elif keeps_every_file(page.condition) and total_n is not None:
        kept_n, kept_rows, kept_bytes = total_n, total_rows, total_bytes
    elif counts:
        kept_n, kept_rows, kept_bytes = planner.run(("sums", page.candidate_sql())).one()
    else:
        kept_n = None
    if kept_n is None or total_n is None:
        return _Counts(considered, None, None, None, None)
    kept = int(kept_n)
    return _Counts(
        considered, int(total_n) - kept, kept, int(total_rows) - int(kept_rows), int(total_bytes) - int(kept_bytes)
    )
