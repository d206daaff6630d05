"""What the modules of a package import, read from their source (``ast``; nothing is imported),
and what a fresh interpreter has loaded after a real import (:func:`modules_loaded_by`)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import service

SERVICE_ROOT = Path(service.__file__).resolve().parent


def imported_modules(source: str, module: str, *, is_package: bool = False) -> set[str]:
    """Every module that ``source`` (the module named ``module``) imports anywhere: top level,
    functions, ``TYPE_CHECKING`` blocks; absolute dotted names, ``from a import b`` counting as
    ``a`` and ``a.b``."""
    package = module if is_package else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def package_imports(package: str) -> dict[str, set[str]]:
    """``{module file relative to service/: imported modules}`` for every module of
    ``service.<package>``."""
    out = {}
    for path in sorted((SERVICE_ROOT / package).rglob("*.py")):
        parts = path.relative_to(SERVICE_ROOT.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        module = ".".join(parts[:-1] if is_package else parts)
        out[str(path.relative_to(SERVICE_ROOT))] = imported_modules(
            path.read_text(encoding="utf-8"), module, is_package=is_package
        )
    return out


def offending(imports: set[str], forbidden: tuple[str, ...]) -> set[str]:
    """The imported modules that are, or are inside, one of ``forbidden``."""
    return {m for m in imports if any(m == f or m.startswith(f + ".") for f in forbidden)}


def modules_loaded_by(statements: str) -> list[str]:
    """Every module in ``sys.modules`` of a fresh interpreter after it ran ``statements``, sorted."""
    code = f"import sys\n{statements}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out.split()
