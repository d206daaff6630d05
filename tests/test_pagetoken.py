"""service/pagetoken.py: the one page-token codec (REST pages, plan pages, dashboard cursors)."""

from __future__ import annotations

import base64

import pytest

from service import pagetoken
from service.errors import BadInputError

INVALID = BadInputError("invalid page token", details={"field": "page-token"})


@pytest.mark.parametrize(
    "doc",
    [
        {"after": "/lake/é.parquet", "snapshot": 7},
        {"a": 2**63 - 1, "s": -(2**63), "f": "0123abcd"},
        [12345, "/p"],
        [],
    ],
)
def test_round_trip_unpadded_url_safe(doc: object) -> None:
    token = pagetoken.encode(doc)
    assert "=" not in token and "+" not in token and "/" not in token
    assert pagetoken.decode(token, INVALID) == doc


@pytest.mark.parametrize(
    "token",
    [
        "%%%",
        "eyJ4Ijox",  # '{"x":1' cut short
        base64.urlsafe_b64encode(b"\xff\xfe").decode(),  # not UTF-8
        pagetoken.encode({"after": 2**63}),
        pagetoken.encode({"after": -(2**63) - 1}),
        pagetoken.encode([[[2**70]]]),
        pagetoken.encode({"a": {"b": [1, 2**100]}}),
        base64.urlsafe_b64encode(b"[" * 5000 + b"]" * 5000).decode(),  # deeper than the parser goes
    ],
)
def test_bad_tokens_raise_the_callers_error(token: str) -> None:
    with pytest.raises(BadInputError) as e:
        pagetoken.decode(token, INVALID)
    assert e.value is INVALID


def test_booleans_are_not_range_checked_integers() -> None:
    assert pagetoken.decode(pagetoken.encode({"x": True}), INVALID) == {"x": True}
