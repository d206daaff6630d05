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
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, Executor, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from service.errors import ShredcatError
from service.limits import FileLimits
from service.stats.model import FileStats

if TYPE_CHECKING:
    import multiprocessing.pool

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


def _extractor(max_footer_bytes: int | None, limits: FileLimits | None = None) -> Callable[[Any], FileStats]:
    """The extractor of a path with these limits (the default when no ``extract`` is given: the
    items are paths)."""
    from service.stats.extract import extract_file

    kw: dict[str, Any] = {} if max_footer_bytes is None else {"max_footer_bytes": max_footer_bytes}
    if limits is not None:
        kw["limits"] = limits
    return partial(extract_file, **kw)


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
        extract = _extractor(max_footer_bytes, limits)
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


def extract_all(
    items: Sequence[T],
    *,
    extract: Callable[[T], FileStats] | None = None,
    path_of: Callable[[T], str] = str,
    executor: Executor | None = None,
    max_footer_bytes: int | None = None,
    name_errors: bool = False,
) -> list[FileStats]:
    """Every item's stats, in order; the first error is raised and the rest cancelled.

    Object-store items run on the shared pool (:func:`extract_many`); local ones on ``executor``
    (the server's bounded pool) when given, else one after the other; a single item with an
    ``executor`` in the calling thread. ``extract`` (default the extractor with
    ``max_footer_bytes``) and ``path_of`` are :func:`extract_many`'s; ``name_errors`` prefixes an
    error's message with its item's path (unless it names it already), also put in its details."""
    if extract is None:
        extract = _extractor(max_footer_bytes)
    named = _named(extract, path_of, name_errors)
    if executor is not None and len(items) == 1:
        return [named(items[0])]
    from service.storage.objects import is_remote

    local = {i for i, item in enumerate(items) if executor is not None and not is_remote(path_of(item))}
    first = [i for i in range(len(items)) if i not in local]
    out: dict[int, FileStats] = {}
    results = extract_many([items[i] for i in first], extract=extract, path_of=path_of)
    try:
        for i, (item, fs) in zip(first, results, strict=True):
            if isinstance(fs, ShredcatError):
                raise _name(fs, path_of(item)) if name_errors else fs
            out[i] = fs
    finally:
        results.close()
    if executor is not None and local:
        _run_local(executor, named, items, sorted(local), out)
    return [out[i] for i in range(len(items))]


def _run_local(
    executor: Executor, extract: Callable[[T], FileStats], items: Sequence[T], at: Sequence[int], out: dict[int, FileStats]
) -> None:
    """``extract`` of the items at indexes ``at`` on ``executor``, into ``out``: the first error
    cancels the rest and is raised once those running have finished."""
    futures: list[Future[FileStats]] = [executor.submit(extract, items[i]) for i in at]
    _, pending = wait(futures, return_when=FIRST_EXCEPTION)
    for f in futures:
        exc = f.exception() if f.done() and not f.cancelled() else None
        if exc is not None:
            for other in pending:
                other.cancel()
            wait([p for p in pending if not p.cancelled()])
            raise exc
    for i, f in zip(at, futures, strict=True):
        out[i] = f.result()


def _name(e: ShredcatError, path: str) -> ShredcatError:
    msg = e.message if path in e.message else f"{path}: {e.message}"
    named = type(e)(msg, details={**e.details, "path": path})
    named.__cause__ = e
    return named


def _named(extract: Callable[[T], FileStats], path_of: Callable[[T], str], name_errors: bool) -> Callable[[T], FileStats]:
    if not name_errors:
        return extract

    def run(item: T) -> FileStats:
        try:
            return extract(item)
        except ShredcatError as e:
            raise _name(e, path_of(item)) from e

    return run


def in_processes(fn: Callable[[T], R], items: Sequence[T], workers: int, *, chunksize: int = 32) -> Iterator[R]:
    """``fn`` over ``items`` in ``workers`` processes (local files: their cost is CPU), in order.

    Ctrl-C in a terminal reaches the whole process group: the workers ignore it (else each prints
    a KeyboardInterrupt traceback), the caller gets it, and the workers are ended at once, as they
    are after an error or when the caller stops early (a ProcessPoolExecutor would first finish
    every item already submitted, or hang when the interrupt lands inside its bookkeeping)."""
    with process_pool(workers) as pool:
        yield from pool.imap(fn, items, chunksize=chunksize)


@contextmanager
def process_pool(workers: int) -> Iterator[multiprocessing.pool.Pool]:
    """The worker processes of :func:`in_processes`, for a caller that maps several chunks in turn
    (``shredcat register --bulk``: one chunk per batch, so that no more than one is extracted
    ahead of the load); they ignore Ctrl-C and are ended on leaving."""
    import multiprocessing

    with multiprocessing.Pool(workers, initializer=_ignore_interrupts) as pool:
        yield pool


def _ignore_interrupts() -> None:
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
