"""Pruned reads: ask the service which files can hold matching rows, read only those.

``read_pruned(spark, "lake.events", "variant_get(v, '$.user.id', 'bigint') = 42")`` returns
``spark.read.parquet(*candidates).where(predicate)``: the predicate is applied to the rows too,
so the result is exactly that of a full read with the same ``where``. The service is asked with
the predicate's SQL form (see :mod:`service.spark.translate`); when there is none, every live
file of the table is read and a warning says why. Never are rows dropped for a predicate the
service does not understand. The service's own warnings about the predicate (a path shredded in
no live file, a type it is not stored as) are logged and kept on :class:`PrunedScan`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from service.spark._common import client_for, split_table
from service.spark.translate import (
    Untranslatable,
    column_conjuncts,
    is_column,
    pruning_attempts,
    same_predicate,
    session_is_utc,
    session_zone_of,
    table_schema_of,
)

if TYPE_CHECKING:
    from service.client import PlanWarning, ShredcatClient, Table

__all__ = ["PrunedScan", "plan_pruned", "read_pruned"]

log = logging.getLogger("service.spark")

_GLOB_CHARS = "\\*?[]{}"
_SCHEMA_CACHE_SIZE = 64
_SCHEMAS: dict[tuple[int, str, str | None], Any] = {}


def spark_path(path: str) -> str:
    """A path as Spark must be given it to read exactly that file: Hadoop expands glob characters
    (``*?[]{}``) in paths, so they are escaped."""
    if not any(c in path for c in _GLOB_CHARS):
        return path
    return "".join("\\" + c if c in _GLOB_CHARS else c for c in path)


@dataclass(frozen=True, slots=True)
class PrunedScan:
    """What a pruned read will read."""

    namespace: str
    table: str
    #: The predicate as given (SQL text or PySpark Column); applied to the rows.
    predicate: Any
    #: The SQL the service pruned with (None: nothing was pruned, see ``fallback``).
    pruning_sql: str | None
    #: The candidate files (all live files when nothing was pruned).
    paths: tuple[str, ...]
    #: Live files of the table at ``snapshot_id``.
    files_total: int
    files_pruned: int
    snapshot_id: int | None
    #: Why every file is read (None when the service pruned).
    fallback: str | None
    #: Seconds spent asking the service (and checking the predicate).
    plan_seconds: float
    #: One live file of the table, whose schema an empty result takes (None: the table has none).
    schema_file: str | None = None
    #: The table's Variant columns (the schema of an empty result when it has no file at all).
    variant_columns: tuple[str, ...] = ()
    #: The plan's warnings (a path shredded in no live file, a type it is not stored as), also
    #: logged; they never change ``paths``.
    warnings: tuple[PlanWarning, ...] = ()
    #: The table's partition columns and their types (DuckLake names), read with ``base_path``.
    partition_types: tuple[tuple[str, str], ...] = ()

    @property
    def candidates(self) -> int:
        return len(self.paths)

    def read(self, spark: Any, *, base_path: str | None = None, schema: Any = None) -> Any:
        """``spark.read.parquet(*paths).where(predicate)``; no candidates: an empty DataFrame
        with the table's schema (``schema`` if given, else that of one live file)."""
        reader = spark.read
        if base_path is not None:
            reader = reader.option("basePath", base_path)
        if self.paths:
            # Spark takes a read's schema from its first file (without mergeSchema): so do we, from
            # a per-file cache, which saves the schema-inference job of every read.
            if schema is None:
                schema = read_schema(spark, self.paths[0], base_path, self.partition_types)
            with _driver_listing(spark, self.paths):
                df = reader.schema(schema).parquet(*(spark_path(p) for p in self.paths))
        else:
            if schema is None:
                schema = read_schema(spark, self.schema_file, base_path, self.partition_types, self.variant_columns)
            df = spark.createDataFrame([], schema)
        return df.where(self.predicate)


_LISTING_THRESHOLD = "spark.sql.sources.parallelPartitionDiscovery.threshold"
#: Local candidate files are listed by the driver up to this many (a Spark listing job costs ~1 s).
MAX_DRIVER_LISTED = 10_000


