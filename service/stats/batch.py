"""Extracting many files: object-store files concurrently, local files as before.

A remote file costs a round trip (1–100 ms) and almost no CPU, so its requests are overlapped:
:func:`extract_many` runs remote extractions on a process-wide pool of
``SHREDCAT_OBJECT_STORE_CONCURRENCY`` threads (the store's connection pool bounds the requests in
flight to the same number), while local files are extracted in the calling thread, one after the
other, exactly as :func:`~service.stats.extract.extract_file` always did (their cost is CPU, which
threads would not speed up). Results come back in the order given, with a bounded look-ahead so
that a listing of 100,000 files is never all in memory at once; closing the iterator early (the
first error of a commit) cancels what has not started.

Used by ``shredcat stats``/``register``, the REST commit by path/prefix, the Python client's
``extract_and_commit`` and the Spark helpers' executor-side extraction.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Generator, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, TypeVar

from service.errors import ShredcatError
from service.limits import FileLimits
from service.stats.model import FileStats

T = TypeVar("T")
R = TypeVar("R")

_lock = threading.Lock()
_pools: dict[int, ThreadPoolExecutor] = {}


def _pool(concurrency: int) -> ThreadPoolExecutor:
    # One pool per process (and concurrency): every caller shares the same bound.
    with _lock:
        pool = _pools.get(concurrency)
        if pool is None:
            pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="shredcat-remote")
            _pools[concurrency] = pool
        return pool


def _capture(extract: Callable[[T], R], item: T) -> R | ShredcatError:
    try:
        return extract(item)
    except ShredcatError as e:
        return e


def extract_many(
    items: Iterable[T],
    *,
    extract: Callable[[T], Any] | None = None,
    path_of: Callable[[T], str] = str,
    max_footer_bytes: int | None = None,
    limits: FileLimits | None = None,
    concurrency: int | None = None,
) -> Generator[tuple[T, FileStats | ShredcatError], None, None]:
    """``(item, stats)`` or ``(item, error)`` for each item, in the order given.

    ``extract`` (default :func:`~service.stats.extract.extract_file` with ``max_footer_bytes`` and
    the per-file ``limits``)
    reads one item (another return type passes through: the Spark helpers return payloads); ``path_of`` gives the item's path or URI, which decides where it runs: remote
    items on the shared pool of ``concurrency`` threads (default the setting), local ones here.
    Errors that are not :class:`~service.errors.ShredcatError` propagate when their item's turn
    comes.
    """
    from service.storage.objects import is_remote

    if extract is None:
        from service.stats.extract import extract_file

        kw: dict[str, Any] = {} if max_footer_bytes is None else {"max_footer_bytes": max_footer_bytes}
        if limits is not None:
            kw["limits"] = limits
        extract = partial(extract_file, **kw)  # no extract: the items are paths
    assert extract is not None
    if concurrency is None:
        from service.storage.objects import store_options

        concurrency = store_options().concurrency
    window = max(2 * concurrency, 16)
    pending: deque[tuple[T, Future[Any] | None]] = deque()
    pool: ThreadPoolExecutor | None = None

    def settle() -> tuple[T, Any]:
        item, fut = pending.popleft()
        if fut is None:
            return item, _capture(extract, item)
        return item, fut.result()

    try:
        for item in items:
            if is_remote(path_of(item)):
                if pool is None:
                    pool = _pool(concurrency)
                pending.append((item, pool.submit(_capture, extract, item)))
            else:
                pending.append((item, None))
            while len(pending) > window or (pending and pending[0][1] is None):
                yield settle()
        while pending:
            yield settle()
    finally:
        for _, fut in pending:
            if fut is not None:
                fut.cancel()


def extract_all(paths: Iterable[str], *, max_footer_bytes: int | None = None) -> list[FileStats]:
    """Every file's stats, in order (object-store files concurrently); the first error is raised."""
    out: list[FileStats] = []
    results = extract_many(paths, max_footer_bytes=max_footer_bytes)
    try:
        for _, fs in results:
            if isinstance(fs, ShredcatError):
                raise fs
            out.append(fs)
    finally:
        results.close()
    return out
