"""Pruned reads in DuckDB: the catalog says which files can hold matching rows, DuckDB reads only those.

``read_pruned(con, "lake.events", "variant_get(v, '$.user.id', 'bigint') = 42", catalog=cat)``
returns a DuckDB relation ``SELECT * FROM read_parquet([candidates], hive_partitioning = true,
union_by_name = true) WHERE <the predicate in DuckDB SQL>``: the rows Spark's ``WHERE`` selects on
a full read. The predicate is Spark SQL text, parsed once against the table's schema; the same
tree is planned by the catalog (or the REST service) and rendered in DuckDB SQL by
:func:`service.pruning.render_duckdb.to_duckdb_sql`. A predicate without an exact DuckDB
rendering is refused (:class:`~service.errors.UnrenderablePredicateError`), never approximated.

Partition columns are typed as the catalog types them (``hive_types``), not as DuckDB would guess
from the candidates' directory names (a pruned read must not see ``05`` as an int where the whole
table makes it a string).
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from service.duckdb import engine
from service.errors import QueryError

if TYPE_CHECKING:
    import duckdb

    from service.catalog import Catalog
    from service.client import PlanResult, ShredcatClient
    from service.pruning.expressions import BooleanExpression
    from service.pruning.schema import TableSchema
    from service.pruning.zones import SessionZone

__all__ = ["DuckDBScan", "plan_pruned", "read_pruned"]

log = logging.getLogger("service.duckdb")


@dataclass(frozen=True, slots=True)
class DuckDBScan:
    """What a pruned DuckDB read reads, and the DuckDB SQL that reads it."""

    namespace: str
    table: str
    #: The predicate as given (Spark SQL text).
    predicate: str
    #: The predicate in DuckDB SQL (the WHERE clause of :attr:`sql`).
    where: str
    #: The candidate files.
    paths: tuple[str, ...]
    files_total: int
    files_pruned: int
    snapshot_id: int | None
    #: What reads the candidates with every column of the table (one live file, or none, with
    #: ``WHERE FALSE`` when there is no candidate): the table function, or a query over it that adds
    #: as NULLs the columns no candidate holds and reads timestamp partition values in the session's zone.
    source: str
    #: Warnings of the plan (a path shredded in no live file...), also logged; never a change to ``paths``.
    warnings: tuple[Any, ...] = ()
    plan_seconds: float = 0.0

    @property
    def sql(self) -> str:
        """A runnable DuckDB query: the matching rows of the table, reading only the candidates."""
        return f"SELECT * FROM {self.source} WHERE {self.where}"

    def relation(self, con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
        return engine.relation(con, self.sql)


def _split(table: str | tuple[str, str]) -> tuple[str, str]:
    from service.errors import BadInputError
    from service.spark._common import split_table

    try:
        return split_table(table)
    except ValueError as e:
        raise BadInputError(str(e), details={"field": "table"}) from None


def _client_schema(client: ShredcatClient, ns: str, name: str, plan: PlanResult, snapshot: int | None) -> tuple[TableSchema, str | None]:
    """The table's :class:`TableSchema` as the REST service describes it, its partition columns
    typed as ``plan`` was made (at a past snapshot, as that snapshot's files type them:
    :func:`~service.spark._common.partition_types_read`), and one file live at the plan's snapshot."""
    from service.errors import ShredcatError
    from service.pruning.schema import ColumnInfo, TableSchema
    from service.spark._common import partition_types_read
    from service.values import ShreddedType

    info = client.load_table(ns, name)
    partition = partition_types_read(info, plan, snapshot)
    cols: dict[str, ColumnInfo] = {}
    for c in info.columns:
        if c.kind == "variant":
            continue
        tname = partition.get(c.name, c.type)
        try:
            t: ShreddedType | None = None if tname is None else ShreddedType.parse(tname)
        except ShredcatError:
            t = None
        cols[c.name] = ColumnInfo(c.name, t, c.kind == "partition")
    page = client.list_files(ns, name, snapshot_id=plan.snapshot_id, page_size=1)
    return TableSchema(tuple(info.variant_columns), MappingProxyType(cols)), (page.files[0].path if page.files else None)


