"""The DuckDB rendering of predicate trees, run by the real DuckDB on Variant values of every kind
(Spark's cast semantics kept or refused, never changed), and ``read_pruned`` on DuckDB-written
files registered in both catalog backends."""

from __future__ import annotations

import contextlib
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from service.catalog import Catalog
from service.duckdb import engine, plan_pruned, read_pruned
from service.errors import (
    BadInputError,
    NotFoundError,
    QueryError,
    UnknownColumnError,
    UnrenderablePredicateError,
)
from service.pruning.expressions import And, LiteralPredicate, Op, Unknown, variant
from service.pruning.parse_sql import parse_sql
from service.pruning.render_duckdb import duckdb_literal, to_duckdb_sql
from service.values import ShreddedType

# One row per case; v holds the value at $.a (JSON text cast to VARIANT, or a typed DuckDB value).
ROWS = """
SELECT * FROM (VALUES
  (1, {'a': 5::BIGINT}::VARIANT),
  (2, {'a': '5'}::VARIANT),
  (3, {'a': 5.7::DOUBLE}::VARIANT),
  (4, {'a': {'b': 2}}::VARIANT),
  (5, NULL::VARIANT),
  (6, {'z': 1}::VARIANT),
  (7, {'a': 300::BIGINT}::VARIANT),
  (8, {'a': 1.25::DECIMAL(9,2)}::VARIANT),
  (9, {'a': [10, 20]}::VARIANT)
) t(id, v)
"""


@pytest.fixture
def con() -> Any:
    c = engine.connect()
    c.execute(f"CREATE TABLE t AS {ROWS}")
    yield c
    c.close()


def _ids(con: Any, predicate: str, only: tuple[int, ...]) -> list[int]:
    where = to_duckdb_sql(parse_sql(predicate))
    ids = ", ".join(map(str, only))
    return [r[0] for r in engine.fetch(con, f"SELECT id FROM t WHERE id IN ({ids}) AND ({where}) ORDER BY id")]


def test_exact_types_and_integer_widening_are_read_as_spark_reads_them(con: Any) -> None:
    assert _ids(con, "variant_get(v, '$.a', 'bigint') = 5", (1, 5, 6, 7)) == [1]
    assert _ids(con, "variant_get(v, '$.a', 'double') > 4.5", (1, 3, 5, 7)) == [1, 3, 7]
    assert _ids(con, "variant_get(v, '$.a', 'decimal(10,3)') = 1.250", (1, 8)) == [8]
    # Missing path, Variant null and SQL NULL rows are NULL: only IS NULL selects them.
    assert _ids(con, "variant_get(v, '$.a', 'bigint') IS NULL", (1, 5, 6)) == [5, 6]
    assert _ids(con, "variant_get(v, '$.a[1]', 'bigint') = 20", (1, 9)) == [9]  # Spark's 0-based index


def test_try_variant_get_is_null_where_spark_casts_fail(con: Any) -> None:
    # An object cannot be cast to a scalar (Spark: NULL under try_variant_get), nor 300 to tinyint.
    assert _ids(con, "try_variant_get(v, '$.a', 'bigint') IS NULL", (1, 4, 9)) == [4, 9]
    assert _ids(con, "try_variant_get(v, '$.a', 'tinyint') IS NULL", (1, 7)) == [7]


@pytest.mark.parametrize(
    ("predicate", "rows", "message"),
    [
        # Spark's variant_get fails on these too.
        ("variant_get(v, '$.a', 'bigint') = 1", (4,), "an object or array cannot be cast to bigint"),
        ("variant_get(v, '$.a', 'tinyint') = 1", (7,), "out of range for tinyint"),
        # Spark casts these (string "5" → 5, 5.7 → 5, scale 2 → 1 rounds): DuckDB's casts differ, so refused.
        ("variant_get(v, '$.a', 'bigint') = 5", (2,), "of type VARCHAR cannot be cast to bigint"),
        ("try_variant_get(v, '$.a', 'int') = 5", (3,), "of type DOUBLE cannot be cast to int"),
        ("variant_get(v, '$.a', 'decimal(5,1)') > 1", (8,), "cannot be cast to decimal(5,1)"),
        ("variant_get(v, '$.a', 'string') = '5'", (1,), "of type INT64 cannot be cast to string"),
    ],
)
def test_casts_duckdb_cannot_make_as_spark_does_fail_the_query(con: Any, predicate: str, rows: tuple[int, ...], message: str) -> None:
    with pytest.raises(QueryError, match="shredcat: ") as e:
        _ids(con, predicate, rows)
    assert message in e.value.message


