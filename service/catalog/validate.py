"""The one validator of what a writer commits (pure: no database, no settings).

Every FileStats reaches SQL through :func:`validate_batch`: the library API (``Catalog.commit``),
the REST commit by path (extracted stats) and the REST commit with client-side stats, which
:mod:`service.api.ingest` turns into FileStats and checks here first with ``check_record_counts``.
Bounds are normalised through :func:`service.values.check_bound`.

Every error names the file (``details["path"]``) and, when one attribute is at fault, where:
``details["attribute"]`` (a FileStats or PathStats attribute) and ``details["row"]`` (the index in
``FileStats.paths``), which the REST API maps to the JSON field it came from. Limits are given by
the caller as :class:`service.limits.Limits` (the catalog builds them from :class:`service.settings.Settings`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence

from service.errors import ConflictError, InvalidStatsError, LimitExceededError, ShredcatError
from service.limits import Limits
from service.stats.model import ColumnStats, FileStats, PartitionValue, PathStats
from service.values import COUNTS_ONLY_KINDS, Bound, ShreddedType, bound_checker, bound_lt, format_bound
from service.values.text import MAX_NAME_BYTES, NUL_NOT_STORED, lone_surrogate, shown, unstorable
from service.values.text import unstorable_name as _bad_name
from service.variant.paths import parse_variant_path_steps

#: Longest file path / variant path accepted (bytes of UTF-8): both sit in B-tree index keys.
MAX_PATH_BYTES = 2048
#: Bytes of a Parquet file besides its footer: "PAR1", footer length (4), "PAR1".
PARQUET_OVERHEAD = 12
#: Counts, sizes and their sums are stored as signed BIGINT.
MAX_COUNT = 2**63 - 1


def _is_count(v: object) -> bool:
    return type(v) is int and 0 <= v <= MAX_COUNT


def check_name(kind: str, name: object) -> str:
    if _bad_name(name):
        if isinstance(name, str) and lone_surrogate(name):
            raise InvalidStatsError(f"invalid {kind} name {shown(name)!r}: not valid Unicode (bytes that are not UTF-8?)")
        raise InvalidStatsError(f"invalid {kind} name {name!r}")
    assert isinstance(name, str)
    return name


#: What a namespace or table name may not hold: they are URL path segments of the REST API (no
#: '/', not a dot segment, which URL normalization removes) and fields of the CLI's tab-separated
#: output (no control character).
_OBJECT_NAME_FORBIDDEN = re.compile(r"[/\x00-\x1f\x7f]")


#: Characters a reader of a name cannot see, or that reorder what follows them on screen: controls
#: (C0 and C1), format characters (bidirectional overrides and isolates, zero-width ones, the BOM,
#: the soft hyphen) and line or paragraph separators. ``"invoice\u202egpj.csv"`` shows as
#: ``invoicevsc.jpg``; two names differing by a zero-width space look the same.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp"})


def _hidden_character(name: str) -> str | None:
    return next((c for c in name if unicodedata.category(c) in _HIDDEN_CATEGORIES), None)


def check_object_name(kind: str, name: object) -> str:
    """A new namespace's or table's name: :func:`check_name`, addressable in a URL path, shown as
    it is (no invisible or bidirectional control character) and in Unicode NFC, so that one name
    typed on any keyboard or file system is one name (an NFD "café" would otherwise be a second
    namespace, looking the same). Names from before these rules are never checked again."""
    check_name(kind, name)
    assert isinstance(name, str)
    if name in (".", "..") or _OBJECT_NAME_FORBIDDEN.search(name):
        raise InvalidStatsError(
            f"invalid {kind} name {name!r}: it may not be '.' or '..' nor hold '/' or a control character"
        )
    if (c := _hidden_character(name)) is not None:
        label = f"U+{ord(c):04X}" + (f" {unicodedata.name(c)}" if unicodedata.name(c, "") else "")
        raise InvalidStatsError(
            f"invalid {kind} name {name!a}: it holds {label}, an invisible or bidirectional "
            "control character"
        )
    if not unicodedata.is_normalized("NFC", name):
        raise InvalidStatsError(
            f"invalid {kind} name {name!a}: not in Unicode NFC (composed) form; "
            f"its NFC form is {unicodedata.normalize('NFC', name)!a}"
        )
    return name


def file_error(
    path: str,
    msg: str,
    cls: type[ShredcatError] = InvalidStatsError,
    *,
    attribute: str | None = None,
    row: int | None = None,
) -> ShredcatError:
    """An error about one file (and one of its attributes, of one stats row)."""
    details: dict[str, object] = {"path": path}
    if attribute is not None:
        details["attribute"] = attribute
    if row is not None:
        details["row"] = row
    return cls(f"{path}: {msg}", details=details)


def row_where(column: object, variant_path: object) -> str:
    return f"column {column!r} path {variant_path!r}"


def check_file_count(n: int, limits: Limits, what: str = "files") -> None:
    """At most ``limits.max_files_per_commit`` files (or paths to remove) in one request."""
    limit = limits.max_files_per_commit
    if n > limit:
        raise LimitExceededError(
            f"{n} {what} in one request: at most {limit} (SHREDCAT_MAX_FILES_PER_COMMIT)",
            details={"limit": limit, "count": n},
        )


def check_row_count(path: str, n: int, limits: Limits) -> None:
    """At most ``limits.max_stats_rows_per_file`` stats rows in one file."""
    limit = limits.max_stats_rows_per_file
    if n > limit:
        err = file_error(
            path,
            f"{n} statistics rows: at most {limit} per file (SHREDCAT_MAX_STATS_ROWS_PER_FILE)",
            LimitExceededError,
            attribute="paths",
        )
        err.details.update(limit=limit, count=n)
        raise err


class _Memo:
    """What a batch's rows share: one bound checker per ShreddedType object (alive for the whole
    call, so its id cannot be reused meanwhile), whether each variant path is inside an array, and
    the checked partition values per tuple object (files of one directory share theirs:
    :func:`service.catalog.partitions.path_partitions`), kept with the tuple itself."""

    __slots__ = ("checkers", "in_array", "partitions")

    def __init__(self) -> None:
        self.checkers: dict[int, Callable[[Bound], Bound]] = {}
        self.in_array: dict[str, bool] = {}
        self.partitions: dict[int, tuple[tuple[PartitionValue, ...], tuple[PartitionValue, ...]]] = {}


_COUNTS = ("column_size_bytes", "value_count", "null_count")


Row = PathStats | ColumnStats


def _row_error(
    f: FileStats, j: int, ps: Row, attribute: str, msg: str, cls: type[ShredcatError] = InvalidStatsError
) -> ShredcatError:
    if type(ps) is ColumnStats:
        err = file_error(f.path, f"column {ps.column!r}: {msg}", cls, attribute=attribute, row=j)
        err.details["rows"] = "columns"  # a row of FileStats.columns, not of FileStats.paths
        return err
    where = row_where(getattr(ps, "column", None), getattr(ps, "variant_path", None))
    return file_error(f.path, f"{where}: {msg}", cls, attribute=attribute, row=j)


def _check_row(
    f: FileStats, j: int, ps: PathStats, limits: Limits, memo: _Memo, check_record_counts: bool
) -> PathStats:
    # Hot loop (one call per stats row): cheap checks first, messages built only on error.
    if type(ps) is not PathStats:
        raise file_error(f.path, f"expected PathStats, got {type(ps).__name__}", row=j)
    if ps.column not in f.variant_columns:
        raise _row_error(f, j, ps, "column", f"the column is not among the file's Variant columns {list(f.variant_columns)}")
    vp = ps.variant_path
    if type(vp) is not str or not vp or "\x00" in vp:
        raise _row_error(f, j, ps, "variant_path", "invalid variant_path")
    if len(vp) > MAX_PATH_BYTES // 4 and len(vp.encode("utf-8")) > MAX_PATH_BYTES:
        raise _row_error(f, j, ps, "variant_path", f"variant_path longer than {MAX_PATH_BYTES} bytes", LimitExceededError)
    in_array = memo.in_array.get(vp)
    if in_array is None:
        if lone_surrogate(vp):
            raise _row_error(f, j, ps, "variant_path", "the variant_path is not valid Unicode")
        try:
            in_array = memo.in_array[vp] = any(is_array for _, is_array in parse_variant_path_steps(vp))
        except ShredcatError as e:
            raise _row_error(f, j, ps, "variant_path", e.message) from None
    if type(ps.shredded_type) is ShreddedType and ps.shredded_type.kind in COUNTS_ONLY_KINDS:
        # A plain column's type only: the Variant spec shreds no such type.
        raise _row_error(f, j, ps, "shredded_type", f"{ps.shredded_type.name} is not a shredded Variant type")
    out = _check_values(f, j, ps, limits, memo)
    if check_record_counts and not in_array and ps.value_count + ps.null_count != f.record_count:
        raise _row_error(
            f, j, ps, "value_count",
            f"value_count + null_count = {ps.value_count + ps.null_count}, but a path outside arrays has exactly "
            f"one entry per record (record_count {f.record_count})",
        )  # fmt: skip
    return out


def _check_column_row(f: FileStats, j: int, cs: ColumnStats, limits: Limits, memo: _Memo) -> ColumnStats:
    if type(cs) is not ColumnStats:
        err = file_error(f.path, f"expected ColumnStats, got {type(cs).__name__}", row=j)
        err.details["rows"] = "columns"
        raise err
    name = cs.column
    if _bad_name(name):
        raise _row_error(f, j, cs, "column", "invalid column name")
    if name in f.variant_columns:
        raise _row_error(f, j, cs, "column", "a Variant column of the file has no plain-column statistics")
    return _check_values(f, j, cs, limits, memo)


def _check_values(f: FileStats, j: int, ps: Row, limits: Limits, memo: _Memo) -> Row:
    """What a Variant path's row and a plain column's row share: type, counts, bounds, NaN,
    extra_stats. Returns the row with normalised bounds."""
    t = ps.shredded_type
    if type(t) is not ShreddedType:
        attr = "shredded_type" if type(ps) is PathStats else "column_type"
        raise _row_error(f, j, ps, attr, f"{attr} must be a ShreddedType")
    vc = ps.value_count
    if not (_is_count(ps.column_size_bytes) and _is_count(vc) and _is_count(ps.null_count)):
        name = next(n for n in _COUNTS if not _is_count(getattr(ps, n)))
        raise _row_error(f, j, ps, name, f"{name} must be an integer between 0 and {MAX_COUNT}")
    if ps.column_size_bytes > f.file_size_bytes:
        raise _row_error(
            f, j, ps, "column_size_bytes", f"column_size_bytes {ps.column_size_bytes} is larger than the file"
        )
    lo, hi = ps.min_value, ps.max_value
    if lo is not None or hi is not None:
        check = memo.checkers.get(id(t))
        if check is None:
            check = memo.checkers[id(t)] = bound_checker(t)
        if vc == 0:
            raise _row_error(
                f, j, ps, "min_value" if lo is not None else "max_value", "a bound was given but value_count is 0"
            )
        cap = limits.max_bound_chars
        if lo is not None:
            lo = _checked_bound(f, j, ps, "min_value", lo, check, cap)
        if hi is not None:
            hi = _checked_bound(f, j, ps, "max_value", hi, check, cap)
            if lo is not None and bound_lt(hi, lo):  # both bounds of one row have the row's type (checked above)
                raise _row_error(f, j, ps, "max_value", f"min {format_bound(t, lo)!r} > max {format_bound(t, hi)!r}")
    nan = ps.contains_nan
    if nan is not None:
        if type(nan) is not bool:
            raise _row_error(f, j, ps, "contains_nan", "contains_nan must be a boolean or None")
        if not t.is_float:
            raise _row_error(f, j, ps, "contains_nan", f"contains_nan is only defined for float types (type {t.name})")
        if nan and vc == 0:
            raise _row_error(f, j, ps, "contains_nan", "contains_nan is true but value_count is 0")
    extra = ps.extra_stats
    if extra is not None:
        if type(extra) is not str:
            raise _row_error(f, j, ps, "extra_stats", "extra_stats must be a string or None")
        if "\x00" in extra:
            raise _row_error(f, j, ps, "extra_stats", f"extra_stats: {NUL_NOT_STORED}")
        if len(extra) > limits.max_extra_stats_chars:
            raise _row_error(
                f, j, ps, "extra_stats",
                f"extra_stats longer than {limits.max_extra_stats_chars} (SHREDCAT_MAX_EXTRA_STATS_CHARS)",
                LimitExceededError,
            )
    if lo is ps.min_value and hi is ps.max_value:
        return ps
    return dataclasses.replace(ps, min_value=lo, max_value=hi)


def _checked_bound(
    f: FileStats, j: int, ps: Row, name: str, v: Bound, check: Callable[[Bound], Bound], cap: int
) -> Bound:
    """The bound ``name`` of a row normalised by ``check``, within ``cap`` characters."""
    if (type(v) is str or type(v) is bytes) and len(v) > cap:
        raise _row_error(f, j, ps, name, f"{name} longer than {cap} (SHREDCAT_MAX_BOUND_CHARS)", LimitExceededError)
    try:
        return check(v)
    except InvalidStatsError as e:
        raise _row_error(f, j, ps, name, e.message) from None


def validate_file(
    f: FileStats, limits: Limits, *, check_record_counts: bool = False, _memo: _Memo | None = None
) -> FileStats:
    """Check one file's stats; returns it with normalised bounds. Raises InvalidStatsError (or
    LimitExceededError) naming the file.

    ``check_record_counts`` also requires ``value_count + null_count == record_count`` for paths
    outside arrays. It is on for client-side stats only: the extractor reports what a file holds,
    and a corrupt footer's row count may disagree with its column chunks.
    """
    if not isinstance(f, FileStats):
        raise InvalidStatsError(f"expected FileStats, got {type(f).__name__}")
    path = f.path
    if not isinstance(path, str) or not path or "\x00" in path:
        raise InvalidStatsError(f"invalid file path {path!r}", details={"attribute": "path"})
    if lone_surrogate(path):
        raise InvalidStatsError(
            f"{shown(path)}: the path is not valid Unicode (a file name whose bytes are not UTF-8?)",
            details={"attribute": "path"},
        )
    if len(path.encode("utf-8")) > MAX_PATH_BYTES:
        raise file_error(path, f"path longer than {MAX_PATH_BYTES} bytes", LimitExceededError, attribute="path")
    for name in ("file_size_bytes", "record_count", "footer_size"):
        if not _is_count(getattr(f, name)):
            raise file_error(path, f"{name} must be an integer between 0 and {MAX_COUNT}", attribute=name)
    if f.file_size_bytes < f.footer_size + PARQUET_OVERHEAD:
        raise file_error(
            path,
            f"{f.file_size_bytes} bytes cannot hold a {f.footer_size}-byte footer "
            f"(needs footer_size + {PARQUET_OVERHEAD})",
            attribute="file_size_bytes",
        )
    if f.content_id is not None and (not isinstance(f.content_id, str) or len(f.content_id) > MAX_NAME_BYTES):
        raise file_error(
            path, f"content_id must be a string of at most {MAX_NAME_BYTES} characters or None", attribute="content_id"
        )
    if f.content_id is not None and unstorable(f.content_id):
        raise file_error(path, f"content_id {shown(f.content_id)!r}: not valid Unicode or {NUL_NOT_STORED}", attribute="content_id")
    cols = f.variant_columns
    if (
        not isinstance(cols, tuple)
        or not all(isinstance(c, str) and c for c in cols)
        or len(set(cols)) != len(cols)
    ):
        raise file_error(path, "variant_columns must be a tuple of distinct non-empty names", attribute="variant_columns")
    check_row_count(path, len(f.paths) + len(f.columns) + len(f.partitions), limits)
    memo = _Memo() if _memo is None else _memo
    seen: set[tuple[str, str]] = set()
    out: list[PathStats] = []
    changed = False
    for j, ps in enumerate(f.paths):
        nps = _check_row(f, j, ps, limits, memo, check_record_counts)
        key = (nps.column, nps.variant_path)
        if key in seen:
            raise file_error(
                path, f"{row_where(*key)} is reported twice", attribute="variant_path", row=j
            )
        seen.add(key)
        changed |= nps is not ps
        out.append(nps)
    if changed or not isinstance(f.paths, tuple):
        f = dataclasses.replace(f, paths=tuple(out))
    if f.columns or f.partitions or not isinstance(f.columns, tuple) or not isinstance(f.partitions, tuple):
        f = _validate_columns(f, limits, memo)
    return f


def _validate_columns(f: FileStats, limits: Limits, memo: _Memo) -> FileStats:
    """The plain-column rows (one per column name; none of a partition column, whose values Spark
    reads from the path) and the partition values (one per name, none a Variant column of the
    file) of one file."""
    if not isinstance(f.columns, tuple | list) or not isinstance(f.partitions, tuple | list):
        raise file_error(f.path, "columns and partitions must be tuples", attribute="columns")
    cols: list[ColumnStats] = []
    seen: set[str] = set()
    for j, cs in enumerate(f.columns):
        ncs = _check_column_row(f, j, cs, limits, memo)
        if ncs.column in seen:
            raise _row_error(f, j, ncs, "column", "is reported twice")
        seen.add(ncs.column)
        cols.append(ncs)
    parts = _checked_partitions(f, limits, memo)
    # Spark resolves names case-insensitively (its default): `P` in the file is `p=` of the path.
    part_names = {pv.column.lower() for pv in parts}
    for vc in f.variant_columns:
        if vc.lower() in part_names:
            raise file_error(
                f.path, f"partition column {vc!r} is also a Variant column of the data file", attribute="partitions"
            )
    if parts and any(c.column.lower() in part_names for c in cols):
        # Spark reads a partition column from the directory even where the data file has a column
        # of that name: the file's own values are never read, so neither are their stats.
        cols = [c for c in cols if c.column.lower() not in part_names]
        return dataclasses.replace(f, columns=tuple(cols), partitions=tuple(parts))
    if (
        isinstance(f.columns, tuple)
        and isinstance(f.partitions, tuple)
        and all(a is b for a, b in zip(cols, f.columns, strict=True))
        and all(a is b for a, b in zip(parts, f.partitions, strict=True))
    ):
        return f  # nothing normalised: no copy
    return dataclasses.replace(f, columns=tuple(cols), partitions=tuple(parts))


def _checked_partitions(f: FileStats, limits: Limits, memo: _Memo) -> tuple[PartitionValue, ...]:
    """The file's partition values checked on their own (names, raw text, typed values), once
    per tuple object of the batch."""
    given = f.partitions
    hit = memo.partitions.get(id(given)) if type(given) is tuple else None
    if hit is not None and hit[0] is given:
        return hit[1]
    parts: list[PartitionValue] = []
    names: set[str] = set()
    for k, pv in enumerate(f.partitions):
        where = f"partition value {k}"
        if type(pv) is not PartitionValue:
            raise file_error(f.path, f"{where}: expected PartitionValue, got {type(pv).__name__}", attribute="partitions")
        name = pv.column
        if _bad_name(name):
            raise file_error(f.path, f"{where}: invalid partition column name", attribute="partitions")
        if name in names:
            raise file_error(f.path, f"partition column {name!r} appears twice in the path", attribute="partitions")
        names.add(name)
        if pv.raw is not None and (type(pv.raw) is not str or len(pv.raw) > limits.max_bound_chars):
            raise file_error(
                f.path,
                f"partition column {name!r}: the value must be a string of at most {limits.max_bound_chars} characters",
                LimitExceededError if type(pv.raw) is str else InvalidStatsError,
                attribute="partitions",
            )
        if type(pv.value_type) is not ShreddedType:
            raise file_error(f.path, f"partition column {name!r}: value_type must be a ShreddedType", attribute="partitions")
        value = pv.value
        if isinstance(pv.raw, str) and "\x00" in pv.raw:
            # Spark writes such a string value as `k=a%00b`: its raw text cannot be stored.
            raise file_error(
                f.path, f"partition column {name!r}: the value {pv.raw!r} of its directory: {NUL_NOT_STORED}", attribute="partitions"
            )
        # NaN is a value, not a bound: Spark reads a `x=NaN` directory as a double NaN, and the
        # partition's stats row then has no bounds and contains_nan (partitions.partition_stats).
        if value is not None and not (type(value) is float and math.isnan(value) and pv.value_type.is_float):
            check = memo.checkers.get(id(pv.value_type))
            if check is None:
                check = memo.checkers[id(pv.value_type)] = bound_checker(pv.value_type)
            try:
                value = check(value)
            except InvalidStatsError as e:
                raise file_error(f.path, f"partition column {name!r}: {e.message}", attribute="partitions") from None
        parts.append(pv if value is pv.value else dataclasses.replace(pv, value=value))
    out = tuple(parts)
    if type(given) is tuple:
        memo.partitions[id(given)] = (given, out)
    return out


def check_table_columns(f: FileStats, table_columns: Collection[str], table: str) -> None:
    extra = [c for c in f.variant_columns if c not in table_columns]
    if extra:
        raise file_error(
            f.path,
            f"Variant column(s) {', '.join(map(repr, extra))} not in table {table} "
            f"(its Variant columns: {', '.join(map(repr, table_columns)) or 'none'})",
            attribute="variant_columns",
        )


def check_table_totals(table: str, live_record_count: int, live_bytes: int, adding: Sequence[FileStats]) -> None:
    """The table's record and byte counters stay within BIGINT after adding these files."""
    for what, live, added in (
        ("records", live_record_count, sum(f.record_count for f in adding)),
        ("bytes", live_bytes, sum(f.file_size_bytes for f in adding)),
    ):
        if live + added > MAX_COUNT:
            raise InvalidStatsError(
                f"{table} would hold {live + added} live {what}: more than {MAX_COUNT} (a signed 64-bit counter)",
                details={"table": table},
            )


