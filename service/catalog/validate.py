"""Checks on what a writer commits (pure: no database). Every error names the offending file.

The catalog accepts statistics from clients (REST, Spark drivers), so every FileStats is checked and
normalised (bounds through :func:`service.values.check_bound`) before it reaches SQL.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Sequence

from service.errors import ConflictError, InvalidStatsError, LimitExceededError, ShredcatError
from service.stats.model import FileStats, PathStats
from service.values import Bound, ShreddedType, bound_checker, format_bound

#: Longest file path / variant path accepted (bytes of UTF-8): both sit in B-tree index keys.
MAX_PATH_BYTES = 2048
MAX_NAME_BYTES = 1024
#: Largest batch in one commit.
MAX_FILES_PER_COMMIT = 100_000


def _is_count(v: object) -> bool:
    return type(v) is int and 0 <= v < 2**63  # type: ignore[operator]


def check_name(kind: str, name: object) -> str:
    if not isinstance(name, str) or not name or len(name.encode("utf-8")) > MAX_NAME_BYTES or "\x00" in name:
        raise InvalidStatsError(f"invalid {kind} name {name!r}")
    return name


def _file_error(path: str, msg: str, cls: type[ShredcatError] = InvalidStatsError) -> ShredcatError:
    return cls(f"{path}: {msg}", details={"path": path})


def _where(ps: PathStats) -> str:
    return f"column {getattr(ps, 'column', None)!r} path {getattr(ps, 'variant_path', None)!r}"


def _check_path_stats(
    fpath: str, columns: Collection[str], ps: PathStats, checkers: dict[int, Callable[[Bound], Bound]]
) -> PathStats:
    # Hot loop (one call per stats row): cheap checks first, messages built only on error.
    if type(ps) is not PathStats:
        raise _file_error(fpath, f"expected PathStats, got {type(ps).__name__}")
    if ps.column not in columns:
        raise _file_error(fpath, f"{_where(ps)}: the column is not among the file's Variant columns")
    vp = ps.variant_path
    if type(vp) is not str or not vp or "\x00" in vp:
        raise _file_error(fpath, f"{_where(ps)}: invalid variant_path")
    if len(vp) > MAX_PATH_BYTES // 4 and len(vp.encode("utf-8")) > MAX_PATH_BYTES:
        raise _file_error(
            fpath, f"{_where(ps)}: variant_path longer than {MAX_PATH_BYTES} bytes", LimitExceededError
        )
    t = ps.shredded_type
    if type(t) is not ShreddedType:
        raise _file_error(fpath, f"{_where(ps)}: shredded_type must be a ShreddedType")
    if not (_is_count(ps.column_size_bytes) and _is_count(ps.value_count) and _is_count(ps.null_count)):
        raise _file_error(
            fpath,
            f"{_where(ps)}: column_size_bytes, value_count and null_count must be non-negative integers",
        )
    lo, hi = ps.min_value, ps.max_value
    try:
        check = checkers.get(id(t))
        if check is None:
            check = checkers[id(t)] = bound_checker(t)
        if lo is not None:
            lo = check(lo)
        if hi is not None:
            hi = check(hi)
            if lo is not None and hi < lo:  # type: ignore[operator]
                raise InvalidStatsError(f"min {format_bound(t, lo)!r} > max {format_bound(t, hi)!r}")
    except InvalidStatsError as e:
        raise _file_error(fpath, f"{_where(ps)}: {e.message}") from None
    nan = ps.contains_nan
    if nan is not None:
        if not t.is_float:
            raise _file_error(fpath, f"{_where(ps)}: contains_nan is only defined for float types")
        if type(nan) is not bool:
            raise _file_error(fpath, f"{_where(ps)}: contains_nan must be a boolean or None")
    if ps.extra_stats is not None and type(ps.extra_stats) is not str:
        raise _file_error(fpath, f"{_where(ps)}: extra_stats must be a string or None")
    if lo is ps.min_value and hi is ps.max_value:
        return ps
    return dataclasses.replace(ps, min_value=lo, max_value=hi)


def validate_file(f: FileStats, _checkers: dict[int, Callable[[Bound], Bound]] | None = None) -> FileStats:
    """Check one file's stats; returns it with normalised bounds. Raises InvalidStatsError (or
    LimitExceededError) naming the file."""
    if not isinstance(f, FileStats):
        raise InvalidStatsError(f"expected FileStats, got {type(f).__name__}")
    path = f.path
    if not isinstance(path, str) or not path or "\x00" in path:
        raise InvalidStatsError(f"invalid file path {path!r}")
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise _file_error(path, f"path longer than {MAX_PATH_BYTES} bytes", LimitExceededError)
    for name in ("file_size_bytes", "record_count", "footer_size"):
        if not _is_count(getattr(f, name)):
            raise _file_error(path, f"{name} must be a non-negative integer")
    if f.content_id is not None and (not isinstance(f.content_id, str) or len(f.content_id) > MAX_NAME_BYTES):
        raise _file_error(path, "content_id must be a string of at most 1024 characters or None")
    cols = f.variant_columns
    if (
        not isinstance(cols, tuple)
        or not all(isinstance(c, str) and c for c in cols)
        or len(set(cols)) != len(cols)
    ):
        raise _file_error(path, "variant_columns must be a tuple of distinct non-empty names")
    # Per ShreddedType object (alive for the whole call, so its id cannot be reused meanwhile).
    checkers: dict[int, Callable[[Bound], Bound]] = {} if _checkers is None else _checkers
    seen: set[tuple[str, str]] = set()
    out: list[PathStats] = []
    changed = False
    for ps in f.paths:
        nps = _check_path_stats(path, cols, ps, checkers)
        key = (nps.column, nps.variant_path)
        if key in seen:
            raise _file_error(path, f"column {key[0]!r} path {key[1]!r} is reported twice")
        seen.add(key)
        changed |= nps is not ps
        out.append(nps)
    if changed or not isinstance(f.paths, tuple):
        return dataclasses.replace(f, paths=tuple(out))
    return f


def check_table_columns(f: FileStats, table_columns: Collection[str], table: str) -> None:
    extra = [c for c in f.variant_columns if c not in table_columns]
    if extra:
        raise _file_error(
            f.path,
            f"Variant column(s) {', '.join(map(repr, extra))} not in table {table} "
            f"(its Variant columns: {', '.join(map(repr, table_columns)) or 'none'})",
        )


def identity(f: FileStats) -> tuple[str | None, int, int, int]:
    """What must match for a path already live to count as the same content."""
    return (f.content_id, f.file_size_bytes, f.record_count, f.footer_size)


def validate_batch(files: Iterable[FileStats]) -> list[FileStats]:
    """Validate a commit batch: each file, and the same path at most once (an identical repeat is
    dropped; the same path with different content is a ConflictError)."""
    out: dict[str, FileStats] = {}
    checkers: dict[int, Callable[[Bound], Bound]] = {}
    for f in files:
        v = validate_file(f, checkers)
        prev = out.get(v.path)
        if prev is None:
            out[v.path] = v
        elif prev != v:
            raise _file_error(
                v.path, "appears twice in the batch with different content or stats", ConflictError
            )
        if len(out) > MAX_FILES_PER_COMMIT:
            raise LimitExceededError(f"at most {MAX_FILES_PER_COMMIT} files per commit")
    return list(out.values())


def request_hash(files: Sequence[FileStats]) -> str:
    """A stable digest of a commit request (for idempotency keys): order of files does not matter."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda f: f.path):
        rows = sorted(
            ([ps.column, *ps.ducklake_row().values()] for ps in f.paths),
            key=lambda r: (r[0], r[1]),
        )
        doc = [f.path, list(identity(f)), list(f.variant_columns), rows]
        h.update(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()
