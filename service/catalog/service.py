"""The catalog's library API, shared by the REST layer, the CLI and the tests.

``Catalog`` runs every operation as one database transaction (retried on transient lock errors, see
:func:`service.catalog.db.run_transaction`) and returns frozen dataclasses
(:mod:`service.catalog.results`), never ORM objects. It writes no SQL: that is the storage layer's,
:mod:`service.catalog.repository` (and :mod:`service.catalog.planner` for :meth:`Catalog.plan`).

Behaviour:

* :meth:`Catalog.commit` registers a batch of files as **one** new snapshot, all or nothing. Invalid
  stats fail the whole commit with an error naming the file. A path already live with the same
  content (content_id, size, record count, footer size) is left unchanged, so a writer may retry,
  unless the file was re-extracted by path and its stored stats differ: then its stats are
  restated at the new snapshot (:mod:`service.catalog.verify`). The same path with different
  content is a :class:`~service.errors.ConflictError`. An optional idempotency key (per table and
  principal) makes a replay return the original result (same key, other request: conflict).
* :meth:`Catalog.verify` re-extracts live files and reports those whose stored stats differ.
* :meth:`Catalog.remove` ends files at a new snapshot (history is kept).
* Global stats (``ducklake_table_column_stats.extra_stats``, DuckLake's JSON) always equal a
  recomputation from the live files (:mod:`service.stats.merge`): merged incrementally on commit,
  rebuilt from per-path counters after a removal.
* :meth:`Catalog.plan` compiles a predicate (:mod:`service.pruning`) and runs it in SQL: one page of
  candidate files, pinned to a snapshot by its page token; a column the table lacks is an error,
  and the first page warns about the terms no file can be pruned on. The admin pages' reads (newest-first
  history, files sorted by size or rows, a path's per-file bounds) are :mod:`service.catalog.admin`'s.
* Writers of one table are serialized (row lock on PostgreSQL, ``BEGIN IMMEDIATE`` on SQLite), so
  concurrent commits never lose or duplicate a file.
"""

from __future__ import annotations

import contextlib
import random
import re
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from sqlalchemy import Connection
from sqlalchemy.engine import URL, Engine

from service.catalog import repository as repo
from service.catalog.db import analyze_if_grown, make_engine, run_transaction
from service.catalog.logins import LoginLimits, Throttled, address_digest, retry_after
from service.catalog.replicas import ReadRouter
from service.catalog.results import (
    BulkLoadResult,
    Candidate,
    CommitResult,
    DataFileInfo,
    NamespaceInfo,
    PlanResult,
    RefreshResult,
    RemoveResult,
    SnapshotInfo,
    TableGlobalStats,
    TableInfo,
)
from service.errors import (
    AlreadyExistsError,
    BadInputError,
    ConflictError,
    LimitExceededError,
    NotFoundError,
    ShredcatError,
    UnknownColumnError,
)
from service.limits import Limits
from service.stats.model import FileStats
from service.values import INT64_MAX, ShreddedType

# What only writes, verification and merged global stats need (validation, table creation,
# partition typing, the merge) is imported where used: the read commands never load it.
if TYPE_CHECKING:
    from datetime import datetime

    from service.catalog.verify import FileCheck, VerifyReport
    from service.pruning.conditions import Condition
    from service.pruning.diagnostics import PlanWarning
    from service.pruning.expressions import BooleanExpression
    from service.pruning.schema import TableSchema
    from service.stats.merge import GlobalStats

#: A source of :meth:`Catalog.register` (a path, or what its ``extract_all`` reads).
S = TypeVar("S")
#: What a sign-in attempt answers (:meth:`Catalog.login_attempt`).
A = TypeVar("A")

#: The principal of idempotency keys of library callers that name none (the CLI, scripts).
LIBRARY_PRINCIPAL = "library"
#: Tables whose columns and predicate schema a Catalog keeps (see :class:`repo.TableCache`).
TABLE_CACHE_SIZE = 256
#: Variant paths whose dictionary rows the planner keeps, each for one state of its table (a
#: plan then runs two statements instead of three; ~0.3 KiB each).
PATH_ROWS_CACHE_SIZE = 4096


def _newest(*snapshots: int | None) -> int | None:
    """The snapshot a read must see: the newest of those it names (its own commit's, the one it
    reads at, a page token's), or None."""
    given = [s for s in snapshots if s is not None]
    return max(given) if given else None


def _check_id(field: str, value: int | None) -> None:
    """Snapshot ids are non-negative BIGINTs: a negative one is not a snapshot id at all (bad input,
    as the API's ``ge=0`` says: 422 there, here the same error), a larger one cannot exist and must
    not reach the driver (whose OverflowError would be a 500). A valid id never committed is
    NotFoundError, where it is looked up."""
    if value is not None and not 0 <= value <= INT64_MAX:
        raise BadInputError(
            f"{field}: {value} is not a snapshot id (a non-negative 64-bit integer)", details={"field": field}
        )


