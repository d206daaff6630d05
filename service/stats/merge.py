"""Global (table-level) Variant statistics: the pure merge, and DuckLake's JSON layout.

No database here: plain functions over small frozen types, so the rules can be unit-tested and the
catalog can merge incrementally on commit while checks recompute from scratch.

The rules (``../shared/NOTES.md`` §2 gives DuckLake's, whose defects are deliberately fixed):

* A ``(column, variant_path)`` is kept only if **every** live file reports it (is fully shredded
  there) with the **same** shredded type. A file that does not report it drops it; removing that
  file brings it back (the catalog recomputes on removal).
* ``value_count``, ``null_count`` and ``column_size_bytes`` are summed.
* ``min``/``max`` are merged by typed comparison (:mod:`service.values`), never as strings.
  A file in which the path holds no value (``value_count == 0``) does not move the bounds, whatever
  bounds it claims; a file with values but no bound makes that bound *unknown*, and unknown beats
  known. Three states, kept apart without an extra field: ``value_count == 0`` (no values: no bound),
  ``value_count > 0`` with a bound (known), ``value_count > 0`` without one (unknown).
* ``contains_nan`` (float types only) is OR-ed in three-valued logic: true if any file says true,
  else unknown if any file does not know, else false. Always None for other types.
* Ties between ``-0.0`` and ``0.0`` (equal, but rendered differently) are broken the same way in
  every order: the minimum keeps ``-0.0``, the maximum keeps ``0.0``. The merge is therefore
  commutative and associative, so an incremental merge equals a recomputation in any order.

The JSON layout is exactly DuckLake's ``ducklake_table_column_stats.extra_stats``: a compact array,
one object per path with keys ``field_name``, ``shredded_type``, ``null_count``, ``min``, ``max``
(omitted when absent), ``num_values`` (= value_count + null_count), ``contains_nan`` (float types
only; shredcat omits it when unknown), ``column_size_bytes``, ``any_valid`` (true). NULL (None) when
no path is kept. shredcat orders the array by ``field_name`` (the order carries no meaning).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from service.errors import InvalidStatsError
from service.stats.model import PathStats
from service.values import Bound, ShreddedType, check_bound, format_bound, parse_bound

PathKey = tuple[str, str]
"""``(column, variant_path)``: one path of one Variant column."""


@dataclass(frozen=True, slots=True)
class GlobalPathStats:
    """Merged statistics of one path over a set of files.

    ``min_value``/``max_value`` None means "no values" when ``value_count == 0`` and "unknown"
    otherwise (see :attr:`min_unknown`).
    """

    column: str
    variant_path: str
    shredded_type: ShreddedType
    value_count: int
    null_count: int
    column_size_bytes: int
    min_value: Bound | None
    max_value: Bound | None
    contains_nan: bool | None

    @property
    def key(self) -> PathKey:
        return (self.column, self.variant_path)

    @property
    def num_values(self) -> int:
        return self.value_count + self.null_count

    @property
    def min_unknown(self) -> bool:
        return self.value_count > 0 and self.min_value is None

    @property
    def max_unknown(self) -> bool:
        return self.value_count > 0 and self.max_value is None

    def ducklake_object(self) -> dict[str, Any]:
        """This path as one object of DuckLake's global JSON array (keys in DuckLake's order)."""
        t = self.shredded_type
        out: dict[str, Any] = {
            "field_name": self.variant_path,
            "shredded_type": t.name,
            "null_count": self.null_count,
        }
        if self.min_value is not None:
            out["min"] = format_bound(t, self.min_value)
        if self.max_value is not None:
            out["max"] = format_bound(t, self.max_value)
        out["num_values"] = self.num_values
        if t.is_float and self.contains_nan is not None:
            out["contains_nan"] = self.contains_nan
        out["column_size_bytes"] = self.column_size_bytes
        out["any_valid"] = True
        return out


@dataclass(frozen=True)
class GlobalStats:
    """Global Variant stats of a table: the kept paths over ``file_count`` files.

    ``file_count == 0`` means "no file merged yet" (the next file's paths are all kept), which is
    different from "files merged, no path kept" (the intersection stays empty).
    """

    file_count: int = 0
    paths: Mapping[PathKey, GlobalPathStats] = field(default_factory=dict)

    def for_column(self, column: str) -> tuple[GlobalPathStats, ...]:
        return tuple(
            sorted(
                (p for p in self.paths.values() if p.column == column),
                key=lambda p: (p.variant_path, p.shredded_type.name),
            )
        )

    def by_column(self, columns: Iterable[str]) -> dict[str, tuple[GlobalPathStats, ...]]:
        """Every column of ``columns`` (even those with no kept path) -> its kept paths, sorted."""
        return {c: self.for_column(c) for c in columns}

    def column_json(self, columns: Iterable[str]) -> dict[str, str | None]:
        """DuckLake ``extra_stats`` JSON per column (None when the column keeps no path)."""
        return {c: render_ducklake_json(self.for_column(c)) for c in columns}


EMPTY = GlobalStats()


# --- merging ----------------------------------------------------------------------------------


def from_path_stats(ps: PathStats) -> GlobalPathStats:
    """The global state of one file's path: normalised (no bounds when there are no values;
    contains_nan only for float types)."""
    t = ps.shredded_type
    has_values = ps.value_count > 0
    return GlobalPathStats(
        column=ps.column,
        variant_path=ps.variant_path,
        shredded_type=t,
        value_count=ps.value_count,
        null_count=ps.null_count,
        column_size_bytes=ps.column_size_bytes,
        min_value=ps.min_value if has_values else None,
        max_value=ps.max_value if has_values else None,
        contains_nan=ps.contains_nan if t.is_float else None,
    )


def _pick(t: ShreddedType, a: Bound, b: Bound, *, want_min: bool) -> Bound:
    if t.is_float and a == b:
        # -0.0 == 0.0: choose by sign so that the result does not depend on the order.
        a_neg = math.copysign(1.0, a) < 0  # type: ignore[arg-type]
        if want_min:
            return a if a_neg else b
        return b if a_neg else a
    if want_min:
        return b if b < a else a  # type: ignore[operator]
    return b if b > a else a  # type: ignore[operator]


def merge_bound(
    t: ShreddedType, a_count: int, a: Bound | None, b_count: int, b: Bound | None, *, want_min: bool
) -> Bound | None:
    """Merge two bounds given the value counts behind them (0 = no values = identity; a missing
    bound with values = unknown = absorbing)."""
    if a_count == 0:
        return b if b_count > 0 else None
    if b_count == 0:
        return a
    if a is None or b is None:
        return None
    return _pick(t, a, b, want_min=want_min)


def or3(a: bool | None, b: bool | None) -> bool | None:
    """Three-valued OR: true dominates, then unknown."""
    if a is True or b is True:
        return True
    if a is None or b is None:
        return None
    return False


def merge_path(a: GlobalPathStats, b: GlobalPathStats) -> GlobalPathStats:
    """Merge two states of the same path and type (commutative and associative)."""
    if a.key != b.key or a.shredded_type != b.shredded_type:
        raise ValueError(f"cannot merge {a.key}/{a.shredded_type} with {b.key}/{b.shredded_type}")
    t = a.shredded_type
    return GlobalPathStats(
        column=a.column,
        variant_path=a.variant_path,
        shredded_type=t,
        value_count=a.value_count + b.value_count,
        null_count=a.null_count + b.null_count,
        column_size_bytes=a.column_size_bytes + b.column_size_bytes,
        min_value=merge_bound(t, a.value_count, a.min_value, b.value_count, b.min_value, want_min=True),
        max_value=merge_bound(t, a.value_count, a.max_value, b.value_count, b.max_value, want_min=False),
        contains_nan=or3(a.contains_nan, b.contains_nan) if t.is_float else None,
    )


def file_state(file_paths: Iterable[PathStats]) -> dict[PathKey, GlobalPathStats]:
    """One file's paths as global states; a path reported twice is invalid stats."""
    out: dict[PathKey, GlobalPathStats] = {}
    for ps in file_paths:
        g = from_path_stats(ps)
        if g.key in out:
            raise InvalidStatsError(f"path {ps.variant_path!r} of column {ps.column!r} is reported twice")
        out[g.key] = g
    return out


