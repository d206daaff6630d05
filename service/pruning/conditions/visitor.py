"""Dispatch on the kinds of a :data:`~.model.Condition` and of a :data:`~.model.Test`, the same
way :func:`service.pruning.expressions.visit` dispatches on tree nodes: ``visit_condition(c, v)``
calls ``v.visit_leaf`` / ``visit_all_of`` / ``visit_any_of`` / ``visit_constant``, and
``visit_test(t, v)`` one method per test kind. Every interpreter of conditions (the per-file
evaluator, the conjunction merge, the catalog's SQL translation) goes through these, so a new kind
is registered once and each concern's visitor must say what it does with it.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Generic, TypeVar

from service.pruning.conditions.model import (
    AllOf,
    AnyOf,
    AnyPoint,
    Condition,
    Constant,
    HasNulls,
    HasValues,
    Keep,
    LeafCondition,
    MayHaveNaN,
    Never,
    NotAllIn,
    RangeMayContain,
    Test,
)
from service.pruning.dispatch import dispatcher

T = TypeVar("T")


class ConditionVisitor(Generic[T], ABC):
    """A handler gets the node and visits its children itself (so it can stop early)."""

    @abstractmethod
    def visit_leaf(self, c: LeafCondition) -> T: ...

    @abstractmethod
    def visit_all_of(self, c: AllOf) -> T: ...

    @abstractmethod
    def visit_any_of(self, c: AnyOf) -> T: ...

    @abstractmethod
    def visit_constant(self, c: Constant) -> T: ...


@dispatcher
def visit_condition(c: Condition, visitor: ConditionVisitor[T]) -> T:
    raise TypeError(f"not a Condition: {c!r}")


@visit_condition.register(LeafCondition)
def _(c: LeafCondition, visitor: ConditionVisitor[T]) -> T:
    return visitor.visit_leaf(c)


@visit_condition.register(AllOf)
def _(c: AllOf, visitor: ConditionVisitor[T]) -> T:
    return visitor.visit_all_of(c)


@visit_condition.register(AnyOf)
def _(c: AnyOf, visitor: ConditionVisitor[T]) -> T:
    return visitor.visit_any_of(c)


@visit_condition.register(Constant)
def _(c: Constant, visitor: ConditionVisitor[T]) -> T:
    return visitor.visit_constant(c)


class TestVisitor(Generic[T], ABC):
    __test__ = False  # not a pytest class, whatever its name

    @abstractmethod
    def visit_keep(self, t: Keep) -> T: ...

    @abstractmethod
    def visit_never(self, t: Never) -> T: ...

    @abstractmethod
    def visit_has_values(self, t: HasValues) -> T: ...

    @abstractmethod
    def visit_has_nulls(self, t: HasNulls) -> T: ...

    @abstractmethod
    def visit_may_have_nan(self, t: MayHaveNaN) -> T: ...

    @abstractmethod
    def visit_range(self, t: RangeMayContain) -> T: ...

    @abstractmethod
    def visit_any_point(self, t: AnyPoint) -> T: ...

    @abstractmethod
    def visit_not_all_in(self, t: NotAllIn) -> T: ...


@dispatcher
def visit_test(t: Test, visitor: TestVisitor[T]) -> T:
    raise TypeError(f"unknown test {t!r}")


@visit_test.register(Keep)
def _(t: Keep, visitor: TestVisitor[T]) -> T:
    return visitor.visit_keep(t)


@visit_test.register(Never)
def _(t: Never, visitor: TestVisitor[T]) -> T:
    return visitor.visit_never(t)


@visit_test.register(HasValues)
def _(t: HasValues, visitor: TestVisitor[T]) -> T:
    return visitor.visit_has_values(t)


@visit_test.register(HasNulls)
def _(t: HasNulls, visitor: TestVisitor[T]) -> T:
    return visitor.visit_has_nulls(t)


@visit_test.register(MayHaveNaN)
def _(t: MayHaveNaN, visitor: TestVisitor[T]) -> T:
    return visitor.visit_may_have_nan(t)


@visit_test.register(RangeMayContain)
def _(t: RangeMayContain, visitor: TestVisitor[T]) -> T:
    return visitor.visit_range(t)


@visit_test.register(AnyPoint)
def _(t: AnyPoint, visitor: TestVisitor[T]) -> T:
    return visitor.visit_any_point(t)


@visit_test.register(NotAllIn)
def _(t: NotAllIn, visitor: TestVisitor[T]) -> T:
    return visitor.visit_not_all_in(t)


class _Paths(ConditionVisitor[set[tuple[str, str | None]]]):
    def visit_leaf(self, c: LeafCondition) -> set[tuple[str, str | None]]:
        return {(c.column, c.variant_path)}

    def visit_all_of(self, c: AllOf) -> set[tuple[str, str | None]]:
        return set().union(*(visit_condition(ch, self) for ch in c.children))

    def visit_any_of(self, c: AnyOf) -> set[tuple[str, str | None]]:
        return set().union(*(visit_condition(ch, self) for ch in c.children))

    def visit_constant(self, c: Constant) -> set[tuple[str, str | None]]:
        return set()


def condition_paths(c: Condition) -> set[tuple[str, str | None]]:
    """The (column, variant_path) stats rows a condition reads (variant_path None: a plain or
    partition column)."""
    return visit_condition(c, _Paths())