class Catalog:
    """The catalog on one database.

    ``Catalog(url)`` owns an engine made by :func:`service.catalog.db.make_engine` (closed by
    :meth:`close`); ``Catalog(engine)`` borrows one. With no argument the URL comes from the
    settings (``SHREDCAT_DATABASE_URL``). The schema must exist (``service.catalog.db.upgrade_to_head``).
    ``limits`` (files per commit, stats rows per file, string lengths, page size) default to the
    settings'. Thread-safe: each call uses its own pooled connection.
    """

    def __init__(
        self,
        engine_or_url: Engine | str | URL | None = None,
        *,
        limits: Limits | None = None,
        reads: ReadRouter | None = None,
    ) -> None:
        if engine_or_url is None or limits is None:
            from service.settings import get_settings

            if engine_or_url is None:
                engine_or_url = get_settings().database_url
            if limits is None:
                limits = get_settings().commit_limits
        self.limits = limits
        self._tables = repo.TableCache(TABLE_CACHE_SIZE)
        self._path_rows = repo.TableCache(PATH_ROWS_CACHE_SIZE)
        if isinstance(engine_or_url, Engine):
            self.engine = engine_or_url
            self._owns_engine = False
        else:
            self.engine = make_engine(engine_or_url)
            self._owns_engine = True
        #: Where reads run (hot standbys, else this engine): :mod:`service.catalog.replicas`.
        self.reads = reads if reads is not None else ReadRouter(self.engine)

    def close(self) -> None:
        if self._owns_engine:
            self.engine.dispose()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    def _check_limit(self, limit: int, *, name: str = "limit", field: str | None = None) -> None:
        if not (1 <= limit <= self.limits.max_page_size):
            raise BadInputError(
                f"{name} must be between 1 and {self.limits.max_page_size}",
                details={} if field is None else {"field": field},
            )

    def _write(self, fn: Callable[[Connection], Any], *, retry_integrity: bool = False) -> Any:
        return run_transaction(self.engine, fn, write=True, retry_integrity=retry_integrity)

    def _read(self, fn: Callable[[Connection], Any], *, min_snapshot_id: int | None = None, primary: bool = False) -> Any:
        """A read transaction on a standby that holds ``min_snapshot_id`` when one is fit, else on
        the primary; ``primary``: on the primary (a read a write depends on, or just made)."""
        _check_id("min-snapshot-id", min_snapshot_id)  # each read checks its own first, naming them
        return self.reads.read(fn, min_snapshot_id=min_snapshot_id, primary=primary)

    # --- dashboard sessions -------------------------------------------------------------------

    def revoke_session(self, digest: str, expires_at: datetime) -> None:
        """Refuse the session whose cookie has this sha256 hex ``digest`` from now until
        ``expires_at`` (its own expiry), in every process sharing the catalog."""
        self._write(lambda conn: repo.revoke_session(conn, digest, expires_at))

    def session_revoked(self, digest: str) -> bool:
        # On the primary: a standby behind it would accept a session signed out a moment ago.
        return bool(self._read(lambda conn: repo.session_revoked(conn, digest), primary=True))

    def login_attempt(
        self,
        address: str,
        limits: LoginLimits,
        attempt: Callable[[], tuple[A, bool]],
        *,
        now: datetime | None = None,
    ) -> A | Throttled:
        """One sign-in from ``address``, limited by the failures every process sharing the catalog
        counted: :class:`Throttled` when ``limits`` are reached (``attempt`` is not run), else
        ``attempt()``'s outcome, its failure counted when it says so (``(outcome, failed)``).

        The check, ``attempt`` and the count are one transaction on the primary that concurrent
        attempts wait for (:func:`repo.lock_login_failures`), so together they never pass a limit.
        ``attempt`` runs inside it: it must be quick and touch nothing but memory (it may run again
        if the transaction is retried). An address already throttled is answered by a plain read
        before that: a flood of refused attempts takes no lock (nor SQLite's write lock), and what
        it finds stays true, as failures leave the window only with time."""
        digest = address_digest(address)

        def wait(conn: Connection, t: datetime) -> int | None:
            since = t - limits.window
            mine = repo.newest_login_failures(conn, since, limits.per_address, digest)
            return retry_after(mine, repo.newest_login_failures(conn, since, limits.total), limits, t)

        def op(conn: Connection) -> A | Throttled:
            repo.lock_login_failures(conn)
            t = now if now is not None else repo.utcnow()
            seconds = wait(conn, t)
            if seconds is not None:
                return Throttled(seconds)
            outcome, failed = attempt()
            if failed:
                repo.record_login_failure(conn, digest, t, forget_before=t - limits.window)
            return outcome

        early = self._read(lambda conn: wait(conn, now if now is not None else repo.utcnow()), primary=True)
        if early is not None:
            return Throttled(early)
        return cast("A | Throttled", self._write(op))

    # --- namespaces and tables ----------------------------------------------------------------

    def create_namespace(self, name: str, *, if_not_exists: bool = False) -> NamespaceInfo:
        """Create a namespace (DuckLake schema). AlreadyExistsError unless ``if_not_exists``."""
        from service.catalog.validate import check_object_name

        check_object_name("namespace", name)

        def op(conn: Connection) -> NamespaceInfo:
            ns = repo.find_namespace(conn, name)
            if ns is not None:
                if if_not_exists:
                    return ns
                raise AlreadyExistsError(f"namespace {name} already exists")
            return repo.insert_namespace(conn, name)

        return self._write(op, retry_integrity=True)

    def list_namespaces(self) -> list[NamespaceInfo]:
        return self._read(repo.list_namespaces)

    def drop_namespace(self, name: str) -> SnapshotInfo:
        """Drop an empty namespace (like Iceberg: ConflictError while it holds tables)."""

        def op(conn: Connection) -> int:
            ns = repo.find_namespace(conn, name, lock=True)
            if ns is None:
                raise NotFoundError(f"namespace {name} does not exist", details={"namespace": name})
            tables = repo.count_live_tables(conn, ns)
            if tables:
                raise ConflictError(
                    f"namespace {name} is not empty: it holds {tables} table(s); drop them first",
                    details={"namespace": name},
                )
            return repo.drop_namespace(conn, ns)

        snap = self._write(op)
        return self._read(lambda conn: repo.snapshot_info(conn, snap), primary=True)

    def create_table(
        self,
        namespace: str,
        name: str,
        variant_columns: Sequence[str],
        *,
        if_not_exists: bool = False,
        create_namespace: bool = True,
        partition_columns: Mapping[str, str] | Sequence[tuple[str, str]] = (),
        location: str | None = None,
    ) -> TableInfo:
        """Create a table with these Variant columns (dotted names for Variants inside structs).

        ``partition_columns`` declares Hive partition columns, in path order, with their types
        (DuckLake type names: ``int32``, ``int64``, ``decimal(P,S)``, ``float64``, ``date``,
        ``timestamp``, ``varchar``...): files' partition values are typed so, not inferred; every
        committed file must then have exactly these partition columns. ``location``: the table's
        base path; only ``name=value`` directory segments below it are partition values.
        Plain columns are not declared: they come from the committed files.

        With ``if_not_exists`` an existing table is returned as it is (its columns are not
        compared, like SQL's CREATE TABLE IF NOT EXISTS); otherwise AlreadyExistsError. The
        namespace is created if missing unless ``create_namespace=False`` (then NotFoundError).
        """
        from service.catalog.creation import insert_table

        cols, parts = _table_declarations(namespace, name, variant_columns, partition_columns, location)

        def op(conn: Connection) -> int:
            return insert_table(
                conn,
                namespace,
                name,
                cols,
                parts,
                location,
                if_not_exists=if_not_exists,
                create_namespace=create_namespace,
            )

        self._write(op, retry_integrity=True)
        return self.get_table(namespace, name, primary=True)

    def drop_table(self, namespace: str, name: str) -> SnapshotInfo:
        """Drop a table: the table, its columns and live files end at a new snapshot."""

        def op(conn: Connection) -> int:
            t = repo.require_table(conn, namespace, name, lock=True)
            return repo.drop_table(conn, t)

        snap = self._write(op)
        return self._read(lambda conn: repo.snapshot_info(conn, snap), primary=True)

    def get_table(
        self, namespace: str, name: str, *, min_snapshot_id: int | None = None, primary: bool = False
    ) -> TableInfo:
        """The live table. ``min_snapshot_id``: read where that snapshot is replayed (a caller's
        own commit); ``primary``: read on the primary."""
        _check_id("min-snapshot-id", min_snapshot_id)
        infos = self._read(
            lambda conn: repo.table_infos(conn, namespace, name), min_snapshot_id=min_snapshot_id, primary=primary
        )
        if not infos:
            raise NotFoundError(
                f"table {namespace}.{name} does not exist", details={"table": f"{namespace}.{name}"}
            )
        return infos[0]

    def list_tables(self, namespace: str | None = None, *, min_snapshot_id: int | None = None) -> list[TableInfo]:
        """Live tables (of one namespace, or all), with file/record/byte counts, snapshot count and
        last commit time, ordered by namespace and name; ``min_snapshot_id`` as :meth:`get_table`'s."""
        _check_id("min-snapshot-id", min_snapshot_id)
        return self._read(lambda conn: repo.table_infos(conn, namespace), min_snapshot_id=min_snapshot_id)

    # --- commit -------------------------------------------------------------------------------

    def commit(
        self,
        namespace: str,
        table: str,
        files: Iterable[FileStats],
        *,
        idempotency_key: str | None = None,
        principal: str = LIBRARY_PRINCIPAL,
        extracted: Collection[str] = (),
        remove: Iterable[str] = (),
        remove_missing_ok: bool = False,
        create_with: Sequence[str] | None = None,
        may_create: bool = True,
    ) -> CommitResult:
        """Register a batch of files (with their extracted stats) as one new snapshot, atomically.

        Returns the new snapshot id (None if every file was already live and unchanged), the
        paths added, left unchanged and restated. Raises InvalidStatsError naming the first bad
        file, ConflictError for a live path whose content differs (or a reused idempotency key with
        another request), NotFoundError for a missing table; in every error case nothing changes.

        ``extracted``: the paths of ``files`` whose stats were extracted from the file by the
        caller itself (registration by path), not sent by a client. Such a file already live with
        the same content but other stored stats is **restated**: its row ends and the fresh stats
        are added at the new snapshot (history kept). Client-side stats of a live file with the
        same content are left unchanged (``shredcat verify`` finds stored stats that are wrong).

        ``remove``: live files ended in the same snapshot, before the batch is added (a replacement:
        Spark's overwrite, a compaction). A reader sees the table before or after it, never without
        both the old and the new files. A path to remove that is not live is a NotFoundError, unless
        ``remove_missing_ok`` (then it is reported in ``missing``). A path both removed and given is
        ended and added again, with the batch's stats. ``files`` may be empty when ``remove`` is not.
        A commit that leaves none of the table's live files may bring another partition layout
        (:func:`~service.catalog.validate.replaced_layout`): the old partition columns end then.

        Idempotency keys belong to one table and one ``principal`` (who commits: the REST API
        passes the token's identity); the same key of another principal is another key.

        ``create_with``: a missing table (and namespace) is created with these Variant columns in
        the commit's own transaction, so a commit that fails leaves no table behind; unless
        ``may_create`` is False (the REST API: a writer's token), which makes that a ForbiddenError.
        """
        from service.catalog.commit import check_request, run

        req = check_request(
            namespace,
            table,
            files,
            limits=self.limits,
            idempotency_key=idempotency_key,
            principal=principal,
            extracted=extracted,
            remove=remove,
            remove_missing_ok=remove_missing_ok,
            create_with=create_with,
            may_create=may_create,
        )
        # A get-or-create race on the table or namespace is a unique violation: the second attempt
        # finds the row the other writer created.
        result: CommitResult = self._write(lambda conn: run(conn, req), retry_integrity=req.creating is not None)
        if result.snapshot_id is not None:
            analyze_if_grown(self.engine)
        return result

    def bulk_load(
        self, namespace: str, table: str, batches: Iterable[Iterable[FileStats]], *, create: bool = False
    ) -> BulkLoadResult:
        """Load many batches of files into a table as **one** snapshot, in one transaction: what
        committing the batches in order would leave (same rows, counters and global stats; same
        typed errors, naming the batch's first bad file), except that every file begins at that
        one snapshot. All or nothing: an error leaves nothing of the load.

        The table must exist unless ``create``: then a missing one is created in the load's
        transaction (a failed load leaves no table, nor any snapshot), as :meth:`register` would
        create it for all the files in one commit: with the Variant columns of every batch, in
        the order they first appear, which the load adds as later batches bring them (NotFoundError
        otherwise). Creating holds the namespace's row lock (PostgreSQL) for the load's length:
        creating or dropping another table of that namespace waits for the load.

        For a first load of many files (a backfill, a migration from another catalog): it saves
        a transaction, a snapshot and a global-stats rewrite per batch, and validates and encodes
        the next batch while the database writes the current one. ``batches`` may be a generator:
        one batch (at most ``max_files_per_commit`` files) is held at a time, plus the next.
        Indexes are kept (a load into a table that has files, or beside other tables being read,
        must not lock every table's stats rows; docs/benchmarks-history.md, "10,000,000 files").

        The transaction lasts as long as the load: readers see the table before it until it ends,
        and other commits to the table wait for it. It is not retried (the batches may be read
        once only); a lock timeout or a lost connection fails the whole load.
        """
        from service.catalog.commit import check_request
        from service.catalog.commit.bulk import prefetched, run_bulk
        from service.catalog.creation import create_columns

        requests = prefetched(
            check_request(
                namespace,
                table,
                files,
                limits=self.limits,
                idempotency_key=None,
                principal=LIBRARY_PRINCIPAL,
                extracted=(),
                remove=(),
                remove_missing_ok=False,
                create_with=create_columns(files, create),
                may_create=create,
            )
            for files in (list(b) for b in batches)
        )
        # Closed here, not by the garbage collector: a load that fails leaves the generator (and
        # its prefetching thread) suspended, and its close joins that thread, which deadlocked
        # once when the collector ran it inside another thread's start.
        with contextlib.closing(requests):
            result: BulkLoadResult = run_transaction(
                self.engine, lambda conn: run_bulk(conn, requests), attempts=1
            )
        if result.snapshot_id is not None:
            analyze_if_grown(self.engine)
        return result

    def register(
        self,
        namespace: str,
        table: str,
        sources: Sequence[S],
        *,
        extract: Callable[[str], FileStats] | None = None,
        extract_all: Callable[[Sequence[S]], Sequence[FileStats]] | None = None,
        given: Sequence[FileStats] = (),
        idempotency_key: str | None = None,
        principal: str = LIBRARY_PRINCIPAL,
        remove: Iterable[str] = (),
        remove_missing_ok: bool = False,
        create_table: bool | Sequence[str] = True,
        may_create: bool = True,
    ) -> CommitResult:
        """Extract every source, then commit them, with the files of ``given`` (stats a client
        sent), as one snapshot: the one "extract, then commit" of the library, ``shredcat
        register`` and the REST commit by path.

        ``extract_all`` reads every source at once (the CLI's worker processes, the server's
        pool); otherwise each source is read with ``extract`` (default
        :func:`service.stats.extract.extract_file`; object-store sources concurrently), and a
        source whose stats cannot be extracted fails the whole registration with the extractor's
        error, its message prefixed with the source. Nothing is committed then. The stats are the
        caller's own extraction, so a live file whose stored stats differ is restated (see
        :meth:`commit`); ``remove`` and ``remove_missing_ok`` are :meth:`commit`'s.

        A missing table is created in the commit's transaction (a registration that fails creates
        nothing) by the policy of :func:`service.catalog.creation.create_columns`: only when the
        commit adds files; ``create_table`` True takes the union of the files' Variant columns, a
        sequence declares them, False never creates. A caller that may not create
        (``may_create=False``, or ``create_table=False``) learns of a missing table before any
        file is read (ForbiddenError, or NotFoundError).
        """
        from service.catalog.creation import create_columns, creation_forbidden

        if sources and (create_table is False or not may_create):
            try:
                # On the primary, as the commit itself (a standby behind it would not know a
                # table created a moment ago).
                self.get_table(namespace, table, primary=True)
            except NotFoundError:
                if create_table is False:
                    raise
                raise creation_forbidden(namespace, table) from None
        # Without extract_all the sources are paths.
        extracted = list(extract_all(sources)) if extract_all is not None else _extract_sources(cast("Sequence[str]", sources), extract)
        files = [*extracted, *given]
        return self.commit(
            namespace,
            table,
            files,
            idempotency_key=idempotency_key,
            principal=principal,
            extracted=[f.path for f in extracted],
            remove=remove,
            remove_missing_ok=remove_missing_ok,
            create_with=create_columns(files, create_table),
            may_create=may_create,
        )

    # --- refresh ------------------------------------------------------------------------------

    def refresh(
        self,
        namespace: str,
        table: str,
        read: Callable[[str], FileStats] | None = None,
        *,
        read_all: Callable[[Sequence[str]], Sequence[FileStats]] | None = None,
    ) -> RefreshResult:
        """Fill in plain-column statistics and partition values for the live files that have
        none (files committed before the catalog kept them: after upgrading to schema 0003),
        **in place**: no new snapshot, each row begins at its file's own ``begin_snapshot`` (the
        file's content is the same, so a plan at any past snapshot may use them too); the
        Variant statistics are not touched (``verify`` checks those).

        Every such file is read again (``read``, default the extractor; ``read_all`` reads them
        all at once, e.g. in parallel processes), outside any transaction; then one transaction
        adds all rows, or none: a file that cannot be read, that changed since it was committed
        (another size, content id...), or whose partition columns conflict with the table's is an
        error naming it, and nothing is written. Running it again adds nothing."""

        def pick(conn: Connection) -> tuple[repo.TableRow, list[tuple[int, str, int, tuple[str | None, int, int, int]]]]:
            t = repo.require_table(conn, namespace, table)
            return t, repo.files_without_column_rows(conn, t.table_id)

        t, todo = self._read(pick, primary=True)  # what the write below fills in
        if not todo:
            return RefreshResult(t.qualified_name, 0, 0, 0)
        fresh = _read_again(todo, read, read_all)

        from service.catalog.encode import prepare_batch
        from service.catalog.partitions import table_partitions
        from service.catalog.validate import (
            check_batch_partitions,
            check_file_columns,
            check_table_columns,
            validate_batch,
        )

        def op(conn: Connection) -> RefreshResult:
            lt = repo.require_table(conn, namespace, table, lock=True)
            still = {fid: (p, begin) for fid, p, begin, _ in repo.files_without_column_rows(conn, lt.table_id)}
            keep = [(fid, f) for (fid, _, _, _), f in zip(todo, fresh, strict=True) if fid in still]
            files = validate_batch(table_partitions(lt, [f for _, f in keep]), self.limits)
            check_batch_partitions(files)
            with_rows = [(fid, f) for (fid, _), f in zip(keep, files, strict=True) if f.columns or f.partitions]
            others = lt.live_file_count - len(with_rows)
            kinds = {name: c.kind for name, c in lt.plain.items()}
            for _, f in with_rows:
                check_table_columns(f, lt.columns, lt.qualified_name)
                check_file_columns(
                    f,
                    lt.columns,
                    kinds,
                    lt.partition_columns,
                    lt.qualified_name,
                    unpartitioned_files=others > 0 and not lt.partition_columns,
                )
            if not with_rows:
                return RefreshResult(lt.qualified_name, len(todo), 0, len(todo))
            prepared = prepare_batch([f for _, f in with_rows])
            lt = repo.add_file_columns(conn, lt, lt.current_snapshot_id, prepared.files)
            repo.add_column_rows(
                conn, lt, [fid for fid, _ in with_rows], [still[fid][1] for fid, _ in with_rows], prepared
            )
            return RefreshResult(lt.qualified_name, len(todo), len(with_rows), len(todo) - len(with_rows))

        return self._write(op)

    # --- removal ------------------------------------------------------------------------------

    def remove(
        self, namespace: str, table: str, paths: Iterable[str], *, missing_ok: bool = False
    ) -> RemoveResult:
        """End these live files at one new snapshot (rows are kept for history) and rebuild the
        global stats. NotFoundError if a path is not live, unless ``missing_ok`` (then it is
        reported in ``missing``). No snapshot is made when nothing is removed."""
        from service.catalog.commit import live_or_missing
        from service.catalog.validate import check_file_count

        wanted = list(dict.fromkeys(paths))
        check_file_count(len(wanted), self.limits, "paths")

        def op(conn: Connection) -> RemoveResult:
            t = repo.require_table(conn, namespace, table, lock=True)
            live, missing = live_or_missing(conn, t, wanted, missing_ok)
            gone = [live[p] for p in wanted if p in live]
            if not gone:
                return RemoveResult(None, (), missing)
            snap = repo.new_snapshot(conn, t.table_id, f"deleted_from_table:{t.table_id}", removed=len(gone))
            old_json = repo.read_global_json(conn, t)
            repo.end_files(conn, t, snap, gone)
            g = repo.rebuild_global(conn, t, t.live_file_count - len(gone))
            repo.write_global_json(conn, t, g.column_json(t.columns), old_json)
            return RemoveResult(snap, tuple(lf.path for lf in gone), missing)

        return self._write(op)

    # --- verification -------------------------------------------------------------------------

    def verify(
        self,
        namespace: str,
        table: str,
        read: Callable[[str], FileStats],
        *,
        sample: int | None = None,
        seed: int | None = None,
        max_files: int | None = None,
        deadline: float | None = None,
        executor: Executor | None = None,
    ) -> VerifyReport:
        """Re-extract live files with ``read`` and compare them with their stored stats
        (:func:`service.catalog.verify.compare_file_stats`).

        ``sample``: that many live files chosen at random (``seed`` makes the choice repeatable),
        else every live file; more than ``max_files`` chosen is a LimitExceededError. The files
        live at the table's current snapshot are checked against their stats at that snapshot.
        A file ``read`` cannot read (any error) is ``unverifiable`` with the error's message,
        never ``different``. ``deadline`` (a :func:`time.monotonic` value): no new file is started
        after it, and the report says how many were checked. ``executor`` reads files in parallel.
        No transaction is held while files are read.
        """
        from service.catalog.verify import VerifyReport

        if sample is not None and sample < 1:
            raise BadInputError("the sample size must be at least 1", details={"field": "sample"})

        def pick(conn: Connection) -> tuple[repo.TableRow, list[str]]:
            t = repo.require_table(conn, namespace, table)
            paths: list[str] = []
            after: str | None = None
            while True:
                page = repo.list_files(
                    conn, t.table_id, snapshot=t.current_snapshot_id, prefix=None, after=after, limit=10_000
                )
                paths.extend(f.path for f in page)
                if len(page) < 10_000:
                    return t, paths
                after = page[-1].path

        t, paths = self._read(pick)
        chosen = (
            paths
            if sample is None or sample >= len(paths)
            else sorted(random.Random(seed).sample(paths, sample))
        )
        if max_files is not None and len(chosen) > max_files:
            raise LimitExceededError(
                f"{len(chosen)} files to verify in {t.qualified_name}: at most {max_files} per call "
                "(verify a sample, or use `shredcat verify --all`)",
                details={"files": len(chosen), "max": max_files},
            )
        snap = t.current_snapshot_id
        checks: list[FileCheck] = []
        for chunk in repo.chunks(chosen, 64):
            if deadline is not None and time.monotonic() >= deadline:
                break

            def stored_stats(conn: Connection, chunk: Sequence[str] = chunk) -> list[FileStats | None]:
                return [repo.file_stats(conn, t, p, snap) for p in chunk]

            stored = self._read(stored_stats, min_snapshot_id=snap)  # where ``pick``'s snapshot is
            fresh = list(
                executor.map(_try_read(read), chunk) if executor is not None else map(_try_read(read), chunk)
            )
            for path, old, new in zip(chunk, stored, fresh, strict=True):
                checks.append(self._check_one(path, old, new, t))
        problems = tuple(c for c in checks if c.status != "match")
        return VerifyReport(
            table=t.qualified_name,
            snapshot_id=snap,
            live_files=len(paths),
            chosen=len(chosen),
            checked=len(checks),
            matching=len(checks) - len(problems),
            problems=problems,
        )

    def _check_one(
        self, path: str, stored: FileStats | None, fresh: FileStats | str, t: repo.TableRow
    ) -> FileCheck:
        from service.catalog.partitions import table_partitions
        from service.catalog.validate import validate_file
        from service.catalog.verify import FileCheck, compare_file_stats

        if stored is None:  # pragma: no cover - rows of a past snapshot are never deleted
            return FileCheck(path, "unverifiable", reason="no stored stats at the snapshot")
        if isinstance(fresh, str):
            return FileCheck(path, "unverifiable", reason=fresh)
        try:
            # The same normalisation as a commit (float32 bounds, truncated strings, partition
            # values under the table's location and types...), so that only what a commit of these
            # stats would store differently is reported.
            fresh = validate_file(table_partitions(t, [fresh])[0], self.limits)
        except ShredcatError as e:
            return FileCheck(path, "unverifiable", reason=e.message)
        differences = compare_file_stats(stored, fresh)
        return FileCheck(path, "different", differences) if differences else FileCheck(path, "match")

    # --- reading ------------------------------------------------------------------------------

    def _table(
        self, conn: Connection, namespace: str, table: str, snapshot: int | None = None
    ) -> repo.TableRow:
        _check_id("snapshot", snapshot)
        t = repo.require_table(conn, namespace, table, cache=self._tables)
        if snapshot is not None and not repo.snapshot_exists(conn, snapshot):
            raise NotFoundError(f"snapshot {snapshot} does not exist", details={"snapshot": snapshot})
        return t

    def list_files(
        self,
        namespace: str,
        table: str,
        *,
        snapshot: int | None = None,
        prefix: str | None = None,
        after: str | None = None,
        limit: int = 1000,
        min_snapshot_id: int | None = None,
    ) -> list[DataFileInfo]:
        """Files live now (or at ``snapshot``), in path (byte) order, at most ``limit``.

        Keyset pagination: pass the last path of a page as ``after`` to get the next page.
        ``prefix`` keeps paths starting with it. ``min_snapshot_id``: read where that snapshot
        (a caller's own commit) is replayed.
        """
        self._check_limit(limit)
        _check_id("min-snapshot-id", min_snapshot_id)

        def op(conn: Connection) -> list[DataFileInfo]:
            t = self._table(conn, namespace, table, snapshot)
            return repo.list_files(
                conn, t.table_id, snapshot=snapshot, prefix=prefix, after=after, limit=limit
            )

        return self._read(op, min_snapshot_id=_newest(min_snapshot_id, snapshot))

    def file_stats(
        self, namespace: str, table: str, path: str, *, snapshot: int | None = None, min_snapshot_id: int | None = None
    ) -> FileStats:
        """The stats of one file as committed (live now, or at ``snapshot``); ``min_snapshot_id``:
        read where that snapshot is replayed (a caller's own commit)."""
        _check_id("min-snapshot-id", min_snapshot_id)

        def op(conn: Connection) -> FileStats:
            t = self._table(conn, namespace, table, snapshot)
            fs = repo.file_stats(conn, t, path, snapshot)
            if fs is None:
                raise NotFoundError(f"{path}: not a live file of {t.qualified_name}", details={"path": path})
            return fs

        return self._read(op, min_snapshot_id=_newest(min_snapshot_id, snapshot))

    def list_snapshots(
        self,
        namespace: str,
        table: str,
        *,
        after: int | None = None,
        limit: int = 1000,
        min_snapshot_id: int | None = None,
    ) -> list[SnapshotInfo]:
        """Snapshots that changed this table (creation, commits, removals), oldest first."""
        self._check_limit(limit)
        _check_id("after", after)
        _check_id("min-snapshot-id", min_snapshot_id)

        def op(conn: Connection) -> list[SnapshotInfo]:
            t = self._table(conn, namespace, table)
            return repo.list_snapshots(conn, t.table_id, after=after, limit=limit)

        return self._read(op, min_snapshot_id=min_snapshot_id)

    def global_stats(
        self, namespace: str, table: str, *, snapshot: int | None = None, min_snapshot_id: int | None = None
    ) -> TableGlobalStats:
        """The stored global Variant stats (``snapshot=None``), or those of the files live at a past
        snapshot (recomputed: global stats are tied to snapshots)."""
        _check_id("min-snapshot-id", min_snapshot_id)
        if snapshot is not None:
            return self.recompute_global_stats(namespace, table, snapshot=snapshot)

        from service.stats.merge import from_ducklake_json

        def op(conn: Connection) -> TableGlobalStats:
            t = self._table(conn, namespace, table)
            g = from_ducklake_json(t.live_file_count, repo.read_global_json(conn, t))
            return _table_stats(t, t.current_snapshot_id, g)

        return self._read(op, min_snapshot_id=min_snapshot_id)

    def global_stats_json(self, namespace: str, table: str) -> dict[str, str | None]:
        """``ducklake_table_column_stats.extra_stats`` per Variant column, exactly as stored."""

        def op(conn: Connection) -> dict[str, str | None]:
            return repo.read_global_json(conn, self._table(conn, namespace, table))

        return self._read(op)

    def recompute_global_stats(
        self, namespace: str, table: str, *, snapshot: int | None = None
    ) -> TableGlobalStats:
        """Global stats recomputed from scratch from the stats rows of the files live now (or at
        ``snapshot``), with the pure merge: the reference the stored stats must always equal."""
        from service.stats.merge import GlobalStats, recompute

        def op(conn: Connection) -> TableGlobalStats:
            t = self._table(conn, namespace, table, snapshot)
            n = repo.count_files(conn, t.table_id, snapshot)
            g = recompute(repo.iter_file_stats(conn, t, snapshot))
            if g.file_count < n:  # files without any fully shredded path drop every path
                g = GlobalStats(n, {})
            elif n == 0:
                g = GlobalStats(0, {})
            return _table_stats(t, snapshot if snapshot is not None else t.current_snapshot_id, g)

        return self._read(op, min_snapshot_id=snapshot)

    # --- planning -----------------------------------------------------------------------------

    def table_schema(self, namespace: str, table: str) -> TableSchema:
        """What a predicate on the table may name (:class:`service.pruning.schema.TableSchema`):
        its Variant columns, and its plain and partition columns with their types (a partition
        column's declared type, or Spark's merge of the types its values were inferred as in the
        live files). Cached by the table's metadata key."""
        return self._read(
            lambda conn: self._schema(conn, repo.require_table(conn, namespace, table, cache=self._tables))
        )

    def _as_of(self, conn: Connection, t: repo.TableRow, snapshot_id: int | None) -> repo.TableRow:
        """``t`` as a predicate at ``snapshot_id`` sees it: the columns it may name
        (:func:`repo.columns_at`: a relayout's ended columns at a snapshot before it), and
        undeclared partition columns typed for the past (see :meth:`_schema`). ``t`` itself at
        the current snapshot, at one the plan will refuse, or when neither differs. Cached with
        the table's state."""
        if snapshot_id is None or not t.begin_snapshot <= snapshot_id < t.current_snapshot_id:
            return t
        key = None if t.metadata_key is None else (*t.metadata_key, "at", snapshot_id)
        hit = None if key is None else self._tables.get("columns_at", key)
        if hit is None:
            read_variant, read_plain = repo.columns_at(conn, t.table_id, snapshot_id)
            hit = (MappingProxyType(read_variant), MappingProxyType(read_plain))
            if key is not None:
                self._tables.put("columns_at", key, hit)
        variant, plain = hit
        inferred = any(c.partition and not c.declared for c in plain.values())
        if dict(variant) == dict(t.columns) and dict(plain) == dict(t.plain):
            # The same columns: the current schema serves, unless a partition column's type is
            # inferred (typed for the past by _schema, under a key of its own). The metadata key
            # stays: what is cached by it (the paths' dictionary rows) is the same at any snapshot.
            return replace(t, as_of=snapshot_id) if inferred else t
        # Other columns (a relayout since): another key, since names may map to other column ids.
        return replace(t, columns=variant, plain=plain, metadata_key=key, as_of=snapshot_id)

    def _schema(self, conn: Connection, t: repo.TableRow) -> TableSchema:
        key = t.metadata_key
        if key is not None and t.as_of is not None:
            key = (*key, "schema at", t.as_of)
        hit = None if key is None else self._tables.get("schema", key)
        if hit is not None:
            return hit
        from service.pruning.schema import ColumnInfo, TableSchema

        merged: dict[str, str | None] = {}
        inferred = {c.column_id: n for n, c in t.plain.items() if c.partition and not c.declared}
        if inferred and t.as_of is None:
            merged = repo.partition_types_of(conn, [t.table_id]).get(t.table_id, {})
        elif inferred and t.as_of is not None:
            # At a past snapshot, typed by the files live then (today's live counters are not theirs).
            types = repo.partition_types_at(conn, t.table_id, inferred, t.as_of)
            merged = {inferred[cid]: tname for cid, tname in types.items()}
        cols = {}
        for name, c in t.plain.items():
            tname = merged.get(name, c.type_name) if c.partition and not c.declared else c.type_name
            try:
                # None: a partition column whose live values are all NULL (Spark's void type).
                st: ShreddedType | None = None if tname is None else ShreddedType.parse(tname)
            except ShredcatError:
                st = None
            cols[name] = ColumnInfo(name, st, c.partition)
        schema = TableSchema(tuple(t.columns), MappingProxyType(cols))
        if key is not None:
            self._tables.put("schema", key, schema)
        return schema

    def plan(
        self,
        namespace: str,
        table: str,
        expr: BooleanExpression | Callable[[TableSchema], BooleanExpression],
        *,
        snapshot_id: int | None = None,
        explain: bool = False,
        page_size: int = 1000,
        page_token: str | None = None,
        counts: bool = False,
        min_snapshot_id: int | None = None,
    ) -> PlanResult:
        """Candidate files of ``namespace.table`` for ``expr`` (one page); ``explain`` adds the
        evaluator's reasons for a sample.

        The first page carries counts over the whole answer (kept, pruned, rows and bytes
        skipped) when the answer fits in it or when ``counts`` asks for them; otherwise they are
        None, because counting a large answer costs as much as reading all of it
        (``files_considered`` is given at the current snapshot either way).

        ``expr`` is a predicate tree, or a parser given the table's :meth:`table_schema` (so that
        a bare identifier resolves to the table's plain or partition column with its type, and an
        unknown name fails): the REST API, the CLI and the playground pass their SQL/JSON parser.
        A pruned file never holds a matching row; when a rule cannot be proven the file is kept.
        ``next_page_token`` pins later pages to the first page's snapshot and predicate.
        A column the table does not have is an :class:`~service.errors.UnknownColumnError`;
        the first page's ``warnings`` name the terms nothing can be pruned on
        (:mod:`service.pruning.diagnostics`). ``min_snapshot_id``: plan where that snapshot (a
        caller's own commit) is replayed, as for a page token's or ``snapshot_id``'s snapshot.
        """
        # Imported here: the predicate machinery is not needed by the catalog's other callers
        # (CLI commands import the catalog and should start fast).
        from service.catalog.planner import decode_plan_token
        from service.pruning.diagnostics import referenced_columns

        self._check_limit(page_size, name="page size", field="page-size")
        _check_id("snapshot", snapshot_id)
        _check_id("min-snapshot-id", min_snapshot_id)
        parse = expr if callable(expr) else None
        condition = None if callable(expr) else _compiled(expr)
        pinned = None if page_token is None else decode_plan_token(page_token).snapshot

        def op(conn: Connection) -> PlanResult:
            found = repo.find_table(conn, namespace, table, cache=self._tables)
            if found is None and parse is not None:
                _check_without_table(parse)
            t = found if found is not None else repo.require_table(conn, namespace, table, cache=self._tables)
            token = None if page_token is None else decode_plan_token(page_token)
            t = self._as_of(conn, t, snapshot_id if token is None else token.snapshot)
            schema = self._schema(conn, t)
            if token is not None and token.partition_types:
                schema = _with_partition_types(schema, token.partition_types)
            tree = _parse_for(t, expr, schema)
            cond = condition if condition is not None else _compiled(tree)
            _check_columns(t, referenced_columns(tree))
            return _plan_page(
                conn, t, schema, cond, snapshot_id, explain, page_size, page_token, counts=counts, cache=self._path_rows,
                tree=tree,
            )

        return self._read(op, min_snapshot_id=_newest(min_snapshot_id, snapshot_id, pinned))

    def iter_candidates(
        self,
        namespace: str,
        table: str,
        expr: BooleanExpression | Callable[[TableSchema], BooleanExpression],
        *,
        snapshot_id: int | None = None,
        page_size: int = 5000,
    ) -> Iterator[Candidate]:
        """Every candidate of :meth:`plan`, page by page (pinned to one snapshot by the page token)."""
        token: str | None = None
        first = True
        while first or token is not None:
            first = False
            res = self.plan(namespace, table, expr, snapshot_id=snapshot_id, page_size=page_size, page_token=token)
            yield from res.candidates
            token = res.next_page_token


