"""The admin pages' reads: a module of read queries apart from the catalog's write side.

:class:`AdminReads` answers what only the dashboard asks (path coverage and health, newest-first
history, files sorted by size or rows, a path's per-file bounds for the range chart, a planned page
of every file with its decision). It runs each read through its :class:`~service.catalog.Catalog`
(the same database boundary: one read transaction, routed as the catalog routes reads) and writes
nothing. :func:`admin_reads` gives the one instance of a catalog, whose path-bounds cache then
lives as long as the catalog.
"""

from __future__ import annotations

import threading
import weakref
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Literal

from sqlalchemy import Connection

from service.catalog import repository as repo
from service.catalog.repository import FileSort as FileSort  # re-exported: the dashboard names the sorts
from service.catalog.results import (
    DataFileInfo,
    FileBound,
    PathBounds,
    PathCoverage,
    PathHealth,
    PlannedFilesPage,
    RecentSnapshot,
)
from service.catalog.service import (
    Catalog,
    _check_columns,
    _check_id,
    _compiled,
    _newest,
    _parse_for,
    _plan_page,
)
from service.errors import BadInputError, NotFoundError
from service.values import ShreddedType

if TYPE_CHECKING:
    from service.pruning.expressions import BooleanExpression
    from service.pruning.schema import TableSchema

#: Which of a plan's files :meth:`AdminReads.plan_files` lists.
FileDecision = Literal["all", "kept", "skipped"]

#: :meth:`AdminReads.path_bounds` answers kept, each of at most this many files' bounds (the
#: dashboard's chart asks for 500, whatever the table's size): ~20 MB at most.
PATH_BOUNDS_CACHE_SIZE = 64
PATH_BOUNDS_CACHED_FILES = 1_000
#: A path in at most this many files is charted from every file's keys (two index scans and a
#: sum per key in Python: ~0.1 s at this size); one in more from a sample of
#: :data:`PATH_BOUNDS_SAMPLE` of them (what took 5-17 s at 3,000,000 files). The sample's cost is
#: its rows' random reads (~0.1 ms each at 1,000,000 files): 2,000 keep a first view near 0.3 s.
PATH_BOUNDS_EXACT_FILES = 20_000
PATH_BOUNDS_SAMPLE = 2_000

_OF: weakref.WeakKeyDictionary[Catalog, AdminReads] = weakref.WeakKeyDictionary()
_OF_LOCK = threading.Lock()


def admin_reads(catalog: Catalog) -> AdminReads:
    """The admin reads of ``catalog``: one instance per catalog (its path-bounds cache is shared
    by every page and request using that catalog)."""
    with _OF_LOCK:
        reads = _OF.get(catalog)
        if reads is None:
            reads = _OF[catalog] = AdminReads(catalog)
        return reads


