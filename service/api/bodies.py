"""Large JSON request bodies, parsed and validated in the route's worker thread in small steps.

FastAPI parses a declared body on the event loop, before a sync route reaches its thread, in two
calls that hold the GIL throughout: ``json.loads`` and the model's validation. For a commit of
10,000 files with client-side statistics (24 MB) that is 0.3 s + 0.5 s during which the worker
answers nothing else, no plan and no health check (measured: ``bench/commit_stall.py``). A thread
alone does not help (the GIL is not released inside either call). So a route taking such a body
declares it with :func:`json_body` (for OpenAPI) and calls :func:`parse_json_body` in its thread,
which decodes the top-level object member by member and a large array element by element, and
validates the array's items one at a time: between steps the event loop gets the GIL. Its errors
are FastAPI's own (the same ``RequestValidationError``, so the same 422 answers). A request
without JSON's content type is 415 on every JSON route, these and those whose body FastAPI decodes
alike (their dependency :func:`json_content_type`).
"""

from __future__ import annotations

import email.message
import json
import re
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import Request
from fastapi.encoders import jsonable_encoder
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.models import OpenAPI
from pydantic import BaseModel, ValidationError
from pydantic.json_schema import models_json_schema

from service.errors import LimitExceededError, UnsupportedMediaTypeError

M = TypeVar("M", bound=BaseModel)

#: The models routes take through :func:`json_body`: their schemas are added to the OpenAPI
#: components, which FastAPI fills only from declared parameters.
BODY_MODELS: list[type[BaseModel]] = []

_REF = "#/components/schemas/{model}"


