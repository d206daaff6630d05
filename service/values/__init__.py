"""The typed value model every other package stands on: shredded types, bounds, calendar and
decimal arithmetic, DuckLake's string rendering and the catalog's order-preserving index keys.

It sits below :mod:`service.variant` (which types shredded leaves), :mod:`service.stats`
(extraction, merge), :mod:`service.pruning` (literals, conditions) and :mod:`service.catalog`
(typed key columns), and imports none of them.

* :mod:`~service.values.types`: :class:`Kind`, :class:`ShreddedType`, the :data:`Bound` union.
* :mod:`~service.values.calendar`: proleptic Gregorian days for any year (DuckDB's range).
* :mod:`~service.values.decimals`: exact decimal helpers (one context, unscaled conversions).
* :mod:`~service.values.bounds`: validation, DuckLake's rendering and parsing, the 256-byte rule.
* :mod:`~service.values.keys`: order-preserving index keys in three SQL column families.
"""

from service.values.bounds import (
    MAX_STRING_BOUND_BYTES,
    bound_checker,
    bound_formatter,
    check_bound,
    format_bound,
    is_negative_zero,
    needs_truncation,
    nul_free_bounds,
    parse_bound,
    truncate_lower,
    truncate_upper,
)
from service.values.calendar import EPOCH_ORDINAL, MICROS_PER_DAY, civil_from_days, days_from_civil, valid_ymd
from service.values.decimals import DECIMAL_CONTEXT, decimal_from_unscaled, quantize_to_scale, unscaled_of
from service.values.keys import IndexKey, family, index_key
from service.values.types import (
    COUNTS_ONLY_KINDS,
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    FLOAT32_MAX,
    FLOAT_KINDS,
    INT64_MAX,
    INT64_MIN,
    INTEGER_KINDS,
    INTEGER_RANGES,
    TIMESTAMP_KINDS,
    TS_INFINITY,
    TS_NEG_INFINITY,
    Bound,
    Kind,
    ShreddedType,
    bound_le,
    bound_lt,
    plain_integers,
    to_float32,
)

__all__ = [
    "COUNTS_ONLY_KINDS",
    "DATE_INFINITY",
    "DATE_NEG_INFINITY",
    "DECIMAL_CONTEXT",
    "EPOCH_ORDINAL",
    "FLOAT32_MAX",
    "FLOAT_KINDS",
    "INT64_MAX",
    "INT64_MIN",
    "INTEGER_KINDS",
    "INTEGER_RANGES",
    "MAX_STRING_BOUND_BYTES",
    "MICROS_PER_DAY",
    "TIMESTAMP_KINDS",
    "TS_INFINITY",
    "TS_NEG_INFINITY",
    "Bound",
    "IndexKey",
    "Kind",
    "ShreddedType",
    "bound_checker",
    "bound_formatter",
    "bound_le",
    "bound_lt",
    "check_bound",
    "civil_from_days",
    "days_from_civil",
    "decimal_from_unscaled",
    "family",
    "format_bound",
    "index_key",
    "is_negative_zero",
    "needs_truncation",
    "nul_free_bounds",
    "parse_bound",
    "plain_integers",
    "quantize_to_scale",
    "to_float32",
    "truncate_lower",
    "truncate_upper",
    "unscaled_of",
    "valid_ymd",
]
