"""Planning in the catalog database: the stats-condition IR translated to SQL.

The rules live in :mod:`service.pruning.conditions` (compiled once from the predicate); this
package only translates each test of that IR into a WHERE clause over the typed key columns of
``ducklake_file_variant_stats`` and combines leaves with set operations, so the same rules
decide in Python (:mod:`service.pruning.evaluator`, used by explain mode and tests) and in SQL.
:meth:`service.catalog.Catalog.plan` is the entry point; the rewrites of a condition that need no
database are :mod:`service.pruning.rewrites` and :mod:`service.pruning.selectivity`.

* :mod:`.shapes`: each statement family as SQLAlchemy Core, built from the statement's shape (a
  tuple naming what decides the SQL and the positions of its values); :mod:`.sql`: runs a shape
  (compiled once per shape and dialect, then run by the driver), the limits every statement shares;
* :mod:`.clauses`: a leaf's test of one stats row; :mod:`.sets`: a condition as one SELECT of the
  candidate ids (the set plan), or as a test of one file;
* :mod:`.access`: the cost-based choice of how a page is read (set plan, walk, key scan, zones),
  :mod:`.zones` the key scans and zone maps, :mod:`.routes` each route's statements;
* :mod:`.paging`: page tokens (the keyset, :mod:`service.keyset`, pins the snapshot and predicate);
* :mod:`.scope`: the snapshot planned at and the partition types read with;
* :mod:`.plan`: :func:`plan_in`, a page and its counts; :mod:`.explain`: each file's reasons;
* :mod:`.listing`: the playground's listing of files with their decisions (the dashboard's:
  imported from there, so that a plan does not load it).

Results are paged by ``data_file_id`` (keyset), so a 900,000-file answer is never held in memory.
"""

from service.catalog.planner.explain import DEFAULT_EXPLAIN_SAMPLE
from service.catalog.planner.paging import PlanToken, decode_plan_token
from service.catalog.planner.plan import plan_in
from service.catalog.planner.sql import (
    COLUMN_STATS,
    MAX_POINT_PROBES,
    MAX_SQL_TERMS,
    SQLITE_POINT_PROBES,
    VARIANT_STATS,
)

__all__ = [
    "COLUMN_STATS",
    "DEFAULT_EXPLAIN_SAMPLE",
    "MAX_POINT_PROBES",
    "MAX_SQL_TERMS",
    "SQLITE_POINT_PROBES",
    "VARIANT_STATS",
    "PlanToken",
    "decode_plan_token",
    "plan_in",
]
