"""Tests for the pure Variant binary codec: conformance files, round trips, malformed input."""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import json
import re
import struct
import uuid
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from service.errors import BadInputError
from service.variant.binary import (
    MAX_DEPTH,
    InvalidVariantError,
    VariantMetadata,
    VariantValue,
    decode,
    decode_metadata,
    decode_value,
    encode,
    encode_metadata,
    encode_value,
    is_variant_null,
    metadata_length,
    to_python,
    varr,
    vbinary,
    vbool,
    vdecimal,
    vdouble,
    vint,
    vnull,
    vobj,
    vstr,
)
from tests.support.conformance import PARQUET_TESTING as CONFORMANCE
from tests.support.conformance import needs_corpus

VARIANT_DIR = CONFORMANCE / "variant"
SHREDDED_DIR = CONFORMANCE / "shredded_variant"

needs_variant_dir = needs_corpus(VARIANT_DIR)
needs_shredded_dir = needs_corpus(SHREDDED_DIR)

EMPTY_METADATA = b"\x01\x00\x00"
EPOCH = dt.date(1970, 1, 1)


# --- parquet-testing/variant ------------------------------------------------------------------


def _load_lenient_json(path: Path) -> dict[str, object]:
    # data_dictionary.json ends with `",\n}`: a trailing comma plain json rejects.
    return json.loads(re.sub(r",\s*}\s*$", "}", path.read_text(encoding="utf-8")))


def _variant_examples() -> list[str]:
    if not VARIANT_DIR.is_dir():
        return []
    return sorted(p.stem for p in VARIANT_DIR.glob("*.metadata"))


def _read_example(name: str) -> tuple[bytes, bytes]:
    return (VARIANT_DIR / f"{name}.metadata").read_bytes(), (VARIANT_DIR / f"{name}.value").read_bytes()


# The physical kind each primitive example must decode to (the file name is not always the kind).
EXPECTED_KIND = {
    "primitive_binary": "binary",
    "primitive_boolean_false": "boolean",
    "primitive_boolean_true": "boolean",
    "primitive_date": "date",
    "primitive_decimal16": "decimal16",
    "primitive_decimal4": "decimal4",
    "primitive_decimal8": "decimal8",
    "primitive_double": "double",
    "primitive_float": "float",
    "primitive_int16": "int16",
    "primitive_int32": "int32",
    "primitive_int64": "int64",
    "primitive_int8": "int8",
    "primitive_null": "null",
    "primitive_string": "string",
    "primitive_time": "time",
    "primitive_timestamp": "timestamptz",
    "primitive_timestamp_nanos": "timestamptz_ns",
    "primitive_timestampntz": "timestampntz",
    "primitive_timestampntz_nanos": "timestampntz_ns",
    "primitive_uuid": "uuid",
    "short_string": "string",
    "long_string": "string",
    "array_empty": "array",
    "array_nested": "array",
    "array_primitive": "array",
    "object_empty": "object",
    "object_nested": "object",
    "object_primitive": "object",
}


def _float32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _epoch_nanos(text: str) -> int:
    """Nanoseconds since the epoch of an ISO-ish timestamp with up to 9 fractional digits; a missing
    offset means UTC (timestamp without time zone)."""
    m = re.fullmatch(r"(\d{4}-\d\d-\d\d)[T ](\d\d):(\d\d):(\d\d)(?:\.(\d{1,9}))?([+-]\d\d:\d\d)?", text)
    assert m, text
    day, hh, mm, ss, frac, offset = m.groups()
    nanos = (dt.date.fromisoformat(day) - EPOCH).days * 86_400 * 10**9
    nanos += (int(hh) * 3600 + int(mm) * 60 + int(ss)) * 10**9 + int((frac or "").ljust(9, "0"))
    if offset:
        sign = -1 if offset[0] == "-" else 1
        nanos -= sign * (int(offset[1:3]) * 3600 + int(offset[4:6]) * 60) * 10**9
    return nanos


