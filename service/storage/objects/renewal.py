"""Credentials that expire (AWS temporary keys, Google and Azure AD OAuth tokens): fetched from a
source on first use and again shortly before they expire, shared by a store's threads; and what
the three clouds' credential sources share (OAuth 2 token requests and answers, their errors).

A source is anything with ``fetch(http, uri) -> Expiring`` and a ``describe`` string; ``uri`` is
the object whose request needs the credentials, named in the source's errors (typed
:class:`~service.errors.ObjectStoreError` subclasses).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar
from urllib.parse import urlencode

from service.errors import ObjectAccessDeniedError, ObjectStoreError, ObjectStoreUnavailableError
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
    fetch at a time): :data:`REFRESH_MARGIN` before, or halfway through a shorter lifetime (so
    credentials that live a few minutes are not fetched again for every request). A renewal that
    fails while the current credentials are still valid is logged, and tried again at the next
    request."""

    def __init__(self, source: Source[T], http: HttpSender, clock: Callable[[], float] = time.time) -> None:
        self.source = source
        self._http = http
        self._clock = clock
        self._lock = threading.Lock()
        self._current: Expiring[T] | None = None
        #: When to fetch again (None: never).
        self._renew_at: float | None = None

    def get(self, uri: str) -> T:
        with self._lock:
            cur = self._current
            now = self._clock()
            if cur is not None and (self._renew_at is None or now < self._renew_at):
                return cur.value
            try:
                fresh = self.source.fetch(self._http, uri)
            except ObjectStoreError as e:
                if cur is None or cur.expires is None or cur.expires <= now:
                    raise
                log.warning("could not renew the credentials (%s); the current ones stay in use: %s", self.source.describe, e)
                return cur.value
            self._current = fresh
            if fresh.expires is None:
                self._renew_at = None
            else:
                self._renew_at = fresh.expires - min(REFRESH_MARGIN, max(fresh.expires - now, 0.0) / 2)
            return fresh.value


def parse_expiry(text: str | None, uri: str, where: str) -> float:
    """An ISO 8601 expiration time (``2026-11-24T21:00:00Z``) as epoch seconds."""
    try:
        return datetime.fromisoformat((text or "").strip().replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ObjectAccessDeniedError(
            f"{uri}: no credentials: {where} gave no valid expiration ({text!r})", details={"path": uri}
        ) from None


#: How a metadata server that may not be there (no cloud, another cloud's) is asked: twice, each
#: attempt waiting at most a second, so a machine without one loses two seconds at most.
PROBE: dict[str, Any] = {"attempts": 2, "timeout": 1.0}
#: No metadata server, or no identity in it: how long requests go unsigned (anonymous) before it
#: is asked again (an instance may get a role; a hiccup must not last).
ABSENT_SECONDS = 3600.0


def absent(message: str) -> Expiring[Any]:
    """No credentials to be had here for now (``message`` says why and what follows): logged, and
    asked again after :data:`ABSENT_SECONDS`."""
    log.info("%s", message)
    return Expiring(None, time.time() + ABSENT_SECONDS)


def read_token_file(path: str, uri: str, what: str, *, prefix: str = "no credentials") -> str:
    """The token in the file ``path`` (read again at each renewal: the platform rotates it), else
    an :class:`~service.errors.ObjectAccessDeniedError` naming ``what`` file cannot be read."""
    try:
        return Path(path).read_text(encoding="utf-8").strip()
    except OSError as e:
        raise ObjectAccessDeniedError(
            f"{uri}: {prefix}: the {what} {path} cannot be read ({e.strerror or e})", details={"path": uri}
        ) from None


def config_error(message: str) -> ObjectAccessDeniedError:
    """A credentials configuration that cannot work (a profile or credentials file that names
    what cannot be used): access denied, whatever the store would say."""
    return ObjectAccessDeniedError(message)


def refused(uri: str, status: int, what: str) -> ObjectStoreError:
    """A credentials endpoint's refusal: unavailable for a 5xx, else access denied."""
    cls = ObjectStoreUnavailableError if status >= 500 else ObjectAccessDeniedError
    return cls(f"{uri}: no credentials: {what}", details={"path": uri, "status": status})


def json_object(data: bytes | str) -> dict[str, Any] | None:
    """The JSON object ``data`` holds; None when it is not JSON, or JSON but not an object (what
    every credentials answer, file and command output is read with before its fields are checked)."""
    try:
        doc = json.loads(data)
    except ValueError:  # JSONDecodeError, UnicodeDecodeError
        return None
    return doc if isinstance(doc, dict) else None


def error_detail(status: int, body: bytes) -> str:
    """``HTTP 401: invalid_client (first line of the description)`` from an OAuth 2 error
    (``error`` + ``error_description``) or Azure's (``error: {code, message}``)."""
    doc = json_object(body)
    detail = f"HTTP {status}"
    if doc is not None and doc.get("error"):
        err = doc["error"]
        detail += f": {err.get('code', err) if isinstance(err, dict) else err}"
        desc = doc.get("error_description") or (err.get("message") if isinstance(err, dict) else None)
        if desc:
            detail += f" ({str(desc).splitlines()[0]})"
    return detail


def token_request(http: HttpSender, uri: str, url: str, form: Mapping[str, str], where: str) -> Expiring[str]:
    """An OAuth 2 token endpoint's access token for ``form`` (POSTed as a form)."""
    r = http.send(
        "POST", url, uri, headers={"content-type": "application/x-www-form-urlencoded"}, content=urlencode(form).encode()
    )
    if r.status != 200:
        raise refused(uri, r.status, f"{where} answered {error_detail(r.status, r.body)}")
    return parse_token(r.body, uri, where)


def parse_token(body: bytes, uri: str, where: str, now: float | None = None) -> Expiring[str]:
    """A token answer: ``access_token`` with ``expires_in`` (seconds, a number or a numeral, as
    Azure AD gives it) or ``expires_on`` (epoch seconds, as Azure's managed identity gives it)."""
    doc = json_object(body)
    if doc is None or not isinstance(doc.get("access_token"), str) or not doc["access_token"]:
        raise ObjectAccessDeniedError(f"{uri}: no credentials: {where} answered without an access token", details={"path": uri})
    now = time.time() if now is None else now
    raw = doc.get("expires_on") if doc.get("expires_on") is not None else doc.get("expires_in")
    try:
        if isinstance(raw, bool):
            raise ValueError(raw)
        n = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        n = 0.0
    expires = n if doc.get("expires_on") is not None else now + n
    if not n > 0 or not expires > now - REFRESH_MARGIN:
        raise ObjectAccessDeniedError(f"{uri}: no credentials: {where} gave no valid expiry ({raw!r})", details={"path": uri})
    return Expiring(doc["access_token"], expires)


__all__ = [
    "ABSENT_SECONDS",
    "PROBE",
    "REFRESH_MARGIN",
    "Expiring",
    "Renewing",
    "Source",
    "absent",
    "error_detail",
    "json_object",
    "parse_expiry",
    "parse_token",
    "read_token_file",
    "refused",
    "token_request",
]
