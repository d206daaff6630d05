"""The session time zone: names, Java's resolution of wall times, and what it changes in a parsed
predicate (tests/spark/test_session_zone_spark.py checks the same instants against Spark)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest

from service.errors import BadInputError
from service.pruning.expressions import LiteralPredicate, SetPredicate, Unknown
from service.pruning.literals import parse_timestamp_text
from service.pruning.parse_sql import parse_sql
from service.pruning.schema import ColumnInfo, TableSchema
from service.pruning.zones import SESSION_UTC, current_zone, reading_in, session_zone
from service.values import ShreddedType

NY = session_zone("America/New_York")
SCHEMA = TableSchema(
    ("v",),
    {
        "ts": ColumnInfo("ts", ShreddedType.parse("timestamptz")),
        "ntz": ColumnInfo("ntz", ShreddedType.parse("timestamp")),
        "d": ColumnInfo("d", ShreddedType.parse("date")),
        "pts": ColumnInfo("pts", ShreddedType.parse("timestamptz"), partition=True),
        "pd": ColumnInfo("pd", ShreddedType.parse("date"), partition=True),
    },
)


def _wall(text: str) -> int:
    return int((datetime.fromisoformat(text) - datetime(1970, 1, 1)) / timedelta(microseconds=1))


def _in(zone: Any, sql: str) -> Any:
    with reading_in(zone):
        return parse_sql(sql, schema=SCHEMA)


def test_zone_names() -> None:
    for utc in (None, "", "UTC", "utc", "UT", "Z", "GMT", "Etc/UTC", "+00:00", "UTC+0", "UT+0", "-00"):
        assert session_zone(utc) is SESSION_UTC, utc
    assert session_zone("+05:30").instant(0) == -(5 * 3600 + 1800) * 1_000_000
    assert session_zone("GMT-8").instant(0) == 8 * 3600 * 1_000_000
    assert session_zone("UT-03:30:15").instant(0) == (3 * 3600 + 1815) * 1_000_000
    assert session_zone("+5:30").instant(0) == session_zone("+05:30").instant(0)  # Spark's +h:mm
    # Java's short IDs (ZoneId.SHORT_IDS), which Spark reads ahead of the tz database.
    july = _wall("2024-07-01T12:00:00")
    assert session_zone("PST").instant(july) - july == 7 * 3600 * 1_000_000  # America/Los_Angeles, PDT
    assert session_zone("ECT").instant(july) - july == -2 * 3600 * 1_000_000  # Europe/Paris, CEST
    assert session_zone("EST").instant(july) - july == 5 * 3600 * 1_000_000  # fixed -05:00, no DST
    old = _wall("1900-01-01T00:00:00")
    assert session_zone("EST").instant(old) - old == 5 * 3600 * 1_000_000  # fixed, not a local mean time
    for bad in ("Mars/Olympus", "+19:00", "+05:61", "+18:00:01", "../../etc/passwd", "America/", "pst"):
        with pytest.raises(BadInputError) as e:
            session_zone(bad)
        assert e.value.details["field"] == "session-time-zone"


def test_wall_times_resolve_as_java_does() -> None:
    # Spark's own values (tests/spark/test_session_zone_spark.py checks them live).
    assert NY.instant(_wall("2024-03-10T02:30:00")) == 1710055800000000  # the gap: 03:30 EDT
    assert NY.instant(_wall("2024-03-10T03:00:00")) == 1710054000000000
    assert NY.instant(_wall("2024-11-03T01:30:00")) == 1730611800000000  # the overlap: EDT, the earlier
    assert NY.instant(_wall("1800-06-01T12:00:00")) - _wall("1800-06-01T12:00:00") == 17762 * 1_000_000  # LMT -4:56:02
    for w in ("2024-07-01T12:00:00", "1950-01-01T00:00:00", "2300-12-01T08:00:00", "0005-03-01T00:00:00"):
        assert NY.wall(NY.instant(_wall(w))) == _wall(w), w
    # Far beyond Python's years: whole 400-year cycles keep the offsets.
    cycle = 146_097 * 86_400 * 1_000_000
    july = _wall("2024-07-01T12:00:00")
    assert NY.instant(july + 50 * cycle) - (july + 50 * cycle) == NY.instant(july) - july
    assert NY.instant(-50 * cycle) - (-50 * cycle) == 17762 * 1_000_000


def test_literals_are_read_in_the_zone() -> None:
    assert current_zone() is SESSION_UTC
    with reading_in(NY):
        assert parse_timestamp_text("2024-01-01 00:00:00", ntz=False).micros == _wall("2024-01-01T05:00:00")
        assert parse_timestamp_text("2024-01-01 00:00:00+01:00", ntz=False).micros == _wall("2023-12-31T23:00:00")
        assert parse_timestamp_text("2024-01-01 00:00:00", ntz=True).micros == _wall("2024-01-01T00:00:00")
    assert current_zone() is SESSION_UTC
    gt = _in(NY, "ts > TIMESTAMP '2024-01-01 00:00:00'")
    assert isinstance(gt, LiteralPredicate) and (gt.op.value, gt.term.name, gt.literal) == ("gt", "ts", _wall("2024-01-01T05:00:00"))
    # A string and a date against an instant: in the zone too.
    assert _in(NY, "ts = '2024-01-01 00:00:00'").literal == _wall("2024-01-01T05:00:00")
    assert _in(NY, "ts >= DATE '2024-01-01'").literal == _wall("2024-01-01T05:00:00")
    # An NTZ literal against an instant: one value, cast in the zone.
    assert _in(NY, "ts = TIMESTAMP_NTZ '2024-01-01 00:00:00'").literal == _wall("2024-01-01T05:00:00")


def test_dates_against_instants() -> None:
    d10 = (datetime(2024, 3, 10) - datetime(1970, 1, 1)).days
    assert _in(NY, "d = TIMESTAMP '2024-03-10 00:00:00'").literal == d10
    assert _in(NY, "d = TIMESTAMP '2024-03-10 05:00:00+00:00'").literal == d10  # NY midnight, said in UTC
    none = _in(NY, "d = TIMESTAMP '2024-03-10 00:00:00+00:00'")
    assert isinstance(none, SetPredicate) and none.literals == ()
    lt = _in(NY, "d < TIMESTAMP '2024-03-10 12:00:00'")
    assert (lt.op.value, lt.literal) == ("lt_eq", d10)
    # In UTC the same text is another instant: midnight UTC is 19:00 the day before in New York.
    assert _in(SESSION_UTC, "d = TIMESTAMP '2024-03-10 00:00:00'").literal == d10


def test_what_hinges_on_transitions_is_unknown() -> None:
    ntz = "ntz < TIMESTAMP '2024-03-10 03:00:00'"
    assert isinstance(_in(NY, ntz), Unknown)
    assert _in(NY, ntz).text == "ntz < TIMESTAMP '2024-03-10 07:00:00+00:00'"
    assert isinstance(_in(SESSION_UTC, ntz), LiteralPredicate)
    assert isinstance(_in(NY, "ntz IN (TIMESTAMP '2024-03-10 03:00:00', TIMESTAMP_NTZ '2024-03-10 01:00:00')"), Unknown)
    assert isinstance(_in(NY, "ntz = TIMESTAMP_NTZ '2024-03-10 01:00:00'"), LiteralPredicate)
    # A timestamp partition's value is the path's text, which Spark reads in the zone.
    assert isinstance(_in(NY, "pts = TIMESTAMP '2024-03-10 00:00:00'"), Unknown)
    both = _in(NY, "pts = TIMESTAMP '2024-03-10 00:00:00' AND ts > DATE '2024-03-09'")
    assert [type(c).__name__ for c in both.children] == ["Unknown", "LiteralPredicate"]  # AND keeps ts's pruning
    assert isinstance(_in(SESSION_UTC, "pts = TIMESTAMP '2024-03-10 00:00:00'"), LiteralPredicate)
    assert isinstance(_in(NY, "pd = TIMESTAMP '2024-03-10 00:00:00'"), LiteralPredicate)
    assert _in(NY, "pts IS NULL").op.value == "is_null"
