"""Turning validated FileStats into catalog rows, fast (10^4 stats rows per commit batch).

:func:`bounds_encoder` is specialised once per :class:`ShreddedType` (cached): it renders bounds
with :func:`service.values.bound_formatter` and gives the typed keys of
:func:`service.values.index_key` (the tests compare them), skipping the dispatch for common types.
:func:`prepare_batch` merges each path of the batch in the same pass
(:class:`service.stats.merge.PathAccumulator`), in time linear in the stats rows. Everything here
is pure and runs before the table lock is taken.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any, cast

from service.catalog.models import COLUMN_KEY_PATH
from service.stats.merge import GlobalStats, PathAccumulator, PathCounters, complete_paths
from service.stats.model import ColumnStats, FileStats, PartitionValue, PathStats
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
                cast("int | None", lo),  # this kind's bounds are ints (check_bound)
                cast("int | None", hi),
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
                cast("float | None", lo),  # this family's bounds are floats (check_bound)
                cast("float | None", hi),
                None,
                None,
            )

        return enc_real
    if k is Kind.VARCHAR:

        def enc_str(lo: Bound | None, hi: Bound | None) -> RowBounds:
            s_lo, s_hi = cast("str | None", lo), cast("str | None", hi)  # varchar bounds are str (check_bound)
            return (
                s_lo,
                s_hi,
                None,
                None,
                None,
                None,
                None if s_lo is None else s_lo.encode("utf-8"),
                None if s_hi is None else s_hi.encode("utf-8"),
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
    """Validated files with their stats rows encoded, per-key counter deltas, widths, and the
    batch's own global stats, all computed before the table lock is taken.

    Plain and partition columns are keys of the same dictionary as Variant paths, with
    ``variant_path`` :data:`COLUMN_KEY_PATH` (``''``): one set of counters and widths for both; only
    their rows go to another table (``col_rows``)."""

    files: list[FileStats]
    #: Per file, per path: (column, variant_path, shredded_type, column_size_bytes, value_count,
    #: null_count, min_value, max_value, contains_nan, extra_stats, min_num, max_num, min_real,
    #: max_real, min_bin, max_bin).
    rows: list[list[tuple[Any, ...]]]
    counters: dict[PathTypeKey, PathCounters] = field(default_factory=dict)
    widths: dict[PathTypeKey, Width] = field(default_factory=dict)
    aggregate: GlobalStats = field(default_factory=GlobalStats)
    #: Per file, per plain or partition column: the same layout as ``rows`` (variant_path ``''``).
    col_rows: list[list[tuple[Any, ...]]] = field(default_factory=list)
    #: Per file: (partition column, raw value) in the file's order.
    part_rows: list[list[tuple[str, str | None]]] = field(default_factory=list)

    def subset(self, keep: Sequence[int]) -> PreparedBatch:
        """The same batch restricted to the files at these indexes."""
        return prepare_batch([self.files[i] for i in keep])


@cache
def _type_info(t: ShreddedType) -> tuple[Callable[[Bound | None, Bound | None], RowBounds], str]:
    return bounds_encoder(t), t.name


class _RowEncoder:
    """Stats rows of one batch into catalog rows, merging each row into its key's accumulator and
    width: one loop for Variant paths, plain columns and partition columns (10^4 rows per batch)."""

    __slots__ = ("encoders", "widths")

    def __init__(self) -> None:
        # Per ShreddedType object: hashing the frozen dataclass for every row would cost more.
        self.encoders: dict[int, tuple[Callable[[Bound | None, Bound | None], RowBounds], str]] = {}
        self.widths: dict[PathTypeKey, Width] = {}

    def rows(
        self, stats: Sequence[PathStats | ColumnStats], accs: dict[PathTypeKey, PathAccumulator], *, variant: bool
    ) -> list[tuple[Any, ...]]:
        """``stats``' rows (``variant``: Variant paths; else columns, variant_path ``''``)."""
        encoders = self.encoders
        widths = self.widths
        out = []
        append = out.append
        vp = COLUMN_KEY_PATH
        for ps in stats:
            t = ps.shredded_type
            cached = encoders.get(id(t))
            if cached is None:
                cached = encoders[id(t)] = _type_info(t)
            enc, tname = cached
            smin, smax, min_num, max_num, min_real, max_real, min_bin, max_bin = enc(ps.min_value, ps.max_value)
            col = ps.column
            if variant:
                vp = ps.variant_path
            append(
                (
                    col, vp, tname, ps.column_size_bytes, ps.value_count, ps.null_count, smin, smax,
                    ps.contains_nan, ps.extra_stats, min_num, max_num, min_real, max_real, min_bin, max_bin,
                )
            )  # fmt: skip
            key = (col, vp, tname)
            acc = accs.get(key)
            if acc is None:
                acc = accs[key] = PathAccumulator(col, vp, t)
                widths.setdefault(key, (0, 0.0))  # partition groups each have their accumulators
            acc.add_row(
                ps,
                min_keyless=min_num is None and min_real is None and min_bin is None,
                max_keyless=max_num is None and max_real is None and max_bin is None,
            )
            if min_num is not None and max_num is not None:
                w = widths[key]
                if w[0] is not None:
                    d = max_num - min_num
                    if d > w[0]:
                        widths[key] = (d if d <= INT64_MAX else None, w[1])
            elif min_real is not None and max_real is not None:
                widths[key] = max_width(widths[key], row_width(None, None, min_real, max_real))
        return out