def merge_file_into(g: GlobalStats, file_paths: Iterable[PathStats]) -> GlobalStats:
    """Add one file (its PathStats) to the global stats: the incremental merge done on commit."""
    fp = file_state(file_paths)
    if g.file_count == 0:
        return GlobalStats(1, fp)
    kept: dict[PathKey, GlobalPathStats] = {}
    for k, cur in g.paths.items():
        f = fp.get(k)
        if f is not None and f.shredded_type == cur.shredded_type:
            kept[k] = merge_path(cur, f)
    return GlobalStats(g.file_count + 1, kept)


def merge_stats(a: GlobalStats, b: GlobalStats) -> GlobalStats:
    """Merge the global stats of two disjoint sets of files (commutative and associative):
    ``merge_stats(g, recompute(batch))`` equals folding the batch into ``g`` file by file."""
    if a.file_count == 0:
        return b
    if b.file_count == 0:
        return a
    kept: dict[PathKey, GlobalPathStats] = {}
    for k, x in a.paths.items():
        y = b.paths.get(k)
        if y is not None and y.shredded_type == x.shredded_type:
            kept[k] = merge_path(x, y)
    return GlobalStats(a.file_count + b.file_count, kept)


def merge_files_into(g: GlobalStats, files: Iterable[Iterable[PathStats]]) -> GlobalStats:
    """Add a batch of files to the global stats (the incremental merge of a commit)."""
    return merge_stats(g, recompute(files))


