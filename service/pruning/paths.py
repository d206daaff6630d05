"""JSON paths into a Variant, and DuckLake ``variant_path`` strings.

Two syntaxes meet here:

* The **JSON path** a query uses (``variant_get(v, '$.user.id', 'bigint')``). shredcat accepts a
  superset of Spark's ``VariantPathParser`` syntax: ``$``, ``.key`` (anything up to the next
  ``.`` or ``[``, as in Spark), ``['key']`` / ``["key"]``, ``[3]``; plus, as extensions, a quote
  inside a quoted key written doubled (``["we""ird"]``) or backslash-escaped (``['we\\'ird']``,
  ``\\\\`` for a backslash; a backslash before any other character is literal, as in Spark), the
  empty key ``['']``, and the wildcard ``[*]`` meaning *any element* of an array.
* The **DuckLake path** a stats row is keyed by: ``root``, ``element``, ``"key"`` with inner
  ``"`` doubled, joined by ``.`` outermost first (NOTES §2).

A JSON path names one position; stats describe every element of an array at once, so both
``[3]`` and ``[*]`` map to ``element``. The parsed :class:`JsonPath` keeps which one was written:
``[3]`` is one element (a scalar, so negation stays exact), ``[*]`` is "some element"
(an existential, see :mod:`service.pruning.expressions`).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Final, Generic, TypeVar

from service.errors import InvalidPathError
from service.pruning.dispatch import dispatcher
from service.variant import paths as _ducklake_paths

# Spark's own index pattern is `\[(\d+)]`; bounded here so a hostile path cannot make a huge int.
_MAX_INDEX = 2**31 - 1
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True, slots=True)
class Key:
    """An object field."""

    name: str


@dataclass(frozen=True, slots=True)
class Index:
    """One array element, ``[n]``."""

    index: int


@dataclass(frozen=True, slots=True)
class AnyIndex:
    """``[*]``: some element of the array (an existential over elements)."""


@dataclass(frozen=True, slots=True)
class Element:
    """DuckLake's ``element`` segment: every element of an array."""


ANY_INDEX: Final = AnyIndex()
ELEMENT: Final = Element()

Step = Key | Index | AnyIndex
VariantSegment = Key | Element

T = TypeVar("T")


class StepVisitor(Generic[T], ABC):
    """One handler per kind of JSON path step (dispatched by :func:`visit_step`)."""

    @abstractmethod
    def visit_key(self, step: Key) -> T: ...

    @abstractmethod
    def visit_index(self, step: Index) -> T: ...

    @abstractmethod
    def visit_any_index(self, step: AnyIndex) -> T: ...


@dispatcher
def visit_step(step: Step, visitor: StepVisitor[T]) -> T:
    raise TypeError(f"not a JSON path step: {step!r}")


@visit_step.register(Key)
def _(step: Key, visitor: StepVisitor[T]) -> T:
    return visitor.visit_key(step)


@visit_step.register(Index)
def _(step: Index, visitor: StepVisitor[T]) -> T:
    return visitor.visit_index(step)


@visit_step.register(AnyIndex)
def _(step: AnyIndex, visitor: StepVisitor[T]) -> T:
    return visitor.visit_any_index(step)


@dataclass(frozen=True, slots=True)
class JsonPath:
    """A parsed JSON path; ``steps == ()`` is the root value ``$``."""

    steps: tuple[Step, ...] = ()

    @property
    def variant_path(self) -> str:
        """The DuckLake ``variant_path`` whose stats describe this position."""
        return format_variant_path(to_variant_segments(self))

    @property
    def has_element(self) -> bool:
        """True if the path steps into an array (``[n]`` or ``[*]``)."""
        return any(not isinstance(s, Key) for s in self.steps)

    @property
    def has_wildcard(self) -> bool:
        return any(isinstance(s, AnyIndex) for s in self.steps)

    def __str__(self) -> str:
        return format_json_path(self)


def _path_error(path: str, pos: int, why: str) -> InvalidPathError:
    return InvalidPathError(
        f"invalid JSON path {path!r} at position {pos}: {why}",
        details={"path": path, "position": pos},
    )


def _parse_quoted(path: str, i: int) -> tuple[str, int]:
    """Parse a quoted key starting at the quote ``path[i]``; return (key, index after the quote)."""
    quote = path[i]
    out: list[str] = []
    j = i + 1
    while j < len(path):
        c = path[j]
        if c == "\\" and j + 1 < len(path) and path[j + 1] in ("\\", "'", '"'):
            out.append(path[j + 1])
            j += 2
        elif c == quote:
            if j + 1 < len(path) and path[j + 1] == quote:
                out.append(quote)
                j += 2
            else:
                return "".join(out), j + 1
        else:
            out.append(c)
            j += 1
    raise _path_error(path, i, f"unterminated quoted key (missing closing {quote})")


