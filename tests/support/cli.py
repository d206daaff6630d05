"""``shredcat`` commands for tests: a real subprocess, or the same ``main(argv)`` in this process.

A ``shredcat`` process spends 1-2 s of CPU importing (SQLAlchemy, sqlglot, the catalog) before its
command's own work of a few milliseconds. A test proves each CLI behaviour once in a real process
(exit status, output streams, environment as a user's shell gives it); the variations of that
behaviour it also checks (another flag, another snapshot) run the same parser and command in this
process with the same environment, and give the same exit status and output.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence

SHREDCAT = [sys.executable, "-m", "service.cli"]


def shredcat(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    real: bool = True,
    cwd: str | os.PathLike[str] | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """``shredcat *args`` with exactly ``env`` as its environment: a subprocess if ``real``, else
    :func:`service.cli.main` here (the settings' cache cleared around it)."""
    if real:
        return subprocess.run([*SHREDCAT, *args], env=dict(env), cwd=cwd, capture_output=True, text=True, timeout=timeout)
    from service.cli import main
    from service.settings import get_settings

    out, err = io.StringIO(), io.StringIO()
    with _environment(env), _cwd(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        get_settings.cache_clear()
        try:
            code = main(list(args))
        except SystemExit as e:  # argparse's usage errors (a process's exit status)
            code = e.code if isinstance(e.code, int) else int(e.code is not None)
        finally:
            get_settings.cache_clear()
    return subprocess.CompletedProcess([*SHREDCAT, *args], code, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """``os.environ`` replaced by ``env`` for the block (the command reads it as its own)."""
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@contextlib.contextmanager
def _cwd(cwd: str | os.PathLike[str] | None) -> Iterator[None]:
    if cwd is None:
        yield
        return
    with contextlib.chdir(cwd):
        yield
