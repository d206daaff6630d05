"""A real ``shredcat serve`` subprocess for end-to-end tests (API, dashboard, operations):
started in its own process group, awaited on ``/health``, always stopped."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def shredcat_cmd() -> list[str]:
    exe = Path(sys.executable).parent / "shredcat"
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "service.cli"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    """A running ``shredcat serve`` (its own process group, so every worker is stopped with it)."""

    base_url: str
    proc: subprocess.Popen[bytes]
    log_path: Path
    env: dict[str, str] = field(repr=False)
    _log: Any = field(default=None, repr=False)

    def log_lines(self) -> list[str]:
        return self.log_path.read_text(errors="replace").splitlines()

    def kill(self) -> None:
        """SIGKILL the whole process group (no graceful shutdown)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=15)

    def stop(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        # Workers of a killed master must not outlive it.
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        if self._log is not None:
            self._log.close()
            self._log = None


def start_server(
    env: Mapping[str, str], log_path: Path, *, workers: int = 1, port: int | None = None, timeout: float = 60
) -> Server:
    """Start ``shredcat serve --workers N`` and wait until ``/health`` answers 200."""
    import httpx

    port = port or free_port()
    log = log_path.open("ab")
    proc = subprocess.Popen(
        [*shredcat_cmd(), "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)],
        env=dict(env),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    server = Server(f"http://127.0.0.1:{port}", proc, log_path, dict(env), log)
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            server.stop()
            raise RuntimeError(f"shredcat serve exited with {proc.returncode}: {log_path.read_text()[-4000:]}")
        try:
            if httpx.get(server.base_url + "/health", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"shredcat serve was not healthy after {timeout} s: {log_path.read_text()[-4000:]}")
        time.sleep(0.1)


@contextlib.contextmanager
def running_server(env: Mapping[str, str], log_path: Path, **kw: Any) -> Iterator[Server]:
    server = start_server(env, log_path, **kw)
    failed = False
    try:
        yield server
    except BaseException as e:
        import pytest

        failed = not isinstance(e, pytest.skip.Exception)  # pytest.fail counts; a skip does not
        raise
    finally:
        server.stop()
        if failed:
            # A failing test shows what the server said (a 500's traceback), all of it once stopped.
            try:
                tail = log_path.read_text(errors="replace")[-8000:]
            except OSError as e:
                tail = f"(cannot be read: {e})"
            sys.stderr.write(f"--- the server's log {log_path}, last 8,000 characters ---\n{tail}\n")