def parse_json_path(path: str) -> JsonPath:
    """Parse a JSON path (see the module docstring); InvalidPathError names the position."""
    if not isinstance(path, str):
        raise InvalidPathError(f"a JSON path must be a string, not {type(path).__name__}")
    if not path.startswith("$"):
        raise _path_error(path, 0, "a JSON path starts with '$'")
    steps: list[Step] = []
    i = 1
    n = len(path)
    while i < n:
        c = path[i]
        if c == ".":
            j = i + 1
            while j < n and path[j] not in ".[":
                j += 1
            if j == i + 1:
                raise _path_error(path, i, "expected a key after '.'")
            steps.append(Key(path[i + 1 : j]))
            i = j
        elif c == "[":
            if i + 1 >= n:
                raise _path_error(path, i, "unterminated '['")
            d = path[i + 1]
            if d in ("'", '"'):
                name, j = _parse_quoted(path, i + 1)
                if j >= n or path[j] != "]":
                    raise _path_error(path, j, "expected ']' after a quoted key")
                steps.append(Key(name))
                i = j + 1
            elif d == "*":
                if i + 2 >= n or path[i + 2] != "]":
                    raise _path_error(path, i + 2, "expected ']' after '[*'")
                steps.append(ANY_INDEX)
                i += 3
            elif d.isdigit() and d.isascii():
                j = i + 1
                while j < n and path[j].isdigit() and path[j].isascii():
                    j += 1
                if j >= n or path[j] != "]":
                    raise _path_error(path, j, "expected ']' after an array index")
                idx = int(path[i + 1 : j])
                if idx > _MAX_INDEX:
                    raise _path_error(path, i + 1, f"array index larger than {_MAX_INDEX}")
                steps.append(Index(idx))
                i = j + 1
            else:
                raise _path_error(path, i + 1, "expected a quoted key, a non-negative index or '*' after '['")
        else:
            raise _path_error(path, i, f"unexpected {c!r}; expected '.' or '['")
    return JsonPath(tuple(steps))


class _JsonText(StepVisitor[str]):
    def visit_key(self, step: Key) -> str:
        k = step.name
        if _IDENTIFIER.fullmatch(k):
            return "." + k
        if k and "'" not in k and "\\" not in k:
            return f"['{k}']"
        if k and '"' not in k and "\\" not in k:
            return f'["{k}"]'
        return "['" + k.replace("\\", "\\\\").replace("'", "\\'") + "']"

    def visit_index(self, step: Index) -> str:
        return f"[{step.index}]"

    def visit_any_index(self, step: AnyIndex) -> str:
        return "[*]"


class _SparkText(StepVisitor[str]):
    def visit_key(self, step: Key) -> str:
        k = step.name
        if not k:
            raise InvalidPathError("Spark's variant_get cannot address the empty key")
        if _IDENTIFIER.fullmatch(k):
            return "." + k
        if '"' not in k:
            # Spark's `["..."]` takes every character but " verbatim, backslashes included; it is
            # preferred here because the path sits inside a single-quoted SQL string.
            return f'["{k}"]'
        if "'" not in k:
            return f"['{k}']"
        if "." not in k and "[" not in k:
            return "." + k
        raise InvalidPathError(f"key {k!r} cannot be written in a Spark variant_get path")

    def visit_index(self, step: Index) -> str:
        return f"[{step.index}]"

    def visit_any_index(self, step: AnyIndex) -> str:
        raise InvalidPathError("Spark's variant_get has no [*] step")


_JSON_TEXT: Final = _JsonText()
_SPARK_TEXT: Final = _SparkText()


def format_json_path(path: JsonPath) -> str:
    """The canonical text of a path: Spark's syntax whenever it can express the key, so the
    text also works in ``variant_get``; our escapes only for keys Spark cannot name."""
    return "$" + "".join(visit_step(s, _JSON_TEXT) for s in path.steps)


def format_spark_path(path: JsonPath) -> str:
    """The path in the syntax Spark's ``variant_get`` accepts.

    Raises InvalidPathError for what Spark cannot express: ``[*]`` (the caller renders those
    with ``exists``), the empty key, and a key holding both quote characters and ``.`` or ``[``.
    """
    return "$" + "".join(visit_step(s, _SPARK_TEXT) for s in path.steps)


def to_variant_segments(path: JsonPath) -> tuple[VariantSegment, ...]:
    return tuple(s if isinstance(s, Key) else ELEMENT for s in path.steps)


def json_path_to_variant_path(path: str | JsonPath) -> str:
    """``$.arr[3].x`` → ``"arr".element."x"``; ``$`` → ``root``."""
    jp = parse_json_path(path) if isinstance(path, str) else path
    return jp.variant_path


def format_variant_path(segments: tuple[VariantSegment, ...] | list[VariantSegment]) -> str:
    """DuckLake's rendering, from the one implementation in :mod:`service.variant.paths`."""
    names = ["element" if isinstance(s, Element) else s.name for s in segments]
    elements = frozenset(i for i, s in enumerate(segments) if isinstance(s, Element))
    return _ducklake_paths.format_variant_path(names, element=elements)


def parse_variant_path(text: str) -> tuple[VariantSegment, ...]:
    """Parse a DuckLake ``variant_path``: ``root`` → ``()``, ``"a".element`` → (Key, ELEMENT)."""
    if not isinstance(text, str):
        raise InvalidPathError(f"a variant path must be a string, not {type(text).__name__}")
    return tuple(
        ELEMENT if is_element else Key(name) for name, is_element in _ducklake_paths.parse_variant_path_steps(text)
    )

