"""``shredcat ducklake export``: the real DuckLake extension attaches the exported catalog, reads
the table's rows and skips files on shredcat's column statistics. (Spark-written tables and the
≥ 100-predicate comparison with Spark: ``test_read_pruned_spark.py``.)"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from service.catalog import Catalog
from service.duckdb import engine
from service.duckdb.ducklake import export_table
from service.errors import BadInputError, QueryError
from tests.support.cli import shredcat
from tests.support.shred_writer import write_shredded


def files_read(con: Any, sql: str) -> int:
    """DuckLake's own count of the data files a query read (EXPLAIN ANALYZE's table scan)."""
    plan = engine.fetch(con, f"EXPLAIN ANALYZE {sql}")[0][1]
    return sum(int(n) for n in re.findall(r"Total Files Read: (\d+)", plan))


def rows_and_files_read(con: Any, sql: str) -> tuple[list[tuple[Any, ...]], int]:
    """A query's rows and DuckLake's count of the data files it read, from one run: the profile
    EXPLAIN ANALYZE prints (``files_read`` runs the query once more for it)."""
    con.execute("PRAGMA enable_profiling = 'no_output'")
    try:
        rows = engine.fetch(con, sql)
        profile = json.loads(con.get_profiling_information(format="json"))
    finally:
        con.execute("PRAGMA disable_profiling")
    counts, todo = [], [profile]
    while todo:
        node = todo.pop()
        counts.append(int(node.get("extra_info", {}).get("Total Files Read", 0)))
        todo.extend(node.get("children", []))
    return rows, sum(counts)


def attached(result: Any) -> Any:
    con = engine.connect()
    con.execute(f"LOAD '{engine.ducklake_extension()}'")
    con.execute(result.attach)
    return con


def _duck_table(root: Path) -> list[str]:
    """400 rows in 4 partitions, 5 files each (ids in ranges of 80)."""
    c = engine.connect()
    for lo in range(0, 400, 80):
        c.execute(
            f"""COPY (SELECT id, (id % 4)::INTEGER AS part, 'n' || (id % 3) AS name, id / 7 AS x,
                     {{'k': id, 's': 'x' || id}}::VARIANT AS v FROM range({lo}, {lo + 80}) r(id))
                TO '{root}' (FORMAT parquet, PARTITION_BY (part), APPEND, FILENAME_PATTERN 'f{lo}_{{uuid}}')"""
        )
    return sorted(str(p.resolve()) for p in root.rglob("*.parquet"))


def test_exported_table_reads_the_same_rows_and_prunes_on_column_stats(tmp_path: Path, catalog_url: str) -> None:
    paths = _duck_table(tmp_path / "t")
    assert len(paths) == 20
    with Catalog(catalog_url) as cat:
        cat.register("lake", "t", paths)
        result = export_table(cat, "lake", "t", str(tmp_path / "out.ducklake"))
        with pytest.raises(BadInputError, match="exists"):
            export_table(cat, "lake", "t", str(tmp_path / "out.ducklake"))
    assert (result.files, result.rows, result.skipped_files) == (len(paths), 400, ())
    con = attached(result)
    q = "SELECT id FROM lake.lake.t WHERE {} ORDER BY id"
    assert [r[0] for r in engine.fetch(con, q.format("TRUE"))] == list(range(400))
    assert [r[0] for r in engine.fetch(con, q.format("part = 2 AND id > 390"))] == [394, 398]
    assert [r[0] for r in engine.fetch(con, q.format("variant_extract(v, 'k')::BIGINT = 17"))] == [17]
    total = files_read(con, "SELECT sum(id) FROM lake.lake.t")
    assert total == len(paths)
    # DuckLake skips files on the exported plain-column and partition stats.
    assert files_read(con, "SELECT sum(id) FROM lake.lake.t WHERE id > 390") == 4  # the last range's files
    assert files_read(con, "SELECT sum(id) FROM lake.lake.t WHERE part = 1") == 5
    # The Variant stats are DuckLake's own rows (its reader does not prune on them).
    n = engine.fetch(con, "SELECT count(*) FROM __ducklake_metadata_lake.ducklake_file_variant_stats")[0][0]
    assert n == 2 * len(paths)
    doc = engine.fetch(con, "SELECT extra_stats FROM __ducklake_metadata_lake.ducklake_table_column_stats WHERE extra_stats IS NOT NULL")
    assert {o["field_name"] for o in json.loads(doc[0][0])} == {'"k"', '"s"'}


def test_files_duckdb_cannot_read_as_variant_are_named(tmp_path: Path, sqlite_url: str) -> None:
    good = _duck_table(tmp_path / "t")[0]
    odd = write_shredded(tmp_path / "odd.parquet", [{"k": 1, "s": "a"}], {"k": "int64", "s": "varchar"})
    with Catalog(sqlite_url) as cat:
        cat.register("lake", "a", [good])
        cat.register("lake", "b", [str(odd)])
        result = export_table(cat, "lake", "b", str(tmp_path / "b.ducklake"))
    assert result.files == 0
    assert result.skipped_files == ((str(odd), "DuckDB reads column v as STRUCT, not as VARIANT"),)



@pytest.mark.parametrize("namespace", ["main", 'we"ird ns'])
def test_a_namespace_the_extension_already_has_or_must_quote_is_exported(tmp_path: Path, sqlite_url: str, namespace: str) -> None:
    """The extension creates DuckLake's schema ``main`` itself: ``CREATE SCHEMA dl.main`` failed
    ("Schema with name "main" already exists"), so no table of namespace ``main`` could be exported."""
    paths = _duck_table(tmp_path / "t")
    with Catalog(sqlite_url) as cat:
        cat.register(namespace, "t", paths)
        result = export_table(cat, namespace, "t", str(tmp_path / "out.ducklake"))
    ns = '"' + namespace.replace('"', '""') + '"'
    assert engine.fetch(attached(result), f"SELECT count(*), sum(id) FROM lake.{ns}.t") == [(400, sum(range(400)))]

@pytest.mark.parametrize(
    ("first", "second", "kept"),
    [
        ("(range % 5)::VARCHAR", "range", False),  # ints 5..9 as VARCHAR bounds '5'..'9': x = '10' skipped the file
        ("range::INTEGER", "range + 0.5", False),  # was InvalidStatsError: '5.5' is not a valid int32 bound
        ("DATE '2024-01-01' + range::INTEGER", "TIMESTAMP '2024-01-01 12:00:00' + INTERVAL (range) DAY", False),
        ("range::BIGINT", "range::INTEGER", True),  # a narrower integer: read and bounded as it is
    ],
)
def test_a_file_whose_column_has_another_type_than_the_tables_is_left_out(
    tmp_path: Path, sqlite_url: str, first: str, second: str, kept: bool
) -> None:
    """A plain column has the type of the first file that had it; DuckLake reads another file's
    values cast to it (5.5 as 6, a timestamp as its date) and compares that file's bounds as that
    type, so such a file is left out and named, unless the column holds its values unchanged."""
    c = engine.connect()
    paths = [str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet")]
    for p, x, lo in zip(paths, (first, second), (0, 5), strict=True):
        c.execute(f"COPY (SELECT range AS id, {x} AS x, {{'k': range}}::VARIANT AS v FROM range({lo}, {lo + 5} + {lo})) TO '{p}'")
    with Catalog(sqlite_url) as cat:
        cat.register("lake", "t", paths)
        result = export_table(cat, "lake", "t", str(tmp_path / "t.ducklake"))
    assert [p for p, _ in result.skipped_files] == ([] if kept else [paths[1]])
    con = attached(result)
    ids = [r[0] for r in engine.fetch(con, "SELECT id FROM lake.lake.t ORDER BY id")]
    assert ids == list(range(15 if kept else 5))
    for i, x in engine.fetch(con, "SELECT id, x FROM lake.lake.t"):
        assert engine.fetch(con, "SELECT id FROM lake.lake.t WHERE x = ?", [x]) == [(i,)]

def test_cli_ducklake_export(tmp_path: Path) -> None:
    paths = _duck_table(tmp_path / "t")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    env["SHREDCAT_DATABASE_URL"] = f"sqlite:///{tmp_path}/cat.db"

    def cli(*args: str, real: bool = False) -> subprocess.CompletedProcess[str]:
        """Each behaviour once in a real process, its variations in this one (tests.support.cli)."""
        return shredcat(args, env, real=real)

    assert cli("register", "--table", "lake.t", *paths).returncode == 0
    to = str(tmp_path / "x.ducklake")
    r = cli("ducklake", "export", "--table", "lake.t", "--to", to, real=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"ATTACH 'ducklake:{to}' AS lake") and "400 rows" in r.stderr
    con = engine.connect()
    con.execute(f"LOAD '{engine.ducklake_extension()}'")
    con.execute(r.stdout.strip().rstrip(";"))
    assert engine.fetch(con, "SELECT count(*), sum(id) FROM lake.lake.t") == [(400, sum(range(400)))]
    r = cli("ducklake", "export", "--table", "lake.t", "--to", to, "--json")
    assert r.returncode == 2 and "exists" in r.stderr
    r = cli("ducklake", "export", "--table", "lake.nope", "--to", str(tmp_path / "y.ducklake"), real=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    # A missing directory is named, not the temporary file DuckDB would have opened in it.
    r = cli("ducklake", "export", "--table", "lake.t", "--to", str(tmp_path / "no" / "z.ducklake"))
    assert (r.returncode, r.stderr) == (2, f"shredcat ducklake: {tmp_path / 'no'} is no directory: the export writes {tmp_path / 'no' / 'z.ducklake'} into it\n")


def test_ducklake_reads_its_metadata_through_views_read_only(tmp_path: Path) -> None:
    """What the extension allows for DuckLake views over a live catalog (no export step): with the
    metadata in SQLite, tables replaced by views over other tables are read (and pruned on) by a
    READ_ONLY attach; a writing attach fails at commit ("ducklake_snapshot is not an table").
    Views over shredcat's own tables would go the same way; they are not written yet."""
    import sqlite3

    sqlite_ext = pytest.importorskip("duckdb_extension_sqlite_scanner")
    sq = os.path.join(os.path.dirname(sqlite_ext.__file__), "extensions", f"v{engine.DUCKDB_VERSION}", "sqlite_scanner.duckdb_extension")

    def con() -> Any:
        c = engine.connect()
        c.execute(f"LOAD '{sq}'")
        c.execute(f"LOAD '{engine.ducklake_extension()}'")
        return c

    meta, data = tmp_path / "meta.sqlite", tmp_path / "data"
    c = con()
    c.execute(f"COPY (SELECT range AS id FROM range(10)) TO '{tmp_path}/a.parquet'")
    c.execute(f"ATTACH 'ducklake:sqlite:{meta}' AS dl (DATA_PATH '{data}/')")
    c.execute("CREATE TABLE dl.t (id BIGINT)")
    c.execute(f"CALL ducklake_add_data_files('dl', 't', '{tmp_path}/a.parquet')")
    c.close()
    s = sqlite3.connect(meta)
    for t in ("ducklake_snapshot", "ducklake_data_file", "ducklake_file_column_stats", "ducklake_table_stats"):
        s.execute(f"ALTER TABLE {t} RENAME TO {t}_base")
        s.execute(f"CREATE VIEW {t} AS SELECT * FROM {t}_base")
    s.commit()
    s.close()
    c = con()
    c.execute(f"ATTACH 'ducklake:sqlite:{meta}' AS dl (DATA_PATH '{data}/', READ_ONLY)")
    assert engine.fetch(c, "SELECT count(*), sum(id) FROM dl.t WHERE id > 5") == [(4, 30)]
    assert files_read(c, "SELECT sum(id) FROM dl.t WHERE id > 5") == 1
    assert files_read(c, "SELECT sum(id) FROM dl.t WHERE id > 100") == 0  # pruned on the view's stats
    c.close()
    c = con()
    c.execute(f"ATTACH 'ducklake:sqlite:{meta}' AS dl (DATA_PATH '{data}/')")
    with pytest.raises(Exception, match="ducklake_snapshot is not an table"):
        c.execute("INSERT INTO dl.t VALUES (1)")


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), QueryError("writing DuckLake's metadata: disk full")])
def test_an_export_that_stops_midway_leaves_no_catalog(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch, stop: BaseException
) -> None:
    """Ctrl-C or a failure after the extension created the catalog left it there, its table without
    files (an empty table to whoever attached it), and the rerun refused it as existing."""
    from service.duckdb import ducklake

    paths = _duck_table(tmp_path / "t")
    out = tmp_path / "out" / "t.ducklake"
    out.parent.mkdir()
    real = ducklake._write_files

    def interrupted(*args: Any) -> None:
        real(*args)
        raise stop

    with Catalog(sqlite_url) as cat:
        cat.register("lake", "t", paths)
        monkeypatch.setattr(ducklake, "_write_files", interrupted)
        with pytest.raises(type(stop)):
            export_table(cat, "lake", "t", str(out))
        assert sorted(os.listdir(out.parent)) == []
        monkeypatch.setattr(ducklake, "_write_files", real)
        result = export_table(cat, "lake", "t", str(out))
    assert sorted(os.listdir(out.parent)) == ["t.ducklake"]
    assert engine.fetch(attached(result), "SELECT count(*) FROM lake.lake.t") == [(400,)]


