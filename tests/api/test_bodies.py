"""service.api.bodies: a large body decoded and validated in steps gives exactly what one
``json.loads`` and one model validation give (values, errors and their order)."""

from __future__ import annotations

import json
import random
from typing import Any

import anyio
import pytest
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError
from starlette.requests import Request

from service.api.bodies import json_content_type, loads_in_steps, parse_json_body
from service.api.schemas import CommitRequest, FileStatsBody
from service.errors import LimitExceededError, UnsupportedMediaTypeError
from tests.ops.support import file_payload

ITEMS = ("files", FileStatsBody)


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        return ("ok", fn(*args))
    except json.JSONDecodeError as e:
        return ("json", e.msg, e.pos)
    except UnicodeDecodeError as e:
        return ("unicode", e.start)
    except RecursionError:
        return ("recursion",)


DOCS: list[bytes] = [
    b'{"files": [], "paths": ["/a"]}',
    b' \n{ "paths" : [ "/a" , "/b" ] , "remove":[],"remove-missing-ok" : true }\r\n',
    b'{"a": {"b": [1, {"c": [2]}]}, "d": [[1], [2, [3]]], "e": null, "f": 1.5e3, "g": "\\u00e9\\n"}',
    b'{"dup": [1], "dup": [2]}',
    b"[1, 2, 3]",
    b'"just a string"',
    b"{}",
    b"[]",
    "{\"é\": [\"ü\"]}".encode("utf-16"),
    "{\"x\": [1]}".encode("utf-32-le"),
]
BROKEN: list[bytes] = [
    b"",
    b"{",
    b"{not json",
    b'{"a": [1, 2,]}',
    b'{"a": [1 2]}',
    b'{"a" [1]}',
    b'{"a": 1,}',
    b'{"a": 1 "b": 2}',
    b'{"a": [1]} extra',
    b'{"a": [1]}}',
    b"{1: 2}",
    b'{"a": [',
    b'{"a": [1,',
    b'{"a": "\xff"}',
    b"\xff\xfe{",
    b'{"a": NaN, "b": [Infinity]}',
    b'{"files": ' * 100_000 + b"1" + b"}" * 100_000,
    b'{"files": [' + b"[" * 100_000 + b"]" * 100_001 + b"}",
]


@pytest.mark.parametrize("raw", DOCS + BROKEN, ids=lambda raw: repr(raw[:24]))
def test_decoding_in_steps_is_json_loads(raw: bytes) -> None:
    assert _outcome(loads_in_steps, raw) == _outcome(json.loads, raw)


def test_decoding_in_steps_is_json_loads_on_mutated_commit_bodies() -> None:
    rnd = random.Random(13)
    base = json.dumps({"paths": ["/x"], "files": [file_payload(f"/lake/f{i}.parquet", i) for i in range(3)]}).encode()
    for _ in range(500):
        raw = bytearray(base)
        for _ in range(rnd.randint(1, 3)):
            k = rnd.randrange(len(raw))
            op = rnd.random()
            if op < 0.4:
                del raw[k]
            elif op < 0.7:
                raw.insert(k, rnd.choice(b' ,:[]{}"\\0x\n'))
            else:
                raw[k] = rnd.choice(b' ,:[]{}"\\0x\n')
        assert _outcome(loads_in_steps, bytes(raw)) == _outcome(json.loads, bytes(raw)), bytes(raw)


def _errors(fn: Any) -> Any:
    try:
        fn()
    except RequestValidationError as e:
        return [(tuple(err["loc"]), err["type"]) for err in e.errors()]
    except ValidationError as e:
        return [(("body", *err["loc"]), err["type"]) for err in e.errors()]
    return None


def _good(i: int) -> dict[str, Any]:
    return file_payload(f"/lake/f{i}.parquet", i)


BODIES: list[Any] = [
    {"files": [_good(0), _good(1)]},
    {"files": [_good(0), {**_good(1), "record-count": -1}, {**_good(2), "path": 7}], "paths": [1], "remove": [""]},
    {"files": [{**_good(0), "surprise": 1}], "prefixes": "x", "surprise": 2},
    {"files": "not a list", "paths": [""]},
    {"files": [None, 3, []], "remove-missing-ok": "yes"},
    {"files": None},
    {"paths": ["/a"], "files": [_good(0)], "remove": ["/b"], "remove-missing-ok": True},
    [],
    "text",
    7,
]


@pytest.mark.parametrize("data", BODIES)
def test_validating_items_one_by_one_is_validating_the_body(data: Any) -> None:
    raw = json.dumps(data).encode()
    whole = _errors(lambda: CommitRequest.model_validate(data))
    stepped = _errors(lambda: parse_json_body(CommitRequest, raw, items=ITEMS))
    assert stepped == whole
    if whole is None:
        got = parse_json_body(CommitRequest, raw, items=ITEMS)
        assert got == CommitRequest.model_validate(data)


def test_errors_of_the_body_itself() -> None:
    assert _errors(lambda: parse_json_body(CommitRequest, b"", items=ITEMS)) == [(("body",), "missing")]
    assert _errors(lambda: parse_json_body(CommitRequest, b"{x", items=ITEMS)) == [(("body", 1), "json_invalid")]
    deep = b'{"files": [' + b"[" * 100_000 + b"]" * 100_001 + b"}"
    with pytest.raises(LimitExceededError, match="nested too deeply"):
        parse_json_body(CommitRequest, deep, items=ITEMS)


def _content_type(value: str | None) -> None:
    headers = [] if value is None else [(b"content-type", value.encode())]
    anyio.run(json_content_type, Request({"type": "http", "headers": headers}))


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "json"]
)
def test_a_body_of_another_content_type_is_unsupported(content_type: str) -> None:
    with pytest.raises(UnsupportedMediaTypeError) as e:
        _content_type(content_type)
    assert e.value.http_status == 415 and "application/json" in e.value.message
    assert e.value.details == {"content-type": content_type, "expected": "application/json"}
    # JSON's types with parameters.
    for ok in ("application/json", "Application/JSON; charset=utf-8", "application/problem+json", "application/vnd.x+json"):
        _content_type(ok)
