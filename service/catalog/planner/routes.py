"""The statements of each route to a page of candidates, chosen by :mod:`.access`: the set plan's
candidates in id order (:func:`set_rows`), a walk over the live files testing each one
(:func:`walk`), a key's rows scanned in file order (:func:`scan_window`, :func:`scan_runs`), the next
live files (:func:`every_row`). Each returns page rows ``(id, path, size, record count)``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from service.catalog.models import PATH_FILE_COLUMNS
from service.catalog.planner.sets import Planner
from service.catalog.planner.shapes import Shape
from service.catalog.planner.zones import KeyScan, Run
from service.pruning.conditions import Condition


@dataclass
class Page:
    """The rows of one page (``page_size + 1`` at most, the extra one meaning "more")."""

    planner: Planner
    condition: Condition
    rows: list[Any]
    _cand_sql: Shape | None = None

    def candidate_sql(self) -> Shape:
        """The set plan's SELECT of every candidate (built on first use)."""
        if self._cand_sql is None:
            self.planner.restart_terms()
            self._cand_sql = self.planner.build(self.condition)
        return self._cand_sql


def set_rows(page: Page, after: int, limit: int) -> list[Any]:
    """The next ``limit`` candidates of the set plan. Their ids are ordered and cut first, and only
    those files are then read: joined the other way round, PostgreSQL read a file row for each of
    10,000 candidates to return 1,001. With a single key's rows behind it, the first step is one
    range scan of the key's file-order index that stops when the page is full, or the key index
    and a sort of what it finds, whichever the database estimates cheaper. On PostgreSQL the ids
    come as an array (an index lookup each); a join there chose to hash the whole file table."""
    binds = page.planner.binds
    # SQLite does not weigh the file-order index against the key indexes: offered the id range
    # and order, it scanned a key's rows in file order for a point lookup (0.6 -> 80 ms at
    # 1,000,000 files). A unary + keeps the id out of its index choice; file-order scans are
    # _scan's, chosen by density.
    plussed = page.planner.conn.dialect.name == "sqlite"
    ids = ("page_ids", page.candidate_sql(), plussed, binds(after), binds(limit))
    return files_of(page.planner, ids)


def files_of(planner: Planner, ids: Shape) -> list[Any]:
    """The page rows of the files ``ids`` (a SELECT of at most a page of ids), in id order: on
    PostgreSQL ``= ANY(ARRAY(ids))``."""
    return list(planner.run(("files_of", planner.conn.dialect.name == "postgresql", ids)).all())



def scan_window(
    planner: Planner, scan: KeyScan, after: int, window: int, limit: int, upto: int
) -> tuple[list[Any], int, int]:
    """The files after ``after`` (up to ``upto``) that pass the leaf (at most ``limit``) among the
    key's next ``window`` rows in file order; how many rows that window held, and its last file id.
    The rows come from a subquery PostgreSQL and SQLite keep apart (OFFSET 0), so the test cannot
    pull the key indexes in: it reads the file-order index (and a string's rows: ``scan.columns``),
    in order, and stops early. The window's count reads the index alone."""
    binds = planner.binds
    where = (binds(scan.row.path_id), planner.live("s"), binds(after), binds(upto), binds(window))

    def rows_sql(columns: tuple[str, ...]) -> Shape:
        return ("window", scan.row.table, columns, *where)

    found = files_of(planner, ("scan_ids", rows_sql(scan.columns), scan.clause, binds(limit)))
    if len(found) >= limit:
        return found, window, int(found[-1][0])
    n, last = planner.run(("window_count", "s", rows_sql(PATH_FILE_COLUMNS))).one()
    return found, int(n), int(last) if last is not None else after


def scan_runs(
    planner: Planner, scan: KeyScan, runs: list[Run], after: int, window: int, limit: int
) -> tuple[list[Any], int, int, bool]:
    """:func:`scan_window` over runs of ids: the passing files after ``after`` (at most ``limit``) among
    the next ``window`` rows; the rows read, the last id read, and whether nothing is left to
    read."""
    found: list[Any] = []
    read = 0
    last = after
    for run in runs:
        if run.hi <= last:
            continue
        got, n, end = scan_window(planner, scan, max(last, run.lo - 1), window - read, limit - len(found), run.hi)
        found += got
        read += n
        if len(found) >= limit or read >= window:
            return found, read, end, False
        last = run.hi  # the run is read to its end
    return found, read, last, True



def walk(planner: Planner, test: Shape, after: int, window: int, limit: int) -> tuple[list[Any], int, int]:
    """The live files after ``after`` that pass ``test`` (at most ``limit``) among the next
    ``window`` live files in id order; how many files that window held, and its last id.

    The window is a bound on the id (its last id, one uncorrelated subquery on the table's live
    files index), not a subquery the files are read from: an ORDER BY over a subquery's rows is
    a sort to SQLite, which would test every file of the window before returning the first."""
    binds = planner.binds
    tid, start = binds(planner.t.table_id), binds(after)
    span = ("span", tid, planner.live("f2"), start, binds(window))
    rows = list(planner.run(("walk", tid, planner.live("f"), start, span, test, binds(limit))).all())
    if len(rows) >= limit:
        return rows, window, int(rows[-1][0])  # stopped early: the span's end is not needed
    walked, last = planner.run(("window_count", "w", span)).one()
    return rows, int(walked), int(last) if last is not None else after


def every_row(planner: Planner, after: int, limit: int) -> list[Any]:
    """The next ``limit`` live files after ``after``: the page of a condition every file passes."""
    binds = planner.binds
    tid = binds(planner.t.table_id)
    return list(planner.run(("next_files", tid, planner.live("f"), binds(after), binds(limit))).all())
