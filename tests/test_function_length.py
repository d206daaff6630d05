"""No function in service/ is longer than one screen (80 lines, from its ``def`` to its last line,
decorators aside): a longer one is split into named steps. One test for the whole package."""

from __future__ import annotations

import ast
from pathlib import Path

MAX_LINES = 80
SERVICE = Path(__file__).resolve().parent.parent / "service"


def long_functions(root: Path, limit: int) -> list[str]:
    """``path:line name (n lines)`` of every function under ``root`` longer than ``limit``."""
    out = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                assert node.end_lineno is not None
                n = node.end_lineno - node.lineno + 1
                if n > limit:
                    out.append(f"service/{rel}:{node.lineno} {node.name} ({n} lines)")
    return out


def test_no_function_is_longer_than_a_screen() -> None:
    assert long_functions(SERVICE, MAX_LINES) == []


def test_the_walk_finds_a_long_function(tmp_path: Path) -> None:
    # The check itself: a 90-line function is reported, an 80-line one is not, nested ones too.
    body = "\n".join(f"    x{i} = {i}" for i in range(88))
    (tmp_path / "long.py").write_text(f"def long():\n{body}\n    return 0\n")
    short = "\n".join(f"        y{i} = {i}" for i in range(78))
    (tmp_path / "nested.py").write_text(f"class C:\n    def short(self):\n{short}\n        return 0\n")
    assert long_functions(tmp_path, MAX_LINES) == ["service/long.py:1 long (90 lines)"]