def test_what_has_no_exact_rendering_is_refused() -> None:
    with pytest.raises(UnrenderablePredicateError, match="length"):
        to_duckdb_sql(And((LiteralPredicate(Op.EQ, variant("v", "$.a", "bigint"), 1), Unknown("length(name) > 3"))))


def test_some_element_is_sparks_three_valued_exists() -> None:
    c = engine.connect()
    c.execute(
        """CREATE TABLE a AS SELECT * FROM (VALUES
             (1, '{"arr": [{"x": 5}, {"x": 6}]}'), (2, '{"arr": [{"x": 1}, {"y": 2}]}'), (3, '{"arr": 7}'),
             (4, '{"arr": []}'), (5, NULL), (6, '{"arr": [{"x": 1}]}'), (7, '{"arr": "[{\\"x\\": 5}]"}'),
             (8, '{"arr": [[{"x": 5}], []]}')
           ) t(id, j)"""
    )
    c.execute("CREATE TABLE b AS SELECT id, j::JSON::VARIANT AS v FROM a")
    some = "exists(try_variant_get(v, '$.arr', 'array<variant>'), e -> variant_get(e, '$.x', 'bigint') = 5)"

    def ids(text: str) -> list[int]:
        where = to_duckdb_sql(parse_sql(text))
        return [r[0] for r in engine.fetch(c, f"SELECT id FROM b WHERE {where} ORDER BY id")]

    # 2: FALSE and NULL (missing x) is NULL; 3, 5, 7: not an array (a string is not parsed); 4: none.
    assert ids(some) == [1]
    assert ids(f"NOT ({some})") == [4, 6]
    nested = "exists(try_variant_get(v, '$.arr', 'array<variant>'), e1 -> exists(try_variant_get(e1, '$', 'array<variant>'), e2 -> variant_get(e2, '$.x', 'bigint') = 5))"
    assert ids(nested) == [8]


@pytest.mark.parametrize(
    ("t", "value", "sql", "text"),
    [
        ("float64", math.nan, "CAST('NaN' AS DOUBLE)", "nan"),
        ("float64", -math.inf, "CAST('-Infinity' AS DOUBLE)", "-inf"),
        ("float32", 0.1, "CAST('0.1' AS FLOAT)", "0.1"),
        ("decimal(4,2)", Decimal("-0.50"), "CAST('-0.50' AS DECIMAL(4,2))", "-0.50"),
        ("varchar", "it's", "'it''s'", "it's"),
        ("blob", b"\x00\xff", "from_hex('00FF')", "\\x00\\xFF"),
        # Proleptic Gregorian, astronomical year 0 = 1 BC, in both engines.
        ("date", -719163, "(DATE '1970-01-01' + -719163)", "0001-12-31 (BC)"),
        ("date", 19783, "DATE '2024-03-01'", "2024-03-01"),
        ("timestamptz", 1_709_251_200_000_001, "TIMESTAMPTZ '2024-03-01 00:00:00.000001+00'", "2024-03-01 00:00:00.000001+00"),
        ("timestamp", -62_198_755_200_000_000, "make_timestamp(-62198755200000000::BIGINT)", "0002-01-01 (BC) 00:00:00"),
    ],
)
def test_literals_are_typed_and_exact(t: str, value: Any, sql: str, text: str) -> None:
    assert duckdb_literal(ShreddedType.parse(t), value) == sql
    # As DuckDB itself prints the value (its session zone is UTC).
    assert engine.fetch(engine.connect(), f"SELECT CAST({sql} AS VARCHAR)")[0][0].lower() == text.lower()


