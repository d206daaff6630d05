"""The one way to dispatch on the kind of a tree node (singledispatch, as pyiceberg's
``expressions/visitors``; see :mod:`service.pruning.dispatch`).

``visit(node, visitor)`` calls the visitor's method for the node's kind: ``visit_true``,
``visit_false``, ``visit_and``, ``visit_or``, ``visit_not`` for the boolean structure,
``visit_unknown`` for a sub-expression the pruner cannot reason about, and
``visit_unary``, ``visit_literal``, ``visit_set`` for the leaves, which all fall back to
``visit_predicate`` for a concern that treats every leaf alike. A handler gets the node and
visits the children itself, so it can stop early or skip a subtree. A new node kind is one
registration here plus one method per concern that must tell it apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Generic, TypeVar

from service.pruning.dispatch import dispatcher
from service.pruning.expressions.nodes import (
    AlwaysFalse,
    AlwaysTrue,
    And,
    BooleanExpression,
    LiteralPredicate,
    Not,
    Or,
    Predicate,
    SetPredicate,
    UnaryPredicate,
    Unknown,
)

T = TypeVar("T")


class PredicateVisitor(Generic[T]):
    """Handlers for the leaves; enough for a concern that is only ever given a leaf."""

    def visit_predicate(self, pred: Predicate) -> T:
        raise NotImplementedError(f"{type(self).__name__} does not handle {type(pred).__name__}")

    def visit_unary(self, pred: UnaryPredicate) -> T:
        return self.visit_predicate(pred)

    def visit_literal(self, pred: LiteralPredicate) -> T:
        return self.visit_predicate(pred)

    def visit_set(self, pred: SetPredicate) -> T:
        return self.visit_predicate(pred)


class BooleanExpressionVisitor(PredicateVisitor[T], ABC):
    """Handlers for every node kind of a whole tree."""

    @abstractmethod
    def visit_true(self) -> T: ...

    @abstractmethod
    def visit_false(self) -> T: ...

    @abstractmethod
    def visit_and(self, node: And) -> T: ...

    @abstractmethod
    def visit_or(self, node: Or) -> T: ...

    @abstractmethod
    def visit_not(self, node: Not) -> T: ...

    @abstractmethod
    def visit_unknown(self, node: Unknown) -> T: ...


@dispatcher
def visit(node: BooleanExpression, visitor: PredicateVisitor[T]) -> T:
    raise TypeError(f"not a BooleanExpression: {node!r}")


@visit.register(AlwaysTrue)
def _(node: AlwaysTrue, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_true()


@visit.register(AlwaysFalse)
def _(node: AlwaysFalse, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_false()


@visit.register(And)
def _(node: And, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_and(node)


@visit.register(Or)
def _(node: Or, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_or(node)


@visit.register(Not)
def _(node: Not, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_not(node)


@visit.register(Unknown)
def _(node: Unknown, visitor: BooleanExpressionVisitor[T]) -> T:
    return visitor.visit_unknown(node)


@visit.register(UnaryPredicate)
def _(node: UnaryPredicate, visitor: PredicateVisitor[T]) -> T:
    return visitor.visit_unary(node)


@visit.register(LiteralPredicate)
def _(node: LiteralPredicate, visitor: PredicateVisitor[T]) -> T:
    return visitor.visit_literal(node)


@visit.register(SetPredicate)
def _(node: SetPredicate, visitor: PredicateVisitor[T]) -> T:
    return visitor.visit_set(node)


# --- inspection -------------------------------------------------------------------------------


class _Leaves(BooleanExpressionVisitor[list[Predicate]]):
    def visit_true(self) -> list[Predicate]:
        return []

    def visit_false(self) -> list[Predicate]:
        return []

    def visit_and(self, node: And) -> list[Predicate]:
        return [p for c in node.children for p in visit(c, self)]

    def visit_or(self, node: Or) -> list[Predicate]:
        return [p for c in node.children for p in visit(c, self)]

    def visit_not(self, node: Not) -> list[Predicate]:
        return visit(node.child, self)

    def visit_unknown(self, node: Unknown) -> list[Predicate]:
        return []

    def visit_predicate(self, pred: Predicate) -> list[Predicate]:
        return [pred]


class _Depth(BooleanExpressionVisitor[int]):
    def visit_true(self) -> int:
        return 0

    def visit_false(self) -> int:
        return 0

    def visit_and(self, node: And) -> int:
        return max((1 + visit(c, self) for c in node.children), default=0)

    def visit_or(self, node: Or) -> int:
        return max((1 + visit(c, self) for c in node.children), default=0)

    def visit_not(self, node: Not) -> int:
        return 1 + visit(node.child, self)

    def visit_unknown(self, node: Unknown) -> int:
        return 0

    def visit_predicate(self, pred: Predicate) -> int:
        return 0


def iter_predicates(e: BooleanExpression) -> Iterator[Predicate]:
    """The leaves, left to right."""
    leaves: list[Predicate] = visit(e, _Leaves())
    return iter(leaves)


def depth(e: BooleanExpression) -> int:
    """Nesting depth of boolean operators (a leaf or constant is 0)."""
    return visit(e, _Depth())
