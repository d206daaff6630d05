"""What a path's index keys say about pruning: the share of the files a point lookup keeps.

Computed by :meth:`service.catalog.admin.AdminReads.path_bounds` from every file's keys, or a sample's
for a path in many files (the range chart shows it next to the bars it draws), once per table
snapshot: the catalog caches the answer.
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from itertools import repeat

from service.catalog.results import Key
from service.values import (
    DATE_INFINITY,
    DATE_NEG_INFINITY,
    TIMESTAMP_KINDS,
    TS_INFINITY,
    TS_NEG_INFINITY,
    Kind,
    ShreddedType,
    family,
)


def point_keep_ratio(
    t: ShreddedType, min_keys: Sequence[Key], max_keys: Sequence[Key], with_values: int, always_kept: int = 0
) -> float | None:
    """The average share of the files that a point lookup at a value of this path keeps, the
    probes being every finite bound of every file (values that occur in the data): 1/n is
    perfect clustering, 1.0 means pruning cannot help; None when no file holds values.

    Exact over all ``with_values`` files from their sorted min and max index keys alone (the
    files' pairs are not needed: a probe ``x`` is held by the files whose min is at most ``x``,
    less those whose max is below it), counted as pruning counts: a side with no key (an unknown
    bound, a decimal beyond int64) is unbounded. ``always_kept``: files any probe keeps (the path
    stored there as another type, or not fully shredded)."""
    if with_values == 0:
        return None
    inf = math.inf
    at_min: list[Key]
    at_max: list[Key]
    if family(t) == "real":
        at_min = [x for x in min_keys if not isinstance(x, bytes) and -inf < x < inf]  # a numeric path's keys: int or float
        at_max = [x for x in max_keys if not isinstance(x, bytes) and -inf < x < inf]
    else:  # strings, blobs and uuids are all values; integers but DuckDB's date/time infinities
        pinned = {
            Kind.DATE: (DATE_NEG_INFINITY, DATE_INFINITY),
            **{k: (TS_NEG_INFINITY, TS_INFINITY) for k in TIMESTAMP_KINDS},
        }.get(t.kind, ())
        at_min = [x for x in min_keys if x not in pinned] if pinned else list(min_keys)
        at_max = [x for x in max_keys if x not in pinned] if pinned else list(max_keys)
    n = len(at_min) + len(at_max)
    if n == 0:  # every bound unknown or infinite: each lookup keeps every file
        return 1.0
    held = n * (with_values - len(min_keys))  # the files with no min key hold every probe
    # C-level bisects over native keys (ints, floats or bytes): this runs over every file. When
    # every key of a list is a probe and no two are equal, its i-th probe needs no search in its
    # own list: i + 1 mins are at or below it, i maxes below it.
    if len(at_min) == len(min_keys) and _distinct(min_keys):
        held += len(at_min) * (len(at_min) + 1) // 2
    else:
        held += sum(map(bisect_right, repeat(min_keys), at_min))
    if len(at_max) == len(max_keys) and _distinct(max_keys):
        held -= len(at_max) * (len(at_max) - 1) // 2
    else:
        held -= sum(map(bisect_left, repeat(max_keys), at_max))
    held += sum(map(bisect_right, repeat(min_keys), at_max)) - sum(map(bisect_left, repeat(max_keys), at_min))
    return (held + n * always_kept) / (n * (with_values + always_kept))


def _distinct(sorted_keys: Sequence[Key]) -> bool:
    return len(set(sorted_keys)) == len(sorted_keys)