def _hive_types(schema: TableSchema) -> tuple[tuple[str, str], ...]:
    """The partition columns' DuckDB types; a Spark timestamp (an instant) as a wall-clock
    TIMESTAMP, which :func:`_zoned` reads in the session's zone (DuckDB's own TIMESTAMPTZ parsing
    would read ``ts=2024-01-01 10:00:00`` in the connection's ``TimeZone``)."""
    from service.pruning.render_duckdb import duckdb_type
    from service.values import Kind

    out = []
    for name, t in schema.partition_types().items():
        if t is not None:
            out.append((name, "TIMESTAMP" if t.kind is Kind.TIMESTAMPTZ else duckdb_type(t)))
    return tuple(out)


def _zoned(column: str, zone: SessionZone) -> str:
    """The instant of the wall-clock TIMESTAMP ``column`` in ``zone``, as Spark's session reads a
    timestamp partition value."""
    if zone.is_utc:
        return f"timezone('UTC', {column})"
    key = getattr(zone.zone, "key", None)  # a region: DuckDB knows the same names
    if key is not None:
        return "timezone('" + key.replace("'", "''") + f"', {column})"
    offset = zone.zone.utcoffset(None)
    seconds = int(offset.total_seconds()) if offset is not None else 0
    return f"timezone('UTC', {column} - INTERVAL ({seconds}) SECOND)"


@dataclass(frozen=True, slots=True)
class _Plan:
    tree: BooleanExpression
    schema: TableSchema
    paths: tuple[str, ...]
    total: int
    pruned: int
    snapshot: int | None
    warnings: tuple[Any, ...]
    one_file: str | None


def _parse(predicate: str, schema: TableSchema, time_zone: str | None) -> BooleanExpression:
    """Spark SQL text → tree, zone-less timestamp literals read in ``time_zone`` (Spark's session
    time zone; None: UTC), as the service reads them."""
    from service.pruning.parse_sql import parse_sql
    from service.pruning.zones import reading_in, session_zone

    with reading_in(session_zone(time_zone)):
        return parse_sql(predicate, schema=schema)


def _plan_catalog(
    cat: Catalog, ns: str, name: str, predicate: str, snapshot: int | None, time_zone: str | None, min_snapshot_id: int | None
) -> _Plan:
    seen: dict[str, Any] = {}

    def parse(schema: TableSchema) -> BooleanExpression:
        # The tree the catalog plans is the tree rendered: one parse, against the schema it planned with.
        tree = _parse(predicate, schema, time_zone)
        seen.update(tree=tree, schema=schema)
        return tree

    first = cat.plan(ns, name, parse, snapshot_id=snapshot, page_size=5000, counts=True, min_snapshot_id=min_snapshot_id)
    paths = [c.path for c in first.candidates]
    token = first.next_page_token
    while token is not None:
        page = cat.plan(ns, name, parse, snapshot_id=snapshot, page_size=5000, page_token=token)
        paths.extend(c.path for c in page.candidates)
        token = page.next_page_token
    live = cat.list_files(ns, name, snapshot=first.snapshot_id, limit=1)
    return _Plan(
        seen["tree"], seen["schema"], tuple(paths), first.files_considered or 0, first.files_pruned or 0,
        first.snapshot_id, tuple(first.warnings), live[0].path if live else None,
    )


def _plan_client(client: ShredcatClient, ns: str, name: str, predicate: str, snapshot: int | None, time_zone: str | None) -> _Plan:
    # Planned first: the plan says how it typed the partition columns, which the tree must follow.
    zone = {} if time_zone is None else {"session_time_zone": time_zone}
    res = client.plan_all(ns, name, sql=predicate, snapshot_id=snapshot, counts=True, **zone)
    schema, one = _client_schema(client, ns, name, res, snapshot)
    tree = _parse(predicate, schema, time_zone)
    return _Plan(
        tree, schema, tuple(res.paths), res.files_considered or 0, res.files_pruned or 0,
        res.snapshot_id, tuple(res.warnings), one,
    )