def test_isnan_of_null_is_false_as_in_spark() -> None:
    c = engine.connect()
    c.execute("CREATE TABLE f AS SELECT * FROM (VALUES (1, 'NaN'::DOUBLE), (2, NULL), (3, 1.0), (4, -0.0)) t(id, x)")
    tree = parse_sql("isnan(x) OR x = 0", schema=_schema({"x": "float64"}))
    where = to_duckdb_sql(tree, column_types={"x": "DOUBLE"})
    assert [r[0] for r in engine.fetch(c, f"SELECT id FROM f WHERE {where} ORDER BY id")] == [1, 4]
    where = to_duckdb_sql(parse_sql("NOT isnan(x)", schema=_schema({"x": "float64"})), column_types={"x": "DOUBLE"})
    assert [r[0] for r in engine.fetch(c, f"SELECT id FROM f WHERE {where} ORDER BY id")] == [2, 3, 4]


def _schema(cols: dict[str, str], partitions: tuple[str, ...] = ()) -> Any:
    from types import MappingProxyType

    from service.pruning.schema import ColumnInfo, TableSchema

    return TableSchema(
        ("v",), MappingProxyType({n: ColumnInfo(n, ShreddedType.parse(t), n in partitions) for n, t in cols.items()})
    )


def test_a_column_duckdb_reads_as_another_type_is_refused() -> None:
    tree = parse_sql("x = 5", schema=_schema({"x": "int64"}))
    assert to_duckdb_sql(tree, column_types={"X": "INTEGER"}) == '"x" = 5'
    with pytest.raises(UnrenderablePredicateError, match="reads column 'x' as VARCHAR"):
        to_duckdb_sql(tree, column_types={"x": "VARCHAR"})
    with pytest.raises(UnrenderablePredicateError, match="no column"):
        to_duckdb_sql(tree, column_types={"y": "BIGINT"})


def test_int96_timestamps_compare_as_utc_instants_whatever_duckdbs_time_zone(tmp_path: Path) -> None:
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    ts = [dt.datetime(2024, 3, 1, 0, 0, s, tzinfo=dt.UTC) for s in range(5)]
    f = tmp_path / "int96.parquet"
    pq.write_table(pa.table({"id": list(range(5)), "at": pa.array(ts, pa.timestamp("us", tz="UTC"))}), f,
                   use_deprecated_int96_timestamps=True)
    c = engine.connect(utc=False)
    c.execute("SET TimeZone = 'America/New_York'")
    types = engine.describe(c, f"read_parquet('{f}')")
    assert types["at"] == "TIMESTAMP_NS" or types["at"] == "TIMESTAMP"
    tree = parse_sql("at >= TIMESTAMP '2024-03-01 00:00:03'", schema=_schema({"id": "int64", "at": "timestamptz"}))
    where = to_duckdb_sql(tree, column_types=types)
    assert [r[0] for r in engine.fetch(c, f"SELECT id FROM read_parquet('{f}') WHERE {where} ORDER BY id")] == [3, 4]


def _duck_table(root: Path) -> list[str]:
    c = engine.connect()
    c.execute(
        f"""COPY (SELECT id, (id % 4)::INTEGER AS part, 'n' || (id % 3) AS name,
                 {{'k': id, 's': 'x' || id}}::VARIANT AS v FROM range(40) r(id))
            TO '{root}' (FORMAT parquet, PARTITION_BY (part))"""
    )
    return sorted(str(p.resolve()) for p in root.rglob("*.parquet"))


def test_read_pruned_reads_only_candidates_and_prints_a_runnable_query(tmp_path: Path, catalog_url: str) -> None:
    paths = _duck_table(tmp_path / "t")
    con = engine.connect()
    with Catalog(catalog_url) as cat:
        cat.register("lake", "t", paths)
        pred = "part = 2 AND variant_get(v, '$.k', 'bigint') > 20 AND name <> 'n0'"
        scan = plan_pruned(con, "lake.t", pred, catalog=cat)
        assert scan.files_total == 4 and len(scan.paths) == 1 and "part=2" in scan.paths[0]
        want = [i for i in range(21, 40) if i % 4 == 2 and i % 3 != 0]
        assert sorted(r[0] for r in engine.fetch(con, scan.sql)) == want
        rel = read_pruned(con, "lake.t", pred, catalog=cat)
        assert sorted(r[0] for r in rel.project("id").fetchall()) == want
        # No candidate: an empty relation with the table's columns.
        empty = read_pruned(con, "lake.t", "part = 9", catalog=cat)
        assert empty.fetchall() == [] and set(empty.columns) == {"id", "part", "name", "v"}
        # The partition column is typed as the catalog types it, not as DuckDB guesses it.
        assert "hive_types = {'part': 'INTEGER'}" in scan.source
        with pytest.raises(UnrenderablePredicateError):
            plan_pruned(con, "lake.t", "length(name) > 1", catalog=cat)
        with pytest.raises(BadInputError, match=r"NAMESPACE\.TABLE"):
            plan_pruned(con, "t", "part = 1", catalog=cat)
        with pytest.raises(UnknownColumnError, match="nope"):
            plan_pruned(con, "lake.t", "nope = 1", catalog=cat)



