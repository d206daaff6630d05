"""What the extractor produces for one Parquet file: typed, frozen, DuckLake-shaped."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from service.values import Bound, ShreddedType, format_bound


@dataclass(frozen=True, slots=True)
class PathStats:
    """One row of ``ducklake_file_variant_stats`` (plus the Variant column it belongs to).

    ``min_value``/``max_value`` are typed (see :mod:`service.values`); ``None`` means the
    bound is unknown, never "empty". ``contains_nan`` is None for non-float types.
    """

    column: str
    variant_path: str
    shredded_type: ShreddedType
    column_size_bytes: int
    value_count: int
    null_count: int
    min_value: Bound | None
    max_value: Bound | None
    contains_nan: bool | None
    extra_stats: str | None = None

    @property
    def num_values(self) -> int:
        return self.value_count + self.null_count

    def ducklake_row(self) -> dict[str, Any]:
        """The row exactly as DuckLake stores it (bounds rendered as DuckDB VARCHARs)."""
        t = self.shredded_type
        return {
            "variant_path": self.variant_path,
            "shredded_type": t.name,
            "column_size_bytes": self.column_size_bytes,
            "value_count": self.value_count,
            "null_count": self.null_count,
            "min_value": None if self.min_value is None else format_bound(t, self.min_value),
            "max_value": None if self.max_value is None else format_bound(t, self.max_value),
            "contains_nan": self.contains_nan,
            "extra_stats": self.extra_stats,
        }


@dataclass(frozen=True, slots=True)
class ColumnStats:
    """One row of DuckLake's ``ducklake_file_column_stats`` for a plain (non-Variant) column.

    ``column`` is the column's name, dotted for struct leaves (``a.b``); ``column_type`` is the
    type its statistics are in, in the one value model (:mod:`service.values`), so the same
    evaluator and typed keys serve plain columns and Variant paths. ``None`` bounds are unknown.
    The pruning IR reads rows of both kinds alike: ``variant_path`` is ``None`` here.
    """

    column: str
    column_type: ShreddedType
    column_size_bytes: int
    value_count: int
    null_count: int
    min_value: Bound | None
    max_value: Bound | None
    contains_nan: bool | None
    extra_stats: str | None = None

    @property
    def variant_path(self) -> None:
        return None

    @property
    def shredded_type(self) -> ShreddedType:
        return self.column_type

    @property
    def num_values(self) -> int:
        return self.value_count + self.null_count

    def ducklake_row(self) -> dict[str, Any]:
        """The ``ducklake_file_column_stats`` columns exactly as DuckLake stores them (bounds
        rendered as DuckDB VARCHARs), without the ids."""
        t = self.column_type
        return {
            "column_size_bytes": self.column_size_bytes,
            "value_count": self.value_count,
            "null_count": self.null_count,
            "min_value": None if self.min_value is None else format_bound(t, self.min_value),
            "max_value": None if self.max_value is None else format_bound(t, self.max_value),
            "contains_nan": self.contains_nan,
            "extra_stats": self.extra_stats,
        }


#: A stats row of either kind: both carry the counts, the bounds, ``shredded_type`` and
#: ``variant_path`` (None for a plain column), which is all the merge and the verifier read.
StatsRow = PathStats | ColumnStats


@dataclass(frozen=True, slots=True)
class ShreddedObject:
    """A Variant object the footer proves fully shredded in one file: its residual ``value`` is
    absent, all null, or only Variant nulls, so in every row it holds no field but ``fields``
    (a key missing from ``fields`` is missing from every row). Not a DuckLake row: shredcat's own
    record, kept beside ``ducklake_file_variant_stats``.

    ``variant_path`` is the object's DuckLake path (``root``, ``"a"``, ``"a"."b"``); only objects
    reached through object fields from the column's root, each fully shredded, are recorded.
    """

    column: str
    variant_path: str
    fields: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class PartitionValue:
    """A Hive ``name=value`` directory segment of a file's path, typed (see
    :mod:`service.storage.partitions`). ``value`` is None for ``__HIVE_DEFAULT_PARTITION__``
    (SQL NULL; then ``raw`` is None too, and ``value_type`` is ``varchar`` until the column's
    type is known: NULLs take no part in :func:`~service.storage.partitions.merge_types`);
    ``raw`` is the unescaped text as it appears in the path. A ``float64`` value may be NaN,
    which is no bound (:func:`~service.storage.partitions.partition_stats` makes it
    ``contains_nan``)."""

    column: str
    raw: str | None
    value_type: ShreddedType
    value: Bound | None


@dataclass(frozen=True, slots=True)
class FileStats:
    """Everything the catalog stores about one data file."""

    path: str
    file_size_bytes: int
    record_count: int
    footer_size: int
    #: Identifies the content at ``path`` (object-store etag, or mtime+size for local files), so
    #: that re-registering a path whose bytes changed is detected.
    content_id: str | None
    #: Every Variant column found (dotted names for Variant fields nested in structs), including
    #: those with no fully shredded path.
    variant_columns: tuple[str, ...]
    paths: tuple[PathStats, ...] = field(default_factory=tuple)
    #: Plain-column statistics from the footer (DuckLake's ``ducklake_file_column_stats``).
    columns: tuple[ColumnStats, ...] = field(default_factory=tuple)
    #: Hive partition values from the file's path, relative to the table's location.
    partitions: tuple[PartitionValue, ...] = field(default_factory=tuple)
    #: The objects the footer proves fully shredded (:mod:`service.stats.objects`): a field one of
    #: them lacks is absent from every row. Empty = nothing proven (never "no field anywhere").
    objects: tuple[ShreddedObject, ...] = field(default_factory=tuple)


def union_variant_columns(files: Iterable[FileStats]) -> list[str]:
    """The Variant columns of ``files``, each once, in the order they first appear (what a table
    created for them is given)."""
    return list(dict.fromkeys(c for f in files for c in f.variant_columns))