def _matches(v: VariantValue, expected: object) -> bool:
    """Whether a decoded value is what data_dictionary.json's JSON rendering describes."""
    kind, value = v.kind, v.value
    if kind == "object":
        return (
            isinstance(expected, dict)
            and list(v.fields) == list(expected)
            and all(_matches(child, expected[k]) for k, child in v.fields.items())
        )
    if kind == "array":
        return (
            isinstance(expected, list)
            and len(v.elements) == len(expected)
            and all(_matches(c, e) for c, e in zip(v.elements, expected, strict=True))
        )
    if kind in ("null", "boolean"):
        return value is expected
    if kind in ("int8", "int16", "int32", "int64", "double", "string"):
        return value == expected
    if kind == "float":
        # The JSON has the float32 value's shortest decimal form (1234567940.0 for 1234567936.0f).
        return isinstance(expected, float) and value == _float32(expected)
    if kind.startswith("decimal"):
        # The JSON renders decimals as doubles, so compare at double precision.
        return isinstance(value, Decimal) and float(value) == expected
    if kind == "date":
        return value == (dt.date.fromisoformat(str(expected)) - EPOCH).days
    if kind == "time":
        # Rendered as "12:33:54:123456": a colon, not a dot, before the microseconds.
        hh, mm, ss, micros = (int(part) for part in str(expected).split(":"))
        return value == ((hh * 60 + mm) * 60 + ss) * 10**6 + micros
    if kind in ("timestamptz", "timestampntz"):
        return value * 1000 == _epoch_nanos(str(expected))
    if kind in ("timestamptz_ns", "timestampntz_ns"):
        return value == _epoch_nanos(str(expected))
    if kind == "binary":
        return value == base64.b64decode(str(expected))
    if kind == "uuid":
        return value == uuid.UUID(str(expected))
    raise AssertionError(kind)


@needs_variant_dir
def test_every_variant_example_is_known() -> None:
    names = set(_variant_examples())
    assert names == set(EXPECTED_KIND)
    expected = _load_lenient_json(VARIANT_DIR / "data_dictionary.json")
    # long_string has .metadata/.value files but no entry in data_dictionary.json.
    assert names - set(expected) == {"long_string"}


@needs_variant_dir
# Without the corpus, one missing name runs: skipped by the marker on a laptop, failing under CI.
@pytest.mark.parametrize("name", _variant_examples() or ["corpus-missing"])
def test_variant_example_decodes_to_documented_value(name: str) -> None:
    metadata, value = _read_example(name)
    decoded = decode(metadata, value)
    assert decoded.kind == EXPECTED_KIND[name]
    expected = _load_lenient_json(VARIANT_DIR / "data_dictionary.json")
    if name == "long_string":
        text = decoded.value
        assert isinstance(text, str)
        assert len(text.encode()) >= 64 and text.startswith("This string is for sure and certainly longer")
    else:
        assert _matches(decoded, expected[name]), (to_python(decoded), expected[name])
    assert metadata_length(metadata + value) == len(metadata)
    # Writers may lay out field values in any order, so re-encoding need not give the same bytes,
    # but it must decode to the same value.
    key_ids = {k: i for i, k in enumerate(decode_metadata(metadata).keys)}
    assert decode(metadata, encode_value(decoded, key_ids)) == decoded


@needs_variant_dir
def test_variant_example_details() -> None:
    assert decode(*_read_example("primitive_decimal4")).value.as_tuple().exponent == -2  # type: ignore[union-attr]
    assert str(decode(*_read_example("primitive_decimal16")).value) == "12345678912345678.90"
    # object_primitive's "double_field" is documented as 1.23456789 but Spark stored a decimal.
    primitive_fields = decode(*_read_example("object_primitive")).fields
    assert primitive_fields["double_field"] == VariantValue("decimal4", Decimal("1.23456789"))
    assert primitive_fields["timestamp_field"] == vstr("2025-04-16T12:34:56.78")
    nested = to_python(decode(*_read_example("object_nested")))
    assert nested == {
        "id": 1,
        "observation": {
            "location": "In the Volcano",
            "time": "12:34:56",
            "value": {"humidity": 456, "temperature": 123},
        },
        "species": {"name": "lava monster", "population": 6789},
    }
    assert decode_metadata(_read_example("object_nested")[0]).sorted_strings is False
    assert is_variant_null(_read_example("primitive_null")[1])