def test_columns_no_candidate_holds_are_read_as_nulls_as_in_a_full_read(tmp_path: Path, catalog_url: str) -> None:
    """A column later files added (``extra``), or a Variant column only other files hold, was
    missing from ``read_parquet`` over the candidates alone: ``extra IS NULL`` was refused
    ("DuckDB reads no column 'extra'") and ``variant_get(v, ...) IS NULL`` failed in DuckDB's
    binder, where a full read (``union_by_name`` over every file) answers with the NULL rows."""
    c = engine.connect()
    files = {
        "old": "range AS id, {'k': range}::VARIANT AS v",
        "new": "range AS id, {'k': range}::VARIANT AS v, range::INTEGER AS extra",
        "plain": "range AS id, range::INTEGER AS extra",
    }
    paths = []
    for i, (name, cols) in enumerate(files.items()):
        paths.append(str(tmp_path / f"{name}.parquet"))
        c.execute(f"COPY (SELECT {cols} FROM range({10 * i}, {10 * i + 10})) TO '{paths[-1]}'")
    full = engine.parquet_source(paths)
    with Catalog(catalog_url) as cat:
        cat.register("lake", "t", paths)
        for pred, only in [
            ("extra IS NULL", "old"),
            ("variant_get(v, '$.k', 'bigint') IS NULL", "plain"),
            ("try_variant_get(v, '$.k', 'bigint') IS NULL AND extra > 25", "plain"),
        ]:
            scan = plan_pruned(c, "lake.t", pred, catalog=cat)
            assert [Path(p).stem for p in scan.paths] == [only]
            want = engine.fetch(c, f"SELECT id, extra, v FROM {full} WHERE {scan.where} ORDER BY id")
            assert want and engine.fetch(c, f"SELECT id, extra, v FROM ({scan.sql}) ORDER BY id") == want
            assert set(read_pruned(c, "lake.t", pred, catalog=cat).columns) == {"id", "v", "extra"}


def test_a_table_without_files_reads_as_no_row_with_its_columns(sqlite_url: str) -> None:
    """``read_pruned`` on a table with no live file was a QueryError ("DuckDB has no schema to
    read it with") where any other plan without candidates is an empty relation."""
    with Catalog(sqlite_url) as cat:
        cat.create_table("lake", "t", ["v"])
        rel = read_pruned(engine.connect(), "lake.t", "variant_get(v, '$.k', 'bigint') = 1", catalog=cat)
    assert (rel.fetchall(), rel.columns, rel.types) == ([], ["v"], ["VARIANT"])

