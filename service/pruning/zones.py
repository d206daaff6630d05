"""The session time zone a predicate is read in, as Spark's ``spark.sql.session.timeZone``.

Spark reads a timestamp literal without a zone (``TIMESTAMP '2024-03-01 10:00'``, a string
compared with a timestamp column, a date compared with one: its midnight) in the session time
zone. shredcat's default is UTC; a plan may name another zone (``session-time-zone``), and the
parsers then read such literals in it while they build the tree (:func:`reading_in`: the zone is
the parse's context, like :func:`decimal.localcontext`, rather than a parameter of every builder).

A wall-clock time is resolved as ``java.time.ZonedDateTime.of`` does (what Spark's casts use): in
a gap (spring forward) it moves forward by the gap's length, in an overlap (fall back) it takes
the earlier offset. Python's ``zoneinfo`` with ``fold=0`` gives the same instants: a gap time
read with the offset before the transition *is* the time moved forward by the gap.

Instants outside Python's years 1–9999 are moved by whole 400-year Gregorian cycles (146,097 days,
over which the calendar and its weekdays repeat) into years where the zone's rules give the same
offsets: far-past ones into years 2–401 (every zone on its local mean time), far-future ones into
2000–2399 (every zone repeating its last yearly rule, as Java's rules do).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo

from service.errors import BadInputError

MICROS_PER_SECOND = 1_000_000
_CYCLE_DAYS = 146_097
_CYCLE_MICROS = _CYCLE_DAYS * 86_400 * MICROS_PER_SECOND
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _at(year: int) -> int:
    return int((datetime(year, 1, 1, tzinfo=UTC) - _EPOCH) / timedelta(microseconds=1))


#: Python's datetimes (with a year of margin on each side for offsets): no shift needed inside.
_PY_LOW, _PY_HIGH = _at(2), _at(9998)
#: Where far-past instants are moved (local mean time in every zone), and far-future ones (every
#: zone's last yearly rule).
_PAST_BASE, _FUTURE_BASE = _at(2), _at(2000)

_UTC_NAMES = re.compile(r"(?i)(utc|gmt|ut|z|zulu|uct|universal|etc/(utc|gmt|uct|universal|zulu)|gmt0|etc/gmt[+-]?0)")
_OFFSET = re.compile(r"(?i)(?:utc|gmt|ut)?([+-])(\d{1,2})(?::?(\d{1,2}))?(?::?(\d{2}))?")

#: ``java.time.ZoneId.SHORT_IDS``: Spark resolves the session zone with ``ZoneId.of(id,
#: SHORT_IDS)``, so these three-letter names mean what Java says, ahead of the tz database (which
#: lacks most of them, and whose ``EST``/``MST``/``HST`` are not Java's fixed offsets).
JAVA_SHORT_IDS: dict[str, str] = {
    "ACT": "Australia/Darwin",
    "AET": "Australia/Sydney",
    "AGT": "America/Argentina/Buenos_Aires",
    "ART": "Africa/Cairo",
    "AST": "America/Anchorage",
    "BET": "America/Sao_Paulo",
    "BST": "Asia/Dhaka",
    "CAT": "Africa/Harare",
    "CNT": "America/St_Johns",
    "CST": "America/Chicago",
    "CTT": "Asia/Shanghai",
    "EAT": "Africa/Addis_Ababa",
    "ECT": "Europe/Paris",
    "IET": "America/Indiana/Indianapolis",
    "IST": "Asia/Kolkata",
    "JST": "Asia/Tokyo",
    "MIT": "Pacific/Apia",
    "NET": "Asia/Yerevan",
    "NST": "Pacific/Auckland",
    "PLT": "Asia/Karachi",
    "PNT": "America/Phoenix",
    "PRT": "America/Puerto_Rico",
    "PST": "America/Los_Angeles",
    "SST": "Pacific/Guadalcanal",
    "VST": "Asia/Ho_Chi_Minh",
    "EST": "-05:00",
    "MST": "-07:00",
    "HST": "-10:00",
}


@dataclass(frozen=True, slots=True)
class SessionZone:
    """A session time zone: its name as given, and whether it is UTC at every instant."""

    name: str
    zone: tzinfo

    @property
    def is_utc(self) -> bool:
        return self.zone is UTC

    def instant(self, wall_micros: int) -> int:
        """The instant (micros since the epoch) of a wall-clock time in this zone."""
        if self.is_utc:
            return wall_micros
        shift = _shift(wall_micros)
        w = wall_micros - shift
        local = datetime(1970, 1, 1) + timedelta(microseconds=w)
        aware = local.replace(tzinfo=self.zone, fold=0)
        return _micros(aware.astimezone(UTC)) + shift

    def wall(self, instant_micros: int) -> int:
        """The wall-clock time (micros since the local epoch) of an instant in this zone."""
        if self.is_utc:
            return instant_micros
        shift = _shift(instant_micros)
        t = _EPOCH + timedelta(microseconds=instant_micros - shift)
        local = t.astimezone(self.zone).replace(tzinfo=None)
        return int((local - datetime(1970, 1, 1)) / timedelta(microseconds=1)) + shift


def _shift(micros: int) -> int:
    """Whole 400-year cycles to take from ``micros`` to reach years the zone's rules cover."""
    if _PY_LOW <= micros < _PY_HIGH:
        return 0
    base = _PAST_BASE if micros < _PY_LOW else _FUTURE_BASE
    return (micros - base) // _CYCLE_MICROS * _CYCLE_MICROS