# --- parquet-testing/shredded_variant ---------------------------------------------------------

_SHREDDED_TYPE_NAMES = {
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "float": "FLOAT",
    "double": "DOUBLE",
    "decimal4": "DECIMAL4",
    "decimal8": "DECIMAL8",
    "decimal16": "DECIMAL16",
    "date": "DATE",
    "timestamptz": "TIMESTAMPTZ",
    "timestampntz": "TIMESTAMPNTZ",
    "timestamptz_ns": "TIMESTAMPTZ_NANOS",
    "timestampntz_ns": "TIMESTAMPNTZ_NANOS",
    "time": "TIME",
    "binary": "BINARY",
    "string": "STRING",
    "uuid": "UUID",
    "null": "NULL",
}


def _java_number(shortest: str) -> str:
    """Java's Double/Float.toString from the shortest round-tripping decimal string."""
    d = Decimal(shortest)
    if d.is_zero():
        return "-0.0" if d.is_signed() else "0.0"
    if Decimal("1e-3") <= abs(d) < Decimal("1e7"):
        plain = format(d, "f")
        return plain if "." in plain else plain + ".0"
    sign, digits, _ = d.as_tuple()
    mantissa = f"{digits[0]}.{''.join(map(str, digits[1:])) or '0'}"
    return f"{'-' if sign else ''}{mantissa}E{d.adjusted()}"


def _shortest_float32(x: float) -> str:
    for precision in range(1, 10):
        text = f"{x:.{precision}g}"
        if _float32(float(text)) == x:
            return text
    return repr(x)


def _java_local_time(nanos_of_day: int) -> str:
    # java.time.LocalTime.toString: seconds only when non-zero, fraction in groups of 3 digits.
    seconds, frac = divmod(nanos_of_day, 10**9)
    hh, rest = divmod(seconds, 3600)
    mm, ss = divmod(rest, 60)
    out = f"{hh:02d}:{mm:02d}"
    if ss or frac:
        out += f":{ss:02d}"
    if frac % 10**6 == 0 and frac:
        out += f".{frac // 10**6:03d}"
    elif frac % 1000 == 0 and frac:
        out += f".{frac // 1000:06d}"
    elif frac:
        out += f".{frac:09d}"
    return out


def _java_timestamp(nanos: int, with_zone: bool) -> str:
    days, nanos_of_day = divmod(nanos, 86_400 * 10**9)
    day = EPOCH + dt.timedelta(days=days)
    return f"{day.isoformat()}T{_java_local_time(nanos_of_day)}{'+00:00' if with_zone else ''}"


def _iceberg_value(v: VariantValue) -> str:
    """Mirror of Iceberg's Variant toString used for cases.json's `variant` strings."""
    kind, value = v.kind, v.value
    if kind == "object":
        inner = ", ".join(f"{k}: {_iceberg_value(c)}" for k, c in v.fields.items())
        return f"VariantObject(fields={{{inner}}})"
    if kind == "array":
        return f"VariantArray([{', '.join(_iceberg_value(c) for c in v.elements)}])"
    if kind == "boolean":
        return f"Variant(type=BOOLEAN_{'TRUE' if value else 'FALSE'}, value={'true' if value else 'false'})"
    if kind == "null":
        text = "null"
    elif kind == "double":
        text = _java_number(repr(value))
    elif kind == "float":
        assert isinstance(value, float)
        text = _java_number(_shortest_float32(value))
    elif kind == "date":
        assert isinstance(value, int)
        text = (EPOCH + dt.timedelta(days=value)).isoformat()
    elif kind == "time":
        assert isinstance(value, int)
        text = _java_local_time(value * 1000)
    elif kind in ("timestamptz", "timestampntz"):
        assert isinstance(value, int)
        text = _java_timestamp(value * 1000, kind == "timestamptz")
    elif kind in ("timestamptz_ns", "timestampntz_ns"):
        assert isinstance(value, int)
        text = _java_timestamp(value, kind == "timestamptz_ns")
    elif kind == "binary":
        assert isinstance(value, bytes)
        text = value.hex().upper()
    else:  # ints, decimals (Python's and Java's BigDecimal toString agree), string, uuid
        text = str(value)
    return f"Variant(type={_SHREDDED_TYPE_NAMES[kind]}, value={text})"


