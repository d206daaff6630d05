"""PySpark helpers: write shredded, register, read only the candidate files, backfill on executors.

PySpark is imported inside the functions only, so ``import service.spark`` (and the service
itself) does not need it.

* :func:`write_and_register` / :func:`register_written`: register exactly the files one Spark
  write produced, as one commit (by path, or with client-side statistics).
* :func:`read_pruned` / :func:`plan_pruned`: the rows matching a predicate (SQL text or Column),
  reading only the files the service keeps; exactly the rows of a full read.
* :func:`backfill`: register an existing lake, extracting on the executors (``shredcat backfill``).
* :func:`list_parquet_files`: the data files under a directory or URI
  (:func:`service.storage.list_data_files`).
* :class:`LocalService`: the REST API in this process (demo, benchmarks, tests);
  :func:`local_session`: a local SparkSession for the same.
"""

from service.spark.backfill import BackfillResult, FailedBatch, backfill, extract_on_executors
from service.spark.local import LocalService, local_session
from service.spark.read import PrunedScan, plan_pruned, read_pruned
from service.spark.translate import column_to_sql
from service.spark.write import WriteResult, register_written, variant_columns_of, write_and_register
from service.storage import list_data_files as list_parquet_files

__all__ = [
    "BackfillResult",
    "FailedBatch",
    "LocalService",
    "PrunedScan",
    "WriteResult",
    "backfill",
    "column_to_sql",
    "extract_on_executors",
    "list_parquet_files",
    "local_session",
    "plan_pruned",
    "read_pruned",
    "register_written",
    "variant_columns_of",
    "write_and_register",
]
