"""Names a package exports without importing their modules until first used.

Read commands must not pay for modules they never touch (``shredcat prune`` imports the read side
only; ``tests/cli/test_imports.py`` checks which modules load), and some packages would otherwise
import themselves in a circle. A package lists its names and the submodule of each, and sets
``__getattr__ = lazy_exports(__name__, exports)``; mypy and readers see the names through an
``if TYPE_CHECKING:`` import block beside it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: each name of ``exports`` is read from its submodule
    (``exports[name]``, relative to the package) on first use, then kept in the package."""

    def __getattr__(name: str) -> Any:
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        setattr(sys.modules[package], name, value)  # later uses are plain attribute reads
        return value

    return __getattr__
