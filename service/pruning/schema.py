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

from service.errors import UnknownColumnError
from service.values import ShreddedType

#: Close names suggested for a column the table does not have.
MAX_SUGGESTIONS = 3


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

    def partition_types(self) -> dict[str, ShreddedType | None]:
        """Each partition column's type as a predicate reads it (declared, or Spark's merge over
        the live files; None when every value is NULL)."""
        return {n: c.type for n, c in self.columns.items() if c.partition}

    def names(self) -> list[str]:
        """Every column name, Variant columns first, for error messages."""
        return [*self.variant_columns, *self.columns]

    def resolve_variant(self, name: str) -> str | None:
        """The Variant column ``name`` names (exact first, then the one case-insensitive match)."""
        if name in self.variant_columns:
            return name
        folded = [c for c in self.variant_columns if c.casefold() == name.casefold()]
        return folded[0] if len(folded) == 1 else None

    def is_struct_prefix(self, name: str) -> bool:
        """Whether ``name`` is a struct holding columns of the table (``a`` of ``a.b``): a known
        name, though not one a term can compare."""
        prefix = name.casefold() + "."
        return any(n.casefold().startswith(prefix) for n in self.names())

    def knows(self, name: str) -> bool:
        """Whether ``name`` is any column of the table (plain, partition, Variant or a struct)."""
        return self.resolve(name) is not None or self.resolve_variant(name) is not None or self.is_struct_prefix(name)

    def unknown_column(self, name: str, *, variant: bool = False) -> UnknownColumnError:
        """The error for a name the table does not have (``variant``: where a Variant column is
        needed, as the first argument of ``variant_get``)."""
        import difflib  # only on this error path

        have = list(self.variant_columns) if variant else self.names()
        listed = ", ".join(have) if have else "none"
        close = difflib.get_close_matches(name, have, n=MAX_SUGGESTIONS) or [
            c for c in have if c.casefold() == name.casefold()
        ]
        hint = f" (did you mean {' or '.join(close)}?)" if close else ""
        what, whose = ("Variant column", "its Variant columns") if variant else ("column", "its columns")
        return UnknownColumnError(
            f"the table has no {what} {name!r}; {whose}: {listed}{hint}",
            details={"column": name, "unknown_columns": [name], "columns": have, "suggestions": close},
        )
