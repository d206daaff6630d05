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

from service.stats.extract import proven_objects
from service.stats.model import ShreddedObject

__all__ = ["file_objects", "proven_objects"]


def file_objects(uri: str) -> tuple[ShreddedObject, ...]:
    """:func:`proven_objects` of one Parquet file (its footer only)."""
    from service.parquet.io import open_parquet, read_metadata

    with open_parquet(uri) as (info, f, _):
        meta, _in_hand = read_metadata(f, info.size)
    return proven_objects(meta)
