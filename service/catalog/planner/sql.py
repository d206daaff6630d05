"""The planner's one SQL builder: statement text with named bind parameters, and the names and
limits every statement of the planner shares.

Why text and not SQLAlchemy Core (which ``repository/`` uses for its reads and writes): each
planner statement is a shape measured on both databases at up to 1,000,000 files, and its
speed hangs on details of the text that Core would spell its own way or not at all: the
``OFFSET 0`` fences that keep PostgreSQL from flattening a subquery, the unary ``+`` that keeps
an id out of SQLite's index choice, ``= ANY(ARRAY(...))`` on PostgreSQL, a ``VALUES`` list
joined ``LATERAL``, comparisons written exactly as the partial indexes' predicates so that both
databases use them. The planner's SQL is kept byte-identical to what was measured
(``tests/catalog/test_planner_sql_record.py``). Values never enter the text: every one goes
through :meth:`Sql.bind`; only the planner's own identifiers (table and column names chosen
from constants here and in :mod:`service.catalog.models`) are spliced in.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from sqlalchemy import TextClause, text

#: Most SELECT terms one plan may union or intersect. SQLite refuses compound SELECTs of more than
#: 500 terms; past a few hundred the predicate is better rejected with a clear 413 anyway.
MAX_SQL_TERMS = 400
#: Point lists up to this size get one index probe (one UNION branch) each. Longer ones: on
#: PostgreSQL one join of the points with the path's rows (:meth:`RowClauses.point_join`); on
#: SQLite, whose compound SELECTs end at 500 terms, branches up to :data:`SQLITE_POINT_PROBES`
#: within half the plan's term budget (a VALUES join there builds a Bloom filter over the whole
#: path first on an ANALYZEd catalog), then one OR-ed scan.
MAX_POINT_PROBES = 64
SQLITE_POINT_PROBES = 256

#: A page's rows (id, path, size, record count), and the sums the counts are made of, over
#: ``ducklake_data_file f``: one spelling for every statement here.
FILE_ROWS = "SELECT f.data_file_id, f.path, f.file_size_bytes, f.record_count FROM ducklake_data_file f"
FILE_SUMS = "SELECT count(*), coalesce(sum(f.record_count), 0), coalesce(sum(f.file_size_bytes), 0)"

#: Where the stats rows of a key live: Variant paths, and plain or partition columns.
VARIANT_STATS = "ducklake_file_variant_stats"
COLUMN_STATS = "ducklake_file_column_stats"


class Sql:
    """Accumulates the bind parameters of one plan's statements: :meth:`bind` gives a value its
    placeholder (``:p1``, ``:p2``, ... in binding order), :attr:`params` holds them all, passed
    with each statement of the plan."""

    def __init__(self) -> None:
        self.params: dict[str, Any] = {}
        self._n = 0

    def bind(self, value: Any) -> str:
        self._n += 1
        name = f"p{self._n}"
        self.params[name] = value
        return f":{name}"


#: Statements longer than this are kept by :func:`statement` (a short one costs little to parse).
LONG_STATEMENT = 4_000


def statement(sql: str) -> TextClause:
    """``text(sql)``, a long statement kept for its next run: SQLAlchemy parses a statement's
    bind names into parameter objects on every ``text()``, ~8 ms of CPU for the ~2,500 binds of
    an OR of 200 comparisons, run by the playground's counts and page and again by its buttons.
    Bind names are numbered in order (:class:`Sql`), so an equal plan gives an equal text;
    values are passed at execution, never kept."""
    return _long_statement(sql) if len(sql) > LONG_STATEMENT else text(sql)


@lru_cache(maxsize=16)
def _long_statement(sql: str) -> TextClause:
    return text(sql)
