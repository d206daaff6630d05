"""No import circles in ``service``, in either of two senses, read from the source with ``ast``:

* **dependencies**: every ``import`` anywhere in a module (inside functions and ``if
  TYPE_CHECKING:`` too), each an edge to the module it names. A circle here means two modules
  that each need the other, however the import is deferred (issue 33 found two:
  ``client/base.py`` with ``sync.py``/``async_.py`` for its overloads, and
  ``expressions/builders.py`` → ``render.py`` → ``expressions``).
* **import time**: the imports that run when the module is loaded (module level, outside ``if
  TYPE_CHECKING:``), each also an edge to every package ``__init__`` Python runs to reach the
  named module. A circle here is a module that fails to import when it is the first one
  imported (``service.dashboard.format`` did: dashboard → ``service.api`` → app → dashboard).
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def modules(base: Path, package: str) -> dict[str, Path]:
    """Dotted name → file of every module of ``package`` (a directory under ``base``)."""
    out = {}
    for f in sorted((base / package).rglob("*.py")):
        parts = list(f.relative_to(base).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = f
    return out


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _load_time(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    for s in body:
        if isinstance(s, ast.Import | ast.ImportFrom):
            yield s
        elif isinstance(s, ast.If):
            if not _is_type_checking(s.test):
                yield from _load_time(s.body)
            yield from _load_time(s.orelse)
        elif isinstance(s, ast.Try):
            for block in (s.body, s.orelse, s.finalbody, *(h.body for h in s.handlers)):
                yield from _load_time(block)
        elif isinstance(s, ast.With):
            yield from _load_time(s.body)


def imported(name: str, file: Path, known: dict[str, Path], *, load_time: bool) -> set[str]:
    """The modules of ``known`` that module ``name`` imports."""
    tree = ast.parse(file.read_text(), str(file))
    nodes = (
        list(_load_time(tree.body))
        if load_time
        else [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    )
    package = name if file.name == "__init__.py" else name.rpartition(".")[0]
    out: set[str] = set()
    for n in nodes:
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names if a.name in known}
            continue
        base = n.module or ""
        if n.level:
            up = package.split(".")[: len(package.split(".")) - (n.level - 1)]
            base = ".".join([*up, *([n.module] if n.module else [])])
        for a in n.names:
            sub = f"{base}.{a.name}"
            if sub in known:
                out.add(sub)
            elif base in known:
                out.add(base)
    if load_time:  # importing a.b.c runs a/__init__.py and a/b/__init__.py first
        own = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 2)}
        for target in list(out):
            parts = target.split(".")
            out |= {p for i in range(1, len(parts)) if (p := ".".join(parts[:i])) in known and p not in own}
    out.discard(name)
    return out


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def import_graph(base: Path, package: str, *, load_time: bool) -> dict[str, set[str]]:
    known = modules(base, package)
    return {m: imported(m, f, known, load_time=load_time) for m, f in known.items()}


def test_service_has_no_dependency_circles() -> None:
    assert circles(import_graph(ROOT, "service", load_time=False)) == []


def test_service_has_no_circles_at_import_time() -> None:
    assert circles(import_graph(ROOT, "service", load_time=True)) == []


def test_a_dashboard_module_imports_first() -> None:
    """The import-time circle the graph found, checked for real in a fresh interpreter."""
    r = subprocess.run(
        [sys.executable, "-c", "import service.dashboard.format"], cwd=ROOT, capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr


def _package(tmp: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        f = tmp / "pkg" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(textwrap.dedent(text))
    return tmp


def test_finds_each_kind_of_circle(tmp_path: Path) -> None:
    base = _package(
        tmp_path,
        {
            "__init__.py": "",
            # Overloads naming each other's classes only for the type checker.
            "base.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sync import C\n",
            "sync.py": "from pkg.base import B\n",
            # A deferred import inside a function.
            "tree/__init__.py": "from pkg.tree.build import b\n",
            "tree/build.py": "def b():\n    from pkg import render\n",
            "render.py": "from .tree import b\n",
            # Through a package's __init__: only at import time.
            "api/__init__.py": "from pkg.api.app import app\n",
            "api/app.py": "import pkg.board\n",
            "api/auth.py": "",
            "board.py": "from pkg.api.auth import x\n",
            "plain.py": "import json\nfrom pkg import sync\n",
        },
    )
    deps = circles(import_graph(base, "pkg", load_time=False))
    assert deps == [["pkg.base", "pkg.sync"], ["pkg.render", "pkg.tree", "pkg.tree.build"]]
    at_load = circles(import_graph(base, "pkg", load_time=True))
    assert at_load == [["pkg.api", "pkg.api.app", "pkg.board"]]
