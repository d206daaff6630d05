"""Functions fit on one screen (the developers' guide: at most 80 lines) in the dashboard and the
catalog's dashboard reads: issue 36 split the three that did not (the range chart, the playground's
run, the table page) into named steps."""

from __future__ import annotations

import ast
from pathlib import Path

import service

ROOT = Path(service.__file__).parent
LIMIT = 80


def _long_functions(path: Path, root: Path = ROOT) -> list[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    return [
        f"{path.relative_to(root)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"  # type: ignore[operator]
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno - node.lineno + 1 > LIMIT  # type: ignore[operator]
    ]


def test_dashboard_functions_fit_on_one_screen() -> None:
    files = [*sorted((ROOT / "dashboard").rglob("*.py")), ROOT / "catalog" / "history.py"]
    assert len(files) > 10
    long = [f for p in files for f in _long_functions(p)]
    assert long == [], long


def test_the_rule_sees_a_long_function(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(LIMIT))
    p = tmp_path / "long.py"
    p.write_text(f"def f() -> None:\n{body}\n")
    assert _long_functions(p, tmp_path) == ["long.py:1 f (81 lines)"]
