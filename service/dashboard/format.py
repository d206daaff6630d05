"""Small presentation helpers: numbers, bytes, times, snapshot changes in words, long paths,
bounds, and a sample predicate for a path. Every size on every page goes through
:func:`human_bytes`."""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from service.errors import ShredcatError
from service.values import Bound, ShreddedType, format_bound

if TYPE_CHECKING:
    from service.catalog import PathCoverage

T = TypeVar("T")

#: Paths a page lists (coverage, a file's absent paths, the playground's inserts): a table may
#: shred hundreds of thousands (a map-like object), which made a 168 MB page.
MAX_LISTED_PATHS = 500


def largest(items: Sequence[T], key: Callable[[T], int], limit: int = MAX_LISTED_PATHS) -> tuple[list[T], int]:
    """At most ``limit`` of ``items``: those with the largest ``key``, in their given order; and
    how many were left out."""
    if len(items) <= limit:
        return list(items), 0
    keep = {id(x) for x in heapq.nlargest(limit, items, key=key)}
    return [x for x in items if id(x) in keep], len(items) - limit


def widest_paths(coverage: Sequence[PathCoverage], limit: int = MAX_LISTED_PATHS) -> tuple[list[PathCoverage], int]:
    """At most ``limit`` of ``coverage``: those fully shredded in the most live files (:func:`largest`)."""
    return largest(coverage, lambda c: c.shredded_files, limit)


def num(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def human_bytes(n: int | None) -> str:
    if n is None:
        return "—"
    # Switch units at 1000, not 1024: "1010 B" would sit beside "1.0 KiB" (1030 B).
    if n < 1000:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 999.95 or unit == "PiB":
            return f"{value:.1f} {unit}"
    raise AssertionError  # pragma: no cover


def when(ts: datetime | None) -> str:
    if ts is None:
        return "—"
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _files(n: int) -> str:
    return f"{n:,} file" + ("" if n == 1 else "s")


def change_text(changes_made: str, added: int, removed: int) -> str:
    """A snapshot's DuckLake ``changes_made`` in words: ``inserted_into_table:2`` with 120 added
    files reads "added 120 files"; an unknown kind is shown as stored."""
    words = []
    for part in changes_made.split(","):
        kind, _, arg = part.partition(":")
        name = arg.replace('"', "")
        if kind == "inserted_into_table":
            words.append(f"added {_files(added)}")
        elif kind == "deleted_from_table":
            words.append(f"removed {_files(removed)}")
        elif kind == "created_table":
            words.append(f"created table {name}")
        elif kind == "dropped_table":
            words.append(f"dropped the table ({_files(removed)})")
        elif kind == "created_schema":
            words.append(f"created namespace {name}")
        elif kind == "dropped_schema":
            words.append("dropped a namespace")
        else:
            words.append(part)
    return ", ".join(words)


def common_dir(paths: list[str]) -> str:
    """The longest directory (ending with ``/``) every path is under, or "" when none is."""
    if not paths:
        return ""
    first, last = min(paths), max(paths)
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    return first[: first.rfind("/", 0, n) + 1]


#: A file name at most this long is always shown whole.
NAME_SHOWN = 32
#: The end of a longer name always shown: from its first dot (``.c000.snappy.parquet``) when that
#: is at most this long, else its last :data:`NAME_END_CUT` characters.
NAME_END = 24
NAME_END_CUT = 16
#: The front of a longer name always shown when it is no Spark ``part-NNNNN`` name.
NAME_FRONT = 10
_PART = re.compile(r"part-\d+")


class PathParts(NamedTuple):
    """A path relative to the listing's base, in the pieces a narrow screen elides in turn: the
    job uuid in the middle of the file name first (every file of a Spark write shares it), then
    the directory; the name's front (``part-00017``) and end (``.c000.snappy.parquet``) always
    show, so ``date=2024-…/part-00017-3f…c000.snappy.parquet`` rows differ where files do."""

    directory: str
    front: str
    middle: str
    end: str


def path_parts(path: str, base: str) -> PathParts:
    """``path`` relative to ``base`` (when under it), cut into :class:`PathParts`."""
    rel = path[len(base) :] if base and path.startswith(base) and len(path) > len(base) else path
    cut = rel.rfind("/") + 1
    directory, name = rel[:cut], rel[cut:]
    if len(name) <= NAME_SHOWN:
        return PathParts(directory, name, "", "")
    m = _PART.match(name)
    front = m.group(0) if m else name[:NAME_FRONT]
    rest = name[len(front) :]
    dot = rest.find(".")
    end = rest[dot:] if dot >= 0 and len(rest) - dot <= NAME_END else rest[-NAME_END_CUT:]
    return PathParts(directory, front, rest[: len(rest) - len(end)], end)


def percent(part: int, whole: int) -> str:
    if whole <= 0:
        return "—"
    p = 100.0 * part / whole
    return f"{p:.0f}%" if p >= 10 or p == 0 else f"{p:.1f}%"


def bound_text(t: ShreddedType, v: Bound | None, value_count: int) -> str:
    """A bound for display: the DuckLake string, "unknown" (values but no bound) or "—" (no values)."""
    if value_count <= 0:
        return "—"
    if v is None:
        return "unknown"
    return format_bound(t, v)


def nan_text(t: ShreddedType, contains_nan: bool | None) -> str:
    if not t.is_float:
        return "—"
    return "unknown" if contains_nan is None else ("yes" if contains_nan else "no")


def example_predicate(column: str, variant_path: str, t: ShreddedType, value: Bound | None) -> str | None:
    """``variant_get(v, '$.id', 'bigint') = 42`` for a path and one of its bounds, or None when the
    path or type has no simple Spark spelling (array elements, uuid, time...)."""
    if value is None:
        return None
    try:
        from service.pruning.paths import Element, JsonPath, format_spark_path, parse_variant_path
        from service.pruning.render import render_column, render_literal, sql_string
        from service.pruning.spark_types import spark_type_name

        segments = parse_variant_path(variant_path)
        keys = tuple(s for s in segments if not isinstance(s, Element))
        if len(keys) != len(segments):
            return None
        path = format_spark_path(JsonPath(keys))
        type_name = spark_type_name(t)
        literal = render_literal(t, value)
    except (ShredcatError, AssertionError, KeyError, TypeError, ValueError):
        return None
    return f"variant_get({render_column(column)}, {sql_string(path)}, '{type_name}') = {literal}"
