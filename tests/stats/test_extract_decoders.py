"""The statistics decoders the extractor specialises per (type, physical type) decode exactly as
the general decoder does, on any bytes (wrong lengths, NaN payloads, invalid UTF-8 included)."""

from __future__ import annotations

import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from service.stats.extract import _decode_general, _raw_decoder
from service.values import Kind, ShreddedType

_CASES = [
    (ShreddedType(Kind.INT8), "INT32"),
    (ShreddedType(Kind.INT32), "INT32"),
    (ShreddedType(Kind.INT64), "INT64"),
    (ShreddedType(Kind.DATE), "INT32"),
    (ShreddedType(Kind.TIMESTAMP), "INT64"),
    (ShreddedType(Kind.VARCHAR), "BYTE_ARRAY"),
    (ShreddedType(Kind.FLOAT64), "DOUBLE"),
    (ShreddedType(Kind.FLOAT32), "FLOAT"),
]

_raw = st.one_of(
    st.binary(max_size=10),
    st.floats(allow_nan=True).map(lambda x: struct.pack("<d", x)),
    st.integers(-(2**63), 2**63 - 1).map(lambda x: struct.pack("<q", x)),
    st.integers(-(2**31), 2**31 - 1).map(lambda x: struct.pack("<i", x)),
    st.text(max_size=5).map(str.encode),
)


@settings(max_examples=300, deadline=None)
@given(raw=_raw)
def test_specialised_decoders_agree_with_the_general_one(raw: bytes) -> None:
    for t, pt in _CASES:
        got = _raw_decoder(t, pt, None)(raw)
        want = _decode_general(t, pt, None, raw)
        assert repr(got) == repr(want), (t, pt, raw)  # repr: -0.0 and 0.0 differ
