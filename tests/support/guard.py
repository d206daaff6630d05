"""A guard against hangs: a call run in a thread, so that one that never returns fails its test
(with a message) instead of stopping the whole run. It bounds, it does not measure: keep the
bound far above anything the call may legitimately take."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: The default bound (seconds).
GUARD_S = 60.0


def returns(fn: Callable[[], T], within: float = GUARD_S) -> T:
    """``fn()``'s result or exception; AssertionError if it has not returned ``within`` seconds
    (the thread, a daemon, is left to end when what it waits for does)."""
    out: list[tuple[bool, Any]] = []

    def run() -> None:
        try:
            out.append((True, fn()))
        except BaseException as e:
            out.append((False, e))

    t = threading.Thread(target=run, name="guarded-call", daemon=True)
    t.start()
    t.join(within)
    assert out, f"did not return within {within:g} s: it hangs"
    ok, value = out[0]
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
