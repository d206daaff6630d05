"""``singledispatch`` for the visitors of the pruning trees (pyiceberg's pattern), with the exact
node class looked up in its registry first.

Visiting is on the plan's hot path (a predicate is compiled per plan call, a test runs per stats
row) and ``singledispatch`` pays a weak-reference cache lookup on every call; node classes are
final, so the registry answers almost always, and the MRO resolution still serves the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch, update_wrapper
from typing import Any, Generic, TypeVar

R = TypeVar("R")


class Dispatcher(Generic[R]):
    """``dispatcher(node, visitor)`` calls the handler registered for ``type(node)``."""

    def __init__(self, default: Callable[[Any, Any], R]) -> None:
        self._generic = singledispatch(default)
        self._registry = self._generic.registry
        self._dispatch = self._generic.dispatch
        update_wrapper(self, default)

    def register(self, cls: type) -> Callable[[Callable[[Any, Any], R]], Callable[[Any, Any], R]]:
        return self._generic.register(cls)

    def __call__(self, node: Any, visitor: Any) -> R:
        cls = node.__class__
        return (self._registry.get(cls) or self._dispatch(cls))(node, visitor)


def dispatcher(default: Callable[[Any, Any], R]) -> Dispatcher[R]:
    """Decorator: ``@dispatcher`` on the fallback (raise TypeError), then ``@f.register(Cls)``."""
    return Dispatcher(default)
