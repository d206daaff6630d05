"""Spark's own ground truth for the pruning tests: the files holding a row a predicate selects.

The answer depends on the files, the predicate and the session's settings only, never on the
catalog backend a test is parametrized over; each Spark job costs about a second, so the answer is
computed once per (table, predicate, session settings) and reused by the other parametrizations.
Only for tables no test rewrites (module-scoped lakes written once).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

_CACHE: dict[tuple[str, str, tuple[tuple[str, str], ...]], frozenset[str]] = {}


def matching_file_uris(full: Any, lake: Path, predicate: str) -> frozenset[str]:
    """The ``_metadata.file_path`` URIs of the rows ``full.where(predicate)`` selects, as Spark
    gives them (callers turn them into local paths as they always did); ``full`` is
    ``spark.read.parquet(lake)``."""
    # Every SQL setting is part of the key (ANSI mode, session time zone, rebase modes...): a test
    # that changes one gets Spark's answer under it, never a cached one from other settings.
    key = (str(lake), predicate, tuple(sorted(full.sparkSession.conf.getAll.items())))
    if key not in _CACHE:
        rows = full.where(predicate).select(full["_metadata.file_path"].alias("f")).distinct().collect()
        _CACHE[key] = frozenset(r.f for r in rows)
    return _CACHE[key]
