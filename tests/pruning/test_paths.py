"""JSON path → DuckLake variant path, and DuckLake path parsing/formatting."""

from __future__ import annotations

import pytest

from service.errors import InvalidPathError
from service.pruning.paths import (
    ANY_INDEX,
    ELEMENT,
    Index,
    JsonPath,
    Key,
    format_json_path,
    format_spark_path,
    format_variant_path,
    json_path_to_variant_path,
    parse_json_path,
    parse_variant_path,
)

CONVERSIONS = [
    ("$", "root", ()),
    ("$.a", '"a"', (Key("a"),)),
    ("$.a.b", '"a"."b"', (Key("a"), Key("b"))),
    ("$.user.id", '"user"."id"', (Key("user"), Key("id"))),
    ("$['a b']", '"a b"', (Key("a b"),)),
    ('$["a b"]', '"a b"', (Key("a b"),)),
    ('$["we""ird"]', '"we""ird"', (Key('we"ird'),)),
    ("$['we\\'ird']", '"we\'ird"', (Key("we'ird"),)),
    ('$["we\\"ird"]', '"we""ird"', (Key('we"ird'),)),
    ("$['it''s']", '"it\'s"', (Key("it's"),)),
    ("$['back\\\\slash']", '"back\\slash"', (Key("back\\slash"),)),
    # A backslash before anything but \, ' or " is literal, as in Spark.
    ("$['C:\\path']", '"C:\\path"', (Key("C:\\path"),)),
    ("$['x.y']", '"x.y"', (Key("x.y"),)),
    (
        "$['x.y']['s t'][*]['u.v']",
        '"x.y"."s t".element."u.v"',
        (Key("x.y"), Key("s t"), ANY_INDEX, Key("u.v")),
    ),
    ("$.arr[3].x", '"arr".element."x"', (Key("arr"), Index(3), Key("x"))),
    ("$.arr[*].x", '"arr".element."x"', (Key("arr"), ANY_INDEX, Key("x"))),
    ("$[0]", "element", (Index(0),)),
    ("$[*]", "element", (ANY_INDEX,)),
    ("$.tags[0]", '"tags".element', (Key("tags"), Index(0))),
    ("$[0][1]", "element.element", (Index(0), Index(1))),
    ("$.m[007]", '"m".element', (Key("m"), Index(7))),
    ("$.élan.名前", '"élan"."名前"', (Key("élan"), Key("名前"))),
    ("$['🙂']", '"🙂"', (Key("🙂"),)),
    # Keys named like DuckLake's keywords are quoted like any key.
    ("$.element", '"element"', (Key("element"),)),
    ("$.root", '"root"', (Key("root"),)),
    ("$['']", '""', (Key(""),)),
    # Spark's `.key` takes everything up to the next '.' or '[', spaces and quotes included.
    ("$.a b", '"a b"', (Key("a b"),)),
    ("$.a]", '"a]"', (Key("a]"),)),
    ("$.*", '"*"', (Key("*"),)),
    ("$['a]b']", '"a]b"', (Key("a]b"),)),
]


@pytest.mark.parametrize(("json_path", "variant_path", "steps"), CONVERSIONS)
def test_json_path_conversion(json_path: str, variant_path: str, steps: tuple[object, ...]) -> None:
    jp = parse_json_path(json_path)
    assert jp.steps == steps
    assert jp.variant_path == variant_path
    assert json_path_to_variant_path(json_path) == variant_path
    # The canonical text parses back to the same steps.
    assert parse_json_path(format_json_path(jp)) == jp
    # The DuckLake path parses back to the same segments.
    segs = parse_variant_path(variant_path)
    assert format_variant_path(segs) == variant_path
    assert len(segs) == len(steps)


def test_element_and_wildcard_flags() -> None:
    assert not parse_json_path("$.a.b").has_element
    assert parse_json_path("$.a[3]").has_element
    assert not parse_json_path("$.a[3]").has_wildcard
    assert parse_json_path("$.a[*].b").has_wildcard
    # [3] and [*] describe the same stats but are different positions.
    assert parse_json_path("$.a[3]") != parse_json_path("$.a[*]")