def _check_without_table(parse: Callable[[TableSchema], BooleanExpression]) -> None:
    """A predicate's syntax errors and limits are reported as such even on a missing table;
    what needs the table's columns is not (the table's absence is said instead)."""
    from service.pruning.schema import TableSchema

    with contextlib.suppress(UnknownColumnError):
        parse(TableSchema())  # no column: names are unknown, the rest is checked
    try:
        parse(None)  # type: ignore[arg-type]  # schema-free: limits checked after names (IN lists)
    except LimitExceededError:
        raise
    except ShredcatError:
        pass


def _table_declarations(
    namespace: str,
    name: str,
    variant_columns: Sequence[str],
    partition_columns: Mapping[str, str] | Sequence[tuple[str, str]],
    location: str | None,
) -> tuple[tuple[str, ...], list[tuple[str, str]]]:
    """A new table's checked names, Variant columns and partition declarations (BadInputError)."""
    from service.catalog.creation import check_variant_columns
    from service.catalog.partitions import partition_declarations
    from service.catalog.validate import check_object_name

    check_object_name("namespace", namespace)
    check_object_name("table", name)
    cols = check_variant_columns(variant_columns)
    parts = partition_declarations(partition_columns, cols)
    if location is not None and (not isinstance(location, str) or not location or "\x00" in location):
        raise BadInputError(f"invalid table location {location!r}", details={"field": "location"})
    if location is not None and not (location.startswith("/") or _LOCATION_URI.match(location)):
        # Files are stored by absolute path or URI: a relative location could hold none of them.
        raise BadInputError(
            f"invalid table location {location!r}: an absolute path (/data/lake/t) or a URI "
            "(s3://bucket/lake/t) in the form the table's files are registered by",
            details={"field": "location"},
        )
    return cols, parts