def test_timestamp_partition_values_are_instants_whatever_the_connections_time_zone(tmp_path: Path, sqlite_url: str) -> None:
    """``ts=2024-01-01 11:00:00`` (a Spark timestamp: an instant) was read as TIMESTAMPTZ in the
    connection's ``TimeZone``: in America/New_York it was 16:00 UTC, so ``ts = TIMESTAMP
    '2024-01-01 11:00:00'`` (UTC) found none of its rows. It is the wall-clock time in Spark's
    session zone (``time_zone``, UTC by default), as Spark reads it (checked against Spark 4.3 for
    UTC, America/New_York, +02:00 and Asia/Kolkata sessions)."""
    c = engine.connect()
    c.execute(
        "COPY (SELECT range AS id, TIMESTAMP '2024-01-01 10:00:00' + INTERVAL (range % 3) HOUR AS ts, "
        f"{{'k': range}}::VARIANT AS v FROM range(12)) TO '{tmp_path / 't'}' (FORMAT parquet, PARTITION_BY (ts))"
    )
    paths = sorted(str(p) for p in (tmp_path / "t").rglob("*.parquet"))
    with Catalog(sqlite_url) as cat:
        cat.register("lake", "t", paths)
        assert {col.name: col.type for col in cat.get_table("lake", "t").columns}["ts"] == "timestamptz"
        for zone in ("America/New_York", "Asia/Kolkata"):
            con = engine.connect(utc=False)
            con.execute(f"SET TimeZone = '{zone}'")
            rel = read_pruned(con, "lake.t", "ts = TIMESTAMP '2024-01-01 11:00:00'", catalog=cat)
            assert sorted(r[0] for r in rel.project("id").fetchall()) == [1, 4, 7, 10]
            for time_zone, hours in ((None, 10), ("America/New_York", 15), ("+02:00", 8)):
                rel = read_pruned(con, "lake.t", "id = 0", catalog=cat, time_zone=time_zone)
                utc = rel.project("epoch_us(ts) // 3600000000 % 24").fetchall()
                assert utc == [(hours,)], (zone, time_zone, utc)

def test_a_variant_file_duckdb_reads_as_a_struct_is_refused_beside_variant_files(tmp_path: Path, sqlite_url: str) -> None:
    """A writer that does not annotate the Variant group gives a file DuckDB reads as a STRUCT;
    ``union_by_name`` with VARIANT files cast that STRUCT to a VARIANT object of its three fields,
    so ``variant_get(v, '$.k', 'bigint') > 0`` silently returned the other files' rows only."""
    from tests.support.shred_writer import write_shredded

    c = engine.connect()
    odd = write_shredded(tmp_path / "odd.parquet", [{"k": 1, "s": "a"}, {"k": 7, "s": "b"}], {"k": "int64", "s": "varchar"})
    good = tmp_path / "good.parquet"
    c.execute(f"COPY (SELECT {{'k': range, 's': 'x'}}::VARIANT AS v FROM range(5)) TO '{good}'")
    with Catalog(sqlite_url) as cat:
        cat.register("lake", "t", [str(odd), str(good)])
        with pytest.raises(QueryError, match="does not read as VARIANT") as e:
            plan_pruned(c, "lake.t", "variant_get(v, '$.k', 'bigint') > 0", catalog=cat)
        assert e.value.details["files"] == [str(odd)]
        # The VARIANT file alone (the other pruned) reads as before.
        assert len(engine.fetch(c, plan_pruned(c, "lake.t", "variant_get(v, '$.k', 'bigint') = 0", catalog=cat).sql)) == 1

def test_read_pruned_through_the_rest_service_matches_the_catalog(tmp_path: Path, sqlite_url: str) -> None:
    from service.spark import LocalService

    paths = _duck_table(tmp_path / "t")
    con = engine.connect()
    with Catalog(sqlite_url) as cat:
        cat.register("lake", "t", paths)
    pred = "part IN (1, 3) AND variant_get(v, '$.s', 'string') >= 'x3'"
    with LocalService(sqlite_url, [str(tmp_path)]) as svc, svc.client() as client:
        via_rest = plan_pruned(con, "lake.t", pred, client=client)
    with Catalog(sqlite_url) as cat:
        local = plan_pruned(con, "lake.t", pred, catalog=cat)
    assert via_rest.paths == local.paths and via_rest.where == local.where and len(local.paths) == 2
    rows = sorted(r[0] for r in via_rest.relation(con).project("id").fetchall())
    assert rows == sorted(i for i in range(40) if i % 4 in (1, 3) and f"x{i}" >= "x3")


