"""Turning a commit request into :class:`~service.stats.model.FileStats`, before the catalog sees it.

* **By path**: every path is checked against the warehouse roots first (:mod:`service.api.paths`);
  only then are the files read, by the extractor, in the app's bounded thread pool. A local file is
  opened beneath its root without following symlinks (what is read is what was checked) and its
  footer is read only when no longer than ``SHREDCAT_MAX_FOOTER_BYTES``. The first
  failure cancels the rest and fails the request (nothing is committed).
* **With client statistics**: every row is checked (types, DuckLake path syntax, bounds, counts
  consistent with the file's record count) and the first bad one fails the request with 422 naming
  the file and the field (``details.field``, e.g. ``body.files[2].variant-stats[0].min_value``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait

from service.api.paths import CheckedPath, WarehouseRoot, check_file_path
from service.api.schemas import FileStatsBody
from service.errors import InvalidParquetError, InvalidStatsError, ShredcatError
from service.stats.model import FileStats, PathStats
from service.values import ShreddedType, parse_bound
from service.variant.paths import parse_variant_path_steps

log = logging.getLogger("service.api")

#: Bytes of a Parquet file besides its footer: "PAR1", footer length (4), "PAR1".
PARQUET_OVERHEAD = 12


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


def _extract_one(checked: CheckedPath, max_footer_bytes: int) -> FileStats:
    from service.stats import extract

    path = checked.path
    try:
        if checked.root is not None:
            return extract.extract_file_beneath(checked.root, path, max_footer_bytes=max_footer_bytes)
        return extract.extract_file(path, max_footer_bytes=max_footer_bytes)
    except ShredcatError:
        raise
    except Exception as e:  # a bug in the extractor on a strange file must not become a 500 loop
        log.exception("extracting %s failed", path)
        raise InvalidParquetError(
            f"{path}: cannot read the file's statistics ({type(e).__name__})", details={"path": path}
        ) from None


def extract_all(paths: Sequence[CheckedPath], executor: ThreadPoolExecutor, *, max_footer_bytes: int) -> list[FileStats]:
    """Extract every file (in the bounded pool); the first error cancels the rest and is raised."""
    if not paths:
        return []
    if len(paths) == 1:
        return [_extract_one(paths[0], max_footer_bytes)]
    futures: list[Future[FileStats]] = [executor.submit(_extract_one, p, max_footer_bytes) for p in paths]
    _, pending = wait(futures, return_when=FIRST_EXCEPTION)
    for f in futures:
        if f.done() and not f.cancelled() and f.exception() is not None:
            for other in pending:
                other.cancel()
            wait([p for p in pending if not p.cancelled()])
            raise f.exception()  # type: ignore[misc]
    return [f.result() for f in futures]


def _bad(field: str, path: str, message: str) -> InvalidStatsError:
    return InvalidStatsError(f"{path}: {field.removeprefix('body.')}: {message}", details={"field": field, "path": path})


def file_from_body(i: int, f: FileStatsBody, roots: Sequence[WarehouseRoot]) -> FileStats:
    """Validate one client-supplied file and build its FileStats (raises naming file and field)."""
    where = f"body.files[{i}]"
    try:
        checked = check_file_path(f.path, roots, resolve=False)
    except ShredcatError as e:
        e.details.setdefault("field", f"{where}.path")
        raise
    path = f.path
    if f.file_size_bytes < f.footer_size + PARQUET_OVERHEAD:
        raise _bad(
            f"{where}.file-size-bytes", path,
            f"{f.file_size_bytes} bytes cannot hold a {f.footer_size}-byte footer (needs footer-size + 12)",
        )
    columns = tuple(f.variant_columns)
    if len(set(columns)) != len(columns):
        raise _bad(f"{where}.variant-columns", path, "duplicate column name")
    rows: list[PathStats] = []
    seen: set[tuple[str, str]] = set()
    for j, r in enumerate(f.variant_stats):
        at = f"{where}.variant-stats[{j}]"
        if r.file is not None and r.file != path:
            raise _bad(f"{at}.file", path, f"row of another file ({r.file!r})")
        if r.column not in columns:
            raise _bad(f"{at}.column", path, f"{r.column!r} is not among variant-columns {list(columns)}")
        try:
            t = ShreddedType.parse(r.shredded_type)
        except ShredcatError as e:
            raise _bad(f"{at}.shredded_type", path, e.message) from None
        try:
            steps = parse_variant_path_steps(r.variant_path)
        except ShredcatError as e:
            raise _bad(f"{at}.variant_path", path, e.message) from None
        key = (r.column, r.variant_path)
        if key in seen:
            raise _bad(f"{at}.variant_path", path, f"column {r.column!r} path {r.variant_path} is reported twice")
        seen.add(key)
        in_array = any(is_array for _, is_array in steps)
        if not in_array and r.value_count + r.null_count != f.record_count:
            raise _bad(
                f"{at}.value_count", path,
                f"value_count + null_count = {r.value_count + r.null_count}, but a path outside arrays has "
                f"exactly one entry per record (record-count {f.record_count})",
            )
        if r.column_size_bytes > f.file_size_bytes:
            raise _bad(f"{at}.column_size_bytes", path, "larger than the file")
        bounds = []
        for name, text in (("min_value", r.min_value), ("max_value", r.max_value)):
            if text is None:
                bounds.append(None)
                continue
            if r.value_count == 0:
                raise _bad(f"{at}.{name}", path, "a bound was given but value_count is 0")
            try:
                bounds.append(parse_bound(t, text))
            except ShredcatError as e:
                raise _bad(f"{at}.{name}", path, e.message) from None
        lo, hi = bounds
        if lo is not None and hi is not None and hi < lo:  # type: ignore[operator]
            raise _bad(f"{at}.max_value", path, f"max {r.max_value!r} is below min {r.min_value!r}")
        if r.contains_nan is not None:
            if not t.is_float:
                raise _bad(f"{at}.contains_nan", path, f"only float types have contains_nan (type {t.name})")
            if r.contains_nan and r.value_count == 0:
                raise _bad(f"{at}.contains_nan", path, "contains_nan is true but value_count is 0")
        rows.append(
            PathStats(
                column=r.column,
                variant_path=r.variant_path,
                shredded_type=t,
                column_size_bytes=r.column_size_bytes,
                value_count=r.value_count,
                null_count=r.null_count,
                min_value=lo,
                max_value=hi,
                contains_nan=r.contains_nan,
                extra_stats=r.extra_stats,
            )
        )
    return FileStats(
        path=checked.path,
        file_size_bytes=f.file_size_bytes,
        record_count=f.record_count,
        footer_size=f.footer_size,
        content_id=f.content_id,
        variant_columns=columns,
        paths=tuple(rows),
    )
