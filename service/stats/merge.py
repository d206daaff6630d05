"""Global (table-level) Variant statistics: the one merge algebra, and DuckLake's JSON layout.

No database here. :class:`PathAccumulator` is the merge of one path over a set of files (as
DuckLake keeps one ``Merge`` per stats kind): its :class:`PathCounters` plus the extreme known
bounds. Every global-stats computation uses it: a commit batch's own stats and per-path counter
deltas (:mod:`service.catalog.encode`), the commit's merge with the stored stats and
:func:`recompute` (through :class:`GlobalStatsAccumulator`), and the catalog's rebuild from its
stored counters and index probes after a removal (:meth:`PathAccumulator.restore`).

The rules (``../shared/NOTES.md`` §2 gives DuckLake's, whose defects are deliberately fixed):

* A ``(column, variant_path)`` is kept only if **every** live file reports it (is fully shredded
  there) with the **same** shredded type. A file that does not report it drops it; removing that
  file brings it back (the catalog rebuilds on removal).
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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any

from service.errors import InvalidStatsError
from service.stats import geo
from service.stats.model import PathStats, StatsRow
from service.values import (
    Bound,
    IndexKey,
    Kind,
    ShreddedType,
    check_bound,
    format_bound,
    index_key,
    is_negative_zero,
    parse_bound,
)

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


@dataclass(frozen=True, slots=True)
class PathCounters:
    """Per-file counts of one ``(column, variant_path, shredded_type)`` over a set of files.

    Additive (and subtractable), so the catalog keeps them for its live files (as the
    ``live_<field>`` columns of ``shredcat_variant_path``) and subtracts a removed file's. With the extreme known
    bounds they give the path's :class:`GlobalPathStats` (:meth:`PathAccumulator.restore`). A
    file counts in a ``*_files`` field as :meth:`PathAccumulator.add` defines.
    """

    file_count: int = 0
    value_count: int = 0
    null_count: int = 0
    size_bytes: int = 0
    #: Files with contains_nan true / unknown (None: every file of a non-float type).
    nan_files: int = 0
    nan_unknown_files: int = 0
    #: Files with values but no min (max) bound: the merged bound is unknown.
    min_unknown_files: int = 0
    max_unknown_files: int = 0
    #: Files with values and a bound that has no index key (:func:`service.values.index_key`): the
    #: catalog cannot find the extreme through its index and reads the path's rows instead.
    min_keyless_files: int = 0
    max_keyless_files: int = 0
    #: Files with values whose min is -0.0 (max is +0.0): the index ranks -0.0 and 0.0 equal.
    min_negzero_files: int = 0
    max_poszero_files: int = 0

    def values(self) -> tuple[int, ...]:
        """The counts in field order (:data:`COUNTER_NAMES`)."""
        return (
            self.file_count, self.value_count, self.null_count, self.size_bytes, self.nan_files,
            self.nan_unknown_files, self.min_unknown_files, self.max_unknown_files, self.min_keyless_files,
            self.max_keyless_files, self.min_negzero_files, self.max_poszero_files,
        )  # fmt: skip

    def __add__(self, other: PathCounters) -> PathCounters:
        return PathCounters(*(a + b for a, b in zip(self.values(), other.values(), strict=True)))

    @property
    def min_is_known(self) -> bool:
        """The merged min is a bound (there are values, and every file with values has a min)."""
        return self.value_count > 0 and self.min_unknown_files == 0

    @property
    def max_is_known(self) -> bool:
        return self.value_count > 0 and self.max_unknown_files == 0


#: The fields of :class:`PathCounters`, in order.
COUNTER_NAMES: tuple[str, ...] = tuple(f.name for f in fields(PathCounters))


_NO_KEY = IndexKey()


@cache
def _keyless_test(t: ShreddedType) -> Callable[[Bound], bool] | None:
    """Whether a bound of ``t`` has no index key; None when every bound has one (all types but
    decimal, as :class:`service.values.IndexKey` says), so the common types skip the test."""
    if t.kind is not Kind.DECIMAL:
        return None
    return lambda v: index_key(t, v) == _NO_KEY


class PathAccumulator:
    """The merge of one path with one shredded type over a set of files: its
    :class:`PathCounters` and the extreme *known* bounds (over files with values). Every global
    stats computation goes through it: a commit batch's, the commit's merge with the stored
    stats, the rebuild from the catalog's counters after a removal, and :func:`recompute`.

    :meth:`add` (one file's stats row) and :meth:`merge` (another set of files) are commutative
    and associative; :meth:`freeze` gives the merged :class:`GlobalPathStats`.
    """

    __slots__ = (
        "column", "variant_path", "shredded_type", "_float", "_keyless",
        *COUNTER_NAMES, "min_known", "max_known",
    )  # fmt: skip

    def __init__(self, column: str, variant_path: str, t: ShreddedType) -> None:
        self.column = column
        self.variant_path = variant_path
        self.shredded_type = t
        self._float = t.is_float
        self._keyless = _keyless_test(t)
        self.file_count = 0
        self.value_count = 0
        self.null_count = 0
        self.size_bytes = 0
        self.nan_files = 0
        self.nan_unknown_files = 0
        self.min_unknown_files = 0
        self.max_unknown_files = 0
        self.min_keyless_files = 0
        self.max_keyless_files = 0
        self.min_negzero_files = 0
        self.max_poszero_files = 0
        #: The least (greatest) bound of the files with values that have one; None if none has.
        self.min_known: Bound | None = None
        self.max_known: Bound | None = None

    @property
    def key(self) -> PathKey:
        return (self.column, self.variant_path)

    # -- the rules --

    # ``cur: Any``: one path's bounds share one type (see values.bound_lt), said here by the
    # annotation, which costs nothing per row where a call to bound_lt would.
    def _take_min(self, b: Bound) -> None:
        cur: Any = self.min_known
        # Of -0.0 and 0.0 (equal) the minimum keeps -0.0, whatever the order.
        if cur is None or b < cur or (self._float and b == cur and is_negative_zero(b)):
            self.min_known = b

    def _take_max(self, b: Bound) -> None:
        cur: Any = self.max_known
        # Of -0.0 and 0.0 (equal) the maximum keeps 0.0, whatever the order.
        if cur is None or b > cur or (self._float and b == cur and is_negative_zero(cur)):
            self.max_known = b

    def add(self, ps: PathStats) -> None:
        """Add one file's stats row of this path (its column, path and type are not checked)."""
        kl = self._keyless
        vc = ps.value_count
        lo, hi = ps.min_value, ps.max_value
        self.add_row(
            ps,
            min_keyless=kl is not None and vc > 0 and lo is not None and kl(lo),
            max_keyless=kl is not None and vc > 0 and hi is not None and kl(hi),
        )

    def add_row(self, ps: StatsRow, *, min_keyless: bool, max_keyless: bool) -> None:
        """:meth:`add`, for a caller that has the row's index keys already (whether each bound has
        none; ignored for a missing bound)."""
        vc = ps.value_count
        self.file_count += 1
        self.value_count += vc
        self.null_count += ps.null_count
        self.size_bytes += ps.column_size_bytes
        nan = ps.contains_nan
        if nan is True:
            self.nan_files += 1
        elif nan is None:
            self.nan_unknown_files += 1
        if vc == 0:
            return  # no values: whatever bounds the file claims, they do not count
        lo = ps.min_value
        if lo is None:
            self.min_unknown_files += 1
        else:
            if min_keyless:
                self.min_keyless_files += 1
            elif self._float and is_negative_zero(lo):
                self.min_negzero_files += 1
            self._take_min(lo)
        hi = ps.max_value
        if hi is None:
            self.max_unknown_files += 1
        else:
            if max_keyless:
                self.max_keyless_files += 1
            elif self._float and hi == 0 and not is_negative_zero(hi):
                self.max_poszero_files += 1
            self._take_max(hi)

    def merge(self, other: PathAccumulator) -> None:
        """Add another set of files' merge of the same path and type."""
        if other.key != self.key or other.shredded_type != self.shredded_type:
            raise ValueError(
                f"cannot merge {self.key}/{self.shredded_type} with {other.key}/{other.shredded_type}"
            )
        for n in COUNTER_NAMES:
            setattr(self, n, getattr(self, n) + getattr(other, n))
        if other.min_known is not None:
            self._take_min(other.min_known)
        if other.max_known is not None:
            self._take_max(other.max_known)

    def counters(self) -> PathCounters:
        return PathCounters(
            self.file_count, self.value_count, self.null_count, self.size_bytes, self.nan_files,
            self.nan_unknown_files, self.min_unknown_files, self.max_unknown_files, self.min_keyless_files,
            self.max_keyless_files, self.min_negzero_files, self.max_poszero_files,
        )  # fmt: skip

    def freeze(self) -> GlobalPathStats:
        c = self.counters()
        nan: bool | None = None
        if self._float:
            nan = True if c.nan_files else (None if c.nan_unknown_files else False)
        return GlobalPathStats(
            column=self.column,
            variant_path=self.variant_path,
            shredded_type=self.shredded_type,
            value_count=c.value_count,
            null_count=c.null_count,
            column_size_bytes=c.size_bytes,
            min_value=self.min_known if c.min_is_known else None,
            max_value=self.max_known if c.max_is_known else None,
            contains_nan=nan,
        )

    # -- from stored states --

    @classmethod
    def restore(
        cls,
        column: str,
        variant_path: str,
        t: ShreddedType,
        counters: PathCounters,
        min_known: Bound | None,
        max_known: Bound | None,
    ) -> PathAccumulator:
        """The merge of files known by their counters and their extreme known bounds as found by
        an index that ranks -0.0 and 0.0 equal: the counters tell which zero it is."""
        acc = cls(column, variant_path, t)
        for n, v in zip(COUNTER_NAMES, counters.values(), strict=True):
            setattr(acc, n, v)
        if t.is_float:
            if min_known == 0:
                min_known = -0.0 if counters.min_negzero_files else 0.0
            if max_known == 0:
                max_known = 0.0 if counters.max_poszero_files else -0.0
        acc.min_known, acc.max_known = min_known, max_known
        return acc

    @classmethod
    def of(cls, g: GlobalPathStats, file_count: int) -> PathAccumulator:
        """The merge state that ``g`` (over ``file_count`` files, all of which have the path)
        freezes from. The per-file counts behind its flags are not in ``g``: each flag becomes a
        count of 0 or 1, which merges and freezes the same (these are not the catalog's counters).
        """
        acc = cls(g.column, g.variant_path, g.shredded_type)
        acc.file_count = file_count
        acc.value_count = g.value_count
        acc.null_count = g.null_count
        acc.size_bytes = g.column_size_bytes
        acc.nan_files = int(g.contains_nan is True)
        acc.nan_unknown_files = int(g.contains_nan is None)
        acc.min_unknown_files = int(g.min_unknown)
        acc.max_unknown_files = int(g.max_unknown)
        acc.min_known, acc.max_known = g.min_value, g.max_value
        return acc


def complete_paths(file_count: int, paths: Iterable[PathAccumulator]) -> GlobalStats:
    """The global stats of ``file_count`` files from the merges of their paths: a path is kept
    when every file has it with this type, i.e. when its file count is ``file_count`` (a file
    reports a path once). The paths may include incomplete ones (they are left out)."""
    if file_count == 0:
        return EMPTY
    kept: dict[PathKey, GlobalPathStats] = {}
    for acc in paths:
        if acc.file_count != file_count:
            continue
        if acc.key in kept:
            raise InvalidStatsError(
                f"path {acc.variant_path!r} of column {acc.column!r} has two types in every file"
            )
        kept[acc.key] = acc.freeze()
    return GlobalStats(file_count, kept)


class GlobalStatsAccumulator:
    """The global stats of a set of files under construction: :meth:`add_file` one file,
    :meth:`merge` the global stats of another (disjoint) set, :meth:`freeze` the result.

    Only the paths every file so far has (with the same type) are tracked: a path a file lacks
    can never be kept again while that file lives.
    """

    __slots__ = ("_paths", "file_count")

    def __init__(self, g: GlobalStats = EMPTY) -> None:
        self.file_count = g.file_count
        self._paths: dict[PathKey, PathAccumulator] = {
            k: PathAccumulator.of(p, g.file_count) for k, p in g.paths.items()
        }

    def add_file(self, file_paths: Iterable[PathStats]) -> None:
        """Add one file's stats rows; a path reported twice is invalid stats."""
        first = self.file_count == 0
        self.file_count = n = self.file_count + 1
        paths = self._paths
        if not first and not paths:
            return
        for ps in file_paths:
            key = (ps.column, ps.variant_path)
            acc = paths.get(key)
            if acc is None:
                if not first:
                    continue
                acc = paths[key] = PathAccumulator(ps.column, ps.variant_path, ps.shredded_type)
            elif acc.shredded_type != ps.shredded_type:
                continue
            if acc.file_count == n:
                raise InvalidStatsError(f"path {ps.variant_path!r} of column {ps.column!r} is reported twice")
            acc.add(ps)
        if any(a.file_count != n for a in paths.values()):
            self._paths = {k: a for k, a in paths.items() if a.file_count == n}

    def merge(self, other: GlobalStats) -> None:
        """Add the global stats of a disjoint set of files (commutative and associative)."""
        if other.file_count == 0:
            return
        if self.file_count == 0:
            self.file_count = other.file_count
            self._paths = {k: PathAccumulator.of(p, other.file_count) for k, p in other.paths.items()}
            return
        kept: dict[PathKey, PathAccumulator] = {}
        for k, acc in self._paths.items():
            p = other.paths.get(k)
            if p is not None and p.shredded_type == acc.shredded_type:
                acc.merge(PathAccumulator.of(p, other.file_count))
                kept[k] = acc
        self.file_count += other.file_count
        self._paths = kept

    def freeze(self) -> GlobalStats:
        return complete_paths(self.file_count, self._paths.values())


def recompute(files: Iterable[Iterable[PathStats]]) -> GlobalStats:
    """Global stats of exactly these files (each given as its PathStats), from nothing."""
    acc = GlobalStatsAccumulator()
    for fp in files:
        acc.add_file(fp)
    return acc.freeze()



def merge_geometry_extra(files: Iterable[tuple[int, str | None]]) -> str | None:
    """A GEOMETRY column's table-wide ``extra_stats`` from its files' ``(value_count,
    extra_stats)``: the union of their boxes and types, as DuckLake records it over several
    files (checked against the real extension in ``tests/peers/test_ducklake_geometry_merge.py``).

    A file with geometries whose box is unknown (no ``extra_stats``, or one not understood) makes
    the table's box unknown (None), never a box that leaves its geometries out; a file without a
    geometry moves nothing. Merging the rendered boxes equals rendering the merged ones: the
    rendering rounds each coordinate to six decimals, which keeps min and max in order. None
    when no file has a geometry.
    """
    parts = []
    for value_count, doc in files:
        g = None if doc is None else geo.parse(doc)
        if g is None:
            if value_count:
                return None
            continue
        parts.append(g)
    box = geo.union(parts)
    return None if box is None else geo.render(box)

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
