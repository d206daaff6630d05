"""Credentials that expire (AWS temporary keys, Google OAuth tokens): fetched from a source on
first use and again shortly before they expire, shared by a store's threads.

A source is anything with ``fetch(http, uri) -> Expiring`` and a ``describe`` string; ``uri`` is
the object whose request needs the credentials, named in the source's errors (typed
:class:`~service.errors.ObjectStoreError` subclasses).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, Protocol, TypeVar

from service.errors import ObjectAccessDeniedError, ObjectStoreError
from service.storage.objects.http import HttpSender

log = logging.getLogger(__name__)

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: Credentials are renewed when less than this is left (seconds): a request signed with them must
#: still be valid when it arrives, retries included.
REFRESH_MARGIN = 300.0


@dataclass(frozen=True, slots=True)
class Expiring(Generic[T]):
    value: T
    #: Epoch seconds; None: they never expire (keys, a token given as is).
    expires: float | None = None


class Source(Protocol[T_co]):
    describe: str

    def fetch(self, http: HttpSender, uri: str) -> Expiring[T_co]: ...


class Renewing(Generic[T]):
    """A source's credentials, fetched on first use and again when they are about to expire (one
    fetch at a time). A renewal that fails while the current credentials are still valid is
    logged, and tried again at the next request."""

    def __init__(self, source: Source[T], http: HttpSender, clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self._http = http
        self._clock = clock
        self._lock = threading.Lock()
        self._current: Expiring[T] | None = None

    def get(self, uri: str) -> T:
        with self._lock:
            cur = self._current
            now = self._clock()
            if cur is not None and (cur.expires is None or cur.expires - now > REFRESH_MARGIN):
                return cur.value
            try:
                self._current = self.source.fetch(self._http, uri)
            except ObjectStoreError as e:
                if cur is None or cur.expires is None or cur.expires <= now:
                    raise
                log.warning("could not renew the credentials (%s); the current ones stay in use: %s", self.source.describe, e)
                return cur.value
            return self._current.value


def parse_expiry(text: str | None, uri: str, where: str) -> float:
    """An ISO 8601 expiration time (``2026-11-24T21:00:00Z``) as epoch seconds."""
    try:
        return datetime.fromisoformat((text or "").strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ObjectAccessDeniedError(
            f"{uri}: no credentials: {where} gave no valid expiration ({text!r})", details={"path": uri}
        ) from None


__all__ = ["REFRESH_MARGIN", "Expiring", "Renewing", "Source", "parse_expiry"]
