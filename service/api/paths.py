"""Which data-file paths a caller may register: only Parquet files inside the configured warehouse roots.

Pure functions (no I/O but ``os.path.realpath`` on local paths), applied to every path **before**
anything opens it (and the opening itself never leaves the root, see
:func:`service.parquet.io.open_beneath`, so a path changed after this check is refused, not followed):

* Local files are given as absolute paths (``/lake/t/f.parquet``) or ``file:`` URIs
  (``file:///lake/t/f.parquet``, percent-escapes decoded, no host). They are resolved with
  :func:`os.path.realpath`, so a symlink that leads out of a root is refused (without naming its
  target); the resolved path is what gets opened and stored.
* Object-store URIs (``s3://bucket/prefix/f.parquet``) are accepted only for stores of configured
  roots; queries, fragments and user info are refused. Every spelling of one store's URIs
  (``s3a://``, ``gcs://``, Azure's ``abfss://container@account.dfs.core.windows.net/``...) is taken
  in its canonical form (:func:`service.storage.objects.canonical_uri`), for roots and paths alike,
  and that form is what gets stored: one object, one catalog path. The key that is checked is the key that is
  read: shredcat's own stores (S3, GCS, Azure: :data:`service.storage.objects.STORES`) take the
  text after the bucket **verbatim** as the object key, as Hadoop paths and the stores' listings
  do (Spark's Hive directories hold literal ``%3A`` and spaces: ``ts=2024-01-01 10%3A00%3A00``),
  so nothing is percent-decoded; pyarrow, which serves any other scheme, decodes percent-escapes,
  so for those the decoded key is checked (and whitespace must be percent-encoded).
* Any ``..`` segment is refused outright (even one that would stay inside a root), as are NUL and
  other control characters, relative paths and names not ending in ``.parquet``.
* Containment is by whole path components: ``/lake`` does not contain ``/lake2/f.parquet``.

Prefixes (a commit's ``prefixes``, whose data files are then listed) pass :func:`check_prefix`:
the same rules but the ``.parquet`` suffix; a prefix may be a root itself. Every file listed
under one is then checked again by :func:`check_file_path` like a path given by name.

Errors: :class:`PathNotAllowedError` (403) for a path outside every root or a scheme not
configured, :class:`InvalidFilePathError` (422) for malformed paths.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from service.errors import BadInputError, FileAccessError, ForbiddenError, ShredcatError
from service.storage.objects import CANONICAL_SCHEMES, STORES, canonical_uri, normal_local_path
from service.values.text import NUL_NOT_STORED

PARQUET_SUFFIX = ".parquet"
LOCAL_SCHEME = "file"


class PathNotAllowedError(ForbiddenError):
    """A data-file path outside every warehouse root (or with a scheme no root uses)."""

    code = "path_not_allowed"


class InvalidFilePathError(BadInputError):
    """A data-file path that is malformed (relative, control characters, not ``.parquet``)."""

    code = "invalid_file_path"


@dataclass(frozen=True, slots=True)
class WarehouseRoot:
    #: ``file`` for local directories, else the URI scheme (``s3``, ``gs``, ``abfs``...).
    scheme: str
    #: Local: the resolved absolute directory's components. Object store: bucket, then key components.
    parts: tuple[str, ...]
    #: As configured.
    text: str

    def contains(self, scheme: str, parts: Sequence[str]) -> bool:
        return scheme == self.scheme and tuple(parts[: len(self.parts)]) == self.parts


def _has_control(s: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in s)


def _split_scheme(s: str) -> tuple[str | None, str]:
    """(scheme, rest) when ``s`` is a URI (``scheme:``), else (None, s)."""
    i = s.find(":")
    if i <= 0 or "/" in s[:i]:
        return None, s
    scheme = s[:i]
    if not (scheme[0].isascii() and scheme[0].isalpha()) or not all(
        c.isascii() and (c.isalnum() or c in "+-.") for c in scheme
    ):
        return None, s
    return scheme.lower(), s[i + 1 :]


def _local_parts(abs_path: str) -> tuple[str, ...]:
    return tuple(p for p in abs_path.split("/") if p)


def _file_uri_path(original: str, rest: str) -> str:
    """The local path of a ``file:`` URI (``file:///p``, ``file:/p``), percent-decoded."""
    if rest.startswith("//"):
        host, sep, path = rest[2:].partition("/")
        if host not in ("", "localhost"):
            raise PathNotAllowedError(f"{original}: file URIs with a host are not allowed", details={"path": original})
        rest = sep + path
    if "?" in rest or "#" in rest:
        raise InvalidFilePathError(f"{original}: a file URI takes no query or fragment", details={"path": original})
    local = unquote(rest)
    if _has_control(local):  # escaped (%00, %0A): checked once decoded, as the text itself is
        raise InvalidFilePathError(f"{original!r}: control characters are not allowed in file paths", details={"path": original})
    return local


def parse_roots(roots: Iterable[str]) -> tuple[WarehouseRoot, ...]:
    """Parse the configured roots (local roots are resolved now, once). Raises ValueError on a bad root."""
    out: list[WarehouseRoot] = []
    for text in roots:
        if not isinstance(text, str) or not text.strip() or "\x00" in text:
            raise ValueError(f"invalid warehouse root {text!r}")
        raw = text.strip()
        scheme, rest = _split_scheme(raw)
        if scheme is None or scheme == LOCAL_SCHEME:
            local = raw if scheme is None else _file_uri_path(raw, rest)
            if not local.startswith("/"):
                raise ValueError(f"warehouse root {text!r} must be an absolute directory")
            out.append(WarehouseRoot(LOCAL_SCHEME, _local_parts(os.path.realpath(local)), text))
            continue
        if not rest.startswith("//") or "?" in rest or "#" in rest:
            raise ValueError(f"warehouse root {text!r} must look like {scheme}://bucket/prefix/")
        if scheme in CANONICAL_SCHEMES:
            try:
                scheme, rest = _split_scheme(canonical_uri(raw))
            except FileAccessError as e:
                raise ValueError(f"warehouse root {text!r}: {e.message}") from None
            assert scheme is not None
        authority, _, key = rest[2:].partition("/")
        if not authority or "@" in authority:
            raise ValueError(f"warehouse root {text!r} needs a bucket (and no user info)")
        key_parts = [p for p in (key if scheme in STORES else unquote(key)).split("/") if p]
        if any(p in (".", "..") for p in key_parts):
            raise ValueError(f"warehouse root {text!r} must not contain '.' or '..' segments")
        out.append(WarehouseRoot(scheme, (authority, *key_parts), text))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class CheckedPath:
    #: What to store in the catalog (and, for registration by path, to open).
    path: str
    scheme: str
    #: Whether this is a local file (opened through the local filesystem).
    local: bool
    #: Local files: the directory of the root that holds ``path``, which the file is opened
    #: beneath (:func:`service.parquet.io.open_beneath`). None for object-store paths.
    root: str | None = None


@dataclass(frozen=True, slots=True)
class _Words:
    """How errors name what was sent: a file path or a prefix."""

    one: str
    many: str
    uris: str
    shape: str


_FILE_WORDS = _Words("a file path", "file paths", "file URIs", "bucket/key")
_PREFIX_WORDS = _Words("a prefix", "prefixes", "prefixes", "bucket/prefix/")


def _split_location(text: object, roots: Sequence[WarehouseRoot], w: _Words) -> tuple[str, str | None, str]:
    """The checks every location gets before its scheme decides the rest: (text, scheme, rest)."""
    if not isinstance(text, str) or not text:
        raise InvalidFilePathError(f"{w.one} must be a non-empty string", details={"path": text})
    details = {"path": text}
    if "\x00" in text or _has_control(text):
        raise InvalidFilePathError(f"{text!r}: control characters are not allowed in {w.many}", details=details)
    if "\\" in text:
        raise InvalidFilePathError(f"{text}: backslashes are not allowed in {w.many}", details=details)
    if not roots:
        raise PathNotAllowedError(
            "no warehouse roots are configured (SHREDCAT_WAREHOUSE_ROOTS): file registration is disabled",
            details=details,
        )
    scheme, rest = _split_scheme(text)
    if scheme in CANONICAL_SCHEMES and rest.startswith("//"):
        try:
            scheme, rest = _split_scheme(canonical_uri(text))
        except FileAccessError as e:  # an Azure URI of another storage account
            raise PathNotAllowedError(e.message, details=details) from None
    return text, scheme, rest


def _object_location(
    text: str, scheme: str, rest: str, roots: Sequence[WarehouseRoot], w: _Words, *, prefix: bool
) -> tuple[tuple[str, ...], str]:
    """An object-store URI's (bucket, *key segments) and its key as the store reads it (see the
    module docstring). A prefix may be the bucket alone or end with '/'; any other empty segment,
    '.' or '..' is refused."""
    details = {"path": text}
    if not any(r.scheme == scheme for r in roots):
        raise PathNotAllowedError(f"{text}: the URI scheme {scheme!r} is not allowed here", details=details)
    if not rest.startswith("//"):
        raise InvalidFilePathError(f"{text}: expected {scheme}://{w.shape}", details=details)
    if "?" in rest or "#" in rest:
        raise InvalidFilePathError(f"{text}: queries and fragments are not allowed in {w.uris}", details=details)
    verbatim = scheme in STORES
    if not verbatim and any(c.isspace() for c in rest):
        raise InvalidFilePathError(f"{text}: whitespace must be percent-encoded in {w.uris}", details=details)
    authority, _, key = rest[2:].partition("/")
    if not authority or "@" in authority:
        raise PathNotAllowedError(f"{text}: a bucket without user info is required", details=details)
    try:
        decoded = key if verbatim else unquote(key, errors="strict")
    except UnicodeDecodeError:
        raise InvalidFilePathError(f"{text}: invalid percent-encoding", details=details) from None
    if _has_control(decoded) or "\\" in decoded:
        raise InvalidFilePathError(f"{text}: control characters are not allowed in {w.many}", details=details)
    body = decoded[:-1] if prefix and decoded.endswith("/") else decoded
    segments = body.split("/") if decoded or not prefix else []
    if any(s in (".", "..") for s in segments):
        raise PathNotAllowedError(f"{text}: '.' and '..' are not allowed in {w.many}", details=details)
    if "" in segments:
        raise InvalidFilePathError(f"{text}: empty path segments are not allowed", details=details)
    return (authority, *segments), decoded


def check_file_path(path: object, roots: Sequence[WarehouseRoot], *, resolve: bool = True) -> CheckedPath:
    """Check that ``path`` names a Parquet file inside one of ``roots``; return its canonical form.

    ``resolve``: resolve symlinks of local paths (registration by path, where the service opens the
    file). With ``resolve=False`` (client-side statistics, where the service never opens the file)
    local paths are normalised lexically only.
    """
    path, scheme, rest = _split_location(path, roots, _FILE_WORDS)
    details = {"path": path}
    if scheme is None or scheme == LOCAL_SCHEME:
        local = path if scheme is None else _file_uri_path(path, rest)
        if not local.startswith("/"):
            raise InvalidFilePathError(f"{path}: file paths must be absolute", details=details)
        segments = local.split("/")
        if ".." in segments:
            raise PathNotAllowedError(f"{path}: '..' is not allowed in file paths", details=details)
        if not local.lower().endswith(PARQUET_SUFFIX) or local.endswith("/"):
            raise InvalidFilePathError(f"{path}: only {PARQUET_SUFFIX} files can be registered", details=details)
        normal = normal_local_path(local)
        try:
            final = os.path.realpath(normal) if resolve else normal
        except OSError:
            # realpath races a concurrent rename (readlink of what lstat just saw as a link):
            # the path changed under us, which is the writer's to retry, never a server fault.
            raise FileAccessError(f"{path}: the path changed while it was being checked; retry", details=details) from None
        # Where a symlink leads is never named: it may be anything on the server (/dev/zero,
        # /etc/...), and saying so would let a writer probe the filesystem outside the roots.
        via = " (through a symlink)" if final != normal else ""
        if not final.lower().endswith(PARQUET_SUFFIX):
            raise InvalidFilePathError(f"{path}: resolves{via} to a file that is not a {PARQUET_SUFFIX} file", details=details)
        parts = _local_parts(final)
        root = next((r for r in roots if r.contains(LOCAL_SCHEME, parts) and len(parts) > len(r.parts)), None)
        if root is None:
            why = "resolves (through a symlink) to a file outside" if via else "is outside"
            raise PathNotAllowedError(f"{path}: {why} the warehouse roots", details=details)
        return CheckedPath(final, LOCAL_SCHEME, True, "/" + "/".join(root.parts))

    parts, decoded = _object_location(path, scheme, rest, roots, _FILE_WORDS, prefix=False)
    if not decoded.lower().endswith(PARQUET_SUFFIX):
        raise InvalidFilePathError(f"{path}: only {PARQUET_SUFFIX} files can be registered", details=details)
    if not any(r.contains(scheme, parts) and len(parts) > len(r.parts) for r in roots):
        raise PathNotAllowedError(f"{path}: is outside the warehouse roots", details=details)
    return CheckedPath(f"{scheme}:{rest}", scheme, False)


def lookup_path(text: str) -> str:
    """The form in which a path given to find a registered file (to remove it, to read its stats)
    is compared: what :func:`check_file_path` stores for it (symlinks aside: a lookup resolves
    none), or the text as given when it has none (a relative path, a malformed URI: never resolved
    against the server's directory). No root check: a file registered under a root since removed
    from the settings can still be removed. Text holding NUL is an InvalidFilePathError (no path
    holds it, and PostgreSQL could not compare it)."""
    if "\x00" in text:
        raise InvalidFilePathError(f"{text!r}: {NUL_NOT_STORED}", details={"path": text})
    scheme, rest = _split_scheme(text)
    if scheme is not None and scheme != LOCAL_SCHEME:
        try:
            return canonical_uri(text) if rest.startswith("//") else f"{scheme}:{rest}"
        except FileAccessError:  # another Azure account: no file of this server's has that path
            return text
    try:
        local = text if scheme is None else _file_uri_path(text, rest)
    except ShredcatError:
        return text
    return normal_local_path(local) if local.startswith("/") else text


@dataclass(frozen=True, slots=True)
class CheckedPrefix:
    #: What to list: a resolved local directory, or the URI as given.
    prefix: str
    scheme: str
    local: bool


def check_prefix(prefix: object, roots: Sequence[WarehouseRoot]) -> CheckedPrefix:
    """Check that ``prefix`` (a directory or an object-store prefix whose data files are to be
    registered) is a root or lies inside one; return what to list. The rules of
    :func:`check_file_path` but the ``.parquet`` suffix; local prefixes are resolved (a symlink out
    of the roots is refused)."""
    prefix, scheme, rest = _split_location(prefix, roots, _PREFIX_WORDS)
    details = {"path": prefix}
    if scheme is None or scheme == LOCAL_SCHEME:
        local = prefix if scheme is None else _file_uri_path(prefix, rest)
        if not local.startswith("/"):
            raise InvalidFilePathError(f"{prefix}: prefixes must be absolute", details=details)
        if ".." in local.split("/"):
            raise PathNotAllowedError(f"{prefix}: '..' is not allowed in prefixes", details=details)
        try:
            final = os.path.realpath(posixpath.normpath(local))
        except OSError:
            raise FileAccessError(f"{prefix}: the path changed while it was being checked; retry", details=details) from None
        parts = _local_parts(final)
        if not any(r.contains(LOCAL_SCHEME, parts) for r in roots):
            raise PathNotAllowedError(f"{prefix}: is outside the warehouse roots", details=details)
        return CheckedPrefix(final, LOCAL_SCHEME, True)

    parts, _ = _object_location(prefix, scheme, rest, roots, _PREFIX_WORDS, prefix=True)
    if not any(r.contains(scheme, parts) and len(parts) >= len(r.parts) for r in roots):
        raise PathNotAllowedError(f"{prefix}: is outside the warehouse roots", details=details)
    return CheckedPrefix(f"{scheme}:{rest}", scheme, False)