_LOCATION_URI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")




#: Trees compiled lately, by identity (see :func:`_compiled`): (id,) -> (tree, condition).
_COMPILED = repo.TableCache(512)
#: Trees larger than this (nodes plus IN-list values) are kept only by the few entries of
#: ``_COMPILED_LARGE``: the API does not cache the parse of long texts or of JSON filters, so they
#: never come back as the same object, and a 10,000-value IN list holds about a megabyte; the
#: playground keeps its last parsed predicates (its buttons send them again), whose compile was
#: ~20 ms of CPU per click for a 10,000-value IN list.
_COMPILED_LARGE = repo.TableCache(16)
_COMPILED_MAX_TREE = 256
_COMPILED_MAX_TEXT = 4096


def _small_tree(tree: BooleanExpression, budget: int = _COMPILED_MAX_TREE) -> bool:
    """Whether ``tree`` has at most ``budget`` nodes and IN-list values, and literals of at most
    :data:`_COMPILED_MAX_TEXT` characters in all (stops counting past either)."""
    from service.pruning.expressions import And, LiteralPredicate, Not, Or, SetPredicate

    text = _COMPILED_MAX_TEXT
    stack = [tree]
    while stack:
        node = stack.pop()
        budget -= 1 + (len(node.literals) if isinstance(node, SetPredicate) else 0)
        values = node.literals if isinstance(node, SetPredicate) else (node.literal,) if isinstance(node, LiteralPredicate) else ()
        text -= sum(len(v) for v in values if isinstance(v, str | bytes))
        if budget < 0 or text < 0:
            return False
        if isinstance(node, And | Or):
            stack.extend(node.children)
        elif isinstance(node, Not):
            stack.append(node.child)
    return True