def plan_pruned(
    con: duckdb.DuckDBPyConnection,
    table: str | tuple[str, str],
    predicate: str,
    *,
    snapshot: int | None = None,
    client: ShredcatClient | None = None,
    catalog: Catalog | None = None,
    time_zone: str | None = None,
    min_snapshot_id: int | None = None,
) -> DuckDBScan:
    """The candidates of ``predicate`` (Spark SQL text) on ``table`` (``"ns.table"``) and the DuckDB
    SQL reading them: exactly one of ``catalog`` (a :class:`~service.catalog.Catalog`, in process)
    or ``client`` (a :class:`~service.client.ShredcatClient`, the REST service). ``time_zone``:
    Spark's session time zone, in which timestamp literals without a zone are read (default UTC);
    the rendered SQL compares instants, so DuckDB's own ``TimeZone`` setting does not matter.
    ``min_snapshot_id``: plan where that snapshot is replayed (a server or catalog reading from hot
    standbys); a client also asks for its own last snapshot and the Spark helpers' commits to its URL
    (:func:`service.spark._common.client_for`)."""
    from service.pruning.render_duckdb import to_duckdb_sql
    from service.pruning.zones import session_zone

    if not isinstance(predicate, str):
        raise TypeError(f"a predicate is Spark SQL text, not {type(predicate).__name__}")
    if (client is None) == (catalog is None):
        raise TypeError("give exactly one of client= or catalog=")
    ns, name = _split(table)
    start = time.perf_counter()
    if catalog is not None:
        plan = _plan_catalog(catalog, ns, name, predicate, snapshot, time_zone, min_snapshot_id)
    else:
        from service.spark._common import client_for

        with client_for(client, min_snapshot_id=min_snapshot_id) as c:
            plan = _plan_client(c, ns, name, predicate, snapshot, time_zone)
    read = plan.paths or ((plan.one_file,) if plan.one_file else ())
    source, described = _source(con, read, plan.schema, f"{ns}.{name}", session_zone(time_zone))
    # The rendering is checked against the types DuckDB reads (a column it reads otherwise is refused).
    where = to_duckdb_sql(plan.tree, column_types=_column_types(con, source, read, described))
    if not plan.paths:
        where = "FALSE"
    seconds = time.perf_counter() - start
    for w in plan.warnings:
        log.warning("duckdb read_pruned %s.%s: %s", ns, name, getattr(w, "message", w))
    log.info("duckdb read_pruned %s.%s: %d of %d files are candidates in %.3fs", ns, name, len(plan.paths), plan.total, seconds)
    return DuckDBScan(
        namespace=ns, table=name, predicate=predicate, where=where, paths=plan.paths, files_total=plan.total,
        files_pruned=plan.pruned, snapshot_id=plan.snapshot, source=source, warnings=plan.warnings, plan_seconds=seconds,
    )


def _source(
    con: duckdb.DuckDBPyConnection, paths: Sequence[str], schema: TableSchema, table: str, zone: SessionZone
) -> tuple[str, dict[str, str] | None]:
    """What reads ``paths`` with every top-level column of the table: a column none of them holds
    (one that later files added, a Variant column only other files have) is NULL of its type, as
    it is in their rows of a full read, where ``union_by_name`` reads every file; a timestamp
    partition column the instant its value names in the session's ``zone``. No file at all: no
    row, the table's columns. With it, the types DuckDB reads it as when it is the files' own read
    (described here already; None: not described)."""
    from service.errors import UnrenderablePredicateError
    from service.pruning.render_duckdb import duckdb_type, quote_identifier
    from service.values import Kind

    wanted = [(c, "VARIANT") for c in schema.variant_columns if "." not in c]
    for n, c in schema.columns.items():
        if "." not in n and c.type is not None:
            with contextlib.suppress(UnrenderablePredicateError):  # a type DuckDB cannot name: left out
                wanted.append((n, duckdb_type(c.type)))
    if not paths:
        if not wanted:
            raise QueryError(f"{table} has no live file and no column DuckDB can type")
        return "(SELECT " + ", ".join(f"NULL::{t} AS {quote_identifier(n)}" for n, t in wanted) + " LIMIT 0)", None
    hive = _hive_types(schema)
    source = engine.parquet_source(paths, hive)
    # DuckDB's names are case-insensitive: a column read under another case is there.
    types = engine.describe(con, source)
    there = {n.casefold() for n in types}
    missing = [f"NULL::{t} AS {quote_identifier(n)}" for n, t in wanted if n.casefold() not in there]
    instants = [quote_identifier(n) for n, t in schema.partition_types().items() if t is not None and t.kind is Kind.TIMESTAMPTZ]
    if not missing and not instants:
        return source, types
    replace = f" REPLACE ({', '.join(f'{_zoned(q, zone)} AS {q}' for q in instants)})" if instants else ""
    return f"(SELECT *{replace}{''.join(', ' + m for m in missing)} FROM {source})", None


