"""Page tokens: opaque strings handed to clients, the unpadded base64url of compact JSON.

The one codec of every paged answer: the REST API's file and snapshot pages, the planner's
candidate pages (:mod:`service.catalog.planner`) and the dashboard's cursors. Each caller says
which error a bad token is (the API names its field, the dashboard asks to start over). The keys
a token carries end up as database parameters, so an integer outside the signed 64-bit range is
a bad token too, never an overflow in the driver.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from service.errors import ShredcatError
from service.values.text import first_string, unstorable

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


def encode(doc: object) -> str:
    """The token of a JSON-serializable ``doc``."""
    raw = json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def decode(token: str, invalid: ShredcatError) -> Any:
    """The JSON document of ``token``; raises ``invalid`` when it is not one (or holds an integer
    beyond int64, or text the catalog cannot hold: no token it made does). Callers check the
    document's shape."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        doc = json.loads(raw.decode("utf-8"))
        fits = _int64_only(doc)
    # binascii.Error and JSONDecodeError are ValueErrors; RecursionError: absurdly deep nesting.
    except (ValueError, UnicodeDecodeError, RecursionError):
        raise invalid from None
    if not fits or first_string(doc, unstorable) is not None:
        raise invalid
    return doc


def _int64_only(doc: Any) -> bool:
    if isinstance(doc, bool):
        return True
    if isinstance(doc, int):
        return INT64_MIN <= doc <= INT64_MAX
    if isinstance(doc, list):
        return all(_int64_only(v) for v in doc)
    if isinstance(doc, dict):
        return all(_int64_only(v) for v in doc.values())
    return True
