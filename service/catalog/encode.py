"""Turning validated FileStats into catalog rows, fast (10^4 stats rows per commit batch).

The per-type functions are specialised once per :class:`ShreddedType` (cached) and give exactly the
results of the general functions in :mod:`service.stats.types` (``check_bound``, ``format_bound``,
``index_key``), which remain the reference (the tests compare them): common types skip the
dispatch, the others call the general function. Everything here is pure and runs before the
table lock is taken.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import cache, partial
from typing import Any

from service.stats.merge import GlobalPathStats, GlobalStats
from service.stats.model import FileStats
from service.stats.types import (
    INT64_MAX,
    INT64_MIN,
    INTEGER_RANGES,
    Bound,
    Kind,
    ShreddedType,
    check_bound,
    family,
    format_bound,
    index_key,
)

#: (min_value, max_value, min_num, max_num, min_real, max_real, min_bin, max_bin)
RowBounds = tuple[
    str | None, str | None, int | None, int | None, float | None, float | None, bytes | None, bytes | None
]

_TIMESTAMP_KINDS = (Kind.TIMESTAMP, Kind.TIMESTAMPTZ, Kind.TIMESTAMP_NS, Kind.TIMESTAMPTZ_NS)


@cache
def bound_checker(t: ShreddedType) -> Callable[[Bound], Bound]:
    """``check_bound`` specialised for ``t`` (same result, same errors; a valid bound already in
    normal form is returned as the same object)."""
    k = t.kind
    if k in INTEGER_RANGES:
        lo, hi = INTEGER_RANGES[k]

        def check_int(v: Bound) -> Bound:
            if type(v) is int and lo <= v <= hi:
                return v
            return check_bound(t, v)

        return check_int
    if k in _TIMESTAMP_KINDS:

        def check_ts(v: Bound) -> Bound:
            if type(v) is int and INT64_MIN <= v <= INT64_MAX:
                return v
            return check_bound(t, v)

        return check_ts
    if k is Kind.FLOAT64:

        def check_f64(v: Bound) -> Bound:
            if type(v) is float and v == v:
                return v
            return check_bound(t, v)

        return check_f64
    if k in (Kind.VARCHAR, Kind.BLOB, Kind.UUID):
        cls = {Kind.VARCHAR: str, Kind.BLOB: bytes, Kind.UUID: uuid.UUID}[k]

        def check_type(v: Bound) -> Bound:
            if type(v) is cls:
                return v
            return check_bound(t, v)

        return check_type
    if k is Kind.DECIMAL:
        exp = -(t.scale or 0)
        digits = t.precision or 0

        def check_dec(v: Bound) -> Bound:
            if type(v) is Decimal:
                tup = v.as_tuple()
                if tup.exponent == exp and len(tup.digits) <= digits:
                    return v
            return check_bound(t, v)

        return check_dec
    return partial(check_bound, t)


_EPOCH = datetime(1970, 1, 1)
_EPOCH_ORDINAL = _EPOCH.toordinal()
#: Days / microseconds of 0001-01-01 and 9999-12-31 23:59:59.999999: Python's datetime range.
_MIN_DAYS, _MAX_DAYS = (
    date(1, 1, 1).toordinal() - _EPOCH_ORDINAL,
    date(9999, 12, 31).toordinal() - _EPOCH_ORDINAL,
)
_MIN_US, _MAX_US = _MIN_DAYS * 86_400_000_000, (_MAX_DAYS + 1) * 86_400_000_000 - 1


def _fmt_date(t: ShreddedType, v: int) -> str:
    if _MIN_DAYS <= v <= _MAX_DAYS:
        return date.fromordinal(_EPOCH_ORDINAL + v).isoformat()
    return format_bound(t, v)


def _fmt_timestamp_us(t: ShreddedType, suffix: str, v: int) -> str:
    if _MIN_US <= v <= _MAX_US:
        s = (_EPOCH + timedelta(microseconds=v)).isoformat(" ")
        if len(s) > 19:
            s = s.rstrip("0")
        return s + suffix
    return format_bound(t, v)


def _fmt_decimal(t: ShreddedType, exp: int, no_leading_zero: bool, v: Decimal) -> str:
    if v.as_tuple().exponent != exp:
        return format_bound(t, v)
    s = f"{v:f}"
    if no_leading_zero:
        s = s.replace("0.", ".", 1)
    return s


def _fmt_f64(v: float) -> str:
    if v == math.inf:
        return "inf"
    if v == -math.inf:
        return "-inf"
    return repr(v)


@cache
def bounds_encoder(t: ShreddedType) -> Callable[[Bound | None, Bound | None], RowBounds]:
    """(min, max) -> DuckLake strings and typed keys of one stats row."""
    k = t.kind
    fam = family(t)
    fmt: Callable[[Any], str]
    if k in INTEGER_RANGES or k is Kind.VARCHAR:
        fmt = str
    elif k is Kind.FLOAT64:
        fmt = _fmt_f64
    elif k is Kind.DATE:
        fmt = partial(_fmt_date, t)
    elif k in (Kind.TIMESTAMP, Kind.TIMESTAMPTZ):
        fmt = partial(_fmt_timestamp_us, t, "+00" if k is Kind.TIMESTAMPTZ else "")
    elif k is Kind.DECIMAL:
        assert t.scale is not None
        fmt = partial(_fmt_decimal, t, -t.scale, t.scale > 0 and t.precision == t.scale)
    elif k is Kind.UUID:
        fmt = str
    else:
        fmt = partial(format_bound, t)

    if k in INTEGER_RANGES or k in _TIMESTAMP_KINDS or k in (Kind.DATE, Kind.TIME):
        # The bound is its own BIGINT key.
        def enc_num(lo: Bound | None, hi: Bound | None) -> RowBounds:
            return (
                None if lo is None else fmt(lo),
                None if hi is None else fmt(hi),
                lo,  # type: ignore[return-value]
                hi,  # type: ignore[return-value]
                None,
                None,
                None,
                None,
            )

        return enc_num
    if fam == "real":

        def enc_real(lo: Bound | None, hi: Bound | None) -> RowBounds:
            return (
                None if lo is None else fmt(lo),
                None if hi is None else fmt(hi),
                None,
                None,
                lo,  # type: ignore[return-value]
                hi,  # type: ignore[return-value]
                None,
                None,
            )

        return enc_real
    if k is Kind.VARCHAR:

        def enc_str(lo: Bound | None, hi: Bound | None) -> RowBounds:
            return (
                lo,  # type: ignore[return-value]
                hi,  # type: ignore[return-value]
                None,
                None,
                None,
                None,
                None if lo is None else lo.encode("utf-8"),  # type: ignore[union-attr]
                None if hi is None else hi.encode("utf-8"),  # type: ignore[union-attr]
            )

        return enc_str

    def enc_any(lo: Bound | None, hi: Bound | None) -> RowBounds:
        a = index_key(t, lo)
        b = index_key(t, hi)
        return (
            None if lo is None else fmt(lo),
            None if hi is None else fmt(hi),
            a.num,
            b.num,
            a.real,
            b.real,
            a.bin,
            b.bin,
        )

    return enc_any


# --- a commit batch, prepared outside the transaction -----------------------------------------

PathTypeKey = tuple[str, str, str]
"""(column name, variant_path, shredded_type name): one entry of the path dictionary."""

#: Per-path live counters kept in ``shredcat_variant_path``, in this order (see models.VariantPath).
COUNTERS = (
    "live_file_count",
    "live_value_count",
    "live_null_count",
    "live_size_bytes",
    "live_nan_files",
    "live_nan_unknown_files",
    "live_min_unknown_files",
    "live_max_unknown_files",
    "live_min_keyless_files",
    "live_max_keyless_files",
    "live_min_negzero_files",
    "live_max_poszero_files",
)

Width = tuple[int | None, float | None]
"""(max_width_num, max_width_real) of a path; None = unbounded."""


def row_width(
    min_num: int | None, max_num: int | None, min_real: float | None, max_real: float | None
) -> Width:
    """Width of one row's [min, max] in its key family: 0 when a bound is missing (nothing to
    probe), None when it overflows. Floats are rounded up so the width is never too small."""
    wn: int | None = 0
    wr: float | None = 0.0
    if min_num is not None and max_num is not None:
        d = max_num - min_num
        wn = d if d <= INT64_MAX else None
    if min_real is not None and max_real is not None and min_real != max_real:
        d = max_real - min_real
        wr = math.nextafter(d, math.inf) if math.isfinite(d) else None
        if wr is not None and not math.isfinite(wr):
            wr = None
    return wn, wr


def max_width(a: Width, b: Width) -> Width:
    an, ar = a
    bn, br = b
    return (
        None if an is None or bn is None else max(an, bn),
        None if ar is None or br is None else max(ar, br),
    )


@dataclass(slots=True)
class PreparedBatch:
    """Validated files with their stats rows encoded, per-path counter deltas, widths, and the
    batch's own global stats, all computed before the table lock is taken."""

    files: list[FileStats]
    #: Per file, per path: (column, variant_path, shredded_type, column_size_bytes, value_count,
    #: null_count, min_value, max_value, contains_nan, extra_stats, min_num, max_num, min_real,
    #: max_real, min_bin, max_bin).
    rows: list[list[tuple[Any, ...]]]
    counters: dict[PathTypeKey, list[int]] = field(default_factory=dict)
    widths: dict[PathTypeKey, Width] = field(default_factory=dict)
    aggregate: GlobalStats = field(default_factory=GlobalStats)

    def subset(self, keep: Sequence[int]) -> PreparedBatch:
        """The same batch restricted to the files at these indexes."""
        return prepare_batch([self.files[i] for i in keep])


