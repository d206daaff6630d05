"""What a benchmark ran on, printed beside its figures (BENCHMARKS.md records it)."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (``platform.processor()`` elsewhere)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def describe() -> str:
    """``2 CPUs (AMD EPYC ...), 24 GiB RAM, Python 3.11.7``."""
    try:
        mem = f"{int(Path('/proc/meminfo').read_text().split()[1]) / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        mem = "?"
    return f"{os.cpu_count()} CPUs ({cpu_model()}), {mem} RAM, Python {platform.python_version()}"