class _PartitionGroup:
    """The files of a batch that share one tuple of partition values and one record count: their
    partition column rows (encoded once), DuckLake partition value rows, and the counters of one
    such file (the group adds them ``files`` times)."""

    __slots__ = ("accumulators", "files", "partitions", "rows", "values")

    def __init__(self, partitions: tuple[PartitionValue, ...], record_count: int, encoder: _RowEncoder) -> None:
        from service.storage.partitions import partition_stats

        self.partitions = partitions  # held: the batch's cache is keyed by its id
        self.accumulators: dict[PathTypeKey, PathAccumulator] = {}
        self.rows = encoder.rows(
            [partition_stats(pv, record_count) for pv in partitions], self.accumulators, variant=False
        )
        self.values: list[tuple[str, str | None]] = [(pv.column, pv.raw) for pv in partitions]
        self.files = 0


def prepare_batch(files: Sequence[FileStats]) -> PreparedBatch:
    """Encode validated files (:func:`service.catalog.validate.validate_batch`) for insertion, and
    merge in the same pass each (column, path, type) of the batch with
    :class:`~service.stats.merge.PathAccumulator`: its counters are the deltas of the path
    dictionary and the complete paths the batch's own global stats (linear in the rows). Plain
    and partition columns are encoded the same way (their accumulators feed the counters only:
    global stats are Variant stats)."""
    rows: list[list[tuple[Any, ...]]] = []
    col_rows: list[list[tuple[Any, ...]]] = []
    part_rows: list[list[tuple[str, str | None]]] = []
    paths: dict[PathTypeKey, PathAccumulator] = {}
    columns: dict[PathTypeKey, PathAccumulator] = {}
    encoder = _RowEncoder()
    partition_groups: dict[tuple[int, int], _PartitionGroup] = {}
    for f in files:
        rows.append(encoder.rows(f.paths, paths, variant=True))
        plain = encoder.rows(f.columns, columns, variant=False) if f.columns else []
        if f.partitions:
            # A partition row depends on the partition values and the record count only, and the
            # files of one directory share their tuple of values: encoded once, counted n times.
            pkey = (id(f.partitions), f.record_count)
            group = partition_groups.get(pkey)
            if group is None:
                group = partition_groups[pkey] = _PartitionGroup(f.partitions, f.record_count, encoder)
            group.files += 1
            col_rows.append(plain + group.rows)
            part_rows.append(group.values)
        else:
            col_rows.append(plain)
            part_rows.append([])
    counters = {k: a.counters() for k, a in paths.items()}
    counters.update((k, a.counters()) for k, a in columns.items())
    for group in partition_groups.values():
        for k, a in group.accumulators.items():
            c = a.counters()
            c = PathCounters(*(v * group.files for v in c.values()))
            prev = counters.get(k)
            counters[k] = c if prev is None else prev + c
    widths = encoder.widths
    return PreparedBatch(
        list(files),
        rows,
        counters,
        widths,
        complete_paths(len(files), paths.values()),
        col_rows,
        part_rows,
    )
