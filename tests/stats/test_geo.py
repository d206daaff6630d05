"""GEOMETRY's ``extra_stats`` (:mod:`service.stats.geo`): DuckLake's rendering of the Parquet
geospatial statistics, as pure functions (the file-level parity is in
``tests/peers/test_ducklake_column_parity.py``)."""

from __future__ import annotations

import math

import pytest

from service.stats import geo


def test_type_names_follow_iso_wkb_codes() -> None:
    assert [geo.type_name(c) for c in (1, 2, 3, 4, 5, 6, 7)] == [
        "point", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection",
    ]  # fmt: skip
    assert (geo.type_name(1001), geo.type_name(2003), geo.type_name(3007)) == ("point_z", "polygon_m", "geometrycollection_zm")
    assert geo.type_name(0) is None and geo.type_name(8) is None and geo.type_name(4001) is None


def test_a_box_needs_x_y_finite_and_ordered_and_the_types() -> None:
    box = [1.0, 3.0, -3.0, -1.0, None, None, None, None]
    assert geo.from_values(box, [1]) == geo.GeoStats(((1.0, 3.0), (-3.0, -1.0), None, None), (1,))
    assert geo.from_values(box, None) is None and geo.from_values(box, []) is None
    # Neither a box nor types: a row group without a geometry, which adds nothing to a union.
    assert geo.from_values([None] * 8, None) == geo.from_values([None] * 8, []) == geo.EMPTY
    assert geo.from_values([None] * 8, [1]) is None
    one = geo.from_values(box, [1])
    assert one is not None and geo.union([geo.EMPTY, one]) == one
    assert geo.union([geo.EMPTY]) == geo.EMPTY and geo.render(geo.EMPTY) is None
    assert geo.from_values([None, 3.0, -3.0, -1.0, None, None, None, None], [1]) is None
    assert geo.from_values([1.0, math.inf, -3.0, -1.0, None, None, None, None], [1]) is None
    assert geo.from_values([1.0, math.nan, -3.0, -1.0, None, None, None, None], [1]) is None
    assert geo.from_values([3.0, 1.0, -3.0, -1.0, None, None, None, None], [1]) is None
    assert geo.from_values(box[:6], [1]) is None


def test_union_and_rendering_as_ducklake() -> None:
    a = geo.from_values([0.0, 1.0, 0.0, 2.0, 3.0, 3.0, None, None], [1001, 2])
    b = geo.from_values([1e-9, 0.1234567, 0.0, 1.0, None, None, None, None], [3, 4, 2])
    assert a is not None and b is not None
    u = geo.union([a, b])
    assert u is not None
    # Checked against DuckLake 1.5.5 (a table of these geometries written through the extension).
    assert geo.render(u) == (
        '{"bbox": {"xmin": 0.000000, "xmax": 1.000000, "ymin": 0.000000, "ymax": 2.000000, '
        '"zmin": 3.000000, "zmax": 3.000000, "mmin": null, "mmax": null}, '
        '"types": ["linestring", "multipoint", "point_z", "polygon"]}'
    )
    assert geo.union([]) is None
    unnamed = geo.from_values([0.0, 1.0, 0.0, 1.0, None, None, None, None], [9])
    assert unnamed is not None and geo.render(unnamed) is None


@pytest.mark.parametrize("v", [-0.0, 1e300, -2.5])
def test_coordinates_have_six_decimals(v: float) -> None:
    g = geo.from_values([v, v, v, v, None, None, None, None], [1])
    assert g is not None
    assert f'"xmin": {v:f}, ' in (geo.render(g) or "")
