"""Spark's own ground truth for the pruning tests: the files holding a row a predicate selects.

The answer depends on the files, the predicate and the session's settings only, never on the
catalog backend a test is parametrized over; it is computed once per (table, predicate, session
settings) and reused by the other parametrizations. Only for tables no test rewrites
(module-scoped lakes written once).

A Spark job costs about half a second on the test machine whatever it reads, and these tables are
tiny: a test passes its whole predicate list as ``corpus`` and the first call answers every
predicate of it in one scan and one job (a flag column per predicate, aggregated per file).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

_CACHE: dict[tuple[str, str, tuple[tuple[str, str], ...]], frozenset[str]] = {}


def where_flags(predicates: Sequence[Any]) -> list[Any]:
    """A Column ``p{i}`` per predicate (SQL text or a Column): 1 on the rows ``where(predicate)``
    keeps, else 0."""
    from pyspark.sql import functions as F

    return [F.when(F.expr(p) if isinstance(p, str) else p, 1).otherwise(0).alias(f"p{i}") for i, p in enumerate(predicates)]


def files_per_predicate(df: Any, file_column: Any, predicates: Sequence[Any]) -> list[frozenset[str]]:
    """For each predicate, the values of ``file_column`` (a Column: the file of each row) on the
    rows ``df.where(predicate)`` keeps, all predicates in one job.

    ``where`` keeps the rows on which the predicate is true; ``CASE WHEN p THEN 1 ELSE 0 END`` is 1
    on exactly those rows (its condition, like a filter's, takes NULL as false; Spark's optimizer
    rewrites NULLs to false in both places alike).
    """
    from pyspark.sql import functions as F

    per_file = df.select(file_column.alias("f"), *where_flags(predicates)).groupBy("f").agg(
        *(F.max(f"p{i}").alias(f"p{i}") for i in range(len(predicates)))
    )
    rows = per_file.collect()
    return [frozenset(r["f"] for r in rows if r[f"p{i}"] == 1) for i in range(len(predicates))]


def matching_file_uris(full: Any, lake: Path, predicate: str, corpus: Sequence[str] = ()) -> frozenset[str]:
    """The ``_metadata.file_path`` URIs of the rows ``full.where(predicate)`` selects, as Spark
    gives them (callers turn them into local paths as they always did); ``full`` is
    ``spark.read.parquet(lake)``. The predicates of ``corpus`` not answered yet are answered in
    the same job."""
    # Every SQL setting is part of the key (ANSI mode, session time zone, rebase modes...): a test
    # that changes one gets Spark's answer under it, never a cached one from other settings.
    settings = tuple(sorted(full.sparkSession.conf.getAll.items()))
    key = (str(lake), predicate, settings)
    if key not in _CACHE:
        todo = [p for p in dict.fromkeys([predicate, *corpus]) if (str(lake), p, settings) not in _CACHE]
        for p, files in zip(todo, files_per_predicate(full, full["_metadata.file_path"], todo), strict=True):
            _CACHE[(str(lake), p, settings)] = files
    return _CACHE[key]