def test_local_paths_with_glob_characters_are_read_exactly(tmp_path: Path, sqlite_url: str) -> None:
    """DuckDB globs every path it reads (``b[1]/f.parquet`` reads ``b1/f.parquet``); such paths
    were refused ("cannot be read exactly"), so a table under ``/lake/run[1]/`` could not be read
    by ``read_pruned``, its files were left out of a DuckLake export and ``verify --data`` found
    them unverifiable. One-character classes (``[[]``, ``[*]``, ``[?]``) match only themselves."""
    from service.duckdb.ducklake import export_table
    from service.duckdb.verify import verify_data

    c = engine.connect()
    real = [tmp_path / "b[1]" / "f.parquet", tmp_path / "b[1]" / "g*?.parquet"]
    decoys = [tmp_path / "b1" / "f.parquet", tmp_path / "b[1]" / "gx.parquet"]
    for i, p in enumerate(real + decoys):
        p.parent.mkdir(exist_ok=True)
        c.execute(f"COPY (SELECT {i} AS x, {{'k': {i}}}::VARIANT AS v) TO '{p}'")
    with Catalog(sqlite_url) as cat:
        cat.register("lake", "t", [str(p) for p in real])
        assert sorted(read_pruned(c, "lake.t", "x >= 0", catalog=cat).project("x").fetchall()) == [(0,), (1,)]
        result = export_table(cat, "lake", "t", str(tmp_path / "t.ducklake"))
        assert (result.files, result.skipped_files) == (2, ())
        report, _ = verify_data(cat, "lake", "t")
        assert (report.matching, report.problems) == (2, ())
    c.execute(f"LOAD '{engine.ducklake_extension()}'")
    c.execute(result.attach)
    assert sorted(engine.fetch(c, "SELECT x FROM lake.lake.t")) == [(0,), (1,)]
    with pytest.raises(QueryError, match="object-store path"):
        engine.parquet_source(["s3://bucket/b[1]/f.parquet"])
    # Footer metadata (Spark's calendar and collation keys) is read from the file itself too.
    for p, tag in ((real[0], "real"), (decoys[0], "decoy")):
        c.execute(f"COPY (SELECT 1 AS x) TO '{p}' (KV_METADATA {{k: '{tag}'}})")
    assert engine.footer_keys(c, [str(real[0])], ["k"]) == [(str(real[0]), "k", "real")]

def test_a_refused_min_snapshot_id_is_not_kept_for_later_reads(tmp_path: Path, sqlite_url: str) -> None:
    """The helpers raised the client's snapshot to ``min_snapshot_id`` before asking and kept it
    after a refusal: every later call of that client, and of the process's helpers at that URL
    (a fresh client too), failed with 404 'snapshot 1000000 does not exist'."""
    from service.client import NotFound
    from service.spark import LocalService

    paths = _duck_table(tmp_path / "t")
    con = engine.connect()
    with Catalog(sqlite_url) as cat:
        newest = cat.register("lake", "t", paths).snapshot_id
    pred = "variant_get(v, '$.k', 'bigint') = 3"
    with LocalService(sqlite_url, [str(tmp_path)]) as svc, svc.client() as client:
        assert plan_pruned(con, "lake.t", pred, client=client).snapshot_id == newest
        with pytest.raises(NotFound, match="snapshot 1000000 does not exist"):
            plan_pruned(con, "lake.t", pred, client=client, min_snapshot_id=1_000_000)
        assert client.last_snapshot_id == newest
        assert plan_pruned(con, "lake.t", pred, client=client, min_snapshot_id=newest).snapshot_id == newest
        with svc.client() as fresh:
            assert plan_pruned(con, "lake.t", pred, client=fresh).snapshot_id == newest

