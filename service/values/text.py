"""Text the catalog can store: valid Unicode, i.e. encodable as UTF-8.

Python strings can hold lone surrogates that no UTF-8 text (nor PostgreSQL's or SQLite's text)
can: a file name whose bytes are not UTF-8 decodes to them (``os.fsdecode``'s surrogateescape),
and so does a JSON ``"\\ud800"`` escape or a command-line argument in another encoding. Every
place where outside text enters checks it here, so that such text is a clear error at the edge
rather than a driver's UnicodeEncodeError deep inside a transaction."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Why text holding U+0000 is refused: PostgreSQL's text types cannot hold it (SQLite's can, but
#: a catalog behaves alike on both backends).
NUL_NOT_STORED = "it holds a NUL character (U+0000), which the catalog cannot store"
#: Longest column name (bytes of UTF-8) the catalog stores.
MAX_NAME_BYTES = 1024


def lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (cannot be encoded as UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def unstorable_name(name: object) -> bool:
    """Not a name a column can have in the catalog: empty, with NUL, not valid Unicode, or too
    long. (The extractor gives such a column no row, so that what it prints is what registers.)"""
    if type(name) is not str or not name or "\x00" in name:
        return True
    try:
        return len(name.encode("utf-8")) > MAX_NAME_BYTES
    except UnicodeEncodeError:
        return True


def ascii_digits(text: str) -> bool:
    """Whether ``text`` is a non-empty run of ASCII digits: ``str.isdigit`` alone accepts ``'²'``,
    which ``int()`` refuses, and ``'١'``, which it reads."""
    return text.isascii() and text.isdigit()


def first_invalid_text(doc: Any) -> str | None:
    """The first string (key or value) holding a lone surrogate in decoded JSON ``doc``, or None."""
    return first_string(doc, lone_surrogate)


def unstorable(text: str) -> bool:
    """Whether the catalog cannot hold ``text``: a lone surrogate, or NUL (:data:`NUL_NOT_STORED`)."""
    return "\x00" in text or lone_surrogate(text)


def first_string(doc: Any, test: Callable[[str], bool]) -> str | None:
    """The first string (key or value) of decoded JSON ``doc`` for which ``test`` holds, or None."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if test(node):
                return node
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list | tuple):
            stack.extend(node)
    return None


def shown(text: str) -> str:
    """``text`` printable anywhere: each lone surrogate as a ``\\udcXX`` escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
