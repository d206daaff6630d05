"""Predicates read in a Spark session time zone other than UTC, against Spark's own answers.

Spark (session zone America/New_York) writes a table whose timestamps cross both 2024 DST
transitions: a timestamp column, a timestamp_ntz column, a date column, a timestamp partition
column and a Variant timestamp. For predicates with zone-less literals (in the gap, in the
overlap, dates against timestamps, NTZ against instants) the candidates planned in that zone must
hold every file Spark's ``_metadata.file_path`` names (zero false prunes), while the same
predicates read in UTC would miss some (the zone is what makes the answer right). The instants
the zone module gives are Spark's own, from the far past (local mean time) to the far future.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pytest

from service.catalog import Catalog
from service.pruning.literals import parse_timestamp_text
from service.pruning.parse_sql import parse_sql
from service.pruning.zones import SESSION_UTC, reading_in, session_zone
from tests.spark.truth import matching_file_uris

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

ZONE = "America/New_York"

PREDICATES = [
    "ts >= TIMESTAMP '2024-03-10 03:00:00' AND ts < TIMESTAMP '2024-03-10 03:20:00'",
    "ts < TIMESTAMP '2024-03-10 02:30:00' AND ts > TIMESTAMP '2024-03-10 01:40:00'",  # 02:30 is in the gap
    "ts BETWEEN '2024-11-03 01:00:00' AND '2024-11-03 01:10:00'",  # the overlap: the earlier offset
    "ts = TIMESTAMP '2024-11-03 01:30:00'",
    "ts > DATE '2024-11-03' AND ts < TIMESTAMP '2024-11-03 00:20:00'",
    "d = TIMESTAMP '2024-03-10 00:00:00'",
    "d < TIMESTAMP '2024-03-09 23:30:00' AND d > DATE '2024-03-08'",
    "ntz >= TIMESTAMP_NTZ '2024-11-03 01:40:00' AND ntz < TIMESTAMP_NTZ '2024-11-03 01:50:00'",  # twice
    "ntz < TIMESTAMP '2024-03-10 03:00:00'",  # zone-dependent: unknown
    "pts = TIMESTAMP '2024-03-10 00:00:00'",  # a timestamp partition: unknown outside UTC
    "variant_get(v, '$.ts', 'timestamp') >= TIMESTAMP '2024-11-03 01:50:00' "
    "AND variant_get(v, '$.ts', 'timestamp') < TIMESTAMP '2024-11-03 02:10:00'",
]


@pytest.fixture
def new_york(spark: Any) -> Iterator[Any]:
    spark.conf.set("spark.sql.session.timeZone", ZONE)
    try:
        yield spark
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("zoned") / "events"
    spark.conf.set("spark.sql.session.timeZone", ZONE)
    spark.conf.set("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")
    try:
        # Minutes around both transitions, five minutes apart, each window in files of its own.
        df = spark.sql(
            """SELECT id, ts, CAST(ts AS TIMESTAMP_NTZ) AS ntz, CAST(ts AS DATE) AS d,
                      date_trunc('DAY', ts) AS pts, to_variant_object(named_struct('ts', ts)) AS v
               FROM (SELECT id, CASE WHEN id < 60
                                     THEN TIMESTAMP '2024-03-09 23:00:00 America/New_York' + make_interval(0, 0, 0, 0, 0, id * 5, 0)
                                     ELSE TIMESTAMP '2024-11-02 23:00:00 America/New_York' + make_interval(0, 0, 0, 0, 0, (id - 60) * 5, 0)
                                END AS ts
                     FROM range(0, 120))"""
        ).repartitionByRange(24, "id")
        df.write.partitionBy("pts").parquet(str(root))
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")
        spark.conf.unset("spark.sql.parquet.outputTimestampType")
    return root


def _local(uri: str) -> str:
    return unquote(urlparse(uri).path) if uri.startswith("file:") else uri


def _plan(cat: Catalog, predicate: str, zone: str) -> set[str]:
    z = session_zone(zone)

    def parse(schema: Any) -> Any:
        with reading_in(z):
            return parse_sql(predicate, schema=schema)

    return {c.path for c in cat.iter_candidates("lake", "zoned", parse)}


def test_no_false_prunes_in_the_sessions_zone(new_york: Any, lake: Path, catalog_url: str) -> None:
    paths = sorted(str(p.resolve()) for p in lake.rglob("*.parquet"))
    with Catalog(catalog_url) as cat:
        cat.register("lake", "zoned", paths)
        kinds = {c.name: (c.type, c.kind) for c in cat.get_table("lake", "zoned").columns}
        assert kinds["ts"] == ("timestamptz", "plain") and kinds["ntz"] == ("timestamp", "plain")
        assert kinds["pts"][1] == "partition"
        full = new_york.read.parquet(str(lake))
        pruned = 0
        utc_misses = []
        for predicate in PREDICATES:
            truth = {_local(f) for f in matching_file_uris(full, lake, predicate, PREDICATES)}
            assert truth, predicate  # every predicate selects rows: a prune must be earned
            got = _plan(cat, predicate, ZONE)
            assert truth <= got, (predicate, sorted(truth - got))
            pruned += len(paths) - len(got)
            if not truth <= _plan(cat, predicate, "UTC"):
                utc_misses.append(predicate)
        assert pruned > len(PREDICATES) * len(paths) // 2  # the zone's terms prune
        # Read in UTC, these predicates would have pruned files Spark reads rows from.
        assert len(utc_misses) >= 5, utc_misses


def test_the_zones_instants_are_sparks(new_york: Any) -> None:
    walls = [
        "2024-03-10 02:30:00",  # in the gap: moved forward
        "2024-03-10 03:00:00",
        "2024-11-03 01:30:00",  # in the overlap: the earlier offset
        "2024-11-03 02:00:00",
        "1883-11-18 11:00:00",  # local mean time before standard time
        "1800-06-01 12:00:00",
        "0001-01-01 00:00:00",
        "2150-07-01 12:00:00",  # the last rule, beyond the tz database's transitions
        "9999-12-31 23:59:59",
        "+12000-07-01 12:00:00",
    ]
    z = session_zone(ZONE)
    for wall in walls:
        spark_micros = new_york.sql(f"SELECT unix_micros(TIMESTAMP '{wall}') AS m").collect()[0]["m"]
        with reading_in(z):
            ours = parse_timestamp_text(wall, ntz=False).micros
        assert ours == spark_micros, wall
        with reading_in(SESSION_UTC):
            assert parse_timestamp_text(wall, ntz=False).micros == z.wall(spark_micros) or wall.startswith("2024-03-10 02:")


@pytest.mark.parametrize("zone", ["PST", "ECT", "EST", "IST", "UT+05:30", "-3:30", "GMT+01:02:03"])
def test_short_ids_and_offsets_are_read_as_spark_reads_them(spark: Any, zone: str) -> None:
    from service.spark.translate import session_zone_of

    walls = ["2024-07-01 12:00:00", "2024-01-15 08:30:00", "1900-06-01 00:00:00", "2024-03-10 02:30:00"]
    spark.conf.set("spark.sql.session.timeZone", zone)
    try:
        assert session_zone_of(spark) == zone  # sent with a plan, not dropped
        z = session_zone(zone)
        for wall in walls:
            spark_micros = spark.sql(f"SELECT unix_micros(TIMESTAMP '{wall}') AS m").collect()[0]["m"]
            with reading_in(z):
                assert parse_timestamp_text(wall, ntz=False).micros == spark_micros, (zone, wall)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_read_pruned_sends_the_sessions_zone(new_york: Any, lake: Path, tmp_path: Path) -> None:
    from service.spark import plan_pruned, read_pruned
    from service.spark.local import LocalService

    paths = sorted(str(p.resolve()) for p in lake.rglob("*.parquet"))
    predicate = "ts >= TIMESTAMP '2024-03-10 03:00:00' AND ts < TIMESTAMP '2024-03-10 03:20:00'"
    with LocalService(f"sqlite:///{tmp_path / 'z.db'}", [str(lake)]) as svc, svc.client() as c:
        c.create_namespace("lake")
        c.create_table("lake", "zoned", variant_columns=["v"])
        c.commit_paths("lake", "zoned", paths)
        plan = c.plan("lake", "zoned", sql=predicate, session_time_zone=ZONE)
        assert 0 < len(plan.paths) < len(paths)
        scan = plan_pruned(new_york, "lake.zoned", predicate, client=c, base_path=str(lake))
        assert scan.fallback is None and set(scan.paths) == set(plan.paths)  # pruned in the zone
        rows = read_pruned(new_york, "lake.zoned", predicate, client=c, base_path=str(lake))
        expected = new_york.read.parquet(str(lake)).where(predicate)
        assert sorted(r.id for r in rows.select("id").collect()) == sorted(r.id for r in expected.select("id").collect())
        assert sorted(r.id for r in rows.select("id").collect())  # it selects rows
