"""Stored file statistics checked against the files themselves.

Client-side statistics are trusted by design: Spark executors extract them where the data is, so
the server needs no storage credentials. A wrong stats row is the one thing that can make pruning
drop a file holding matching rows, so that trust is made checkable here:

* :func:`compare_file_stats` is the pure comparison of a file's stored stats with stats extracted
  again from the file. It compares **by value**: bounds as typed values (NaN equal to NaN, decimals
  by number), counts as integers, ``contains_nan`` as a flag, ``extra_stats`` as parsed JSON,
  the Variant columns as a set and the stats rows keyed by ``(column, variant_path)``.
* :meth:`service.catalog.Catalog.verify` (``shredcat verify``, ``POST .../verify``) re-extracts
  a sample or all of a table's live files and reports every file whose stored stats differ
  (:class:`FileCheck` ``different``) or that could not be read (``unverifiable``: missing, outside
  the warehouse roots, an object store without credentials; never reported as different).
* :meth:`service.catalog.Catalog.commit` uses the same comparison to restate the stats of a file
  re-registered by path (stats the server extracted) whose stored stats differ.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from service.catalog.validate import same_content_id
from service.stats.model import FileStats, PartitionValue, StatsRow
from service.values import Bound, format_bound

#: JSON-able rendering of one side of a difference (bounds in DuckLake's text form).
Shown = str | int | bool | list[str] | None

_FILE_FIELDS = ("file_size_bytes", "record_count", "footer_size", "content_id")
_COUNT_FIELDS = ("column_size_bytes", "value_count", "null_count")


@dataclass(frozen=True, slots=True)
class Difference:
    """One field whose stored value differs from the file's.

    ``field``: a file attribute (``record_count``, ``variant_columns``, ``partitions``...), ``row``
    when a stats row exists on one side only (shown as ``"present"``/None), or a row attribute
    (``min_value``, ``contains_nan``...) of the row ``column``/``variant_path`` (``variant_path``
    None: a plain or partition column's row).
    """

    field: str
    stored: Shown
    extracted: Shown
    column: str | None = None
    variant_path: str | None = None

    def to_json(self) -> dict[str, Shown]:
        out: dict[str, Shown] = {"field": self.field, "stored": self.stored, "extracted": self.extracted}
        if self.column is not None:
            out["column"] = self.column
            out["variant_path"] = self.variant_path
        return out


FileStatus = Literal["match", "different", "unverifiable"]


@dataclass(frozen=True, slots=True)
class FileCheck:
    """The outcome for one file: ``differences`` when ``different``, ``reason`` when ``unverifiable``."""

    path: str
    status: FileStatus
    differences: tuple[Difference, ...] = ()
    reason: str | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"path": self.path, "status": self.status}
        if self.status == "different":
            out["differences"] = [d.to_json() for d in self.differences]
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True, slots=True)
class VerifyReport:
    """What :meth:`~service.catalog.Catalog.verify` found, for the files live at ``snapshot_id``."""

    table: str
    snapshot_id: int
    live_files: int
    #: Files chosen (the sample, or every live file).
    chosen: int
    #: Files compared or found unreadable (fewer than ``chosen`` when the time budget ran out).
    checked: int
    matching: int
    #: Every ``different`` and ``unverifiable`` file, in path order.
    problems: tuple[FileCheck, ...]

    @property
    def complete(self) -> bool:
        return self.checked == self.chosen

    @property
    def different(self) -> tuple[FileCheck, ...]:
        return tuple(c for c in self.problems if c.status == "different")

    @property
    def unverifiable(self) -> tuple[FileCheck, ...]:
        return tuple(c for c in self.problems if c.status == "unverifiable")


def same_bound(a: Bound | None, b: Bound | None) -> bool:
    """Typed equality of two bounds (None = unknown): NaN equals NaN, -0.0 equals 0.0, and a
    bool never equals an int."""
    if a is None or b is None:
        return a is None and b is None
    if type(a) is not type(b):
        return False
    if type(a) is float and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)  # b has a's type: the isinstance is for mypy
    return a == b


def _same_extra(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    try:
        return bool(json.loads(a) == json.loads(b))
    except ValueError:
        return a == b


def _show_bound(ps: StatsRow, v: Bound | None) -> str | None:
    return None if v is None else format_bound(ps.shredded_type, v)


def _row_differences(s: StatsRow, e: StatsRow) -> Iterator[Difference]:
    def diff(name: str, stored: Shown, extracted: Shown) -> Difference:
        return Difference(name, stored, extracted, s.column, s.variant_path)

    if s.shredded_type != e.shredded_type:
        # Bounds of different types cannot be compared: the type is the difference.
        yield diff("shredded_type", s.shredded_type.name, e.shredded_type.name)
        return
    for name in _COUNT_FIELDS:
        if getattr(s, name) != getattr(e, name):
            yield diff(name, getattr(s, name), getattr(e, name))
    for name in ("min_value", "max_value"):
        sv, ev = getattr(s, name), getattr(e, name)
        if not same_bound(sv, ev):
            yield diff(name, _show_bound(s, sv), _show_bound(e, ev))
    if s.contains_nan is not e.contains_nan:
        yield diff("contains_nan", s.contains_nan, e.contains_nan)
    if not _same_extra(s.extra_stats, e.extra_stats):
        yield diff("extra_stats", s.extra_stats, e.extra_stats)


def compare_file_stats(stored: FileStats, extracted: FileStats) -> tuple[Difference, ...]:
    """Every difference between a file's stored stats and stats extracted from it (empty: they
    match). File attributes first, then stats rows in the stored order, then rows only extracted."""
    out: list[Difference] = []
    for name in _FILE_FIELDS:
        sv, ev = getattr(stored, name), getattr(extracted, name)
        if name == "content_id" and same_content_id(sv, ev):
            continue  # ids of two kinds (pyarrow-era mtime:size vs etag) cannot be compared
        if sv != ev:
            out.append(Difference(name, sv, ev))
    if set(stored.variant_columns) != set(extracted.variant_columns):
        out.append(
            Difference("variant_columns", list(stored.variant_columns), list(extracted.variant_columns))
        )
    fresh = {(p.column, p.variant_path): p for p in extracted.paths}
    for s in stored.paths:
        e = fresh.pop((s.column, s.variant_path), None)
        if e is None:
            out.append(Difference("row", "present", None, s.column, s.variant_path))
        else:
            out.extend(_row_differences(s, e))
    for e in fresh.values():
        out.append(Difference("row", None, "present", e.column, e.variant_path))
    # Plain and partition columns: rows keyed by column (variant_path None), partition values by
    # column (raw text and type; the typed value is the column's stats row, compared above).
    fresh_cols = {c.column: c for c in extracted.columns}
    for sc in stored.columns:
        ec = fresh_cols.pop(sc.column, None)
        if ec is None:
            out.append(Difference("row", "present", None, sc.column, None))
        else:
            out.extend(_row_differences(sc, ec))
    for ec in fresh_cols.values():
        out.append(Difference("row", None, "present", ec.column, None))
    sp = [(p.column, p.raw, p.value_type.name) for p in stored.partitions]
    ep = [(p.column, p.raw, p.value_type.name) for p in extracted.partitions]
    if sp != ep:
        out.append(
            Difference(
                "partitions",
                [f"{c}={r} ({t})" for c, r, t in sp],
                [f"{c}={r} ({t})" for c, r, t in ep],
            )
        )
    else:
        for a, b in zip(stored.partitions, extracted.partitions, strict=True):
            if not same_bound(a.value, b.value):
                out.append(Difference("partition_value", _show(a), _show(b), a.column, None))
    return tuple(out)


def _show(p: PartitionValue) -> str | None:
    return None if p.value is None else format_bound(p.value_type, p.value)
