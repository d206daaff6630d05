"""Small presentation helpers: numbers, bytes, times, bounds, and a sample predicate for a path."""

from __future__ import annotations

from datetime import UTC, datetime

from service.errors import ShredcatError
from service.values import Bound, ShreddedType, format_bound


def num(n: int | None) -> str:
    return "—" if n is None else f"{n:,}"


def human_bytes(n: int | None) -> str:
    if n is None:
        return "—"
    if n < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if value < 1024 or unit == "PiB":
            return f"{value:.1f} {unit}"
    raise AssertionError  # pragma: no cover


def when(ts: datetime | None) -> str:
    if ts is None:
        return "—"
    if ts.tzinfo is None:
        ts = ts.replace(tzinfo=UTC)
    return ts.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


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
        if any(isinstance(s, Element) for s in segments):
            return None
        path = format_spark_path(JsonPath(tuple(segments)))  # type: ignore[arg-type]
        type_name = spark_type_name(t)
        literal = render_literal(t, value)
    except (ShredcatError, AssertionError, KeyError, TypeError, ValueError):
        return None
    return f"variant_get({render_column(column)}, {sql_string(path)}, '{type_name}') = {literal}"
