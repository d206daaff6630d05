"""Planning an OR of one key's points as one point set: the leaves of ``x = a OR x = b OR ...``
(one key: the same ``variant_get`` path and cast, or the same column) become one leaf testing
whether some point lies in a stats row's ``[min, max]``, which the SQL layer answers as an ``IN``
list's points are answered (:class:`~service.pruning.conditions.AnyPoint`: an index probe per
point, or on PostgreSQL one join of a VALUES list) instead of a UNION branch per comparison: for
an OR of 200 ids over 10,000 files, PostgreSQL spent 233 ms in the three statements of 200
branches a playground page sends, 28 ms in the point set's (one sample each, under load;
BENCHMARKS.md, issue 36).

Why the answer stays the same (three-valued logic). For one row, with ``x`` the term's value
and ``a``, ``b`` literals coerced to ``x``'s type by the same rule (the leaves were compiled
from the same term, so each literal went through the same cast): ``x = a OR x = b`` is TRUE
exactly when ``x IN (a, b)`` is TRUE. If ``x`` is NULL, both equalities are NULL, the OR is NULL
and so is IN: never TRUE. Otherwise each equality is TRUE or FALSE (the literals are not NULL:
a NULL literal never compiles to a point test), and the OR is TRUE exactly when ``x`` equals
one of the literals, which is IN's definition.

For the statistics, which is what is rewritten here: a file MIGHT match an OR when some
disjunct might; each leaf on the key reads the same stats rows (one per stored type) and might
match when some row passes its test for the row's type. So the OR of the leaves might match
exactly when some row passes the row-wise OR of their tests. For a stored type where every
leaf's test is a point (``RangeMayContain(p, p)``, ``AnyPoint``) or ``Never``, that OR is
``AnyPoint`` of all their points (``Never`` when there are none); where some leaf has only
``HasValues`` and the others' tests all need values too, it is ``HasValues``; ``Keep`` absorbs
everything. Any other test (a cast's interval, a NaN literal, a NaN-matching range) is not
merged: the leaves are left as they are. Files without a row for the key are decided by the key
and by whether a leaf rejects an all-NULL path (:func:`~service.pruning.absent.rejects_nulls`),
required equal for every merged leaf and the result.

The merged leaf lists a case for exactly the stored types given (the types the plan reads rows
of), so it is meant for the planner, which asks a leaf's test only for those. The evaluator keeps
judging the original leaves (their reasons name each comparison); both answer the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from service.pruning.absent import rejects_nulls
from service.pruning.conditions import (
    AnyPoint,
    Condition,
    HasValues,
    Keep,
    Label,
    LeafCondition,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
    TypedTest,
)
from service.values import Bound, ShreddedType

#: Tests that are FALSE on a row without values: OR-ed with HasValues they add nothing.
_NEED_VALUES = (HasValues, RangeMayContain, AnyPoint, NotAllIn, MayHaveNaN, Never)


def _points(t: Test) -> tuple[Bound, ...] | None:
    """The points of a point test (none for Never), or None for any other test."""
    if isinstance(t, Never):
        return ()
    if isinstance(t, AnyPoint):
        pts = t.points
    elif (
        isinstance(t, RangeMayContain)
        and t.lo is not None
        and t.lo_inclusive
        and t.hi_inclusive
        and not t.nan_matches
        and t.lo == t.hi
        and type(t.lo) is type(t.hi)
    ):
        pts = (t.lo,)
    else:
        return None
    # NaN equals nothing in Python and sorts nowhere: such a literal keeps its own leaf.
    return None if any(isinstance(p, float) and math.isnan(p) for p in pts) else pts


def or_tests(tests: Sequence[Test]) -> Test | None:
    """One test TRUE on a stats row exactly when one of ``tests`` is, or None when there is none
    of the kinds above."""
    if any(isinstance(t, Keep) for t in tests):
        return Keep()
    if any(isinstance(t, HasValues) for t in tests):
        return HasValues() if all(isinstance(t, _NEED_VALUES) for t in tests) else None
    seen: dict[tuple[type, Bound], None] = {}
    for t in tests:
        pts = _points(t)
        if pts is None:
            return None
        for p in pts:
            seen.setdefault((type(p), p), None)
    return AnyPoint(tuple(p for _, p in seen)) if seen else Never()


def merge_leaves(leaves: Sequence[LeafCondition], stored: Sequence[ShreddedType]) -> LeafCondition | None:
    """One leaf with the OR's verdict on every stats row of the ``stored`` types (all leaves are
    on one key), or None when some type's tests do not merge (see the module)."""
    first = leaves[0]
    nulls = rejects_nulls(first)
    if any(rejects_nulls(c) != nulls or c.otherwise != first.otherwise for c in leaves):
        return None
    cases = []
    for st in stored:
        merged = or_tests([c.test_for(st) for c in leaves])
        if merged is None:
            return None
        cases.append(TypedTest((st,), merged))
    out = LeafCondition(
        first.column,
        first.variant_path,
        tuple(cases),
        first.otherwise,
        Label(lambda: " OR ".join(str(c.label) for c in leaves)),
        tuple(t for c in leaves for t in c.terms),
    )
    return out if rejects_nulls(out) == nulls else None


def merge_points(
    children: Sequence[Condition], stored: Callable[[str, str | None], Sequence[ShreddedType]]
) -> list[Condition]:
    """The disjuncts ``children`` with the leaves on one key merged (:func:`merge_leaves`; the
    merged leaf takes the first one's place), given each key's stored types. Leaves that do not
    merge, and everything else, are returned as they are."""
    groups: dict[tuple[str, str | None], list[LeafCondition]] = {}
    for c in children:
        if isinstance(c, LeafCondition):
            groups.setdefault((c.column, c.variant_path), []).append(c)
    merged: dict[tuple[str, str | None], LeafCondition] = {}
    for key, leaves in groups.items():
        if len(leaves) > 1:
            m = merge_leaves(leaves, stored(*key))
            if m is not None:
                merged[key] = m
    if not merged:
        return list(children)
    out: list[Condition] = []
    placed: set[tuple[str, str | None]] = set()
    for c in children:
        at = (c.column, c.variant_path) if isinstance(c, LeafCondition) else None
        if at is None or at not in merged:
            out.append(c)
        elif at not in placed:
            placed.add(at)
            out.append(merged[at])
    return out