def _compiled(tree: BooleanExpression) -> Condition:
    """The merged condition of ``tree``. Parsers cache their trees (the API keeps one per predicate
    text and schema), so the same tree object comes back request after request: its condition is
    kept by identity, with the tree held so that its id cannot be reused. Never by equality: ``1``,
    ``1.0`` and ``Decimal('1.0')`` are equal literals of different types, and ``-0.0 == 0.0``."""
    from service.pruning.conditions import compile_expression
    from service.pruning.conjunctions import merge_conjunctions

    key = (id(tree),)
    for cache in (_COMPILED, _COMPILED_LARGE):
        hit = cache.get("compiled", key)
        if hit is not None and hit[0] is tree:
            return hit[1]
    cond = merge_conjunctions(compile_expression(tree))
    (_COMPILED if _small_tree(tree) else _COMPILED_LARGE).put("compiled", key, (tree, cond))
    return cond


def _with_partition_types(schema: TableSchema, types: Mapping[str, ShreddedType | None]) -> TableSchema:
    """``schema`` with these partition column types: those a page token's first page was planned
    with (a commit between pages may change an inferred type, which would change the tree)."""
    from service.pruning.schema import ColumnInfo, TableSchema

    cols = {n: ColumnInfo(n, types[n], True) if c.partition and n in types else c for n, c in schema.columns.items()}
    return TableSchema(schema.variant_columns, MappingProxyType(cols))