class _Acc:
    """Mutable accumulator of one path during :func:`recompute` (same rules as merge_path)."""

    __slots__ = ("column", "count", "hi", "last", "lo", "nan", "nulls", "path", "size", "type")

    def __init__(self, ps: PathStats, n: int) -> None:
        t = ps.shredded_type
        self.column = ps.column
        self.path = ps.variant_path
        self.type = t
        self.count = ps.value_count
        self.nulls = ps.null_count
        self.size = ps.column_size_bytes
        has = ps.value_count > 0
        self.lo = ps.min_value if has else None
        self.hi = ps.max_value if has else None
        self.nan = ps.contains_nan if t.is_float else None
        self.last = n

    def add(self, ps: PathStats, n: int) -> None:
        t = self.type
        vc = ps.value_count
        if vc > 0:
            if self.count == 0:
                self.lo, self.hi = ps.min_value, ps.max_value
            else:
                lo, hi = self.lo, self.hi
                if lo is not None:
                    b = ps.min_value
                    self.lo = None if b is None else _pick(t, lo, b, want_min=True)
                if hi is not None:
                    b = ps.max_value
                    self.hi = None if b is None else _pick(t, hi, b, want_min=False)
        self.count += vc
        self.nulls += ps.null_count
        self.size += ps.column_size_bytes
        if t.is_float:
            self.nan = or3(self.nan, ps.contains_nan)
        self.last = n

    def freeze(self) -> GlobalPathStats:
        return GlobalPathStats(
            column=self.column,
            variant_path=self.path,
            shredded_type=self.type,
            value_count=self.count,
            null_count=self.nulls,
            column_size_bytes=self.size,
            min_value=self.lo,
            max_value=self.hi,
            contains_nan=self.nan,
        )


