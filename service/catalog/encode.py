"""Turning validated FileStats into catalog rows, fast (10^4 stats rows per commit batch).

:func:`bounds_encoder` is specialised once per :class:`ShreddedType` (cached): it renders bounds
with :func:`service.values.bound_formatter` and gives the typed keys of
:func:`service.values.index_key` (the tests compare them), skipping the dispatch for common types.
Everything here is pure and runs before the table lock is taken.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from service.stats.merge import GlobalPathStats, GlobalStats
from service.stats.model import FileStats
from service.values import (
    INT64_MAX,
    INTEGER_RANGES,
    TIMESTAMP_KINDS,
    Bound,
    Kind,
    ShreddedType,
    bound_formatter,
    family,
    index_key,
)

#: (min_value, max_value, min_num, max_num, min_real, max_real, min_bin, max_bin)
RowBounds = tuple[
    str | None, str | None, int | None, int | None, float | None, float | None, bytes | None, bytes | None
]


@cache
def bounds_encoder(t: ShreddedType) -> Callable[[Bound | None, Bound | None], RowBounds]:
    """(min, max) -> DuckLake strings and typed keys of one stats row."""
    k = t.kind
    fam = family(t)
    fmt = bound_formatter(t)

    if k in INTEGER_RANGES or k in TIMESTAMP_KINDS or k in (Kind.DATE, Kind.TIME):
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