def _parse_for(
    t: repo.TableRow, expr: BooleanExpression | Callable[[TableSchema], BooleanExpression], schema: TableSchema
) -> BooleanExpression:
    """``expr`` itself when a tree, else ``expr(schema)``, an unknown column named with the table's name."""
    if not callable(expr):
        return expr
    try:
        return expr(schema)
    except UnknownColumnError as e:
        if e.message.startswith("the table "):
            e.message = f"{t.qualified_name} " + e.message[len("the table ") :]
            e.args = (e.message,)
        raise




def _check_columns(t: repo.TableRow, columns: Sequence[str]) -> None:
    """A predicate on a column the table does not have is an error, not a plan that prunes nothing."""
    unknown = [c for c in columns if c not in t.columns and c not in t.plain]
    if not unknown:
        return
    import difflib  # only on this error path: CLI commands import the catalog and should start fast

    have = [*t.columns, *t.plain]
    names = ", ".join(have) if have else "none"
    close = difflib.get_close_matches(unknown[0], have, n=3) or [c for c in have if c.lower() == unknown[0].lower()]
    hint = f" (did you mean {' or '.join(close)}?)" if close else ""
    what = "Variant column" if not t.plain else "column"
    raise UnknownColumnError(
        f"{t.qualified_name} has no {what} {', '.join(map(repr, unknown))}; its {what}s: {names}{hint}",
        details={"column": unknown[0], "unknown_columns": unknown, "columns": have, "suggestions": close},
    )