class AdminReads:
    """The dashboard's reads of one catalog (prefer :func:`admin_reads`, which shares the cache)."""

    def __init__(self, catalog: Catalog) -> None:
        self._cat = catalog
        self._bounds = repo.TableCache(PATH_BOUNDS_CACHE_SIZE)

    def path_coverage(self, namespace: str, table: str) -> list[PathCoverage]:
        """For every path fully shredded in at least one live file: in how many live files, with
        which types. Sorted by column order, then variant_path."""

        def op(conn: Connection) -> list[PathCoverage]:
            t = self._cat._table(conn, namespace, table)
            names = t.column_names
            order = {c: i for i, c in enumerate(t.columns)}
            by_path: dict[tuple[str, str], dict[str, int]] = defaultdict(dict)
            for cid, vp, tname, n in repo.path_coverage_rows(conn, t.table_id):
                if cid in names:
                    by_path[(names[cid], vp)][tname] = n
            out = []
            for (col, vp), types in sorted(by_path.items(), key=lambda kv: (order[kv[0][0]], kv[0][1])):
                out.append(
                    PathCoverage(
                        column=col,
                        variant_path=vp,
                        live_files=t.live_file_count,
                        shredded_files=sum(types.values()),
                        types=tuple(sorted(types.items(), key=lambda kv: (-kv[1], kv[0]))),
                    )
                )
            return out

        return self._cat._read(op)

    def path_health(self) -> dict[int, PathHealth]:
        """For every live table (by ``table_id``) with a path fully shredded in at least one live
        file: how many such paths are in the global stats, in a type conflict, or partial (the
        statuses of :meth:`path_coverage`). One query for all tables."""

        def op(conn: Connection) -> dict[int, PathHealth]:
            live: dict[int, int] = {}
            types: dict[tuple[int, int, str], list[int]] = defaultdict(list)
            for table_id, cid, vp, n, files in repo.live_path_rows(conn):
                types[(table_id, cid, vp)].append(n)
                live[table_id] = files
            counts: dict[int, list[int]] = defaultdict(lambda: [0, 0, 0])
            for (table_id, _, _), ns in types.items():
                slot = 1 if len(ns) > 1 else 0 if ns[0] == live[table_id] else 2
                counts[table_id][slot] += 1
            return {tid: PathHealth(*c) for tid, c in counts.items()}

        return self._cat._read(op)

    def files_by_path(
        self,
        namespace: str,
        table: str,
        column: str,
        variant_path: str,
        *,
        shredded_type: str | None,
        after: str | None = None,
        limit: int = 100,
    ) -> list[DataFileInfo]:
        """Live files, by path (keyset ``after``), where ``column``/``variant_path`` is fully
        shredded as ``shredded_type``, or, with None, where it is not fully shredded at all: the
        files behind each status of :meth:`path_coverage`."""
        self._cat._check_limit(limit)

        def op(conn: Connection) -> list[DataFileInfo]:
            t = repo.require_table(conn, namespace, table)
            cid = t.columns.get(column)
            if cid is None:
                raise NotFoundError(f"{t.qualified_name} has no Variant column {column!r}", details={"column": column})
            return repo.files_by_path(conn, t.table_id, cid, variant_path, shredded_type, after=after, limit=limit)

        return self._cat._read(op)

    def recent_snapshots(
        self, *, namespace: str | None = None, table: str | None = None, before: int | None = None, limit: int = 20
    ) -> list[RecentSnapshot]:
        """Snapshots newest first: of every table (and namespace changes), or of one live table
        (``namespace`` and ``table``; NotFoundError when it does not exist). ``before``: keyset,
        the last snapshot id of the previous page."""
        self._cat._check_limit(limit)
        _check_id("before", before)

        def op(conn: Connection) -> list[RecentSnapshot]:
            table_id = None if table is None else repo.require_table(conn, namespace or "", table).table_id
            return repo.recent_snapshots(conn, table_id, before=before, limit=limit)

        return self._cat._read(op)

    def list_files_sorted(
        self,
        namespace: str,
        table: str,
        *,
        sort: FileSort = "size",
        descending: bool = True,
        prefix: str | None = None,
        contains: str | None = None,
        added_in: int | None = None,
        after: tuple[int | str, str] | None = None,
        limit: int = 100,
    ) -> list[DataFileInfo]:
        """Live files ordered by ``sort`` (``path``, ``size`` or ``rows``) then path, both in the
        chosen direction. ``after``: keyset, ``(sort value, path)`` of the last file of the
        previous page (for ``sort="path"`` the value is the path itself). No index covers size or
        record count, so each page sorts the table's live files (a top-N sort in the database);
        path ascending at any snapshot is :meth:`Catalog.list_files`. Filters: ``prefix`` (paths starting
        with it), ``contains`` (paths containing it anywhere, ASCII case-insensitive, ``%`` and
        ``_`` taken literally), ``added_in`` (files added at that snapshot)."""
        self._cat._check_limit(limit)
        _check_id("added_in", added_in)
        if sort not in ("path", "size", "rows"):
            raise BadInputError(f"cannot sort files by {sort!r}")

        def op(conn: Connection) -> list[DataFileInfo]:
            t = repo.require_table(conn, namespace, table)
            return repo.list_files_sorted(
                conn,
                t.table_id,
                sort=sort,
                descending=descending,
                prefix=prefix,
                contains=contains,
                added_in=added_in,
                after=after,
                limit=limit,
            )

        return self._cat._read(op)

    def count_files(
        self,
        namespace: str,
        table: str,
        *,
        prefix: str | None = None,
        contains: str | None = None,
        added_in: int | None = None,
        at_most: int | None = None,
    ) -> int:
        """Live files of the table kept by the filters of :meth:`list_files_sorted` (all of them
        without one). ``at_most``: counting stops past it, a result above it means "more than
        ``at_most``" (:func:`repo.count_files`)."""
        _check_id("added_in", added_in)
        if at_most is not None and at_most < 0:
            raise BadInputError("at_most must not be negative")

        def op(conn: Connection) -> int:
            t = repo.require_table(conn, namespace, table)
            if not prefix and not contains and added_in is None:
                return t.live_file_count if at_most is None else min(t.live_file_count, at_most + 1)
            return repo.count_files(
                conn, t.table_id, None, prefix=prefix, contains=contains, added_in=added_in, at_most=at_most
            )

        return self._cat._read(op)

    def files_removed_at(self, namespace: str, table: str, snapshot: int, *, limit: int = 100) -> list[DataFileInfo]:
        """The files of the table that ``snapshot`` removed (no longer live), by path, at most
        ``limit``."""
        self._cat._check_limit(limit)
        _check_id("snapshot", snapshot)

        def op(conn: Connection) -> list[DataFileInfo]:
            t = repo.require_table(conn, namespace, table)
            return repo.files_removed_at(conn, t.table_id, snapshot, limit)

        return self._cat._read(op, min_snapshot_id=snapshot)

    def find_file(self, namespace: str, table: str, path: str) -> DataFileInfo:
        """The live file at ``path`` (NotFoundError if there is none)."""

        def op(conn: Connection) -> DataFileInfo:
            t = repo.require_table(conn, namespace, table)
            f = repo.live_file(conn, t.table_id, path)
            if f is None:
                raise NotFoundError(f"{path}: not a live file of {t.qualified_name}", details={"path": path})
            return f

        return self._cat._read(op)

    def path_bounds(
        self,
        namespace: str,
        table: str,
        column: str,
        variant_path: str,
        *,
        shredded_type: str | None = None,
        order: Literal["min", "path"] = "min",
        limit: int = 2000,
    ) -> PathBounds:
        """The bounds of ``column``/``variant_path`` in each live file where it is fully shredded
        as ``shredded_type`` (default: the type with most files): the bound strings of at most
        ``limit`` files (evenly spaced over all of them when there are more) and the point-lookup
        estimate over every file (:attr:`PathBounds.point_keep`, from their index keys). A path
        in more than :data:`PATH_BOUNDS_EXACT_FILES` files is read from a sample of them instead
        (:attr:`PathBounds.sample`): every key of a million files is seconds of work.

        ``order="min"``: by the typed min key, files whose min has no key (unknown bound, no
        values, decimals beyond int64) last; ``order="path"``: by file path.

        Cached per table state (:attr:`repo.TableRow.metadata_key`, read in the same
        transaction): a table's Variant stats rows change only with a snapshot of it, which moves
        the key (``refresh`` adds plain-column rows only). A chart viewed again costs one
        statement instead of reading and summing every file's keys (2 x 10^4 at 10,000 files).
        """
        self._cat._check_limit(limit)
        if order not in ("min", "path"):
            raise BadInputError(f"cannot order by {order!r}")

        def op(conn: Connection) -> PathBounds:
            t = repo.require_table(conn, namespace, table, cache=self._cat._tables)
            key = None if t.metadata_key is None else (*t.metadata_key, column, variant_path, shredded_type, order, limit)
            hit = None if key is None else self._bounds.get("path_bounds", key)
            if hit is not None:
                return hit
            found = _path_bounds(conn, t, column, variant_path, shredded_type, order, limit)
            if key is not None and len(found.files) <= PATH_BOUNDS_CACHED_FILES:
                self._bounds.put("path_bounds", key, found)
            return found

        return self._cat._read(op)

    def plan_files(
        self,
        namespace: str,
        table: str,
        expr: BooleanExpression | Callable[[TableSchema], BooleanExpression],
        *,
        snapshot_id: int | None = None,
        decision: FileDecision = "all",
        offset: int = 0,
        limit: int = 100,
        with_plan: bool = False,
        min_snapshot_id: int | None = None,
    ) -> PlannedFilesPage:
        """A page of ``namespace.table``'s live files with :meth:`Catalog.plan`'s decision on each (kept
        or skipped, filtered by ``decision``) and its reason in a few words, in ``data_file_id``
        order from ``offset``. ``expr``: a tree, or a parser given the table's schema (as for
        :meth:`Catalog.plan`).

        ``with_plan``: the page also carries :meth:`Catalog.plan`'s counts and warnings (``plan``, its
        first page of one candidate), planned in the same read from the same parse, and is taken
        at that plan's snapshot; an ``offset`` past the files ``decision`` selects moves back to
        the start of their last page (what the playground shows)."""
        from service.catalog.planner.listing import plan_files_in
        from service.pruning.diagnostics import referenced_columns

        if decision not in ("all", "kept", "skipped"):
            raise BadInputError("decision must be all, kept or skipped", details={"field": "decision"})
        self._cat._check_limit(limit, name="page size", field="page-size")
        if offset < 0:
            raise BadInputError("offset must not be negative", details={"field": "offset"})
        _check_id("snapshot", snapshot_id)
        _check_id("min-snapshot-id", min_snapshot_id)

        def op(conn: Connection) -> PlannedFilesPage:
            t = self._cat._as_of(conn, repo.require_table(conn, namespace, table, cache=self._cat._tables), snapshot_id)
            schema = self._cat._schema(conn, t)
            tree = _parse_for(t, expr, schema)
            _check_columns(t, referenced_columns(tree))
            condition = _compiled(tree)
            plan = start = None
            if with_plan:
                plan = _plan_page(
                    conn, t, schema, condition, snapshot_id, False, 1, None, counts=True, cache=self._cat._path_rows,
                    tree=tree,
                )
                selected = {"all": plan.files_considered, "kept": plan.files_kept, "skipped": plan.files_pruned}[decision]
                start = min(offset, max(0, ((selected or 0) - 1) // limit * limit))
            page = plan_files_in(
                conn,
                t,
                condition,
                snapshot_id=snapshot_id if plan is None else plan.snapshot_id,
                decision=decision,
                offset=offset if start is None else start,
                limit=limit,
                partition_types=schema.partition_types(),
            )
            return page if plan is None else replace(page, plan=plan)

        return self._cat._read(op, min_snapshot_id=_newest(min_snapshot_id, snapshot_id))


def _path_bounds(
    conn: Connection,
    t: repo.TableRow,
    column: str,
    variant_path: str,
    shredded_type: str | None,
    order: Literal["min", "path"],
    limit: int,
) -> PathBounds:
    """:meth:`AdminReads.path_bounds` read from the database."""
    from service.catalog.estimates import point_keep_ratio

    cid = t.columns.get(column)
    if cid is None:
        raise NotFoundError(f"{t.qualified_name} has no Variant column {column!r}", details={"column": column})
    rows = repo.path_types(conn, t.table_id, cid, variant_path)
    if not rows:
        return PathBounds(column, variant_path, None, (), t.live_file_count, 0, (), order)
    types = tuple(sorted(((name, n) for _, name, n in rows), key=lambda kv: (-kv[1], kv[0])))
    by_type = {name: (path_id, n) for path_id, name, n in rows}
    chosen = shredded_type if shredded_type is not None else types[0][0]
    if chosen not in by_type:
        raise NotFoundError(
            f"{column} {variant_path} is not shredded as {chosen} in any live file",
            details={"shredded_type": chosen},
        )
    path_id, total = by_type[chosen]
    st = ShreddedType.parse(chosen)
    # A point lookup keeps, whatever the value, the files storing the path as another type (bounds
    # of that type do not serve this one) and those where it is not fully shredded (no stats).
    shredded = sum(files_of_type for _, files_of_type in types)
    always_kept = max(0, t.live_file_count - shredded) + shredded - total
    if total > PATH_BOUNDS_EXACT_FILES:
        found = _sampled_bounds(conn, path_id, st, total, always_kept, order, limit)
        return replace(found, column=column, variant_path=variant_path, types=types, live_files=t.live_file_count)
    # Every file's keys from the two key indexes; the bound strings of the picked files only.
    lows, highs = repo.sorted_keys(conn, path_id, st)
    unkeyed = repo.file_bounds_without_min_key(conn, path_id, st) if len(lows) < total else []
    n = len(lows) + len(unkeyed)
    picks = _picks(n, limit)
    if order == "path":
        ids = repo.file_ids_by_path(conn, path_id)
        files = repo.file_bounds(conn, path_id, [ids[i] for i in picks if i < len(ids)])
    else:
        # Rank i of the (min key, data_file_id) order is the (i - first rank of its key)-th
        # file holding that min key; the files without one come last.
        at: dict[Any, list[FileBound]] = {}
        for key, f in repo.file_bounds_at_min_keys(conn, path_id, st, {lows[i] for i in picks if i < len(lows)}):
            at.setdefault(key, []).append(f)
        files = []
        for i in picks:
            if i >= len(lows):
                files.append(unkeyed[i - len(lows)])
                continue
            tied, k = at.get(lows[i], []), i - bisect_left(lows, lows[i])
            if k < len(tied):
                files.append(tied[k])
    with_values = len(lows) + sum(1 for f in unkeyed if f.value_count > 0)
    return PathBounds(
        column, variant_path, st, types, t.live_file_count, total, tuple(files), order, with_values,
        point_keep_ratio(st, lows, highs, with_values, always_kept),
    )


def _picks(n: int, limit: int) -> Sequence[int]:
    """Indexes of at most ``limit`` of ``n`` items, evenly spaced (the first and the last included)."""
    return range(n) if n <= limit else sorted({round(i * (n - 1) / max(1, limit - 1)) for i in range(limit)})


def _sampled_bounds(
    conn: Connection,
    path_id: int,
    st: ShreddedType,
    total: int,
    always_kept: int,
    order: Literal["min", "path"],
    limit: int,
) -> PathBounds:
    """:meth:`AdminReads.path_bounds` of a path in ``total`` files read from a sample of
    :data:`PATH_BOUNDS_SAMPLE` of them (:func:`repo.sample_file_bounds`): the picks drawn from the
    sample in ``order`` (the files without a min key last, as in the exact order), the files with
    values and the point-lookup estimate scaled from the sample to ``total``."""
    from service.catalog.estimates import point_keep_ratio

    rows = repo.sample_file_bounds(conn, path_id, st, PATH_BOUNDS_SAMPLE)
    if order == "path":
        rows.sort(key=lambda r: r[3].path)
    else:
        rows.sort(key=lambda r: (r[0] is None, r[3].path if r[0] is None else r[0], r[2]))
    lows = sorted(r[0] for r in rows if r[0] is not None)
    highs = sorted(r[1] for r in rows if r[1] is not None)
    sampled_with = len(lows) + sum(1 for r in rows if r[0] is None and r[3].value_count > 0)
    with_values = sampled_with * total / max(1, len(rows))
    # point_keep_ratio's share over the sample's files with values alone, then weighed with the
    # files every lookup keeps as it weighs them: (held + n A) / (n (W + A)) = (r W + A) / (W + A).
    ratio = point_keep_ratio(st, lows, highs, sampled_with)
    keep = None if ratio is None else (ratio * with_values + always_kept) / (with_values + always_kept)
    files = tuple(rows[i][3] for i in _picks(len(rows), limit))
    return PathBounds("", "", st, (), 0, total, files, order, round(with_values), keep, len(rows))
