"""Merging conjunctions on one path: a rewrite of the stats-condition IR with the same verdict.

``x >= a AND x <= b`` compiles to two leaves on one path. Each alone matches half the files, so a
planner that intersects them reads half the stats twice. A file has one stats row per path, and
for that row "max >= a" and "min <= b" hold together exactly when [min, max] meets [a, b]; so the
two tests merge into one range test with the same verdict for every row, which a bounded index
probe answers from a handful of entries. Tests are merged only when that equivalence is exact
(same NaN behaviour on both sides); anything else stays a separate conjunct.
"""

from __future__ import annotations

from service.pruning.conditions import (
    AllOf,
    AnyOf,
    AnyPoint,
    Condition,
    ConditionVisitor,
    Constant,
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
    visit_condition,
)

# These tests all require value_count > 0 already: HasValues adds nothing to them.
_IMPLIES_VALUES = (HasValues, RangeMayContain, AnyPoint, NotAllIn, MayHaveNaN)


def _merge_tests(a: Test, b: Test) -> Test | None:
    """One test equivalent to ``a AND b`` on every stats row, or None when there is none."""
    if isinstance(a, Never) or isinstance(b, Never):
        return Never()
    if isinstance(a, Keep):
        return b
    if isinstance(b, Keep):
        return a
    if a == b:
        return a
    if isinstance(a, HasValues) and isinstance(b, _IMPLIES_VALUES):
        return b
    if isinstance(b, HasValues) and isinstance(a, _IMPLIES_VALUES):
        return a
    if isinstance(a, RangeMayContain) and isinstance(b, RangeMayContain):
        if a.nan_matches != b.nan_matches:
            return None
        lo, lo_inc = a.lo, a.lo_inclusive
        if b.lo is not None and (lo is None or b.lo > lo or (b.lo == lo and not b.lo_inclusive)):  # type: ignore[operator]
            lo, lo_inc = b.lo, b.lo_inclusive
        hi, hi_inc = a.hi, a.hi_inclusive
        if b.hi is not None and (hi is None or b.hi < hi or (b.hi == hi and not b.hi_inclusive)):  # type: ignore[operator]
            hi, hi_inc = b.hi, b.hi_inclusive
        return RangeMayContain(lo, hi, lo_inc, hi_inc, a.nan_matches)
    return None


def _merge_leaves(a: LeafCondition, b: LeafCondition) -> LeafCondition | None:
    types = {t for case in (*a.cases, *b.cases) for t in case.types}
    cases = []
    for t in sorted(types, key=lambda t: t.name):
        m = _merge_tests(a.test_for(t), b.test_for(t))
        if m is None:
            return None
        cases.append(TypedTest((t,), m))
    otherwise = _merge_tests(a.otherwise, b.otherwise)
    if otherwise is None:
        return None
    return LeafCondition(
        a.column,
        a.variant_path,
        tuple(cases),
        otherwise,
        Label(lambda: f"{a.label} AND {b.label}"),
        a.terms + b.terms,
    )


class _Merge(ConditionVisitor[Condition]):
    def visit_leaf(self, c: LeafCondition) -> Condition:
        return c

    def visit_constant(self, c: Constant) -> Condition:
        return c

    def visit_any_of(self, c: AnyOf) -> Condition:
        return AnyOf(tuple(visit_condition(ch, self) for ch in c.children))

    def visit_all_of(self, c: AllOf) -> Condition:
        children: list[Condition] = []
        for ch in (visit_condition(x, self) for x in c.children):
            if isinstance(ch, LeafCondition):
                path = (ch.column, ch.variant_path)
                for i, prev in enumerate(children):
                    if isinstance(prev, LeafCondition) and (prev.column, prev.variant_path) == path:
                        merged = _merge_leaves(prev, ch)
                        if merged is not None:
                            children[i] = merged
                            break
                else:
                    children.append(ch)
            else:
                children.append(ch)
        return children[0] if len(children) == 1 else AllOf(tuple(children))


def merge_conjunctions(c: Condition) -> Condition:
    """The condition with same-path range conjuncts merged (same verdict for every file)."""
    return visit_condition(c, _Merge())


__all__ = ["merge_conjunctions"]
