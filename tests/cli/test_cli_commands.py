"""The ``shredcat`` command line as scripts use it: real subprocesses, real files, the embedded
SQLite default (no server). Each behaviour is shown by a real process; the set-up registrations
and the variations of a behaviour already shown run the same ``main`` in this process
(:mod:`tests.support.cli`: a process costs 1-2 s of CPU in imports)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import SHREDCAT, shredcat
from tests.support.imports import modules_loaded_by
from tests.support.shred_writer import write_shredded


def _run(args: list[str], cwd: Path, *, real: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    return shredcat(args, env, real=real, cwd=cwd)


def test_startup_imports_no_heavy_library() -> None:
    """The CLI is run in loops: parsing arguments must not import pyarrow, SQLAlchemy, DuckDB,
    FastAPI or PySpark."""
    heavy = {"pyarrow", "sqlalchemy", "duckdb", "fastapi", "pyspark", "uvicorn", "sqlglot", "pydantic"}
    loaded = modules_loaded_by("import service.cli as c; c.build_parser()")
    assert "service.cli" in loaded
    assert sorted({m.split(".")[0] for m in loaded} & heavy) == []


def test_stats_contract(tmp_path: Path) -> None:
    good = write_shredded(tmp_path / "good.parquet", [{"a": 1, "s": "x"}, {"a": 7, "s": "y"}], {"a": "int64", "s": "varchar"})
    (tmp_path / "bad.parquet").write_text("not parquet")
    r = _run(["stats", "good.parquet", "bad.parquet", "--json"], tmp_path, real=True)
    assert r.returncode != 0
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [x["variant_path"] for x in lines] == ['"a"', '"s"']
    assert list(lines[0]) == [
        "file",
        "column",
        "variant_path",
        "shredded_type",
        "column_size_bytes",
        "value_count",
        "null_count",
        "min_value",
        "max_value",
        "contains_nan",
        "extra_stats",
    ]
    assert lines[0]["file"] == "good.parquet" and lines[0]["column"] == "v"
    assert (lines[0]["min_value"], lines[0]["max_value"], lines[0]["extra_stats"]) == ("1", "7", None)
    errors = r.stderr.strip().splitlines()
    assert len(errors) == 1 and "bad.parquet" in errors[0]
    assert _run(["stats", str(good)], tmp_path).returncode == 0


def test_stats_columns_contract(tmp_path: Path) -> None:
    """``--columns``: one line per plain column (struct leaves dotted, nothing inside lists or
    Variant groups), DuckLake's ducklake_file_column_stats columns; without it, Variant rows only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "id": pa.array([3, None, 9], pa.int64()),
            "name": ["b", "a", None],
            "s": pa.array([{"x": 1.5, "y": "q"}, None, {"x": -2.0, "y": None}]),
            "tags": pa.array([[1], [], None], pa.list_(pa.int32())),
        }
    )
    pq.write_table(table, tmp_path / "plain.parquet")
    write_shredded(tmp_path / "shred.parquet", [{"a": 1}, {"a": 2}], {"a": "int64"})
    r = _run(["stats", "--columns", "plain.parquet", "shred.parquet"], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert [(x["file"], x["column"]) for x in lines] == [
        ("plain.parquet", "id"),
        ("plain.parquet", "name"),
        ("plain.parquet", "s.x"),
        ("plain.parquet", "s.y"),
        ("shred.parquet", "id"),
    ]
    assert list(lines[0]) == [
        "file",
        "column",
        "column_size_bytes",
        "value_count",
        "null_count",
        "min_value",
        "max_value",
        "contains_nan",
        "extra_stats",
    ]
    by = {x["column"]: x for x in lines if x["file"] == "plain.parquet"}
    assert (by["id"]["value_count"], by["id"]["null_count"], by["id"]["min_value"], by["id"]["max_value"]) == (2, 1, "3", "9")
    assert (by["name"]["min_value"], by["name"]["max_value"], by["name"]["contains_nan"]) == ("a", "b", None)
    assert (by["s.x"]["null_count"], by["s.x"]["min_value"], by["s.x"]["max_value"], by["s.x"]["contains_nan"]) == (
        1,
        "-2.0",
        "1.5",
        False,
    )
    assert by["s.y"]["value_count"] == 1 and by["id"]["column_size_bytes"] > 0
    plain_only = _run(["stats", "plain.parquet"], tmp_path)
    assert plain_only.returncode == 0 and plain_only.stdout == ""


def test_register_list_stats_and_prune_on_the_embedded_default(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for i in range(6):
        write_shredded(data / f"f{i}.parquet", [{"id": i * 100 + r, "k": "ab"[r % 2]} for r in range(50)], {"id": "int64", "k": "varchar"})
    files = sorted(str(p.relative_to(tmp_path)) for p in data.glob("*.parquet"))
    r = _run(["register", "--table", "lake.ev", *files], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    assert "6 added" in r.stdout
    assert (tmp_path / "shredcat.db").exists(), "the embedded default is a SQLite file in the working directory"
    # Re-registering the same files is a no-op.
    r = _run(["register", "--table", "lake.ev", *files, "--json"], tmp_path)
    assert json.loads(r.stdout)["snapshot_id"] is None
    listed = _run(["files", "--table", "lake.ev"], tmp_path, real=True).stdout.splitlines()
    assert listed == sorted(str((tmp_path / f).resolve()) for f in files), "local paths are stored absolute"
    tables = _run(["tables", "--json"], tmp_path).stdout.splitlines()
    assert json.loads(tables[0])["files"] == 6
    gs = json.loads(_run(["global-stats", "--table", "lake.ev"], tmp_path, real=True).stdout)
    ids = next(p for p in gs["extra_stats"] if p["field_name"] == '"id"')
    assert (ids["min"], ids["max"], ids["num_values"]) == ("0", "549", 300)
    r = _run(["prune", "--table", "lake.ev", "variant_get(v, '$.id', 'bigint') BETWEEN 120 AND 130"], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str((data / "f1.parquet").resolve())]
    assert "1 of 6 files kept" in r.stderr
    r = _run(["prune", "--table", "lake.ev", '{"type": "eq", "term": {"type": "variant", "column": "v", "path": "$.id", "as": "bigint"}, "value": 333}', "--json"], tmp_path)
    out = json.loads(r.stdout)
    assert [c["path"] for c in out["candidates"]] == [str((data / "f3.parquet").resolve())]
    assert out["files_pruned"] == 5


def test_register_can_replace_files_in_one_snapshot(tmp_path: Path) -> None:
    """A compaction from the command line: the new file and the files it replaces in one snapshot."""
    rows = [[{"id": i * 10 + r} for r in range(5)] for i in range(3)]
    old = [str(write_shredded(tmp_path / f"f{i}.parquet", rows[i], {"id": "int64"})) for i in range(3)]
    merged = str(write_shredded(tmp_path / "merged.parquet", rows[0] + rows[1], {"id": "int64"}))
    db = ["--database-url", f"sqlite:///{tmp_path}/cat.db"]
    assert _run(["register", "--table", "lake.ev", *old, *db], tmp_path).returncode == 0
    r = _run(["register", "--table", "lake.ev", "merged.parquet", "--remove", "f0.parquet", "--remove", old[1], *db], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    assert "1 added, 0 unchanged, 2 removed" in r.stdout
    assert _run(["files", "--table", "lake.ev", *db], tmp_path).stdout.splitlines() == sorted([merged, old[2]])
    # A file to remove that is not live fails the whole registration; with the flag it is reported.
    r = _run(["register", "--table", "lake.ev", old[0], "--remove", old[1], *db], tmp_path, real=True)
    assert r.returncode == 1 and "cannot be removed" in r.stderr
    assert _run(["files", "--table", "lake.ev", *db], tmp_path).stdout.splitlines() == sorted([merged, old[2]])
    r = _run(["register", "--table", "lake.ev", old[0], "--remove", old[1], "--remove-missing-ok", "--json", *db], tmp_path)
    out = json.loads(r.stdout)
    assert (out["added"], out["removed"], out["missing"]) == ([old[0]], [], [old[1]])
    # Into a table that does not exist yet, a refused registration creates neither it nor its namespace.
    r = _run(["register", "--table", "fresh.ev", old[0], "--remove", old[1], *db], tmp_path)
    assert r.returncode == 1 and "cannot be removed" in r.stderr
    tables = _run(["tables", *db], tmp_path).stdout
    assert tables.startswith("lake.ev\t") and "fresh" not in tables, tables


def test_prune_warnings_on_stderr_and_unknown_columns_exit_2(tmp_path: Path) -> None:
    """A typo in a path or a type prunes nothing, soundly, with a ``warning:`` line per problem on
    stderr (and under ``warnings`` with --json); a column the table does not have is exit 2 with
    one line naming it and the table's columns."""
    files = [
        str(write_shredded(tmp_path / f"f{i}.parquet", [{"user": {"id": i * 10 + r}} for r in range(5)], {"user": {"id": "int64"}}))
        for i in range(3)
    ]
    db = ["--database-url", f"sqlite:///{tmp_path}/cat.db"]
    assert _run(["register", "--table", "demo.events", *files, *db], tmp_path).returncode == 0
    r = _run(["prune", "--table", "demo.events", "variant_get(v,'$.user.id.d','bigint') = 1234", *db], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == sorted(files)
    warnings = [x for x in r.stderr.splitlines() if x.startswith("warning: ")]
    assert warnings == [
        "warning: path $.user.id.d of column v is not shredded in any live file: no file can be pruned on it "
        "(did you mean $.user.id?)",
        "warning: the predicate prunes no file by its values: every term that could prune is on a path warned about above",
    ]
    assert "3 of 3 files kept, 0 pruned" in r.stderr
    r = _run(["prune", "--table", "demo.events", "variant_get(v,'$.user.id','string') > '12'", "--json", *db], tmp_path)
    out = json.loads(r.stdout)
    assert [w["type"] for w in out["warnings"]] == ["type_not_comparable", "predicate_prunes_nothing"]
    assert out["warnings"][0] | {"message": ""} == {"type": "type_not_comparable", "column": "v", "path": "$.user.id", "message": "", "suggestions": ["bigint"]}
    assert r.stderr.count("warning: ") == 2
    r = _run(["prune", "--table", "demo.events", "variant_get(v,'$.user.id','bigint') = 12", "--json", *db], tmp_path)
    assert json.loads(r.stdout)["warnings"] == [] and "warning" not in r.stderr
    r = _run(["prune", "--table", "demo.events", "variant_get(w,'$.user.id','bigint') = 1234", *db], tmp_path, real=True)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.splitlines() == ["shredcat prune: demo.events has no Variant column 'w' (at column 13); its Variant columns: v"]


def test_prune_refuses_json_nested_past_the_decoder_in_one_line(tmp_path: Path) -> None:
    """A JSON predicate nested deeper than Python's JSON decoder recurses was a RecursionError
    traceback (exit 1); it is refused as the depth limit is, exit 2."""
    write_shredded(tmp_path / "f.parquet", [{"id": 1}], {"id": "int64"})
    assert _run(["register", "--table", "lake.ev", "f.parquet"], tmp_path).returncode == 0
    for depth in (65, 5000):
        deep = '{"type": "not", "child": ' * depth + '{"type": "true"}' + "}" * depth
        r = _run(["prune", "--table", "lake.ev", deep], tmp_path, real=depth > 1000)  # past the decoder: a real stack
        assert r.returncode == 2 and r.stdout == "", r.stderr
        assert r.stderr.startswith("shredcat prune: ") and "predicate nested deeper than 64" in r.stderr, r.stderr
        assert len(r.stderr.splitlines()) == 1, r.stderr


def test_prune_reads_literals_in_the_time_zone_given(tmp_path: Path) -> None:
    """``--time-zone``: zone-less timestamp literals as Spark reads them in that session zone."""
    import datetime as dt

    utc = dt.UTC
    early = write_shredded(tmp_path / "early.parquet", [{"t": dt.datetime(2024, 1, 1, h, tzinfo=utc)} for h in range(0, 4)], {"t": "timestamptz"})
    late = write_shredded(tmp_path / "late.parquet", [{"t": dt.datetime(2024, 1, 1, h, tzinfo=utc)} for h in range(5, 9)], {"t": "timestamptz"})
    db = ["--database-url", f"sqlite:///{tmp_path}/cat.db"]
    assert _run(["register", "--table", "demo.events", str(early), str(late), *db], tmp_path).returncode == 0
    predicate = "variant_get(v, '$.t', 'timestamp') < TIMESTAMP '2024-01-01 01:00:00'"
    r = _run(["prune", "--table", "demo.events", predicate, *db], tmp_path, real=True)
    assert r.stdout.splitlines() == [str(early)], r.stderr
    # 01:00 in New York is 06:00 UTC: both files may hold earlier instants.
    r = _run(["prune", "--table", "demo.events", predicate, "--time-zone", "America/New_York", *db], tmp_path)
    assert sorted(r.stdout.splitlines()) == sorted([str(early), str(late)]), r.stderr
    r = _run(["prune", "--table", "demo.events", predicate, "--time-zone", "Mars/Olympus", *db], tmp_path, real=True)
    assert r.returncode == 2 and "unknown time zone 'Mars/Olympus'" in r.stderr


@pytest.mark.parametrize(
    ("args", "message", "status"),
    [
        (["prune", "--table", "lake.ev", "variant_get(v, '$.id', 'bigint') = = 3"], "expected a value", 2),
        (["prune", "--table", "nodot", "true"], "NAMESPACE.TABLE", 2),
        # The read commands agree: what the user asked for is exit 2 (a 4xx over REST).
        (["files", "--table", "lake.missing"], "does not exist", 2),
        (["files", "--table", "nodot"], "NAMESPACE.TABLE", 2),
        (["global-stats", "--table", "lake.missing"], "does not exist", 2),
        (["global-stats", "--table", "nodot"], "NAMESPACE.TABLE", 2),
        # A file that cannot be read: the good ones are still committed (README), exit 1.
        (["register", "--table", "lake.ev", "missing.parquet"], "missing.parquet", 1),
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path: Path, args: list[str], message: str, status: int) -> None:
    r = _run(args, tmp_path, real=True)
    assert r.returncode == status, r.stderr
    assert message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_register_refuses_a_bad_catalog_or_table_name_before_reading_any_file(tmp_path: Path) -> None:
    """What refuses the commit whatever the files hold is said before the files are read (hours on
    a large lake), not after: here no file can be read, so its error would come first."""
    import socket
    import sqlite3

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    newer = f"sqlite:///{tmp_path}/newer.db"
    assert _run(["migrate", "--database-url", newer], tmp_path).returncode == 0
    with sqlite3.connect(tmp_path / "newer.db") as db:
        db.execute("UPDATE alembic_version SET version_num = '9999'")
    for args, message in (
        (["--database-url", f"postgresql://postgres@127.0.0.1:{closed}/x"], "the catalog database is unavailable"),
        (["--database-url", newer], "revision 9999, which this shredcat"),
    ):
        r = _run(["register", "--table", "lake.ev", "missing.parquet", *args], tmp_path, real=True)
        assert r.returncode == 1 and message in r.stderr and "missing.parquet" not in r.stderr, r.stderr
    # The embedded default is not created to learn that a new table's name is refused.
    r = _run(["register", "--table", "lake.a\u202eb", "missing.parquet"], tmp_path, real=True)
    assert r.returncode == 1 and "U+202E" in r.stderr and "missing.parquet" not in r.stderr, r.stderr
    assert not (tmp_path / "shredcat.db").exists()


def test_new_table_names_are_nfc_without_hidden_characters(tmp_path: Path) -> None:
    """The CLI creates a missing table as it registers: the same name rules as REST and the library."""
    write_shredded(tmp_path / "f.parquet", [{"id": 1}], {"id": "int64"})
    for table, message in (
        ("cafe\u0301.ev", "not in Unicode NFC (composed) form; its NFC form is 'caf\\xe9'"),
        ("lake.a\u202eb", "U+202E RIGHT-TO-LEFT OVERRIDE, an invisible or bidirectional control character"),
    ):
        r = _run(["register", "--table", table, "f.parquet"], tmp_path)
        assert r.returncode == 1 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert _run(["tables"], tmp_path).stdout == ""
    r = _run(["register", "--table", "caf\u00e9.ev", "f.parquet"], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    assert _run(["tables"], tmp_path).stdout.startswith("caf\u00e9.ev")


def test_verify_contract(tmp_path: Path) -> None:
    """``shredcat verify``: 0 when every file matches, 1 when stored stats differ (one JSON object
    per problem file), 3 when none differs but some file could not be read, 2 on usage errors;
    re-registering the file by path restates its stats."""
    import dataclasses

    from service.catalog import Catalog
    from service.values import ShreddedType

    url = f"sqlite:///{tmp_path}/cat.db"
    files = [
        write_shredded(tmp_path / f"f{i}.parquet", [{"a": i}, {"a": i + 10}], {"a": "int64"}) for i in range(3)
    ]
    db = ["--database-url", url]
    assert _run(["register", "--table", "ns.t", str(files[0]), str(files[1]), *db], tmp_path).returncode == 0
    r = _run(["verify", "--table", "ns.t", "--all", *db], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "" and "2 match, 0 differ, 0 unverifiable" in r.stderr
    # Client-side stats of f2 claim a wrong max (a pruning hazard); f1 disappears.
    from service.stats.extract import extract_file

    good = extract_file(str(files[2]))
    (row,) = good.paths
    assert (row.min_value, row.max_value, row.shredded_type) == (2, 12, ShreddedType.parse("int64"))
    with Catalog(url) as cat:
        cat.commit("ns", "t", [dataclasses.replace(good, paths=(dataclasses.replace(row, max_value=5),))])
    files[1].unlink()
    r = _run(["verify", "--table", "ns.t", "--all", "--json", *db], tmp_path, real=True)
    assert r.returncode == 1, r.stderr
    lines = {x["path"]: x for x in map(json.loads, r.stdout.splitlines())}
    assert lines[str(files[2])] == {
        "path": str(files[2]),
        "status": "different",
        "differences": [
            {"field": "max_value", "stored": "5", "extracted": "12", "column": "v", "variant_path": '"a"'}
        ],
    }
    assert lines[str(files[1])]["status"] == "unverifiable" and "f1.parquet" in lines[str(files[1])]["reason"]
    assert len(lines) == 2
    text = _run(["verify", "--table", "ns.t", "--sample", "3", "--seed", "1", *db], tmp_path)
    assert text.returncode == 1 and f"different {files[2]}" in text.stdout and "max_value" in text.stdout
    # Registering f2 by path re-extracts it: its stats are restated; only the missing file is left.
    r = _run(["register", "--table", "ns.t", str(files[2]), "--json", *db], tmp_path)
    assert json.loads(r.stdout)["restated"] == [str(files[2])]
    assert _run(["verify", "--table", "ns.t", "--all", *db], tmp_path, real=True).returncode == 3
    for i, usage in enumerate((["--table", "ns.t"], ["--table", "ns.t", "--all", "--sample", "1"], ["--table", "ns.t", "--sample", "0"],
                               ["--table", "nodot", "--all"], ["--table", "ns.missing", "--all"])):  # fmt: skip
        r = _run(["verify", *usage, *db], tmp_path, real=i == 0)
        assert r.returncode == 2, (usage, r.stderr)
        assert r.stderr


def test_sources_are_stored_in_one_form() -> None:
    from service.cli._common import normalize_source

    assert normalize_source("S3://bucket/lake/ts=1 2%3A0/f.parquet") == "s3://bucket/lake/ts=1 2%3A0/f.parquet"
    assert normalize_source("rel/f.parquet") == os.path.abspath("rel/f.parquet")


def test_output_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    """A full disk or a closed standard output: exit 1 and one line on stderr, never a traceback
    (nor, for a closed output, a silent success)."""
    write_shredded(tmp_path / "good.parquet", [{"a": 1}], {"a": "int64"})
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHREDCAT_")}
    with open("/dev/full", "w") as full:
        r = subprocess.run([*SHREDCAT, "stats", "good.parquet"], cwd=tmp_path, env=env, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert r.returncode == 1 and r.stderr == "shredcat stats: cannot write the output: No space left on device\n", r.stderr
    for args in (["stats", "good.parquet"], ["tables"]):
        closed = ["sh", "-c", 'exec "$@" >&-', "sh", *SHREDCAT, *args]  # started with fd 1 closed
        r = subprocess.run(closed, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True, timeout=120)
        assert r.returncode == 1 and r.stderr == f"shredcat {args[0]}: standard output is closed\n", r.stderr


def test_prune_warns_about_terms_pruning_cannot_use_as_the_catalog_does(tmp_path: Path) -> None:
    """LIKE, an unknown function, a literal that is not the column's type: a ``warning:`` line
    each, the same text as the catalog's plan warnings (which REST and the dashboard show)."""
    from service.catalog import Catalog
    from service.pruning.parse_sql import parse_sql

    files = [
        str(write_shredded(tmp_path / f"f{i}.parquet", [{"id": i * 10 + r, "s": "ab"[r % 2]} for r in range(5)], {"id": "int64", "s": "varchar"}))
        for i in range(2)
    ]
    url = f"sqlite:///{tmp_path}/cat.db"
    db = ["--database-url", url]
    assert _run(["register", "--table", "demo.events", *files, *db], tmp_path).returncode == 0
    sql = "v:s::string LIKE '%a' OR length(v:s::string) > 3 OR v:id::bigint = 'abc'"
    r = _run(["prune", "--table", "demo.events", sql, *db], tmp_path, real=True)
    assert r.returncode == 0, r.stderr
    assert sorted(r.stdout.splitlines()) == sorted(files)
    lines = [x.removeprefix("warning: ") for x in r.stderr.splitlines() if x.startswith("warning: ")]
    with Catalog(url) as cat:
        plan = cat.plan("demo", "events", lambda schema: parse_sql(sql, schema=schema))
    assert lines == [w.message for w in plan.warnings] and len(lines) == 4
    assert "(LIKE is not supported)" in lines[0] and "(function LENGTH() is not supported)" in lines[1]
    assert "(string 'abc' is not a valid bigint)" in lines[2] and lines[3].startswith("the predicate prunes no file")
    out = json.loads(_run(["prune", "--table", "demo.events", sql, "--json", *db], tmp_path).stdout)
    assert [w["type"] for w in out["warnings"]] == ["term_not_used"] * 3 + ["predicate_prunes_nothing"]
