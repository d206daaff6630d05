"""The access path of a page of candidates, chosen by cost: the set plan (:mod:`.sets`), a walk
over the live files in id order, a scan of one key's file-order index (within the runs its zone map
allows), or the next live files; each route's statements are in :mod:`.routes`.

The set plan costs in proportion to the whole answer. A page of a dense answer (most files kept)
is instead found by walking the table's live files in id order and testing each one with the same
rules written per file (an index lookup per file and term), stopping when the page is full;
:func:`first_rows` chooses from the density a short walk sees. Counts over a multi-page answer are
computed only when asked for (:mod:`.plan`)."""

from __future__ import annotations

import math
from typing import Any

from service.catalog.planner import routes, zones
from service.catalog.planner.routes import Page
from service.catalog.planner.sets import Planner
from service.catalog.planner.shapes import Shape
from service.catalog.planner.zones import KeyScan, Run
from service.pruning.conditions import Condition, Constant, LeafCondition
from service.pruning.selectivity import looks_selective
from service.values import INT64_MAX, family

#: A page that may hold many candidates first walks this many live files in id order, testing
#: each one (an index lookup per file and term on the stats primary key); what it finds tells how
#: dense the candidates are, hence whether walking on or collecting them as a set reads less.
PROBE_WINDOW = 2_000
#: A page whose shape looks selective through string leaves only (:func:`has_narrow_keys`) is
#: probed on fewer files: such an answer is as often sparse (a rare name) as dense (a common event
#: name), and a sparse one pays the whole probe before the set plan.
STRING_PROBE_WINDOW = 256
#: The most files one walk tests before the rest of the page comes from the set plan (the
#: density seen in the probe can be wrong further on).
MAX_WALK = 50_000


#: A leaf on one key that every live file has is scanned in file order on the key's file-order
#: index (index-only): first this many entries, whose density decides between scanning on and the
#: set plan. What a scanned entry costs against a candidate of the set plan (key index, row, sort),
#: measured at 1,000,000 files: ~1/25 on PostgreSQL, ~1/3 on SQLite.
SCAN_PROBE = 20_000
SCAN_VS_SET = {"postgresql": 25, "sqlite": 3}
MAX_SCAN = 1_000_000


def first_rows(planner: Planner, condition: Condition, after: int, page_size: int) -> Page:
    """The rows of the page after ``after``, by whichever plan reads fewer rows.

    A condition every live file passes reads the next files. The set plan reads the candidates
    through the stats indexes: by key, then sorted (cost ~ candidates K), or, for one key's rows,
    in file order from the key's file-order index, stopping when the page is full (cost ~ index
    entries up to the page's last candidate); the database picks. A walk over the live files in
    id order tests each file until the page is full (cost ~ page / density, a lookup per file
    and term): right when candidates are dense and come from several keys, where the set plan
    would build a million-row answer to return its first thousand.

    A range (not a point) on a key every live file has reads the key's zones first: none that
    might pass means an empty page; a selective range whose estimated answer is cheaper to collect
    than to scan for goes to the set plan; otherwise the zones' runs of ids are scanned
    (:func:`scan_rows`). Other trees whose every candidate must pass a point or bounded range on
    a number (:func:`has_narrow_keys`) go to the set plan directly, other single leaves on such a
    key are scanned from the start. Anything else is probed on :data:`PROBE_WINDOW` files
    (:data:`STRING_PROBE_WINDOW` where strings' points or ranges alone made the tree look
    selective); the density seen there predicts both
    costs (walking on: need / density; the set: density x files), and the cheaper one finishes
    the page."""
    want = page_size + 1
    page = Page(planner, condition, [])
    if isinstance(condition, Constant):
        page.rows = routes.every_row(planner, after, want) if condition.might_match else []
        return page
    shaped = looks_selective(condition)
    selective = shaped and looks_selective(condition, lambda leaf: has_narrow_keys(planner, leaf))
    scan = zones.key_scan(planner, condition, selective=selective)
    runs = None if scan is None else zones.zone_runs(planner, scan, after, estimate=selective)
    if scan is not None and runs is not None:
        if not runs:
            return page  # no zone holds a row that might pass
        if not (selective and set_is_cheaper(planner, runs, want)):
            page.rows = scan_rows(page, scan, after, want, runs)
            return page
    if selective:
        page.rows = routes.set_rows(page, after, want)
        return page
    if scan is not None:
        page.rows = scan_rows(page, scan, after, want, [Run(after + 1, INT64_MAX, planner.t.live_file_count, 0.0)])
        return page
    planner.restart_terms()
    test = planner.file_filter(condition, "f")
    probe = STRING_PROBE_WINDOW if shaped else PROBE_WINDOW
    rows, walked, last = routes.walk(planner, test, after, probe, want)
    if len(rows) >= want or walked < probe:
        page.rows = rows  # full, or every live file after `after` was tested
        return page
    need = want - len(rows)
    density = len(rows) / walked
    remaining = max(planner.t.live_file_count - walked, 0)
    if density > 0 and need / density < density * remaining:
        more, last, done = _walk_on(planner, condition, test, last, min(MAX_WALK, math.ceil(3 * need / density)), need)
        rows += more
        if len(rows) >= want or done:
            page.rows = rows
            return page
        need = want - len(rows)
    page.rows = rows + routes.set_rows(page, last, need)
    return page


