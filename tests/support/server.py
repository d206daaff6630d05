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
    server = launch_server(env, log_path, workers=workers, port=port)
    await_healthy(server, timeout)
    return server


def launch_server(env: Mapping[str, str], log_path: Path, *, workers: int = 1, port: int | None = None) -> Server:
    """Start ``shredcat serve --workers N`` without waiting for it (:func:`await_healthy` does)."""
    port = port or free_port()
    log = log_path.open("ab")
    proc = subprocess.Popen(
        [*shredcat_cmd(), "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", str(workers)],
        env=dict(env),
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return Server(f"http://127.0.0.1:{port}", proc, log_path, dict(env), log)


def await_healthy(server: Server, timeout: float = 60) -> None:
    """Wait until ``server``'s ``/health`` answers 200; stops it and raises if it never does."""
    import httpx

    proc, log_path = server.proc, server.log_path
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            server.stop()
            raise RuntimeError(f"shredcat serve exited with {proc.returncode}: {log_path.read_text()[-4000:]}")
        try:
            if httpx.get(server.base_url + "/health", timeout=2).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            server.stop()
            raise RuntimeError(f"shredcat serve was not healthy after {timeout} s: {log_path.read_text()[-4000:]}")
        time.sleep(0.1)


@contextlib.contextmanager
def running_server(env: Mapping[str, str], log_path: Path, **kw: Any) -> Iterator[Server]:
    server = start_server(env, log_path, **kw)
    with _stopped_after([server]):
        yield server


@contextlib.contextmanager
def running_servers(*specs: tuple[Mapping[str, str], Path], workers: int = 1, timeout: float = 60) -> Iterator[list[Server]]:
    """Several servers (each ``(env, log_path)``) started at once: their start-ups (imports,
    workers forking) overlap instead of queueing, as each server waits on nothing but itself."""
    servers: list[Server] = []
    try:
        for env, log_path in specs:
            servers.append(launch_server(env, log_path, workers=workers))
        for s in servers:
            await_healthy(s, timeout)
    except BaseException:
        for s in servers:
            s.stop()
        raise
    with _stopped_after(servers):
        yield servers


@contextlib.contextmanager
def _stopped_after(servers: list[Server]) -> Iterator[None]:
    failed = False
    try:
        yield
    except BaseException as e:
        import pytest

        failed = not isinstance(e, pytest.skip.Exception)  # pytest.fail counts; a skip does not
        raise
    finally:
        for server in servers:
            server.stop()
        if failed:
            for server in servers:
                _show_log(server.log_path)


def _show_log(log_path: Path) -> None:
    """A failing test shows what the server said (a 500's traceback), all of it once stopped."""
    try:
        tail = log_path.read_text(errors="replace")[-8000:]
    except OSError as e:
        tail = f"(cannot be read: {e})"
    sys.stderr.write(f"--- the server's log {log_path}, last 8,000 characters ---\n{tail}\n")
