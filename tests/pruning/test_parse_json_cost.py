"""Filter JSON parsing is linear in the nesting of AND/OR chains, shown by what it allocates and
the calls it makes, never by timing it: a left-deep chain (each operand one level deeper than the
last) costs what the same terms cost as a balanced tree, the JSON pointer of a node is written only
for an error, and refusing a chain by the term limit costs the limit's work, not the chain's.
The shapes are ``bench/parse_json_cost.py``'s.
"""

from __future__ import annotations

import importlib
import sys
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from bench.parse_json_cost import balanced, leaf, left_deep
from service.errors import InvalidPredicateError, LimitExceededError
from service.pruning.parse_json import parse_json

pj = importlib.import_module("service.pruning.parse_json")  # the module (it also names its function)


@contextmanager
def _peak_bytes() -> Iterator[list[int]]:
    """The most memory allocated at once (beyond what was already allocated) inside the block."""
    started = not tracemalloc.is_tracing()
    if started:
        tracemalloc.start()
    tracemalloc.reset_peak()
    base = tracemalloc.get_traced_memory()[0]
    out: list[int] = []
    try:
        yield out
    finally:
        out.append(tracemalloc.get_traced_memory()[1] - base)
        if started:
            tracemalloc.stop()


def test_a_left_deep_chain_costs_what_a_balanced_tree_costs() -> None:
    parse_json(left_deep(50), max_terms=50)  # caches (type and path parsing) filled beforehand
    for n in (2000, 4000):
        peaks = []
        for doc in (left_deep(n), balanced(n)):
            with _peak_bytes() as peak:
                parse_json(doc, max_terms=n)
            peaks.append(peak[0])
        deep, flat = peaks
        # Writing each node's pointer text made the left-deep walk quadratic: 11 MB against the
        # balanced tree's 1.3 MB at 2,000 terms, 42 MB against 2.5 MB at 4,000 (measured).
        assert deep < 1.5 * flat, (n, deep, flat)


def test_pointers_are_written_only_for_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    write = pj._pointer_text

    def counted(ptr: Any) -> str:
        written.append(write(ptr))
        return written[-1]

    monkeypatch.setattr(pj, "_pointer_text", counted)
    parse_json(left_deep(3000, "and"), max_terms=3000)
    parse_json({"type": "in", "term": leaf(0)["term"], "values": list(range(500))})
    assert written == []
    # An error deep in a chain: its pointer is written for that error alone, as it always read.
    doc = left_deep(300)
    node = doc
    for _ in range(100):
        node = node["left"]
    node["right"] = {"type": "eq", "term": leaf(0)["term"], "value": "abc"}
    with pytest.raises(InvalidPredicateError) as ei:
        parse_json(doc)
    pointer = "/left" * 100 + "/right/value"
    assert ei.value.details == {"pointer": pointer}
    assert ei.value.message.startswith(f"{pointer}: ")
    assert set(written) == {pointer}
    written.clear()
    with pytest.raises(LimitExceededError) as li:
        parse_json({"type": "not", "child": left_deep(22_000)})
    assert li.value.details == {"pointer": "/child", "limit": 400}
    assert set(written) == {"/child"}


def _parser_calls(doc: Any) -> int:
    """Calls of the parser module's own functions while ``doc`` is refused (the document's
    Unicode check, one linear pass in another module, is not counted)."""
    calls = 0

    def count(frame: Any, event: str, arg: Any) -> None:
        nonlocal calls
        if event == "call" and frame.f_code.co_filename == pj.__file__:
            calls += 1

    sys.setprofile(count)
    try:
        with pytest.raises(LimitExceededError):
            parse_json(doc)
    finally:
        sys.setprofile(None)
    return calls


@pytest.mark.parametrize("shape", [left_deep, balanced])
def test_a_refused_chain_costs_the_limit_not_the_chain(shape: Any) -> None:
    # The default limit is 400 terms: the walk stops at the 401st operand it knows of.
    small, large = _parser_calls(shape(1000)), _parser_calls(shape(20_000))
    assert small == large, (small, large)


def _count_text_checks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The documents the Unicode check walks (each call walks the whole document it is given)."""
    walked: list[Any] = []
    check = pj.first_invalid_text

    def counted(doc: Any) -> str | None:
        walked.append(doc)
        return check(doc)

    monkeypatch.setattr(pj, "first_invalid_text", counted)
    return walked


def _past_the_limits(text: str) -> list[Any]:
    """A document past each limit (terms, in-list, depth) holding ``text`` where the parser would
    reach it last."""
    last = {"type": "eq", "term": leaf(0)["term"], "value": text}
    chain = left_deep(20_000)
    chain["right"] = last  # the chain's last operand
    deep: Any = last
    for _ in range(500):
        deep = {"type": "not", "child": deep}
    return [chain, {"type": "in", "term": leaf(0)["term"], "values": [*range(10_000), text]}, deep]


def test_a_document_past_a_limit_is_refused_before_its_text_is_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    walked = _count_text_checks(monkeypatch)
    for doc, clean in zip(_past_the_limits("\ud800"), _past_the_limits("a"), strict=True):
        with pytest.raises(LimitExceededError) as e:
            parse_json(doc)
        with pytest.raises(LimitExceededError) as without:
            parse_json(clean)
        assert (e.value.message, e.value.details) == (without.value.message, without.value.details)
    assert walked == []


def test_within_the_limits_invalid_text_is_refused_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    walked = _count_text_checks(monkeypatch)
    term = leaf(0)["term"]
    for doc, shown in (
        ({"type": "eq", "term": term, "value": "\ud800x"}, "\\ud800x"),  # a filter that parses
        ({"type": "eq", "term": term, "value": 1, "\ud800x": 1}, "\\ud800x"),  # one the parser refuses
        ({"type": "eq", "term": {**term, "path": "$.\ud800x"}, "value": 1}, "$.\\ud800x"),
        ({"type": "bogus", "note": "\ud800x"}, "\\ud800x"),
    ):
        with pytest.raises(InvalidPredicateError) as e:
            parse_json(doc)
        message = f"the filter holds text that is not valid Unicode: {shown!r}"
        assert (e.value.message, e.value.details, e.value.http_status) == (message, {}, 422)
    assert len(walked) == 4
    parse_json(left_deep(400))  # a valid filter is walked once too
    assert len(walked) == 5