def _iceberg_variant(blob: bytes) -> str:
    split = metadata_length(blob)
    metadata = decode_metadata(blob[:split])
    value = decode_value(metadata, blob[split:])
    entries = ", ".join(f"{i} => {k}" for i, k in enumerate(metadata.keys))
    return f"Variant(metadata=VariantMetadata(dict={{{entries}}}), value={_iceberg_value(value)})"


def _shredded_cases() -> list[dict[str, object]]:
    if not SHREDDED_DIR.is_dir():
        return []
    return [
        c
        for c in json.loads((SHREDDED_DIR / "cases.json").read_text())
        if "variant_file" in c or "variant_files" in c
    ]


@needs_shredded_dir
def test_every_variant_bin_decodes() -> None:
    files = sorted(SHREDDED_DIR.glob("*.variant.bin"))
    assert len(files) > 100
    for path in files:
        blob = path.read_bytes()
        split = metadata_length(blob)
        decode(blob[:split], blob[split:])


@needs_shredded_dir
@pytest.mark.parametrize(
    "case", _shredded_cases() or [{"case_number": -1}], ids=lambda c: f"case-{c['case_number']:03d}"
)
def test_variant_bin_matches_cases_json(case: dict[str, object]) -> None:
    if "variant_file" in case:
        rendered = _iceberg_variant((SHREDDED_DIR / str(case["variant_file"])).read_bytes())
        assert rendered == case["variant"]
    else:
        files = case["variant_files"]
        assert isinstance(files, list)
        parts = ["null" if f is None else _iceberg_variant((SHREDDED_DIR / f).read_bytes()) for f in files]
        assert f"[{', '.join(parts)}]" == case["variants"]


@needs_shredded_dir
def test_shredded_cases_cover_every_kind() -> None:
    seen: set[str] = set()

    def walk(v: VariantValue) -> None:
        seen.add(v.kind)
        if v.kind == "object":
            for child in v.fields.values():
                walk(child)
        elif v.kind == "array":
            for child in v.elements:
                walk(child)

    for path in SHREDDED_DIR.glob("*.variant.bin"):
        blob = path.read_bytes()
        split = metadata_length(blob)
        walk(decode(blob[:split], blob[split:]))
    assert seen == set(_SHREDDED_TYPE_NAMES) | {"boolean", "object", "array"}


# --- Round trips ------------------------------------------------------------------------------


def _decimals(kind: str, bits: int) -> st.SearchStrategy[VariantValue]:
    limit = min(1 << (bits - 1), 10**38)
    return st.builds(
        lambda unscaled, scale: VariantValue(kind, Decimal(f"{unscaled}E-{scale}")),
        st.integers(-limit + 1, limit - 1),
        st.integers(0, 38),
    )


def _ints(kind: str, bits: int) -> st.SearchStrategy[VariantValue]:
    return st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1).map(lambda i: VariantValue(kind, i))


primitives: st.SearchStrategy[VariantValue] = st.one_of(
    st.just(vnull()),
    st.booleans().map(vbool),
    _ints("int8", 8),
    _ints("int16", 16),
    _ints("int32", 32),
    _ints("int64", 64),
    st.floats(allow_nan=False).map(vdouble),
    st.floats(allow_nan=False, width=32).map(lambda x: VariantValue("float", x)),
    _decimals("decimal4", 32),
    _decimals("decimal8", 64),
    _decimals("decimal16", 128),
    _ints("date", 32),
    _ints("timestamptz", 64),
    _ints("timestampntz", 64),
    _ints("time", 64),
    _ints("timestamptz_ns", 64),
    _ints("timestampntz_ns", 64),
    st.binary(max_size=80).map(vbinary),
    st.text(max_size=80).map(vstr),
    st.uuids().map(lambda u: VariantValue("uuid", u)),
)

