"""Backfill: register an existing lake of shredded Parquet files, extracting on Spark executors.

1. The driver lists ``ROOT_URI`` with :func:`service.storage.list_data_files` (recursively, ``*.parquet``, hidden and
   ``_``-prefixed paths skipped) and drops the paths already live in the table.
2. The remaining paths, sorted, are cut into batches (``batch_size`` files, one commit each) and
   the batches into waves. Each wave is one Spark job: ``sc.parallelize(paths, n).mapPartitions``
   runs shredcat's own extractor (:func:`service.stats.extract.extract_file`, object-store files
   with their requests overlapped by :mod:`service.stats.batch`) on the executors,
   which need shredcat and pyarrow but never talk to the service. While the driver commits the
   batches of one wave, the next wave is already being extracted.
3. Each batch is committed through the REST API with client-side statistics and a deterministic
   ``Idempotency-Key`` (table, snapshot the run started from, the batch's paths): a batch retried
   after a lost answer is applied once, and a rerun skips what is already live.
4. A file that cannot be extracted fails its batch (reported, not committed at all); the other
   batches go on and the result lists what failed, so a rerun after a fix does the rest. A commit
   refused for the token (401/403) stops the run with that error: every later batch would be refused.

Runs unchanged on ``local[*]`` or any cluster (the driver needs to reach the service, the
executors the storage). With ``spark=None`` (``shredcat backfill --local``) there is no Spark at
all: the same waves are extracted on this machine (:func:`extract_locally`: processes for local
files, overlapped requests for object-store files), for lakes one machine can handle.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from service.errors import FileAccessError
from service.spark._common import (
    chunks,
    idempotency_key,
    split_table,
)
from service.storage import list_data_files, listing_prefix

if TYPE_CHECKING:
    from service.client import ShredcatClient

__all__ = ["BackfillResult", "FailedBatch", "backfill", "extract_locally", "extract_on_executors"]

#: Largest wave (files extracted by one Spark job and held on the driver at once).
MAX_WAVE_FILES = 50_000


def _extract_partition(paths: Iterable[str]) -> Iterator[tuple[str, dict[str, Any] | None, str | None]]:
    """Runs on an executor: ``(path, commit JSON, None)`` or ``(path, None, error)`` per file."""
    from service.stats.batch import extract_many

    # Object-store files overlap their requests (SHREDCAT_OBJECT_STORE_CONCURRENCY per executor).
    for _, row in extract_many(paths, extract=_extract_one):
        yield row


def _extract_one(path: str) -> tuple[str, dict[str, Any] | None, str | None]:
    from service.client import file_stats_payload
    from service.stats.extract import extract_file

    try:
        return path, file_stats_payload(extract_file(path)), None
    except Exception as e:
        return path, None, f"{type(e).__name__}: {e}"


def extract_locally(
    paths: Sequence[str], *, workers: int | None = None
) -> list[tuple[str, dict[str, Any] | None, str | None]]:
    """Extract ``paths`` on this machine: ``(path, payload, error)`` in the order given. Object-store
    files overlap their requests on threads (:mod:`service.stats.batch`); local files are decoded in
    ``workers`` processes (default: CPU count, at most 8), as ``shredcat register`` does."""
    import os

    from service.stats.batch import in_processes
    from service.storage.objects import is_remote

    if not paths:
        return []
    n = workers if workers is not None else min(os.cpu_count() or 1, 8)
    if any(is_remote(p) for p in paths) or n <= 1 or len(paths) < 64:
        return list(_extract_partition(paths))
    return list(in_processes(_extract_one, paths, n))


def _slices(n_files: int, files_per_task: int) -> int:
    return max(1, math.ceil(n_files / max(1, files_per_task)))


def extract_on_executors(
    spark: Any, paths: Sequence[str], *, files_per_task: int = 100
) -> list[tuple[str, dict[str, Any] | None, str | None]]:
    """Extract ``paths`` on the executors: ``(path, payload, error)`` in the order given."""
    if not paths:
        return []
    rdd = spark.sparkContext.parallelize(list(paths), _slices(len(paths), files_per_task))
    return rdd.mapPartitions(_extract_partition).collect()


@dataclass(frozen=True, slots=True)
class FailedBatch:
    index: int
    paths: tuple[str, ...]
    #: ``(path, error)`` of the files that could not be extracted (empty: the commit failed).
    bad_files: tuple[tuple[str, str], ...]
    error: str


@dataclass
class BackfillResult:
    root: str
    table: str
    files_listed: int = 0
    already_live: int = 0
    files_added: int = 0
    files_unchanged: int = 0
    batches: int = 0
    batches_committed: int = 0
    batches_replayed: int = 0
    failed: list[FailedBatch] = field(default_factory=list)
    seconds: float = 0.0
    #: The table was missing when the backfill began and its first committed batch created it.
    table_created: bool = False

    @property
    def ok(self) -> bool:
        return not self.failed

    def summary(self) -> str:
        rate = (self.files_added + self.files_unchanged) / self.seconds if self.seconds > 0 else 0.0
        s = (
            f"{self.table}: {self.files_listed} files under {self.root}, {self.already_live} already live, "
            f"{self.files_added} added, {self.files_unchanged} unchanged in {self.batches_committed}/{self.batches} "
            f"batches ({self.seconds:.1f}s, {rate:.0f} files/s)"
        )
        if self.failed:
            n = sum(len(b.paths) for b in self.failed)
            s += f"; {len(self.failed)} batches ({n} files) FAILED"
        return s


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _commit_batch(
    client: ShredcatClient,
    ns: str,
    name: str,
    payloads: list[dict[str, Any]],
    key: str,
    *,
    create: bool,
    attempts: int,
    backoff: float,
    progress: Callable[[str], None],
    label: str,
) -> Any:
    """Commit with one idempotency key, retrying transport failures and 5xx (never 4xx)."""
    from service.client import ServerError, ShredcatConnectionError

    for attempt in range(1, attempts + 1):
        try:
            return client.commit(ns, name, files=payloads, idempotency_key=key, create_if_missing=create)
        except (ShredcatConnectionError, ServerError) as e:
            if attempt == attempts:
                raise
            delay = backoff * 2 ** (attempt - 1)
            progress(f"{label}: commit attempt {attempt} failed ({e}); retrying in {delay:.1f}s with the same key")
            time.sleep(delay)
    raise AssertionError("unreachable")  # pragma: no cover


def backfill(
    spark: Any | None,
    root: str,
    table: str | tuple[str, str],
    *,
    client: ShredcatClient,
    batch_size: int = 1000,
    files_per_task: int = 100,
    wave_files: int | None = None,
    commit_attempts: int = 4,
    retry_backoff: float = 1.0,
    create: bool = True,
    progress: Callable[[str], None] | None = _stderr,
) -> BackfillResult:
    """Register every data file under ``root`` not yet live in ``table``, extracting on Spark
    executors (on this machine when ``spark`` is None) and committing ``batch_size`` files per
    snapshot. See the module docstring. A root holding no data file (missing, empty) is a
    FileAccessError."""
    if batch_size < 1 or files_per_task < 1:
        raise ValueError("batch_size and files_per_task must be >= 1")
    say = progress or (lambda _line: None)
    ns, name = split_table(table)
    started = time.perf_counter()
    result = BackfillResult(root=root, table=f"{ns}.{name}")

    # The table first: what every batch's commit would meet (an unreachable service or catalog, a
    # new table's name it refuses) fails the run before a lake is listed and extracted.
    snapshot, live, missing = _live_files(client, ns, name, root, create)
    listed = list_data_files(root)
    result.files_listed = len(listed)
    if not listed:
        # As `shredcat register` of a directory: a scheduled backfill of a typo or of an unmounted
        # volume must not look like a run that found everything registered.
        raise FileAccessError(f"{root}: no Parquet data files under it (does it exist?)", details={"path": root})
    pending = [p for p in listed if p not in live]
    result.already_live = len(listed) - len(pending)
    batches = chunks(pending, batch_size)
    result.batches = len(batches)
    say(
        f"{result.table}: {len(listed)} files under {root}, {result.already_live} already live, "
        f"{len(pending)} to register in {len(batches)} batches"
    )
    if not batches:
        result.seconds = time.perf_counter() - started
        return result

    waves = _waves(batches, spark, wave_files, files_per_task, batch_size)
    committer = _Committer(
        client, ns, name, result, say, started, len(pending), missing, f"snapshot={snapshot}", commit_attempts, retry_backoff
    )

    def extract_wave(wave: Sequence[Sequence[str]]) -> list[tuple[str, dict[str, Any] | None, str | None]]:
        flat = [p for b in wave for p in b]
        if spark is None:
            return extract_locally(flat)
        sc = spark.sparkContext
        sc.setJobDescription(f"shredcat backfill {result.table}: extract {len(flat)} files")
        try:
            return extract_on_executors(spark, flat, files_per_task=files_per_task)
        finally:
            sc.setJobDescription(None)

    _extract_and_commit(waves, extract_wave, committer)
    result.table_created = missing and result.batches_committed > 0
    result.seconds = time.perf_counter() - started
    say(result.summary())
    return result


def _extract_and_commit(
    waves: list[list[Sequence[str]]],
    extract_wave: Callable[[Sequence[Sequence[str]]], list[tuple[str, dict[str, Any] | None, str | None]]],
    committer: _Committer,
) -> None:
    """Each wave extracted (on one background thread) and then committed batch by batch."""
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="shredcat-backfill") as pool:
        future: Future[Any] | None = pool.submit(extract_wave, waves[0])
        for w, wave in enumerate(waves):
            assert future is not None
            try:
                rows = future.result()
            except Exception as e:
                # The Spark job itself failed: every batch of the wave fails, later waves go on.
                future = pool.submit(extract_wave, waves[w + 1]) if w + 1 < len(waves) else None
                committer.job_failed(wave, e)
                continue
            later = waves[w + 1] if w + 1 < len(waves) else None
            # The next wave is extracted during these commits only once the service has answered
            # one: a token it refuses (401/403, raised by commit_wave) refuses every batch, so
            # nothing is extracted past the first wave for nothing.
            future = pool.submit(extract_wave, later) if later is not None and committer.accepted else None
            try:
                committer.commit_wave(wave, rows)
            except BaseException:
                if future is not None:
                    future.cancel()
                raise
            if later is not None and future is None:
                future = pool.submit(extract_wave, later)


def _waves(
    batches: list[Sequence[str]], spark: Any | None, wave_files: int | None, files_per_task: int, batch_size: int
) -> list[list[Sequence[str]]]:
    """The batches grouped into extraction jobs of about ``wave_files`` files (default: two tasks
    per core of the cluster, or of this machine without Spark)."""
    if wave_files is None:
        import os

        cores = (os.cpu_count() or 1) if spark is None else spark.sparkContext.defaultParallelism
        wave_files = 2 * max(1, int(cores)) * files_per_task
    per_wave = max(1, min(MAX_WAVE_FILES, max(wave_files, batch_size)) // batch_size)
    return [batches[i : i + per_wave] for i in range(0, len(batches), per_wave)]


def _live_files(
    client: ShredcatClient, ns: str, name: str, root: str, create: bool
) -> tuple[int | None, set[str], bool]:
    """The table's current snapshot, its live files under ``root``, and whether it is missing
    (then each commit creates it, when ``create``; NotFound otherwise). A missing table's name is
    checked as the commit checks a table it creates (InvalidStatsError), and a name holding '/' before
    any request (the API refuses it in a URL): every batch would be refused."""
    from service.catalog.validate import check_object_name
    from service.client import NotFound

    snapshot: int | None = None
    if "/" in ns + name:
        # No URL can address it (the API refuses an encoded '/' in a name): refused as a new name is.
        check_object_name("namespace", ns)
        check_object_name("table", name)
    try:
        snapshot = client.load_table(ns, name).current_snapshot_id
        return snapshot, {f.path for f in client.iter_files(ns, name, prefix=listing_prefix(root))}, False
    except NotFound:
        check_object_name("namespace", ns)
        check_object_name("table", name)
        if not create:
            raise
        # Each commit creates the table if it is still missing (with its files' Variant columns), in
        # its own transaction: a backfill whose every batch fails leaves no empty table behind.
        return snapshot, set(), True


@dataclass
class _Committer:
    """Commits the batches of each extracted wave in order, numbering them and recording each
    outcome in ``result``."""

    client: ShredcatClient
    ns: str
    name: str
    result: BackfillResult
    say: Callable[[str], None]
    started: float
    pending: int
    create: bool
    salt: str
    attempts: int
    backoff: float
    index: int = 0
    done_files: int = 0
    #: The service answered a commit of this run other than by refusing the token.
    accepted: bool = False

    def job_failed(self, wave: Sequence[Sequence[str]], e: Exception) -> None:
        for batch in wave:
            self.index += 1
            self.result.failed.append(FailedBatch(self.index, tuple(batch), (), f"extraction job failed: {e}"))
            self.say(f"{self.result.table}: batch {self.index}/{self.result.batches} FAILED: extraction job failed: {e}")

    def commit_wave(
        self, wave: Sequence[Sequence[str]], rows: list[tuple[str, dict[str, Any] | None, str | None]]
    ) -> None:
        offset = 0
        for batch in wave:
            self.index += 1
            self._commit(batch, rows[offset : offset + len(batch)])
            offset += len(batch)

    def _commit(self, batch: Sequence[str], part: list[tuple[str, dict[str, Any] | None, str | None]]) -> None:
        from service.client import Forbidden, ShredcatAPIError, ShredcatConnectionError, Unauthorized

        result, say, index = self.result, self.say, self.index
        label = f"{result.table}: batch {index}/{result.batches}"
        bad = tuple((p, err) for p, _, err in part if err is not None)
        if bad:
            result.failed.append(FailedBatch(index, tuple(batch), bad, f"{len(bad)} files cannot be extracted"))
            say(f"{label} FAILED, not committed: {len(bad)} of {len(batch)} files cannot be extracted")
            for p, err in bad:
                say(f"  {p}: {err}")
            return
        payloads = [payload for _, payload, _ in part if payload is not None]
        key = idempotency_key("backfill", self.ns, self.name, batch, self.salt)
        try:
            commit = _commit_batch(
                self.client, self.ns, self.name, payloads, key, create=self.create,
                attempts=self.attempts, backoff=self.backoff, progress=say, label=label,
            )  # fmt: skip
        except (Unauthorized, Forbidden) as e:
            # The token may not commit (or create) here: every later batch would be refused the
            # same way, so the run stops with this one error (the CLI's one line, exit 1).
            e.args = (f"{label} refused, backfill stopped: {e}",)
            raise
        except (ShredcatAPIError, ShredcatConnectionError) as e:
            self.accepted = self.accepted or isinstance(e, ShredcatAPIError)
            result.failed.append(FailedBatch(index, tuple(batch), (), f"commit failed: {e}"))
            say(f"{label} FAILED: commit failed: {e}")
            return
        self.accepted = True
        result.batches_committed += 1
        result.batches_replayed += int(commit.replayed)
        result.files_added += len(commit.added)
        result.files_unchanged += len(commit.unchanged)
        self.done_files += len(batch)
        elapsed = time.perf_counter() - self.started
        say(
            f"{label} committed (snapshot {commit.snapshot_id}{', replayed' if commit.replayed else ''}): "
            f"{len(commit.added)} added, {len(commit.unchanged)} unchanged; "
            f"{self.done_files}/{self.pending} files, {self.done_files / elapsed:.0f} files/s"
        )
