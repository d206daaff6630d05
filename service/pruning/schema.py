"""What a predicate may name: the table's columns, as the parsers resolve identifiers against them.

A predicate is parsed against a :class:`TableSchema`: ``variant_get(v, ...)`` needs ``v`` among
the Variant columns; a bare identifier must be a plain or partition column (else the request
fails naming the column and listing the table's columns). A plain column whose type has no
place in the value model (a list, a map, INT96 without a proven order...) is still a column:
terms on it are parsed, and never prune.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from service.values import ShreddedType


@dataclass(frozen=True, slots=True)
class ColumnInfo:
    """A plain or partition column: dotted name for a struct leaf; ``type`` None when its values
    cannot be compared in the value model (the column is known, its terms never prune)."""

    name: str
    type: ShreddedType | None
    partition: bool = False


@dataclass(frozen=True, slots=True)
class TableSchema:
    """The names a predicate on one table may use. ``columns`` is keyed by the exact name;
    Spark resolves identifiers case-insensitively, so lookups go through :meth:`resolve`."""

    variant_columns: tuple[str, ...] = ()
    columns: Mapping[str, ColumnInfo] = field(default_factory=lambda: MappingProxyType({}))

    def resolve(self, name: str) -> ColumnInfo | None:
        """The plain/partition column ``name`` names (exact match first, then the one
        case-insensitive match), or None."""
        hit = self.columns.get(name)
        if hit is not None:
            return hit
        folded = [c for n, c in self.columns.items() if n.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else None

    def names(self) -> list[str]:
        """Every column name, Variant columns first, for error messages."""
        return [*self.variant_columns, *self.columns]