variants: st.SearchStrategy[VariantValue] = st.recursive(
    primitives,
    lambda children: st.one_of(
        st.lists(children, max_size=6).map(varr),
        st.dictionaries(st.text(max_size=6), children, max_size=6).map(vobj),
    ),
    max_leaves=25,
)


def _same_scales(a: VariantValue, b: VariantValue) -> bool:
    # Decimal('1.0') == Decimal('1.00'), so dataclass equality alone would not notice a lost scale.
    if a.kind == "object":
        return all(
            _same_scales(x, y) for (_, x), (_, y) in zip(a.fields.items(), b.fields.items(), strict=True)
        )
    if a.kind == "array":
        return all(_same_scales(x, y) for x, y in zip(a.elements, b.elements, strict=True))
    if isinstance(a.value, Decimal):
        return isinstance(b.value, Decimal) and a.value.as_tuple() == b.value.as_tuple()
    return True


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variants)
def test_round_trip(v: VariantValue) -> None:
    metadata, value = encode(v)
    decoded = decode(metadata, value)
    assert decoded == v
    assert _same_scales(decoded, v)
    assert hash(decoded) == hash(v)
    assert metadata_length(metadata + value) == len(metadata)
    assert decode_metadata(metadata).sorted_strings


def test_round_trip_nan_and_signed_zero() -> None:
    for x in (float("nan"), -0.0):
        for v in (vdouble(x), VariantValue("float", x)):
            metadata, value = encode(v)
            assert encode_value(decode(metadata, value), {}) == value


def test_large_containers_use_wide_headers() -> None:
    many = vobj({f"k{i:04d}": vint(i) for i in range(300)})  # > 255 fields: is_large, 2-byte ids
    big = varr([vstr("x" * 70_000)])  # fields over 65535 bytes: 3-byte offsets
    deep_keys = [f"key{i}" for i in range(70_000)]  # metadata over 65535 bytes: 3-byte offsets
    for v in (many, big):
        assert decode(*encode(v)) == v
    metadata = encode_metadata(deep_keys)
    assert metadata[0] >> 6 == 2
    assert decode_metadata(metadata).keys == tuple(deep_keys)
    assert decode(*encode(many)).value[0][0] == "k0000"  # type: ignore[index]


def test_encoder_orders_object_fields_by_key() -> None:
    unsorted = VariantValue("object", (("b", vint(2)), ("a", vint(1))))
    assert decode(*encode(unsorted)) == vobj({"a": vint(1), "b": vint(2)})
    assert list(decode(*encode(unsorted)).fields) == ["a", "b"]


def test_constructors_and_to_python() -> None:
    assert [vint(i).kind for i in (0, 200, 40_000, 1 << 40)] == ["int8", "int16", "int32", "int64"]
    assert [vdecimal(d).kind for d in ("1.5", "1234567890.5", "1E+30")] == [
        "decimal4",
        "decimal8",
        "decimal16",
    ]
    assert vdecimal("1E+2").value.as_tuple() == Decimal("100").as_tuple()  # type: ignore[union-attr]
    assert VariantValue.null() == vnull()
    v = vobj({"a": varr([vint(1), vnull(), vbool(True)]), "b": vdecimal("1.20"), "c": vbinary(b"\x00")})
    assert to_python(v) == {"a": [1, None, True], "b": Decimal("1.20"), "c": b"\x00"}
    assert {v: 1}[decode(*encode(v))] == 1
    with pytest.raises(ValueError):
        vint(1 << 63)
    with pytest.raises(ValueError):
        VariantValue("integer", 1)
    with pytest.raises(ValueError):
        encode_value(VariantValue("int8", 300), {})
    with pytest.raises(ValueError):
        encode_value(vobj({"a": vnull()}), {})
    with pytest.raises(ValueError):
        encode_metadata(["b", "a"], sorted_strings=True)


def test_is_variant_null() -> None:
    assert is_variant_null(b"\x00")
    assert is_variant_null(memoryview(b"\x00"))
    for other in (b"", b"\x00\x00", b"\x04", b"\x01", encode(vobj({}))[1]):
        assert not is_variant_null(other)


