"""Where in the predicate text a name the table does not have is written: an unknown-column error
gets the position of its first mention (``details.position``, "at column N" as syntax errors
say it), and a name that is a string in curly quotes (``’DE’``, typed by a word processor or a
phone keyboard, which the tokenizer reads as an identifier) becomes "use straight quotes"."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.errors import InvalidPredicateError, UnknownColumnError
from service.pruning.parse_sql.syntax import _located

if TYPE_CHECKING:
    from sqlglot import exp

#: Typographic quotes and the straight ones they stand for.
CURLY = {"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u201c": '"', "\u201d": '"', "\u201e": '"'}


def _first_mention(tree: exp.Expression, name: str) -> int | None:
    """The 0-based offset of the first column reference spelled ``name`` (or starting with it,
    for a struct path), as sqlglot recorded it; None when it recorded none."""
    from sqlglot import exp

    hits = []
    for col in tree.find_all(exp.Column):
        parts = [p.name for p in col.parts]
        if ".".join(parts) == name or parts[0] == name:
            start = col.parts[0].meta.get("start")
            if isinstance(start, int):
                hits.append(start)
    return min(hits) if hits else None


def located(e: UnknownColumnError, text: str, tree: exp.Expression) -> UnknownColumnError | InvalidPredicateError:
    """``e`` with the position of its column in ``text``, or the curly-quote error it really is."""
    name = e.details.get("column")
    if not isinstance(name, str):
        return e
    position = _first_mention(tree, name)
    if position is None:
        return e
    where = _located("", text, position)
    if any(q in name for q in CURLY):
        straight = "".join(CURLY.get(ch, ch) for ch in name)
        return _located(f"curly quotes in {name}: use straight quotes ({straight})", text, position)
    said = f"{name!r};"
    at = f"{name!r} ({where.message.strip()});"
    message = e.message.replace(said, at, 1) if said in e.message else f"{e.message} ({where.message.strip()})"
    return UnknownColumnError(message, details={**e.details, "position": position})
