"""Recursion headroom for sqlglot's recursive-descent parser.

sqlglot recurses ~20 Python frames per parenthesis, more than the interpreter's default limit
allows for a predicate nested to the configured depth; the limit is raised while parsing and
restored by the last parser out (parses may run in several threads at once).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_active = 0
_saved = 0


@contextmanager
def recursion_headroom(frames: int) -> Iterator[None]:
    """Raise the interpreter's recursion limit while parsing; restored by the last parser out.
    (Python-to-Python calls do not use the C stack on 3.11, so a few thousand frames are safe.)"""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = sys.getrecursionlimit()
        _active += 1
        sys.setrecursionlimit(max(sys.getrecursionlimit(), _saved + frames))
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0:
                sys.setrecursionlimit(_saved)
