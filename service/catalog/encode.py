"""Per-type fast paths for the commit hot loop (10^4 stats rows per batch).

Each function is specialised once per :class:`ShreddedType` (cached) and gives exactly the result of
the general functions in :mod:`service.stats.types` (``check_bound``, ``format_bound``,
``index_key``), which remain the reference: the common types (integers, float64, varchar) skip the
dispatch, every other type goes through the general function.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from service.stats.merge import GlobalStats, recompute
from service.stats.model import FileStats
from service.stats.types import (
    INTEGER_RANGES,
    Bound,
    Kind,
    ShreddedType,
    check_bound,
    format_bound,
    index_key,
)

#: (min_value, max_value, min_num, max_num, min_real, max_real, min_bin, max_bin)
RowBounds = tuple[
    str | None, str | None, int | None, int | None, float | None, float | None, bytes | None, bytes | None
]


@cache
def bound_checker(t: ShreddedType) -> Callable[[Bound], Bound]:
    """``check_bound`` specialised for ``t`` (same result, same errors)."""
    k = t.kind
    if k in INTEGER_RANGES:
        lo, hi = INTEGER_RANGES[k]

        def check_int(v: Bound) -> Bound:
            if type(v) is int and lo <= v <= hi:
                return v
            return check_bound(t, v)

        return check_int
    if k is Kind.FLOAT64:

        def check_f64(v: Bound) -> Bound:
            if type(v) is float and v == v:
                return v
            return check_bound(t, v)

        return check_f64
    if k is Kind.VARCHAR:

        def check_str(v: Bound) -> Bound:
            if type(v) is str:
                return v
            return check_bound(t, v)

        return check_str
    return lambda v: check_bound(t, v)


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
    if k in INTEGER_RANGES:

        def enc_int(lo: Bound | None, hi: Bound | None) -> RowBounds:
            return (
                None if lo is None else str(lo),
                None if hi is None else str(hi),
                lo,  # type: ignore[return-value]
                hi,
                None,
                None,
                None,
                None,
            )

        return enc_int
    if k is Kind.FLOAT64:

        def enc_f64(lo: Bound | None, hi: Bound | None) -> RowBounds:
            return (
                None if lo is None else _fmt_f64(lo),  # type: ignore[arg-type]
                None if hi is None else _fmt_f64(hi),  # type: ignore[arg-type]
                None,
                None,
                lo,  # type: ignore[return-value]
                hi,
                None,
                None,
            )

        return enc_f64
    if k is Kind.VARCHAR:

        def enc_str(lo: Bound | None, hi: Bound | None) -> RowBounds:
            return (
                lo,  # type: ignore[return-value]
                hi,
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
            None if lo is None else format_bound(t, lo),
            None if hi is None else format_bound(t, hi),
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

INT64_MAX = 2**63 - 1


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
        return _finish([self.files[i] for i in keep], [self.rows[i] for i in keep])


def prepare_batch(files: Sequence[FileStats]) -> PreparedBatch:
    """Encode validated files (:func:`service.catalog.validate.validate_batch`) for insertion."""
    rows: list[list[tuple[Any, ...]]] = []
    for f in files:
        out = []
        for ps in f.paths:
            t = ps.shredded_type
            e = bounds_encoder(t)(ps.min_value, ps.max_value)
            out.append(
                (
                    ps.column,
                    ps.variant_path,
                    t.name,
                    ps.column_size_bytes,
                    ps.value_count,
                    ps.null_count,
                    e[0],
                    e[1],
                    ps.contains_nan,
                    ps.extra_stats,
                    e[2],
                    e[3],
                    e[4],
                    e[5],
                    e[6],
                    e[7],
                )
            )
        rows.append(out)
    return _finish(list(files), rows)


def _finish(files: list[FileStats], rows: list[list[tuple[Any, ...]]]) -> PreparedBatch:
    counters: dict[PathTypeKey, list[int]] = {}
    widths: dict[PathTypeKey, Width] = {}
    for fr in rows:
        for r in fr:
            (
                col,
                vp,
                tname,
                size,
                vc,
                nc,
                smin,
                smax,
                nan,
                _x,
                min_num,
                max_num,
                min_real,
                max_real,
                min_bin,
                max_bin,
            ) = r
            key = (col, vp, tname)
            c = counters.get(key)
            if c is None:
                c = counters[key] = [0] * len(COUNTERS)
                widths[key] = (0, 0.0)
            c[0] += 1
            c[1] += vc
            c[2] += nc
            c[3] += size
            if nan is True:
                c[4] += 1
            elif nan is None:
                c[5] += 1
            if vc > 0:
                if smin is None:
                    c[6] += 1
                elif min_num is None and min_real is None and min_bin is None:
                    c[8] += 1
                elif min_real == 0 and smin == "-0.0":
                    c[10] += 1
                if smax is None:
                    c[7] += 1
                elif max_num is None and max_real is None and max_bin is None:
                    c[9] += 1
                elif max_real == 0 and smax == "0.0":
                    c[11] += 1
            if (min_num is not None and max_num is not None) or (
                min_real is not None and max_real is not None
            ):
                widths[key] = max_width(widths[key], row_width(min_num, max_num, min_real, max_real))
    return PreparedBatch(files, rows, counters, widths, recompute(f.paths for f in files))
