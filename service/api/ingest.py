"""Turning a commit request into :class:`~service.stats.model.FileStats`, before the catalog sees it.

* **By prefix**: every prefix is checked against the warehouse roots, then its data files are
  listed (:func:`service.storage.list_data_files`, Spark's rules, the store's paginated listing,
  stopped once the files-per-commit limit is passed) and each is checked and read like a path.
* **By path**: every path is checked against the warehouse roots first (:mod:`service.api.paths`);
  only then are the files read, by the extractor: local files in the app's bounded thread pool,
  object-store files with ``SHREDCAT_OBJECT_STORE_CONCURRENCY`` requests in flight. A local file is
  opened beneath its root without following symlinks (what is read is what was checked) and its
  footer is read only when no longer than ``SHREDCAT_MAX_FOOTER_BYTES``. The first
  failure cancels the rest and fails the request (nothing is committed).
* **With client statistics**: the JSON is turned into FileStats (type names and bound strings
  parsed) and checked by the catalog's one validator (:mod:`service.catalog.validate`), with the
  rule that counts add up to the file's record count. The first bad row fails the request (422, or
  413 for a limit) naming the file and the field (``details.field``, e.g.
  ``body.files[2].variant-stats[0].min_value``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import Executor
from functools import partial

from service.api.paths import CheckedPath, CheckedPrefix, WarehouseRoot, check_file_path, check_prefix
from service.api.schemas import ColumnStatsRowIn, FileStatsBody, VariantStatsRowIn
from service.catalog.validate import check_file_count, check_row_count, row_where, validate_file
from service.errors import FileAccessError, InvalidParquetError, InvalidStatsError, ShredcatError
from service.limits import DEFAULT_FILE_LIMITS, FileLimits, Limits
from service.stats.model import ColumnStats, FileStats, PathStats, ShreddedObject
from service.values import Bound, ShreddedType, parse_bound

log = logging.getLogger("service.api")


def check_paths(paths: Sequence[str], roots: Sequence[WarehouseRoot], field: str = "body.paths") -> list[CheckedPath]:
    """Check every path (``field``: the request field of the list, or of the single path)."""
    out = []
    for i, p in enumerate(paths):
        try:
            out.append(check_file_path(p, roots, resolve=True))
        except ShredcatError as e:
            e.details.setdefault("field", f"{field}[{i}]" if field.endswith("paths") else field)
            raise
    return out


def expand_prefixes(
    prefixes: Sequence[str], roots: Sequence[WarehouseRoot], limits: Limits, *, given: int = 0
) -> list[CheckedPath]:
    """The data files under every prefix, each checked like a path given by name. ``given``: files
    the request names otherwise; their count and the listed ones together stay within the limit
    (the listing stops as soon as it is passed). Each store location is listed once: a prefix
    given twice, or lying under another given prefix, is served from that listing
    (:func:`~service.storage.listing.covering_prefixes`). An empty prefix is an error: nothing under
    it would be committed, which is never what the caller meant."""
    from service.storage import list_data_files
    from service.storage.listing import covering_prefixes

    checked: list[CheckedPrefix] = []
    for i, p in enumerate(prefixes):
        try:
            checked.append(check_prefix(p, roots))
        except ShredcatError as e:
            e.details.setdefault("field", f"body.prefixes[{i}]")
            raise
    covers = covering_prefixes([c.prefix for c in checked])
    first: dict[str, int] = {}  # a covering prefix -> the first index that gave it
    for j, c in enumerate(checked):
        first.setdefault(_slashed(c.prefix), j)
    out: list[CheckedPath] = []
    listed: dict[str, list[str]] = {}
    for i, (p, cover) in enumerate(zip(prefixes, covers, strict=True)):
        field = f"body.prefixes[{i}]"
        try:
            if cover not in listed:
                files = list_data_files(checked[first[cover]].prefix, limit=max(limits.max_files_per_commit - given - len(out), 0))
                check_file_count(given + len(out) + len(files), limits)
                listed[cover] = files
                out.extend(check_file_path(f, roots, resolve=True) for f in files)
            own = _slashed(checked[i].prefix)
            if not any(f.startswith(own) or f == checked[i].prefix for f in listed[cover]):
                raise FileAccessError(f"{p}: no Parquet data files under this prefix", details={"path": p})
        except ShredcatError as e:
            e.details.setdefault("field", field)
            raise
    return out


def _slashed(prefix: str) -> str:
    return prefix if prefix.endswith("/") else prefix + "/"


def extract_checked(checked: CheckedPath, max_footer_bytes: int, limits: FileLimits = DEFAULT_FILE_LIMITS) -> FileStats:
    """The stats of one checked path (local files opened beneath their root) within the per-file
    ``limits``; errors name the path."""
    from service.stats import extract

    path = checked.path
    try:
        if checked.root is not None:
            return extract.extract_file_beneath(checked.root, path, max_footer_bytes=max_footer_bytes, limits=limits)
        return extract.extract_file(path, max_footer_bytes=max_footer_bytes, limits=limits)
    except ShredcatError:
        raise
    except Exception as e:  # a bug in the extractor on a strange file must not become a 500 loop
        log.exception("extracting %s failed", path)
        raise InvalidParquetError(
            f"{path}: cannot read the file's statistics ({type(e).__name__})", details={"path": path}
        ) from None


def extract_all(
    paths: Sequence[CheckedPath], executor: Executor, *, max_footer_bytes: int, limits: FileLimits = DEFAULT_FILE_LIMITS
) -> list[FileStats]:
    """Extract every file: local ones in the bounded pool, object-store ones with
    ``SHREDCAT_OBJECT_STORE_CONCURRENCY`` requests in flight (:func:`service.stats.batch.extract_all`).
    The first error cancels the rest and is raised."""
    if not paths:
        return []
    from service.stats.batch import extract_all as extract_each

    extract = partial(extract_checked, max_footer_bytes=max_footer_bytes, limits=limits)
    return extract_each(paths, extract=extract, path_of=_path_of, executor=executor)


def _path_of(checked: CheckedPath) -> str:
    return checked.path


#: FileStats attributes -> their JSON keys in a commit body (stats rows keep DuckLake's names).
_FILE_FIELDS = {
    "path": "path",
    "file_size_bytes": "file-size-bytes",
    "record_count": "record-count",
    "footer_size": "footer-size",
    "content_id": "content-id",
    "variant_columns": "variant-columns",
    "paths": "variant-stats",
}


def _field(where: str, details: dict[str, object]) -> str:
    """The JSON field of an error located by the validator (``details`` attribute and row)."""
    attribute = details.pop("attribute", None)
    row = details.pop("row", None)
    rows = "column-stats" if details.pop("rows", None) == "columns" else "variant-stats"
    if row is not None:
        return f"{where}.{rows}[{row}]" + (f".{attribute}" if attribute else "")
    if attribute == "partitions":
        return f"{where}.path"  # partition values come from the path
    return f"{where}.{_FILE_FIELDS[attribute]}" if isinstance(attribute, str) else where


def _column_row(at: str, path: str, r: ColumnStatsRowIn) -> ColumnStats:
    """One plain column's row as typed ColumnStats (type name and bounds parsed)."""

    def bad(attribute: str, message: str) -> InvalidStatsError:
        return InvalidStatsError(
            f"{path}: column {r.column!r}: {message}", details={"field": f"{at}.{attribute}", "path": path}
        )

    if r.file is not None and r.file != path:
        raise bad("file", f"row of another file ({r.file!r})")
    try:
        t = ShreddedType.parse(r.column_type)
    except ShredcatError as e:
        raise bad("column_type", e.message) from None
    bounds: list[Bound | None] = []
    for name, text in (("min_value", r.min_value), ("max_value", r.max_value)):
        try:
            bounds.append(None if text is None else parse_bound(t, text))
        except ShredcatError as e:
            raise bad(name, e.message) from None
    return ColumnStats(
        column=r.column,
        column_type=t,
        column_size_bytes=r.column_size_bytes,
        value_count=r.value_count,
        null_count=r.null_count,
        min_value=bounds[0],
        max_value=bounds[1],
        contains_nan=r.contains_nan,
        extra_stats=r.extra_stats,
    )


