"""Condition rewrites that need no database: what the planner does to a compiled condition before
translating it to SQL, given facts it read (which leaves every live file passes, the types of the
partition columns). Both the SQL planner (:mod:`service.catalog.planner`) and the evaluator
(explain, tests) read the rewritten condition, so the two layers still judge the same tree."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from service.pruning.conditions import (
    AllOf,
    AnyOf,
    Condition,
    ConditionVisitor,
    Constant,
    LeafCondition,
    visit_condition,
)
from service.values import ShreddedType

#: What a leaf every live file passes becomes.
EVERY_FILE = Constant(True, "every live file's statistics pass this test")


def keeps_every_file(c: Condition) -> bool:
    """Whether ``c`` is the constant TRUE (every live file a candidate)."""
    return isinstance(c, Constant) and c.might_match


class _FoldTrueLeaves(ConditionVisitor[Condition]):
    """The condition with each leaf ``holds`` says every live file passes replaced by TRUE, folded up."""

    def __init__(self, holds: Callable[[LeafCondition], bool]) -> None:
        self.holds = holds

    def visit_leaf(self, c: LeafCondition) -> Condition:
        return EVERY_FILE if self.holds(c) else c

    def visit_all_of(self, c: AllOf) -> Condition:
        kids = [visit_condition(k, self) for k in c.children]
        rest = [k for k in kids if not keeps_every_file(k)]
        if not rest:
            return EVERY_FILE
        return rest[0] if len(rest) == 1 else AllOf(tuple(rest))

    def visit_any_of(self, c: AnyOf) -> Condition:
        kids = [visit_condition(k, self) for k in c.children]
        if any(keeps_every_file(k) for k in kids):
            return EVERY_FILE
        return AnyOf(tuple(kids))

    def visit_constant(self, c: Constant) -> Condition:
        return c


def fold_true_leaves(condition: Condition, holds: Callable[[LeafCondition], bool]) -> Condition:
    """``condition`` with every leaf for which ``holds`` (every live file passes it) replaced by
    TRUE and folded away: an AND drops it, an OR becomes TRUE. The same answer when ``holds`` is
    right, found without testing each file. Leaves are asked in the tree's order."""
    return visit_condition(condition, _FoldTrueLeaves(holds))


def partition_row_usable(stored: ShreddedType, column_type: ShreddedType | None) -> bool:
    """Whether a partition value stored as ``stored`` (inferred per file) may decide a predicate on
    a partition column of type ``column_type`` (declared, or Spark's merge over the live files) by
    its value: the same type, or a narrower signed integer of a wider one (the same number).
    Anything else (int stored, string merged: Spark compares the text) is judged by the leaf's
    type-independent test only (:func:`restrict_partition_leaves`)."""
    if column_type is None:
        return False
    if stored == column_type:
        return True
    ranks = {"int8": 1, "int16": 2, "int32": 3, "int64": 4}
    a, b = ranks.get(stored.name), ranks.get(column_type.name)
    return a is not None and b is not None and a <= b


class _RestrictPartitions(ConditionVisitor[Condition]):
    """The condition with every partition leaf's cases limited to the stored types that read as
    the column's type (:func:`partition_row_usable`)."""

    def __init__(self, partition: Mapping[str, ShreddedType | None]) -> None:
        self.partition = partition

    def visit_leaf(self, c: LeafCondition) -> Condition:
        if c.variant_path is not None or c.column not in self.partition:
            return c
        want = self.partition[c.column]
        cases = []
        for case in c.cases:
            types = tuple(st for st in case.types if partition_row_usable(st, want))
            if types:
                cases.append(case if len(types) == len(case.types) else replace(case, types=types))
        same = len(cases) == len(c.cases) and all(a is b for a, b in zip(cases, c.cases, strict=True))
        return c if same else replace(c, cases=tuple(cases))

    def visit_all_of(self, c: AllOf) -> Condition:
        return AllOf(tuple(visit_condition(k, self) for k in c.children))

    def visit_any_of(self, c: AnyOf) -> Condition:
        return AnyOf(tuple(visit_condition(k, self) for k in c.children))

    def visit_constant(self, c: Constant) -> Condition:
        return c


def restrict_partition_leaves(condition: Condition, partition_types: Mapping[str, ShreddedType | None]) -> Condition:
    """``condition`` with the leaves on the partition columns ``partition_types`` names (each with
    its type: declared, or Spark's merge over the live files; None when unknown) judging a file's
    value by its bounds only when it is stored as a type that reads as the column's type; a value
    stored as another type (``n=1`` inferred int, the column a string) meets the leaf's
    ``otherwise`` test: type-independent facts (NULL counts) only."""
    if not partition_types:
        return condition
    return visit_condition(condition, _RestrictPartitions(partition_types))