def identity(f: FileStats) -> tuple[str | None, int, int, int]:
    """What must match for a path already live to count as the same content."""
    return (f.content_id, f.file_size_bytes, f.record_count, f.footer_size)


_LEGACY_ID = re.compile(r"\d+:\d+")
_STORE_ID_PREFIXES = ("etag:", "generation:")


def same_content_id(a: str | None, b: str | None) -> bool:
    """Whether two content ids allow "same content": equal, or the one pair that cannot be
    compared: an object registered before shredcat had its own object-store clients carries
    pyarrow.fs's ``<mtime_ns>:<size>``, read again it gives ``etag:...``/``generation:...``; then
    the rest of the identity (size, record count, footer size) decides alone. Any other
    difference (a client's own ids included) is a difference."""
    if a == b:
        return True
    if a is None or b is None:
        return False
    return (_LEGACY_ID.fullmatch(a) is not None and b.startswith(_STORE_ID_PREFIXES)) or (
        _LEGACY_ID.fullmatch(b) is not None and a.startswith(_STORE_ID_PREFIXES)
    )


def same_content(stored: tuple[str | None, int, int, int], f: FileStats) -> bool:
    """Whether a live file's identity and a newly read file count as the same content."""
    return same_content_id(stored[0], f.content_id) and stored[1:] == identity(f)[1:]


