"""Listing the data files under a directory or an object-store prefix, by Spark's rules.

Spark's file index (``HadoopFSUtils.shouldFilterOutPathName``) treats a name as not data when it
starts with ``.`` or with ``_`` (``_SUCCESS``, ``_temporary/``, ``_committed_*``), except names
holding ``=``, which are Hive partition directories (``_c=1``). Here, as there, the listing is
recursive and keeps only ``*.parquet`` files whose every component below the root passes that
rule. Hidden directories are skipped without being listed, directory by directory, so a
``_temporary/`` tree of a running job costs nothing and a ``limit`` stops the walk early; each
directory of an object store is read through the store's own paginated listing
(:mod:`service.storage.objects`: ``ListObjectsV2`` pages with delimiter ``/`` for S3).

Local directories are walked with ``os.scandir`` and their symlinks to directories are not
followed (a loop would never end, and a link may lead anywhere); symlinked files are listed and
left to the caller's path checks. Every failure is a :class:`~service.errors.FileAccessError`
naming the root (the store's typed error, renamed; no ``OSError`` leaks).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from service.errors import FileAccessError, ShredcatError
from service.storage.objects import is_remote

if TYPE_CHECKING:
    from service.storage.objects import ObjectStore

PARQUET_SUFFIX = ".parquet"


def is_hidden_name(name: str) -> bool:
    """Spark's rule for one path component that is not data (``_SUCCESS``, ``.crc``, ``_temporary``;
    a Hive ``name=value`` directory starting with ``_`` is data)."""
    return name.startswith(".") or (name.startswith("_") and "=" not in name) or name.endswith("._COPYING_")


def _is_data_file(name: str) -> bool:
    return name.lower().endswith(PARQUET_SUFFIX) and not is_hidden_name(name)


def _resolve(root: str) -> tuple[ObjectStore | None, str]:
    """``(store, base)``: for an object-store root its store and the root URI without a trailing
    ``/`` in the catalog's form (the scheme lower-case); for a local root (``file:`` URIs too) None
    and the resolved path, as the service stores local paths."""
    from service.storage.objects import local_path, store_for, stored_path

    if not is_remote(root):
        return None, os.path.realpath(local_path(root))
    return store_for(root), stored_path(root).rstrip("/")


def listing_prefix(root: str) -> str:
    """The path prefix every file :func:`list_data_files` returns for ``root`` starts with."""
    _, base = _resolve(root)
    return base.rstrip("/") + "/"


def _walk_local(base: str, limit: int | None, out: list[str]) -> None:
    stack = [base]
    while stack and (limit is None or len(out) <= limit):
        directory = stack.pop()
        with os.scandir(directory) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if not is_hidden_name(e.name):
                        stack.append(e.path)
                elif _is_data_file(e.name) and e.is_file():
                    out.append(e.path)


def _walk_store(store: ObjectStore, base: str, limit: int | None, out: list[str]) -> None:
    stack = [base + "/"]
    while stack and (limit is None or len(out) <= limit):
        directory = stack.pop()
        for entry in store.list(directory):
            if entry.is_dir:
                if not is_hidden_name(entry.name):
                    stack.append(entry.uri)
            elif _is_data_file(entry.name):
                out.append(entry.uri)
                if limit is not None and len(out) > limit:
                    return


def list_data_files(root: str, *, limit: int | None = None) -> list[str]:
    """Every data file under ``root`` (a local directory or an object-store URI such as
    ``s3://bucket/lake/events/``), sorted. Local paths come back absolute and resolved; others as
    URIs of the root's scheme. A root that is itself a ``.parquet`` file lists itself; a root that
    does not exist lists nothing. With ``limit``, the walk stops once more than ``limit`` files are
    found (so a caller enforcing the limit sees ``limit + 1`` and never lists the whole store)."""
    store, base = _resolve(root)
    out: list[str] = []
    try:
        if store is None:
            if os.path.isfile(base):
                return [base] if base.lower().endswith(PARQUET_SUFFIX) else []
            if not os.path.isdir(base):
                return []
            _walk_local(base, limit, out)
        else:
            # A root given without its trailing "/" may name one object: one HEAD tells.
            if not root.endswith("/") and base.lower().endswith(PARQUET_SUFFIX) and store.head(base) is not None:
                return [base]
            _walk_store(store, base, limit, out)
    except ShredcatError as e:  # the store's typed errors, named after the root
        raise type(e)(f"cannot list {root}: {e.message}", details={**e.details, "path": root}) from None
    except OSError as e:
        raise FileAccessError(f"cannot list {root}: {e.strerror or e}", details={"path": root}) from None
    out.sort()
    return out


def covering_prefixes(prefixes: Sequence[str]) -> list[str]:
    """For each prefix (in the catalog's form), the prefix whose listing covers it, ``/``-ended:
    its own, or one it lies under by whole components (``s3://b/lake/`` covers
    ``s3://b/lake/t/``, not ``s3://b/lakehouse/``). Listing each distinct result once lists
    everything once: a request naming one prefix 3,000 times costs one listing."""
    norm = [p if p.endswith("/") else p + "/" for p in prefixes]
    cover: dict[str, str] = {}
    last: str | None = None
    # Sorted, an ancestor comes right before its descendants (and only them): one sweep.
    for p in sorted(set(norm)):
        if last is not None and p.startswith(last):
            cover[p] = last
        else:
            cover[p] = last = p
    return [cover[p] for p in norm]


def expand_sources(sources: Iterable[str]) -> list[str]:
    """Paths as given to ``shredcat stats``/``register``: a directory or prefix (see
    :func:`_is_directory`) becomes its data files (:func:`list_data_files`), anything else stays as given (a missing file is then reported
    by whoever opens it). Order kept, duplicates dropped. A directory without data files is an
    error: a command given one surely meant something else."""
    out: list[str] = []
    for source in sources:
        if not _is_directory(source):
            out.append(source)
            continue
        files = list_data_files(source)
        if not files:
            raise FileAccessError(f"{source}: no Parquet data files in this directory", details={"path": source})
        out.extend(files)
    return list(dict.fromkeys(out))


def _is_directory(source: str) -> bool:
    """Local: whether it is a directory. Object stores: whether the URI ends in ``/`` or not in
    ``.parquet``, decided without a request (a Spark output "directory" named ``x.parquet`` is
    given with its trailing ``/``), so a list of file URIs costs no extra round trips."""
    if is_remote(source):
        return source.endswith("/") or not source.lower().endswith(PARQUET_SUFFIX)
    _, base = _resolve(source)
    return os.path.isdir(base)