@contextmanager
def _driver_listing(spark: Any, paths: tuple[str, ...]) -> Iterator[None]:
    """Spark lists more than 32 explicit paths with a Spark job; for local files the driver is
    much faster (a stat each), so the threshold is raised while this read's file index is built."""
    local = all(p.startswith("/") or p.startswith("file:") for p in paths)
    if not local or len(paths) <= 32 or len(paths) > MAX_DRIVER_LISTED:
        yield
        return
    conf = spark.conf
    old = conf.get(_LISTING_THRESHOLD, None)
    conf.set(_LISTING_THRESHOLD, str(len(paths) + 1))
    try:
        yield
    finally:
        if old is None:
            conf.unset(_LISTING_THRESHOLD)
        else:
            conf.set(_LISTING_THRESHOLD, old)


def table_schema(spark: Any, schema_file: str | None, variant_columns: tuple[str, ...] = (), *, base_path: str | None = None) -> Any:
    """The Spark schema of a table: that of ``schema_file`` (Spark-written files of one table share
    their logical schema; shredding is physical), else the Variant columns alone."""
    if schema_file is not None:
        # Data files are immutable: a file's schema is read once per session (it costs a Spark job).
        key = (id(spark), schema_file, base_path)
        cached = _SCHEMAS.get(key)
        if cached is None:
            reader = spark.read if base_path is None else spark.read.option("basePath", base_path)
            cached = reader.parquet(spark_path(schema_file)).schema
            if len(_SCHEMAS) >= _SCHEMA_CACHE_SIZE:
                _SCHEMAS.pop(next(iter(_SCHEMAS)))
            _SCHEMAS[key] = cached
        return cached
    from pyspark.sql.types import StructField, StructType, VariantType

    return StructType([StructField(c, VariantType(), True) for c in variant_columns if "." not in c])


def read_schema(
    spark: Any,
    schema_file: str | None,
    base_path: str | None,
    partition_types: tuple[tuple[str, str], ...],
    variant_columns: tuple[str, ...] = (),
) -> Any:
    """The schema a pruned read uses: :func:`table_schema`, with each partition column typed as
    the catalog types it over every live file. Spark infers a partition column's type from the
    directories it reads: from one candidate's ``ps=05`` it is INT where the whole table's ``05``,
    ``5`` and ``a`` make it STRING, and the pruned read would then answer other rows than the
    plain read (or fail on ``a``)."""
    schema = table_schema(spark, schema_file, variant_columns, base_path=base_path)
    if base_path is None or not partition_types:
        return schema
    from pyspark.sql.types import DataType, StructField, StructType

    from service.pruning.spark_types import spark_type_name
    from service.values import ShreddedType

    # Spark resolves names case-insensitively (its default), as the catalog matches them.
    types = {name.lower(): t for name, t in partition_types}
    fields = []
    for f in schema.fields:
        t = types.get(f.name.lower())
        if t is not None:
            f = StructField(f.name, DataType.fromDDL(spark_type_name(ShreddedType.parse(t))), True)
        fields.append(f)
    return StructType(fields)


def _one_file(client: ShredcatClient, namespace: str, table: str, snapshot: int | None) -> str | None:
    page = client.list_files(namespace, table, snapshot_id=snapshot, page_size=1)
    return page.files[0].path if page.files else None


def _partition_types(
    c: ShredcatClient, info: Table, snapshot: int | None
) -> tuple[tuple[str, str], ...]:
    """The table's partition columns and the types to read them as at ``snapshot``: loadTable's
    (today's) at the current one; at another, those the service plans that snapshot with, from a
    one-file plan of ``TRUE`` there (the column check and the read need them before the plan of the
    predicate itself, whose snapshot's types are the same)."""
    from service.spark._common import partition_types_read

    ns, name = info.namespace, info.name
    if snapshot is None or not info.partition_columns:
        return tuple((col.name, col.type) for col in info.columns if col.kind == "partition")
    probe = c.plan(ns, name, sql="TRUE", snapshot_id=snapshot, page_size=1)
    return tuple((n, t) for n, t in partition_types_read(info, probe, snapshot).items() if t is not None)