def _plan_page(
    conn: Connection,
    t: repo.TableRow,
    schema: TableSchema,
    cond: Condition,
    snapshot_id: int | None,
    explain: bool,
    page_size: int,
    page_token: str | None,
    *,
    counts: bool = False,
    cache: repo.TableCache | None = None,
    tree: BooleanExpression | None = None,
) -> PlanResult:
    """:meth:`Catalog.plan` of a parsed, checked predicate: a page of candidates, and on the
    first page the warnings and the counts (over a multi-page answer only with ``counts``).
    ``cache``: the catalog's metadata cache (:func:`~service.catalog.planner.plan_in`);
    ``tree``: the predicate ``cond`` was compiled from (its terms pruning cannot use are warned
    about: compiling drops them)."""
    from service.catalog.planner import plan_in

    facts: dict[tuple[str, str | None], list[tuple[ShreddedType, int, int]]] = {}
    result = plan_in(
        conn,
        t,
        cond,
        snapshot_id=snapshot_id,
        explain=explain,
        page_size=page_size,
        page_token=page_token,
        path_facts=facts,
        partition_types=schema.partition_types(),
        counts=counts,
        cache=cache,
    )
    if page_token is not None:
        return result
    from service.pruning.diagnostics import unused_terms

    unused = unused_terms(tree, cond) if tree is not None else ()
    # The types planned with: a REST reader of a past snapshot has no other way to learn them.
    types = {n: None if pt is None else pt.name for n, pt in schema.partition_types().items()}
    return replace(result, warnings=unused + _plan_warnings(conn, t, cond, result, facts, cache), partition_types=types)