# --- Malformed input --------------------------------------------------------------------------


def _nested_arrays(depth: int) -> bytes:
    """`depth` arrays each holding the next, innermost holding null; 4-byte offsets so any depth fits."""
    value = b"\x00"
    for _ in range(depth):
        value = (
            bytes([0x03 | (0x03 << 2), 1])
            + (0).to_bytes(4, "little")
            + len(value).to_bytes(4, "little")
            + value
        )
    return value


BAD_METADATA = {
    "empty": b"",
    "version 0": b"\x00\x00\x00",
    "version 2": b"\x02\x00\x00",
    "truncated size": b"\xc1\x00\x00",
    "huge size": b"\xc1\xff\xff\xff\xff\x00\x00\x00\x00",
    "missing offsets": b"\x01\x01\x00",
    "first offset not 0": b"\x01\x01\x01\x01a",
    "last offset past end": b"\x01\x01\x00\x05abc",
    "decreasing offsets": b"\x01\x02\x00\x02\x01ab",
    "bad utf8": b"\x01\x01\x00\x01\xff",
    "trailing byte": b"\x01\x00\x00\x00",
}


@pytest.mark.parametrize("buf", BAD_METADATA.values(), ids=BAD_METADATA.keys())
def test_bad_metadata(buf: bytes) -> None:
    with pytest.raises(InvalidVariantError) as info:
        decode_metadata(buf)
    assert isinstance(info.value, BadInputError) and info.value.code == "invalid_variant"


def test_metadata_length_bounds() -> None:
    assert metadata_length(b"\x01\x01\x00\x01a\x0c\x01") == 5
    for buf in (b"", b"\x01", b"\x01\x02\x00\x01", b"\x01\x01\x00\x02a", b"\xc1\xff\xff\xff\xff"):
        with pytest.raises(InvalidVariantError):
            metadata_length(buf)


AB_METADATA = encode_metadata(["a", "b", "a"])
BAD_VALUES = {
    "empty": b"",
    "unknown primitive": bytes([21 << 2]),
    "truncated int64": bytes([6 << 2]) + b"\x01\x02",
    "truncated uuid": bytes([20 << 2]) + b"\x00" * 15,
    "truncated string size": bytes([16 << 2]) + b"\x01\x00",
    "huge string size": bytes([16 << 2]) + b"\xff\xff\xff\xff" + b"abc",
    "huge binary size": bytes([15 << 2]) + b"\xff\xff\xff\x7f",
    "short string overruns": bytes([1 | (5 << 2)]) + b"abc",
    "short string bad utf8": bytes([1 | (2 << 2)]) + b"\xc3\x28",
    "long string bad utf8": bytes([16 << 2]) + b"\x01\x00\x00\x00\xff",
    "decimal scale 39": bytes([8 << 2, 39]) + b"\x01\x00\x00\x00",
    "decimal16 39 digits": bytes([10 << 2, 0]) + (10**38).to_bytes(16, "little", signed=True),
    "trailing byte": b"\x00\x00",
    "object huge count": bytes([0x02 | (0x10 << 2)]) + b"\xff\xff\xff\xff",
    "object missing offsets": bytes([0x02, 1, 0]),
    "object field id out of range": bytes([0x02, 1, 3, 0, 1, 0x00]),
    "object duplicate keys": bytes([0x02, 2, 0, 0, 0, 1, 2, 0x00, 0x00]),
    "object duplicate names, distinct ids": bytes([0x02, 2, 0, 2, 0, 1, 2, 0x00, 0x00]),
    "object offset past fields": bytes([0x02, 1, 0, 1, 1, 0x00]),
    "object last offset past end": bytes([0x02, 1, 0, 0, 9, 0x00]),
    "object child overruns fields": bytes([0x02, 1, 0, 0, 1, 0x0C, 0x05]),
    "array huge count": bytes([0x03 | (0x04 << 2)]) + b"\xff\xff\xff\x0f" + b"\x00" * 8,
    "array truncated offsets": bytes([0x03, 2, 0, 1]),
    "array offset past fields": bytes([0x03, 2, 0, 2, 2, 0x00, 0x00]),
    "array child overruns fields": bytes([0x03, 2, 0, 1, 2, 0x00, 0x0C, 0x05]),
    "array last offset past end": bytes([0x03, 1, 0, 200, 0x00]),
    "too deep": _nested_arrays(MAX_DEPTH + 1),
    "far too deep": _nested_arrays(5_000),
}


