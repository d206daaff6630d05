"""Single-key scans and zone maps: a leaf on one key that every live file has is scanned in file
order on the key's file-order index; a range there first reads the key's zone map
(``shredcat_stats_zone``: its rows' stats per :data:`~service.catalog.models.ZONE_FILES` file ids,
taken together), so the scan starts at the first zone that might hold a passing row and skips the
zones that cannot."""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, TypeGuard

from service.catalog import models
from service.catalog.models import PATH_FILE_COLUMNS
from service.catalog.planner.clauses import PathRow, RowClauses
from service.catalog.planner.sets import FALSE, Planner
from service.catalog.planner.shapes import Shape, row_columns
from service.pruning.conditions import Condition, LeafCondition, RangeMayContain, Test, visit_test
from service.values import family


@dataclass(frozen=True, slots=True)
class KeyScan:
    """One key's live rows in file order, and the leaf's test of one row ``s``; ``columns``: what
    the scan reads of each row (the file-order index's columns, and a string's keys)."""

    row: PathRow
    test: Test
    clause: Shape
    columns: tuple[str, ...] = PATH_FILE_COLUMNS


def key_scan(planner: Planner, condition: Condition, *, selective: bool = False) -> KeyScan | None:
    """The scan for a single leaf whose key every live file has, with one stored type (so one
    index range in file order holds every file) whose keys the index holds; None otherwise, and
    for a ``selective`` leaf that is no range for the zones (:func:`zoned`): the set plan answers
    that one whatever the scan (:func:`~.access.first_rows`), and building the scan's test of a
    200-point list cost more client CPU than its whole plan otherwise."""
    if not isinstance(condition, LeafCondition):
        return None
    row = _only_row(planner, condition)
    if row is None or family(row.shredded_type) == "bin":
        # Strings' keys (up to 256 bytes each) are not in the file-order index: a scan would read
        # a row per entry, so strings are walked first (:func:`string_scan`).
        return None
    test = condition.test_for(row.shredded_type)
    if selective and not zoned(test):
        return None
    return _scan(planner, row, test, PATH_FILE_COLUMNS)


#: What a string key's scan reads of each row: the file-order index's columns and the keys, which
#: only the row holds.
STRING_COLUMNS = (*PATH_FILE_COLUMNS, "min_bin", "max_bin")


def string_scan(planner: Planner, condition: Condition) -> KeyScan | None:
    """On PostgreSQL, the scan of a single leaf on one string key every live file has: the key's
    rows in file order, each read for its keys. :func:`~.access.first_rows` walks such a leaf
    first (a rare name is as likely as a common one) and, once the walk found its candidates
    dense, reads on with this scan: the walk looks each file's row up on the stats primary key (a
    descent each: 69,132 buffers for a page of 10,000 of ``event LIKE 'purch%'`` at 1,000,000
    files), the scan reads the rows of consecutive files on consecutive pages (4,194 buffers).
    SQLite keeps the walk (not measured there). None otherwise."""
    if planner.conn.dialect.name != "postgresql" or not isinstance(condition, LeafCondition):
        return None
    row = _only_row(planner, condition)
    if row is None or family(row.shredded_type) != "bin":
        return None
    return _scan(planner, row, condition.test_for(row.shredded_type), STRING_COLUMNS)


def _only_row(planner: Planner, leaf: LeafCondition) -> PathRow | None:
    """The one dictionary row of ``leaf``'s key, when every live file has a row there (so one
    index range in file order holds every file)."""
    if not planner.covers_every_file(leaf):
        return None
    rows = planner.paths(leaf.column, leaf.variant_path)
    return rows[0] if len(rows) == 1 else None


def _scan(planner: Planner, row: PathRow, test: Test, columns: tuple[str, ...]) -> KeyScan | None:
    """The scan of ``row``'s key with ``test``, when the test reads only ``columns`` of a row."""
    branches = visit_test(test, RowClauses(planner, row))
    clause = ("or", *branches) if branches else FALSE
    if not set(row_columns(clause)) <= set(columns):
        # The scan reads those columns only (IS NULL needs null_count).
        return None
    planner.count(1)
    return KeyScan(row, test, clause, columns)


#: At most this many id runs per scan: runs closer together than the gaps left are scanned as one.
MAX_RUNS = 16


@dataclass(frozen=True, slots=True)
class Run:
    """Consecutive data file ids whose zones might hold rows passing a scan's test (the gaps between
    runs hold none): the rows there, and how many of them might pass, estimated from where the
    range falls between each zone's bounds (values taken as evenly spread)."""

    lo: int
    hi: int
    files: int
    estimate: float


def zoned(t: Test) -> TypeGuard[RangeMayContain]:
    """Whether a zone map helps a key scan with test ``t``: a range wider than one value (a point,
    or a point list, is a short index range each on the key indexes)."""
    return isinstance(t, RangeMayContain) and not (t.lo is not None and t.lo == t.hi)


def zone_runs(planner: Planner, scan: KeyScan, after: int, *, estimate: bool) -> list[Run] | None:
    """The runs of zones after ``after`` that might hold rows passing ``scan``'s range, in file
    order (at most :data:`MAX_RUNS`: the smallest gaps are read through); None when the test is not
    a range wider than one value, which the set plan's key index answers without help (a point:
    a short index range; a point list: one per point). The zones are grouped into runs in the
    database (consecutive zones share ``zone - row_number()``), which returns a row per run; with
    ``estimate``, each run's rows that might pass are estimated there too."""
    t = scan.test
    if not zoned(t):
        return None
    clauses = RowClauses(planner, scan.row, zones=True)
    branches = visit_test(t, clauses)
    if not branches:
        return []
    binds = planner.binds
    size = models.ZONE_FILES
    share: Shape | None = None
    if estimate:
        # Each side of the range, as its key's position (None: open, or no typed key).
        lo, hi = (None if b is None else clauses.key(b) for b in (t.lo, t.hi))
        share = (
            "share",
            family(scan.row.shredded_type),
            None if lo is None else binds(float(lo)),
            None if hi is None else binds(float(hi)),
        )
    pid = binds(scan.row.path_id)
    found = planner.run(("zone_runs", pid, binds(after // size), ("or", *branches), share)).all()
    runs = [
        Run(max(int(first) * size, after + 1), int(last) * size + size - 1, int(files), _finite(est, files))
        for first, last, files, est in found
    ]
    if len(runs) > MAX_RUNS:
        gaps = sorted(range(1, len(runs)), key=lambda i: runs[i].lo - runs[i - 1].hi, reverse=True)
        bounds = [0, *sorted(gaps[: MAX_RUNS - 1]), len(runs)]
        runs = [
            Run(
                runs[a].lo,
                runs[b - 1].hi,
                sum(r.files for r in runs[a:b]),
                sum(r.estimate for r in runs[a:b]),
            )
            for a, b in pairwise(bounds)
        ]
    return runs


def _finite(estimate: Any, files: Any) -> float:
    """A run's estimate, or its row count where the bounds made it meaningless (infinities)."""
    v = float(estimate or 0)
    return v if math.isfinite(v) else float(files)
