"""Partition typing: the Hive ``name=value`` partition values of committed files, read from their
paths as Spark's partition discovery types them (:func:`path_partitions`), or as a table sees them,
under its location and typed as it declares (:func:`table_partitions`); and the checked partition
declarations of a new table (:func:`partition_declarations`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from service.catalog.validate import check_name
from service.errors import BadInputError, InvalidStatsError, ShredcatError
from service.stats.model import FileStats, PartitionValue
from service.values import ShreddedType

if TYPE_CHECKING:
    from service.catalog.repository.tables import TableRow


def path_partitions(files: Iterable[FileStats]) -> list[FileStats]:
    """Files with the partition values of their paths (every ``name=value`` segment, typed as
    Spark infers each): the one way a file gets partition values (what a caller put in
    ``FileStats.partitions`` is replaced). A path Spark would refuse (``a=``, a column twice):
    InvalidStatsError naming the file."""
    out = []
    # The values depend on the directories only (the file name is never a segment): a batch's
    # files share a few directories, each parsed once. The tuples are shared too, which lets the
    # validator and the encoder do their per-value work once per directory.
    by_dir: dict[str, tuple[PartitionValue, ...]] = {}
    for f in files:
        if not isinstance(f, FileStats) or not isinstance(f.path, str):
            out.append(f)  # the validator names what is wrong
            continue
        try:
            pvs: tuple[PartitionValue, ...] = ()
            if "=" in f.path:  # no partition segment otherwise: the parser is not even imported
                from service.storage.partitions import partition_values

                head, _, name = f.path.rpartition("/")
                cached = by_dir.get(head) if name else None
                if cached is None:
                    cached = partition_values(f.path)
                    if name:
                        by_dir[head] = cached
                pvs = cached
        except ShredcatError as e:
            msg = e.message if f.path in e.message else f"{f.path}: {e.message}"
            raise InvalidStatsError(msg, details={"path": f.path, "attribute": "partitions"}) from None
        out.append(f if pvs == f.partitions else replace(f, partitions=pvs))
    return out


def partitions_depend_on(t: TableRow) -> bool:
    """Whether ``t``'s partition values differ from its paths' own: under a location, or declared."""
    return t.location is not None or any(c.partition and c.declared for c in t.plain.values())


def table_partitions(t: TableRow, files: list[FileStats]) -> list[FileStats]:
    """Files' partition values as the table sees them: relative to its location (only segments
    below it), typed as it declares (a value that is not of the declared type, or a file outside
    the location: InvalidStatsError naming the file)."""
    if not partitions_depend_on(t):
        return path_partitions(files)
    declared = {name: c.type_name for name, c in t.plain.items() if c.partition and c.declared}
    from service.storage.partitions import partition_values, retype

    out = []
    for f in files:
        try:
            pvs = partition_values(f.path, base=t.location)
            if declared:
                pvs = tuple(
                    retype(pv, ShreddedType.parse(declared[pv.column])) if pv.column in declared else pv for pv in pvs
                )
        except ShredcatError as e:
            msg = e.message if f.path in e.message else f"{f.path}: {e.message}"
            raise InvalidStatsError(msg, details={"path": f.path, "attribute": "partitions"}) from None
        out.append(replace(f, partitions=tuple(pvs)))
    return out


def partition_declarations(
    declared: Mapping[str, str] | Sequence[tuple[str, str]], variant_columns: Sequence[str]
) -> list[tuple[str, str]]:
    """Declared partition columns as ``(name, type name)``, checked."""
    items = list(declared.items()) if isinstance(declared, Mapping) else list(declared)
    out: list[tuple[str, str]] = []
    for item in items:
        if not (isinstance(item, tuple | list) and len(item) == 2 and all(isinstance(x, str) for x in item)):
            raise BadInputError(f"a partition column is a (name, type) pair, not {item!r}", details={"field": "partition-columns"})
        name, tname = item
        check_name("partition column", name)
        try:
            st = ShreddedType.parse(tname)
        except ShredcatError as e:
            raise BadInputError(
                f"partition column {name!r}: {e.message}", details={"field": "partition-columns", "column": name}
            ) from None
        if name in variant_columns or any(n == name for n, _ in out):
            raise BadInputError(f"duplicate column {name!r}", details={"field": "partition-columns", "column": name})
        out.append((name, st.name))
    return out
