"""DuckDB in the product: pruned reads (:func:`read_pruned` / :func:`plan_pruned`), stats checked
against the data (:mod:`.verify`, ``shredcat verify --data``), DuckLake catalogs of a table
(:mod:`.ducklake`, ``shredcat ducklake export``), and the one DuckDB wrapper (:mod:`.engine`).

DuckDB is imported inside the functions only, so ``import service.duckdb`` costs nothing.

* :func:`read_pruned`: a DuckDB relation over only the candidate files of a Spark SQL predicate,
  with the predicate rendered in DuckDB SQL: the rows Spark selects on a full read.
* :func:`plan_pruned`: the candidates and that SQL (:class:`DuckDBScan`).
"""

from service.duckdb.read import DuckDBScan, plan_pruned, read_pruned

__all__ = ["DuckDBScan", "plan_pruned", "read_pruned"]