@cache
def _type_info(t: ShreddedType) -> tuple[Callable[[Bound | None, Bound | None], RowBounds], str]:
    return bounds_encoder(t), t.name


_MISSING: Any = object()


def prepare_batch(files: Sequence[FileStats]) -> PreparedBatch:
    """Encode validated files (:func:`service.catalog.validate.validate_batch`) for insertion, and
    compute in the same pass the per-path counter deltas (the same definitions as
    ``repository._removed_counters`` in SQL), the widths, and the batch's own global stats (equal
    to :func:`service.stats.merge.recompute` of the files; the tests compare the two)."""
    rows: list[list[tuple[Any, ...]]] = []
    counters: dict[PathTypeKey, list[int]] = {}
    widths: dict[PathTypeKey, Width] = {}
    lows: dict[PathTypeKey, Any] = {}
    highs: dict[PathTypeKey, Any] = {}
    n_counters = len(COUNTERS)
    # Per ShreddedType object: hashing the frozen dataclass for every row would cost more.
    encoders: dict[int, tuple[Callable[[Bound | None, Bound | None], RowBounds], str]] = {}
    for f in files:
        out = []
        for ps in f.paths:
            t = ps.shredded_type
            cached = encoders.get(id(t))
            if cached is None:
                cached = encoders[id(t)] = _type_info(t)
            enc, tname = cached
            lo, hi = ps.min_value, ps.max_value
            smin, smax, min_num, max_num, min_real, max_real, min_bin, max_bin = enc(lo, hi)
            col, vp, vc, nan = ps.column, ps.variant_path, ps.value_count, ps.contains_nan
            out.append(
                (
                    col, vp, tname, ps.column_size_bytes, vc, ps.null_count, smin, smax, nan, ps.extra_stats,
                    min_num, max_num, min_real, max_real, min_bin, max_bin,
                )
            )  # fmt: skip
            key = (col, vp, tname)
            c = counters.get(key)
            if c is None:
                c = counters[key] = [0] * n_counters
                widths[key] = (0, 0.0)
            c[0] += 1
            c[1] += vc
            c[2] += ps.null_count
            c[3] += ps.column_size_bytes
            if nan is True:
                c[4] += 1
            elif nan is None:
                c[5] += 1
            if vc > 0:
                if smin is None:
                    c[6] += 1
                else:
                    if min_num is None and min_real is None and min_bin is None:
                        c[8] += 1
                    elif min_real == 0 and smin == "-0.0":
                        c[10] += 1
                    cur = lows.get(key, _MISSING)
                    # Typed comparison; of -0.0 and 0.0 the minimum keeps -0.0 (as merge._pick).
                    if cur is _MISSING or lo < cur or (min_real == 0 and lo == cur and smin == "-0.0"):
                        lows[key] = lo
                if smax is None:
                    c[7] += 1
                else:
                    if max_num is None and max_real is None and max_bin is None:
                        c[9] += 1
                    elif max_real == 0 and smax == "0.0":
                        c[11] += 1
                    cur = highs.get(key, _MISSING)
                    if cur is _MISSING or hi > cur or (max_real == 0 and hi == cur and smax == "0.0"):
                        highs[key] = hi
            if min_num is not None and max_num is not None:
                w = widths[key]
                if w[0] is not None:
                    d = max_num - min_num
                    if d > w[0]:
                        widths[key] = (d if d <= INT64_MAX else None, w[1])
            elif min_real is not None and max_real is not None:
                widths[key] = max_width(widths[key], row_width(None, None, min_real, max_real))
        rows.append(out)
    return PreparedBatch(list(files), rows, counters, widths, _aggregate(files, counters, lows, highs))


def _aggregate(
    files: Sequence[FileStats],
    counters: dict[PathTypeKey, list[int]],
    lows: dict[PathTypeKey, Any],
    highs: dict[PathTypeKey, Any],
) -> GlobalStats:
    """The batch's global stats from the per-path counters: a path is kept when every file has it
    with this type (a file reports a path once, so its count equals the number of files)."""
    n = len(files)
    if n == 0:
        return GlobalStats()
    paths: dict[tuple[str, str], GlobalPathStats] = {}
    for key, c in counters.items():
        if c[0] != n:
            continue
        col, vp, _tname = key
        t = next(ps.shredded_type for ps in files[0].paths if ps.column == col and ps.variant_path == vp)
        has = c[1] > 0
        paths[(col, vp)] = GlobalPathStats(
            column=col,
            variant_path=vp,
            shredded_type=t,
            value_count=c[1],
            null_count=c[2],
            column_size_bytes=c[3],
            min_value=lows.get(key) if has and not c[6] else None,
            max_value=highs.get(key) if has and not c[7] else None,
            contains_nan=(True if c[4] else (None if c[5] else False)) if t.is_float else None,
        )
    return GlobalStats(n, paths)
