"""DuckLake's ``variant_path`` syntax: ``root``, ``element``, and object keys in double quotes
with inner quotes doubled, joined by ``.`` outermost first (``"tags".element``,
``element."a"``, ``"x.y"."s t"``). Nothing else is escaped: dots, spaces and unicode stay
verbatim inside the quotes, and keys named ``element``/``root`` are quoted like any key.
"""

from __future__ import annotations

from service.errors import InvalidPathError

ROOT = "root"
ELEMENT = "element"


def quote_field(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def format_variant_path(segments: list[str] | tuple[str, ...], *, element: frozenset[int] = frozenset()) -> str:
    """Render segments; positions in ``element`` are array steps, the rest object keys."""
    if not segments:
        return ROOT
    return ".".join(ELEMENT if i in element else quote_field(s) for i, s in enumerate(segments))


def parse_variant_path(path: str) -> list[str]:
    """Segments of a DuckLake path: object keys unquoted, array steps as the bare ``element``
    marker. ``root`` gives []. Keys that are literally named "element" come back quoted-free,
    so use :func:`parse_variant_path_steps` when the distinction matters."""
    return [s for s, _ in parse_variant_path_steps(path)]


def parse_variant_path_steps(path: str) -> list[tuple[str, bool]]:
    """[(segment, is_array_step)]; raises InvalidPathError on malformed input."""
    if not isinstance(path, str):
        raise InvalidPathError(f"a variant path must be a string, not {type(path).__name__}")
    if path == ROOT:
        return []
    out: list[tuple[str, bool]] = []
    i, n = 0, len(path)
    while True:
        if path.startswith(ELEMENT, i):
            out.append((ELEMENT, True))
            i += len(ELEMENT)
        elif i < n and path[i] == '"':
            start = i
            i += 1
            buf: list[str] = []
            while True:
                if i >= n:
                    raise InvalidPathError(
                        f"invalid variant path {path!r} at position {start}: unterminated quoted key (missing closing \")",
                        details={"path": path, "position": start},
                    )
                c = path[i]
                if c == '"':
                    if i + 1 < n and path[i + 1] == '"':
                        buf.append('"')
                        i += 2
                        continue
                    i += 1
                    break
                buf.append(c)
                i += 1
            out.append(("".join(buf), False))
        else:
            raise InvalidPathError(
                f"invalid variant path {path!r} at position {i}: expected a quoted key or element",
                details={"path": path, "position": i},
            )
        if i == n:
            return out
        if path[i] != ".":
            raise InvalidPathError(
                f"invalid variant path {path!r} at position {i}: expected '.'", details={"path": path, "position": i}
            )
        i += 1