def test_cli_prune_sql_duckdb_prints_a_query_duckdb_runs(tmp_path: Path) -> None:
    import json
    import os
    import subprocess

    from tests.support.cli import shredcat

    paths = _duck_table(tmp_path / "t")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    env["SHREDCAT_DATABASE_URL"] = f"sqlite:///{tmp_path}/cat.db"

    def cli(*args: str, real: bool = False) -> subprocess.CompletedProcess[str]:
        """Each behaviour once in a real process, its variations in this one (tests.support.cli)."""
        return shredcat(args, env, real=real)

    assert cli("register", "--table", "lake.t", *paths).returncode == 0
    pred = "part = 3 AND variant_get(v, '$.k', 'bigint') < 20"
    r = cli("prune", "--table", "lake.t", pred, "--sql", "duckdb", real=True)
    assert r.returncode == 0, r.stderr
    assert "1 of 4 files kept" in r.stderr
    rows = engine.fetch(engine.connect(), r.stdout.strip().rstrip(";"))
    assert sorted(row[0] for row in rows) == [3, 7, 11, 15, 19]
    out = json.loads(cli("prune", "--table", "lake.t", pred, "--sql", "duckdb", "--json").stdout)
    assert out["files_pruned"] == 3 and len(out["candidates"]) == 1 and out["sql"].endswith(out["where"])
    # No exact rendering: exit 2, one line naming the part; JSON predicates are not taken.
    r = cli("prune", "--table", "lake.t", "upper(name) = 'N1'", "--sql", "duckdb", real=True)
    assert r.returncode == 2 and "no exact DuckDB rendering" in r.stderr and "Traceback" not in r.stderr
    r = cli("prune", "--table", "lake.t", '{"type": "true"}', "--sql", "duckdb")
    assert r.returncode == 2 and "Spark SQL text" in r.stderr
    # A plan warning: one `warning:` line (plan_pruned's log record was printed too), and in the JSON.
    r = cli("prune", "--table", "lake.t", "variant_get(v, '$.kk', 'bigint') = 1", "--sql", "duckdb", real=True)
    assert r.returncode == 0 and [line for line in r.stderr.splitlines() if "$.kk" in line] == [
        "warning: path $.kk of column v is not shredded in any live file: files are pruned on it only where proven "
        "to lack it (did you mean $.k?)"
    ]
    out = json.loads(cli("prune", "--table", "lake.t", "variant_get(v, '$.kk', 'bigint') = 1", "--sql", "duckdb", "--json").stdout)
    assert [(w["type"], w["suggestions"]) for w in out["warnings"]] == [("path_not_shredded", ["$.k"])]


def test_a_column_spark_compares_by_a_collation_is_refused(tmp_path: Path, catalog_url: str) -> None:
    """Spark 4's ``STRING COLLATE UTF8_LCASE`` is a plain string in the file, its collation named
    only in Spark's row metadata: DuckDB would compare it byte by byte ('ABC' = 'abc' is true in
    Spark), so a term on it is refused; terms on other columns are read as before (from a review)."""
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    spark_schema = {
        "type": "struct",
        "fields": [
            {"name": "lname", "type": "string", "nullable": True, "metadata": {"__COLLATIONS": {"lname": "spark.UTF8_LCASE"}}},
            {"name": "name", "type": "string", "nullable": True, "metadata": {}},
        ],
    }
    t = pa.table({"lname": ["ABC", "zzz"], "name": ["ABC", "zzz"]})
    t = t.replace_schema_metadata({"org.apache.spark.sql.parquet.row.metadata": json.dumps(spark_schema)})
    path = tmp_path / "t" / "f.parquet"
    path.parent.mkdir()
    pq.write_table(t, path)
    con = engine.connect()
    with Catalog(catalog_url) as cat:
        cat.register("lake", "c", [str(path)])
        with pytest.raises(UnrenderablePredicateError, match=r"(?i)spark collation"):
            plan_pruned(con, "lake.c", "lname = 'abc'", catalog=cat)
        assert sorted(read_pruned(con, "lake.c", "name = 'ABC'", catalog=cat).fetchall()) == [("ABC", "ABC")]