def _plan_warnings(
    conn: Connection,
    t: repo.TableRow,
    condition: Condition,
    result: PlanResult,
    facts: Mapping[tuple[str, str | None], list[tuple[ShreddedType, int, int]]],
    cache: repo.TableCache | None = None,
) -> tuple[PlanWarning, ...]:
    """The warnings of a first page, from the stored types of the leaves' paths at the planned
    snapshot: the live counters at the current one (with the types holding only nulls there
    apart: a null-only file neither hides a type mismatch nor makes one); at a past one, every type
    a path was ever stored as in the table (a superset, so a warning there is never wrong, though
    one may be missed). ``facts`` holds what planning already read (:func:`~service.catalog.planner.plan_in`);
    only paths it did not read are looked up; ``cache``: the catalog's, holding the object shapes
    planning read (:func:`~service.catalog.planner.absent.table_steps`)."""
    from service.pruning.diagnostics import MAX_SUGGESTION_PATHS, leaf_terms, plan_warnings

    uses = leaf_terms(condition)
    if not uses:
        return ()
    live = result.snapshot_id == t.current_snapshot_id
    stored: dict[tuple[str, str | None], list[ShreddedType]] = {}
    valueless: dict[tuple[str, str | None], list[ShreddedType]] = {}
    for key, types in facts.items():
        kept = [st for st, n, _ in types if n > 0 or not live]
        if kept:
            stored[key] = kept
        if live and (empty := [st for st, n, values in types if n > 0 and values == 0]):
            valueless[key] = empty
    # Plain and partition columns (variant_path None) have their stored types in ``facts``; only
    # Variant paths are looked up, and only they have shredded paths to suggest.
    uses = tuple(u for u in uses if u.variant_path is not None and u.column in t.columns)
    missing = {(t.columns[u.column], u.variant_path) for u in uses if (u.column, u.variant_path) not in facts}
    if missing:
        names = t.column_names
        for (cid, vp), found in repo.shredded_types(conn, t.table_id, missing, live=live).items():
            stored[(names[cid], vp)] = [ShreddedType.parse(n) for n, _ in found]
            if live and (empty := [ShreddedType.parse(n) for n, values in found if values == 0]):
                valueless[(names[cid], vp)] = empty
    unshredded = {u.column for u in uses if (u.column, u.variant_path) not in stored}
    paths = {c: _suggestion_paths(conn, t, c, live, MAX_SUGGESTION_PATHS, cache) for c in unshredded}
    # Unknown counts (not asked for): the warning's own test of the predicate's shape decides.
    pruned_nothing = None if result.files_pruned is None else result.files_pruned == 0 and bool(result.files_considered)
    from service.catalog.planner.absent import lacked_somewhere

    absent = {
        (u.column, u.variant_path)
        for u in uses
        if (u.column, u.variant_path) not in stored and lacked_somewhere(conn, t, u.column, u.variant_path, cache)
    }
    return plan_warnings(condition, stored, paths, pruned_nothing=pruned_nothing, absent=absent, valueless=valueless)


def _suggestion_paths(
    conn: Connection, t: repo.TableRow, column: str, live: bool, limit: int, cache: repo.TableCache | None
) -> tuple[str, ...]:
    """The shredded paths a ``path_not_shredded`` warning picks its suggestions from, read once
    per state of the table (a commit or a removal moves its metadata key): a misspelt path, or a
    field proven absent, is asked about again and again."""

    def read() -> tuple[str, ...]:
        return tuple(repo.shredded_paths(conn, t.table_id, t.columns[column], live=live, limit=limit))

    return read() if cache is None else cache.derived("suggestion_paths", t.metadata_key, (column, live, limit), read)


def _table_stats(t: repo.TableRow, snapshot: int, g: GlobalStats) -> TableGlobalStats:
    return TableGlobalStats(snapshot_id=snapshot, file_count=g.file_count, columns=g.by_column(t.columns))


def _try_read(read: Callable[[str], FileStats]) -> Callable[[str], FileStats | str]:
    """``read`` giving the error's message instead of raising (an unreadable file is unverifiable)."""

    def attempt(path: str) -> FileStats | str:
        try:
            return read(path)
        except ShredcatError as e:
            return e.message
        except Exception as e:  # any failure to read is "unverifiable", reported as such
            return f"cannot read the file ({type(e).__name__})"

    return attempt


def _extract_sources(sources: Sequence[str], extract: Callable[[str], FileStats] | None) -> list[FileStats]:
    """Every source's stats, in order (object-store sources concurrently, local ones in turn);
    the first error raised, its message naming the source."""
    from service.stats.batch import extract_all

    return extract_all(sources, extract=extract, name_errors=True)


def _read_again(
    todo: Sequence[tuple[int, str, int, tuple[str | None, int, int, int]]],
    read: Callable[[str], FileStats] | None,
    read_all: Callable[[Sequence[str]], Sequence[FileStats]] | None,
) -> list[FileStats]:
    """:meth:`Catalog.refresh`'s files read again (``read_all``, else ``read`` in turn, default the
    extractor), each checked to be the file committed (BadInputError, ConflictError naming it)."""
    from service.catalog.validate import same_content

    paths = [p for _, p, _, _ in todo]
    if read_all is not None:
        fresh = list(read_all(paths))
    else:
        if read is None:
            from service.stats.extract import extract_file

            read = extract_file
        fresh = []
        for p in paths:
            try:
                fresh.append(read(p))
            except ShredcatError as e:
                msg = e.message if p in e.message else f"{p}: {e.message}"
                raise type(e)(msg, details={**e.details, "path": p}) from e
    for (_, p, _, ident), f in zip(todo, fresh, strict=True):
        if f.path != p:
            raise BadInputError(f"{p}: the reader answered for {f.path}", details={"path": p})
        if not same_content(ident, f):
            now = (f.content_id, f.file_size_bytes, f.record_count, f.footer_size)
            raise ConflictError(
                f"{p}: the file changed since it was committed ({ident} then, {now} now); "
                "remove and register it again",
                details={"path": p},
            )
    return fresh