def recompute(files: Iterable[Iterable[PathStats]]) -> GlobalStats:
    """Global stats of exactly these files (each given as its PathStats), from nothing.

    Equal to folding :func:`merge_file_into` over the files (in any order), but with one mutable
    accumulator per path instead of a new object per file and path.
    """
    acc: dict[PathKey, _Acc] | None = None
    n = 0
    for fp in files:
        n += 1
        if acc is None:
            acc = {}
            for ps in fp:
                key = (ps.column, ps.variant_path)
                if key in acc:
                    raise InvalidStatsError(
                        f"path {ps.variant_path!r} of column {ps.column!r} is reported twice"
                    )
                acc[key] = _Acc(ps, n)
            continue
        if not acc:
            continue
        for ps in fp:
            a = acc.get((ps.column, ps.variant_path))
            if a is None or a.type != ps.shredded_type:
                continue
            if a.last == n:
                raise InvalidStatsError(f"path {ps.variant_path!r} of column {ps.column!r} is reported twice")
            a.add(ps, n)
        if any(a.last != n for a in acc.values()):
            acc = {k: a for k, a in acc.items() if a.last == n}
    if n == 0:
        return EMPTY
    assert acc is not None
    return GlobalStats(n, {k: a.freeze() for k, a in acc.items()})


# --- DuckLake JSON ----------------------------------------------------------------------------


def render_ducklake_json(paths: Iterable[GlobalPathStats]) -> str | None:
    """DuckLake's compact JSON array for one Variant column, or None when there is no path."""
    objs = [p.ducklake_object() for p in sorted(paths, key=lambda p: (p.variant_path, p.shredded_type.name))]
    if not objs:
        return None
    return json.dumps(objs, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _int_field(obj: Mapping[str, Any], name: str) -> int:
    v = obj.get(name)
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise InvalidStatsError(f"global stats: {name!r} must be a non-negative integer, got {v!r}")
    return v


def parse_ducklake_json(column: str, text: str | None) -> tuple[GlobalPathStats, ...]:
    """Inverse of :func:`render_ducklake_json` for one column (also reads DuckLake's own JSON)."""
    if text is None:
        return ()
    try:
        data = json.loads(text)
    except ValueError as e:
        raise InvalidStatsError(f"global stats of column {column!r} are not JSON: {e}") from None
    if not isinstance(data, list):
        raise InvalidStatsError(f"global stats of column {column!r} must be a JSON array")
    out: list[GlobalPathStats] = []
    for obj in data:
        if not isinstance(obj, dict) or not isinstance(obj.get("field_name"), str):
            raise InvalidStatsError(f"global stats of column {column!r}: bad entry {obj!r}")
        tname = obj.get("shredded_type")
        if not isinstance(tname, str):
            raise InvalidStatsError(f"global stats of column {column!r}: bad shredded_type {tname!r}")
        t = ShreddedType.parse(tname)
        null_count = _int_field(obj, "null_count")
        value_count = _int_field(obj, "num_values") - null_count
        if value_count < 0:
            raise InvalidStatsError(f"global stats of column {column!r}: num_values < null_count")
        bounds: list[Bound | None] = []
        for name in ("min", "max"):
            s = obj.get(name)
            if s is None:
                bounds.append(None)
            elif isinstance(s, str):
                bounds.append(parse_bound(t, s))
            else:
                raise InvalidStatsError(f"global stats of column {column!r}: {name} must be a string")
        nan = obj.get("contains_nan")
        if nan is not None and not isinstance(nan, bool):
            raise InvalidStatsError(f"global stats of column {column!r}: contains_nan must be a boolean")
        out.append(
            GlobalPathStats(
                column=column,
                variant_path=obj["field_name"],
                shredded_type=t,
                value_count=value_count,
                null_count=null_count,
                column_size_bytes=_int_field(obj, "column_size_bytes"),
                min_value=None if bounds[0] is None else check_bound(t, bounds[0]),
                max_value=None if bounds[1] is None else check_bound(t, bounds[1]),
                contains_nan=nan if t.is_float else None,
            )
        )
    return tuple(out)


def from_ducklake_json(file_count: int, columns: Mapping[str, str | None]) -> GlobalStats:
    """Rebuild the merge state from stored per-column JSON and the number of live files."""
    paths: dict[PathKey, GlobalPathStats] = {}
    for column, text in columns.items():
        for p in parse_ducklake_json(column, text):
            if p.key in paths:
                raise InvalidStatsError(f"global stats of column {column!r}: {p.variant_path!r} twice")
            paths[p.key] = p
    return GlobalStats(file_count, paths if file_count else {})
