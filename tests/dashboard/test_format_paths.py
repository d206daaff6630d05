"""File names shortened from the middle (:func:`service.dashboard.format.path_parts`): the part
number and the name's end always show, the job uuid every file of a Spark write shares goes first."""

from __future__ import annotations

from service.dashboard.format import NAME_SHOWN, PathParts, path_parts

BASE = "/lake/events/"
SPARK = "part-00017-3f1c9a7e-5b2d-4c1e-9f0a-1b2c3d4e5f60-c000.snappy.parquet"


def test_a_spark_name_keeps_directory_part_number_and_end() -> None:
    p = path_parts(BASE + "event_date=2024-03-01/hour=07/" + SPARK, BASE)
    assert p == PathParts("event_date=2024-03-01/hour=07/", "part-00017", "-3f1c9a7e-5b2d-4c1e-9f0a-1b2c3d4e5f60-c000", ".snappy.parquet")
    assert "".join(p) == "event_date=2024-03-01/hour=07/" + SPARK
    dotted = "part-00003-3f1c9a7e-5b2d-4c1e-9f0a-000000000003.c000.zstd.parquet"
    assert path_parts("/x/" + dotted, "/x/") == PathParts("", "part-00003", "-3f1c9a7e-5b2d-4c1e-9f0a-000000000003", ".c000.zstd.parquet")


def test_short_and_other_names() -> None:
    assert path_parts("/lake/events/part-0.parquet", BASE) == PathParts("", "part-0.parquet", "", "")
    assert path_parts("/elsewhere/f.parquet", BASE) == PathParts("/elsewhere/", "f.parquet", "", "")
    long = "events_20240301_a_long_descriptive_name_0001.parquet"
    assert len(long) > NAME_SHOWN
    p = path_parts("/d/" + long, "/d/")
    assert (p.front, p.end) == ("events_202", ".parquet") and "".join(p) == long
    no_dot = "x" * 40
    p = path_parts(no_dot, "")
    assert len(p.end) == 16 and "".join(p) == no_dot
    # A long extension: the last characters, not the whole tail after the first dot.
    odd = "name.with.many.dots.in.it.and.more.parquet"
    assert "".join(path_parts(odd, "")) == odd and len(path_parts(odd, "").end) == 16