@pytest.mark.parametrize("buf", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_bad_value(buf: bytes) -> None:
    with pytest.raises(InvalidVariantError):
        decode(AB_METADATA, buf)


def test_nesting_limit_is_inclusive() -> None:
    assert decode(EMPTY_METADATA, _nested_arrays(MAX_DEPTH)).kind == "array"
    deep = vnull()
    for _ in range(MAX_DEPTH + 1):
        deep = varr([deep])
    with pytest.raises(ValueError):
        encode(deep)


def test_duckdb_style_unsorted_dictionary_and_fields_are_tolerated() -> None:
    # DuckDB 1.5.5 sets sorted_strings (0x11) over an unsorted dictionary with a repeated key, and
    # lists object fields in dictionary-ID order rather than key order.
    metadata = decode_metadata(b"\x11\x06\x00\x01\x02\x03\x04\x05\x06baczaq")
    assert metadata == VariantMetadata(version=1, sorted_strings=True, keys=("b", "a", "c", "z", "a", "q"))
    z_then_a = bytes([0x02, 2, 3, 4, 0, 1, 3, 0x04, 0x0C, 0x07])
    decoded = decode_value(metadata, z_then_a)
    assert [k for k, _ in decoded.value] == ["z", "a"]  # type: ignore[attr-defined]
    assert decoded.fields == {"a": vint(7), "z": vbool(True)}
    # Re-encoding writes spec order, which decodes to the same fields.
    assert decode(*encode(decoded)).fields == decoded.fields


def test_unused_header_bits_are_ignored() -> None:
    # Bit 5 of the metadata header and bits 3-5 of an array header are unused by the spec.
    assert decode_metadata(b"\x21\x00\x00") == VariantMetadata(version=1, sorted_strings=False, keys=())
    assert decode(EMPTY_METADATA, bytes([0x03 | (0x38 << 2), 0, 0])) == varr([])


def _valid_samples() -> list[tuple[bytes, bytes]]:
    samples = [
        encode(vobj({"a": varr([vint(1), vstr("x" * 70), vdecimal("1.5")]), "b": vobj({"a": vnull()})}))
    ]
    samples += [_read_example(name) for name in _variant_examples()]
    return samples


def test_every_truncation_is_rejected() -> None:
    for metadata, value in _valid_samples():
        for cut in range(len(value)):
            with pytest.raises(InvalidVariantError):
                decode(metadata, value[:cut])
        for cut in range(len(metadata)):
            with pytest.raises(InvalidVariantError):
                decode_metadata(metadata[:cut])
            with pytest.raises(InvalidVariantError):
                metadata_length(metadata[:cut])


def test_corrupted_bytes_raise_only_invalid_variant() -> None:
    for metadata, value in _valid_samples():
        for i in range(len(value)):
            for flip in (0x01, 0x04, 0x10, 0x80, 0xFF):
                corrupt = bytearray(value)
                corrupt[i] ^= flip
                with contextlib.suppress(InvalidVariantError):
                    decode(metadata, bytes(corrupt))
        for i in range(len(metadata)):
            corrupt = bytearray(metadata)
            corrupt[i] ^= 0xFF
            with contextlib.suppress(InvalidVariantError):
                decode(bytes(corrupt), value)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64), st.binary(max_size=64))
def test_random_bytes_raise_only_invalid_variant(metadata: bytes, value: bytes) -> None:
    for m in (metadata, EMPTY_METADATA, AB_METADATA):
        with contextlib.suppress(InvalidVariantError):
            decode(m, value)
    with contextlib.suppress(InvalidVariantError):
        metadata_length(metadata + value)
