"""When a failed attempt is tried again, and after how long: the one retry policy of both clients.

A connection that could not be opened is always retried (the request never reached the server); a
broken connection, a timeout, 500, 502, 503 and 504 only for calls that are safe to repeat. The wait
grows exponentially from ``backoff`` (capped at :data:`MAX_BACKOFF`) with jitter, and is at least
the server's ``Retry-After``.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx

from service.values.text import ascii_digits

MAX_BACKOFF = 10.0
RETRY_STATUSES = frozenset({500, 502, 503, 504})


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    #: Extra attempts after the first.
    retries: int
    #: Seconds before the first retry; doubled for each further one.
    backoff: float

    def __post_init__(self) -> None:
        if self.retries < 0 or self.backoff < 0:
            raise ValueError("retries and backoff must be >= 0")

    def after_error(self, exc: httpx.TransportError, attempt: int, *, idempotent: bool) -> float | None:
        """The wait before retrying attempt ``attempt`` (from 0) that failed with ``exc``; None:
        give up."""
        never_sent = isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout)
        if attempt >= self.retries or not (never_sent or idempotent):
            return None
        return self._wait(attempt)

    def after_response(self, r: httpx.Response, attempt: int, *, idempotent: bool) -> float | None:
        """The wait before retrying attempt ``attempt`` (from 0) that was answered ``r``; None: the
        answer is final."""
        if r.is_success or attempt >= self.retries or not idempotent or r.status_code not in RETRY_STATUSES:
            return None
        wait = self._wait(attempt)
        retry_after = r.headers.get("retry-after")
        if retry_after and ascii_digits(retry_after):
            wait = max(wait, min(MAX_BACKOFF, float(retry_after)))
        return wait

    def _wait(self, attempt: int) -> float:
        return min(MAX_BACKOFF, self.backoff * 2.0**attempt) * (0.5 + random.random() / 2)
