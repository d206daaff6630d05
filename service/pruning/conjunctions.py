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
    Condition,
    ConditionVisitor,
    Constant,
    Label,
    LeafCondition,
    TypedTest,
    merge_tests,
    visit_condition,
)
from service.pruning.conditions.casts import CastRule
from service.pruning.expressions import Op

# A cast's test for these is a range (or Never/HasValues), which merges with any other range.
_RANGE_OPS = (Op.LT, Op.LT_EQ, Op.GT, Op.GT_EQ, Op.EQ)


def _derivations_merge(a: LeafCondition, b: LeafCondition) -> bool:
    """Whether the cast tests of both leaves always merge into one test (else the merged leaf
    would keep only one of them for a stored type a cast serves: sound, but weaker than the
    conjunction)."""
    derived = a.derived + b.derived
    return len(derived) <= 1 or all(isinstance(d, CastRule) and d.op in _RANGE_OPS for d in derived)


def _merge_leaves(a: LeafCondition, b: LeafCondition) -> LeafCondition | None:
    if not _derivations_merge(a, b):
        return None
    types = {t for case in (*a.cases, *b.cases) for t in case.types}
    cases = []
    for t in sorted(types, key=lambda t: t.name):
        m = merge_tests(a.test_for(t), b.test_for(t))
        if m is None:
            return None
        cases.append(TypedTest((t,), m))
    otherwise = merge_tests(a.otherwise, b.otherwise)
    if otherwise is None:
        return None
    return LeafCondition(
        a.column,
        a.variant_path,
        tuple(cases),
        otherwise,
        Label(lambda: f"{a.label} AND {b.label}"),
        a.terms + b.terms,
        a.derived + b.derived,
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
