"""A GEOMETRY column's table-wide ``extra_stats`` (:func:`service.stats.merge.merge_geometry_extra`)
from its files' boxes, as pure functions (the parity with DuckLake over several files is in
``tests/peers/test_ducklake_geometry_merge.py``)."""

from __future__ import annotations

import json
import random

from service.stats import geo
from service.stats.merge import merge_geometry_extra

_NULL_BOX = '{"bbox": {"xmin": null, "xmax": null, "ymin": null, "ymax": null, "zmin": null, "zmax": null, "mmin": null, "mmax": null}, "types": []}'


def _doc(xs: tuple[float, float], ys: tuple[float, float], types: list[int], zs: tuple[float, float] | None = None) -> str:
    z = [None, None] if zs is None else list(zs)
    g = geo.from_values([*xs, *ys, *z, None, None], types)
    assert g is not None
    out = geo.render(g)
    assert out is not None
    return out


def test_boxes_and_types_are_united() -> None:
    a = _doc((1, 3), (-3, -1), [1])
    b = _doc((10, 11), (20, 22), [1001], zs=(5, 5))
    c = _doc((-100, 0), (0, 100), [2])
    merged = merge_geometry_extra([(3, a), (2, b), (1, c)])
    assert merged is not None
    assert json.loads(merged) == {
        "bbox": {"xmin": -100.0, "xmax": 11.0, "ymin": -3.0, "ymax": 100.0, "zmin": 5.0, "zmax": 5.0, "mmin": None, "mmax": None},
        "types": ["linestring", "point", "point_z"],
    }
    assert merge_geometry_extra([(3, a)]) == a  # one file: its own box, unchanged


def test_files_without_a_geometry_move_nothing_and_unknown_boxes_win() -> None:
    a = _doc((1, 3), (-3, -1), [1])
    # DuckLake's box of a file of NULLs, and a file with no values and no box: nothing to add.
    assert merge_geometry_extra([(0, _NULL_BOX), (3, a), (0, None)]) == a
    assert merge_geometry_extra([(0, _NULL_BOX), (0, None)]) is None
    # A file whose geometries have no (understood) box: the table's box is unknown, never too small.
    assert merge_geometry_extra([(3, a), (2, None)]) is None
    assert merge_geometry_extra([(3, a), (2, '{"bbox": {}, "types": ["point"]}')]) is None
    assert merge_geometry_extra([(3, a), (2, a.replace('"point"', '"pointy"'))]) is None
    assert merge_geometry_extra([(3, a), (2, "not json")]) is None
    assert merge_geometry_extra([]) is None


def test_merging_rendered_boxes_equals_rendering_the_merged_box_in_any_order() -> None:
    """Six-decimal rounding keeps the order of coordinates, so merging the files' rendered boxes
    (all the export has) gives the string of the box of every geometry."""
    rng = random.Random(30)
    for _ in range(200):
        parts = []
        for _ in range(rng.randint(1, 5)):
            x = sorted(rng.uniform(-1e3, 1e3) for _ in range(2))
            y = sorted(rng.uniform(-1e-3, 1e-3) for _ in range(2))
            g = geo.from_values([*x, *y, None, None, None, None], [rng.choice((1, 2, 3))])
            assert g is not None
            parts.append(g)
        whole = geo.union(parts)
        assert whole is not None
        docs = [(1, geo.render(p)) for p in parts]
        rng.shuffle(docs)
        assert merge_geometry_extra(docs) == geo.render(whole)


def test_parse_reads_back_what_render_writes() -> None:
    g = geo.from_values([0.5, 1.25, -2.0, 2.0, 0.0, 1.0, -1.0, 3.0], [3001, 1])
    assert g is not None
    doc = geo.render(g)
    assert doc is not None
    back = geo.parse(doc)
    assert back is not None and geo.render(back) == doc
    assert geo.parse(_NULL_BOX) == geo.EMPTY
    assert geo.parse('{"bbox": {"xmin": true}, "types": []}') is None
    assert geo.parse("[1]") is None
