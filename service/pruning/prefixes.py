"""String prefixes as ranges: ``s LIKE 'abc%'`` and ``startswith(s, 'abc')`` imply
``s >= 'abc' AND s < 'abd'``.

Spark compares strings (UTF8_BINARY, the default collation and the one ``variant_get`` returns) by
their UTF-8 bytes, which is the order of code points, Python's ``str`` order. Every string that
starts with ``p`` lies in ``[p, successor(p))`` where the successor increments the last code point
that can be incremented (U+10FFFF cannot: it is dropped first; the surrogates, which no string
holds, are skipped). DuckLake's truncated string bounds (a prefix as min, an incremented prefix as
max) are still bounds, so the range test over them stays sound.

A LIKE pattern is read as Spark reads it (``StringUtils.escapeLikeRegex``): ``_`` is one
character, ``%`` any run, the escape character (``\\`` unless ``ESCAPE`` names another) makes the
next ``_``, ``%`` or itself literal, and anything else after it (or a pattern ending with it) is an
error in Spark: no prefix is claimed then. The prefix is the literal text before the first
wildcard; the pattern implies the range whatever follows it, so the range is a conjunct *implied*
by the LIKE, never its equivalent (the converter keeps the LIKE itself as an unknown conjunct).
"""

from __future__ import annotations

_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)


def like_prefix(pattern: str, escape: str = "\\") -> str | None:
    """The literal prefix every string matching ``pattern`` starts with ('' when the pattern starts
    with a wildcard), or None when Spark would refuse the pattern."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == escape:
            if i + 1 >= n or pattern[i + 1] not in ("_", "%", escape):
                return None
            out.append(pattern[i + 1])
            i += 2
            continue
        if c in ("_", "%"):
            # The rest only restricts further; check it is a valid pattern all the same.
            return "".join(out) if _valid_tail(pattern[i:], escape) else None
        out.append(c)
        i += 1
    return "".join(out)


def _valid_tail(tail: str, escape: str) -> bool:
    i, n = 0, len(tail)
    while i < n:
        if tail[i] == escape:
            if i + 1 >= n or tail[i + 1] not in ("_", "%", escape):
                return False
            i += 2
        else:
            i += 1
    return True


def prefix_successor(prefix: str) -> str | None:
    """The least string greater than every string starting with ``prefix`` (None: there is none,
    the prefix is empty or all U+10FFFF)."""
    chars = list(prefix)
    while chars:
        last = ord(chars.pop())
        if last == _MAX_CODE_POINT:
            continue
        nxt = last + 1
        if nxt in _SURROGATES:
            nxt = _SURROGATES.stop
        chars.append(chr(nxt))
        return "".join(chars)
    return None