def _column_text(
    spark: Any,
    c: ShredcatClient,
    ns: str,
    name: str,
    predicate: Any,
    base_path: str | None,
    partition_types: tuple[tuple[str, str], ...],
    snapshot: int | None,
) -> tuple[str | None, str | None, str | None]:
    """``(sql, fallback, schema_file)`` for a PySpark Column: the AND of its top-level conjuncts
    that have a SQL form Spark itself reads as the same predicate (leaving one out only widens
    the candidates), or None and why there is none."""
    try:
        parts = column_conjuncts(spark, predicate)
    except Untranslatable as e:
        return None, f"the Column has no SQL form ({e})", None
    schema_file = _one_file(c, ns, name, snapshot) if any(sql is not None for _, sql, _ in parts) else None
    kept: list[str] = []
    reasons: list[str] = []
    for part, sql, why in parts:
        if sql is None:
            reasons.append(f"the Column has no SQL form ({why})")
        elif schema_file is not None and not same_predicate(
            spark, read_schema(spark, schema_file, base_path, partition_types), part, sql
        ):
            reasons.append(f"Spark does not read the Column's SQL form {sql!r} as the same predicate")
        else:
            kept.append(sql)
    if not kept:
        return None, "; ".join(reasons), schema_file
    if len(kept) == 1:
        return kept[0], None, schema_file
    return " AND ".join(f"({k})" for k in kept), None, schema_file


def _plan_text(
    spark: Any,
    c: ShredcatClient,
    ns: str,
    name: str,
    text: str,
    base_path: str | None,
    partition_types: tuple[tuple[str, str], ...],
    schema_file: str | None,
    snapshot: int | None,
) -> tuple[Any, str | None, str | None, str | None]:
    """The service's plan of the first pruning attempt of ``text`` it accepts: ``(plan or None,
    the SQL planned, why none was, the schema file read if one was needed)``."""
    from service.client import BadRequest, PayloadTooLarge, Unprocessable

    result: Any = None
    sql: str | None = None
    fallback: str | None = None

    # Outside UTC the service is asked to read literals in the session's zone; a service
    # without that (422) is then asked as before: without timestamp terms.
    def ask(attempts: list[str], **zone: str) -> None:
        """The first attempt the service plans becomes the result; else why none did."""
        nonlocal result, sql, fallback
        for attempt in attempts:
            try:
                result = c.plan_all(ns, name, sql=attempt, snapshot_id=snapshot, **zone)
                sql, fallback = attempt, None
                return
            except (BadRequest, Unprocessable, PayloadTooLarge) as e:
                if e.details.get("field") == "body.snapshot-id":
                    raise  # the snapshot, not the predicate: no other attempt or full read answers it
                fallback = f"the service refused the predicate ({e.type}: {e.message})"

    zone = session_zone_of(spark)
    if zone is not None:
        ask(pruning_attempts(text)[0], session_time_zone=zone)
    if result is None:
        utc = zone is None and session_is_utc(spark)
        spark_schema = None
        if not utc:
            # Timestamp columns compared with zone-less literals need the table's types.
            schema_file = schema_file or _one_file(c, ns, name, snapshot)
            if schema_file is not None:
                spark_schema = table_schema_of(read_schema(spark, schema_file, base_path, partition_types))
        attempts, why = pruning_attempts(text, utc=utc, schema=spark_schema)
        fallback = fallback or why
        ask(attempts)
    return result, sql, fallback, schema_file


