"""``singledispatch`` for the visitors of the pruning trees (pyiceberg's pattern), with the exact
node class looked up in its registry first.

Visiting is on the plan's hot path (a predicate is compiled per plan call, a test runs per stats
row) and ``singledispatch`` pays a weak-reference cache lookup on every call; node classes are
final, so the registry answers almost always, and the MRO resolution still serves the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import singledispatch, update_wrapper
from typing import TYPE_CHECKING, Any, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class Dispatcher(Generic[F]):
    """``dispatcher(node, visitor)`` calls the handler registered for ``type(node)``; to the type
    checker it is the decorated fallback itself, so a call keeps that function's signature (a
    generic ``visitor: V[T]`` gives a ``T``)."""

    def __init__(self, default: F) -> None:
        self._generic = singledispatch(default)
        self._registry = self._generic.registry
        self._dispatch = self._generic.dispatch
        update_wrapper(self, default)

    def register(self, cls: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        return self._generic.register(cls)

    if TYPE_CHECKING:
        __call__: F
    else:

        def __call__(self, node, visitor):
            cls = node.__class__
            return (self._registry.get(cls) or self._dispatch(cls))(node, visitor)


def dispatcher(default: F) -> Dispatcher[F]:
    """Decorator: ``@dispatcher`` on the fallback (raise TypeError), then ``@f.register(Cls)``."""
    return Dispatcher(default)
