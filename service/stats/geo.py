"""DuckLake's ``extra_stats`` of a GEOMETRY column: its bounding box and geometry types, taken
from the Parquet geospatial statistics of every row group (``ColumnMetaData.geospatial_statistics``:
pyarrow writes them for ``geoarrow.wkb`` columns; DuckDB 1.5.5 does not, and then the row has none).

DuckLake 1.5.5 renders them as ``{"bbox": {"xmin": 1.000000, ..., "mmax": null}, "types":
["point", "polygon_z"]}``: each coordinate with six decimals (C's ``%f``), an absent dimension as
null, the types by name in sorted order (checked against the real extension in
``tests/peers/test_ducklake_column_parity.py``). Pure functions over plain facts, so that the
rules are tested without a file.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: WKB geometry type codes (ISO: + 1000 for Z, + 2000 for M, + 3000 for ZM), as parquet.thrift's
#: ``geospatial_types`` lists them.
_TYPE_NAMES = {
    1: "point",
    2: "linestring",
    3: "polygon",
    4: "multipoint",
    5: "multilinestring",
    6: "multipolygon",
    7: "geometrycollection",
}
_DIMENSIONS = {0: "", 1: "_z", 2: "_m", 3: "_zm"}
_AXES = ("x", "y", "z", "m")


@dataclass(frozen=True, slots=True)
class GeoStats:
    """One row group's geospatial statistics: each axis's (min, max), None where absent."""

    ranges: tuple[tuple[float, float] | None, ...]  # x, y, z, m
    types: tuple[int, ...]


def type_name(code: int) -> str | None:
    """DuckLake's name of a WKB type code (``1001`` → ``point_z``); None for a code outside ISO's."""
    base, dims = code % 1000, code // 1000
    if base not in _TYPE_NAMES or dims not in _DIMENSIONS:
        return None
    return _TYPE_NAMES[base] + _DIMENSIONS[dims]


#: The statistics of a row group without a geometry: neither a box nor a type (pyarrow writes
#: them so for a chunk of NULLs, and writes no null count for GEOMETRY).
EMPTY = GeoStats((None, None, None, None), ())


def from_values(values: Sequence[float | None], types: Sequence[int] | None) -> GeoStats | None:
    """A row group's statistics from (xmin, xmax, ymin, ymax, zmin, zmax, mmin, mmax) and its
    type codes; None when the box or the types are missing or not finite (nothing proven), but
    :data:`EMPTY` when both are missing (no geometry was seen)."""
    if len(values) != 8:
        return None
    if not types and all(v is None for v in values):
        return EMPTY
    if not types:
        return None
    ranges: list[tuple[float, float] | None] = []
    for i in range(4):
        lo, hi = values[2 * i], values[2 * i + 1]
        if lo is None or hi is None:
            if i < 2:
                return None  # x and y are required
            ranges.append(None)
            continue
        if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
            return None
        ranges.append((float(lo), float(hi)))
    return GeoStats(tuple(ranges), tuple(types))


def union(parts: Iterable[GeoStats]) -> GeoStats | None:
    """The box and types of the row groups together (an axis some part lacks: from the others,
    as DuckLake unites them); None for no part."""
    ranges: list[tuple[float, float] | None] = [None] * 4
    types: set[int] = set()
    seen = False
    for p in parts:
        seen = True
        types.update(p.types)
        for i, r in enumerate(p.ranges):
            if r is not None:
                cur = ranges[i]
                ranges[i] = r if cur is None else (min(cur[0], r[0]), max(cur[1], r[1]))
    return GeoStats(tuple(ranges), tuple(sorted(types))) if seen else None


def render(g: GeoStats) -> str | None:
    """``extra_stats`` as DuckLake writes it; None when a type code has no name, or no part had
    a geometry (no box)."""
    names = [n for n in map(type_name, g.types) if n is not None]
    if len(names) != len(g.types) or g.ranges[0] is None or g.ranges[1] is None:
        return None
    box = []
    for axis, r in zip(_AXES, g.ranges, strict=True):
        lo, hi = ("null", "null") if r is None else (f"{r[0]:f}", f"{r[1]:f}")
        box.append(f'"{axis}min": {lo}, "{axis}max": {hi}')
    types = ", ".join(f'"{n}"' for n in sorted(set(names)))
    return '{"bbox": {' + ", ".join(box) + '}, "types": [' + types + "]}"


_CODES = {type_name(base + 1000 * dims): base + 1000 * dims for base in _TYPE_NAMES for dims in _DIMENSIONS}


def parse(doc: str) -> GeoStats | None:
    """The box and types of an ``extra_stats`` as :func:`render` (or DuckLake) writes it;
    :data:`EMPTY` for DuckLake's all-null box (a file without a geometry), None for anything
    else (not understood: nothing proven)."""
    try:
        obj = json.loads(doc)
        box, names = obj["bbox"], obj["types"]
        values = [box[f"{axis}{end}"] for axis in _AXES for end in ("min", "max")]
        codes = [_CODES[n] for n in names]
    except (ValueError, TypeError, KeyError):
        return None
    if not all(v is None or (isinstance(v, (int, float)) and not isinstance(v, bool)) for v in values):
        return None
    return from_values(values, codes)