@pytest.mark.parametrize(
    ("bad", "position"),
    [
        ("", 0),
        ("a.b", 0),
        ("$a", 1),
        ("$.", 1),
        ("$..a", 1),
        ("$[", 1),
        ("$['a'", 5),
        ("$['a", 2),
        ('$["a', 2),
        ("$[-1]", 2),
        ("$[1", 3),
        ("$[a]", 2),
        ("$[*", 3),
        ("$['a'x]", 5),
        ("$[99999999999]", 2),
        ("$[١]", 2),  # a non-ASCII digit is not an index
    ],
)
def test_bad_json_paths_name_the_position(bad: str, position: int) -> None:
    with pytest.raises(InvalidPathError) as ei:
        parse_json_path(bad)
    assert ei.value.details["position"] == position
    assert f"position {position}" in ei.value.message


def test_non_string_path() -> None:
    with pytest.raises(InvalidPathError):
        parse_json_path(42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "segments"),
    [
        ("root", ()),
        ("element", (ELEMENT,)),
        ('"a"', (Key("a"),)),
        ('element."a"', (ELEMENT, Key("a"))),
        ('"tags".element', (Key("tags"), ELEMENT)),
        ('"x.y"."s t".element."u.v"', (Key("x.y"), Key("s t"), ELEMENT, Key("u.v"))),
        ('"we""ird"', (Key('we"ird'),)),
        ('"element"', (Key("element"),)),
        ('"root"', (Key("root"),)),
        ('""', (Key(""),)),
        ('"a"."名"', (Key("a"), Key("名"))),
    ],
)
def test_variant_path_round_trip(text: str, segments: tuple[object, ...]) -> None:
    assert parse_variant_path(text) == segments
    assert format_variant_path(segments) == text  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("bad", "position"),
    [
        ("", 0),
        ("a", 0),
        ('"a', 0),
        ('"a"b', 3),
        ('"a".', 4),
        ('"a"..', 4),
        ("elements", 7),
        ('"a".root', 4),
        ("root.element", 0),
    ],
)
def test_bad_variant_paths(bad: str, position: int) -> None:
    with pytest.raises(InvalidPathError) as ei:
        parse_variant_path(bad)
    assert ei.value.details["position"] == position


@pytest.mark.parametrize(
    ("path", "spark"),
    [
        ("$", "$"),
        ("$.a.b", "$.a.b"),
        ("$['a b']", '$["a b"]'),
        ('$["it\'s"]', '$["it\'s"]'),
        ("$['say \"hi\"']", "$['say \"hi\"']"),
        ('$["a\'b""c"]', "$.a'b\"c"),
        ("$.arr[3].x", "$.arr[3].x"),
    ],
)
def test_spark_path_rendering(path: str, spark: str) -> None:
    assert format_spark_path(parse_json_path(path)) == spark


@pytest.mark.parametrize("path", ["$['']", "$.a[*]", '$["a.\'""b"]'])
def test_paths_spark_cannot_express(path: str) -> None:
    with pytest.raises(InvalidPathError):
        format_spark_path(parse_json_path(path))


def test_canonical_json_path_text() -> None:
    assert format_json_path(JsonPath()) == "$"
    assert format_json_path(parse_json_path("$['a']")) == "$.a"
    assert format_json_path(parse_json_path('$["a b"]')) == "$['a b']"
    assert format_json_path(parse_json_path('$["it\'s"]')) == '$["it\'s"]'
    assert format_json_path(parse_json_path('$["a\'""b"]')) == "$['a\\'\"b']"


def test_agrees_with_the_extractors_formatter() -> None:
    # The stats extractor (service.variant.paths) writes the rows pruning looks up.
    from service.variant import paths as extractor_paths

    for _json_path, variant_path, steps in CONVERSIONS:
        keys = [s.name if isinstance(s, Key) else "element" for s in steps]
        element = frozenset(i for i, s in enumerate(steps) if not isinstance(s, Key))
        assert extractor_paths.format_variant_path(keys, element=element) == variant_path
