"""Order-preserving index keys of the catalog's typed key columns."""

from __future__ import annotations

import uuid
from decimal import Decimal

from service.values import Kind, ShreddedType, index_key

T = ShreddedType


def test_index_keys_preserve_order() -> None:
    t = T.parse("decimal(18,2)")
    assert index_key(t, Decimal("-1.50")).num == -150
    assert index_key(T.parse("decimal(38,0)"), Decimal(10**30)).num is None  # beyond int64: no key
    assert index_key(T(Kind.UUID), uuid.UUID(int=1)).bin == b"\x00" * 15 + b"\x01"
    assert index_key(T(Kind.VARCHAR), "é").bin == "é".encode()