def json_body(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` of a route whose JSON body is ``model``, parsed by the route itself."""
    if model not in BODY_MODELS:
        BODY_MODELS.append(model)
    ref = _REF.format(model=model.__name__)
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": {"$ref": ref}}}}}


def add_body_schemas(openapi: dict[str, Any]) -> dict[str, Any]:
    """Add the schemas of :data:`BODY_MODELS` (and of the models they use) to ``openapi``'s
    components, leaving any FastAPI generated under the same name as it is."""
    if not BODY_MODELS:
        return openapi
    _, top = models_json_schema([(m, "validation") for m in BODY_MODELS], ref_template=_REF)
    schemas = openapi.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in sorted(top.get("$defs", {}).items()):
        schemas.setdefault(name, schema)
    openapi["components"]["schemas"] = dict(sorted(schemas.items()))
    # The normalisation FastAPI applies to the document it generates (no null defaults...).
    encoded: dict[str, Any] = jsonable_encoder(OpenAPI(**openapi), by_alias=True, exclude_none=True)
    return encoded


def _is_json(content_type: str | None) -> bool:
    if not content_type:
        # Bytes of no declared type are not JSON (HTTP: application/octet-stream at most), as
        # FastAPI's routes refuse them (``strict_content_type``): one answer on every JSON route.
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


async def json_content_type(request: Request) -> None:
    """The dependency of every route taking a JSON body, however it is decoded (by FastAPI, or by
    :func:`parse_json_body`): UnsupportedMediaTypeError (415) unless the request's Content-Type is
    JSON's (``application/json``, ``application/*+json``, with any parameters); a request without
    one is refused alike. FastAPI would instead validate the raw bytes against the model (a 422
    saying the body is not an object), hiding the actual mistake."""
    content_type = request.headers.get("content-type")
    if not _is_json(content_type):
        given = "a request without a Content-Type" if not content_type else repr(content_type)
        raise UnsupportedMediaTypeError(
            f"the request body must be JSON (Content-Type: application/json), not {given}",
            details={"content-type": content_type, "expected": "application/json"},
        )


_WS = re.compile(r"[ \t\n\r]*")  # JSON's whitespace, as json.decoder skips it
_DECODER = json.JSONDecoder()


def _skip(text: str, i: int) -> int:
    m = _WS.match(text, i)
    assert m is not None  # the pattern matches the empty string too
    return m.end()


def _array(text: str, i: int) -> tuple[list[Any], int]:
    """The array starting at ``text[i] == '['``, decoded element by element."""
    items: list[Any] = []
    i = _skip(text, i + 1)
    if text[i : i + 1] == "]":
        return items, i + 1
    while True:
        value, i = _DECODER.raw_decode(text, i)
        items.append(value)
        i = _skip(text, i)
        c = text[i : i + 1]
        if c == "]":
            return items, i + 1
        if c != ",":
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
        i = _skip(text, i + 1)


def loads_in_steps(raw: bytes) -> Any:
    """``json.loads(raw)``, in steps: a top-level object member by member, its arrays' elements one
    by one (each step a short call that holds the GIL). Same values, same errors (JSONDecodeError,
    UnicodeDecodeError for bytes that are no UTF-8/16/32, RecursionError for a nesting deeper than
    the interpreter's recursion limit)."""
    text = raw.decode(json.detect_encoding(raw), "surrogatepass")
    i = _skip(text, 0)
    if text[i : i + 1] != "{":
        return _DECODER.decode(text)  # not an object: one call (what json.loads does)
    out: dict[str, Any] = {}
    i = _skip(text, i + 1)
    if text[i : i + 1] == "}":
        i += 1
    else:
        while True:
            if text[i : i + 1] != '"':
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, i)
            key, i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
            if text[i : i + 1] != ":":
                raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
            i = _skip(text, i + 1)
            if text[i : i + 1] == "[":
                out[key], i = _array(text, i)
            else:
                out[key], i = _DECODER.raw_decode(text, i)
            i = _skip(text, i)
            c = text[i : i + 1]
            if c == "}":
                i += 1
                break
            if c != ",":
                raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
            i = _skip(text, i + 1)
    i = _skip(text, i)
    if i != len(text):
        raise json.JSONDecodeError("Extra data", text, i)
    return out


def _located(e: ValidationError, *prefix: Any) -> list[dict[str, Any]]:
    return [{**err, "loc": (*prefix, *err["loc"])} for err in e.errors(include_url=False)]


def _validate(model: type[M], data: Any, items: tuple[str, type[BaseModel]] | None) -> M:
    """``model.model_validate(data)``; with ``items`` (a list field and its item model), that list's
    items are validated one by one first (same errors, in the model's field order)."""
    field, item_model = items if items is not None else ("", BaseModel)
    info = model.model_fields.get(field)
    key = (info.alias or field) if info is not None else field
    elements = data.get(key) if items is not None and isinstance(data, dict) else None
    if not isinstance(elements, list):
        try:
            return model.model_validate(data)
        except ValidationError as e:
            raise RequestValidationError(_located(e, "body")) from None
    errors: list[dict[str, Any]] = []
    validated: list[BaseModel] = []
    for k, element in enumerate(elements):
        try:
            validated.append(item_model.model_validate(element))
        except ValidationError as e:
            errors += _located(e, "body", key, k)
    try:
        # Validated items pass as they are (pydantic does not validate an instance again).
        out = model.model_validate({**data, key: validated})
    except ValidationError as e:
        rest = _located(e, "body")
    else:
        rest = []
    if errors or rest:
        order = [(f.alias or name) for name, f in model.model_fields.items()]
        rank = {name: n for n, name in enumerate(order)}
        both = sorted(rest + errors, key=lambda err: rank.get(err["loc"][1], len(order)) if len(err["loc"]) > 1 else -1)
        raise RequestValidationError(both)
    return out


def parse_json_body(
    model: type[M],
    raw: bytes,
    *,
    items: tuple[str, type[BaseModel]] | None = None,
    loads: Callable[[bytes], Any] = loads_in_steps,
) -> M:
    """``raw`` as ``model``, or the ``RequestValidationError`` FastAPI would raise for it (errors
    located under ``body``): a missing body, a body that is not JSON, or one the model refuses.
    Its Content-Type is the route's dependency :func:`json_content_type`, as on every JSON route.
    ``items``: a list field of ``model`` and its item model, validated item by item. ``loads``:
    the JSON decoder (raising as ``json.loads`` does)."""
    if not raw:
        raise RequestValidationError([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    try:
        data = loads(raw)
    except json.JSONDecodeError as e:
        raise RequestValidationError(
            [{"type": "json_invalid", "loc": ("body", e.pos), "msg": "JSON decode error", "input": {}, "ctx": {"error": e.msg}}]
        ) from None
    except UnicodeDecodeError as e:
        raise RequestValidationError(
            [{"type": "json_invalid", "loc": ("body", e.start), "msg": "JSON decode error", "input": {}, "ctx": {"error": e.reason}}]
        ) from None
    except RecursionError:  # json's decoder recurses once per nesting level
        # A limit (the interpreter's), as a filter nested past SHREDCAT_MAX_PREDICATE_DEPTH is one.
        raise LimitExceededError(
            "request body is nested too deeply to be decoded", details={"limit": sys.getrecursionlimit()}
        ) from None
    return _validate(model, data, items)
