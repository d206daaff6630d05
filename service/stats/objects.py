"""Fully shredded objects: what lets a plan prove a Variant field absent from a whole file.

An object whose residual ``value`` column is absent, all null, or only Variant nulls in every
row group (what the footer proves, as for DuckLake's fully shredded paths in
:mod:`service.stats.extract`) holds no key but its shredded fields in any row: the spec forbids a
shredded key in the residual, and here the residual holds no object at all. So a key missing from
its fields is missing from every row of the file, and ``variant_get`` of it is NULL everywhere.
Nothing is read beyond the footer; where it cannot prove it, nothing is recorded (and a missing
record never prunes).
"""

from __future__ import annotations

from collections.abc import Sequence

from service.limits import DEFAULT_FILE_LIMITS, FileLimits
from service.parquet.footer import FileMetaData
from service.stats.extract import _all_null, _chunk, _is_null_residual, _schema_plan, _usable_raw_bounds
from service.stats.model import ShreddedObject
from service.variant.paths import ROOT, quote_field
from service.variant.schema import ShredNode, VariantColumn


def _proven(meta: FileMetaData, node: ShredNode) -> bool:
    if node.value is None:
        return True
    for rg in range(len(meta.row_groups)):
        cm = _chunk(meta, rg, node.value)
        if _all_null(cm):
            continue
        lo, hi = _usable_raw_bounds(meta, node.value, cm)
        if lo is None or lo != hi or not _is_null_residual(lo, node.concatenated):
            return False
    return True


def proven_objects(
    meta: FileMetaData, columns: Sequence[VariantColumn] | None = None, limits: FileLimits = DEFAULT_FILE_LIMITS
) -> tuple[ShreddedObject, ...]:
    """The objects the footer proves fully shredded, from each column's root down through object
    fields (each one on the way proven too); objects inside arrays are not recorded. ``columns``:
    the footer's Variant columns, found from its schema when not given."""
    if columns is None:
        columns = _schema_plan(meta.schema, limits).columns
    out: list[ShreddedObject] = []

    def walk(col: str, node: ShredNode, segs: tuple[str, ...]) -> None:
        if node.kind != "object" or not _proven(meta, node):
            return
        path = ".".join(quote_field(s) for s in segs) if segs else ROOT
        out.append(ShreddedObject(col, path, tuple(name for name, _ in node.fields)))
        for name, child in node.fields:
            walk(col, child, (*segs, name))

    for col in columns:
        walk(col.name, col.root, ())
    return tuple(out)


def file_objects(uri: str) -> tuple[ShreddedObject, ...]:
    """:func:`proven_objects` of one Parquet file (its footer only)."""
    from service.parquet.io import open_parquet, read_metadata

    with open_parquet(uri) as (info, f, _):
        meta, _in_hand = read_metadata(f, info.size)
    return proven_objects(meta)
