"""Proleptic Gregorian calendar arithmetic for any year.

Python's ``date`` stops at year 1; DuckDB dates go far into BC (and Spark accepts astronomical
years), so day numbers are converted with H. Hinnant's ``days_from_civil``/``civil_from_days``
algorithms, exact for every integer. Years are astronomical: year 0 is 1 BC.
"""

from __future__ import annotations

from datetime import date

MICROS_PER_DAY = 86_400_000_000
#: ``date.toordinal()`` of 1970-01-01: ``date.fromordinal(EPOCH_ORDINAL + days)`` is the fast path
#: for days inside Python's date range.
EPOCH_ORDINAL = date(1970, 1, 1).toordinal()


def days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 of (y, m, d); m and d are not checked (see :func:`civil_from_days`)."""
    y -= 1 if m <= 2 else 0
    era = y // 400
    yoe = y - era * 400
    mp = m + (-3 if m > 2 else 9)
    doy = (153 * mp + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def civil_from_days(z: int) -> tuple[int, int, int]:
    """(y, m, d) of days since 1970-01-01. A date (y, m, d) is valid iff
    ``civil_from_days(days_from_civil(y, m, d)) == (y, m, d)`` with 1 <= m <= 12, 1 <= d <= 31."""
    z += 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    y = yoe + era * 400
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    d = doy - (153 * mp + 2) // 5 + 1
    m = mp + 3 if mp < 10 else mp - 9
    return (y + (1 if m <= 2 else 0), m, d)


def valid_ymd(y: int, m: int, d: int) -> bool:
    return 1 <= m <= 12 and 1 <= d <= 31 and civil_from_days(days_from_civil(y, m, d)) == (y, m, d)