def validate_batch(files: Iterable[FileStats], limits: Limits) -> list[FileStats]:
    """Validate a commit batch: each file, and the same path at most once (an identical repeat is
    dropped; the same path with different content is a ConflictError)."""
    files = list(files)
    check_file_count(len(files), limits)
    out: dict[str, FileStats] = {}
    memo = _Memo()
    for f in files:
        v = validate_file(f, limits, _memo=memo)
        prev = out.get(v.path)
        if prev is None:
            out[v.path] = v
        elif prev != v:
            raise file_error(v.path, "appears twice in the batch with different content or stats", ConflictError)
    return list(out.values())


def request_hash(
    files: Sequence[FileStats], remove: Sequence[str] = (), *, remove_missing_ok: bool = False, columns: bool = True
) -> str:
    """A stable digest of a commit request (for idempotency keys): order of files (and of the
    paths to remove) does not matter. ``columns=False``: without plain-column and partition rows,
    the digest code before schema 0003 stored (whose keys must still replay their commits)."""
    h = hashlib.sha256()
    if remove:  # absent otherwise: hashes of commits without removals stay as stored
        h.update(json.dumps(["remove", sorted(set(remove)), remove_missing_ok], ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    for f in sorted(files, key=lambda f: f.path):
        rows = sorted(
            ([ps.column, *ps.ducklake_row().values()] for ps in f.paths),
            key=lambda r: (r[0], r[1]),
        )
        doc: list[object] = [f.path, list(identity(f)), list(f.variant_columns), rows]
        if columns and (f.columns or f.partitions):  # absent otherwise: hashes of Variant-only commits stay as stored
            doc.append(sorted([c.column, c.column_type.name, c.column_size_bytes, c.value_count, c.null_count,
                               None if c.min_value is None else format_bound(c.column_type, c.min_value),
                               None if c.max_value is None else format_bound(c.column_type, c.max_value),
                               c.contains_nan, c.extra_stats] for c in f.columns))  # fmt: skip
            doc.append([[p.column, p.raw, p.value_type.name] for p in f.partitions])
        h.update(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def check_file_columns(
    f: FileStats,
    variant_columns: Collection[str],
    plain: Mapping[str, str],
    partition_columns: Sequence[str],
    table: str,
    *,
    unpartitioned_files: bool,
) -> None:
    """A validated file against its table's columns: a plain column is no Variant or partition
    column of the table; the file's partition columns (names, in path order) are the table's,
    like Spark's "Conflicting partition column names" (``plain``: the table's plain and partition
    columns -> kind; ``unpartitioned_files``: the table has live files without partition values,
    so a partitioned file cannot join it)."""
    for j, c in enumerate(f.columns):
        if c.column in variant_columns or plain.get(c.column) == "partition":
            what = "a Variant" if c.column in variant_columns else "a partition"
            err = file_error(
                f.path, f"column {c.column!r} is {what} column of table {table}", attribute="column", row=j
            )
            err.details["rows"] = "columns"
            raise err
    names = [pv.column for pv in f.partitions]
    for name in names:
        if name in variant_columns or plain.get(name) == "plain":
            raise file_error(
                f.path, f"partition column {name!r} is a data column of table {table}", attribute="partitions"
            )
    if partition_columns:
        expected = list(partition_columns)
    elif unpartitioned_files:
        expected = []
    else:
        return
    if names != expected:
        raise file_error(
            f.path,
            f"conflicting partition column names: the file's path gives {names or 'none'}, "
            f"table {table} is partitioned by {expected or 'nothing'}",
            attribute="partitions",
        )


def check_batch_partitions(files: Sequence[FileStats]) -> None:
    """Every file of a batch has the same partition column names (in path order)."""
    if not files:
        return
    first = [pv.column for pv in files[0].partitions]
    for f in files[1:]:
        names = [pv.column for pv in f.partitions]
        if names != first:
            raise file_error(
                f.path,
                f"conflicting partition column names in one commit: {names or 'none'} here, "
                f"{first or 'none'} in {files[0].path}",
                attribute="partitions",
            )


def replaced_layout(
    files: Sequence[FileStats],
    kinds: Mapping[str, str],
    *,
    declared: bool,
    replacing_all: bool,
) -> list[str]:
    """The columns a commit ends because its files bring another partition layout: the table's
    partition columns, and those of its plain columns the new layout names (``kinds``: the table's
    plain and partition columns -> kind). Spark reads a directory's layout from the files in it,
    so an overwrite may change it (``partitionBy`` on other columns, or none). Here that is allowed
    when the commit leaves none of the table's live files (``replacing_all``) and the table's
    partition types are inferred: a ``declared`` layout is the table's own and stays binding.
    Empty when the layout is kept; the files agree on their names (:func:`check_batch_partitions`)."""
    if not files or not replacing_all or declared:
        return []
    old = [name for name, kind in kinds.items() if kind == "partition"]
    new = [pv.column for pv in files[0].partitions]
    if new == old:
        return []
    return old + [name for name in new if kinds.get(name) == "plain"]