def _micros(t: datetime) -> int:
    return int((t - _EPOCH) / timedelta(microseconds=1))


SESSION_UTC = SessionZone("UTC", UTC)


def session_zone(name: str | None) -> SessionZone:
    """The zone of a ``session-time-zone`` value: a region (``America/New_York``), an offset
    (``+02:00``, ``UTC+2``, ``GMT-08:00:30``), one of Java's short IDs (``PST``, see
    :data:`JAVA_SHORT_IDS`), or UTC under any of its names; None is UTC. An unknown name is a
    :class:`~service.errors.BadInputError`."""
    if name is None:
        return SESSION_UTC
    text = name.strip()
    if not text or _UTC_NAMES.fullmatch(text):
        return SESSION_UTC
    # Java's alias map is case-sensitive, and is read before any other form.
    resolved = JAVA_SHORT_IDS.get(text, text)
    m = _OFFSET.fullmatch(resolved)
    if m:
        hours, minutes, secs = int(m.group(2)), int(m.group(3) or 0), int(m.group(4) or 0)
        # java.time.ZoneOffset's range is ±18:00; Spark also reads the ``+h:m`` forms.
        if hours > 18 or minutes > 59 or secs > 59 or (hours == 18 and minutes + secs > 0):
            raise BadInputError(f"invalid time zone offset {name!r}", details={"field": "session-time-zone"})
        seconds = (hours * 3600 + minutes * 60 + secs) * (-1 if m.group(1) == "-" else 1)
        return SESSION_UTC if seconds == 0 else SessionZone(text, timezone(timedelta(seconds=seconds)))
    try:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        zone = ZoneInfo(resolved)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise BadInputError(
            f"unknown time zone {name!r} (a region such as Europe/Paris, or an offset such as +02:00)",
            details={"field": "session-time-zone"},
        ) from None
    return SessionZone(text, zone)


_CURRENT: ContextVar[SessionZone] = ContextVar("shredcat_session_zone", default=SESSION_UTC)


def current_zone() -> SessionZone:
    """The zone literals are read in now (UTC outside :func:`reading_in`)."""
    return _CURRENT.get()


@contextmanager
def reading_in(zone: SessionZone) -> Iterator[SessionZone]:
    """Read literals in ``zone`` within the block (the parsers' entry points use it)."""
    token = _CURRENT.set(zone)
    try:
        yield zone
    finally:
        _CURRENT.reset(token)


class ZoneDependent(Exception):
    """A comparison whose answer depends on the session zone's transitions in a way no bound on
    the term can express (a timestamp_ntz term against an instant): the builders make it unknown."""


__all__ = [
    "JAVA_SHORT_IDS",
    "SESSION_UTC",
    "SessionZone",
    "ZoneDependent",
    "current_zone",
    "reading_in",
    "session_zone",
]
