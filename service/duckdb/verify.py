"""``verify --data``: stored statistics checked against the *data*, recomputed by DuckDB.

``shredcat verify`` re-reads footers with shredcat's own extractor: it catches stats a client sent
wrong, but not a footer that lies (a writer's bug) nor a bug of the extractor itself, since both
sides come from the same reader. Here DuckDB, an independent Parquet and Variant reader, reads
every value of the file and each stored fact is checked against it:

* the file's ``record_count``;
* each plain column (``ducklake_file_column_stats``): ``null_count`` and ``value_count`` exactly,
  ``min_value``/``max_value`` as bounds (no value below the min nor above the max: a stored bound
  may be looser, as footers' bounds may be, never tighter), ``contains_nan`` exactly;
* each fully shredded Variant path (``ducklake_file_variant_stats``) whose DuckLake path has only
  object keys: that no value at the path has another type (what "fully shredded" claims), then
  the counts, bounds and NaN as for a plain column, over the values of the path's type.
  ``element`` paths (array items) are not checked here, nor the paths of a column DuckDB does not
  read as VARIANT (a writer that does not annotate the group): :attr:`DataCheck.unchecked` lists
  them with the reason.

Bounds are compared as typed values (:func:`service.values.parse_bound` of DuckDB's VARCHAR, which
is DuckLake's own text form); NaN is no bound and -0.0 equals 0.0, as in the footer rules.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from service.catalog.verify import Difference, FileCheck, FileStatus, VerifyReport
from service.duckdb import engine
from service.errors import ShredcatError
from service.stats.model import ColumnStats, FileStats, PathStats
from service.values import Bound, Kind, ShreddedType, bound_lt, format_bound, parse_bound

if TYPE_CHECKING:
    import duckdb

    from service.catalog import Catalog

__all__ = ["DataCheck", "contradictions", "verify_data"]

#: ``variant_typeof`` names of a shredded type's values (decimals: by scale, see _variant_types).
_VARIANT_TYPES: dict[Kind, tuple[str, ...]] = {
    Kind.BOOLEAN: ("BOOL_TRUE", "BOOL_FALSE"),
    Kind.INT8: ("INT8",),
    Kind.INT16: ("INT16",),
    Kind.INT32: ("INT32",),
    Kind.INT64: ("INT64",),
    Kind.FLOAT32: ("FLOAT",),
    Kind.FLOAT64: ("DOUBLE",),
    Kind.DATE: ("DATE",),
    Kind.TIME: ("TIME_MICROS",),
    Kind.TIMESTAMP: ("TIMESTAMP_MICROS",),
    Kind.TIMESTAMPTZ: ("TIMESTAMP_MICROS_TZ",),
    Kind.TIMESTAMP_NS: ("TIMESTAMP_NANOS",),
    Kind.TIMESTAMPTZ_NS: ("TIMESTAMP_NANOS_TZ",),
    Kind.UUID: ("UUID",),
    Kind.BLOB: ("BLOB",),
    Kind.VARCHAR: ("VARCHAR",),
}
#: The DuckDB type a shredded path's values are cast to for min/max.
_CAST: dict[Kind, str] = {
    Kind.BOOLEAN: "BOOLEAN", Kind.INT8: "TINYINT", Kind.INT16: "SMALLINT", Kind.INT32: "INTEGER",
    Kind.INT64: "BIGINT", Kind.FLOAT32: "FLOAT", Kind.FLOAT64: "DOUBLE", Kind.DATE: "DATE", Kind.TIME: "TIME",
    Kind.TIMESTAMP: "TIMESTAMP", Kind.TIMESTAMPTZ: "TIMESTAMPTZ", Kind.TIMESTAMP_NS: "TIMESTAMP_NS",
    Kind.UUID: "UUID", Kind.BLOB: "BLOB", Kind.VARCHAR: "VARCHAR",
}  # fmt: skip
_KEY = re.compile(r'"((?:[^"]|"")*)"')


@dataclass(frozen=True, slots=True)
class Facts:
    """What DuckDB counted for one stats row (bounds as DuckDB's VARCHAR, None: no value)."""

    values: int
    nulls: int
    low: str | None
    high: str | None
    nans: int
    #: Values at a Variant path of another type than the one stored (0 for plain columns).
    others: int = 0


@dataclass(frozen=True, slots=True)
class DataCheck:
    """One file's outcome, with the stored facts this check could not reach."""

    check: FileCheck
    #: Stats rows not checked: (column, variant_path, why).
    unchecked: tuple[tuple[str, str, str], ...] = ()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _column(name: str) -> str:
    return ".".join(_quote(p) for p in name.split("."))


def _keys(variant_path: str) -> list[str] | None:
    """The object keys of a DuckLake path (``"a"."b"``); None when it has ``element`` or ``root`` segments."""
    if variant_path == "root":
        return []
    keys: list[str] = []
    pos = 0
    while pos < len(variant_path):
        m = _KEY.match(variant_path, pos)
        if m is None:
            return None
        keys.append(m.group(1).replace('""', '"'))
        pos = m.end()
        if pos < len(variant_path):
            if variant_path[pos] != ".":
                return None
            pos += 1
    return keys


def _text(expr: str, t: ShreddedType) -> str:
    """``expr`` as DuckLake's text form of a bound of type ``t``."""
    if t.kind is Kind.BOOLEAN:
        return f"CAST(CAST({expr} AS INTEGER) AS VARCHAR)"
    if t.kind is Kind.BLOB:
        return f"hex({expr})"
    return f"CAST({expr} AS VARCHAR)"


def _aggregates(value: str, is_value: str, t: ShreddedType, others: str = "FALSE") -> list[str]:
    """values, nulls, min, max, NaNs, other types: six aggregates over the rows of one file."""
    finite = f"{is_value} AND NOT isnan({value})" if t.is_float else is_value
    return [
        f"count(*) FILTER (WHERE {is_value})",
        f"count(*) FILTER (WHERE NOT ({is_value}) AND NOT ({others}))",
        _text(f"min({value}) FILTER (WHERE {finite})", t),
        _text(f"max({value}) FILTER (WHERE {finite})", t),
        f"count(*) FILTER (WHERE {is_value} AND isnan({value}))" if t.is_float else "0",
        f"count(*) FILTER (WHERE {others})",
    ]


def _variant_aggregates(p: PathStats, keys: list[str]) -> list[str]:
    x = _column(p.column)
    for k in keys:
        x = f"variant_extract({x}, '{k.replace(chr(39), chr(39) * 2)}')"
    t = p.shredded_type
    kind = f"variant_typeof({x})"
    if t.kind is Kind.DECIMAL:
        is_type = f"regexp_full_match({kind}, 'DECIMAL\\(\\d+, *{t.scale}\\)')"
        cast = f"DECIMAL(38,{t.scale})"
    else:
        is_type = f"{kind} IN ({', '.join(repr(s) for s in _VARIANT_TYPES[t.kind])})"
        cast = _CAST[t.kind]
    is_type = f"coalesce({is_type}, FALSE)"
    return _aggregates(f"TRY_CAST({x} AS {cast})", is_type, t, f"coalesce({kind} <> 'VARIANT_NULL', FALSE) AND NOT {is_type}")


def _plain_aggregates(c: ColumnStats, duck_type: str | None) -> list[str]:
    col = _column(c.column)
    if c.column_type.kind is Kind.TIMESTAMPTZ and duck_type in ("TIMESTAMP", "TIMESTAMP_NS"):
        col = f"timezone('UTC', {col})"  # INT96: the UTC wall clock, read without a zone
    return _aggregates(col, f"{col} IS NOT NULL", c.column_type)


def _comparable(t: ShreddedType) -> bool:
    return t.kind is Kind.DECIMAL or t.kind in _CAST


def data_facts(
    con: duckdb.DuckDBPyConnection, stored: FileStats
) -> tuple[int, dict[tuple[str, str | None], Facts], tuple[tuple[str, str, str], ...]]:
    """Row count, and the facts of every stored row DuckDB can check, in one scan of the file."""
    source = engine.parquet_source([stored.path], hive=False)
    types = engine.describe(con, source)
    parts: list[tuple[tuple[str, str | None], list[str]]] = []
    unchecked: list[tuple[str, str, str]] = []
    for c in stored.columns:
        if not _comparable(c.column_type):
            unchecked.append((c.column, "", f"DuckDB has no type for {c.column_type.name}"))
        elif c.column.split(".")[0] in types:  # a partition column's own data column has no row
            parts.append(((c.column, None), _plain_aggregates(c, types.get(c.column))))
    for p in stored.paths:
        keys = _keys(p.variant_path)
        read_as = types.get(p.column) if "." not in p.column else "VARIANT"
        if not _comparable(p.shredded_type):
            unchecked.append((p.column, p.variant_path, f"DuckDB has no type for {p.shredded_type.name}"))
        elif read_as != "VARIANT":
            unchecked.append((p.column, p.variant_path, f"DuckDB reads {p.column} as {read_as}, not as VARIANT"))
        elif keys is None:
            unchecked.append((p.column, p.variant_path, "array element paths are not checked"))
        else:
            parts.append(((p.column, p.variant_path), _variant_aggregates(p, keys)))
    select = ", ".join(["count(*)"] + [a for _, aggs in parts for a in aggs])
    row = engine.fetch(con, f"SELECT {select} FROM {source}")[0]
    facts = {}
    misread = _misread_decimals(con, stored)
    for i, (key, _) in enumerate(parts):
        v = row[1 + 6 * i : 7 + 6 * i]
        low, high = (None, None) if key[1] is None and key[0] in misread else (v[2], v[3])
        facts[key] = Facts(int(v[0]), int(v[1]), low, high, int(v[4]), int(v[5]))
    unchecked.extend((c, "", "its bounds: DuckDB misreads DECIMAL wider than 38 digits (counts checked)") for c in sorted(misread))
    return int(row[0]), facts, tuple(unchecked)


def _misread_decimals(con: duckdb.DuckDBPyConnection, stored: FileStats) -> set[str]:
    """Plain columns stored as DOUBLE bounds of a DECIMAL wider than 38 digits: DuckDB 1.5.5 reads
    them as DOUBLE but misreads every value longer than 16 bytes (-1.50 as -1.07e17), so their
    values are no evidence about bounds. Matched by leaf name (a struct leaf of another struct
    with the same name is skipped too: unchecked, never a false difference)."""
    doubles = {c.column for c in stored.columns if c.column_type.kind is Kind.FLOAT64}
    if not doubles:
        return set()
    sql = "SELECT DISTINCT name FROM parquet_schema(?) WHERE converted_type = 'DECIMAL' AND precision > 38"
    wide = {str(r[0]) for r in engine.fetch(con, sql, [engine.exact_glob(stored.path)])}
    return {c for c in doubles if c.rsplit(".", 1)[-1] in wide}


def _bound(t: ShreddedType, text: str | None) -> Bound | None:
    return None if text is None else parse_bound(t, text)


def _shown(t: ShreddedType, v: Bound | None) -> str | None:
    return None if v is None else format_bound(t, v)


def _row_contradictions(row: ColumnStats | PathStats, f: Facts) -> list[Difference]:
    """What the data ``f`` contradicts of one stored stats row (see the module docstring)."""
    t = row.shredded_type
    where = {"column": row.column, "variant_path": row.variant_path}
    out: list[Difference] = []
    if f.others:
        out.append(Difference("shredded_type", t.name, f"{f.others} values of other types", **where))
    if row.value_count != f.values:
        out.append(Difference("value_count", row.value_count, f.values, **where))
    if row.null_count != f.nulls:
        out.append(Difference("null_count", row.null_count, f.nulls, **where))
    low, high = _bound(t, f.low), _bound(t, f.high)
    if row.min_value is not None and low is not None and _below(t, low, row.min_value):
        out.append(Difference("min_value", _shown(t, row.min_value), _shown(t, low), **where))
    if row.max_value is not None and high is not None and _below(t, row.max_value, high):
        out.append(Difference("max_value", _shown(t, row.max_value), _shown(t, high), **where))
    if row.contains_nan is not None and t.is_float and row.contains_nan != (f.nans > 0):
        out.append(Difference("contains_nan", row.contains_nan, f.nans > 0, **where))
    return out


def _below(t: ShreddedType, a: Bound, b: Bound) -> bool:
    """``a < b`` in the type's order (floats: -0.0 = 0.0; NaN is never a bound)."""
    if isinstance(a, float) and isinstance(b, float) and (math.isnan(a) or math.isnan(b)):
        return False
    return bound_lt(a, b)


def contradictions(stored: FileStats, rows: int, facts: dict[tuple[str, str | None], Facts]) -> list[Difference]:
    """Every stored fact of ``stored`` the data contradicts (pure)."""
    out: list[Difference] = []
    if stored.record_count != rows:
        out.append(Difference("record_count", stored.record_count, rows))
    every: list[ColumnStats | PathStats] = [*stored.columns, *stored.paths]
    for r in every:
        f = facts.get((r.column, r.variant_path))
        if f is not None:
            out.extend(_row_contradictions(r, f))
    return out


def check_file(con: duckdb.DuckDBPyConnection, stored: FileStats) -> DataCheck:
    try:
        rows, facts, unchecked = data_facts(con, stored)
        diffs = contradictions(stored, rows, facts)
    except ShredcatError as e:
        return DataCheck(FileCheck(stored.path, "unverifiable", reason=e.message))
    status: FileStatus = "different" if diffs else "match"
    return DataCheck(FileCheck(stored.path, status, tuple(diffs)), unchecked)


def live_paths(catalog: Catalog, ns: str, table: str) -> tuple[int, list[str]]:
    """The table's current snapshot and its live files there, in path order (keyset pages)."""
    snap = catalog.get_table(ns, table).current_snapshot_id
    paths: list[str] = []
    after: str | None = None
    while True:
        page = catalog.list_files(ns, table, snapshot=snap, after=after, limit=1000)
        paths.extend(f.path for f in page)
        if len(page) < 1000:
            return snap, paths
        after = page[-1].path


def verify_data(
    catalog: Catalog,
    namespace: str,
    table: str,
    *,
    sample: int | None = None,
    seed: int | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> tuple[VerifyReport, tuple[DataCheck, ...]]:
    """Check ``sample`` live files (all when None; ``seed`` repeats the choice, the same as
    ``verify``'s) against their data. A file DuckDB cannot read is ``unverifiable``."""
    from service.errors import BadInputError

    if sample is not None and sample < 1:
        raise BadInputError("the sample size must be at least 1", details={"field": "sample"})
    snap, paths = live_paths(catalog, namespace, table)
    chosen: Sequence[str] = paths if sample is None or sample >= len(paths) else sorted(random.Random(seed).sample(paths, sample))
    own = con is None
    c = engine.connect() if con is None else con
    checks: list[DataCheck] = []
    try:
        for p in chosen:
            checks.append(check_file(c, catalog.file_stats(namespace, table, p, snapshot=snap)))
            if checks[-1].check.status == "unverifiable" and not engine.usable(c):
                # A file DuckDB fails on internally invalidates the database: the next files get a new one.
                if own:
                    c.close()
                c, own = engine.connect(), True
    finally:
        if own:
            c.close()
    problems = tuple(d.check for d in checks if d.check.status != "match")
    report = VerifyReport(
        table=f"{namespace}.{table}", snapshot_id=snap, live_files=len(paths), chosen=len(chosen),
        checked=len(checks), matching=len(checks) - len(problems), problems=problems,
    )
    return report, tuple(checks)