def _walk_on(
    planner: Planner, condition: Condition, test: Shape, after: int, window: int, limit: int
) -> tuple[list[Any], int, bool]:
    """A walk's next ``window`` live files after ``after`` once its probe found the candidates
    dense: the passing files (at most ``limit``), the last id read, whether every file was read.
    A single leaf on a string key every file has reads the key's rows in file order instead
    (:func:`~.zones.string_scan`), one row each rather than a lookup per file."""
    strings = zones.string_scan(planner, condition)
    if strings is not None:
        rows, _, last, done = routes.scan_runs(planner, strings, [Run(after + 1, INT64_MAX, window, 0.0)], after, window, limit)
        return rows, last, done
    rows, walked, last = routes.walk(planner, test, after, window, limit)
    return rows, last, walked < window



def has_narrow_keys(planner: Planner, leaf: LeafCondition) -> bool:
    """Whether a point or bounded range on ``leaf``'s key can be read as a short index range: a
    number's can (the key's width floor bounds ``min`` from below: :class:`~.clauses.RowClauses`),
    a string's cannot. Its range is read on the side of one bound, which the database picks
    blind: on SQLite at 1,000,000 files, ``event LIKE 'purch%'`` (a handful of event names in
    every file, 57 % of the files kept) read 737,396 rows through ``max_bin >= 'purch'`` and
    sorted them for a page of 1,000 (0.8-2.8 s); probed first, the walk finds the page in
    ~3 ms. A key no file has a stats row for keeps the shape's verdict (nothing is read by key)."""
    return all(family(r.shredded_type) != "bin" for r in planner.paths(leaf.column, leaf.variant_path))


def set_is_cheaper(planner: Planner, runs: list[Run], want: int) -> bool:
    """Whether the set plan should answer a selective range: scanning the runs would read about
    ``want / density`` entries, the set plan reads its estimated candidates, each
    :data:`SCAN_VS_SET` times dearer."""
    estimate = sum(r.estimate for r in runs)
    files = sum(r.files for r in runs)
    if estimate <= 0 or files <= 0:
        return True
    return want * files / estimate >= SCAN_VS_SET.get(planner.conn.dialect.name, 3) * estimate



def scan_rows(page: Page, scan: KeyScan, after: int, want: int, runs: list[Run]) -> list[Any]:
    """A page of a single-key leaf: scanned in file order within ``runs`` (the ids whose zones might
    hold a passing row, or one run of every id) while the candidates are dense enough, by the set
    plan (the key indexes, then a sort) when they are too sparse for that."""
    planner = page.planner
    rows, scanned, last, done = routes.scan_runs(planner, scan, runs, after, SCAN_PROBE, want)
    if len(rows) >= want or done:
        return rows
    need = want - len(rows)
    density = len(rows) / scanned
    remaining = max(sum(r.files for r in runs) - scanned, 0)
    if density > 0 and need / density < SCAN_VS_SET.get(planner.conn.dialect.name, 3) * density * remaining:
        window = min(MAX_SCAN, math.ceil(3 * need / density))
        more, scanned, last, done = routes.scan_runs(planner, scan, runs, last, window, need)
        rows += more
        if len(rows) >= want or done:
            return rows
        need = want - len(rows)
    return rows + routes.set_rows(page, last, need)