def test_files_spark_wrote_in_its_legacy_calendar_are_refused_where_dates_may_differ(tmp_path: Path, catalog_url: str) -> None:
    """Spark rebases a LEGACY file's dates before 1582 (stored Julian) when it reads them; DuckDB
    does not, so rows of such a file with a date column would silently differ from Spark's."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    def write(name: str, table: pa.Table, legacy: bool) -> str:
        path = tmp_path / name / "f.parquet"
        path.parent.mkdir()
        meta = {"org.apache.spark.version": "3.5.0"} | ({"org.apache.spark.legacyDateTime": ""} if legacy else {})
        pq.write_table(table.replace_schema_metadata(meta), path)
        return str(path)

    dated = pa.table({"id": [1, 2], "d": [dt.date(1000, 6, 21), dt.date(2024, 1, 1)]})
    con = engine.connect()
    with Catalog(catalog_url) as cat:
        cat.register("lake", "old", [write("old", dated, legacy=True)])
        with pytest.raises(QueryError, match="LEGACY calendar") as e:
            plan_pruned(con, "lake.old", "id = 1", catalog=cat)
        assert e.value.details["files"]
        # The same file written in Spark's default (corrected) mode, and a LEGACY file without any
        # date or timestamp, read as before.
        cat.register("lake", "new", [write("new", dated, legacy=False)])
        assert read_pruned(con, "lake.new", "id = 1", catalog=cat).fetchall() == [(1, dt.date(1000, 6, 21))]
        cat.register("lake", "plain", [write("plain", pa.table({"id": [1, 2]}), legacy=True)])
        assert read_pruned(con, "lake.plain", "id = 2", catalog=cat).fetchall() == [(2,)]


def test_a_past_snapshot_over_rest_reads_the_rows_of_the_library_path(tmp_path: Path, sqlite_url: str) -> None:
    """``p=05`` and ``p=5`` (an int: both equal '5'), then ``p=a`` (a string today). loadTable
    describes today's types only, so a REST read of the first snapshot typed ``p`` as a string and
    returned one row of the two Spark reads (then it was refused); the plan now says how it typed
    the partition columns at its snapshot, and the REST read returns the library path's rows, over
    real HTTP, at every snapshot of the table."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from service.client import NotFound, Unprocessable
    from service.spark import LocalService

    paths = {}
    for i, raw in enumerate(["05", "5", "a"]):
        (tmp_path / f"p={raw}").mkdir()
        paths[raw] = str(tmp_path / f"p={raw}" / "f.parquet")
        pq.write_table(pa.table({"id": pa.array([i], pa.int64())}), paths[raw])
    predicates = ["p = '5'", "p = 5", "p = '05'", "p = 'a'", "p IS NOT NULL", "id >= 0 AND p <> '5'"]

    def rows(**how: Any) -> dict[tuple[int, str], list[tuple[Any, ...]]]:
        out = {}
        for snap in snaps:
            for pred in predicates:
                with contextlib.suppress(UnrenderablePredicateError):  # the same refusal from both paths
                    rel = read_pruned(engine.connect(), "lake.t", pred, snapshot=snap, **how)
                    out[(snap, pred)] = sorted(rel.project("id, p").fetchall())
        return out

    with Catalog(sqlite_url) as cat:
        first = cat.register("lake", "t", [paths["05"], paths["5"]]).snapshot_id
        second = cat.register("lake", "t", [paths["a"]]).snapshot_id
        assert first is not None and second is not None
        snaps = [first, second]
        local = rows(catalog=cat)
        # The catalog's typed errors, as for any read at such a snapshot: one never committed is
        # not found, a negative id is not a snapshot id (bad input, as REST's 422).
        with pytest.raises(NotFoundError, match=r"snapshot 999"):
            read_pruned(engine.connect(), "lake.t", "p = '5'", catalog=cat, snapshot=999)
        with pytest.raises(BadInputError, match=r"-1 is not a snapshot id"):
            read_pruned(engine.connect(), "lake.t", "p = '5'", catalog=cat, snapshot=-1)
    assert local[(first, "p = '5'")] == [(0, 5), (1, 5)]  # Spark's rows at that snapshot (tests/spark)
    assert local[(second, "p = '5'")] == [(1, "5")]
    with LocalService(sqlite_url, [str(tmp_path)]) as svc, svc.client() as client:
        assert rows(client=client) == local
        scan = plan_pruned(engine.connect(), "lake.t", "p = '5'", client=client, snapshot=first)
        assert scan.snapshot_id == first and sorted(scan.paths) == sorted([paths["05"], paths["5"]])
        # A snapshot that does not exist, or not an id: the API's typed errors, nothing read.
        with pytest.raises(NotFound, match="snapshot 999 does not exist"):
            read_pruned(engine.connect(), "lake.t", "p = '5'", client=client, snapshot=999)
        with pytest.raises(Unprocessable) as e:
            read_pruned(engine.connect(), "lake.t", "p = '5'", client=client, snapshot=-1)
        assert e.value.details["field"] == "body.snapshot-id"