def test_ctrl_c_during_a_duckdb_statement_is_a_keyboard_interrupt() -> None:
    """DuckDB stops a statement on SIGINT and raises RuntimeError("Query interrupted") from the
    KeyboardInterrupt: that was a traceback and exit 1 instead of the CLI's exit 130."""
    import signal
    import threading

    con = engine.connect()
    # Tens of seconds uninterrupted: the signal comes while it runs.
    sql = "SELECT count(*) FROM range(3000000000) t(x) WHERE x % 7 = 3"
    received: list[BaseException] = []
    # From another thread, as a terminal's Ctrl-C comes (a Python SIGALRM handler that sent it
    # ran only once the statement had ended on its own: nothing was interrupted).
    # Python's own handler, as in the CLI's process: an earlier test in this worker may have left
    # another (a SparkContext installs one that first cancels its jobs through the JVM).
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    ctrl_c = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    ctrl_c.start()
    try:
        with engine.translated("counting"):
            con.execute(sql).fetchall()
    except BaseException as e:  # what the translation raised is the point
        received.append(e)
    finally:
        ctrl_c.cancel()
        signal.signal(signal.SIGINT, handler)
    assert [type(e) for e in received] == [KeyboardInterrupt], received
    # DuckDB's own error, translated (not a KeyboardInterrupt raised before the statement began).
    assert isinstance(received[0].__context__, RuntimeError), received[0].__context__
    with pytest.raises(KeyboardInterrupt), engine.translated("counting"):
        raise RuntimeError("Query interrupted") from KeyboardInterrupt()
    with pytest.raises(RuntimeError, match="other"), engine.translated("counting"):
        raise RuntimeError("other")