def _bad(at: str, path: str, r: VariantStatsRowIn, attribute: str, message: str) -> InvalidStatsError:
    return InvalidStatsError(
        f"{path}: {row_where(r.column, r.variant_path)}: {message}", details={"field": f"{at}.{attribute}", "path": path}
    )


def _row(at: str, path: str, r: VariantStatsRowIn) -> PathStats:
    """One stats row as typed PathStats (type name and bound strings parsed; nothing else checked)."""
    if r.file is not None and r.file != path:
        raise _bad(at, path, r, "file", f"row of another file ({r.file!r})")
    try:
        t = ShreddedType.parse(r.shredded_type)
    except ShredcatError as e:
        raise _bad(at, path, r, "shredded_type", e.message) from None
    bounds: list[Bound | None] = []
    for name, text in (("min_value", r.min_value), ("max_value", r.max_value)):
        try:
            bounds.append(None if text is None else parse_bound(t, text))
        except ShredcatError as e:
            raise _bad(at, path, r, name, e.message) from None
    return PathStats(
        column=r.column,
        variant_path=r.variant_path,
        shredded_type=t,
        column_size_bytes=r.column_size_bytes,
        value_count=r.value_count,
        null_count=r.null_count,
        min_value=bounds[0],
        max_value=bounds[1],
        contains_nan=r.contains_nan,
        extra_stats=r.extra_stats,
    )


def file_from_body(i: int, f: FileStatsBody, roots: Sequence[WarehouseRoot], limits: Limits) -> FileStats:
    """One client-supplied file as FileStats, checked by the catalog's validator (with the record
    count rule of client stats); errors name the file and the JSON field (``details.field``)."""
    where = f"body.files[{i}]"
    try:
        checked = check_file_path(f.path, roots, resolve=False)
    except ShredcatError as e:
        e.details.setdefault("field", f"{where}.path")
        raise
    try:
        check_row_count(checked.path, len(f.variant_stats) + len(f.column_stats), limits)  # before any row is parsed
        fs = FileStats(
            path=checked.path,
            file_size_bytes=f.file_size_bytes,
            record_count=f.record_count,
            footer_size=f.footer_size,
            content_id=f.content_id,
            variant_columns=tuple(f.variant_columns),
            paths=tuple(_row(f"{where}.variant-stats[{j}]", checked.path, r) for j, r in enumerate(f.variant_stats)),
            columns=tuple(
                _column_row(f"{where}.column-stats[{j}]", checked.path, r) for j, r in enumerate(f.column_stats)
            ),
            objects=tuple(
                ShreddedObject(o.column, o.variant_path, tuple(o.fields)) for o in f.shredded_objects
            ),
        )
        return validate_file(fs, limits, check_record_counts=True)
    except ShredcatError as e:
        if "field" not in e.details:
            e.details["field"] = _field(where, e.details)
        raise