def plan_pruned(
    spark: Any,
    table: str | tuple[str, str],
    predicate: Any,
    *,
    client: ShredcatClient | None = None,
    url: str | None = None,
    token: str | None = None,
    base_path: str | None = None,
    min_snapshot_id: int | None = None,
    snapshot: int | None = None,
) -> PrunedScan:
    """Ask the service for the candidate files of ``predicate`` (SQL text or PySpark Column) on
    ``table`` (``"ns.table"``). See :func:`read_pruned`; ``min_snapshot_id``: plan at least at
    that snapshot (another process's commit; this process's own are passed by themselves);
    ``snapshot``: plan at that past snapshot (time travel)."""
    if not isinstance(predicate, str) and not is_column(predicate):
        raise TypeError(f"a predicate is SQL text or a PySpark Column, not {type(predicate).__name__}")
    ns, name = split_table(table)
    start = time.perf_counter()
    with client_for(client, url, token, min_snapshot_id=min_snapshot_id) as c:
        fallback: str | None = None
        sql: str | None = None
        schema_file: str | None = None
        text: str | None = None
        # The table itself only when its partition columns' types are needed (or, below, its
        # Variant columns): one loadTable at most.
        info = c.load_table(ns, name) if base_path is not None else None
        partition_types = _partition_types(c, info, snapshot) if info else ()
        if isinstance(predicate, str):
            text = predicate
        else:
            text, fallback, schema_file = _column_text(spark, c, ns, name, predicate, base_path, partition_types, snapshot)
        result = None
        if fallback is None and text is not None:
            result, sql, fallback, schema_file = _plan_text(
                spark, c, ns, name, text, base_path, partition_types, schema_file, snapshot
            )
        planned: int | None = snapshot
        if result is not None:
            paths = tuple(result.paths)
            total, pruned, planned = result.files_considered, result.files_pruned, result.snapshot_id
        else:
            files = list(c.iter_files(ns, name, snapshot_id=snapshot))
            paths = tuple(f.path for f in files)
            total, pruned = len(paths), 0
            log.warning("read_pruned %s.%s: reading all %d files: %s", ns, name, total, fallback)
        variant_columns: tuple[str, ...] = ()
        if not paths:
            schema_file = schema_file or _one_file(c, ns, name, snapshot)
            if schema_file is None:
                variant_columns = tuple((info or c.load_table(ns, name)).variant_columns)
    seconds = time.perf_counter() - start
    warnings = result.warnings if result is not None else ()
    if result is not None:
        log.info(
            "read_pruned %s.%s: %d of %d files are candidates (%d pruned) in %.3fs",
            ns, name, len(paths), total, pruned, seconds,
        )
    for w in warnings:
        log.warning("read_pruned %s.%s: %s", ns, name, w.message)
    return PrunedScan(
        namespace=ns,
        table=name,
        predicate=predicate,
        pruning_sql=sql,
        paths=paths,
        files_total=total,
        files_pruned=pruned,
        snapshot_id=planned,
        fallback=fallback,
        plan_seconds=seconds,
        schema_file=schema_file,
        variant_columns=variant_columns,
        warnings=warnings,
        partition_types=partition_types,
    )


def read_pruned(
    spark: Any,
    table: str | tuple[str, str],
    predicate: Any,
    *,
    client: ShredcatClient | None = None,
    url: str | None = None,
    token: str | None = None,
    base_path: str | None = None,
    schema: Any = None,
    min_snapshot_id: int | None = None,
    snapshot: int | None = None,
) -> Any:
    """The rows of ``table`` matching ``predicate``, reading only the files the service keeps.

    ``predicate``: Spark SQL text (``"variant_get(v, '$.a', 'bigint') = 5"``, ``"v:a::bigint = 5"``)
    or a PySpark Column. ``client`` (or ``url``/``token``, default ``SHREDCAT_URL`` and
    ``SHREDCAT_TOKEN``) reaches the service. ``base_path``: the table's root directory when it is
    partitioned by directory (``key=value/``), so the partition columns are kept. Returns
    ``spark.read.parquet(*candidates).where(predicate)``, an empty DataFrame with the table's
    schema when there is no candidate. The plan includes this process's own commits (and
    ``min_snapshot_id``) when the service reads from hot standbys. ``snapshot``: the rows Spark
    read at that past snapshot (its files, partition columns typed as they typed them)."""
    scan = plan_pruned(
        spark, table, predicate, client=client, url=url, token=token, base_path=base_path,
        min_snapshot_id=min_snapshot_id, snapshot=snapshot,
    )
    return scan.read(spark, base_path=base_path, schema=schema)
