"""How selective a condition looks from its shape alone (no statistics): which child of an AND
the SQL planner drives from, and whether a page goes to the set plan without probing the density
first (:mod:`service.catalog.planner`)."""

from __future__ import annotations

from collections.abc import Callable

from service.pruning.conditions import (
    AllOf,
    AnyOf,
    AnyPoint,
    Condition,
    ConditionVisitor,
    Constant,
    HasNulls,
    HasValues,
    Keep,
    LeafCondition,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    TestVisitor,
    visit_condition,
    visit_test,
)

_Narrow = tuple[bool, bool]


class _Narrowness(TestVisitor[_Narrow]):
    """(whether the test matches few rows, whether it compares bounds) for a leaf's test."""

    def visit_keep(self, t: Keep) -> _Narrow:
        return False, False

    def visit_never(self, t: Never) -> _Narrow:
        return True, False

    def visit_has_values(self, t: HasValues) -> _Narrow:
        return False, False

    def visit_has_nulls(self, t: HasNulls) -> _Narrow:
        return False, False

    def visit_may_have_nan(self, t: MayHaveNaN) -> _Narrow:
        return False, False

    def visit_range(self, t: RangeMayContain) -> _Narrow:
        return t.lo is not None and t.hi is not None, True

    def visit_any_point(self, t: AnyPoint) -> _Narrow:
        return True, True

    def visit_not_all_in(self, t: NotAllIn) -> _Narrow:
        return False, False


class _SelectivityRank(ConditionVisitor[int]):
    """0 for leaves whose usable tests are bounded ranges or points (few files), higher else."""

    def visit_leaf(self, c: LeafCondition) -> int:
        kinds = [visit_test(case.test, _NARROWNESS) for case in c.cases]
        if kinds and all(narrow for narrow, _ in kinds):
            return 0
        return 1 if any(ranged for _, ranged in kinds) else 2

    def visit_all_of(self, c: AllOf) -> int:
        return 3

    def visit_any_of(self, c: AnyOf) -> int:
        return 3

    def visit_constant(self, c: Constant) -> int:
        return 3


class _LooksSelective(ConditionVisitor[bool]):
    """Whether every file the condition keeps must pass a point or bounded-range leaf (one that
    ``narrow_key`` accepts)."""

    def __init__(self, narrow_key: Callable[[LeafCondition], bool]) -> None:
        self.narrow_key = narrow_key

    def visit_leaf(self, c: LeafCondition) -> bool:
        return visit_condition(c, _SELECTIVITY) == 0 and self.narrow_key(c)

    def visit_all_of(self, c: AllOf) -> bool:
        return any(visit_condition(k, self) for k in c.children)

    def visit_any_of(self, c: AnyOf) -> bool:
        return all(visit_condition(k, self) for k in c.children)

    def visit_constant(self, c: Constant) -> bool:
        return not c.might_match


_NARROWNESS = _Narrowness()
_SELECTIVITY = _SelectivityRank()


def selectivity_rank(c: Condition) -> int:
    """0 for a leaf whose every usable test is a bounded range or points (few files), 1 for a leaf
    with some range, 2 for another leaf, 3 for anything else: the child of an AND with the lowest
    rank drives (the first of them), the others are tested per candidate."""
    return visit_condition(c, _SELECTIVITY)


def _any_key(c: LeafCondition) -> bool:
    return True


def looks_selective(c: Condition, narrow_key: Callable[[LeafCondition], bool] = _any_key) -> bool:
    """Whether every file ``c`` keeps must pass a point or bounded-range leaf: then the set plan
    reads few rows, and a page goes to it without probing the density first. ``narrow_key``: which
    leaves' keys such a range keeps narrow (the caller knows the stored types; the shape alone
    does not tell a clustered number from a handful of strings spread over every file)."""
    return visit_condition(c, _LooksSelective(narrow_key))
