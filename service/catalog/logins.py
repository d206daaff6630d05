"""Failed sign-in limits, as plain values and one pure function: how long a client must wait given
the failures of the last window (the catalog counts them: :meth:`service.catalog.Catalog.login_attempt`).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta


@dataclass(frozen=True)
class LoginLimits:
    """Failed sign-ins allowed per client address and from all addresses together, per window."""

    per_address: int
    total: int
    window_s: float = 60.0

    @property
    def window(self) -> timedelta:
        return timedelta(seconds=self.window_s)


@dataclass(frozen=True)
class Throttled:
    """A sign-in refused before its token was looked at: try again in ``retry_after`` seconds."""

    retry_after: int


def address_digest(address: str) -> str:
    """What the catalog keeps of a client address (sha256 hex), like signed-out sessions' cookies.
    Kept one window only; an IPv4 address can be found again from it by trying them all, so it
    keeps the address out of the catalog's dumps and logs, not secret from its administrator."""
    return hashlib.sha256(address.encode("utf-8", "surrogateescape")).hexdigest()


def _wait_s(newest: Sequence[datetime], limit: int, limits: LoginLimits, now: datetime) -> float:
    """Seconds until fewer than ``limit`` of these failures are in the window: ``newest`` holds the
    most recent ones of the window, newest first, at most ``limit`` of them (more change nothing)."""
    if len(newest) < limit:
        return 0.0
    return (newest[limit - 1] + limits.window - now).total_seconds()


def retry_after(
    mine: Sequence[datetime], everyone: Sequence[datetime], limits: LoginLimits, now: datetime
) -> int | None:
    """Whole seconds (at least 1) to wait before this address may try again, or None when it may
    try now. ``mine``/``everyone``: the newest failures of the window of this address (up to
    ``per_address`` of them) and of all addresses (up to ``total``), newest first."""
    wait = max(_wait_s(mine, limits.per_address, limits, now), _wait_s(everyone, limits.total, limits, now))
    return max(1, math.ceil(wait)) if wait > 0 else None