def _column_types(
    con: duckdb.DuckDBPyConnection, source: str, paths: Sequence[str], described: dict[str, str] | None = None
) -> dict[str, str]:
    """What DuckDB reads each column as; a string Spark compares by a collation other than binary
    (UTF8_LCASE: 'ABC' = 'abc') is no type DuckDB's comparisons follow, so a term on it is refused
    instead of answered in byte order. Files Spark wrote in its LEGACY calendar mode are refused
    where the table may hold dates or timestamps: DuckDB reads them without Spark's rebase.
    ``described``: ``source``'s types, when the caller has them already."""
    from service.stats.extract import SPARK_FOOTER_KEYS, spark_footer_facts

    types = dict(described) if described is not None else engine.describe(con, source)
    if len(paths) > 1 and "VARIANT" in types.values():
        variants = [n for n, t in types.items() if t == "VARIANT"]
        misread = engine.not_variant_files(con, paths, variants)
        if misread:
            raise QueryError(
                f"{len(misread)} file(s) hold a Variant column DuckDB does not read as VARIANT ({misread[0][0]}: "
                f"{misread[0][1]}): read together with the others, their values would be lost; read them with Spark",
                details={"files": [p for p, _ in misread[:20]]},
            )
    footers: dict[str, dict[str, str]] = {}
    for file, key, value in engine.footer_keys(con, paths, SPARK_FOOTER_KEYS) if paths else ():
        footers.setdefault(file, {})[key] = value
    facts = {f: spark_footer_facts(kv) for f, kv in footers.items()}
    legacy = sorted(f for f, (old, _) in facts.items() if old)
    if legacy and any(_TEMPORAL.search(t) for t in types.values()):
        raise QueryError(
            f"{len(legacy)} file(s) were written by Spark in its LEGACY calendar mode ({legacy[0]}...): Spark rebases "
            "their dates before 1582 and timestamps before 1900 when it reads them, DuckDB does not, so their rows "
            "would differ from Spark's; read them with Spark",
            details={"files": legacy[:20]},
        )
    for _, collated in facts.values():
        for name in collated:
            if name in types:
                types[name] = f"{types[name]} compared by a Spark collation"
    return types


#: DuckDB types that may hold dates or timestamps Spark's LEGACY calendar rebases (a Variant may).
_TEMPORAL = re.compile(r"\b(DATE|TIMESTAMP\w*|VARIANT)\b", re.IGNORECASE)


def read_pruned(
    con: duckdb.DuckDBPyConnection,
    table: str | tuple[str, str],
    predicate: str,
    *,
    snapshot: int | None = None,
    client: ShredcatClient | None = None,
    catalog: Catalog | None = None,
    time_zone: str | None = None,
    min_snapshot_id: int | None = None,
) -> duckdb.DuckDBPyRelation:
    """The rows of ``table`` matching ``predicate`` as a DuckDB relation over only the candidate
    files (see :func:`plan_pruned`); with no candidate, an empty relation with the table's columns."""
    scan = plan_pruned(
        con, table, predicate, snapshot=snapshot, client=client, catalog=catalog, time_zone=time_zone,
        min_snapshot_id=min_snapshot_id,
    )
    return scan.relation(con)

