"""PySpark Columns and SQL text naming plain and partition columns, on a real SparkSession and a
Spark-written table partitioned by date (``partitionBy``): the text sent to the service, the tree
it parses to against the table's schema as Spark sees it, and pruned reads that return exactly
the rows of a full read."""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.pruning.expressions import (
    ColumnTerm,
    LiteralPredicate,
    Op,
    Unknown,
    VariantTerm,
    iter_predicates,
)
from service.pruning.parse_sql import parse_sql
from service.spark import LocalService, plan_pruned
from service.spark.read import table_schema
from service.spark.translate import column_conjuncts, pruning_attempts, same_predicate, table_schema_of
from service.values import ShreddedType

pytestmark = [pytest.mark.spark, pytest.mark.slow, pytest.mark.xdist_group("spark")]

FILES = 6


@pytest.fixture(scope="module")
def lake(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """events partitioned by day: one directory per day, one file each."""
    root = tmp_path_factory.mktemp("partitioned") / "events"
    df = spark.range(0, 600, 1, FILES).selectExpr(
        "id",
        "CAST(concat('u', id % 7) AS STRING) AS name",
        "TIMESTAMP '2024-03-01 00:00:00' + make_interval(0, 0, 0, 0, 0, id, 0) AS ts",
        "DATE '2024-03-01' + CAST(id DIV 100 AS INT) AS day",
        "to_variant_object(named_struct('user', named_struct('id', id DIV 10))) AS v",
    )
    df.write.partitionBy("day").parquet(str(root))
    return root


@pytest.fixture(scope="module")
def client(lake: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A service holding lake.events (its FILES files registered by path)."""
    db = tmp_path_factory.mktemp("catalog") / "c.db"
    with LocalService(f"sqlite:///{db}", [str(lake.parent)]) as svc, svc.client() as c:
        paths = sorted(str(p) for p in lake.rglob("*.parquet"))
        assert len(paths) == FILES
        c.commit("lake", "events", paths=paths, create_if_missing=["v"])
        yield c


def _schema(spark: Any, lake: Path) -> Any:
    one = sorted(str(p) for p in lake.rglob("*.parquet"))[0]
    return table_schema(spark, one, base_path=str(lake))


def test_the_table_schema_as_spark_sees_it_names_partition_columns(spark: Any, lake: Path) -> None:
    ts = table_schema_of(_schema(spark, lake))
    assert ts.variant_columns == ("v",)
    assert ts.resolve("day").type == ShreddedType.parse("date")  # type: ignore[union-attr]
    assert ts.resolve("ID").type == ShreddedType.parse("int64")  # type: ignore[union-attr]
    assert ts.resolve("ts").type == ShreddedType.parse("timestamptz")  # type: ignore[union-attr]


def test_columns_on_plain_and_partition_columns_translate_conjunct_by_conjunct(spark: Any, lake: Path) -> None:
    from pyspark.sql import functions as F

    schema = _schema(spark, lake)
    odd = F.udf(lambda i: i % 2 == 1, "boolean")
    col = (F.col("day") == F.lit(datetime.date(2024, 3, 2))) & (F.col("id") > 150) & odd(F.col("id")) & (
        F.variant_get("v", "$.user.id", "bigint") < 19
    )
    parts = column_conjuncts(spark, col)
    assert len(parts) == 4
    assert parts[2][1] is None and parts[2][2]  # the UDF has no SQL form, and says why
    kept = [sql for part, sql, _ in parts if sql is not None and same_predicate(spark, schema, part, sql)]
    assert len(kept) == 3
    tree = parse_sql(" AND ".join(f"({k})" for k in kept), schema=table_schema_of(schema))
    leaves = list(iter_predicates(tree))
    assert LiteralPredicate(Op.EQ, ColumnTerm("day", ShreddedType.parse("date")), 19784) in leaves  # 2024-03-02
    assert LiteralPredicate(Op.GT, ColumnTerm("id", ShreddedType.parse("int64")), 150) in leaves
    assert any(isinstance(p.term, VariantTerm) for p in leaves)


def test_sql_text_with_unknown_sub_expressions_is_sent_as_written_first(spark: Any, lake: Path) -> None:
    text = "day = '2024-03-02' AND length(name) > 1 AND variant_get(v, '$.user.id', 'bigint') = 3"
    attempts, why = pruning_attempts(text)
    assert why is None
    # The service resolves the text itself; a service without plain columns gets the Variant part.
    assert attempts == [text, "variant_get(v, '$.user.id', 'bigint') = 3"]
    tree = parse_sql(text, schema=table_schema_of(_schema(spark, lake)))
    assert any(isinstance(c, Unknown) for c in getattr(tree, "children", ()))


def test_doubled_quotes_in_literals_are_read_as_spark_reads_them(spark: Any) -> None:
    texts = ["'O''Brien'", "''''", '"x""y"', "'a' 'b'"]
    row = spark.sql("SELECT " + ", ".join(f"{t} AS c{i}" for i, t in enumerate(texts))).collect()[0]
    for i, text in enumerate(texts[:-1]):
        tree = parse_sql(f"variant_get(v, '$.s', 'string') = {text}")
        assert isinstance(tree, LiteralPredicate) and tree.literal == row[i], (text, tree, row[i])
    assert row[-1] == "ab"  # 'a' 'b' is a CONCAT (not a literal shredcat prunes on)

def test_non_utc_sessions_do_not_prune_on_timestamp_columns(spark: Any, lake: Path) -> None:
    ts = table_schema_of(_schema(spark, lake))
    attempts, why = pruning_attempts("ts < '2024-03-01 00:10:00'", utc=False, schema=ts)
    assert attempts == [] and why is not None and "timestamp column ts" in why
    attempts, why = pruning_attempts("day = '2024-03-02' AND id = 1", utc=False, schema=ts)
    assert attempts and why is None  # dates and integers do not depend on the zone


def test_pruned_reads_with_column_terms_return_the_rows_of_a_full_read(spark: Any, lake: Path, client: Any) -> None:
    from pyspark.sql import functions as F

    odd = F.udf(lambda i: i % 2 == 1, "boolean")
    full = spark.read.option("basePath", str(lake)).parquet(str(lake))
    cases: list[Any] = [
        "variant_get(v, '$.user.id', 'bigint') = 25 AND day >= '2024-03-01'",
        "variant_get(v, '$.user.id', 'bigint') < 5 AND length(name) > 1",
        (F.variant_get("v", "$.user.id", "bigint") == 33) & odd(F.col("id")) & (F.col("day") > F.lit("2024-03-01")),
        "day = '2024-03-04' OR id < 3",
    ]
    for predicate in cases:
        scan = plan_pruned(spark, "lake.events", predicate, client=client, base_path=str(lake))
        got = sorted(r.id for r in scan.read(spark, base_path=str(lake)).select("id").collect())
        expected = sorted(r.id for r in full.where(predicate).select("id").collect())
        assert got == expected, (str(predicate), scan.pruning_sql, scan.fallback)
        if not isinstance(predicate, str) or ("variant_get" in predicate and " OR " not in predicate):
            # A Variant conjunct prunes whatever the service makes of the other conjuncts.
            assert scan.candidates < FILES, (str(predicate), scan.pruning_sql, scan.fallback)


def test_a_table_schema_of_leaves_no_reference_cycle() -> None:
    """Its walk of nested structs was a closure calling itself: a cycle per call (the function
    and its cell), freed only by the garbage collector."""
    import gc

    from pyspark.sql.types import LongType, StringType, StructField, StructType, VariantType

    inner = StructType([StructField("b", LongType()), StructField("c", StructType([StructField("d", StringType())]))])
    struct = StructType([StructField("v", VariantType()), StructField("a", inner)])
    gc.disable()
    try:
        gc.collect()
        gc.set_debug(gc.DEBUG_SAVEALL)  # what the next collection frees is kept in gc.garbage
        ts = table_schema_of(struct)
        gc.collect()
        # Only shredcat's own objects: another thread of the process may leave garbage of its own.
        ours = sorted(getattr(o, "__qualname__", "") for o in gc.garbage if getattr(o, "__module__", "") == "service.spark.translate")
        assert ours == []
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    assert ts.variant_columns == ("v",) and list(ts.columns) == ["a.b", "a.c.d"]
