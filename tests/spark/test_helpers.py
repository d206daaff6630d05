"""service.spark with a real local SparkSession and a real service (uvicorn on 127.0.0.1):
register-after-write and pruned reads over Spark-written shredded files."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.spark import (
    LocalService,
    list_parquet_files,
    plan_pruned,
    read_pruned,
    register_written,
    write_and_register,
)
from service.spark._common import SPARK_PART_FILE
from tests.spark.truth import where_flags

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

ROWS = 4000
FILES = 20


def events(spark: Any, n: int = ROWS, files: int = FILES, offset: int = 0) -> Any:
    """Events clustered by id (so by user and time) over ``files`` files: nested objects, an
    array, a field whose type drifts (int, then string), a field missing in most rows, nulls."""
    # range() cuts [offset, offset + n) into `files` contiguous partitions: one file each, no shuffle.
    return spark.range(offset, offset + n, 1, files).selectExpr(
        "id",
        f"""CASE WHEN id % 10 = 0 THEN to_variant_object(named_struct(
                'user', named_struct('id', id DIV 50, 'name', concat('u', id DIV 50)),
                'ts', TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id),
                'kind', 'purchase', 'amount', (id % 997) * 1.25D, 'tags', array('a', concat('t', id % 3)),
                'drift', CASE WHEN id < {offset + n // 2} THEN CAST(id AS VARIANT) ELSE CAST(CAST(id AS STRING) AS VARIANT) END,
                'coupon', CAST(NULL AS STRING)))
            ELSE to_variant_object(named_struct(
                'user', named_struct('id', id DIV 50, 'name', concat('u', id DIV 50)),
                'ts', TIMESTAMP '2024-01-01 00:00:00' + make_interval(0, 0, 0, 0, 0, 0, id),
                'kind', CASE WHEN id % 3 = 0 THEN 'click' ELSE 'view' END,
                'drift', CASE WHEN id < {offset + n // 2} THEN CAST(id AS VARIANT) ELSE CAST(CAST(id AS STRING) AS VARIANT) END))
            END AS v""",
    )


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("spark-lake")


@pytest.fixture(scope="module")
def service(lake: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalService]:
    db = tmp_path_factory.mktemp("spark-catalog") / "catalog.db"
    with LocalService(f"sqlite:///{db}", [str(lake)]) as svc:
        yield svc


@pytest.fixture(scope="module")
def client(service: LocalService) -> Iterator[Any]:
    with service.client() as c:
        yield c


@pytest.fixture(scope="module")
def table(spark: Any, lake: Path, client: Any) -> str:
    """lake.events: FILES Spark-written files, registered by write_and_register."""
    res = write_and_register(events(spark), str(lake / "events"), "lake.events", client=client)
    assert len(res.paths) == FILES
    return str(lake / "events")


def _rows(df: Any) -> list[tuple[Any, ...]]:
    return sorted(tuple(r) for r in df.selectExpr("id", "to_json(v) AS j").collect())


def _tagged_rows(frames: list[Any]) -> dict[int, list[tuple[Any, ...]]]:
    """The rows of many frames in one Spark job: {index: sorted (id, json)}."""
    from functools import reduce

    from pyspark.sql import functions as F

    tagged = [df.select(F.lit(i).alias("k"), "id", F.to_json("v").alias("j")) for i, df in enumerate(frames)]
    out: dict[int, list[tuple[Any, ...]]] = {i: [] for i in range(len(frames))}
    for r in reduce(lambda a, b: a.unionAll(b), tagged).collect():
        out[r.k].append((r.id, r.j))
    return {k: sorted(v) for k, v in out.items()}


def _where_rows(full: Any, predicates: list[Any]) -> dict[int, list[tuple[Any, ...]]]:
    """``_tagged_rows([full.where(p) for p in predicates])`` in one scan of ``full``: a flag per
    predicate, 1 on the rows its ``where`` keeps (tests/spark/truth.py), instead of a union of one
    filtered read per predicate (a plan Spark takes long to analyse)."""
    from pyspark.sql import functions as F

    rows = full.select("id", F.to_json("v").alias("j"), *where_flags(predicates)).collect()
    return {i: sorted((r.id, r.j) for r in rows if r[f"p{i}"] == 1) for i in range(len(predicates))}


SQL_PREDICATES = [
    # (predicate, selective: strictly fewer files than the table)
    ("variant_get(v, '$.user.id', 'bigint') = 42", True),
    ("v:user.id::bigint BETWEEN 10 AND 12", True),
    ("variant_get(v, '$.user.id', 'bigint') IN (3, 77)", True),
    ("NOT (variant_get(v, '$.user.id', 'bigint') < 75)", True),
    ("variant_get(v, '$.ts', 'timestamp') >= TIMESTAMP '2024-01-01 01:05:00'", True),
    ("variant_get(v, '$.ts', 'timestamp') < TIMESTAMP '2024-01-01 00:01:00+00:00'", True),
    # The drifting field: int-shredded files prune, string-shredded ones are kept and Spark casts.
    ("variant_get(v, '$.drift', 'bigint') = 123", True),
    ("variant_get(v, '$.drift', 'bigint') = 3500", False),
    ("variant_get(v, '$.user.name', 'string') = 'u7'", True),
    ("variant_get(v, '$.kind', 'string') = 'purchase'", False),
    ("variant_get(v, '$.amount', 'double') > 1240.0", False),
    ("variant_get(v, '$.coupon', 'string') IS NULL", False),
    ("variant_get(v, '$.user.id', 'bigint') = 42 OR variant_get(v, '$.user.id', 'bigint') = 43", True),
    # A plain column beside a Variant path: the Variant conjunct still prunes.
    ("variant_get(v, '$.user.id', 'bigint') = 5 AND id % 2 = 0", True),
    ("try_variant_get(v, '$.user.id', 'bigint') > 78", True),
    # int64-shredded stats do not decide an int target (values beyond int are NULL): kept.
    ("try_variant_get(v, '$.user.id', 'int') > 78", False),
]


def _column_predicates() -> list[tuple[Any, bool]]:
    import datetime

    from pyspark.sql import functions as F

    uid = F.variant_get("v", "$.user.id", "bigint")
    ts = F.variant_get("v", "$.ts", "timestamp")
    return [
        (uid == 42, True),
        (uid.isin(3, 77), True),
        (uid.between(10, 12), True),
        (~(uid < 75), True),
        ((uid == 5) & F.col("id").isNotNull(), True),
        ((uid == 5) | (uid == 60), True),
        (ts >= F.lit(datetime.datetime(2024, 1, 1, 1, 5, tzinfo=datetime.UTC)), True),
        (ts < F.lit("2024-01-01 00:01:00").cast("timestamp"), True),
        (F.variant_get("v", "$.user.name", "string") == "u7", True),
        (F.variant_get("v", "$.amount", "double") > 1240.0, False),
        (F.expr("v:user.id::bigint = 9"), True),
        (F.variant_get("v", "$.user.id", "int") > F.lit(78), False),
    ]


def test_read_pruned_returns_exactly_the_rows_of_a_full_read(spark: Any, client: Any, table: str) -> None:
    """SQL text and Columns: the same rows as spark.read.parquet(dir).where(p), fewer files read
    for the selective predicates."""
    cases = [*SQL_PREDICATES, *_column_predicates()]
    pruned = []
    for predicate, selective in cases:
        scan = plan_pruned(spark, "lake.events", predicate, client=client)
        assert scan.fallback is None, (str(predicate), scan.fallback)
        assert scan.files_total == FILES and scan.files_pruned == FILES - scan.candidates
        df = scan.read(spark)
        if selective:
            assert 0 < scan.candidates < FILES, (str(predicate), scan.candidates, scan.pruning_sql)
            assert len(df.inputFiles()) == scan.candidates
        pruned.append(df)
    got, expected = _tagged_rows(pruned), _where_rows(spark.read.parquet(table), [p for p, _ in cases])
    for i, (predicate, _) in enumerate(cases):
        assert got[i] == expected[i], str(predicate)
    assert sum(len(v) for v in expected.values()) > 0


def test_read_pruned_defaults_to_the_environment(spark: Any, service: LocalService, table: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHREDCAT_URL", service.url)
    df = read_pruned(spark, "lake.events", "variant_get(v, '$.user.id', 'bigint') = 42")
    assert sorted(r.id for r in df.select("id").collect()) == list(range(2100, 2150))


def test_untranslatable_predicates_read_everything_and_say_so(
    spark: Any, client: Any, table: str, caplog: pytest.LogCaptureFixture
) -> None:
    from pyspark.sql import functions as F

    is_even = F.udf(lambda i: i % 2 == 0, "boolean")
    cases: list[Any] = [
        "id % 7 = 3",  # no Variant path at all
        F.col("id") % 7 == 3,
        is_even(F.col("id")),  # a Python UDF has no SQL form
        # An OR with a plain column: the service has the column's statistics too, so it prunes.
        "variant_get(v, '$.user.id', 'bigint') = 42 OR id = 3",
        "variant_get(v, '$.user.id', 'bigint') <=> 42",
    ]
    pruned, full = [], []
    for i, predicate in enumerate(cases):
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="service.spark"):
            scan = plan_pruned(spark, "lake.events", predicate, client=client)
        if i == 3:
            assert scan.fallback is None and scan.candidates < FILES, scan
        elif i == 2 or scan.pruning_sql is None:
            # No SQL form (the UDF), or a service that knows only Variant terms refused it.
            assert scan.candidates == FILES
            assert scan.fallback is not None and scan.pruning_sql is None
            assert any("reading all 20 files" in r.getMessage() for r in caplog.records), caplog.text
        else:
            # A service that resolves plain columns took it, and kept every file: the terms it
            # understands cannot prune here (an unknown sub-expression, an OR with one).
            assert scan.candidates == FILES
            assert scan.fallback is None and scan.files_pruned == 0
        if i in (0, 2, 3):  # the rows of a few (reading everything, the others are alike)
            pruned.append(scan.read(spark))
            full.append(spark.read.parquet(table).where(predicate))
    assert _tagged_rows(pruned) == _tagged_rows(full)


def test_plan_warnings_are_logged_and_kept_on_the_scan(
    spark: Any, client: Any, table: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="service.spark"):
        scan = plan_pruned(spark, "lake.events", "variant_get(v, '$.user.id.d', 'bigint') = 42", client=client)
    assert scan.fallback is None and scan.candidates == FILES
    assert [w.type for w in scan.warnings] == ["path_not_shredded", "predicate_prunes_nothing"]
    assert scan.warnings[0].suggestions[0] == "$.user.id"
    assert any("$.user.id.d of column v is not shredded" in r.getMessage() for r in caplog.records), caplog.text
    assert plan_pruned(spark, "lake.events", "variant_get(v, '$.user.id', 'bigint') = 42", client=client).warnings == ()


def test_a_non_utc_session_prunes_timestamps_in_its_zone(spark: Any, client: Any, table: str) -> None:
    # 2024-01-01 00:01 in New York is 05:01 UTC: the files up to then are candidates, not only
    # the first minute's (what the literal would mean in UTC).
    predicate = "variant_get(v, '$.ts', 'timestamp') < TIMESTAMP '2024-01-01 00:01:00'"
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    try:
        scan = plan_pruned(spark, "lake.events", predicate, client=client)
        assert scan.fallback is None and scan.pruning_sql == predicate
        assert _rows(scan.read(spark)) == _rows(spark.read.parquet(table).where(predicate))
        in_utc = client.plan("lake", "events", sql=predicate)
        assert set(in_utc.paths) < set(scan.paths)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
    # Non-timestamp predicates still prune in any zone.
    spark.conf.set("spark.sql.session.timeZone", "Asia/Tokyo")
    try:
        assert plan_pruned(spark, "lake.events", "v:user.id::bigint = 3", client=client).candidates < FILES
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_no_candidate_gives_an_empty_frame_with_the_table_schema(spark: Any, client: Any, table: str) -> None:
    from pyspark.sql import functions as F

    full = spark.read.parquet(table)
    for predicate in ("variant_get(v, '$.user.id', 'bigint') = 100000", F.variant_get("v", "$.user.id", "bigint") < -1):
        scan = plan_pruned(spark, "lake.events", predicate, client=client)
        assert scan.candidates == 0 and scan.files_pruned == FILES
        df = scan.read(spark)
        assert df.schema == full.schema
        assert df.count() == 0


def test_empty_table_reads_as_empty(spark: Any, client: Any) -> None:
    client.create_table("lake", "nothing", variant_columns=["v"])
    df = read_pruned(spark, "lake.nothing", "variant_get(v, '$.a', 'bigint') = 1", client=client)
    assert df.count() == 0 and df.columns == ["v"]


# --- register after write -----------------------------------------------------------------------


def _live(client: Any, name: str) -> set[str]:
    return {f.path for f in client.iter_files("lake", name)}


def test_register_after_write_registers_exactly_the_new_files(spark: Any, client: Any, lake: Path) -> None:
    out = lake / "appended"
    # An earlier job's files, never registered, and debris a writer leaves around.
    events(spark, 400, 3).write.parquet(str(out))
    earlier = set(list_parquet_files(str(out)))
    assert len(earlier) == 3
    (out / "_staging").mkdir()
    shutil.copy(sorted(earlier)[0], out / "_staging" / "part-00000-0bad0bad-0000-0000-0000-000000000000-c000.parquet")
    shutil.copy(sorted(earlier)[0], out / ".hidden.parquet")

    first = write_and_register(events(spark, 400, 4, offset=1000), str(out), "lake.appended", client=client)
    assert len(first.paths) == 4 and not set(first.paths) & earlier
    assert all(SPARK_PART_FILE.match(Path(p).name) for p in first.paths)
    assert _live(client, "appended") == set(first.paths)
    assert first.commit is not None and sorted(first.commit.added) == sorted(first.paths)

    # Client-side statistics, extracted on the executors (more files than the driver threshold).
    second = write_and_register(
        events(spark, 2000, 20, offset=5000), str(out), "lake.appended", client=client, client_stats=True
    )
    assert len(second.paths) == 20 and not set(second.paths) & (earlier | set(first.paths))
    assert _live(client, "appended") == set(first.paths) | set(second.paths)
    # The statistics sent by the client equal those the server extracts itself.
    one = second.paths[0]
    by_client = client.file_stats("lake", "appended", one)
    client.remove_files("lake", "appended", [one])
    client.commit_paths("lake", "appended", [one])
    assert client.file_stats("lake", "appended", one)["variant-stats"] == by_client["variant-stats"]

    # Registering the same write again is a replay, not a second snapshot.
    again = register_written(str(out), "lake.appended", sorted(earlier | set(first.paths)), client=client)
    assert set(again.paths) == set(second.paths)
    assert again.commit is not None and again.commit.replayed
    assert _live(client, "appended") == set(first.paths) | set(second.paths)

    # The data read back through the table is exactly what was written (plus nothing earlier).
    got = read_pruned(spark, "lake.appended", "variant_get(v, '$.user.id', 'bigint') >= 0", client=client)
    assert got.count() == 400 + 2000


def test_register_after_overwrite_removes_the_replaced_files(spark: Any, client: Any, lake: Path) -> None:
    out = str(lake / "overwritten")
    first = write_and_register(events(spark, 300, 3), out, "lake.overwritten", client=client)
    second = write_and_register(events(spark, 300, 2, offset=300), out, "lake.overwritten", client=client, mode="overwrite")
    assert set(second.removed) == set(first.paths)
    assert _live(client, "overwritten") == set(second.paths)
    # One snapshot replaced the files: no reader ever saw the table empty.
    snaps = [(s.added_files, s.removed_files) for s in client.iter_snapshots("lake", "overwritten")]
    assert snaps[-2:] == [(3, 0), (2, 3)]
    rows = read_pruned(spark, "lake.overwritten", "variant_get(v, '$.user.id', 'bigint') >= 0", client=client)
    assert sorted(r.id for r in rows.select("id").collect()) == list(range(300, 600))


def test_an_overwrite_may_change_the_partition_layout(spark: Any, client: Any, lake: Path) -> None:
    """Spark lets an overwrite use another ``partitionBy`` (it deletes the old directories); the
    catalog follows in the same one snapshot, and prunes on the new partition columns."""
    out = str(lake / "relayout")
    by_bucket = events(spark, 300, 3).selectExpr("*", "CAST(id DIV 100 AS INT) AS bucket")
    write_and_register(by_bucket, out, "lake.relayout", client=client, partition_by=["bucket"])
    assert client.load_table("lake", "relayout").partition_columns == ("bucket",)
    by_kind = events(spark, 300, 3, offset=300).selectExpr("*", "IF(id % 2 = 0, 'even', 'odd') AS parity")
    second = write_and_register(by_kind, out, "lake.relayout", client=client, mode="overwrite", partition_by=["parity"])
    assert client.load_table("lake", "relayout").partition_columns == ("parity",)
    assert _live(client, "relayout") == set(second.paths)
    snaps = [(s.added_files, s.removed_files) for s in client.iter_snapshots("lake", "relayout")]
    assert snaps[-1] == (len(second.paths), 3)
    plan = client.plan("lake", "relayout", sql="parity = 'odd'")
    assert set(plan.paths) == {p for p in second.paths if "parity=odd" in p}
    rows = read_pruned(spark, "lake.relayout", "parity = 'odd'", client=client, base_path=out)
    assert sorted(r.id for r in rows.select("id").collect()) == list(range(301, 600, 2))


def test_an_overwrite_too_large_for_one_commit_removes_in_chunks_first(
    spark: Any, lake: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = str(lake / "big-overwrite")
    with LocalService(f"sqlite:///{tmp_path / 'small.db'}", [str(lake)], max_files_per_commit=3) as svc, svc.client() as c:
        first = write_and_register(events(spark, 200, 2), out, "lake.big", client=c)
        second = write_and_register(events(spark, 200, 2, offset=200), out, "lake.big", client=c, mode="append")
        with caplog.at_level(logging.WARNING, logger="service.spark"):
            third = write_and_register(events(spark, 300, 3, offset=400), out, "lake.big", client=c, mode="overwrite")
        assert "refused 3 new and 4 replaced files in one commit" in caplog.text
        assert set(third.removed) == {*first.paths, *second.paths}
        assert _live(c, "big") == set(third.paths)
        snaps = [(s.added_files, s.removed_files) for s in c.iter_snapshots("lake", "big")]
        assert snaps[-3:] == [(0, 3), (0, 1), (3, 0)]  # chunks of the server's limit, then the new files
        # Into a table that does not exist yet: nothing to remove first, the commit creates it.
        events(spark, 200, 4, offset=700).write.parquet(out + "-unregistered")
        fresh = write_and_register(events(spark, 300, 3, offset=900), out + "-unregistered", "lake.fresh_big", client=c, mode="overwrite")
        assert fresh.removed == () and _live(c, "fresh_big") == set(fresh.paths)


def test_files_of_other_writers_are_never_registered(spark: Any, client: Any, lake: Path) -> None:
    out = lake / "shared"
    events(spark, 200, 2).write.parquet(str(out))
    before = list_parquet_files(str(out))
    events(spark, 200, 2, offset=200).write.mode("append").parquet(str(out))  # "our" job
    ours = sorted(set(list_parquet_files(str(out))) - set(before))
    shutil.copy(before[0], out / "manual-export.parquet")  # not a Spark part file: left alone
    res = register_written(str(out), "lake.shared", before, client=client)
    assert set(res.paths) == set(ours)
    assert res.ignored == (str((out / "manual-export.parquet").resolve()),)
    assert _live(client, "shared") == set(ours)

    # Files of two Spark jobs appeared: which are ours cannot be told, nothing is registered.
    before = list_parquet_files(str(out))
    events(spark, 100, 1, offset=400).write.mode("append").parquet(str(out))
    events(spark, 100, 1, offset=500).write.mode("append").parquet(str(out))
    with pytest.raises(RuntimeError, match="2 Spark write jobs"):
        register_written(str(out), "lake.shared", before, client=client)
    assert _live(client, "shared") == set(ours)


def test_a_pruned_read_types_partition_columns_as_the_whole_table_does(
    spark: Any, lake: Path, client: Any
) -> None:
    """Spark infers a partition column's type from the directories it reads: from one candidate's
    ``ps=05`` alone INT, from the whole table's ``05``, ``5`` and ``a`` STRING. A pruned read reads
    a few candidates, so it takes the catalog's type of the column (over every live file): its
    rows are the plain read's, in both of Spark's modes (before: other rows, or a failed cast)."""
    from pyspark.sql import functions as F

    root = lake / "typed-parts"
    spark.range(0, 6, 1, 1).selectExpr(
        "id", "to_variant_object(named_struct('a', id)) AS v", "CASE id % 3 WHEN 0 THEN '05' WHEN 1 THEN '5' ELSE 'a' END AS ps"
    ).write.partitionBy("ps").parquet(str(root))
    register_written(str(root), "lake.typed", [], client=client, spark=spark)
    full = spark.read.parquet(str(root))
    assert full.schema["ps"].dataType.simpleString() == "string"
    before = spark.conf.get("spark.sql.ansi.enabled")
    try:
        for ansi in ("false", "true"):
            spark.conf.set("spark.sql.ansi.enabled", ansi)
            for pred in ["ps = '05'", "ps != 'a' AND CAST(ps AS STRING) = '5'", "id >= 0", F.col("ps") == "05"]:
                got = read_pruned(spark, "lake.typed", pred, client=client, base_path=str(root))
                assert got.schema["ps"].dataType.simpleString() == "string", (ansi, pred)
                want = sorted(tuple(r) for r in full.where(pred).select("id", "ps").collect())
                assert sorted(tuple(r) for r in got.select("id", "ps").collect()) == want, (ansi, str(pred))
    finally:
        spark.conf.set("spark.sql.ansi.enabled", before)


def test_a_pruned_read_at_a_past_snapshot_reads_the_rows_spark_read_then(spark: Any, lake: Path, client: Any) -> None:
    """Time travel through the REST service: ``p=05`` and ``p=5`` (Spark types ``p`` an int, so
    ``p = '5'`` holds for both), then ``p=a`` (a string now: only ``p=5``), then ``p=5`` removed.
    At each snapshot, the pruned read's rows are Spark's plain read of the files live then, with
    ``base_path`` (partition columns typed as those files type them) and without; a snapshot that
    does not exist, or is not an id, is the API's typed error (before: no ``snapshot=`` at all)."""
    from pyspark.sql import functions as F

    from service.client import NotFound, Unprocessable

    root = str(lake / "time-travel")

    def write(values: list[str]) -> tuple[int, list[str]]:
        before = list_parquet_files(root) if Path(root).exists() else []
        spark.range(0, 4 * len(values), 1, 1).selectExpr(
            "id", "to_variant_object(named_struct('a', id)) AS v", f"element_at(array({', '.join(repr(v) for v in values)}), CAST(id % {len(values)} + 1 AS INT)) AS p"
        ).write.mode("append").partitionBy("p").parquet(root)
        res = register_written(root, "lake.tt", before, client=client, spark=spark)
        assert res.commit is not None and res.commit.snapshot_id is not None
        return res.commit.snapshot_id, list(res.paths)

    first, old = write(["05", "5"])
    second, new = write(["a"])
    fives = [p for p in old if "/p=5/" in p]
    third = client.remove_files("lake", "tt", fives).snapshot_id
    live = {first: old, second: old + new, third: [p for p in old + new if p not in fives]}
    predicates: list[Any] = ["p = '5'", "p = '05'", "p <> '05' AND variant_get(v, '$.a', 'bigint') >= 2", F.col("p") == "5"]
    for snap, files in live.items():
        truth = spark.read.option("basePath", root).parquet(*files)
        assert truth.schema["p"].dataType.simpleString() == ("int" if snap == first else "string")
        for pred in predicates:
            got = read_pruned(spark, "lake.tt", pred, client=client, base_path=root, snapshot=snap)
            assert got.schema["p"].dataType == truth.schema["p"].dataType, (snap, str(pred))
            want = sorted(tuple(r) for r in truth.where(pred).select("id", "p").collect())
            assert sorted(tuple(r) for r in got.select("id", "p").collect()) == want, (snap, str(pred))
        scan = plan_pruned(spark, "lake.tt", "variant_get(v, '$.a', 'bigint') >= 0", client=client, snapshot=snap)
        assert scan.snapshot_id == snap and sorted(scan.paths) == sorted(files) and scan.fallback is None
        ids = sorted(r.id for r in scan.read(spark).select("id").collect())
        assert ids == sorted(r.id for r in spark.read.parquet(*files).select("id").collect())
    for base in (root, None):
        with pytest.raises(NotFound, match="snapshot 1000000 does not exist"):
            read_pruned(spark, "lake.tt", "p = '5'", client=client, base_path=base, snapshot=1_000_000)
        with pytest.raises(Unprocessable) as e:
            read_pruned(spark, "lake.tt", "p = '5'", client=client, base_path=base, snapshot=-1)
        assert e.value.details["field"] == "body.snapshot-id"


def test_a_refused_registration_leaves_no_table_behind(spark: Any, client: Any, tmp_path: Path) -> None:
    from service.client import ClientError, NotFound

    # Outside the service's warehouse roots: the commit by path is refused (the write itself succeeds).
    outside = tmp_path / "outside"
    with pytest.raises(ClientError):
        write_and_register(events(spark, 100, 2), str(outside), "elsewhere.events", client=client)
    assert len(list_parquet_files(str(outside))) == 2
    with pytest.raises(NotFound):
        client.load_table("elsewhere", "events")
    assert "elsewhere" not in client.list_namespaces()
