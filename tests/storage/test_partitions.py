"""Hive partition values (pure): the expectations are Spark 4.3's own answers, measured with
``spark.read.parquet`` on one-file tables ``t/p=<raw>/part-0.parquet`` (UTC session); the same
layouts are checked against a live SparkSession in tests/spark/test_partitions_spark.py."""

from __future__ import annotations

import math
from decimal import Decimal

import pytest

from service.errors import InvalidPathError, InvalidStatsError
from service.stats.model import PartitionValue
from service.storage.partitions import (
    escape_path_name,
    infer_type,
    merge_types,
    partition_stats,
    partition_values,
    retype,
    unescape_path_name,
)
from service.values import Kind, ShreddedType, days_from_civil

I32 = ShreddedType(Kind.INT32)
I64 = ShreddedType(Kind.INT64)
F64 = ShreddedType(Kind.FLOAT64)
DATE = ShreddedType(Kind.DATE)
TSTZ = ShreddedType(Kind.TIMESTAMPTZ)
STR = ShreddedType(Kind.VARCHAR)


def dec(p: int) -> ShreddedType:
    return ShreddedType(Kind.DECIMAL, p, 0)


def ts(y: int, mo: int, d: int, h: int = 0, mi: int = 0, s: int = 0, us: int = 0) -> int:
    return (days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1_000_000 + us


# (directory text, Spark's type, Spark's value) - every row measured with pyspark 4.3.0.
SPARK_MEASURED = [
    ("1", I32, 1),
    ("007", I32, 7),
    ("+5", I32, 5),
    ("-5", I32, -5),
    ("-0", I32, 0),
    ("00", I32, 0),
    ("\u0663", I32, 3),  # ARABIC-INDIC DIGIT THREE: Java's parseInt takes any Unicode digit
    ("2147483648", I64, 2147483648),
    ("9223372036854775808", dec(19), Decimal("9223372036854775808")),
    ("-9223372036854775809", dec(19), Decimal("-9223372036854775809")),
    ("\u0663" * 20, dec(20), Decimal("3" * 20)),
    ("12345678901234567890123456789012345678", dec(38), Decimal("12345678901234567890123456789012345678")),
    ("1e5", dec(6), Decimal(100000)),
    ("1E+5", dec(6), Decimal(100000)),
    ("-1e5", dec(6), Decimal(-100000)),
    ("0e5", dec(6), Decimal(0)),
    ("1E0", dec(1), Decimal(1)),
    ("1.5E3", dec(4), Decimal(1500)),
    ("5.", dec(1), Decimal(5)),
    ("1e37", dec(38), Decimal(10) ** 37),
    ("1e38", F64, 1e38),
    ("99999999999999999999999999999999999999999", F64, 1e41),
    ("1e-5", F64, 1e-05),
    ("1.5", F64, 1.5),
    ("1.0", F64, 1.0),
    ("0.0", F64, 0.0),
    ("-0.0", F64, -0.0),
    (".5", F64, 0.5),
    ("1d", F64, 1.0),
    ("1f", F64, 1.0),
    ("0x1p3", F64, 8.0),
    (" 5", F64, 5.0),
    ("5 ", F64, 5.0),
    ("\t1", F64, 1.0),
    ("1e5 ", F64, 100000.0),
    ("Infinity", F64, math.inf),
    ("+Infinity", F64, math.inf),
    ("-Infinity", F64, -math.inf),
    ("1e400", F64, math.inf),
    ("-1e400", F64, -math.inf),
    ("2024-01-01", DATE, days_from_civil(2024, 1, 1)),
    ("0000-01-01", DATE, days_from_civil(0, 1, 1)),
    ("0001-01-01", DATE, days_from_civil(1, 1, 1)),
    ("2024-01-01 10%3A00%3A00", TSTZ, ts(2024, 1, 1, 10)),
    ("2024-01-01 10%3A00%3A00.1", TSTZ, ts(2024, 1, 1, 10, us=100000)),
    ("1980-01-01%2000%3A00%3A00", TSTZ, ts(1980, 1, 1)),
    ("2024-1-1", STR, "2024-1-1"),
    ("2024-02-30", STR, "2024-02-30"),
    ("10000-01-01", STR, "10000-01-01"),
    ("2024-01-01 10%3A00%3A00.123456", STR, "2024-01-01 10:00:00.123456"),
    ("2024-01-01 10%3A00%3A00.000", STR, "2024-01-01 10:00:00.000"),
    ("2024-01-01 10%3A00%3A00.", STR, "2024-01-01 10:00:00."),
    ("2024-01-01 24%3A00%3A00", STR, "2024-01-01 24:00:00"),
    ("2024-01-01 10%3A00%3A60", STR, "2024-01-01 10:00:60"),
    ("2024-01-01 1%3A00%3A00", STR, "2024-01-01 1:00:00"),
    ("2024-01-01T10%3A00%3A00", STR, "2024-01-01T10:00:00"),
    ("2024-01-01 10%3A00", STR, "2024-01-01 10:00"),
    ("2024-01-01 10%3A00%3A00Z", STR, "2024-01-01 10:00:00Z"),
    ("2024-01-01 10%3A00%3A00 ", STR, "2024-01-01 10:00:00 "),
    ("a b", STR, "a b"),
    ("a%2Fb", STR, "a/b"),
    ("%25", STR, "%"),
    ("%3D", STR, "="),
    ("%31", STR, "1"),  # the number is parsed before unescaping: a string in Spark
    ("1%2E5", STR, "1.5"),
    ("%C3%A9", STR, "\u00c3\u00a9"),  # each %XX is one char U+00XX
    ("%zz", STR, "%zz"),
    ("a%2", STR, "a%2"),
    ("true", STR, "true"),
    ("1_000", STR, "1_000"),
    ("\u0663.5", STR, "\u0663.5"),
    ("0x10", STR, "0x10"),
    ("NaNd", STR, "NaNd"),
]


@pytest.mark.parametrize(("raw", "spark_type", "spark_value"), SPARK_MEASURED, ids=[r[0] for r in SPARK_MEASURED])
def test_one_value_as_spark_infers_it(raw: str, spark_type: ShreddedType, spark_value: object) -> None:
    (pv,) = partition_values(f"/lake/t/p={raw}/part-0.parquet", "/lake/t")
    assert pv.column == "p"
    assert pv.value_type == spark_type
    assert infer_type(raw) == spark_type
    assert pv.value == spark_value
    assert type(pv.value) is type(spark_value)
    if isinstance(spark_value, float) and spark_value == 0:
        assert math.copysign(1, pv.value) == math.copysign(1, spark_value)  # type: ignore[arg-type]


def test_nan_and_null() -> None:
    (nan,) = partition_values("/t/x=NaN/f.parquet")
    assert nan.value_type == F64 and isinstance(nan.value, float) and math.isnan(nan.value)
    (null,) = partition_values("/t/x=__HIVE_DEFAULT_PARTITION__/f.parquet")
    assert null.value is None and null.raw is None
    assert infer_type("__HIVE_DEFAULT_PARTITION__") is None


# (values of one column, Spark's table type, Spark's values) - measured as above.
MERGES = [
    (["1", "2147483648"], I64, [1, 2147483648]),
    (["1", "1.5"], F64, [1.0, 1.5]),
    (["9223372036854775808", "1.5"], STR, ["9223372036854775808", "1.5"]),
    (["1", "9223372036854775808"], dec(19), [Decimal(1), Decimal("9223372036854775808")]),
    (["2147483648", "9223372036854775808"], dec(20), [Decimal(2147483648), Decimal("9223372036854775808")]),
    (["2024-01-01", "2024-01-01 10%3A00%3A00"], TSTZ, [ts(2024, 1, 1), ts(2024, 1, 1, 10)]),
    (["1", "2024-01-01"], STR, ["1", "2024-01-01"]),
    (["1", "abc"], STR, ["1", "abc"]),
    (["__HIVE_DEFAULT_PARTITION__", "1"], I32, [None, 1]),
    (["1.5", "2024-01-01"], STR, ["1.5", "2024-01-01"]),
    (["true", "false"], STR, ["true", "false"]),
    (["2147483648", "1.5"], STR, ["2147483648", "1.5"]),  # bigint + double: string (PartitioningUtils)
]


@pytest.mark.parametrize(("raws", "spark_type", "values"), MERGES, ids=["+".join(m[0]) for m in MERGES])
def test_column_type_and_values_as_spark(raws: list[str], spark_type: ShreddedType, values: list[object]) -> None:
    pvs = [partition_values(f"/t/p={r}/f.parquet")[0] for r in raws]
    merged = merge_types(None if pv.raw is None else pv.value_type for pv in pvs)
    assert merged == spark_type
    assert [retype(pv, merged).value for pv in pvs] == values


def test_all_null_column_is_void() -> None:
    pv = partition_values("/t/p=__HIVE_DEFAULT_PARTITION__/f.parquet")[0]
    assert merge_types([None, None]) is None
    assert retype(pv, I32).value is None


def test_merge_rules_beyond_inference() -> None:
    assert merge_types([I32, I64, I32]) == I64
    assert merge_types([dec(25), I32]) == dec(25)
    assert merge_types([DATE, DATE]) == DATE
    assert merge_types([TSTZ, DATE]) == TSTZ
    assert merge_types([F64, dec(3)]) == STR
    assert merge_types([I32, F64]) == F64
    assert merge_types([DATE, I32]) == STR
    assert merge_types([]) is None


def test_which_directories_count() -> None:
    assert [p.column for p in partition_values("/lake/t/a=1/b=x/part.parquet")] == ["a", "b"]
    # Spark walks up from the file: a segment without '=' ends the run once one was found...
    assert [p.column for p in partition_values("/lake/t/a=1/sub/b=2/part.parquet", "/lake/t")] == ["b"]
    # ...and is skipped before the first one.
    assert [p.column for p in partition_values("/lake/t/a=1/sub/part.parquet", "/lake/t")] == ["a"]
    # Nothing above the base counts.
    assert partition_values("/lake/x=1/t/part.parquet", "/lake/x=1/t") == ()
    assert partition_values("/lake/t/part.parquet") == ()
    # Without a base, only the run directly above the file.
    assert partition_values("/lake/t/a=1/sub/part.parquet") == ()
    assert [p.column for p in partition_values("/x=0/t/a=1/b=2/part.parquet")] == ["a", "b"]
    assert partition_values("/lake/t/_temporary/a=1/part.parquet") == ()
    # Object-store URIs: the bucket is not a directory of the path.
    (pv,) = partition_values("s3://bkt/lake/t/d=2024-03-01/part.parquet", "s3://bkt/lake/t/")
    assert (pv.column, pv.value_type, pv.value) == ("d", DATE, days_from_civil(2024, 3, 1))
    # Names are unescaped too.
    assert partition_values("/t/a%3Db=1/f.parquet")[0].column == "a=b"


def test_bad_layouts_are_typed_errors() -> None:
    with pytest.raises(InvalidPathError):
        partition_values("/t/a=/f.parquet")
    with pytest.raises(InvalidPathError):
        partition_values("/t/=1/f.parquet")
    with pytest.raises(InvalidPathError):
        partition_values("/t/a=1/A=2/f.parquet")
    with pytest.raises(InvalidPathError):
        partition_values("/elsewhere/a=1/f.parquet", "/lake/t")
    with pytest.raises(InvalidPathError):
        partition_values("s3://other/lake/t/a=1/f.parquet", "s3://bkt/lake/t")


def test_retype_to_declared_types() -> None:
    pv = partition_values("/t/p=abc/f.parquet")[0]
    with pytest.raises(InvalidStatsError, match="abc"):
        retype(pv, I32)  # Spark: INVALID_PARTITION_VALUE
    d = partition_values("/t/p=2024-01-01/f.parquet")[0]
    assert retype(d, TSTZ).value == ts(2024, 1, 1)  # Spark: declared timestamp, midnight
    assert retype(d, STR).value == "2024-01-01"
    n = partition_values("/t/p=300/f.parquet")[0]
    assert retype(n, ShreddedType(Kind.INT8)).value == 44  # Integer.parseInt(v).toByte wraps
    assert retype(n, ShreddedType(Kind.DECIMAL, 5, 2)).value == Decimal("300.00")
    with pytest.raises(InvalidStatsError):
        retype(n, ShreddedType(Kind.DECIMAL, 3, 1))
    with pytest.raises(InvalidStatsError):
        retype(partition_values("/t/p=1.25/f.parquet")[0], ShreddedType(Kind.DECIMAL, 5, 1))
    assert retype(partition_values("/t/p=TRUE/f.parquet")[0], ShreddedType(Kind.BOOLEAN)).value is True
    with pytest.raises(InvalidStatsError):
        retype(d, ShreddedType(Kind.UUID))


def test_escaping_round_trip() -> None:
    for text in ["a b", "a/b", "%", "=", "é:x", "x?y#z", "\x01"]:
        assert unescape_path_name(escape_path_name(text)) == text
    assert escape_path_name("é:x") == "é%3Ax"


def test_partition_stats() -> None:
    pv = partition_values("/t/p=7/f.parquet")[0]
    cs = partition_stats(pv, 10)
    assert cs.ducklake_row() == {
        "column_size_bytes": 0,
        "value_count": 10,
        "null_count": 0,
        "min_value": "7",
        "max_value": "7",
        "contains_nan": None,
        "extra_stats": None,
    }
    null = partition_stats(retype(partition_values("/t/p=__HIVE_DEFAULT_PARTITION__/f.parquet")[0], I32), 4)
    assert (null.value_count, null.null_count, null.min_value, null.max_value) == (0, 4, None, None)
    nan = partition_stats(partition_values("/t/p=NaN/f.parquet")[0], 3)
    assert (nan.min_value, nan.max_value, nan.contains_nan, nan.value_count) == (None, None, True, 3)
    f = partition_stats(partition_values("/t/p=1.5/f.parquet")[0], 3)
    assert f.contains_nan is False and f.ducklake_row()["min_value"] == "1.5"
    assert isinstance(pv, PartitionValue)


def test_duckdb_partition_by_layout() -> None:
    """Directories exactly as DuckDB 1.5.5 writes them (``COPY ... (PARTITION_BY (s, d, ts))``):
    it escapes the space too, and writes NULL as Hive's default partition."""
    base = "/data/ddpart"
    files = [
        "s=%25%3D/d=2024-01-03/ts=__HIVE_DEFAULT_PARTITION__/data_0.parquet",
        "s=__HIVE_DEFAULT_PARTITION__/d=2024-01-02/ts=2024-01-01%2010%3A00%3A00.5/data_0.parquet",
        "s=a%20b/d=2024-01-01/ts=2024-01-01%2010%3A00%3A00/data_0.parquet",
        "s=a%2Fb/d=__HIVE_DEFAULT_PARTITION__/ts=__HIVE_DEFAULT_PARTITION__/data_0.parquet",
    ]
    pvs = [partition_values(f"{base}/{f}", base) for f in files]
    assert [tuple(p.column for p in row) for row in pvs] == [("s", "d", "ts")] * 4
    assert [row[0].raw for row in pvs] == ["%=", None, "a b", "a/b"]
    assert merge_types(None if row[1].raw is None else row[1].value_type for row in pvs) == DATE
    ts_type = merge_types(None if row[2].raw is None else row[2].value_type for row in pvs)
    assert ts_type == TSTZ
    assert [retype(row[2], TSTZ).value for row in pvs] == [
        None,
        ts(2024, 1, 1, 10, us=500000),
        ts(2024, 1, 1, 10),
        None,
    ]
